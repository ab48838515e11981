/*
 * cmd_shard.c — `neardup shard`: create, fill and inspect sharded stores.
 *
 *   shard init DIR --shards S [--k K] [--docs N] [--tables T] [--features F]
 *              [--min-resemblance R | --fingerprint-only]
 *   shard split DB DIR --shards S [--docs N] [--chunk M]
 *   shard import DIR INPUT... [--format F] [--html] [--time T] [--chunk M]
 *   shard info DIR
 *   shard which DIR KEY...
 * each with --json, its own option table (what bash completes), and its
 * options anywhere among its operands.
 *
 * A sharded store is S ordinary databases plus a manifest, created,
 * opened and placed by the library (nd_shards_*, neardup.h; the manifest's
 * format and the key -> shard rule in engine/shards/shard_manifest.h). Every
 * shard gets the same plan (k and t; the planner's N is the store's N / S)
 * and the same fingerprint configuration, so a query against the store is
 * the union of the same query against each shard. As `neardup init`, init
 * makes resemblance shards (R = 0.85) unless told --fingerprint-only: the
 * default is the CLI's, since nd_shards_options.min_resemblance 0 still
 * means fingerprint-only shards to the library. The manifest is written
 * last: an interrupted init or split leaves a directory that no command
 * accepts as a store.
 *
 * split (reading the source with nd_db_foreach_doc, a consistent snapshot)
 * and import load the shards through one nd_loader per shard: each
 * document goes to its shard's loader, which sorts full chunks and spills
 * them to temporary files in the shard; at the end the loaders are
 * committed shard by shard, each writing its shard once. So a bad record
 * or a failure while reading imports nothing new into any shard (keys
 * already stored may have been replaced, as with `neardup import`), and
 * never costs one probe per document or one rewrite of a shard per chunk.
 * Each commit is atomic, the set of them is not: a failure or a crash
 * between two commits leaves the shards committed before it loaded and
 * the others without the load (the error names them). SIGINT or SIGTERM
 * while import reads stops it at the next record (cli_signals_defer): the
 * loaders go with their temporary files and nothing is imported (but what
 * resemblance shards were handed, written as it is read); once the
 * commits have begun they run to their end.
 */
