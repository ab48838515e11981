/*
 * cmd_dedupe.c — `neardup dedupe`: one-shot near-duplicate clean of a
 * corpus, a thin caller of the library's corpus dedupe (nd_dedupe_*, whose
 * contract and memory use neardup.h states; the algorithm is described in
 * engine/corpus/dedupe_join.c and engine/corpus/dedupe_cluster.c).
 *
 * It parses the options (TMPDIR becomes the scratch directory), feeds
 * every record of the inputs (texts through nd_dedupe_sign, so that a
 * record marked HTML is read as HTML; fingerprints as they are), prints
 * the view asked for from the library's callbacks, and with --db loads the
 * documents into a database afterwards through one nd_loader (pieces of up
 * to 1M handed back by nd_dedupe_docs; the loader's chunks are sized to
 * --memory at LOAD_DOC_BYTES a document, and larger loads spill into the
 * database directory), so the store is written once, at the commit.
 */
#include "cli.h"
#include "cli_docs.h"
#include "dedupe_common.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: neardup dedupe [--db DB] [--k K] [--min-resemblance R]\n"
    "                      [--format files|jsonl|tsv|warc|fp] [--keep first|score|longest]\n"
    "                      [--out clusters|pairs|keep|drop] [--features F] [--html]\n"
    "                      [--fold-chinese]\n"
    "                      [--min-containment C] [--memory MB] [--skip-bad] [--json]\n"
    "                      [--id-field F] [--text-field F | --html-field F]\n"
    "                      INPUT...\n"
    "\n"
    "Find the near-duplicates of a corpus and print them:\n"
    "  clusters  CLUSTER<TAB>keep|drop<TAB>KEY<TAB>DIST  for clusters of 2 or more\n"
    "            (DIST: bits to the kept document of the cluster)\n"
    "  pairs     KEY1<TAB>KEY2<TAB>DIST for every reported pair (as found)\n"
    "  keep      the keys to keep (one per cluster, singletons included)\n"
    "  drop      the keys to drop\n"
    "A pair is reported when its fingerprints are within K bits and the\n"
    "min-hash sketches of its texts estimate a resemblance of at least R.\n"
    "  --k K                largest distance in bits (default 24; with R = 0 or\n"
    "                       fp input: 0..8, default 3)\n"
    "  --min-resemblance R  resemblance of the feature sets (word 3-shingles by\n"
    "                       default), estimated from 128-bin sketches (default\n"
    "                       0.85); 0 = simhash only. Fp input has no text: its\n"
    "                       pairs are simhash only (K <= 8)\n"
    "  --min-containment C  also report a pair when at least this share of the\n"
    "                       smaller document's features are in the larger one\n"
    "                       (estimated from the sketches and feature counts;\n"
    "                       default 0 = off). Contained pairs are found within\n"
    "                       min(K, 8) bits, or by banding, which with C > 0 uses\n"
    "                       32 bands of 4 bins: it finds a page with half as much\n"
    "                       text appended, mostly not a short page in a long one.\n"
    "                       --out pairs --json then shows \"containment\" too\n"
    "  --keep               which document of a cluster stays: first (input order,\n"
    "                       default), score (highest \"score\"), longest (text)\n"
    "  --fold-chinese       fold Traditional Chinese to Simplified (OpenCC t2s)\n"
    "                       before fingerprinting\n"
    "  --format             input format (files: each file or every file under a\n"
    "                       directory is a document; without --format, inferred\n"
    "                       as below)\n"
    CLI_FIELD_HELP
    "  --db DB              also load every document (key, fingerprint, score) into\n"
    "                       the database DB, created with design distance min(K, 8)\n"
    "                       if missing, for later queries (an existing DB keeps\n"
    "                       its k; one of another k than --k asks is refused).\n"
    "                       Documents stored there before are not compared.\n"
    "                       Without --db nothing is left on disk. The load\n"
    "                       holds as many documents in memory at a time as\n"
    "                       --memory allows (216 bytes each, plus twice the\n"
    "                       key; more go to temporary files in DB) and writes\n"
    "                       the database once, at the end\n"
    "  --memory MB          memory for the sorts of the self-join and of grouping\n"
    "                       identical documents (default 256; MB = 2^20 bytes,\n"
    "                       0.001 .. 1048576). A sort takes 32 bytes a document;\n"
    "                       one larger than MB is split into partitions, each\n"
    "                       sorted and joined alone: the same output, one more\n"
    "                       pass over the fingerprints a partition (slow when\n"
    "                       MB is far below 32 bytes x documents)\n"
    "Memory: 8 bytes a document (16 with --keep score|longest) and the sorts\n"
    "(--memory); clusters, keep and drop add 8 a document while sorting and\n"
    "about 20 a document and 20 a pair to cluster. Keys, and sketches (260\n"
    "bytes a text), go to unlinked scratch files in $TMPDIR (default /tmp),\n"
    "read back where needed.\n"
    "Defaults: chosen for precision and recall >= 0.95 on real texts (see\n"
    "bench/README.md). Clusters: documents are taken in --keep order; one not\n"
    "yet assigned is kept and takes every unassigned document it forms a pair\n"
    "with, so each dropped document is within K bits (and R resemblance) of its\n"
    "kept one.\n"
    CLI_INFER_HELP("a directory is files; else ", "files (a regular file is one\n"
                   "document; stdin must then be given a --format)");

