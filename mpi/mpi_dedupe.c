/*
 * mpi_dedupe.c — `neardup-mpi dedupe INPUT...`: the near-duplicate pairs
 * of a corpus, with the fingerprinting spread over the ranks.
 *
 * Fingerprinting (normalisation, tokens, shingles, simhash and the min-hash
 * sketch) is the cost of a dedupe; the self-join of 64-bit fingerprints is
 * cheap next to it. So every rank parses the input (cheap, and it keeps
 * record numbering identical everywhere without a pass of its own) but
 * fingerprints only the records whose index is its rank modulo the job
 * size; the fingerprints, keys and sketches are gathered at rank 0, which
 * puts them back in input order and finds the pairs exactly as `neardup
 * dedupe --out pairs` does (nd_selfjoin within min(k, 8) bits, then
 * min-hash banding up to k, each candidate confirmed by sketch
 * resemblance), so the output is the same pairs, in the same order.
 */
#include "mpi_cmds.h"
#include "mpi_comm.h"
#include "dedupe_band.h"
#include "dedupe_feat.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: neardup-mpi dedupe [--k K] [--format files|jsonl|tsv|warc|fp]\n"
    "                          [--min-resemblance R] [--features F] [--html]\n"
    "                          [--skip-bad] [--json] INPUT...\n"
    "\n"
    "Print every near-duplicate pair of a corpus, as `neardup dedupe --out\n"
    "pairs`: KEY1<TAB>KEY2<TAB>DIST. Each rank fingerprints every size-th\n"
    "document; rank 0 joins (self-join and min-hash banding). Options as for\n"
    "`neardup dedupe` (K default 24, or 3 with fp input or R = 0; R default\n"
    "0.85; format default files).\n"
    "Exit codes: 0 ok, 1 bad usage or input, 2 the job failed.\n";


/* Rank 0's view of the corpus, in input order. */
typedef struct corpus {
    uint64_t n;
    uint64_t *fp;
    const char **key;
    uint32_t *key_len;
    nd_sketch *sk; /* NULL when no document had text */
    double min_res;
    unsigned k, join_k;
    int json;
    uint64_t reported;
} corpus;

static void put_key(const corpus *c, size_t i, int json)
{
    if (json) cli_put_json_string(stdout, c->key[i], c->key_len[i]);
    else cli_put_field(stdout, c->key[i], c->key_len[i]);
}

static double resemblance(const corpus *c, size_t i, size_t j)
{
    return c->sk ? nd_sketch_resemblance(&c->sk[i], &c->sk[j]) : 1.0;
}

/* Pairs stream out as found, as `neardup dedupe --out pairs` prints them. */
static int emit(corpus *c, size_t i, size_t j, unsigned dist)
{
    c->reported++;
    if (c->json) {
        printf("{\"a\":");
        put_key(c, i, 1);
        printf(",\"b\":");
        put_key(c, j, 1);
        printf(",\"dist\":%u", dist);
        if (c->sk) printf(",\"resemblance\":%.3f", resemblance(c, i, j));
        printf("}\n");
    } else {
        put_key(c, i, 0);
        putchar('\t');
        put_key(c, j, 0);
        printf("\t%u\n", dist);
    }
    return 0;
}

static int join_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    corpus *c = payload;
    if (c->min_res > 0 && resemblance(c, i, j) < c->min_res) return 0;
    return emit(c, i, j, dist);
}

/* Banding: the same candidates, in the same order, as cli/cmd_dedupe.c
 * (one function, cli/dedupe_band.c). */
enum { MAX_JOIN_K = ND_MAX_PLAN_K };

static int band_cb(size_t i, size_t j, unsigned dist, void *payload)
{
    return emit(payload, i, j, dist);
}

/* Read every input; fingerprint this rank's share into out:
 * u64 index, u64 fp, u32 key_len, u32 has_sketch, key, [sketch]. */
