/*
 * cmd_verify.c — `neardup verify DB`: check the database's invariants.
 */
#include "cli.h"

static const char usage[] =
    "usage: neardup verify DB\n"
    "\n"
    "Check that every table holds the same set of fingerprints, that runs are\n"
    "sorted, disjoint and decodable, and that the documents and reverse\n"
    "families agree; in a store verifying by resemblance, also that every\n"
    "document has its sketch and band keys and nothing else is there. Prints\n"
    "`ok` and exits 0 only then; otherwise names the\n"
    "first problem and exits 2. On a terminal a progress line shows each\n"
    "phase; SIGINT stops the check (exit 130).\n";

int cmd_verify(int argc, char **argv)
{
    static const struct option none[] = {{0, 0, 0, 0}};
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    if (cli_getopt(argc, argv, none, "verify") != -1) return CLI_EXIT_USAGE;
    if (argc - optind != 1)
        return cli_usage_fail("verify", "expected exactly one database path");
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, ND_DB_READONLY);
    if (rc) return rc;
    cli_progress prog;
    cli_long_call_start(&prog, "verify");
    nd_db_set_progress(db, cli_long_call_step, &prog);
    rc = cli_long_call_end(&prog, nd_db_verify(db), "verify", path);
    if (rc == CLI_EXIT_OK) printf("ok\n");
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