#include "cli.h"
#include "cli_docs.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup shard init DIR --shards S [--k K] [--docs N] [--tables T]\n"
    "                          [--features words|shingles:N|chars:N]\n"
    "                          [--min-resemblance R | --fingerprint-only] [--json]\n"
    "       neardup shard split DB DIR --shards S [--docs N] [--chunk M] [--json]\n"
    "       neardup shard import DIR [--format fp|jsonl|tsv|files|warc] [--html]\n"
    "                            [--time T] [--chunk M] [--skip-bad] [--json]\n"
    "                            [--id-field F] [--text-field F | --html-field F]\n"
    "                            INPUT...\n"
    "       neardup shard info DIR [--json]\n"
    "       neardup shard which DIR [--json] KEY...\n"
    "\n"
    "A sharded store DIR is S ordinary databases DIR/shard-000.. plus the\n"
    "manifest DIR/" ND_SHARDS_MANIFEST_NAME " (shard count, plan, fingerprint\n"
    "configuration, and the rule placing a document: FNV-1a-64(key) mod S).\n"
    "Each shard is a complete database (verify, backup, compact it alone).\n"
    "  init    create DIR with S empty shards (--k, --tables and --features as\n"
    "          for `neardup init`; --docs is the whole store's expected size).\n"
    "          By default every shard verifies by resemblance R = 0.85, as a\n"
    "          store of `neardup init`: a near-duplicate is a text sharing >= 85%\n"
    "          of its word 3-shingles with a stored one (on held-out real text\n"
    "          99% of such copies found; a fingerprint-only store finds 22-68%).\n"
    "          Its records must be texts.\n"
    "  --min-resemblance R  (init) another threshold (0 < R <= 1; choose 0.8 or\n"
    "          more: below it the band keys miss candidates, accepted with a\n"
    "          warning on stderr). Cost of resemblance: a sketch and band keys,\n"
    "          about 340 bytes a document, and an add at about 0.6x a\n"
    "          fingerprint-only store's rate (docs/cli.md, \"Resemblance\")\n"
    "  --resemblance  (init) R = 0.85, the default, said explicitly\n"
    "  --fingerprint-only  (init) fingerprint-only shards (Manku's setting):\n"
    "          near-duplicates are fingerprints within k bits; records may be\n"
    "          bare fingerprints. For callers that have fingerprints only\n"
    "  split   copy every document of database DB into a new store DIR with\n"
    "          the same k, tables and fingerprint configuration (and the same\n"
    "          resemblance threshold, sketches copied, when DB has one)\n"
    "  import  bulk-load documents into the shards of their keys, without the\n"
    "          near-duplicate check (as `neardup import`: texts fingerprinted\n"
    "          with the store's configuration, a key already stored replaced,\n"
    "          with repeated keys the last one wins; resemblance shards need\n"
    "          texts, which are signed, their sketches stored with them);\n"
    "          --format, --id-field, --text-field, --html-field as for\n"
    "          `neardup import`, and without --format an input's format is\n"
    "          inferred as there (a directory: files; else its first line,\n"
    "          else its name, else fp)\n"
    "  split and import sort each shard's documents in chunks spilled to\n"
    "  temporary files in the shard, then write the shards once each, one\n"
    "  after the other. A bad record, or a crash before the shards are\n"
    "  written, imports nothing new into any shard (keys already stored may\n"
    "  have been replaced). A failure or crash while they are written leaves\n"
    "  the shards written before it loaded and the others not (a failure\n"
    "  says which); a failed split leaves DIR without a manifest.\n"
    "  --skip-bad (import) count and skip malformed records instead of\n"
    "             stopping\n"
    "  --chunk M  documents each shard holds in memory before they are sorted\n"
    "             and spilled (about 220 bytes each plus twice the key: a\n"
    "             chunk is written while the next fills; default 8M / S, at\n"
    "             least 100k)\n"
    "  info    print the manifest (min_resemblance too, for resemblance shards)\n"
    "          and each shard's document count\n"
    "  which   print the shard of each KEY: KEY<TAB>SHARD<TAB>PATH\n"
    "  --json  the result as JSON: one object (init, split, import, info) or\n"
    "          one a key (which: {\"key\",\"shard\",\"path\"})\n"
    "Options may come before or after the operands; after `--` every argument\n"
    "is an operand (a key starting with '-').\n"
    "";

/* Options shared by the subcommands. */
typedef struct shard_args {
    unsigned long shards;
    unsigned k, tables;
    int has_k;
    uint64_t docs;
    uint64_t chunk;
    int json, html, skip_bad;
    in_format fmt;
    int fmt_given;
    in_reader_opts in; /* import: the JSONL members */
    int64_t time;
    nd_fp_options fo;
    double min_resemblance; /* init: 0 (the default), or the shards' threshold */
    const char *threshold_opt; /* init: "--resemblance" or "--min-resemblance" given */
    int fingerprint_only;   /* init: --fingerprint-only given */
} shard_args;

/* Each subcommand's options: what it parses is what it takes (and what
 * bash completes), so `shard info --html` is refused as unknown. */
#define OPT_SHARDS {"shards", required_argument, 0, 's'}
#define OPT_DOCS {"docs", required_argument, 0, 'n'}
#define OPT_CHUNK {"chunk", required_argument, 0, 'c'}
#define OPT_JSON {"json", no_argument, 0, 'j'}
static const struct option init_opts[] = {
    OPT_SHARDS, {"k", required_argument, 0, 'k'}, OPT_DOCS, {"tables", required_argument, 0, 't'},
    {"features", required_argument, 0, 'f'}, {"min-resemblance", required_argument, 0, 'R'},
    {"resemblance", no_argument, 0, 'S'}, {"fingerprint-only", no_argument, 0, 'P'}, OPT_JSON,
    {0, 0, 0, 0}};
static const struct option split_opts[] = {OPT_SHARDS, OPT_DOCS, OPT_CHUNK, OPT_JSON,
                                           {0, 0, 0, 0}};
static const struct option import_opts[] = {
    {"format", required_argument, 0, 'F'}, {"html", no_argument, 0, 'H'},
    {"time", required_argument, 0, 'T'}, OPT_CHUNK, {"skip-bad", no_argument, 0, 'b'},
    OPT_JSON, CLI_FIELD_LONGOPTS, {0, 0, 0, 0}};
