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
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    if (argc != 3) {
        cli_usage(stderr, usage);
        return cli_fail("backup: expected a database path and a target directory");
    }
    nd_db *db;
    int rc = cli_open_db(&db, argv[1], 0);
    if (rc) return rc;
    int nrc = nd_backup(db, argv[2]);
    if (nrc < 0) rc = cli_fail_nd(nrc, "backup of '%s' into '%s'", argv[1], argv[2]);
    else printf("backup\t%s\n", argv[2]);
    int crc = cli_close_db(db, argv[1]);
    return rc ? rc : crc;
}
