/*
 * cmd_batch.c — `neardup batch DB INPUT...`: Manku's batch mode from the
 * shell. The input is read (and fingerprinted) whole, then one nd_db_batch
 * call checks it against the stored set and against itself; each document
 * gets the line `add` would print for it, in input order. SIGINT or
 * SIGTERM stops the read (cli_signals_defer); a chunk already checked is
 * printed (and with --add stored) whole.
 */
#include "cli.h"
#include "cli_docs.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup batch DB [--format fp|jsonl|tsv|files|warc|dump] [--k K] [--add]\n"
    "                        [--chunk N] [--html] [--time T] [--sync] [--skip-bad]\n"
    "                        [--id-field F] [--text-field F | --html-field F]\n"
    "                        [--json] [--progress] INPUT...\n"
    "\n"
    "Check a batch of documents against the stored ones and against each other\n"
    "(a merge over each table, not one probe per document). Prints per document,\n"
    "in input order, what `add` would:\n"
    "  new<TAB>KEY                       no stored or earlier new document within K\n"
    "  dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST the closest such document\n"
    "In a store verifying by resemblance, as `add` decides there: the\n"
    "most resemblant stored or earlier document of estimated resemblance >= R\n"
    "(every earlier one counts), RES as a last column, --add stores every\n"
    "document; texts are needed, and documents are checked one by one.\n"
    "  --k K      distance (default: the database's k)\n"
    "  --add      store the new documents (atomically with the check)\n"
    "  --chunk N  check N documents per batch (default: the whole input; with\n"
    "             --add, later chunks see the documents earlier ones stored)\n"
    "  --format, --html, --time, --skip-bad, --id-field, --text-field,\n"
    "  --html-field as in `add`; --json: JSON lines; --format dump reads\n"
    "             `neardup dump` output (each document's own score and time);\n"
    "             files and warc as in `import`\n"
    "  --progress a progress line on stderr even when it is not a terminal\n"
    "             (by default: when stderr is a terminal and stdout is not)\n"
    "On a pipe or terminal each line is answered as it comes; without --add the\n"
    "new documents seen so far (every document in a resemblance store) are kept\n"
    "in memory and checked again with each arriving group, so the stream answers\n"
    "as one batch (for a long-lived stream, `add` or `batch --add` cost less).\n"
    "A summary line goes to stderr: `neardup: batch: N new, N dup, N bad in T s`.\n"
    "A bad record stops the run (exit 1) unless --skip-bad: nothing of the\n"
    "batch is stored (with --chunk, nothing of the chunk it is in).\n"
    CLI_INFER_HELP("a directory is files; else ", "fp");

typedef struct batch_ctx {
    nd_db *db;
    nd_results *keys;
    unsigned k, flags;
    int json;
    uint64_t added, dups;
    cli_progress *prog;
    /* A live input without --add: the earlier documents that count for the
     * later ones (the new ones; every one in a resemblance store), checked
     * again with each group so that the stream answers as one batch. */
    int keep_prior;
    cli_docs prior;
} batch_ctx;

/* The documents to check: prior's then l's, in one array (*all: l->d
 * itself when there is no prior). */
static int with_prior(nd_doc **all, batch_ctx *c, cli_docs *l)
{
    size_t np = c->keep_prior ? c->prior.n : 0;
    *all = l->d;
    if (np == 0) return CLI_EXIT_OK;
    *all = malloc((np + l->n) * sizeof **all);
    if (!*all) return cli_fail_nd(ND_ENOMEM, "batch: %zu documents", np + l->n);
    cli_docs_seal(&c->prior);
    memcpy(*all, c->prior.d, np * sizeof **all);
    memcpy(*all + np, l->d, l->n * sizeof **all);
    return CLI_EXIT_OK;
}

static int run_chunk(cli_docs *l, void *payload)
{
    batch_ctx *c = payload;
    if (l->n == 0) return CLI_EXIT_OK;
    size_t np = c->keep_prior ? c->prior.n : 0;
    nd_doc *all;
    int rc = with_prior(&all, c, l);
    if (rc) return rc;
    nd_batch_item *items = malloc((np + l->n) * sizeof *items);
    if (!items) {
        if (all != l->d) free(all);
        return cli_fail_nd(ND_ENOMEM, "batch: %zu documents", l->n);
    }
    /* one call: say what the wait is */
    cli_progress_note(c->prog, "batch: checking %zu %s...", l->n,
                      cli_plural(l->n, "document", "documents"));
    rc = nd_db_batch(items, c->keys, c->db, all, np + l->n, c->k, c->flags);
    if (all != l->d) free(all);
    if (rc < 0) {
        free(items);
        return cli_fail_nd(rc, "batch");
    }
    nd_batch_item *out = items + np;
    for (size_t i = 0; i < l->n; i++) {
        cli_print_decision(stdout, c->json, l->d[i].key, l->d[i].key_len, out[i].dup,
                           out[i].match_key, out[i].match_key_len, out[i].dist,
                           out[i].resemblance);
        if (out[i].dup) c->dups++;
        else c->added++;
    }
    fflush(stdout);
    /* After the printing: the matches' keys may point into prior's arena,
     * which growing moves. */
    int every = nd_db_min_resemblance(c->db) > 0;
    for (size_t i = 0; c->keep_prior && i < l->n; i++)
        if ((every || !out[i].dup) && cli_docs_push_doc(&c->prior, &l->d[i]) < 0) {
            free(items);
            return CLI_EXIT_DB;
        }
    free(items);
    return CLI_EXIT_OK;
}

