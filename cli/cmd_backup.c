/*
 * cmd_backup.c — `neardup backup DB DIR`: a consistent checkpoint, taken
 * by a reader, so while a writer runs too. The library refuses (ND_EBUSY)
 * when the writer moved its files during the copy; the backup is then
 * taken again by a new reader, a few times.
 */
#include <unistd.h>

#include "cli.h"

#define BACKUP_TRIES 10

static const char usage[] =
    "usage: neardup backup DB DIR\n"
    "\n"
    "Write a consistent checkpoint of DB into the new directory DIR (which\n"
    "must not exist). DIR opens as a database; files are hard-linked where\n"
    "DIR is on the same file system. DB may be in use by a writer: the copy\n"
    "holds every document acknowledged before the backup began. Needs no\n"
    "write access to DB; a DIR.tmp left by a killed backup is removed.\n";

int cmd_backup(int argc, char **argv)
{
    static const struct option none[] = {{0, 0, 0, 0}};
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    if (cli_getopt(argc, argv, none, "backup") != -1) return CLI_EXIT_USAGE;
    if (argc - optind != 2)
        return cli_usage_fail("backup", "expected a database path and a target directory");
    const char *path = argv[optind], *dir = argv[optind + 1];
    int rc = CLI_EXIT_OK, nrc = ND_EBUSY;
    for (int attempt = 0; nrc == ND_EBUSY && attempt < BACKUP_TRIES && rc == CLI_EXIT_OK;
         attempt++) {
        nd_db *db;
        if (attempt) usleep(200000);
        if ((rc = cli_open_db(&db, path, ND_DB_READONLY))) return rc;
        nrc = nd_db_backup(db, dir);
        rc = cli_close_db(db, path);
    }
    if (nrc < 0) return cli_fail_nd(nrc, "backup of '%s' into '%s'", path, dir);
    if (rc == CLI_EXIT_OK) printf("backup\t%s\n", dir);
    return rc;
}
