/*
 * cmd_compact.c — `neardup compact DB`: fold fresh inserts into runs now.
 */
#include "cli.h"

static const char usage[] =
    "usage: neardup compact DB\n"
    "\n"
    "Fold every fresh insert into compressed runs (the background does this\n"
    "past a threshold). Each step is atomic: a crash midway loses nothing.\n";

int cmd_compact(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    if (argc != 2) {
        cli_usage(stderr, usage);
        return cli_fail("compact: expected exactly one database path");
    }
    nd_db *db;
    int rc = cli_open_db(&db, argv[1], ND_DB_NO_BACKGROUND);
    if (rc) return rc;
    int nrc = nd_compact(db);
    if (nrc < 0) rc = cli_fail_nd(nrc, "compact '%s'", argv[1]);
    int crc = cli_close_db(db, argv[1]);
    return rc ? rc : crc;
}
