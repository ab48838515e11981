/*
 * cmp_codec.h — the run codec: sorted permuted fingerprints <-> bytes.
 *
 * A run is a sorted, strictly ascending array of n >= 1 uint64 values
 * (permuted fingerprints of one table). Its first value, the head, is
 * implied by the RocksDB key of the run and is NOT stored in the encoded
 * bytes; the rest are stored as Golomb-Rice coded gaps from their
 * predecessors (version 2, written), or XOR-delta encoded with zstd where
 * it pays (version 1, still read). Byte 0 names the version. The formats
 * are documented in cmp_codec.c and pinned by golden vectors.
 *
 * Only cmp_codec.c includes <zstd.h>. Contexts hold reusable zstd state;
 * a context is used by one thread at a time.
 */
#ifndef CMP_CODEC_H
#define CMP_CODEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct cmp_codec cmp_codec;

/* New codec context. Returns ND_OK or ND_ENOMEM. */
int cmp_codec_new(cmp_codec **out);
void cmp_codec_free(cmp_codec *c); /* accepts NULL */

/* Upper bound of the encoded size of a run of n values. */
size_t cmp_run_bound(size_t n);

/* Encode vals[0..n) (strictly ascending, n >= 1; vals[0] is the head and is
 * not written) into out (capacity cap >= cmp_run_bound(n)).
 * Returns ND_OK and sets *out_len; ND_EINVAL if not strictly ascending or
 * n == 0 or n > CMP_RUN_MAX; ND_ENOMEM. c may be NULL (slower). */
int cmp_run_encode(cmp_codec *c, void *out, size_t cap, size_t *out_len,
                   const uint64_t *vals, size_t n);

/* Number of values in an encoded run (head included), read from its header
 * without decoding. Returns ND_OK, or ND_ECORRUPT for a malformed header. */
int cmp_run_count(size_t *out, const void *data, size_t len);

/* Decode a run whose key is head into out[0..cap); out[0] = head.
 * Returns ND_OK and sets *out_n; ND_ECORRUPT for anything malformed
 * (truncated, trailing bytes, not ascending, zstd error), never a crash;
 * ND_ELIMIT if cap is too small. c may be NULL (slower). */
int cmp_run_decode(cmp_codec *c, uint64_t *out, size_t cap, size_t *out_n,
                   uint64_t head, const void *data, size_t len);

/* The values up to stop: as cmp_run_decode, but a version 2 run stops
 * before its first value after the head that is above stop (*out_n counts
 * those kept; the head always is), leaving the rest unread and unchecked:
 * a probe needs the values up to its range's end, and a block checksum
 * already covers the bytes. Version 1 runs decode whole. stop = UINT64_MAX
 * is cmp_run_decode. */
int cmp_run_decode_upto(cmp_codec *c, uint64_t *out, size_t cap, size_t *out_n,
                        uint64_t head, const void *data, size_t len, uint64_t stop);

/* Set the run format version cmp_run_encode writes, process-wide: 2 (the
 * default) or 1 (only for tests that build what an older build wrote; a
 * database holding version 2 runs must record format version >= 2).
 * Returns the previous version; any other value changes nothing. */
unsigned cmp_codec_write_version(unsigned version);

/* Most values one run may hold. */
#define CMP_RUN_MAX 65536u

#endif /* CMP_CODEC_H */
