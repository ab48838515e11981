/*
 * cmd_expire.c — `neardup expire DB --older-than AGE`: retention.
 */
#include "cli.h"

#include <getopt.h>
#include <time.h>

static const char usage[] =
    "usage: neardup expire DB --older-than AGE [--now T] [--compact] [--json]\n"
    "\n"
    "Delete every document last seen before now - AGE (AGE like 90d, 12h, 2w,\n"
    "3600s). --now T sets \"now\" in seconds since the epoch (tests, replays).\n"
    "--compact folds the tables afterwards so their space is reclaimed.\n"
    "Prints `expired<TAB>N`.\n";

int cmd_expire(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"older-than", required_argument, 0, 'o'},
        {"now", required_argument, 0, 'n'},
        {"compact", no_argument, 0, 'c'},
        {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    int64_t age = -1, now = (int64_t)time(NULL);
    int opt, compact = 0, json = 0;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            if (cli_parse_duration(optarg, &age))
                return cli_fail("expire: --older-than must be like 90d, 12h, 30m, 45s, 2w; got '%s'",
                                optarg);
            break;
        case 'n':
            if (cli_parse_duration(optarg, &now))
                return cli_fail("expire: --now must be seconds since the epoch, got '%s'", optarg);
            break;
        case 'c': compact = 1; break;
        case 'j': json = 1; break;
        default: cli_usage(stderr, usage); return CLI_EXIT_USAGE;
        }
    }
    if (age < 0) return cli_fail("expire: --older-than is required");
    if (optind != argc - 1) {
        cli_usage(stderr, usage);
        return cli_fail("expire: expected exactly one database path");
    }
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, ND_DB_NO_BACKGROUND);
    if (rc) return rc;
    uint64_t n = 0;
    int nrc = nd_expire(db, now - age, &n);
    if (nrc == ND_OK && compact) nrc = nd_compact(db);
    if (nrc < 0) rc = cli_fail_nd(nrc, "expire '%s'", path);
    else if (json) printf("{\"expired\":%llu}\n", (unsigned long long)n);
    else printf("expired\t%llu\n", (unsigned long long)n);
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
