/*
 * mpi_dedupe.c — `neardup-mpi dedupe INPUT...`: the near-duplicate pairs
 * of a corpus, with the fingerprinting spread over the ranks.
 *
 * Fingerprinting (normalisation, tokens, shingles, simhash and the min-hash
 * sketch) is the cost of a dedupe; the joins are cheap next to it. So
 * every rank parses the input (cheap, and it keeps record numbering
 * identical everywhere without a pass of its own) but signs
 * (nd_dedupe_sign) only the records whose index is its rank modulo the job
 * size; the signatures and keys are gathered at rank 0, which adds them to
 * the library's dedupe in input order and prints its pairs
 * (nd_dedupe_pairs): the same decision, pairs and order as `neardup dedupe
 * --out pairs`, since both are the library's.
 */
#include "mpi_cmds.h"
#include "mpi_comm.h"
#include "dedupe_common.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: neardup-mpi dedupe [--k K] [--format files|jsonl|tsv|warc|fp]\n"
    "                          [--min-resemblance R] [--min-containment C]\n"
    "                          [--features F] [--html] [--skip-bad] [--json]\n"
    "                          [--id-field F] [--text-field F | --html-field F] INPUT...\n"
    "\n"
    "Print every near-duplicate pair of a corpus, as `neardup dedupe --out\n"
    "pairs`: KEY1<TAB>KEY2<TAB>DIST. Each rank fingerprints every size-th\n"
    "document; rank 0 joins (self-join and min-hash banding). Options as for\n"
    "`neardup dedupe` (K default 24, or 3 with fp input or R = 0; R default\n"
    "0.85; C default 0 = off; format default files). Rank 0 keeps keys and\n"
    "sketches in scratch files in $TMPDIR (default /tmp).\n"
    CLI_FIELD_HELP
    CLI_INFER_HELP("a directory is files; else ", "files (a regular file is one\n"
                   "document)")
    "Exit codes: 0 ok, 1 bad usage or input, 2 the job failed.\n";

/* One record as a rank sends it: index, fingerprint (fp input), key
 * length, whether a signature follows, then the key and the signature. */
typedef struct rec_head {
    uint64_t idx, fp;
    uint32_t key_len, has_sig;
} rec_head;

/* Read every input; sign this rank's share into out. */
static int read_share(mpi_buf *out, uint64_t *n_out, nd_dedupe *dd, char **inputs, int ninputs,
                      in_format fmt, const in_reader_opts *ro, int html, int skip_bad)
{
    uint64_t n = 0;
    int rc = 0;
    for (int a = 0; a < ninputs && !rc; a++) {
        in_reader *r;
        in_record rec;
        int got;
        if (in_reader_open(&r, fmt, inputs[a], ro) < 0) {
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
            uint64_t idx = n++;
            if (idx % (uint64_t)mpi_size != (uint64_t)mpi_rank) continue;
            rec_head h = {idx, rec.fp, (uint32_t)rec.key_len, !rec.has_fp};
            nd_signature sig;
            if (!rec.has_fp) {
                int nrc = nd_dedupe_sign(&sig, dd, rec.text, rec.text_len,
                                         html || rec.is_html ? ND_FP_HTML : 0);
                if (nrc < 0) {
                    rc = mpi_note(nrc == ND_ENOMEM ? CLI_EXIT_DB : CLI_EXIT_USAGE,
                                  "%s:%llu: %s: %s", rec.file, (unsigned long long)rec.line,
                                  nd_strerror(nrc), nd_errmsg());
                    break;
                }
            }
            if (mpi_buf_put(out, &h, sizeof h) || mpi_buf_put(out, rec.key, rec.key_len) ||
                (h.has_sig && mpi_buf_put(out, &sig, sizeof sig))) {
                rc = mpi_note(CLI_EXIT_DB, "dedupe: out of memory after %llu documents",
                              (unsigned long long)n);
                break;
            }
        }
        in_reader_close(r);
    }
    *n_out = n;
    return rc;
}