/* --memory: MB (2^20 bytes) for the sorts, by default and at most; the
 * least is 1 KB, for tests that want many partitions. */
enum { DEFAULT_MEMORY_MB = 256, MAX_MEMORY_MB = 1 << 20 };
#define MIN_MEMORY_MB 0.001

/* ---- --db ------------------------------------------------------------------ */

/* Open the database at path as it was made, or create it with design
 * distance k, verifying as the dedupe does (min_res, 0: by distance alone,
 * a fingerprint-only store). An existing store keeps its own k, unless
 * --k was given (k_given, the option's value k_opt) and asks for another:
 * then the load is refused before anything is read. */
static int open_db(nd_db **out, const char *path, unsigned k, int k_given, unsigned k_opt,
                   const nd_fp_options *fo, int features_given, double min_res)
{
    nd_db_options o;
    nd_plan_info plan;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.fp = features_given ? fo : NULL;
    int rc = nd_db_open(out, path, &o);
    if (rc == ND_ENOTFOUND) {
        o.flags = ND_DB_CREATE | (min_res > 0 ? 0 : ND_DB_FINGERPRINT_ONLY);
        o.k = k;
        o.min_resemblance = min_res;
        rc = nd_db_open(out, path, &o);
    }
    if (rc < 0) return cli_fail_nd(rc, "dedupe: cannot open or create database '%s'", path);
    if (!k_given) return CLI_EXIT_OK;
    if ((rc = nd_db_plan(&plan, *out)) < 0)
        return cli_fail_nd(rc, "dedupe: reading the plan of database '%s'", path);
    if (plan.k == k) return CLI_EXIT_OK;
    nd_db_close(*out);
    *out = NULL;
    return cli_fail("dedupe: database '%s' has k = %u, but --k %u asks for k = %u (min(K, 8)); "
                    "give --k %u, or no --k to keep the store's", path, plan.k, k_opt, k, plan.k);
}

/* Memory of a document in a loader's chunk besides its key: the document,
 * its key's offset, and the sort items and scratch of its spill (160);
 * the loader fills a second chunk while the first is written (56 more,
 * measured: a 100M load in chunks of 8M peaked 430 MB higher). */
#define LOAD_DOC_BYTES 216

typedef struct load_ctx {
    nd_loader *l;
    int64_t now;
    int rc; /* the loader's error, which stopped the walk */
    uint64_t loaded;
    cli_progress *prog;
} load_ctx;

static int load_piece(nd_doc *docs, size_t n, void *payload)
{
    load_ctx *lc = payload;
    for (size_t i = 0; i < n; i++) docs[i].time = lc->now;
    lc->rc = nd_loader_add(lc->l, docs, n);
    lc->loaded += n;
    cli_progress_update(lc->prog, lc->loaded, 0);
    return lc->rc < 0;
}

/* The documents into the database through one loader, a piece at a time
 * (the loader copies the keys). */
