/*
 * mpi_comm.c — agreement, broadcast and gather for neardup-mpi (see
 * mpi_comm.h for the failure discipline).
 *
 * Gathers of variable-sized pieces use point-to-point messages instead of
 * MPI_Gatherv so that a rank may contribute more than 2 GiB and rank 0 may
 * receive more than 2 GiB in total: each piece goes as a length, then
 * chunks of at most 1 GiB.
 */
#include "mpi_comm.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int mpi_rank, mpi_size;

#define MSG_MAX 1024
#define CHUNK ((uint64_t)1 << 30)
static char note_buf[MSG_MAX];

void mpi_comm_start(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
}

int mpi_note(int code, const char *fmt, ...)
{
    if (note_buf[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(note_buf, sizeof note_buf, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mpi_agree(int code)
{
    char *all = NULL;
    if (mpi_rank == 0) all = malloc((size_t)mpi_size * MSG_MAX);
    MPI_Gather(note_buf, MSG_MAX, MPI_CHAR, all, all ? MSG_MAX : 0, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (mpi_rank == 0 && all) {
        for (int r = 0; r < mpi_size; r++) {
            char *m = all + (size_t)r * MSG_MAX;
            m[MSG_MAX - 1] = '\0';
            if (m[0]) fprintf(stderr, "neardup-mpi: rank %d: %s\n", r, m);
        }
        fflush(stderr);
    }
    free(all);
    note_buf[0] = '\0';
    int worst = 0;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void bcast_raw(char *p, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += CHUNK) {
        uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        MPI_Bcast(p + off, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

int mpi_bcast_bytes(void **buf, uint64_t *len)
{
    MPI_Bcast(len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int ok = 1, all_ok;
    if (mpi_rank != 0) {
        *buf = *len ? malloc(*len) : NULL;
        ok = *len == 0 || *buf != NULL;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (mpi_rank != 0) {
            free(*buf);
            *buf = NULL;
        }
        return -1;
    }
    bcast_raw(*buf, *len);
    return 0;
}

static void send_raw(const char *p, uint64_t len, int to)
{
    for (uint64_t off = 0; off < len; off += CHUNK) {
        uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        MPI_Send(p + off, (int)n, MPI_BYTE, to, 2, MPI_COMM_WORLD);
    }
}

static void recv_raw(char *p, uint64_t len, int from)
{
    for (uint64_t off = 0; off < len; off += CHUNK) {
        uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        MPI_Recv(p + off, (int)n, MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int mpi_gather_bytes(void **out, uint64_t *lens, const void *buf, uint64_t len)
{
    MPI_Gather(&len, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int ok = 1, all_ok;
    char *all = NULL;
    if (mpi_rank == 0) {
        uint64_t total = 0;
        for (int r = 0; r < mpi_size; r++) total += lens[r];
        all = malloc(total ? total : 1);
        ok = all != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    all_ok = ok;
    if (!all_ok) return -1;
    if (mpi_rank == 0) {
        uint64_t off = 0;
        if (len) memcpy(all, buf, len);
        off = len;
        for (int r = 1; r < mpi_size; r++) {
            recv_raw(all + off, lens[r], r);
            off += lens[r];
        }
        *out = all;
    } else {
        send_raw(buf, len, 0);
    }
    return 0;
}

double mpi_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