static const struct option json_opts[] = {OPT_JSON, {0, 0, 0, 0}}; /* info, which */

/* Parse the options of subcommand sub (anywhere among its operands, as
 * getopt_long permutes them; after `--` only operands). */
static int parse_args(shard_args *a, int argc, char **argv, const char *sub,
                      const struct option *longopts)
{
    unsigned long v;
    int opt;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "shard %s", sub);
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, cmd)) != -1) {
        switch (opt) {
        case 's':
            if (cli_parse_uint(optarg, 1, ND_SHARDS_MAX, &a->shards))
                return cli_usage_fail("shard", "%s: --shards must be 1..%u, got '%s'", sub, ND_SHARDS_MAX,
                                optarg);
            break;
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_PLAN_K, &v))
                return cli_usage_fail("shard", "%s: --k must be 0..%u, got '%s'", sub, ND_MAX_PLAN_K,
                                optarg);
            a->k = (unsigned)v;
            a->has_k = 1;
            break;
        case 'n':
            if (cli_parse_count(optarg, &a->docs) || a->docs == 0)
                return cli_usage_fail("shard", "%s: --docs must be a positive count like 1e9 or 10M, "
                                "got '%s'", sub, optarg);
            break;
        case 't':
            if (cli_parse_uint(optarg, 1, ND_MAX_TABLES, &v))
                return cli_usage_fail("shard", "%s: --tables must be 1..%u, got '%s'", sub,
                                ND_MAX_TABLES, optarg);
            a->tables = (unsigned)v;
            break;
        case 'f':
            if (cli_parse_features(optarg, &a->fo))
                return cli_usage_fail("shard", "%s: --features must be words, shingles:N or chars:N, "
                                "got '%s'", sub, optarg);
            break;
        case 'c':
            if (cli_parse_count(optarg, &a->chunk) || a->chunk == 0)
                return cli_usage_fail("shard", "%s: --chunk must be a positive count, got '%s'", sub,
                                optarg);
            break;
        case 'R': {
            char *end = NULL;
            double r = strtod(optarg, &end);
            if (!*optarg || *end || !(r > 0 && r <= 1))
                return cli_usage_fail("shard", "%s: --min-resemblance must be a number in (0, 1], "
                                      "got '%s'", sub, optarg);
            a->min_resemblance = r;
            a->threshold_opt = "--min-resemblance";
            break;
        }
        case 'S':
            a->min_resemblance = ND_DB_DEFAULT_MIN_RESEMBLANCE;
            a->threshold_opt = "--resemblance";
            break;
        case 'P': a->fingerprint_only = 1; break;
        case 'j': a->json = 1; break;
        case 'F':
            if (in_format_parse(optarg, &a->fmt))
                return cli_usage_fail("shard", "%s: --format must be fp, jsonl, tsv, files or warc, "
                                "got '%s'", sub, optarg);
            a->fmt_given = 1;
            break;
        case 'H': a->html = 1; break;
        case 'b': a->skip_bad = 1; break;
        case 'T':
            if (in_parse_time(optarg, &a->time))
                return cli_usage_fail("shard", "%s: --time must be seconds since the epoch, got '%s'",
                                sub, optarg);
            break;
        default: {
            const char *why;
            switch (cli_field_option(&a->in, opt, optarg, &why)) {
            case 1: break;
            case -1: return cli_usage_fail("shard", "%s: %s", sub, why);
            default: return CLI_EXIT_USAGE;
            }
        }
        }
    }
    const char *why = cli_fields_check(&a->in, a->fmt_given, a->fmt);
    if (why) return cli_usage_fail("shard", "%s: %s", sub, why);
    return CLI_EXIT_OK;
}

/* A failure of nd_shards_open or a manifest: the caller's input (no store,
 * an unknown or damaged manifest, a directory that exists) exits 1 with
 * the library's message; a database's failure exits 2. */
static int shards_fail(int rc, const char *sub)
{
    if (rc == ND_ENOTFOUND || rc == ND_ECORRUPT || rc == ND_EVERSION || rc == ND_EEXIST ||
        rc == ND_EINVAL || rc == ND_ELIMIT)
        return cli_fail("shard %s: %s", sub, nd_errmsg());
    return cli_fail_nd(rc, "shard %s", sub);
}