static int read_share(mpi_buf *out, uint64_t *n_out, int *has_text, char **inputs, int ninputs,
                      in_format fmt, const nd_fp_options *fo, int html, int skip_bad)
{
    uint64_t n = 0;
    int rc = 0;
    dedupe_feat ac = {0}; /* simhash and sketch only: no feature count */
    for (int a = 0; a < ninputs && !rc; a++) {
        in_reader *r;
        in_record rec;
        int got;
        if (in_reader_open(&r, fmt, inputs[a], NULL) < 0) {
            rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(NULL))
                               : CLI_EXIT_USAGE;
            break;
        }
        while ((got = in_reader_next(r, &rec)) != 0) {
            if (got == -1 && skip_bad) {
                if (mpi_rank == 0) fprintf(stderr, "neardup-mpi: %s\n", in_reader_error(r));
                continue;
            }
            if (got < 0) {
                rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(r))
                                   : CLI_EXIT_USAGE;
                break;
            }
            if (!rec.has_fp) *has_text = 1;
            uint64_t idx = n++;
            if (idx % (uint64_t)mpi_size != (uint64_t)mpi_rank) continue;
            uint64_t fp = rec.fp;
            nd_sketch sk;
            uint32_t kl = (uint32_t)rec.key_len, hs = !rec.has_fp;
            if (!rec.has_fp) {
                nd_fp_options o = *fo;
                uint32_t distinct;
                if (html || rec.is_html) o.flags |= ND_FP_HTML;
                dedupe_feat_begin(&ac);
                int nrc = nd_features(rec.text, rec.text_len, &o, dedupe_feat_add, &ac);
                if (nrc < 0) {
                    rc = mpi_note(nrc == ND_ENOMEM ? CLI_EXIT_DB : CLI_EXIT_USAGE,
                                  "%s:%llu: %s: %s", rec.file, (unsigned long long)rec.line,
                                  nd_strerror(nrc), nd_errmsg());
                    break;
                }
                fp = dedupe_feat_end(&ac, &sk, &distinct);
            }
            if (mpi_buf_put(out, &idx, 8) || mpi_buf_put(out, &fp, 8) ||
                mpi_buf_put(out, &kl, 4) || mpi_buf_put(out, &hs, 4) ||
                mpi_buf_put(out, rec.key, rec.key_len) ||
                (hs && mpi_buf_put(out, &sk, sizeof sk))) {
                rc = mpi_note(CLI_EXIT_DB, "dedupe: out of memory after %llu documents",
                              (unsigned long long)n);
                break;
            }
        }
        in_reader_close(r);
    }
    dedupe_feat_dispose(&ac);
    *n_out = n;
    return rc;
}

