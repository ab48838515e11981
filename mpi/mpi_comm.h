/*
 * mpi_comm.h — the few collective steps neardup-mpi is made of.
 *
 * Every rank runs the same sequence of collectives; a failure on any rank
 * is never handled locally by leaving early (that would hang the others):
 * the failing rank records a message, keeps going to the next agreement
 * point, and mpi_agree makes every rank see the worst exit code there.
 * Rank 0 prints every rank's message, in rank order, so a run's stderr
 * names the shard that failed whichever rank held it.
 *
 * Buffers of any size travel in pieces of at most 1 GiB (MPI counts are
 * int).
 */
#ifndef ND_MPI_COMM_H
#define ND_MPI_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "cli_common.h"

/* Rank and size of MPI_COMM_WORLD, set by mpi_comm_start. */
extern int mpi_rank, mpi_size;

void mpi_comm_start(void);

/* Record this rank's failure message ("neardup-mpi: rank R: ..." is
 * printed by rank 0 at the next mpi_agree); returns code. Only the first
 * message per agreement round is kept. */
int mpi_note(int code, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Every rank contributes code (0 = ok, else an exit code); rank 0 prints
 * the noted messages; all ranks return the largest code. A failure every
 * rank sees alike (bad input) is noted by rank 0 alone. */
int mpi_agree(int code);

/* Broadcast *len bytes from rank 0 (*buf malloc'd on the other ranks;
 * *buf may be NULL for len 0). Returns 0 or -1 (out of memory on some
 * rank: all ranks return -1). */
int mpi_bcast_bytes(void **buf, uint64_t *len);

/* A growable byte buffer: the messages ranks build before sending them. */
typedef struct mpi_buf {
    char *p;
    size_t len, cap;
} mpi_buf;
/* Append len bytes; -1 when out of memory. */
int mpi_buf_put(mpi_buf *g, const void *src, size_t len);

/* Gather every rank's bytes at rank 0: *out (malloc'd, rank 0 only) holds
 * them concatenated in rank order, lens[r] their lengths (mpi_size entries,
 * rank 0 only). Returns 0 or -1 for all ranks. */
int mpi_gather_bytes(void **out, uint64_t *lens, const void *buf, uint64_t len);

/* Name the step this rank is in and the shards it holds (for the message
 * printed if the rank dies on a fatal signal: "neardup-mpi: rank R
 * (shards of DIR: 2 5) died on signal N while STEP"). add says whether
 * the step stores documents. The environment variable
 * NEARDUP_MPI_TEST_CRASH=RANK:STEP makes that rank abort when it enters
 * that step (for the failure tests). */
void mpi_step(const char *step, int add);
void mpi_step_shards(const char *dir, unsigned shards);

/* Monotonic seconds. */
double mpi_now(void);

#endif