/* Rank 0: the gathered records into the dedupe in input order. Rank r
 * sent the records r, r + size, r + 2 size... in order, so record i is
 * the next one of rank i mod size. */
static int add_all(nd_dedupe *dd, const char *all, const uint64_t *lens, uint64_t n)
{
    uint64_t *at = calloc((size_t)mpi_size, sizeof *at); /* each rank's cursor */
    int rc = 0;
    if (!at) return mpi_note(CLI_EXIT_DB, "dedupe: out of memory");
    for (int r = 1; r < mpi_size; r++) at[r] = at[r - 1] + lens[r - 1];
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t *off = &at[i % (uint64_t)mpi_size];
        rec_head h;
        nd_signature sig;
        memcpy(&h, all + *off, sizeof h);
        const char *key = all + *off + sizeof h;
        *off += sizeof h + h.key_len;
        int nrc;
        if (h.has_sig) {
            memcpy(&sig, all + *off, sizeof sig);
            *off += sizeof sig;
            nrc = nd_dedupe_add_signature(dd, key, h.key_len, &sig, 0);
        } else {
            nrc = nd_dedupe_add_fp(dd, key, h.key_len, h.fp, 0);
        }
        if (nrc < 0)
            rc = mpi_note(nrc == ND_ELIMIT ? CLI_EXIT_USAGE : CLI_EXIT_DB, "dedupe: %s: %s",
                          nd_strerror(nrc), nd_errmsg());
    }
    free(at);
    return rc;
}