/* Create the store DIR (S empty shards, their settings from o) with the
 * handle's flags; on failure says what to do with the incomplete DIR. */
static int create_store(nd_shards **out, const char *dir, nd_shards_options *o, const char *sub)
{
    o->flags |= ND_SHARDS_CREATE;
    int rc = nd_shards_open(out, dir, o);
    if (rc == ND_OK) return CLI_EXIT_OK;
    int exit = shards_fail(rc, sub);
    if (rc != ND_EEXIST && rc != ND_EINVAL)
        fprintf(stderr, "neardup: shard: '%s' is incomplete (no manifest): remove it\n", dir);
    return exit;
}

static int shard_init(int argc, char **argv)
{
    shard_args a = {0};
    nd_shards_options o;
    nd_shards_info m;
    nd_shards *sh = NULL;
    nd_fp_options_init(&a.fo, ND_FP_OPTIONS_VERSION);
    a.docs = 100000000;
    int rc = parse_args(&a, argc, argv, "init", init_opts);
    if (rc) return rc;
    if (optind != argc - 1)
        return cli_usage_fail("shard init", "expected exactly one directory");
    if (a.shards == 0) return cli_usage_fail("shard init", "--shards S is required");
    const char *dir = argv[optind];
    if (a.fingerprint_only && a.threshold_opt)
        return cli_usage_fail("shard init", "--fingerprint-only and %s exclude each other",
                              a.threshold_opt);
    /* The default kind is `neardup init`'s (the library's 0 is fingerprint
     * only, nd_shards_options). */
    if (!a.fingerprint_only && a.min_resemblance == 0)
        a.min_resemblance = ND_DB_DEFAULT_MIN_RESEMBLANCE;
    cli_warn_resemblance("shard init", a.min_resemblance);
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.flags = ND_SHARDS_MANIFEST_ONLY; /* each shard created and closed in turn */
    o.shards = (unsigned)a.shards;
    o.k = a.k;
    o.has_k = a.has_k;
    o.tables = a.tables;
    o.expected_docs = a.docs;
    o.fp = &a.fo;
    o.min_resemblance = a.min_resemblance;
    if ((rc = create_store(&sh, dir, &o, "init"))) return rc;
    nd_shards_info_get(&m, sh);
    if (a.json) {
        printf("{\"path\":");
        in_put_json_string(stdout, dir, strlen(dir));
        printf(",\"shards\":%u,\"k\":%u,\"tables\":%u,\"fingerprint\":\"%s\"", m.shards, m.k,
               m.tables, m.fingerprint);
        if (a.min_resemblance > 0) printf(",\"min_resemblance\":%g", a.min_resemblance);
        printf("}\n");
    } else {
        printf("created %s: %u shards, k=%u, %u tables, fingerprint %s", dir, m.shards, m.k,
               m.tables, m.fingerprint);
        if (a.min_resemblance > 0) printf(", min resemblance %g", a.min_resemblance);
        printf("\n");
    }
    int crc = nd_shards_close(sh);
    return crc < 0 ? cli_fail_nd(crc, "shard init") : CLI_EXIT_OK;
}

/* ---- loading: split and import ------------------------------------------ */

/* A load into every shard of a store (nd_shards_loader), with progress
 * on a terminal. */
typedef struct shard_load {
    nd_shards *sh;
    unsigned shards;
    nd_shards_loader *loader;
    const char *verb; /* "shard split" or "shard import" */
    uint64_t seen;
    cli_progress prog;
    int rc; /* exit code once a callback failed */
} shard_load;

/* "DIR/shard-NNN" of shard s (for messages). */
static const char *path_of(const nd_shards *sh, unsigned s)
{
    static char path[4096];
    if (nd_shards_path(path, sizeof path, sh, s) < 0) snprintf(path, sizeof path, "shard %u", s);
    return path;
}

/* Start the load (--chunk M documents a shard, 0: the library's share)
 * of total_bytes of input (0: unknown) or total_docs documents (0:
 * unknown), for the progress line. */
