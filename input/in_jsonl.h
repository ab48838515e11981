/*
 * in_jsonl.h — JSON lines (in_jsonl.c): its row of the format table
 * (in_format.h), which only in_reader.c uses.
 */
#ifndef ND_IN_JSONL_H
#define ND_IN_JSONL_H

#include "in_format.h"

extern const in_format_ops in_jsonl_format;

/* The two parses of the JSONL line in r->line (the tests compare them):
 * fast, 1 a good record or 0 declined; jansson, as in_reader_next. */
int in_jsonl_fast(in_reader *r, in_record *rec);
int in_jsonl_jansson(in_reader *r, in_record *rec);

#endif
