/*
 * cmd_verify.c — `neardup verify DB`: check the database's invariants.
 */
#include "cli.h"

static const char usage[] =
    "usage: neardup verify DB\n"
    "\n"
    "Check that every table holds the same set of fingerprints, that runs are\n"
    "sorted, disjoint and decodable, and that the documents and reverse\n"
    "families agree. Prints `ok` and exits 0 only then; otherwise names the\n"
    "first problem and exits 2.\n";

int cmd_verify(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    if (argc != 2) {
        cli_usage(stderr, usage);
        return cli_fail("verify: expected exactly one database path");
    }
    nd_db *db;
    int rc = cli_open_db(&db, argv[1], ND_DB_READONLY);
    if (rc) return rc;
    int nrc = nd_verify(db);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "verify '%s'", argv[1]);
        if (rc == CLI_EXIT_USAGE) rc = CLI_EXIT_DB;
    } else {
        printf("ok\n");
    }
    int crc = cli_close_db(db, argv[1]);
    return rc ? rc : crc;
}