static int load_start(shard_load *l, uint64_t chunk, uint64_t total_bytes, uint64_t total_docs)
{
    size_t c = chunk < SIZE_MAX ? (size_t)chunk : SIZE_MAX;
    int rc = nd_shards_loader_new(&l->loader, l->sh, c);
    if (rc < 0) return cli_fail_nd(rc, "%s", l->verb);
    cli_progress_start(&l->prog, l->verb, total_bytes);
    cli_progress_phase(&l->prog, "reading", "docs", total_docs);
    return CLI_EXIT_OK;
}

/* Add n documents to their shards' loaders; on failure sets l->rc and
 * returns 1. */
static int load_add(shard_load *l, const nd_doc *d, size_t n)
{
    int rc = nd_shards_loader_add(l->loader, d, n);
    if (rc < 0) {
        if (n == 1)
            l->rc = cli_fail_nd(rc, "%s (document %llu)", l->verb, (unsigned long long)l->seen + 1);
        else
            l->rc = cli_fail_nd(rc, "%s (documents %llu..%llu)", l->verb,
                                (unsigned long long)l->seen + 1, (unsigned long long)(l->seen + n));
        return 1;
    }
    l->seen += n;
    return 0;
}

/* "shard N" or "shards LO..HI" on stderr. */
static void put_range(unsigned lo, unsigned hi)
{
    if (lo == hi) fprintf(stderr, "shard %u", lo);
    else fprintf(stderr, "shards %u..%u", lo, hi);
}

/* Commit every shard's load, in shard order. Each commit is atomic on its
 * own, not the set: after a failure (or a crash) here the shards before
 * it hold the load's documents, the others none of them. */
static int load_commit(shard_load *l)
{
    unsigned S = l->shards;
    cli_progress_phase(&l->prog, "writing", "shards", S);
    for (unsigned s = 0; s < S; s++) {
        l->prog.last = 0; /* each commit is one call: a line before each */
        cli_progress_update(&l->prog, s, 0);
        int rc = nd_shards_loader_commit(l->loader, s, NULL);
        if (rc < 0) {
            if (l->prog.tty) fputc('\n', stderr);
            rc = cli_fail_nd(rc, "%s", l->verb);
            fprintf(stderr, "neardup: %s: written: ", l->verb);
            if (s) put_range(0, s - 1);
            else fputs("none", stderr);
            fputs("; not written: ", stderr);
            put_range(s, S - 1);
            fputc('\n', stderr);
            return rc;
        }
    }
    return CLI_EXIT_OK;
}

/* Free the loaders: whatever was not committed is dropped, with the
 * temporary files. Before the shards are closed. */
static void load_free(shard_load *l)
{
    nd_shards_loader_free(l->loader);
    l->loader = NULL;
    if (l->prog.verb) cli_progress_end(&l->prog);
    l->prog.verb = NULL;
}

static int split_cb(const nd_doc *d, void *payload)
{
    shard_load *l = payload;
    if (load_add(l, d, 1)) return 1;
    if (l->prog.tty && (l->seen & 4095) == 0) cli_progress_update(&l->prog, l->seen, 0);
    return 0;
}

/* split has no --k, --tables or kind options (its table leaves them out,
 * so bash does not offer them): one given says where they come from. */
static int refuse_plan_options(int argc, char **argv)
{
    static const char *const plan_opts[] = {"k", "tables", "resemblance", "min-resemblance",
                                            "fingerprint-only"};
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strncmp(argv[i], "--", 2) != 0) continue;
        const char *name = argv[i] + 2;
        size_t len = strcspn(name, "=");
        for (size_t j = 0; j < sizeof plan_opts / sizeof plan_opts[0]; j++)
            if (strlen(plan_opts[j]) == len && strncmp(name, plan_opts[j], len) == 0)
                return cli_usage_fail("shard split", "unrecognized option '--%s': the shards take "
                                      "k and tables from DB (and its resemblance)", plan_opts[j]);
    }
    return CLI_EXIT_OK;
}

