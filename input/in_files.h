/*
 * in_files.h — each file a document, directories walked (in_files.c): its row of the format table
 * (in_format.h), which only in_reader.c uses.
 */
#ifndef ND_IN_FILES_H
#define ND_IN_FILES_H

#include "in_format.h"

extern const in_format_ops in_files_format;

#endif
