/*
 * mpi_batch.c — `neardup-mpi batch DIR INPUT`: Manku's batch mode over a
 * sharded store, the patent's coordinator and devices on MPI.
 *
 * Steps (every rank runs them in this order; see mpi_comm.h for how a
 * failure travels):
 *  1. rank 0 reads the manifest and broadcasts it;
 *  2. every rank opens its shards (shard s belongs to rank s % size: the
 *     library's nd_shards_open with part = rank, parts = size, which checks
 *     their plan and fingerprint configuration against the manifest)
 *     -> agreement: a missing shard fails the run here, naming it;
 *  3. rank 0 reads the batch (fingerprinting texts with shard 0's
 *     configuration) and broadcasts fingerprints, keys and scores; with
 *     --chunk N, N documents at a time, steps 3-7 running once per chunk;
 *  4. every rank finds, per document, the closest stored match over its
 *     shards (nd_shards_check: nd_db_batch's merge join, shard by shard)
 *     -> agreement;
 *  5. the per-rank best matches go to rank 0, which keeps, per document,
 *     the smallest (distance, fingerprint, key) over all shards;
 *  6. rank 0 decides the batch in input order exactly as nd_db_batch does on
 *     one database (nd_shards_decide): a document is a duplicate when a
 *     stored match or an earlier *new* document lies within k, the closest
 *     winning (ties: fingerprint, then key);
 *  7. with --add the decisions are broadcast and every rank stores the new
 *     documents whose key hashes to one of its shards (nd_shards_add)
 *     -> agreement; only then does rank 0 print. Nothing is stored unless
 *     every rank passed steps 2-4.
 * The same library calls serve one process holding every shard
 * (nd_shards_batch); here they are spread over the ranks.
 * A store of resemblance shards (its manifest's resemblance line) needs
 * texts: rank 0 signs each (nd_db_sign with shard 0: fingerprint and
 * sketch from one tokenisation) and broadcasts the sketches too; step 5
 * keeps the most resemblant match (then the closest), step 6 decides by
 * resemblance (nd_shards_decide_similar: every earlier document a
 * candidate) and --add stores every document, as nd_db_batch does in a
 * resemblance store. --format fp is refused there.
 * Output is the single-machine `neardup batch`'s: one line per document in
 * input order, `new<TAB>KEY` or `dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST`.
 */
#include "mpi_cmds.h"
#include "mpi_comm.h"
#include "in_reader.h"
#include "in_text.h"

#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: neardup-mpi batch DIR [--add] [--format fp|jsonl|tsv] [--k K] [--chunk N]\n"
    "                         [--html] [--time T] [--skip-bad] [--json]\n"
    "                         [--id-field F] [--text-field F | --html-field F] INPUT...\n"
    "\n"
    "Check a batch of documents against the sharded store DIR (see `neardup\n"
    "shard`) and against each other, on every rank of the MPI job: shard s\n"
    "is read by rank s % size. Prints per document, in input order:\n"
    "  new<TAB>KEY                       no near-duplicate (stored with --add)\n"
    "  dup<TAB>KEY<TAB>MATCHKEY<TAB>DIST closest stored or earlier new document\n"
    "  --add      store the new documents, each in the shard of its key, once\n"
    "             every rank has checked its shards\n"
    "  --format   fp, jsonl or tsv, as for `neardup add`\n"
    CLI_FIELD_HELP
    "  --k K      distance (default: the store's k)\n"
    "  --html     texts are HTML\n"
    "  --time T   last-seen time to record with --add (default now)\n"
    "  --skip-bad skip malformed records (reported on stderr) instead of failing\n"
    "  --json     JSON lines {\"status\",\"key\",\"match\",\"dist\"}\n"
    "  --chunk N  check N documents per batch (default: the whole input); each\n"
    "             chunk is checked, stored with --add and printed before the next\n"
    "             is read, so later chunks see what earlier ones stored\n"
    "The inputs are read in order as one stream (as `neardup batch`).\n"
    CLI_INFER_HELP("", "fp")
    "Exit codes: 0 ok, 1 bad usage or input, 2 a shard failed (nothing stored).\n";

