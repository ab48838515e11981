/*
 * cmp_logfmt.c — RocksDB's log format read without RocksDB (cmp_logfmt.h):
 * the record checksum and a reader of logical records.
 *
 * The CRC is the bytewise table form of CRC32C (Castagnoli), the table
 * built once; logs read here are small (a MANIFEST, a damaged WAL at
 * repair), so no faster form is needed.
 */
#include "cmp_logfmt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nd_error.h"
#include "nd_grow.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t cmp_log_crc(uint8_t type, const uint8_t *payload, size_t len)
{
    pthread_once(&crc_once, crc_init);
    uint32_t crc = crc32c(crc32c(0, &type, 1), payload, len);
    /* RocksDB stores CRCs masked (a CRC of data holding CRCs is weak). */
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void cmp_log_reader_init(cmp_log_reader *r, const uint8_t *in, size_t n)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->n = n;
}

void cmp_log_reader_dispose(cmp_log_reader *r)
{
    free(r->rec);
    r->rec = NULL;
}

static int append(cmp_log_reader *r, const uint8_t *p, size_t n)
{
    uint8_t *q = nd_grow(r->rec, &r->cap, r->len + n, 1, 4096);
    ND_RETURN_IF(!q, ND_ENOMEM, "out of memory reading a log record");
    r->rec = q;
    memcpy(r->rec + r->len, p, n);
    r->len += n;
    return ND_OK;
}

int cmp_log_next(cmp_log_reader *r, const uint8_t **rec, size_t *len, size_t *at)
{
    int in_rec = 0;
    r->len = 0;
    while (r->pos + CMP_LOG_HEADER <= r->n) {
        size_t block_end = (r->pos / CMP_LOG_BLOCK + 1) * CMP_LOG_BLOCK;
        if (block_end - r->pos < CMP_LOG_HEADER) { /* the block's zero trailer */
            r->pos = block_end;
            continue;
        }
        const uint8_t *h = r->in + r->pos;
        uint32_t crc = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                       (uint32_t)h[3] << 24;
        size_t n = (size_t)h[4] | (size_t)h[5] << 8;
        uint8_t type = h[6];
        if (type == CMP_LOG_ZERO && n == 0 && crc == 0) { /* preallocated, unused */
            r->pos = block_end;
            continue;
        }
        if (r->pos + CMP_LOG_HEADER + n > r->n) break; /* torn: the end */
        *at = r->pos;
        if (r->pos + CMP_LOG_HEADER + n > block_end || type < CMP_LOG_FULL || type > CMP_LOG_LAST ||
            cmp_log_crc(type, h + CMP_LOG_HEADER, n) != crc)
            return nd_err_set(ND_ECORRUPT, "a log record fails its checksum");
        int opens = type == CMP_LOG_FULL || type == CMP_LOG_FIRST;
        if (opens == in_rec)
            return nd_err_set(ND_ECORRUPT, "log fragments out of order (type %u)", type);
        ND_FORWARD(append(r, h + CMP_LOG_HEADER, n));
        r->pos += CMP_LOG_HEADER + n;
        in_rec = 1;
        if (type == CMP_LOG_FULL || type == CMP_LOG_LAST) {
            *rec = r->rec ? r->rec : (const uint8_t *)"";
            *len = r->len;
            return 1;
        }
    }
    return 0;
}
