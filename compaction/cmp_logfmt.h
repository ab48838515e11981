/*
 * cmp_logfmt.h — RocksDB's log format (db/log_format.h, stable since
 * LevelDB), shared by the two files that read it without RocksDB: the
 * repair's rewrite of damaged write-ahead logs (cmp_walfix.c) and the
 * check of a MANIFEST's table files at open (cmp_manifest.c).
 *
 * 32 KiB blocks of physical records, each a 7-byte header — masked CRC32C
 * of the type byte and payload (little-endian), payload length (2 bytes,
 * little-endian), type (1 full, 2 first, 3 middle, 4 last) — then the
 * payload; a block's last 1-6 bytes, too few for a header, are zeros. A
 * logical record is one full record, or a first, middles and a last.
 */
#ifndef CMP_LOGFMT_H
#define CMP_LOGFMT_H

#include <stddef.h>
#include <stdint.h>

#define CMP_LOG_BLOCK 32768u
#define CMP_LOG_HEADER 7u
enum { CMP_LOG_ZERO = 0, CMP_LOG_FULL = 1, CMP_LOG_FIRST = 2, CMP_LOG_MIDDLE = 3, CMP_LOG_LAST = 4 };

/* The masked CRC32C a physical record of this type and payload carries. */
uint32_t cmp_log_crc(uint8_t type, const uint8_t *payload, size_t len);

/* A reader of the logical records of log bytes in[0..n). */
typedef struct cmp_log_reader {
    const uint8_t *in;
    size_t n, pos;
    uint8_t *rec; /* a record of several fragments, assembled (malloc'd) */
    size_t len, cap;
} cmp_log_reader;

void cmp_log_reader_init(cmp_log_reader *r, const uint8_t *in, size_t n);
void cmp_log_reader_dispose(cmp_log_reader *r);
/* The next logical record into *rec, *len (valid until the next call).
 * @return 1 a record; 0 the end (a torn last record, cut by a crash or
 * still being written, ends the log as RocksDB's reader ends it);
 * ND_ECORRUPT a record whose checksum fails or whose fragments do not
 * follow each other, or a type this reader does not know (*at: its
 * offset); ND_ENOMEM. */
int cmp_log_next(cmp_log_reader *r, const uint8_t **rec, size_t *len, size_t *at);

#endif
