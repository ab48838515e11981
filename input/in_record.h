/*
 * in_record.h — the types every part of input/ shares: the formats' names
 * (in_format), a record as a reader returns it (in_record) and the reader
 * handle's name (its fields: in_source.h). A header of types alone, so
 * that the formats and the byte layer need not include the dispatcher's
 * header (in_reader.h), which callers use.
 */
#ifndef ND_IN_RECORD_H
#define ND_IN_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef enum in_format {
    IN_FORMAT_FP,
    IN_FORMAT_JSONL,
    IN_FORMAT_TSV,
    IN_FORMAT_FILES,
    IN_FORMAT_WARC,
    /* `neardup dump`'s lines (in_doc_io.h): recognised by in_format_guess,
     * not read by in_reader (no row in the format table) */
    IN_FORMAT_DUMP
} in_format;

/* A set of formats: IN_BIT(IN_FORMAT_FP) | IN_BIT(IN_FORMAT_JSONL)... */
#define IN_BIT(f) (1u << (f))

typedef struct in_record {
    const char *key;
    size_t key_len;
    const char *text; /* NULL when the record carries a fingerprint */
    size_t text_len;
    int has_fp;
    uint64_t fp;
    int has_score;
    double score;
    int is_html;
    const char *file; /* for messages */
    uint64_t line;    /* line (or record number for files and warc) */
} in_record;

typedef struct in_reader in_reader;

#endif
