/*
 * cmd_plan.c — `neardup plan --k K --docs N`: the candidate table designs.
 */
#include "cli.h"

#include <getopt.h>
#include <math.h>

static const char usage[] =
    "usage: neardup plan [--k K] [--docs N] [--json]\n"
    "\n"
    "List the permuted-table designs for distance K (default 3) and N expected\n"
    "documents (default 1e8; 1e9, 10M, 500k accepted), cheapest query first:\n"
    "tables, levels and blocks, prefix bits, expected candidates per probe,\n"
    "estimated bytes per document and total disk. `*` marks the design\n"
    "`neardup init` picks (the cheapest with at most 32 tables).\n";

int cmd_plan(int argc, char **argv)
{
    static const struct option longopts[] = {{"k", required_argument, 0, 'k'},
                                             {"docs", required_argument, 0, 'n'},
                                             {"json", no_argument, 0, 'j'},
                                             {0, 0, 0, 0}};
    unsigned long k = 3;
    uint64_t n = 100000000ull;
    int json = 0, opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "plan")) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_PLAN_K, &k))
                return cli_usage_fail("plan", "--k must be 0..%u, got '%s'", ND_MAX_PLAN_K, optarg);
            break;
        case 'n':
            if (cli_parse_count(optarg, &n) || n == 0)
                return cli_usage_fail("plan", "--docs must be a positive count like 1e9 or 10M, got '%s'", optarg);
            break;
        case 'j': json = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc) return cli_usage_fail("plan", "unexpected argument '%s'", argv[optind]);
    nd_plan_info d[256];
    size_t count = 0;
    int rc = nd_plan_candidates(d, 256, &count, (unsigned)k, n);
    if (rc < 0) return cli_fail_nd(rc, "plan");
    if (count > 256) count = 256;
    /* The design init would choose: cheapest within 32 tables. */
    size_t chosen = 0;
    unsigned min_t = 64;
    for (size_t i = 0; i < count; i++) if (d[i].tables < min_t) min_t = d[i].tables;
    unsigned limit = min_t > 32 ? min_t : 32;
    for (size_t i = 0; i < count; i++)
        if (d[i].tables <= limit) { chosen = i; break; }
    if (!json)
        printf("  tables levels blocks  prefix  cand/probe  bytes/doc  disk(GB)\n");
    for (size_t i = 0; i < count; i++) {
        double gb = d[i].bytes_per_doc * (double)n / 1e9;
        if (json) {
            printf("{\"k\":%lu,\"tables\":%u,\"levels\":%u,\"blocks\":[%u,%u],\"prefix_min\":%u,"
                   "\"prefix_max\":%u,\"candidates_per_probe\":%.4g,\"bytes_per_doc\":%.1f,"
                   "\"disk_gb\":%.2f,\"cost\":%.0f,\"chosen\":%s}\n",
                   k, d[i].tables, d[i].levels, d[i].blocks[0], d[i].blocks[1], d[i].prefix_min,
                   d[i].prefix_max, d[i].candidates, d[i].bytes_per_doc, gb, d[i].cost,
                   i == chosen ? "true" : "false");
        } else {
            char blocks[32];
            if (d[i].levels == 2) snprintf(blocks, sizeof blocks, "%u+%u", d[i].blocks[0], d[i].blocks[1]);
            else snprintf(blocks, sizeof blocks, "%u", d[i].blocks[0]);
            printf("%c %6u %6u %6s  %2u..%-2u  %10.3g  %9.1f  %8.1f\n", i == chosen ? '*' : ' ',
                   d[i].tables, d[i].levels, blocks, d[i].prefix_min, d[i].prefix_max,
                   d[i].candidates, d[i].bytes_per_doc, gb);
        }
    }
    return CLI_EXIT_OK;
}
