/*
 * cmd_repair.c — `neardup repair DB`: salvage a damaged database.
 */
#include <inttypes.h>

#include "cli.h"

static const char usage[] =
    "usage: neardup repair DB\n"
    "\n"
    "Salvage a database that fails with `corrupt data`: keep what is intact,\n"
    "rebuild every table from the documents that survived (so that `verify`\n"
    "accepts the result) and report what was dropped. The salvaged original\n"
    "is kept as DB.damaged. No other process may have DB open. Prints\n"
    "  kept N documents\n"
    "  dropped N documents (of N found), N damaged files set aside\n"
    "  replayed N logs (not damage)\n"
    "  original kept in DB.damaged\n"
    "(found: the documents the salvaged store names, by their own entries or,\n"
    "where those are lost, by their reverse entries or sketches; or the count\n"
    "its counters record, when larger; damaged files: table files unreadable\n"
    "or cut, a damaged MANIFEST, set aside in DB.damaged/lost/, or \"nothing\n"
    "set aside\"; logs: the write-ahead logs whose intact records were\n"
    "replayed into the tables, kept in DB.damaged/lost/ too)\n"
    "and exits 0; 2 if DB cannot be repaired. On a terminal a progress line\n"
    "shows each phase. SIGINT stops it (exit 130): DB then holds the store as\n"
    "salvaged in place, and a new repair starts again.\n";

int cmd_repair(int argc, char **argv)
{
    static const struct option none[] = {{0, 0, 0, 0}};
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    if (cli_getopt(argc, argv, none, "repair") != -1) return CLI_EXIT_USAGE;
    if (argc - optind != 1)
        return cli_usage_fail("repair", "expected exactly one database path");
    const char *path = argv[optind];
    nd_repair_report rep;
    cli_progress prog;
    cli_long_call_start(&prog, "repair");
    int rc = cli_long_call_end(&prog, nd_db_repair_progress(path, cli_long_call_step, &prog, &rep),
                               "repair", path);
    if (rc != CLI_EXIT_OK) return rc;
    printf("kept %" PRIu64 " documents\n", rep.docs_kept);
    printf("dropped %" PRIu64 " documents (of %" PRIu64 " found), ", rep.docs_dropped,
           rep.docs_before);
    if (rep.files_lost) printf("%u damaged file%s set aside\n", rep.files_lost,
                               rep.files_lost == 1 ? "" : "s");
    else printf("nothing set aside\n");
    printf("replayed %u log%s (not damage)\n", rep.logs_replayed,
           rep.logs_replayed == 1 ? "" : "s");
    printf("original kept in %s\n", rep.damaged_copy);
    return CLI_EXIT_OK;
}
