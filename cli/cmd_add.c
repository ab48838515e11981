/*
 * cmd_add.c — `neardup add DB`: the crawler's online path from the shell.
 *
 * For each input document: fingerprint it (unless the record carries a
 * fingerprint), then nd_db_add_if_new with distance k. The result line is the
 * acknowledgement: with --sync the database is opened with ND_DB_SYNC, so
 * the line is printed and flushed only after the document is durable.
 * SIGINT or SIGTERM stops the run between documents (cli_signals_defer),
 * also while it waits for input: what was printed is stored.
 */
#include "cli.h"
#include "cli_docs.h"
#include "in_reader.h"

#include <getopt.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup add DB [--format fp|jsonl|tsv] [--k K] [--sync] [--skip-bad]\n"
    "                      [--html] [--time T] [--json] [--mmap] [--progress]\n"
    "                      [--id-field F] [--text-field F | --html-field F]\n"
    "                      [INPUT|-]\n"
    "\n"
    "Add each document unless a stored one lies within K bits (default: the\n"
    "database's k). Prints per document, in input order:\n"
    "  new<TAB>KEY                       stored\n"
    "  dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST not stored: closest stored match\n"
    "In a store that verifies by resemblance R (init's default; --fingerprint-\n"
    "only stores compare fingerprints alone), a document is a dup of the\n"
    "stored one of highest estimated resemblance >= R (found by its band keys\n"
    "or within K bits), every document is stored (dups too, so that later\n"
    "copies of a copy are caught), texts are needed (not fingerprints), and a\n"
    "dup line ends with the resemblance: dup<TAB>KEY<TAB>MATCH<TAB>DIST<TAB>RES.\n"
    "  --format   fp: lines HEX16[<TAB>KEY] (KEY defaults to the hex)\n"
    "             jsonl: {\"id\":..,\"text\":..} or {\"id\":..,\"fp\":\"HEX16\"}, optional \"score\"\n"
    "             tsv: KEY<TAB>TEXT\n"
    CLI_FIELD_HELP
    "  --sync     fsync each document before printing its line (the line is\n"
    "             the acknowledgement)\n"
    "  --skip-bad count and skip malformed records instead of stopping\n"
    "  --html     texts are HTML\n"
    "  --time T   last-seen time to record (seconds since the epoch; default now)\n"
    "  --json     JSON lines {\"status\",\"key\",\"match\",\"dist\"[,\"resemblance\"]}\n"
    "  --mmap     read the tables through memory mappings: faster checks on a\n"
    "             large database; the mapped pages count in the process's RSS\n"
    "  --progress a progress line on stderr even when it is not a terminal\n"
    "             (by default: when stderr is a terminal and stdout is not)\n"
    "A summary line goes to stderr: `neardup: add: N new, N dup, N bad`.\n"
    "A bad record stops the run (exit 1) unless --skip-bad; what came before\n"
    "it is stored.\n"
    CLI_INFER_HELP("", "fp");

typedef struct add_ctx {
    nd_db *db;
    nd_results *res;
    nd_fp_options fo;
    int resemblance; /* the store verifies by resemblance */
    unsigned k;
    int json, html;
    int64_t now;
    uint64_t added, dups, bad;
    cli_progress prog;
    in_reader *r; /* its bytes read, for the progress line */
} add_ctx;

static void print_result(add_ctx *a, const in_record *rec)
{
    const nd_match *m = nd_results_count(a->res) ? nd_results_get(a->res, 0) : NULL;
    cli_print_decision(stdout, a->json, rec->key, rec->key_len, m != NULL, m ? m->key : NULL,
                       m ? m->key_len : 0, m ? m->dist : 0, m ? m->resemblance : -1);
    fflush(stdout);
}

static int add_record(add_ctx *a, const in_record *rec)
{
    uint64_t fp;
    nd_sketch sk;
    int rc = cli_record_sign(&fp, a->resemblance ? &sk : NULL, rec, &a->fo, a->html, a->db);
    if (rc) return rc;
    nd_doc d = {rec->key, rec->key_len, fp, rec->has_score ? rec->score : 0.0, a->now,
                a->resemblance ? &sk : NULL};
    rc = nd_db_add_doc_if_new(a->res, a->db, &d, a->k);
    if (rc < 0) {
        rc = cli_fail_nd(rc, "%s:%llu: add", rec->file, (unsigned long long)rec->line);
        return rc == CLI_EXIT_USAGE ? rc : CLI_EXIT_DB;
    }
    if (nd_results_count(a->res)) a->dups++;
    else a->added++;
    print_result(a, rec);
    uint64_t done = a->added + a->dups;
    if (a->prog.tty && (done & 255) == 0) cli_progress_update(&a->prog, done, in_reader_bytes(a->r));
    return CLI_EXIT_OK;
}

