/*
 * mpi_main.c — neardup-mpi: Manku's batch mode and a corpus dedupe spread
 * over the ranks of an MPI job (see mpi_batch.c and mpi_dedupe.c).
 *
 *   mpirun -np R neardup-mpi batch DIR INPUT [--add] ...
 *   mpirun -np R neardup-mpi dedupe INPUT... [--k K] ...
 *
 * Exit codes as the neardup CLI: 0 ok, 1 bad usage or input, 2 a shard or
 * the job failed. A rank that dies takes the job down (mpirun reports it
 * and exits non-zero); nothing is stored before every rank has agreed.
 */
#include "mpi_cmds.h"
#include "mpi_comm.h"

#include <mpi.h>
#include <stdarg.h>
#include <string.h>

static const char usage[] =
    "usage: mpirun -np R neardup-mpi COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "commands:\n"
    "  batch    check (and with --add store) a batch against a sharded store\n"
    "  dedupe   near-duplicate pairs of a corpus fingerprinted over the ranks\n"
    "\n"
    "`neardup-mpi COMMAND --help` describes a command; `neardup shard` creates\n"
    "sharded stores. Exit codes: 0 ok, 1 bad usage or input, 2 a shard or the\n"
    "job failed.\n";

int mpi_usage_error(const char *text, const char *fmt, ...)
{
    if (mpi_rank == 0) {
        if (fmt) {
            va_list ap;
            fputs("neardup-mpi: ", stderr);
            va_start(ap, fmt);
            vfprintf(stderr, fmt, ap);
            va_end(ap);
            fputc('\n', stderr);
        }
        fputs(text, stderr);
    }
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int rc;
    MPI_Init(&argc, &argv);
    mpi_comm_start();
    if (argc < 2) {
        rc = mpi_usage_error(usage, NULL);
    } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (mpi_rank == 0) fputs(usage, stdout);
        rc = CLI_EXIT_OK;
    } else if (strcmp(argv[1], "batch") == 0) {
        rc = mpi_cmd_batch(argc - 1, argv + 1);
    } else if (strcmp(argv[1], "dedupe") == 0) {
        rc = mpi_cmd_dedupe(argc - 1, argv + 1);
    } else {
        rc = mpi_usage_error(usage, "unknown command '%s'", argv[1]);
    }
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
