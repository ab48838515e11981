/*
 * in_warc.h — WARC files, plain or gzip (in_warc.c): its row of the format table
 * (in_format.h), which only in_reader.c uses.
 */
#ifndef ND_IN_WARC_H
#define ND_IN_WARC_H

#include "in_format.h"

extern const in_format_ops in_warc_format;

#endif
