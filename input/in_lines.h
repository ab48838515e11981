/*
 * in_lines.h — the line formats without quoting, fp and tsv (in_lines.c):
 * their rows of the format table (in_format.h), which only in_reader.c
 * uses.
 */
#ifndef ND_IN_LINES_H
#define ND_IN_LINES_H

#include "in_format.h"

extern const in_format_ops in_fp_format, in_tsv_format;

#endif