int cmd_add(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"k", required_argument, 0, 'k'},
        {"sync", no_argument, 0, 's'},         {"skip-bad", no_argument, 0, 'b'},
        {"html", no_argument, 0, 'H'},         {"time", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},         {"mmap", no_argument, 0, 'm'},
        {"progress", no_argument, 0, 'p'},     CLI_FIELD_LONGOPTS,
        {0, 0, 0, 0}};
    add_ctx a = {0};
    in_format fmt = IN_FORMAT_FP;
    in_reader_opts ro = {.formats = IN_BIT(IN_FORMAT_FP) | IN_BIT(IN_FORMAT_JSONL) |
                                    IN_BIT(IN_FORMAT_TSV)};
    int fmt_given = 0;
    const char *why;
    unsigned flags = 0;
    int have_k = 0, skip_bad = 0, progress = CLI_PROGRESS_QUIET_TTY, opt, rc;
    unsigned long v;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    a.now = (int64_t)time(NULL);
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "add")) != -1) {
        switch (opt) {
        case 'f':
            if (in_format_parse(optarg, &fmt) || fmt == IN_FORMAT_FILES ||
                fmt == IN_FORMAT_WARC)
                return cli_usage_fail("add", "--format must be fp, jsonl or tsv, got '%s'", optarg);
            fmt_given = 1;
            break;
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return cli_usage_fail("add", "--k must be 0..%u, got '%s'", ND_MAX_K, optarg);
            a.k = (unsigned)v;
            have_k = 1;
            break;
        case 's': flags |= ND_DB_SYNC; break;
        case 'm': flags |= ND_DB_MMAP; break;
        case 'b': skip_bad = 1; break;
        case 'H': a.html = 1; break;
        case 't':
            if (in_parse_time(optarg, &a.now))
                return cli_usage_fail("add", "--time must be seconds since the epoch, got '%s'", optarg);
            break;
        case 'j': a.json = 1; break;
        case 'p': progress = CLI_PROGRESS_ON; break;
        default:
            switch (cli_field_option(&ro, opt, optarg, &why)) {
            case 1: break;
            case -1: return cli_usage_fail("add", "%s", why);
            default: return CLI_EXIT_USAGE;
            }
        }
    }
    if ((why = cli_fields_check(&ro, fmt_given, fmt))) return cli_usage_fail("add", "%s", why);
    ro.infer = !fmt_given;
    if (optind >= argc || argc - optind > 2)
        return cli_usage_fail("add", "expected a database path and at most one input");
    const char *path = argv[optind];
    const char *input = optind + 1 < argc ? argv[optind + 1] : "-";
    cli_signals_defer(); /* stop between documents, and say how far */
    in_reader *r = NULL;
    rc = in_reader_open(&r, fmt, input, &ro);
    if (rc < 0 && cli_interrupted()) { /* while the first line was awaited (inference) */
        fprintf(stderr, "neardup: add: interrupted after 0 new, 0 dup, 0 bad\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (rc < 0) return cli_fail("%s", in_reader_error(r));
    rc = cli_open_db(&a.db, path, flags);
    if (rc) goto cleanup;
    nd_db_fp_options(&a.fo, a.db);
    a.resemblance = nd_db_min_resemblance(a.db) > 0;
    if (!have_k) {
        nd_plan_info p;
        nd_db_plan(&p, a.db);
        a.k = p.k;
    }
    if (nd_results_new(&a.res) < 0) {
        rc = cli_fail_nd(ND_ENOMEM, "add");
        goto cleanup;
    }
    char *inputs[1] = {(char *)input};
    a.r = r;
    cli_progress_start_mode(&a.prog, "add", cli_inputs_size(inputs, 1), progress);
    for (;;) {
        in_record rec;
        int got = in_reader_next(r, &rec);
        /* A signal breaks a blocked read too: not a read error. */
        if (cli_interrupted()) {
            rc = CLI_EXIT_INTERRUPTED;
            break;
        }
        if (got == 0) break;
        if (got == -1) {
            fprintf(stderr, "neardup: %s\n", in_reader_error(r));
            a.bad++;
            if (skip_bad) continue;
            rc = CLI_EXIT_USAGE;
            break;
        }
        if (got < 0) {
            rc = cli_fail("%s", in_reader_error(r));
            break;
        }
        rc = add_record(&a, &rec);
        if (rc == CLI_BAD_RECORD) {
            a.bad++;
            rc = CLI_EXIT_OK;
            if (skip_bad) continue;
            rc = CLI_EXIT_USAGE;
        }
        if (rc) break;
    }
    cli_progress_end(&a.prog);
    fprintf(stderr, "neardup: add: %s%llu new, %llu dup, %llu bad\n",
            rc == CLI_EXIT_INTERRUPTED ? "interrupted after " : "", (unsigned long long)a.added,
            (unsigned long long)a.dups, (unsigned long long)a.bad);
cleanup:
    in_reader_close(r);
    nd_results_free(a.res);
    if (a.db) {
        int crc = cli_close_db(a.db, path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    return rc;
}
