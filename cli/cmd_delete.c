/*
 * cmd_delete.c — `neardup delete DB KEY...`: remove documents by key.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char usage[] =
    "usage: neardup delete DB [--sync] [--missing-ok] KEY...\n"
    "\n"
    "Delete the documents with these keys. A fingerprint leaves the tables\n"
    "when its last document goes. Prints `deleted<TAB>KEY` or\n"
    "`missing<TAB>KEY` per key.\n"
    "  --sync        fsync before returning\n"
    "  --missing-ok  exit 0 even if some keys were not stored (otherwise a\n"
    "                key not found exits 1)\n";

int cmd_delete(int argc, char **argv)
{
    static const struct option longopts[] = {{"sync", no_argument, 0, 's'},
                                             {"missing-ok", no_argument, 0, 'm'},
                                             {0, 0, 0, 0}};
    unsigned flags = 0;
    int missing_ok = 0, first, rc, missing = 0, opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "delete")) != -1) {
        if (opt == 's') flags |= ND_DB_SYNC;
        else if (opt == 'm') missing_ok = 1;
        else return CLI_EXIT_USAGE;
    }
    first = optind;
    if (argc - first < 2)
        return cli_usage_fail("delete", "need a database and at least one key");
    const char *path = argv[first];
    nd_db *db;
    rc = cli_open_db(&db, path, flags);
    if (rc) return rc;
    for (int i = first + 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        int nrc = nd_db_delete(db, argv[i], len);
        if (nrc == ND_ENOTFOUND) {
            missing++;
            fputs("missing\t", stdout);
        } else if (nrc < 0) {
            rc = cli_fail_nd(nrc, "delete '%s'", argv[i]);
            break;
        } else {
            fputs("deleted\t", stdout);
        }
        in_put_field(stdout, argv[i], len);
        putchar('\n');
    }
    int crc = cli_close_db(db, path);
    if (rc == CLI_EXIT_OK) rc = crc;
    if (rc == CLI_EXIT_OK && missing && !missing_ok) rc = CLI_EXIT_USAGE;
    return rc;
}