static int shard_split(int argc, char **argv)
{
    shard_args a = {0};
    nd_shards_options o;
    nd_shards_info m;
    nd_db *src = NULL;
    shard_load l = {.verb = "shard split"};
    int rc;
    if ((rc = refuse_plan_options(argc, argv))) return rc;
    if ((rc = parse_args(&a, argc, argv, "split", split_opts))) return rc;
    if (argc - optind != 2)
        return cli_usage_fail("shard split", "expected a database and a directory");
    if (a.shards == 0) return cli_usage_fail("shard split", "--shards S is required");
    const char *dbpath = argv[optind], *dir = argv[optind + 1];
    unsigned S = (unsigned)a.shards;
    if ((rc = cli_open_db(&src, dbpath, ND_DB_READONLY))) return rc;
    nd_plan_info p;
    nd_fp_options fo;
    nd_db_plan(&p, src);
    nd_db_fp_options(&fo, src);
    if (a.docs == 0) {
        /* The source's planner N, recovered from its expected candidates. */
        double n = p.candidates * (double)(1ull << (p.prefix_min < 63 ? p.prefix_min : 63));
        a.docs = n >= 1 && n < 1e18 ? (uint64_t)n : 100000000;
    }
    /* The manifest only once every shard is loaded and closed. */
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.flags = ND_SHARDS_NO_MANIFEST;
    o.shards = S;
    o.k = p.k;
    o.has_k = 1;
    o.tables = p.tables;
    o.expected_docs = a.docs;
    o.fp = &fo;
    /* a resemblance store's shards are too: foreach_doc hands the sketches */
    o.min_resemblance = nd_db_min_resemblance(src);
    if ((rc = create_store(&l.sh, dir, &o, "split"))) goto cleanup;
    nd_shards_info_get(&m, l.sh);
    l.shards = S;
    if (m.tables != p.tables || m.k != p.k) {
        rc = cli_fail("shard split: shards got plan k=%u t=%u, source has k=%u t=%u", m.k,
                      m.tables, p.k, p.tables);
        goto incomplete;
    }
    uint64_t total = 0;
    nd_db_counts(&total, NULL, src); /* for the progress line only */
    if ((rc = load_start(&l, a.chunk, 0, total))) goto incomplete;
    int nrc = nd_db_foreach_doc(src, split_cb, &l);
    if (l.rc) {
        rc = l.rc;
        goto incomplete;
    }
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "shard split: reading '%s'", dbpath);
        goto incomplete;
    }
    if ((rc = load_commit(&l))) goto incomplete;
    load_free(&l);
    if ((nrc = nd_shards_finish(l.sh)) < 0) {
        rc = cli_fail_nd(nrc, "shard split");
        goto incomplete;
    }
    if (a.json) {
        printf("{\"source\":");
        in_put_json_string(stdout, dbpath, strlen(dbpath));
        printf(",\"path\":");
        in_put_json_string(stdout, dir, strlen(dir));
        printf(",\"documents\":%llu,\"shards\":%u,\"k\":%u,\"tables\":%u",
               (unsigned long long)l.seen, S, m.k, m.tables);
        if (o.min_resemblance > 0) printf(",\"min_resemblance\":%g", o.min_resemblance);
        printf("}\n");
    } else {
        printf("split %s into %s: %llu %s over %u %s (k=%u, %u tables", dbpath, dir,
               (unsigned long long)l.seen, cli_plural(l.seen, "document", "documents"), S,
               cli_plural(S, "shard", "shards"), m.k, m.tables);
        if (o.min_resemblance > 0) printf(", min resemblance %g", o.min_resemblance);
        printf(")\n");
    }
    goto cleanup;
incomplete:
    fprintf(stderr, "neardup: shard split: '%s' is incomplete (no manifest): remove it\n", dir);
cleanup:
    load_free(&l);
    nd_shards_close(l.sh);
    if (src) {
        int crc = cli_close_db(src, dbpath);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    return rc;
}

/* cli_read_docs's pieces: each document to its shard's loader. */
static int import_piece(cli_docs *d, void *payload)
{
    shard_load *l = payload;
    return load_add(l, d->d, d->n) ? l->rc : CLI_EXIT_OK;
}