int mpi_cmd_dedupe(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},       {"format", required_argument, 0, 'F'},
        {"min-resemblance", required_argument, 0, 'r'},
        {"min-containment", required_argument, 0, 'c'},
        {"features", required_argument, 0, 'f'}, {"html", no_argument, 0, 'H'},
        {"skip-bad", no_argument, 0, 'b'},      {"json", no_argument, 0, 'j'},
        CLI_FIELD_LONGOPTS,                     {0, 0, 0, 0}};
    in_format fmt = IN_FORMAT_FILES;
    in_reader_opts ro = {0};
    int fmt_given = 0;
    const char *why;
    nd_fp_options fo;
    nd_dedupe_options o;
    nd_dedupe *dd = NULL;
    unsigned long k;
    double min_res = ND_DEDUPE_DEFAULT_MIN_RESEMBLANCE;
    int html = 0, skip_bad = 0, json = 0, opt, rc = 0;
    mpi_buf share = {0};
    void *all = NULL;
    uint64_t *lens = NULL, n = 0;
    if (cli_wants_help(argc, argv)) {
        if (mpi_rank == 0) cli_usage(stdout, usage);
        return CLI_EXIT_OK;
    }
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    nd_dedupe_options_init(&o, ND_DEDUPE_OPTIONS_VERSION);
    optind = 1;
    opterr = mpi_rank == 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, 64, &k))
                return mpi_usage_error(usage, "dedupe: --k must be 0..64, got '%s'", optarg);
            o.k = (unsigned)k;
            o.has_k = 1;
            break;
        case 'F':
            if (in_format_parse(optarg, &fmt))
                return mpi_usage_error(usage, "dedupe: --format must be files, jsonl, tsv, "
                                       "warc or fp, got '%s'", optarg);
            fmt_given = 1;
            break;
        case 'r': {
            char *end;
            min_res = strtod(optarg, &end);
            if (*end || end == optarg || !(min_res >= 0 && min_res <= 1))
                return mpi_usage_error(usage, "dedupe: --min-resemblance must be a number in "
                                       "[0, 1], got '%s'", optarg);
            break;
        }
        case 'c': {
            char *end;
            o.min_containment = strtod(optarg, &end);
            if (*end || end == optarg || !(o.min_containment >= 0 && o.min_containment <= 1))
                return mpi_usage_error(usage, "dedupe: --min-containment must be a number in "
                                       "[0, 1] (0 = off), got '%s'", optarg);
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
        default:
            switch (cli_field_option(&ro, opt, optarg, &why)) {
            case 1: break;
            case -1: return mpi_usage_error(usage, "dedupe: %s", why);
            default: return mpi_usage_error(usage, NULL);
            }
        }
    }
    if ((why = cli_fields_check(&ro, fmt_given, fmt))) return mpi_usage_error(usage, "dedupe: %s", why);
    ro.infer = !fmt_given;
    if (optind == argc) return mpi_usage_error(usage, "dedupe: give at least one INPUT");
    /* Without --format the first input's inferred format decides, as in
     * `neardup dedupe`: fingerprints make a dedupe of fingerprints. Every
     * rank opens the same file and infers the same. */
    in_format fmt0 = fmt;
    if (!fmt_given && strcmp(argv[optind], "-") != 0) { /* stdin is read once */
        in_reader *first;
        if (in_reader_open(&first, fmt, argv[optind], &ro) < 0) {
            rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "%s", in_reader_error(NULL))
                               : CLI_EXIT_USAGE;
        } else {
            fmt0 = in_reader_format(first);
            in_reader_close(first);
        }
        if ((rc = mpi_agree(rc))) goto cleanup;
    }
    dedupe_cli_options(&o, min_res, fmt0 == IN_FORMAT_FP);
    o.fp = &fo;
    /* Every rank signs with the same options; bad options fail alike on
     * every rank, so rank 0 alone says so. */
    int nrc = nd_dedupe_new(&dd, &o);
    if (nrc == ND_EINVAL)
        rc = mpi_rank == 0 ? mpi_note(CLI_EXIT_USAGE, "dedupe: %s", nd_errmsg()) : CLI_EXIT_USAGE;
    else if (nrc < 0)
        rc = mpi_note(CLI_EXIT_DB, "dedupe: %s (set TMPDIR)", nd_errmsg());
    if ((rc = mpi_agree(rc))) goto cleanup;

    double t0 = mpi_now();
    mpi_step("fingerprinting", 0);
    rc = read_share(&share, &n, dd, argv + optind, argc - optind, fmt, &ro, html, skip_bad);
    if ((rc = mpi_agree(rc))) goto cleanup;
    double t1 = mpi_now();
    lens = calloc((size_t)mpi_size, sizeof *lens);
    if (!lens || mpi_gather_bytes(&all, lens, share.p, share.len) < 0) {
        rc = mpi_agree(mpi_note(CLI_EXIT_DB, "dedupe: out of memory gathering fingerprints"));
        goto cleanup;
    }
    free(share.p);
    share.p = NULL;
    mpi_step("joining", 0);
    if (mpi_rank == 0) {
        rc = add_all(dd, all, lens, n);
        free(all);
        all = NULL;
        if (!rc) {
            nrc = nd_dedupe_pairs(dd, dedupe_print_pair, &json);
            if (nrc < 0)
                rc = mpi_note(nrc == ND_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_DB, "dedupe: %s: %s",
                              nd_strerror(nrc), nd_errmsg());
        }
        fflush(stdout);
        nd_dedupe_stats st;
        nd_dedupe_stats_get(&st, dd);
        char by_cont[64] = "";
        if (o.min_containment > 0)
            snprintf(by_cont, sizeof by_cont, " (%llu by containment)",
                     (unsigned long long)st.by_containment);
        fprintf(stderr, "neardup-mpi: dedupe: %llu documents, %llu pairs%s; %d ranks; "
                        "fingerprint %.3f s, join %.3f s\n",
                (unsigned long long)n, (unsigned long long)st.pairs, by_cont, mpi_size, t1 - t0,
                mpi_now() - t1);
    }
    rc = mpi_agree(rc);
cleanup:
    free(share.p);
    free(all);
    free(lens);
    nd_dedupe_free(dd);
    return rc;
}
