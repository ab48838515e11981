/*
 * cmd_batch.c — `neardup batch DB INPUT...`: Manku's batch mode from the
 * shell. The input is read (and fingerprinted) whole, then one nd_batch
 * call checks it against the stored set and against itself; each document
 * gets the line `add` would print for it, in input order.
 */
#include "cli.h"
#include "cli_docs.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup batch DB [--format fp|jsonl|tsv|files|warc] [--k K] [--add]\n"
    "                        [--chunk N] [--html] [--time T] [--sync] [--skip-bad]\n"
    "                        [--json] INPUT...\n"
    "\n"
    "Check a batch of documents against the stored ones and against each other\n"
    "(a merge over each table, not one probe per document). Prints per document,\n"
    "in input order, what `add` would:\n"
    "  new<TAB>KEY                       no stored or earlier new document within K\n"
    "  dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST the closest such document\n"
    "  --k K      distance (default: the database's k)\n"
    "  --add      store the new documents (atomically with the check)\n"
    "  --chunk N  check N documents per batch (default: the whole input; with\n"
    "             --add, later chunks see the documents earlier ones stored)\n"
    "  --format, --html, --time, --skip-bad as in `add`; --json: JSON lines\n"
    "Exit codes: 0 ok, 1 bad usage or input (nothing of the batch is stored),\n"
    "2 database error.\n";

typedef struct batch_ctx {
    nd_db *db;
    nd_results *keys;
    unsigned k, flags;
    int json;
    uint64_t added, dups;
} batch_ctx;

static int run_chunk(cli_docs *l, void *payload)
{
    batch_ctx *c = payload;
    if (l->n == 0) return CLI_EXIT_OK;
    nd_batch_item *out = malloc(l->n * sizeof *out);
    if (!out) return cli_fail_nd(ND_ENOMEM, "batch: %zu documents", l->n);
    int rc = nd_batch(out, c->keys, c->db, l->d, l->n, c->k, c->flags);
    if (rc < 0) {
        free(out);
        return cli_fail_nd(rc, "batch");
    }
    for (size_t i = 0; i < l->n; i++) {
        cli_print_decision(stdout, c->json, l->d[i].key, l->d[i].key_len, out[i].dup,
                           out[i].match_key, out[i].match_key_len, out[i].dist);
        if (out[i].dup) c->dups++;
        else c->added++;
    }
    fflush(stdout);
    free(out);
    return CLI_EXIT_OK;
}

int cmd_batch(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"k", required_argument, 0, 'k'},
        {"add", no_argument, 0, 'a'},          {"chunk", required_argument, 0, 'c'},
        {"html", no_argument, 0, 'H'},         {"time", required_argument, 0, 't'},
        {"sync", no_argument, 0, 's'},         {"skip-bad", no_argument, 0, 'b'},
        {"json", no_argument, 0, 'j'},         {0, 0, 0, 0}};
    cli_read_opts ro = {.fmt = IN_FORMAT_FP, .time = (int64_t)time(NULL)};
    batch_ctx c = {0};
    unsigned dbflags = 0;
    int have_k = 0, opt, rc;
    unsigned long v;
    uint64_t cv;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int shared = cli_read_option(&ro, opt, optarg, "batch");
        if (shared < 0) return CLI_EXIT_USAGE;
        if (shared) continue;
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return cli_fail("batch: --k must be 0..%u, got '%s'", ND_MAX_K, optarg);
            c.k = (unsigned)v;
            have_k = 1;
            break;
        case 'a': c.flags |= ND_BATCH_ADD; break;
        case 'c':
            if (cli_parse_count(optarg, &cv) || cv == 0 || cv > 1000000000)
                return cli_fail("batch: --chunk must be 1..1e9, got '%s'", optarg);
            ro.chunk = (size_t)cv;
            break;
        case 's': dbflags |= ND_DB_SYNC; break;
        case 'j': c.json = 1; break;
        default: cli_usage(stderr, usage); return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind < 2) {
        cli_usage(stderr, usage);
        return cli_fail("batch: expected a database path and at least one input");
    }
    const char *path = argv[optind];
    nd_fp_options fo;
    cli_docs docs = {0};
    cli_progress prog;
    uint64_t read = 0, bad = 0;
    if (!(c.flags & ND_BATCH_ADD)) dbflags |= ND_DB_READONLY;
    rc = cli_open_db(&c.db, path, dbflags);
    if (rc) return rc;
    nd_db_fp_options(&fo, c.db);
    if (!have_k) {
        nd_plan_info p;
        nd_db_plan(&p, c.db);
        c.k = p.k;
    }
    if (nd_results_new(&c.keys) < 0) {
        rc = cli_fail_nd(ND_ENOMEM, "batch");
        goto cleanup;
    }
    ro.fo = &fo;
    ro.progress = &prog;
    /* With --add, answer a pipe or terminal line by line: stored documents
     * are seen by later calls, so the answers are those of one batch.
     * Without it, documents compared only within a call must share one. */
    ro.live = (c.flags & ND_BATCH_ADD) != 0;
    cli_progress_start(&prog, "batch: reading", cli_inputs_size(argv + optind + 1, argc - optind - 1));
    rc = cli_read_docs(&docs, argv + optind + 1, argc - optind - 1, &ro, run_chunk, &c, &read, &bad);
    double secs = cli_progress_end(&prog);
    fprintf(stderr, "neardup: batch: %llu new, %llu dup, %llu bad in %.2f s\n",
            (unsigned long long)c.added, (unsigned long long)c.dups, (unsigned long long)bad, secs);
cleanup:
    nd_results_free(c.keys);
    cli_docs_dispose(&docs);
    int crc = cli_close_db(c.db, path);
    return rc ? rc : crc;
}