static int shard_import(int argc, char **argv)
{
    shard_args a = {0};
    nd_shards_options o;
    shard_load l = {.verb = "shard import"};
    nd_fp_options fo;
    cli_docs docs = {0};
    uint64_t read = 0, bad = 0;
    int rc;
    a.fmt = IN_FORMAT_FP;
    a.time = (int64_t)time(NULL);
    if ((rc = parse_args(&a, argc, argv, "import", import_opts))) return rc;
    if (argc - optind < 2)
        return cli_usage_fail("shard import", "expected a directory and at least one INPUT");
    const char *dir = argv[optind];
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.db_flags = ND_DB_NO_BACKGROUND;
    int nrc = nd_shards_open(&l.sh, dir, &o);
    if (nrc < 0) return shards_fail(nrc, "import");
    nd_shards_info m;
    nd_shards_info_get(&m, l.sh);
    l.shards = m.shards;
    nd_db_fp_options(&fo, nd_shards_db(l.sh, 0));
    char **inputs = argv + optind + 1;
    int ninputs = argc - optind - 1;
    cli_signals_defer(); /* the loaders' files must go with them */
    rc = load_start(&l, a.chunk, cli_inputs_size(inputs, ninputs), 0);
    if (rc == CLI_EXIT_OK) {
        /* Pieces of at most a shard's chunk: the loaders copy them. */
        cli_read_opts ro = {.fmt = a.fmt, .fmt_given = a.fmt_given, .in = a.in,
                            .fo = &fo, .html = a.html, .skip_bad = a.skip_bad,
                            .time = a.time,
                            .chunk = cli_load_piece(nd_shards_loader_chunk(l.loader)),
                            .progress = &l.prog};
        if (nd_db_min_resemblance(nd_shards_db(l.sh, 0)) > 0) ro.sign_db = nd_shards_db(l.sh, 0);
        rc = cli_read_docs(&docs, inputs, ninputs, &ro, import_piece, &l, &read, &bad);
    }
    if (rc == CLI_EXIT_OK && cli_interrupted()) rc = CLI_EXIT_INTERRUPTED;
    int late_signal = 0;
    if (rc == CLI_EXIT_OK) { /* the commits run to their end */
        rc = load_commit(&l);
        late_signal = cli_interrupted();
    }
    load_free(&l); /* clears the progress line before the summary */
    if (rc == CLI_EXIT_INTERRUPTED) cli_load_interrupted("shard import");
    if (late_signal) cli_load_late_signal("shard import");
    if (rc == CLI_EXIT_OK && a.json) {
        printf("{\"path\":");
        in_put_json_string(stdout, dir, strlen(dir));
        printf(",\"imported\":%llu,\"bad\":%llu,\"shards\":%u}\n", (unsigned long long)l.seen,
               (unsigned long long)bad, m.shards);
    } else if (rc == CLI_EXIT_OK) {
        printf("imported %llu %s into %s (%u %s), %llu bad\n", (unsigned long long)l.seen,
               cli_plural(l.seen, "document", "documents"), dir, m.shards,
               cli_plural(m.shards, "shard", "shards"), (unsigned long long)bad);
    }
    cli_docs_dispose(&docs);
    nrc = nd_shards_close(l.sh);
    if (nrc < 0 && rc == CLI_EXIT_OK) rc = cli_fail_nd(nrc, "shard import");
    return rc;
}

/* ---- info and which --------------------------------------------------- */

/* The manifest of DIR alone (no shard opened). */
static int open_manifest(nd_shards **out, const char *dir, const char *sub)
{
    nd_shards_options o;
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.flags = ND_SHARDS_MANIFEST_ONLY;
    int rc = nd_shards_open(out, dir, &o);
    return rc < 0 ? shards_fail(rc, sub) : CLI_EXIT_OK;
}

/* The threshold of resemblance shards, from the manifest's "resemblance
 * sketchV;r=R" line (nd_shards_info has no field for it); 0 without. */
static double manifest_resemblance(const nd_shards *sh)
{
    char text[ND_SHARDS_MANIFEST_MAX + 1];
    if (nd_shards_manifest(text, sizeof text, sh) < 0) return 0;
    for (const char *line = text; *line;) {
        unsigned version;
        double r;
        if (sscanf(line, "resemblance sketch%u;r=%lf", &version, &r) == 2) return r;
        const char *nl = strchr(line, '\n');
        if (!nl) break;
        line = nl + 1;
    }
    return 0;
}

