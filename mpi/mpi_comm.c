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
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ---- dying loudly ------------------------------------------------------ */

/* The handler may only write(2): the whole message but the signal number
 * is formatted in advance, whenever the step changes. */
static char death_head[1536], death_tail[256];
static char death_shards[1024];
static const char *death_step = "starting";

static void on_fatal(int sig)
{
    char num[16];
    int n = 0;
    for (int v = sig; n == 0 || v > 0; v /= 10) num[n++] = (char)('0' + v % 10);
    ssize_t w = write(2, death_head, strlen(death_head));
    for (int i = n - 1; i >= 0; i--) w = write(2, &num[i], 1);
    w = write(2, death_tail, strlen(death_tail));
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void death_format(int add)
{
    snprintf(death_head, sizeof death_head, "neardup-mpi: rank %d%s died on signal ", mpi_rank,
             death_shards);
    snprintf(death_tail, sizeof death_tail, " while %s; %s\n", death_step,
             add ? "this rank's shards may hold part of the new documents"
                 : "nothing was stored");
}

void mpi_step_shards(const char *dir, unsigned shards)
{
    size_t at = (size_t)snprintf(death_shards, sizeof death_shards, " (shards of %s:", dir);
    for (unsigned s = (unsigned)mpi_rank; s < shards && at + 16 < sizeof death_shards;
         s += (unsigned)mpi_size)
        at += (size_t)snprintf(death_shards + at, sizeof death_shards - at, " %u", s);
    if (at + 2 < sizeof death_shards) strcat(death_shards, ")");
    death_format(0);
}

void mpi_step(const char *step, int add)
{
    static int installed;
    if (!installed) {
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_fatal);
        installed = 1;
    }
    death_step = step;
    death_format(add);
    const char *hook = getenv("NEARDUP_MPI_TEST_CRASH");
    char want[128];
    snprintf(want, sizeof want, "%d:%s", mpi_rank, step);
    if (hook && strcmp(hook, want) == 0) abort();
}

double mpi_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int mpi_buf_put(mpi_buf *g, const void *src, size_t len)
{
    if (g->len + len > g->cap) {
        size_t cap = g->cap ? g->cap : 65536;
        while (cap < g->len + len) cap *= 2;
        char *p = realloc(g->p, cap);
        if (!p) return -1;
        g->p = p;
        g->cap = cap;
    }
    memcpy(g->p + g->len, src, len);
    g->len += len;
    return 0;
}
