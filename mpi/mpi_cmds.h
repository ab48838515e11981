/*
 * mpi_cmds.h — the commands of neardup-mpi, one file each, dispatched by
 * mpi_main.c. Each runs on every rank of MPI_COMM_WORLD and returns the
 * same exit code on every rank (0 ok, 1 bad usage or input, 2 a shard or
 * the job failed); only rank 0 prints results.
 */
#ifndef ND_MPI_CMDS_H
#define ND_MPI_CMDS_H

#include "cli_common.h"

int mpi_cmd_batch(int argc, char **argv);
int mpi_cmd_dedupe(int argc, char **argv);

/* Rank 0 prints "neardup-mpi: <message>" (if fmt) and the usage text on
 * stderr; every rank returns CLI_EXIT_USAGE. Argument checks are the same
 * on every rank, so no rank waits for another. */
int mpi_usage_error(const char *usage, const char *fmt, ...) CLI_PRINTF(2, 3);

#endif