static int load_db(nd_db *db, const char *path, nd_dedupe *dd, size_t memory, size_t n,
                   cli_progress *prog)
{
    size_t chunk = memory / LOAD_DOC_BYTES;
    if (chunk < 1000) chunk = 1000;
    load_ctx lc = {NULL, (int64_t)time(NULL), ND_OK, 0, prog};
    int rc = CLI_EXIT_OK, nrc;
    if ((nrc = nd_loader_new(&lc.l, db, chunk)) < 0) goto fail;
    cli_progress_phase(prog, "loading", "docs", n);
    cli_progress_update(prog, 0, 0);
    nrc = nd_dedupe_docs(dd, cli_load_piece(chunk), load_piece, &lc);
    if (nrc == ND_DEDUPE_STOPPED) nrc = lc.rc;
    if (nrc < 0) goto fail;
    /* one call: say what the wait is */
    cli_progress_note(prog, "dedupe: writing %zu %s into '%s'...", n,
                      cli_plural(n, "document", "documents"), path);
    if ((nrc = nd_loader_finish(NULL, lc.l)) < 0) goto fail;
    goto done;
fail:
    cli_progress_end(prog); /* the error on a line of its own */
    rc = cli_fail_nd(nrc, "dedupe: loading database '%s'", path);
done:
    nd_loader_free(lc.l); /* without a commit, nothing new is stored */
    return rc;
}

/* nd_dedupe_set_progress's callback: each phase of the joins on the line. */
static void join_progress(const nd_dedupe_progress *p, void *payload)
{
    cli_progress *prog = payload;
    /* "docs", as the reading and loading lines count them */
    const char *unit = strcmp(p->unit, "documents") == 0 ? "docs" : p->unit;
    if (!prog->phase || strcmp(prog->phase, p->phase) != 0)
        cli_progress_phase(prog, p->phase, unit, p->total);
    cli_progress_update(prog, p->done, 0);
}

/* A new dedupe; an I/O error is the scratch directory's, which TMPDIR
 * sets. @return an exit code. */
static int new_dedupe(nd_dedupe **out, const nd_dedupe_options *o)
{
    int rc = nd_dedupe_new(out, o);
    if (rc == ND_EIO) {
        fprintf(stderr, "neardup: dedupe: %s (set TMPDIR)\n", nd_errmsg());
        return CLI_EXIT_DB;
    }
    return rc < 0 ? cli_fail_nd(rc, "dedupe") : CLI_EXIT_OK;
}

int cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"keep", required_argument, 0, 'K'},    {"out", required_argument, 0, 'o'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"min-containment", required_argument, 0, 'c'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"fold-chinese", no_argument, 0, 'Z'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        {"db", required_argument, 0, 'd'},      {"memory", required_argument, 0, 'm'},
        CLI_FIELD_LONGOPTS,                     {0, 0, 0, 0}};
    in_format fmt = IN_FORMAT_FILES;
    in_reader_opts ro = {0};
    int fmt_given = 0;
    const char *why;
    nd_fp_options fo;
    nd_dedupe_options o;
    nd_dedupe_stats st = {0};
    unsigned long k = 0;
    double min_res = ND_DEDUPE_DEFAULT_MIN_RESEMBLANCE;
    const char *out = "clusters", *db_path = NULL;
    nd_db *db = NULL;
    nd_dedupe *dd = NULL;
    int html = 0, skip_bad = 0, json = 0, opt, rc = CLI_EXIT_OK, nrc = ND_OK, features_given = 0;
    uint64_t bad = 0;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    nd_dedupe_options_init(&o, ND_DEDUPE_OPTIONS_VERSION);
    o.memory = (uint64_t)DEFAULT_MEMORY_MB << 20;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "dedupe")) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, 64, &k))
                return cli_usage_fail("dedupe", "--k must be 0..64, got '%s'", optarg);
            o.k = (unsigned)k;
            o.has_k = 1;
            break;
        case 'F':
            if (in_format_parse(optarg, &fmt))
                return cli_usage_fail("dedupe", "--format must be files, jsonl, tsv, warc or fp, got '%s'", optarg);
            fmt_given = 1;
            break;
        case 'K':
            if (strcmp(optarg, "first") == 0) o.keep = ND_DEDUPE_KEEP_FIRST;
            else if (strcmp(optarg, "score") == 0) o.keep = ND_DEDUPE_KEEP_SCORE;
            else if (strcmp(optarg, "longest") == 0) o.keep = ND_DEDUPE_KEEP_LONGEST;
            else return cli_usage_fail("dedupe", "--keep must be first, score or longest, got '%s'", optarg);
            break;
        case 'o':
            if (strcmp(optarg, "clusters") && strcmp(optarg, "pairs") && strcmp(optarg, "keep") &&
                strcmp(optarg, "drop"))
                return cli_usage_fail("dedupe", "--out must be clusters, pairs, keep or drop, got '%s'", optarg);
            out = optarg;
            break;
        case 'r': {
            char *end;
            min_res = strtod(optarg, &end);
            if (*end || end == optarg || !(min_res >= 0 && min_res <= 1))
                return cli_usage_fail("dedupe", "--min-resemblance must be a number in [0, 1], got '%s'", optarg);
            break;
        }
        case 'c': {
            char *end;
            o.min_containment = strtod(optarg, &end);
            if (*end || end == optarg || !(o.min_containment >= 0 && o.min_containment <= 1))
                return cli_usage_fail("dedupe", "--min-containment must be a number in [0, 1] (0 = off), got '%s'",
                                optarg);
            break;
        }
        case 'f':
            if (cli_parse_features(optarg, &fo))
                return cli_usage_fail("dedupe", "--features must be words, shingles:N or chars:N, got '%s'", optarg);
            features_given = 1;
            break;
        case 'Z':
            fo.flags |= ND_FP_FOLD_CHINESE;
            features_given = 1;
            break;
        case 'H': html = 1; break;
        case 'b': skip_bad = 1; break;
        case 'j': json = 1; break;
        case 'd': db_path = optarg; break;
        case 'm': {
            char *end;
            double mb = strtod(optarg, &end);
            if (*end || end == optarg || !(mb >= MIN_MEMORY_MB && mb <= MAX_MEMORY_MB))
                return cli_usage_fail("dedupe", "--memory must be a number of MB in [%g, %u], got '%s'",
                                MIN_MEMORY_MB, MAX_MEMORY_MB, optarg);
            o.memory = (uint64_t)(mb * (1 << 20));
            break;
        }
        default:
            switch (cli_field_option(&ro, opt, optarg, &why)) {
            case 1: break;
            case -1: return cli_usage_fail("dedupe", "%s", why);
            default: return CLI_EXIT_USAGE;
            }
        }
    }
    if ((why = cli_fields_check(&ro, fmt_given, fmt))) return cli_usage_fail("dedupe", "%s", why);
    ro.infer = !fmt_given;
    if (optind == argc)
        return cli_usage_fail("dedupe", "give at least one INPUT");
    /* Without --format the first input is opened first: fingerprints
     * inferred there make the dedupe one of fingerprints, as --format fp
     * does (its k is checked against them now, not after the read). */
    in_reader *first = NULL;
    if (!fmt_given && in_reader_open(&first, fmt, argv[optind], &ro) < 0)
        return cli_fail("%s", in_reader_error(NULL));
    in_format fmt0 = first ? in_reader_format(first) : fmt;
    dedupe_cli_options(&o, min_res, fmt0 == IN_FORMAT_FP);
    o.fp = &fo;
    /* The options are checked before --db creates anything. */
    if ((rc = new_dedupe(&dd, &o))) {
        in_reader_close(first);
        return rc;
    }
    if (db_path) { /* created with design distance min(k, 8) */
        nd_dedupe_stats_get(&st, dd);
        rc = open_db(&db, db_path, st.k < ND_MAX_PLAN_K ? st.k : ND_MAX_PLAN_K, o.has_k, o.k, &fo,
                     features_given, o.flags & ND_DEDUPE_SIMHASH_ONLY ? 0 : o.min_resemblance);
        if (rc) goto done;
        if (!features_given) { /* texts are fingerprinted as the store's */
            nd_db_fp_options(&fo, db);
            nd_dedupe_free(dd);
            dd = NULL;
            if ((rc = new_dedupe(&dd, &o))) goto done;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the results go to stdout as they are found: a line there only when
     * stdout is not the terminal */
    cli_progress prog;
    cli_progress_start_mode(&prog, "dedupe", cli_inputs_size(argv + optind, argc - optind),
                            CLI_PROGRESS_QUIET_TTY);
    cli_progress_phase(&prog, "reading", "docs", 0);
    if (prog.tty) nd_dedupe_set_progress(dd, join_progress, &prog);
    uint64_t bytes = 0; /* of the inputs before this one */
    size_t n = 0;
    for (int a = optind; a < argc && rc == CLI_EXIT_OK; a++) {
        in_reader *r = first;
        in_record rec;
        int got;
        first = NULL;
        if (!r && in_reader_open(&r, fmt, argv[a], &ro) < 0) {
            rc = cli_fail("%s", in_reader_error(NULL));
            break;
        }
        while ((got = in_reader_next(r, &rec)) != 0) {
            if (got == -1) {
                cli_progress_clear();
                fprintf(stderr, "neardup: %s\n", in_reader_error(r));
                bad++;
                if (skip_bad) continue;
                rc = CLI_EXIT_USAGE;
                break;
            }
            if (got < 0) {
                rc = cli_fail("%s", in_reader_error(r));
                break;
            }
            double score = rec.has_score ? rec.score : 0;
            if (rec.has_fp) {
                nrc = nd_dedupe_add_fp(dd, rec.key, rec.key_len, rec.fp, score);
            } else {
                nd_signature sig;
                nrc = nd_dedupe_sign(&sig, dd, rec.text, rec.text_len,
                                     html || rec.is_html ? ND_FP_HTML : 0);
                if (nrc < 0) {
                    rc = cli_fail_nd(nrc, "%s:%llu", rec.file, (unsigned long long)rec.line);
                    break;
                }
                nrc = nd_dedupe_add_signature(dd, rec.key, rec.key_len, &sig, score);
            }
            if (nrc < 0) {
                rc = cli_fail_nd(nrc, "dedupe: after %zu documents", n);
                break;
            }
            n++;
            /* Asking the reader its offset is a system call: not per record. */
            if (prog.tty && n % 4096 == 0)
                cli_progress_update(&prog, n, bytes + in_reader_bytes(r));
        }
        bytes += in_reader_bytes(r);
        in_reader_close(r);
    }
    if (rc == CLI_EXIT_OK) {
        if (strcmp(out, "pairs") == 0) {
            nrc = nd_dedupe_pairs(dd, dedupe_print_pair, &json);
        } else if (strcmp(out, "clusters") == 0) {
            nrc = nd_dedupe_clusters(dd, dedupe_print_member, &json);
        } else {
            dedupe_role_view v = {out[0] == 'k' ? ND_DEDUPE_ROLE_KEEP : ND_DEDUPE_ROLE_DROP, json};
            nrc = nd_dedupe_roles(dd, dedupe_print_role, &v);
        }
        if (nrc < 0) rc = cli_fail_nd(nrc, "dedupe");
    }
    if (rc == CLI_EXIT_OK && db) rc = load_db(db, db_path, dd, (size_t)o.memory, n, &prog);
    cli_progress_end(&prog); /* before the summary (or the error) */
    if (db) {
        int crc = cli_close_db(db, db_path);
        if (rc == CLI_EXIT_OK) rc = crc;
        db = NULL;
    }
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK) rc = cli_fail("dedupe: writing the output failed");
    /* Out of memory: the counts are not the corpus's; no summary. */
    if (rc != CLI_EXIT_OK && nrc == ND_ENOMEM) goto done;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    nd_dedupe_stats_get(&st, dd);
    char by_cont[64] = "";
    if (o.min_containment > 0)
        snprintf(by_cont, sizeof by_cont, " (%llu by containment)",
                 (unsigned long long)st.by_containment);
    if (strcmp(out, "pairs") == 0 || rc != CLI_EXIT_OK)
        fprintf(stderr, "neardup: dedupe: %llu %s, %llu %s%s, %llu bad, %.2f s\n",
                (unsigned long long)st.documents, cli_plural(st.documents, "document", "documents"),
                (unsigned long long)st.pairs, cli_plural(st.pairs, "pair", "pairs"), by_cont,
                (unsigned long long)bad, secs);
    else
        fprintf(stderr, "neardup: dedupe: %llu %s (%llu distinct), %llu %s of distinct ones%s, "
                "%llu bad, %.2f s\n", (unsigned long long)st.documents,
                cli_plural(st.documents, "document", "documents"), (unsigned long long)st.distinct,
                (unsigned long long)st.pairs, cli_plural(st.pairs, "pair", "pairs"), by_cont,
                (unsigned long long)bad, secs);
done: /* a failure before any document was read: no summary */
    in_reader_close(first);
    if (db) {
        int crc = cli_close_db(db, db_path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    nd_dedupe_free(dd);
    return rc;
}