/* The batch as broadcast: one buffer, a header (n, key bytes, last
 * chunk, sketches or not), the 8-byte fields, the sketches (a resemblance
 * store's), keys last. */
typedef struct batch {
    void *buf;
    uint64_t len;
    uint64_t n;
    int last;
    uint64_t *fp;
    double *score;
    uint64_t *koff; /* n + 1 offsets into keys */
    nd_sketch *sketch; /* n, or NULL */
    char *keys;
} batch;

#define BATCH_HEADER 4 /* words */

/* nd_match_order of two matches given by their fields. */
static int match_cmp(unsigned da, uint64_t fa, const char *ka, size_t la, unsigned db,
                     uint64_t fb, const char *kb, size_t lb)
{
    return nd_match_order(&(nd_match){.fp = fa, .dist = da, .key = ka, .key_len = la},
                          &(nd_match){.fp = fb, .dist = db, .key = kb, .key_len = lb});
}

/* Point the batch's arrays into its buffer. */
static void batch_layout(batch *b)
{
    uint64_t *h = b->buf;
    b->n = h[0];
    b->last = h[2] != 0;
    b->fp = h + BATCH_HEADER;
    b->score = (double *)(b->fp + b->n);
    b->koff = (uint64_t *)(b->score + b->n);
    b->sketch = h[3] ? (nd_sketch *)(b->koff + b->n + 1) : NULL;
    b->keys = (char *)(b->koff + b->n + 1) + (h[3] ? b->n * sizeof(nd_sketch) : 0);
}

/* ---- step 3: rank 0 reads the batch -------------------------------------- */


/* Rank 0's reader: the inputs in order, read a chunk at a time. */
typedef struct batch_reader {
    in_format fmt;
    int fmt_given;
    in_reader_opts ro;
    char **inputs;
    int ninputs, next; /* next input to open */
    in_reader *r;
    nd_fp_options fo;
    nd_db *signer; /* a resemblance store's shard 0: texts are signed, or NULL */
    const char *dir; /* the store, and its threshold, for the messages */
    double min_res;
    int html, skip_bad;
    uint64_t bad;
} batch_reader;

/* Read up to max documents (0 = all) into b; header word 2 says whether
 * the inputs are exhausted. */
