/*
 * dedupe_spill.h — append-only scratch files for the corpus dedupe
 * (nd_dedupe).
 *
 * A spill is an unlinked temporary file created in the dedupe's scratch
 * directory: written once through a buffer while documents are added, then
 * read back either at random (dedupe_spill_pread) or sequentially in large
 * chunks (dedupe_spill_reader). Nothing stays on disk after the handle is
 * freed, even after a crash: the name is removed as soon as the file is
 * open. The data lives in the kernel's page cache or on disk, not in the
 * process's memory.
 *
 * Errors: every function returns ND_OK or a negative nd_error (ND_EIO,
 * ND_ENOMEM) with nd_errmsg() naming the file and what failed.
 */
#ifndef ND_DEDUPE_SPILL_H
#define ND_DEDUPE_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct dedupe_spill {
    int fd;           /* -1 when not open */
    char *buf;        /* write buffer (NULL once finished) */
    size_t blen;
    uint64_t size;    /* bytes appended so far */
    const char *what; /* names the file in messages */
} dedupe_spill;

/* A spill that is not open: safe to dispose. */
#define DEDUPE_SPILL_NONE ((dedupe_spill){.fd = -1})

/* Create the file in directory dir; what names it in messages ("keys",
 * "sketches"). */
int dedupe_spill_init(dedupe_spill *s, const char *dir, const char *what);
/* Append n bytes. */
int dedupe_spill_write(dedupe_spill *s, const void *p, size_t n);
/* Flush the buffer; after this only reads. */
int dedupe_spill_finish(dedupe_spill *s);
/* Read n bytes at off (off + n <= size), after finish. */
int dedupe_spill_pread(const dedupe_spill *s, void *out, size_t n, uint64_t off);
/* Close the file; a no-op on a spill that is not open or disposed. */
void dedupe_spill_dispose(dedupe_spill *s);

/* A sequential reader: spans at non-decreasing offsets, read in chunks
 * of about 1 MB (more when one span is longer). */
typedef struct dedupe_spill_reader {
    const dedupe_spill *s;
    char *buf;
    size_t cap, len; /* buf holds len bytes of the file from offset at */
    uint64_t at;
} dedupe_spill_reader;

void dedupe_spill_reader_init(dedupe_spill_reader *r, const dedupe_spill *s);
/* *out = the n bytes at off (off >= every earlier off asked for, off + n
 * <= size), valid until the next call. */
int dedupe_spill_reader_get(const void **out, dedupe_spill_reader *r, uint64_t off, size_t n);
void dedupe_spill_reader_dispose(dedupe_spill_reader *r);

#endif
