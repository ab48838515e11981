/*
 * cmd_backup.c — `neardup backup DB DIR`: a consistent checkpoint.
 */
#include "cli.h"

static const char usage[] =
    "usage: neardup backup DB DIR\n"
    "\n"
    "Write a consistent checkpoint of DB into the new directory DIR (which\n"
    "must not exist). DIR opens as a database; files are hard-linked where\n"
    "DIR is on the same file system.\n";

int cmd_backup(int argc, char **argv)
{
    static const struct option none[] = {{0, 0, 0, 0}};
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    if (cli_getopt(argc, argv, none, "backup") != -1) return CLI_EXIT_USAGE;
    if (argc - optind != 2)
        return cli_usage_fail("backup", "expected a database path and a target directory");
    const char *path = argv[optind], *dir = argv[optind + 1];
    nd_db *db;
    int rc = cli_open_db(&db, path, 0);
    if (rc) return rc;
    int nrc = nd_backup(db, dir);
    if (nrc < 0) rc = cli_fail_nd(nrc, "backup of '%s' into '%s'", path, dir);
    else printf("backup\t%s\n", dir);
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