static int read_batch(batch *b, batch_reader *br, uint64_t max)
{
    mpi_buf fps = {0}, scores = {0}, koff = {0}, keys = {0}, sketches = {0};
    int rc = 0, last = 0;
    uint64_t zero = 0;
    if (mpi_buf_put(&koff, &zero, 8)) goto oom;
    for (;;) {
        in_record rec;
        if (max && fps.len / 8 == max) break;
        if (!br->r) {
            if (br->next == br->ninputs) {
                last = 1;
                break;
            }
            if (in_reader_open(&br->r, br->fmt, br->inputs[br->next++], &br->ro) < 0) {
                rc = mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(NULL));
                goto done;
            }
            if (br->signer && in_reader_format(br->r) == IN_FORMAT_FP) { /* inferred */
                rc = mpi_note(CLI_EXIT_USAGE, "batch: '%s' verifies by resemblance (R=%g): it "
                              "needs texts (--format jsonl or tsv), not fingerprints (%s)",
                              br->dir, br->min_res, br->inputs[br->next - 1]);
                goto done;
            }
        }
        int got = in_reader_next(br->r, &rec);
        if (got == 0) {
            in_reader_close(br->r);
            br->r = NULL;
            continue;
        }
        if (got == -1 && br->skip_bad) {
            fprintf(stderr, "neardup-mpi: %s\n", in_reader_error(br->r));
            br->bad++;
            continue;
        }
        if (got < 0) {
            rc = mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(br->r));
            goto done;
        }
        uint64_t fp = rec.fp;
        if (br->signer) { /* the sketch too, from the same tokenisation */
            nd_signature sig;
            if (rec.has_fp) { /* the message of the single-machine commands */
                rc = mpi_note(CLI_EXIT_USAGE, "%s:%llu: %s", rec.file,
                              (unsigned long long)rec.line, CLI_NEEDS_TEXT);
                goto done;
            }
            int nrc = nd_db_sign(&sig, br->signer, rec.text, rec.text_len,
                                 br->html || rec.is_html ? ND_FP_HTML : 0);
            if (nrc < 0) {
                rc = mpi_note(CLI_EXIT_USAGE, "%s:%llu: %s: %s", rec.file,
                              (unsigned long long)rec.line, nd_strerror(nrc), nd_errmsg());
                goto done;
            }
            fp = sig.fp;
            if (mpi_buf_put(&sketches, &sig.sketch, sizeof sig.sketch)) goto oom;
        } else if (!rec.has_fp) {
            nd_fp_options o = br->fo;
            if (br->html || rec.is_html) o.flags |= ND_FP_HTML;
            int nrc = nd_fingerprint(&fp, rec.text, rec.text_len, &o);
            if (nrc < 0) {
                rc = mpi_note(CLI_EXIT_USAGE, "%s:%llu: fingerprint: %s: %s", rec.file,
                              (unsigned long long)rec.line, nd_strerror(nrc), nd_errmsg());
                goto done;
            }
        }
        double score = rec.has_score ? rec.score : 0.0;
        uint64_t end = keys.len + rec.key_len;
        if (mpi_buf_put(&fps, &fp, 8) || mpi_buf_put(&scores, &score, 8) ||
            mpi_buf_put(&keys, rec.key, rec.key_len) || mpi_buf_put(&koff, &end, 8))
            goto oom;
    }
    uint64_t n = fps.len / 8;
    b->len = 8 * BATCH_HEADER + fps.len + scores.len + koff.len + sketches.len + keys.len;
    b->buf = malloc(b->len);
    if (!b->buf) goto oom;
    uint64_t *h = b->buf;
    h[0] = n;
    h[1] = keys.len;
    h[2] = (uint64_t)last;
    h[3] = br->signer != NULL;
    batch_layout(b);
    if (n) {
        memcpy(b->fp, fps.p, fps.len);
        memcpy(b->score, scores.p, scores.len);
        if (b->sketch) memcpy(b->sketch, sketches.p, sketches.len);
    }
    memcpy(b->koff, koff.p, koff.len);
    if (keys.len) memcpy(b->keys, keys.p, keys.len);
    goto done;
oom:
    rc = mpi_note(CLI_EXIT_DB, "batch: out of memory reading the batch");
done:
    free(fps.p);
    free(scores.p);
    free(koff.p);
    free(keys.p);
    free(sketches.p);
    return rc;
}

/* ---- step 5: the closest over all ranks ------------------------------------ */

/* This rank's answers as records: u64 index, u64 fp, u32 dist, u32
 * key_len, f64 resemblance, key (documents with a stored match only). */
static int pack_items(mpi_buf *out, const nd_batch_item *items, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        const nd_batch_item *it = &items[i];
        if (!it->dup) continue;
        uint32_t d = it->dist, kl = (uint32_t)it->match_key_len;
        if (mpi_buf_put(out, &i, 8) || mpi_buf_put(out, &it->match_fp, 8) ||
            mpi_buf_put(out, &d, 4) || mpi_buf_put(out, &kl, 4) ||
            mpi_buf_put(out, &it->resemblance, 8) ||
            mpi_buf_put(out, it->match_key, it->match_key_len))
            return -1;
    }
    return 0;
}

