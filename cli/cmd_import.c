/*
 * cmd_import.c — `neardup import DB INPUT...`: bulk load without the
 * near-duplicate check (an existing crawl, a corpus).
 *
 * By default the documents go through one nd_loader: chunks are sorted and
 * spilled, and the commit writes the store once, atomically (a bad record
 * or a crash before it imports nothing new). With --steps each chunk (1M,
 * growing with the store) is one nd_db_import call, written atomically: a
 * crash keeps every chunk that was reported and none of a chunk in flight,
 * but every step rewrites the whole store.
 *
 * SIGINT or SIGTERM stops the read at the next record (cli_signals_defer):
 * the loader is freed, which removes its temporary files, and nothing is
 * imported (with --steps, the steps done stay, and a step being written
 * stops before its write, between the families it writes). Once the
 * loader's commit has begun it runs to its end: the import is then
 * complete.
 *
 * Into a resemblance store texts are signed as they are read (fingerprint
 * and sketch) and the loader writes them as into any store, sketches and
 * band keys with the documents, once (neardup.h, nd_loader).
 */
#include "cli.h"
#include "cli_docs.h"

#include <getopt.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup import DB [--format fp|jsonl|tsv|files|warc|dump] [--html]\n"
    "                         [--time T] [--chunk N] [--steps] [--sync]\n"
    "                         [--id-field F] [--text-field F | --html-field F]\n"
    "                         [--skip-bad] [--json] INPUT...\n"
    "\n"
    "Load documents fast, without the near-duplicate check (use `add` or\n"
    "`batch --add` to keep near-duplicates out). A key already stored is\n"
    "replaced; with repeated keys the last one wins. Into a store created with\n"
    "--min-resemblance: texts only (each signed: fingerprint and sketch; not\n"
    "--format dump or fp), stored with their sketches in the same one write\n"
    "(with --steps: each step's).\n"
    "  --format   fp, jsonl, tsv as in `add`; files: each file (or\n"
    "             every file under a directory) is a document, key = its path;\n"
    "             warc: WARC or WARC.gz response/conversion records, key =\n"
    "             WARC-Target-URI, HTML responses through the HTML path;\n"
    "             dump: what `neardup dump` writes (each document keeps its\n"
    "             score and last-seen time; --time is not used)\n"
    CLI_FIELD_HELP
    "  --chunk N  documents sorted in memory at a time (default 8M; about\n"
    "             220 bytes each plus twice the key: one chunk is written\n"
    "             while the next fills; in a resemblance store default 1M,\n"
    "             about 400 bytes each); with --steps, documents per step\n"
    "             (default: 1M, growing with the store to half its size, at\n"
    "             most 8M)\n"
    "  --steps    write each chunk as its own atomic step (each rewrites the\n"
    "             whole store) instead of sorting every chunk to temporary\n"
    "             files in the database directory and writing the store once\n"
    "  --time T   last-seen time to record (seconds since the epoch; default now)\n"
    "  --sync     fsync each write\n"
    "  --skip-bad count and skip malformed records instead of stopping\n"
    "  --json     the summary as one JSON object on stdout\n"
    "A progress line goes to stderr when it is a terminal. On a bad record\n"
    "(without --skip-bad), an interrupt (SIGINT, SIGTERM) or a crash nothing\n"
    "new is imported (keys already stored may have been replaced) and the\n"
    "temporary files go (after a crash: when the database is next opened\n"
    "for writing); with --steps the steps before it stay imported, the one\n"
    "in progress does not (a step stops between the families it writes).\n"
    "Without --steps, an interrupt once the store is being written lets\n"
    "the import finish.\n"
    CLI_INFER_HELP("a directory is files; else ", "fp");

typedef struct import_ctx {
    nd_db *db;
    nd_loader *loader; /* NULL: --steps */
    uint64_t imported, steps;
    cli_read_opts *ro;
    int auto_chunk;
} import_ctx;

static int flush_chunk(cli_docs *l, void *payload)
{
    import_ctx *c = payload;
    if (l->n == 0) return CLI_EXIT_OK;
    if (c->loader) {
        int rc = nd_loader_add(c->loader, l->d, l->n);
        if (rc < 0) return cli_fail_nd(rc, "import");
        c->imported += l->n;
        return CLI_EXIT_OK;
    }
    int rc = nd_db_import(c->db, l->d, l->n);
    if (rc > 0) return CLI_EXIT_INTERRUPTED; /* stopped before its write */
    if (rc < 0) return cli_fail_nd(rc, "import: step %llu", (unsigned long long)c->steps + 1);
    c->imported += l->n;
    c->steps++;
    if (c->auto_chunk) {
        uint64_t stored = 0;
        nd_db_counts(&stored, NULL, c->db);
        c->ro->chunk = nd_db_import_step(stored);
    }
    return CLI_EXIT_OK;
}

/* A step stops between the families it writes when a signal came: a step
 * of a large store takes seconds, and a signal ends the command within
 * one. */
static int step_stop(const nd_progress *np, void *payload)
{
    (void)np;
    (void)payload;
    return cli_interrupted() ? 1 : 0;
}

int cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"time", required_argument, 0, 't'},   {"chunk", required_argument, 0, 'c'},
        {"sync", no_argument, 0, 's'},         {"skip-bad", no_argument, 0, 'b'},
        {"json", no_argument, 0, 'j'},         {"steps", no_argument, 0, 'S'},
        CLI_FIELD_LONGOPTS,                    {0, 0, 0, 0}};
    cli_read_opts ro = {.fmt = IN_FORMAT_FP, .time = (int64_t)time(NULL), .chunk = nd_db_import_step(0),
                        .in = {.dump = 1}};
    import_ctx c = {.ro = &ro, .auto_chunk = 1};
    unsigned flags = 0;
    int json = 0, steps = 0, opt, rc;
    size_t load_chunk = 0;
    uint64_t v;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "import")) != -1) {
        int shared = cli_read_option(&ro, opt, optarg, "import");
        if (shared < 0) return CLI_EXIT_USAGE;
        if (shared) continue;
        switch (opt) {
        case 'c':
            if (cli_parse_count(optarg, &v) || v == 0 || v > 100000000)
                return cli_usage_fail("import", "--chunk must be 1..1e8, got '%s'", optarg);
            ro.chunk = load_chunk = (size_t)v;
            c.auto_chunk = 0;
            break;
        case 'S': steps = 1; break;
        case 's': flags |= ND_DB_SYNC; break;
        case 'j': json = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (cli_read_check(&ro, "import")) return CLI_EXIT_USAGE;
    if (argc - optind < 2)
        return cli_usage_fail("import", "expected a database path and at least one input");
    const char *path = argv[optind];
    char **inputs = argv + optind + 1;
    int ninputs = argc - optind - 1;
    cli_signals_defer(); /* the loader's files must go with it */
    nd_fp_options fo;
    cli_docs docs = {0};
    cli_progress prog;
    uint64_t read = 0, bad = 0;
    rc = cli_open_db(&c.db, path, flags | ND_DB_NO_BACKGROUND);
    if (rc) return rc;
    nd_db_fp_options(&fo, c.db);
    /* A resemblance store: texts signed (fingerprint and sketch). */
    if (nd_db_min_resemblance(c.db) > 0) ro.sign_db = c.db;
    ro.fo = &fo;
    ro.progress = &prog;
    if (steps) nd_db_set_progress(c.db, step_stop, NULL);
    if (!steps) {
        rc = nd_loader_new(&c.loader, c.db, load_chunk);
        if (rc < 0) {
            rc = cli_fail_nd(rc, "import");
            cli_close_db(c.db, path);
            return rc;
        }
        /* The reader hands over pieces; the loader sorts whole chunks. */
        ro.chunk = cli_load_piece(load_chunk);
        c.auto_chunk = 0;
    }
    cli_progress_start(&prog, "import", cli_inputs_size(inputs, ninputs));
    rc = cli_read_docs(&docs, inputs, ninputs, &ro, flush_chunk, &c, &read, &bad);
    if (rc == CLI_EXIT_OK && cli_interrupted()) rc = CLI_EXIT_INTERRUPTED;
    int late_signal = 0;
    if (c.loader && rc == CLI_EXIT_OK) {
        /* the commit is one call: say what the wait is */
        cli_progress_note(&prog, "%s: %llu docs read; writing the store...", prog.verb,
                          (unsigned long long)c.imported);
        int lrc = nd_loader_finish(NULL, c.loader);
        if (lrc < 0) rc = cli_fail_nd(lrc, "import");
        else c.steps = 1;
        late_signal = cli_interrupted();
    }
    if (c.loader && rc != CLI_EXIT_OK) c.imported = 0;
    nd_loader_free(c.loader); /* removes the temporary files */
    double secs = cli_progress_end(&prog);
    if (rc == CLI_EXIT_INTERRUPTED) {
        if (steps && c.imported)
            fprintf(stderr, "neardup: import: interrupted; %llu %s imported in %llu %s before it\n",
                    (unsigned long long)c.imported, cli_plural(c.imported, "document", "documents"),
                    (unsigned long long)c.steps, cli_plural(c.steps, "step", "steps"));
        else
            cli_load_interrupted("import");
        cli_docs_dispose(&docs);
        cli_close_db(c.db, path);
        return rc;
    }
    if (late_signal) cli_load_late_signal("import");
    uint64_t ndocs = 0, nfps = 0;
    int have_stats = nd_db_counts(&ndocs, &nfps, c.db) == ND_OK;
    double rate = secs > 0 ? (double)c.imported / secs : 0;
    if (json && rc == CLI_EXIT_OK) {
        printf("{\"imported\":%llu,\"bad\":%llu,\"steps\":%llu,\"seconds\":%.3f,\"docs_per_s\":%.0f",
               (unsigned long long)c.imported, (unsigned long long)bad,
               (unsigned long long)c.steps, secs, rate);
        if (have_stats)
            printf(",\"documents\":%llu,\"fingerprints\":%llu", (unsigned long long)ndocs,
                   (unsigned long long)nfps);
        printf("}\n");
    }
    fprintf(stderr, "neardup: import: %llu %s in %.2f s (%.0f docs/s), %llu bad",
            (unsigned long long)c.imported, cli_plural(c.imported, "document", "documents"), secs,
            rate, (unsigned long long)bad);
    if (have_stats)
        fprintf(stderr, "; the database holds %llu %s, %llu %s", (unsigned long long)ndocs,
                cli_plural(ndocs, "document", "documents"), (unsigned long long)nfps,
                cli_plural(nfps, "fingerprint", "fingerprints"));
    fputc('\n', stderr);
    cli_docs_dispose(&docs);
    int crc = cli_close_db(c.db, path);
    return rc ? rc : crc;
}
