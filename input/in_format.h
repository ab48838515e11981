/*
 * in_format.h — what a format reader is to the dispatcher: one row of
 * the format table in in_reader.c. Each format's file defines its row
 * (in_lines.h, in_jsonl.h, in_files.h and in_warc.h declare them) and
 * keeps every function of its own static.
 *
 * A header of types alone: it declares no function.
 */
#ifndef ND_IN_FORMAT_H
#define ND_IN_FORMAT_H

#include "in_record.h"

typedef struct in_format_ops {
    const char *name; /* the word of --format (in_format_parse) */
    /* Make r read path ("-" = stdin): 0, or -2 with the message in r->err.
     * r comes zeroed but for fmt, path and fd (-1); after a failure the
     * dispatcher closes r as after a success. */
    int (*open)(in_reader *r, const char *path);
    /* The next record: in_reader_next's codes (rec comes zeroed, its file
     * set to r->path). */
    int (*next)(in_reader *r, in_record *rec);
    /* Free r->state; NULL when the format keeps none. The dispatcher
     * frees the rest: the source and buffer (in_source_close), the
     * record copies, the path. */
    void (*close)(in_reader *r);
} in_format_ops;

#endif
