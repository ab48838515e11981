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
    static const struct option none[] = {{0, 0, 0, 0}};
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    if (cli_getopt(argc, argv, none, "compact") != -1) return CLI_EXIT_USAGE;
    if (argc - optind != 1)
        return cli_usage_fail("compact", "expected exactly one database path");
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, ND_DB_NO_BACKGROUND);
    if (rc) return rc;
    int nrc = nd_db_compact(db);
    if (nrc < 0) rc = cli_fail_nd(nrc, "compact '%s'", path);
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
