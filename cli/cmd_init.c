/*
 * cmd_init.c — `neardup init DB`: create a database with a table plan.
 * DB must be new or an empty directory: the library refuses to create a
 * store beside a user's files (nd_db_open, ND_EEXIST), and init says so.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: neardup init DB [--k K] [--docs N] [--tables T] [--run-size R]\n"
    "                      [--features words|shingles:N|chars:N] [--fold-chinese]\n"
    "                      [--min-resemblance R | --fingerprint-only] [--json]\n"
    "\n"
    "Create an empty database in directory DB, which must not exist yet or be\n"
    "an empty directory. By default the store verifies by resemblance R = 0.85:\n"
    "a near-duplicate is a text sharing >= 85% of its word 3-shingles with a\n"
    "stored one, as a person judges it (on held-out real text 99% of such copies\n"
    "found; a fingerprint-only store finds 22-68%). Its records must be texts.\n"
    "  --k K         design distance: queries up to K bits are answered by the\n"
    "                tables alone (default 3; 0..8); larger K stays exact\n"
    "  --docs N      expected number of documents, for the planner (default 1e8;\n"
    "                accepts 1e9, 10M, 500k)\n"
    "  --tables T    force the number of permuted tables (see `neardup plan`)\n"
    "  --run-size R  fingerprints per compressed run (default 128)\n"
    "  --features F  fingerprint features recorded in the database\n"
    "  --fold-chinese  fold Traditional Chinese to Simplified (OpenCC t2s)\n"
    "                before fingerprinting, so a text in either script matches\n"
    "  --min-resemblance R  another threshold (0 < R <= 1; choose 0.8 or more:\n"
    "                below it the band keys miss candidates, accepted with a\n"
    "                warning on stderr). Cost of resemblance: a sketch and band\n"
    "                keys, about 340 bytes a document, and an add at about 0.6x a\n"
    "                fingerprint-only store's rate (docs/cli.md, \"Resemblance\")\n"
    "  --resemblance R = 0.85, the default, said explicitly\n"
    "  --fingerprint-only  a fingerprint-only store (Manku's setting): near-\n"
    "                duplicates are fingerprints within k bits; records may be\n"
    "                bare fingerprints. For callers that have fingerprints only\n"
    "  --json        print the chosen plan as JSON\n";


int cmd_init(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},
        {"docs", required_argument, 0, 'n'},
        {"tables", required_argument, 0, 't'},
        {"run-size", required_argument, 0, 'r'},
        {"features", required_argument, 0, 'f'},
        {"fold-chinese", no_argument, 0, 'Z'},
        {"min-resemblance", required_argument, 0, 'R'},
        {"resemblance", no_argument, 0, 'S'},
        {"fingerprint-only", no_argument, 0, 'F'},
        {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    nd_db_options o;
    nd_fp_options fo;
    unsigned long v;
    int json = 0, opt;
    const char *threshold_opt = NULL; /* the option that gave a threshold */

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    o.flags = ND_DB_CREATE | ND_DB_EXCL;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "init")) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_PLAN_K, &v))
                return cli_usage_fail("init", "--k must be a whole number 0..%u, got '%s'",
                                ND_MAX_PLAN_K, optarg);
            o.k = (unsigned)v;
            o.has_k = 1;
            break;
        case 'n':
            if (cli_parse_count(optarg, &o.expected_docs) || o.expected_docs == 0)
                return cli_usage_fail("init", "--docs must be a positive count like 1e9 or 10M, got '%s'",
                                optarg);
            break;
        case 't':
            if (cli_parse_uint(optarg, 1, ND_MAX_TABLES, &v))
                return cli_usage_fail("init", "--tables must be 1..%u, got '%s'",
                                ND_MAX_TABLES, optarg);
            o.tables = (unsigned)v;
            break;
        case 'r':
            if (cli_parse_uint(optarg, 2, 65536, &v))
                return cli_usage_fail("init", "--run-size must be 2..65536, got '%s'", optarg);
            o.run_size = (unsigned)v;
            break;
        case 'f':
            if (cli_parse_features(optarg, &fo))
                return cli_usage_fail("init", "--features must be words, shingles:N or chars:N, got '%s'",
                                optarg);
            break;
        case 'Z': fo.flags |= ND_FP_FOLD_CHINESE; break;
        case 'R': {
            char *end = NULL;
            double r = strtod(optarg, &end);
            if (!*optarg || *end || !(r > 0 && r <= 1))
                return cli_usage_fail("init", "--min-resemblance must be a number in (0, 1], got '%s'",
                                      optarg);
            o.min_resemblance = r;
            threshold_opt = "--min-resemblance";
            break;
        }
        case 'S':
            o.min_resemblance = ND_DB_DEFAULT_MIN_RESEMBLANCE;
            threshold_opt = "--resemblance";
            break;
        case 'F': o.flags |= ND_DB_FINGERPRINT_ONLY; break;
        case 'j': json = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1)
        return cli_usage_fail("init", "expected exactly one database path");
    const char *path = argv[optind];
    if ((o.flags & ND_DB_FINGERPRINT_ONLY) && threshold_opt)
        return cli_usage_fail("init", "--fingerprint-only and %s exclude each other",
                              threshold_opt);
    cli_warn_resemblance("init", o.min_resemblance); /* taken, but said */
    o.fp = &fo;
    nd_db *db = NULL;
    int rc = nd_db_open(&db, path, &o);
    if (rc == ND_EEXIST) { /* the library's refusal names the path and why */
        cli_fail("init: %s", nd_errmsg());
        return CLI_EXIT_DB;
    }
    if (rc < 0) return cli_fail_nd(rc, "init: cannot create database '%s'", path);
    nd_plan_info p;
    char cfg[256] = "";
    nd_db_plan(&p, db);
    nd_fp_config_string(cfg, sizeof cfg, &fo);
    double r = nd_db_min_resemblance(db);
    if (json) {
        printf("{\"path\":");
        in_put_json_string(stdout, path, strlen(path));
        printf(",\"k\":%u,\"tables\":%u,\"prefix_min\":%u,\"prefix_max\":%u,"
               "\"fingerprint\":\"%s\"",
               p.k, p.tables, p.prefix_min, p.prefix_max, cfg);
        if (r > 0) printf(",\"min_resemblance\":%g", r);
        printf("}\n");
    } else {
        printf("created %s: k=%u, %u tables, prefix %u..%u bits, fingerprint %s", path, p.k,
               p.tables, p.prefix_min, p.prefix_max, cfg);
        if (r > 0) printf(", min resemblance %g", r);
        printf("\n");
    }
    return cli_close_db(db, path);
}