/* Rank 0: per document, the best of all ranks' records (keys point
 * into all): the most resemblant (a resemblance store; else all are -1),
 * then the closest, as stored matches for nd_shards_decide(_similar). */
static void merge_items(nd_batch_item *best, const char *all, uint64_t total, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) best[i] = (nd_batch_item){.resemblance = -1};
    for (uint64_t off = 0; off + 32 <= total;) {
        uint64_t i, fp;
        uint32_t d, kl;
        double res;
        memcpy(&i, all + off, 8);
        memcpy(&fp, all + off + 8, 8);
        memcpy(&d, all + off + 16, 4);
        memcpy(&kl, all + off + 20, 4);
        memcpy(&res, all + off + 24, 8);
        const char *key = all + off + 32;
        nd_batch_item *b = &best[i];
        if (!b->dup || res > b->resemblance ||
            (res == b->resemblance && match_cmp(d, fp, key, kl, b->dist, b->match_fp,
                                                b->match_key, b->match_key_len) < 0))
            *b = (nd_batch_item){1, d, fp, ND_BATCH_STORED, key, kl, res};
        off += 32 + kl;
    }
}

/* ---- step 7: what every rank stores ---------------------------------------- */

/* The decisions travel as one byte a document: 1 new (store it), 2 its
 * stored match has its own key (refresh its time), 0 nothing. */
static uint8_t action_of(const nd_batch_item *it, const nd_doc *d)
{
    if (!it->dup) return 1;
    return it->match_index == ND_BATCH_STORED && it->match_key_len == d->key_len &&
           memcmp(it->match_key, d->key, d->key_len) == 0 ? 2 : 0;
}

/* Back to items nd_shards_add reads the same way. */
static void items_of(nd_batch_item *out, const uint8_t *action, const nd_doc *docs, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        out[i] = action[i] == 1 ? (nd_batch_item){0}
                 : action[i] == 2 ? (nd_batch_item){1, 0, docs[i].fp, ND_BATCH_STORED,
                                                    docs[i].key, docs[i].key_len}
                                  : (nd_batch_item){1, 0, 0, 0, NULL, 0};
}

/* ---- the command ---------------------------------------------------------- */

/* What every chunk of a run shares. */
typedef struct run_ctx {
    const char *dir;
    nd_shards *sh;
    nd_shards_info man;
    double r; /* rank 0: the shards' resemblance threshold; 0: fingerprint only */
    unsigned k;
    int add, json;
    int64_t now;
    uint64_t docs, nnew;
    double t_bcast, t_check, t_reduce, t_decide, t_add;
} run_ctx;

/* Steps 4 to 7 and the output for one broadcast chunk b. Every rank
 * returns the same exit code. */
