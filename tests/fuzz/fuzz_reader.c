/*
 * fuzz_reader.c — libFuzzer target for the input readers
 * (input/in_reader.h): fp, jsonl, tsv and warc, plain, gzip or zstd, with
 * a format given or inferred (in_guess.c). Whatever the bytes, every
 * record is within the documented limits (a key of 1..ND_MAX_KEY_LEN
 * bytes without NUL, a text of at most ND_MAX_DOC_BYTES) and a bad record
 * ends in a message naming the input; never a crash.
 *
 * Input: one byte choosing the format, then the input file's bytes (fed
 * through a memfd, so gzip and zstd detection and reads are the real
 * ones). Its low six bits mod 5 choose the format; bit 0x80 makes it only
 * the default of an inferred format (in_reader_opts.infer, every format,
 * files on the memfd as one document), bit 0x40 reads JSONL by other
 * member names (--id-field url --html-field html). A first byte of 4
 * (mod 5) instead gives the rest as one JSONL line to both of the JSONL
 * reader's parsers (input/in_jsonl.c): when the fast one (simdjson) takes
 * a line, jansson must take it too and give the same record; and the
 * rest goes to in_format_guess, with a name and without.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <neardup.h>

#include "in_json_fast.h"
#include "in_jsonl.h"
#include "in_reader.h"
#include "in_source.h"

static in_reader *line_reader(char *line, size_t len, int fields)
{
    in_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup("fuzz.jsonl"))) abort();
    if (fields && (!(r->id_field = strdup("url")) || !(r->text_field = strdup("html")))) abort();
    r->text_html = fields;
    r->taken = fields ? IN_TAKES_HTML : 0;
    r->fmt = IN_FORMAT_JSONL; /* in_reader_close frees the parser */
    r->fd = -1;
    r->lineno = 1;
    r->line = line;
    r->len = len;
    return r;
}

static void jsonl_differential(const uint8_t *data, size_t size, int fields)
{
    char *line = malloc(size + IN_JSON_PADDING + 1);
    if (!line) abort();
    if (size) memcpy(line, data, size);
    memset(line + size, ' ', IN_JSON_PADDING + 1);
    in_reader *fr = line_reader(line, size, fields), *jr = line_reader(line, size, fields);
    in_record fast = {0}, slow = {0};
    int frc = in_jsonl_fast(fr, &fast), jrc = in_jsonl_jansson(jr, &slow);
    if (frc != 0 && frc != 1) abort();
    if (jrc == -1 && strncmp(jr->err, "fuzz.jsonl:1: ", 14) != 0) abort();
    if (frc == 1 &&
        (jrc != 1 || fast.key_len != slow.key_len || memcmp(fast.key, slow.key, fast.key_len) ||
         !fast.text != !slow.text || fast.text_len != slow.text_len ||
         (fast.text_len && memcmp(fast.text, slow.text, fast.text_len)) ||
         fast.has_fp != slow.has_fp || fast.fp != slow.fp || fast.has_score != slow.has_score ||
         memcmp(&fast.score, &slow.score, sizeof fast.score) || fast.is_html != slow.is_html))
        abort();
    in_reader_close(fr);
    in_reader_close(jr);
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const in_format formats[] = {IN_FORMAT_FP, IN_FORMAT_JSONL, IN_FORMAT_TSV,
                                        IN_FORMAT_WARC};
    if (size < 1) return 0;
    unsigned sel = data[0] & 0x3fu; /* the format; the high bits: options */
    if (sel % 5 == 4) {
        jsonl_differential(data + 1, size - 1, (data[0] & 0x40) != 0);
        in_format g = IN_FORMAT_FP;
        int how = in_format_guess(NULL, data + 1, size - 1, &g);
        if (how != IN_GUESS_NONE && how != IN_GUESS_CONTENT) abort();
        if (how == IN_GUESS_CONTENT && (unsigned)g > IN_FORMAT_DUMP) abort();
        how = in_format_guess("x.jsonl.zst", data + 1, size - 1, &g);
        if (how == IN_GUESS_NONE) abort(); /* the name decides at the least */
        return 0;
    }
    in_format fmt = formats[sel % 5];
    in_reader_opts o = {.infer = (data[0] & 0x80) != 0, .stream_document = 1};
    if (data[0] & 0x40) {
        o.id_field = "url";
        o.html_field = "html";
    }
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) abort();
    if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) abort();
    lseek(fd, 0, SEEK_SET);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    in_reader *r = NULL;
    if (in_reader_open(&r, fmt, path, &o) == 0) {
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
