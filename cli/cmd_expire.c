/*
 * cmd_expire.c — `neardup expire DB --older-than AGE`: retention. The
 * library decides what is expired (nd_db_expire; nd_db_foreach_expired lists the
 * same documents for --dry-run).
 */
#include "cli.h"
#include "in_doc_io.h"

#include <time.h>

static const char usage[] =
    "usage: neardup expire DB --older-than AGE [--now T] [--dry-run] [--compact]\n"
    "                         [--json]\n"
    "\n"
    "Delete every document last seen before now - AGE. AGE needs its unit:\n"
    "90d, 12h, 30m, 45s or 2w (a bare number is refused). Prints\n"
    "`expired<TAB>N`. SIGINT stops it (exit 130) with each document deleted\n"
    "whole or kept, and N counts those deleted: between groups of documents,\n"
    "or, past 1/128 of the store (its tables written anew without them),\n"
    "before the switch to the new tables, which deletes all at once.\n"
    "  --now T    \"now\" in seconds since the epoch (tests, replays)\n"
    "  --dry-run  delete nothing: print each document that would go, as\n"
    "             `dump` does (KEY<TAB>HEX16<TAB>SCORE<TAB>LASTSEEN), then\n"
    "             `would-expire<TAB>N`\n"
    "  --compact  compact afterwards: the tables folded, and the deletions an\n"
    "             expiry of many lays over the documents merged, so that their\n"
    "             space is reclaimed and reads no longer meet them\n"
    "  --json     {\"expired\":N}; with --dry-run, documents as `dump --format\n"
    "             jsonl` writes them, then {\"would_expire\":N}\n";

typedef struct dry_ctx {
    int json;
    uint64_t n;
} dry_ctx;

static int print_expired(const nd_doc *d, void *payload)
{
    dry_ctx *c = payload;
    doc_put(stdout, d, c->json);
    c->n++;
    return 0;
}

int cmd_expire(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"older-than", required_argument, 0, 'o'},
        {"now", required_argument, 0, 'n'},
        {"dry-run", no_argument, 0, 'd'},
        {"compact", no_argument, 0, 'c'},
        {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    int64_t age = -1, now = (int64_t)time(NULL);
    int opt, compact = 0, json = 0, dry = 0, prc;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "expire")) != -1) {
        switch (opt) {
        case 'o':
            prc = cli_parse_duration(optarg, &age);
            if (prc == -2)
                return cli_usage_fail("expire", "--older-than needs a unit: %ss, %sm, %sh, %sd or %sw "
                                "(seconds, minutes, hours, days, weeks); got '%s'",
                                optarg, optarg, optarg, optarg, optarg, optarg);
            if (prc)
                return cli_usage_fail("expire", "--older-than must be like 90d, 12h, 30m, 45s, 2w; got '%s'",
                                optarg);
            break;
        case 'n':
            if (in_parse_time(optarg, &now))
                return cli_usage_fail("expire", "--now must be seconds since the epoch, got '%s'", optarg);
            break;
        case 'd': dry = 1; break;
        case 'c': compact = 1; break;
        case 'j': json = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (age < 0) return cli_usage_fail("expire", "--older-than AGE is required");
    if (dry && compact) return cli_usage_fail("expire", "--dry-run and --compact exclude each other");
    if (optind != argc - 1) return cli_usage_fail("expire", "expected exactly one database path");
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, dry ? ND_DB_READONLY : ND_DB_NO_BACKGROUND);
    if (rc) return rc;
    uint64_t n = 0;
    int nrc;
    if (dry) {
        dry_ctx c = {json, 0};
        nrc = nd_db_foreach_expired(db, now - age, print_expired, &c);
        n = c.n;
        if (nrc < 0) rc = cli_fail_nd(nrc, "expire '%s'", path);
    } else {
        cli_progress prog;
        cli_long_call_start(&prog, "expire");
        nd_db_set_progress(db, cli_long_call_step, &prog);
        nrc = nd_db_expire(&n, db, now - age);
        if (nrc == ND_OK && compact) nrc = nd_db_compact(db);
        rc = cli_long_call_end(&prog, nrc, "expire", path);
    }
    /* interrupted: what was deleted is gone, and said */
    if (rc == CLI_EXIT_OK || rc == CLI_EXIT_INTERRUPTED) {
        if (json) printf("{\"%s\":%llu}\n", dry ? "would_expire" : "expired", (unsigned long long)n);
        else printf("%s\t%llu\n", dry ? "would-expire" : "expired", (unsigned long long)n);
    }
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