static int shard_info(int argc, char **argv)
{
    shard_args a = {0};
    nd_shards *sh = NULL;
    nd_shards_info m;
    int rc = parse_args(&a, argc, argv, "info", json_opts);
    if (rc) return rc;
    if (optind != argc - 1) return cli_usage_fail("shard info", "expected exactly one directory");
    const char *dir = argv[optind];
    if ((rc = open_manifest(&sh, dir, "info"))) return rc;
    nd_shards_info_get(&m, sh);
    double r = manifest_resemblance(sh);
    if (a.json) {
        printf("{\"shards\":%u,\"assign\":\"" ND_SHARDS_ASSIGN_RULE "\",\"k\":%u,\"tables\":%u,"
               "\"docs\":%llu,\"fingerprint\":\"%s\",\"format\":%u,\"fp_version\":%u,",
               m.shards, m.k, m.tables, (unsigned long long)m.expected_docs, m.fingerprint,
               m.format, m.fp_version);
        if (r > 0) printf("\"min_resemblance\":%g,", r);
        printf("\"documents\":[");
    } else {
        printf("shards\t%u\nassign\t" ND_SHARDS_ASSIGN_RULE "\nk\t%u\ntables\t%u\ndocs\t%llu\n"
               "fingerprint\t%s\nformat\t%u\nfp-version\t%u\n",
               m.shards, m.k, m.tables, (unsigned long long)m.expected_docs, m.fingerprint,
               m.format, m.fp_version);
        if (r > 0) printf("min_resemblance\t%g\n", r);
    }
    uint64_t total = 0;
    /* One shard open at a time: a store may have thousands. */
    for (unsigned s = 0; s < m.shards && rc == CLI_EXIT_OK; s++) {
        nd_db *db;
        uint64_t docs = 0;
        const char *path = path_of(sh, s);
        if ((rc = cli_open_db(&db, path, ND_DB_READONLY))) break;
        int nrc = nd_db_counts(&docs, NULL, db);
        if (nrc < 0) rc = cli_fail_nd(nrc, "shard info: counting '%s'", path);
        else if (a.json) printf("%s%llu", s ? "," : "", (unsigned long long)docs);
        else printf("shard-%03u\t%llu\n", s, (unsigned long long)docs);
        total += docs;
        int crc = cli_close_db(db, path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    if (rc == CLI_EXIT_OK) {
        if (a.json) printf("],\"total\":%llu}\n", (unsigned long long)total);
        else printf("total\t%llu\n", (unsigned long long)total);
    }
    nd_shards_close(sh);
    return rc;
}

static int shard_which(int argc, char **argv)
{
    shard_args a = {0};
    nd_shards *sh = NULL;
    int rc = parse_args(&a, argc, argv, "which", json_opts);
    if (rc) return rc;
    if (argc - optind < 2) return cli_usage_fail("shard which", "expected a directory and keys");
    if ((rc = open_manifest(&sh, argv[optind], "which"))) return rc;
    for (int i = optind + 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        unsigned s = nd_shards_place(sh, argv[i], len);
        const char *path = path_of(sh, s);
        if (a.json) {
            printf("{\"key\":");
            in_put_json_string(stdout, argv[i], len);
            printf(",\"shard\":%u,\"path\":", s);
            in_put_json_string(stdout, path, strlen(path));
            printf("}\n");
        } else {
            in_put_field(stdout, argv[i], len);
            printf("\t%u\t%s\n", s, path);
        }
    }
    nd_shards_close(sh);
    return CLI_EXIT_OK;
}

int cmd_shard(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    if (argc < 2 && cli_completing()) { /* `neardup __complete shard` */
        puts("init\nsplit\nimport\ninfo\nwhich");
        return CLI_EXIT_OK;
    }
    if (argc < 2) return cli_usage_fail("shard", "expected a subcommand (init, split, import, info, which)");
    const char *sub = argv[1];
    if (strcmp(sub, "init") == 0) return shard_init(argc - 1, argv + 1);
    if (strcmp(sub, "split") == 0) return shard_split(argc - 1, argv + 1);
    if (strcmp(sub, "import") == 0) return shard_import(argc - 1, argv + 1);
    if (strcmp(sub, "info") == 0) return shard_info(argc - 1, argv + 1);
    if (strcmp(sub, "which") == 0) return shard_which(argc - 1, argv + 1);
    return cli_usage_fail("shard", "unknown subcommand '%s' (init, split, import, info, which)", sub);
}