int mpi_cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    in_format fmt = IN_FORMAT_FILES;
    nd_fp_options fo;
    unsigned long k = 24;
    int html = 0, skip_bad = 0, json = 0, opt, rc = 0, has_text = 0, k_given = 0;
    corpus c = {0};
    mpi_buf share = {0};
    void *all = NULL;
    uint64_t *lens = NULL, n = 0;
    c.min_res = 0.85;
    if (cli_wants_help(argc, argv)) {
        if (mpi_rank == 0) cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    opterr = mpi_rank == 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, 64, &k))
                return mpi_usage_error(usage, "dedupe: --k must be 0..64, got '%s'", optarg);
            k_given = 1;
            break;
        case 'F':
            if (in_format_parse(optarg, &fmt))
                return mpi_usage_error(usage, "dedupe: --format must be files, jsonl, tsv, "
                                       "warc or fp, got '%s'", optarg);
            break;
        case 'r': {
            char *end;
            c.min_res = strtod(optarg, &end);
            if (*end || end == optarg || !(c.min_res >= 0 && c.min_res <= 1))
                return mpi_usage_error(usage, "dedupe: --min-resemblance must be a number in "
                                       "[0, 1], got '%s'", optarg);
            break;
        }
        case 'f':
            if (cli_parse_features(optarg, &fo))
                return mpi_usage_error(usage, "dedupe: --features must be words, shingles:N "
                                       "or chars:N, got '%s'", optarg);
            break;
        case 'H': html = 1; break;
        case 'b': skip_bad = 1; break;
        case 'j': json = 1; break;
        default: return mpi_usage_error(usage, NULL);
        }
    }
    if (optind == argc) return mpi_usage_error(usage, "dedupe: give at least one INPUT");
    /* Simhash only (R = 0, or fp input): the self-join must cover k. */
    if ((c.min_res == 0 || fmt == IN_FORMAT_FP) && k > MAX_JOIN_K) {
        if (k_given)
            return mpi_usage_error(usage, "dedupe: --k above %u needs texts and "
                                   "--min-resemblance > 0", MAX_JOIN_K);
        k = 3;
    }
    c.k = (unsigned)k;
    c.join_k = c.k < MAX_JOIN_K ? c.k : MAX_JOIN_K;
    c.json = json;

    double t0 = mpi_now();
    mpi_step("fingerprinting", 0);
    rc = read_share(&share, &n, &has_text, argv + optind, argc - optind, fmt, &fo, html,
                    skip_bad);
    if (!rc && n >= UINT32_MAX)
        rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "dedupe: more than %u documents",
                                      UINT32_MAX - 1)
                           : CLI_EXIT_USAGE;
    if (!rc && !has_text && c.k > MAX_JOIN_K)
        rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "dedupe: --k above %u needs texts (no "
                                      "document had one)", MAX_JOIN_K)
                           : CLI_EXIT_USAGE;
    if ((rc = mpi_agree(rc))) goto cleanup;
    double t1 = mpi_now();
    lens = calloc((size_t)mpi_size, sizeof *lens);
    if (mpi_gather_bytes(&all, lens, share.p, share.len) < 0) {
        rc = mpi_agree(mpi_note(CLI_EXIT_DB, "dedupe: out of memory gathering fingerprints"));
        goto cleanup;
    }
    mpi_step("joining", 0);
    if (mpi_rank == 0) {
        uint64_t total = 0;
        for (int r = 0; r < mpi_size; r++) total += lens[r];
        c.n = n;
        c.fp = malloc((n ? n : 1) * sizeof *c.fp);
        c.key = malloc((n ? n : 1) * sizeof *c.key);
        c.key_len = malloc((n ? n : 1) * sizeof *c.key_len);
        if (has_text) c.sk = calloc(n ? n : 1, sizeof *c.sk);
        if (!c.fp || !c.key || !c.key_len || (has_text && !c.sk)) {
            rc = mpi_note(CLI_EXIT_DB, "dedupe: out of memory for %llu documents",
                          (unsigned long long)n);
        } else {
            const char *p = all;
            for (uint64_t off = 0; off < total;) {
                uint64_t idx, fp;
                uint32_t kl, hs;
                memcpy(&idx, p + off, 8);
                memcpy(&fp, p + off + 8, 8);
                memcpy(&kl, p + off + 16, 4);
                memcpy(&hs, p + off + 20, 4);
                c.fp[idx] = fp;
                c.key[idx] = p + off + 24;
                c.key_len[idx] = kl;
                off += 24 + kl;
                if (hs) {
                    memcpy(&c.sk[idx], p + off, sizeof c.sk[idx]);
                    off += sizeof c.sk[idx];
                }
            }
            if (n > 1) {
                int nrc = nd_selfjoin(c.fp, n, c.join_k, join_cb, &c);
                if (nrc < 0)
                    rc = mpi_note(CLI_EXIT_DB, "dedupe: self-join: %s: %s", nd_strerror(nrc),
                                  nd_errmsg());
                else if (c.sk && c.min_res > 0 &&
                         dedupe_band_join(n, NULL, c.fp, c.sk, c.join_k, c.k, c.min_res, band_cb,
                                          &c) < 0)
                    rc = mpi_note(CLI_EXIT_DB, "dedupe: out of memory in the band join");
            }
            fflush(stdout);
            fprintf(stderr, "neardup-mpi: dedupe: %llu documents, %llu pairs; %d ranks; "
                            "fingerprint %.3f s, join %.3f s\n",
                    (unsigned long long)n, (unsigned long long)c.reported, mpi_size, t1 - t0,
                    mpi_now() - t1);
        }
    }
    rc = mpi_agree(rc);
cleanup:
    free(share.p);
    free(all);
    free(lens);
    free(c.fp);
    free(c.key);
    free(c.key_len);
    free(c.sk);
    return rc;
}
