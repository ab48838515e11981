/*
 * cmd_get.c — `neardup get DB KEY...`: look documents up by key.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char usage[] =
    "usage: neardup get DB [--json] KEY...\n"
    "\n"
    "Print on stdout, one line per KEY in order: KEY<TAB>HEX16<TAB>SCORE<TAB>\n"
    "LASTSEEN for a stored key, missing<TAB>KEY for one not stored (as\n"
    "`delete` prints it). Options may come anywhere; after `--` every argument\n"
    "is a key (for keys that start with '-'). A key not found exits 1 (after\n"
    "every key is answered).\n"
    "  --json  JSON lines {\"key\",\"fp\",\"score\",\"time\"}, and\n"
    "          {\"key\":KEY,\"missing\":true} for a key not stored\n";

int cmd_get(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
    int json = 0, first, missing = 0, opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "get")) != -1) {
        if (opt == 'j') json = 1;
        else return CLI_EXIT_USAGE;
    }
    first = optind; /* the database, then the keys */
    if (argc - first < 2)
        return cli_usage_fail("get", "need a database and at least one key");
    const char *path = argv[first];
    nd_db *db;
    nd_results *res = NULL;
    int rc = cli_open_db(&db, path, ND_DB_READONLY);
    if (rc) return rc;
    if (nd_results_new(&res) < 0) {
        rc = cli_fail_nd(ND_ENOMEM, "get");
        goto done;
    }
    for (int i = first + 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        int nrc = nd_db_get(res, db, argv[i], len);
        if (nrc == ND_ENOTFOUND) {
            /* A per-key result like the others: stdout, as delete's. */
            missing++;
            if (json) {
                printf("{\"key\":");
                in_put_json_string(stdout, argv[i], len);
                printf(",\"missing\":true}\n");
            } else {
                fputs("missing\t", stdout);
                in_put_field(stdout, argv[i], len);
                putchar('\n');
            }
            continue;
        }
        if (nrc < 0) {
            rc = cli_fail_nd(nrc, "get '%s'", argv[i]);
            break;
        }
        const nd_match *m = nd_results_get(res, 0);
        if (json) {
            printf("{\"key\":");
            in_put_json_string(stdout, m->key, m->key_len);
            printf(",\"fp\":\"%016llx\",\"score\":%.17g,\"time\":%lld}\n",
                   (unsigned long long)m->fp, m->score, (long long)m->time);
        } else {
            in_put_field(stdout, m->key, m->key_len);
            printf("\t%016llx\t%.17g\t%lld\n", (unsigned long long)m->fp, m->score,
                   (long long)m->time);
        }
    }
done:
    nd_results_free(res);
    {
        int crc = cli_close_db(db, path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    if (rc == CLI_EXIT_OK && missing) rc = CLI_EXIT_USAGE;
    return rc;
}