int cmd_batch(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"k", required_argument, 0, 'k'},
        {"add", no_argument, 0, 'a'},          {"chunk", required_argument, 0, 'c'},
        {"html", no_argument, 0, 'H'},         {"time", required_argument, 0, 't'},
        {"sync", no_argument, 0, 's'},         {"skip-bad", no_argument, 0, 'b'},
        {"json", no_argument, 0, 'j'},         {"progress", no_argument, 0, 'p'},
        CLI_FIELD_LONGOPTS,                    {0, 0, 0, 0}};
    cli_read_opts ro = {.fmt = IN_FORMAT_FP, .time = (int64_t)time(NULL), .in = {.dump = 1}};
    batch_ctx c = {0};
    unsigned dbflags = 0;
    int have_k = 0, progress = CLI_PROGRESS_QUIET_TTY, opt, rc;
    unsigned long v;
    uint64_t cv;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "batch")) != -1) {
        int shared = cli_read_option(&ro, opt, optarg, "batch");
        if (shared < 0) return CLI_EXIT_USAGE;
        if (shared) continue;
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return cli_usage_fail("batch", "--k must be 0..%u, got '%s'", ND_MAX_K, optarg);
            c.k = (unsigned)v;
            have_k = 1;
            break;
        case 'a': c.flags |= ND_BATCH_ADD; break;
        case 'c':
            if (cli_parse_count(optarg, &cv) || cv == 0 || cv > 1000000000)
                return cli_usage_fail("batch", "--chunk must be 1..1e9, got '%s'", optarg);
            ro.chunk = (size_t)cv;
            break;
        case 's': dbflags |= ND_DB_SYNC; break;
        case 'j': c.json = 1; break;
        case 'p': progress = CLI_PROGRESS_ON; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (cli_read_check(&ro, "batch")) return CLI_EXIT_USAGE;
    if (argc - optind < 2)
        return cli_usage_fail("batch", "expected a database path and at least one input");
    const char *path = argv[optind];
    cli_signals_defer(); /* stop the read, and say how far it went */
    nd_fp_options fo;
    cli_docs docs = {0};
    cli_progress prog;
    uint64_t read = 0, bad = 0;
    if (!(c.flags & ND_BATCH_ADD)) dbflags |= ND_DB_READONLY;
    rc = cli_open_db_threads(&c.db, path, dbflags, cli_batch_threads());
    if (rc) return rc;
    nd_db_fp_options(&fo, c.db);
    if (nd_db_min_resemblance(c.db) > 0) ro.sign_db = c.db;
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
    c.prog = &prog;
    cli_progress_start_mode(&prog, "batch", cli_inputs_size(argv + optind + 1, argc - optind - 1),
                            progress);
    cli_progress_phase(&prog, "reading", "docs", 0);
    /* Answer a pipe or terminal line by line. With --add stored documents
     * are seen by later calls, so the answers are those of one batch;
     * without it the earlier documents that count are kept and checked
     * again with each group (keep_prior). A regular file is one call (or
     * one a --chunk, each on its own, as before). */
    ro.live = 1;
    c.keep_prior = !(c.flags & ND_BATCH_ADD) && cli_inputs_live(argv + optind + 1, argc - optind - 1);
    rc = cli_read_docs(&docs, argv + optind + 1, argc - optind - 1, &ro, run_chunk, &c, &read, &bad);
    if (rc == CLI_EXIT_OK && cli_interrupted()) rc = CLI_EXIT_INTERRUPTED;
    double secs = cli_progress_end(&prog);
    if (rc == CLI_EXIT_INTERRUPTED)
        fprintf(stderr, "neardup: batch: interrupted after %llu new, %llu dup%s\n",
                (unsigned long long)c.added, (unsigned long long)c.dups,
                (c.flags & ND_BATCH_ADD) && c.added ? " (the new ones stored)" : "");
    else
        fprintf(stderr, "neardup: batch: %llu new, %llu dup, %llu bad in %.2f s\n",
                (unsigned long long)c.added, (unsigned long long)c.dups, (unsigned long long)bad,
                secs);
cleanup:
    nd_results_free(c.keys);
    cli_docs_dispose(&docs);
    cli_docs_dispose(&c.prior);
    int crc = cli_close_db(c.db, path);
    return rc ? rc : crc;
}
