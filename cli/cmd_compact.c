/*
 * cmd_compact.c — `neardup compact DB`: fold fresh inserts into runs now,
 * then compact the files.
 */
#include "cli.h"

static const char usage[] =
    "usage: neardup compact DB\n"
    "\n"
    "Fold every fresh insert into compressed runs (the background does this\n"
    "past a threshold), then compact the store's files so that the space of\n"
    "deleted and rewritten entries comes back. Each step is atomic: a crash\n"
    "midway loses nothing, and SIGINT stops it (exit 130) after the table\n"
    "being folded, or within a tenth of a second while the files are\n"
    "compacted (what was compacted stays). On a terminal a progress line\n"
    "shows each phase.\n";

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
    cli_progress prog;
    cli_long_call_start(&prog, "compact");
    nd_db_set_progress(db, cli_long_call_step, &prog);
    rc = cli_long_call_end(&prog, nd_db_compact(db), "compact", path);
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