static int run_chunk(run_ctx *c, const batch *b)
{
    nd_doc *docs = NULL;
    nd_batch_item *items = NULL; /* this rank's answers, then rank 0's decisions */
    nd_results *keys = NULL;
    uint8_t *action = NULL;
    void *gathered = NULL;
    uint64_t *lens = NULL, n = b->n;
    mpi_buf packed = {0};
    int rc = 0, nrc;
    double t = mpi_now(), t1;

    /* 4. Stored matches on this rank's shards. */
    mpi_step("checking", 0);
    docs = malloc((n ? n : 1) * sizeof *docs);
    items = malloc((n ? n : 1) * sizeof *items);
    action = calloc(n ? n : 1, 1);
    if (!docs || !items || !action || nd_results_new(&keys) < 0) {
        rc = mpi_note(CLI_EXIT_DB, "batch: out of memory for %llu documents",
                      (unsigned long long)n);
    } else {
        for (uint64_t i = 0; i < n; i++)
            docs[i] = (nd_doc){b->keys + b->koff[i], b->koff[i + 1] - b->koff[i], b->fp[i],
                               b->score[i], c->now, b->sketch ? &b->sketch[i] : NULL};
        if ((nrc = nd_shards_check(items, keys, c->sh, docs, n, c->k)) < 0)
            rc = mpi_note(CLI_EXIT_DB, "batch: %s: %s", nd_strerror(nrc), nd_errmsg());
        else if (pack_items(&packed, items, n))
            rc = mpi_note(CLI_EXIT_DB, "batch: out of memory packing matches");
    }
    if ((rc = mpi_agree(rc))) goto cleanup;
    t1 = mpi_now();
    c->t_check += t1 - t;
    t = t1;

    /* 5. Reduce to rank 0. */
    lens = calloc((size_t)mpi_size, sizeof *lens);
    if (mpi_gather_bytes(&gathered, lens, packed.p, packed.len) < 0) {
        rc = mpi_agree(mpi_note(CLI_EXIT_DB, "batch: out of memory gathering matches"));
        goto cleanup;
    }
    if (mpi_rank == 0) {
        uint64_t total = 0;
        for (int r = 0; r < mpi_size; r++) total += lens[r];
        merge_items(items, gathered, total, n);
        t1 = mpi_now();
        c->t_reduce += t1 - t;
        t = t1;
        /* 6. Decide in input order. */
        nrc = c->r > 0 ? nd_shards_decide_similar(items, docs, n, c->k, c->r)
                       : nd_shards_decide(items, docs, n, c->k);
        if (nrc < 0)
            rc = mpi_note(nrc == ND_ENOMEM ? CLI_EXIT_DB : CLI_EXIT_USAGE,
                          "batch: pairs within the batch: %s: %s", nd_strerror(nrc), nd_errmsg());
        for (uint64_t i = 0; i < n && !rc; i++) action[i] = action_of(&items[i], &docs[i]);
        t1 = mpi_now();
        c->t_decide += t1 - t;
        t = t1;
    }
    if ((rc = mpi_agree(rc))) goto cleanup;

    /* 7. Store, only now that every rank has reported. */
    if (c->add) {
        nd_batch_item *todo = mpi_rank == 0 ? NULL : items; /* rank 0 keeps its decisions */
        mpi_step("adding", 1);
        for (uint64_t off = 0; off < n; off += 1u << 30)
            MPI_Bcast(action + off, (int)(n - off < (1u << 30) ? n - off : 1u << 30), MPI_BYTE, 0,
                      MPI_COMM_WORLD);
        if (!todo && !(todo = malloc((n ? n : 1) * sizeof *todo))) {
            rc = mpi_note(CLI_EXIT_DB, "batch: out of memory");
        } else {
            items_of(todo, action, docs, n);
            if ((nrc = nd_shards_add(c->sh, docs, todo, n)) < 0)
                rc = mpi_note(CLI_EXIT_DB, "batch: %s: %s", nd_strerror(nrc), nd_errmsg());
        }
        if (todo != items) free(todo);
        if ((rc = mpi_agree(rc))) {
            if (mpi_rank == 0)
                fprintf(stderr, "neardup-mpi: batch: storing failed on the shard named above; "
                                "the other shards hold their new documents of this chunk\n");
            goto cleanup;
        }
        t1 = mpi_now();
        c->t_add += t1 - t;
        mpi_step("between chunks", 0);
    }
    if (mpi_rank == 0) {
        for (uint64_t i = 0; i < n; i++) {
            const nd_batch_item *it = &items[i];
            cli_print_decision(stdout, c->json, docs[i].key, docs[i].key_len, it->dup,
                               it->match_key, it->match_key_len, it->dist, it->resemblance);
            c->nnew += !it->dup;
        }
        fflush(stdout);
    }
    c->docs += n;
cleanup:
    free(docs);
    free(items);
    nd_results_free(keys);
    free(action);
    free(packed.p);
    free(gathered);
    free(lens);
    return rc;
}

