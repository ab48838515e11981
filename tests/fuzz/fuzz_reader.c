/*
 * fuzz_reader.c — libFuzzer target for the CLI's input readers
 * (cli/in_reader.h): fp, jsonl, tsv and warc, plain or gzip. Whatever the
 * bytes, every record is within the documented limits (a key of
 * 1..ND_MAX_KEY_LEN bytes without NUL, a text of at most ND_MAX_DOC_BYTES)
 * and a bad record ends in a message naming the input; never a crash.
 *
 * Input: one byte choosing the format, then the input file's bytes (fed
 * through a memfd, so gzip detection and reads are the real ones).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <neardup.h>

#include "in_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const in_format formats[] = {IN_FORMAT_FP, IN_FORMAT_JSONL, IN_FORMAT_TSV,
                                        IN_FORMAT_WARC};
    if (size < 1) return 0;
    in_format fmt = formats[data[0] % 4];
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) abort();
    if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) abort();
    lseek(fd, 0, SEEK_SET);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    in_reader *r = NULL;
    if (in_reader_open(&r, fmt, path, NULL) == 0) {
        for (int i = 0; i < 100000; i++) {
            in_record rec;
            int got = in_reader_next(r, &rec);
            if (got == 0 || got == -2) break;
            if (got == -1) {
                if (strncmp(in_reader_error(r), path, strlen(path)) != 0) abort();
                continue;
            }
            if (got != 1) abort();
            if (!rec.key || rec.key_len == 0 || rec.key_len > ND_MAX_KEY_LEN ||
                memchr(rec.key, '\0', rec.key_len))
                abort();
            if (!rec.has_fp && (!rec.text && rec.text_len)) abort();
            if (rec.text_len > ND_MAX_DOC_BYTES) abort();
            /* Touch every byte so ASan checks the lengths. */
            volatile unsigned char sink = 0;
            for (size_t k = 0; k < rec.key_len; k++) sink ^= (unsigned char)rec.key[k];
            for (size_t k = 0; rec.text && k < rec.text_len; k++) sink ^= (unsigned char)rec.text[k];
            (void)sink;
        }
    }
    in_reader_close(r);
    close(fd);
    return 0;
}
