/*
 * fuzz_codec.c — libFuzzer target for the run decoder (cmp_run_decode,
 * cmp_run_count), both versions: any bytes must decode to ND_ECORRUPT (or
 * ND_ELIMIT) or to a strictly ascending run headed by the key, never crash.
 * A run that decodes is re-encoded in version 2 and in version 1, and each
 * must decode to the same values. Seeds: runs of both versions
 * (corpus/codec/run-* are version 1, run2-* version 2).
 *
 * Input: 8 bytes of head (big-endian), then the encoded value. The size
 * also picks a context or none, and a full or a 64-value output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_codec.h"
#include "neardup.h"

static uint64_t out[CMP_RUN_MAX], back[CMP_RUN_MAX];
static unsigned char enc[8 * CMP_RUN_MAX + 4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cmp_codec *codec;
    if (!codec && cmp_codec_new(&codec) != ND_OK) abort();
    if (size < 8) return 0;
    uint64_t head = 0;
    for (int i = 0; i < 8; i++) head = head << 8 | data[i];
    data += 8;
    size -= 8;

    size_t count = 0, n = 0;
    int crc = cmp_run_count(&count, data, size);
    /* Fresh copy: the decoder must not read past size (ASan sees it). */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    /* Odd sizes decode without a context; some with a small output (ND_ELIMIT). */
    size_t cap = size % 3 == 2 ? 64 : CMP_RUN_MAX;
    int rc = cmp_run_decode(size & 1 ? NULL : codec, out, cap, &n, head, copy, size);
    if (rc != ND_OK && rc != ND_ECORRUPT && rc != ND_ELIMIT) abort();
    if (rc == ND_ELIMIT && cap == CMP_RUN_MAX) abort();
    if (rc == ND_ELIMIT) {
        free(copy);
        return 0;
    }
    if (rc == ND_OK) {
        if (n == 0 || n > CMP_RUN_MAX || out[0] != head) abort();
        for (size_t i = 1; i < n; i++)
            if (out[i] <= out[i - 1]) abort();
        if (crc != ND_OK || count != n) abort(); /* the header agrees with the body */
        if (cmp_run_bound(n) > sizeof enc) abort();
        for (unsigned version = 2; version >= 1; version--) {
            size_t len = 0, m = 0;
            cmp_codec_write_version(version);
            int erc = cmp_run_encode(codec, enc, sizeof enc, &len, out, n);
            cmp_codec_write_version(2);
            if (erc != ND_OK || len > cmp_run_bound(n) || (enc[0] & 0x0f) != version) abort();
            if (cmp_run_decode(codec, back, CMP_RUN_MAX, &m, head, enc, len) != ND_OK) abort();
            if (m != n || memcmp(out, back, n * sizeof *out) != 0) abort();
        }
        /* Up to a stop inside the run: exactly the values up to it (the
         * head always), for version 1 the whole run. */
        uint64_t stop = out[(size_t)(head % n)];
        size_t want = 1, m = 0;
        while (want < n && out[want] <= stop) want++;
        if ((copy[0] & 0x0f) != 2) want = n;
        if (cmp_run_decode_upto(codec, back, CMP_RUN_MAX, &m, head, copy, size, stop) != ND_OK ||
            m != want || memcmp(out, back, m * sizeof *out) != 0)
            abort();
    }
    free(copy);
    return 0;
}