int mpi_cmd_batch(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"add", no_argument, 0, 'a'},  {"format", required_argument, 0, 'f'},
        {"k", required_argument, 0, 'k'}, {"html", no_argument, 0, 'H'},
        {"time", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"skip-bad", no_argument, 0, 'b'}, {"chunk", required_argument, 0, 'c'},
        CLI_FIELD_LONGOPTS,                {0, 0, 0, 0}};
    const char *why;
    run_ctx c = {0};
    batch_reader br = {0};
    int have_k = 0, opt, rc = 0;
    unsigned long v;
    uint64_t chunk = 0, chunks = 0;
    double t0 = mpi_now(), t;

    if (cli_wants_help(argc, argv)) {
        if (mpi_rank == 0) cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    br.fmt = IN_FORMAT_FP;
    c.now = (int64_t)time(NULL);
    optind = 1;
    opterr = mpi_rank == 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a': c.add = 1; break;
        case 'f':
            if (in_format_parse(optarg, &br.fmt) || br.fmt == IN_FORMAT_FILES ||
                br.fmt == IN_FORMAT_WARC)
                return mpi_usage_error(usage, "batch: --format must be fp, jsonl or tsv, got '%s'",
                                       optarg);
            br.fmt_given = 1;
            break;
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return mpi_usage_error(usage, "batch: --k must be 0..%u, got '%s'", ND_MAX_K,
                                       optarg);
            c.k = (unsigned)v;
            have_k = 1;
            break;
        case 'H': br.html = 1; break;
        case 't':
            if (in_parse_time(optarg, &c.now))
                return mpi_usage_error(usage, "batch: --time must be seconds since the epoch, "
                                       "got '%s'", optarg);
            break;
        case 'j': c.json = 1; break;
        case 'b': br.skip_bad = 1; break;
        case 'c':
            if (cli_parse_count(optarg, &chunk) || chunk == 0 || chunk > 1000000000)
                return mpi_usage_error(usage, "batch: --chunk must be 1..1e9, got '%s'", optarg);
            break;
        default:
            switch (cli_field_option(&br.ro, opt, optarg, &why)) {
            case 1: break;
            case -1: return mpi_usage_error(usage, "batch: %s", why);
            default: return mpi_usage_error(usage, NULL);
            }
        }
    }
    if ((why = cli_fields_check(&br.ro, br.fmt_given, br.fmt)))
        return mpi_usage_error(usage, "batch: %s", why);
    br.ro.infer = !br.fmt_given;
    br.ro.formats = IN_BIT(IN_FORMAT_FP) | IN_BIT(IN_FORMAT_JSONL) | IN_BIT(IN_FORMAT_TSV);
    if (argc - optind < 2)
        return mpi_usage_error(usage, "batch: expected a sharded store DIR and an INPUT");
    c.dir = argv[optind];
    br.inputs = argv + optind + 1;
    br.ninputs = argc - optind - 1;

    /* 1. The manifest, read once and broadcast. */
    char text[ND_SHARDS_MANIFEST_MAX + 1] = "";
    void *buf = text;
    uint64_t len = 0;
    if (mpi_rank == 0) {
        nd_shards *man = NULL;
        nd_shards_options mo;
        nd_shards_options_init(&mo, ND_SHARDS_OPTIONS_VERSION);
        mo.flags = ND_SHARDS_MANIFEST_ONLY;
        int nrc = nd_shards_open(&man, c.dir, &mo);
        if (nrc == ND_OK) nrc = nd_shards_manifest(text, sizeof text, man);
        if (nrc < 0) rc = mpi_note(CLI_EXIT_USAGE, "batch: %s", nd_errmsg());
        nd_shards_close(man);
        len = strlen(text) + 1;
    }
    if ((rc = mpi_agree(rc))) goto cleanup;
    if (mpi_bcast_bytes(&buf, &len) < 0) {
        rc = CLI_EXIT_DB;
        goto cleanup;
    }

    /* 2. Every rank opens its shards, checked against the manifest. */
    mpi_step("opening", 0);
    {
        nd_shards_options o;
        nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
        o.db_flags = c.add ? 0 : ND_DB_READONLY;
        o.part = (unsigned)mpi_rank;
        o.parts = (unsigned)mpi_size;
        o.manifest = buf;
        o.threads = cli_batch_threads(); /* the library reads no environment */
        int nrc = nd_shards_open(&c.sh, c.dir, &o);
        if (nrc < 0) rc = mpi_note(CLI_EXIT_DB, "batch: %s", nd_errmsg());
        else nd_shards_info_get(&c.man, c.sh);
        if (buf != text) free(buf);
    }
    if (c.sh) mpi_step_shards(c.dir, c.man.shards);
    if ((rc = mpi_agree(rc))) {
        if (mpi_rank == 0)
            fprintf(stderr, "neardup-mpi: batch: a shard of '%s' is unavailable: run failed, "
                            "nothing %s\n", c.dir, c.add ? "stored" : "checked");
        goto cleanup;
    }
    if (!have_k) c.k = c.man.k;
    if (mpi_rank == 0) {
        nd_db *db0 = nd_shards_db(c.sh, 0);
        nd_db_fp_options(&br.fo, db0);
        c.r = nd_db_min_resemblance(db0);
        if (c.r > 0) br.signer = db0;
        br.dir = c.dir;
        br.min_res = c.r;
        if (c.r > 0 && br.fmt_given && br.fmt == IN_FORMAT_FP)
            rc = mpi_note(CLI_EXIT_USAGE, "batch: '%s' verifies by resemblance (R=%g): it needs "
                          "texts (--format jsonl or tsv), not fingerprints", c.dir, c.r);
    }
    if ((rc = mpi_agree(rc))) goto cleanup;

    /* 3. Rank 0 reads a chunk (by default the whole input); everyone gets
     * it; steps 4-7 follow; until the inputs end. */
    for (;;) {
        batch b = {0};
        t = mpi_now();
        if (mpi_rank == 0) rc = read_batch(&b, &br, chunk);
        if ((rc = mpi_agree(rc))) {
            free(b.buf);
            break;
        }
        if (mpi_bcast_bytes(&b.buf, &b.len) < 0) {
            rc = mpi_agree(mpi_note(CLI_EXIT_DB, "batch: out of memory receiving the batch"));
            free(b.buf);
            break;
        }
        batch_layout(&b);
        c.t_bcast += mpi_now() - t;
        if (b.n) {
            rc = run_chunk(&c, &b);
            chunks++;
        }
        int last = b.last;
        free(b.buf);
        if (rc || last) break;
    }
    mpi_step("closing", c.add);
    if (mpi_rank == 0 && !rc) {
        if (br.bad)
            fprintf(stderr, "neardup-mpi: batch: %llu bad records skipped\n",
                    (unsigned long long)br.bad);
        fprintf(stderr,
                "neardup-mpi: batch: %llu documents, %llu new, %llu dup; %d ranks, %u shards, "
                "%llu chunks; read %.3f s, check %.3f s, reduce %.3f s, decide %.3f s, add "
                "%.3f s, total %.3f s\n",
                (unsigned long long)c.docs, (unsigned long long)c.nnew,
                (unsigned long long)(c.docs - c.nnew), mpi_size, c.man.shards,
                (unsigned long long)chunks, c.t_bcast, c.t_check, c.t_reduce, c.t_decide,
                c.t_add, mpi_now() - t0);
    }

cleanup:
    in_reader_close(br.r);
    int crc = nd_shards_close(c.sh);
    if (crc < 0 && rc == 0) {
        fprintf(stderr, "neardup-mpi: rank %d: %s: %s\n", mpi_rank, nd_strerror(crc), nd_errmsg());
        rc = CLI_EXIT_DB;
    }
    return rc;
}
