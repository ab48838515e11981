/*
 * cmd_query.c — `neardup query DB`: the stored documents within k bits.
 *
 * Queries come as hex fingerprints on the command line, one per line on
 * stdin ("-"), or as a text file fingerprinted with the database's own
 * fingerprint configuration (--text FILE).
 */
#include "cli.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: neardup query DB [--k K] [--limit N] [--first] [--json] [--mmap]\n"
    "                        [--text FILE [--html] | FP... | -]\n"
    "\n"
    "Print every stored document within K bits of each query fingerprint:\n"
    "  QUERYHEX<TAB>MATCHKEY<TAB>MATCHHEX<TAB>DIST   (closest first)\n"
    "  FP          a fingerprint as 16 hex digits\n"
    "  -           read fingerprints from stdin, one per line (HEX16, or\n"
    "              HEX16<TAB>KEY as `fingerprint` prints; gzip or zstd too)\n"
    "  --text FILE fingerprint FILE (\"-\" = stdin) with the database's options;\n"
    "              in a store verifying by resemblance, its near-duplicates\n"
    "              as `add` finds them there (estimated resemblance >= R, by band\n"
    "              keys or within K bits), most resemblant first, each line\n"
    "              ending with <TAB>RES (JSON \"resemblance\")\n"
    "  --html      with --text: the file is HTML\n"
    "  --k K       distance (default: the database's design k; up to 16, exact)\n"
    "  --limit N   at most N matches per query\n"
    "  --first     stop at the first match found\n"
    "  --json      JSON lines {\"query\",\"key\",\"fp\",\"dist\"}\n"
    "  --mmap      read the tables through memory mappings: faster queries on a\n"
    "              large database; the mapped pages count in the process's RSS\n"
    "No match is not an error (exit 0).\n";

typedef struct query_ctx {
    nd_db *db;
    nd_results *res;
    unsigned k;
    nd_query_options qo;
    int json;
} query_ctx;

/* Answer the query fp (with sk: a text's, in a resemblance store). */
static int run_one(query_ctx *q, uint64_t fp, const nd_sketch *sk)
{
    nd_doc d = {"", 0, fp, 0, 0, sk};
    int rc = sk ? nd_db_query_doc(q->res, q->db, &d, q->k, &q->qo)
                : nd_db_query(q->res, q->db, fp, q->k, &q->qo);
    if (rc < 0) return cli_fail_nd(rc, "query %016llx", (unsigned long long)fp);
    for (size_t i = 0; i < nd_results_count(q->res); i++) {
        const nd_match *m = nd_results_get(q->res, i);
        if (q->json) {
            printf("{\"query\":\"%016llx\",\"key\":", (unsigned long long)fp);
            in_put_json_string(stdout, m->key, m->key_len);
            printf(",\"fp\":\"%016llx\",\"dist\":%u", (unsigned long long)m->fp, m->dist);
            if (m->resemblance >= 0) printf(",\"resemblance\":%.3f", m->resemblance);
            printf("}\n");
        } else {
            cli_put_hex(stdout, fp);
            putchar('\t');
            in_put_field(stdout, m->key, m->key_len);
            putchar('\t');
            cli_put_hex(stdout, m->fp);
            printf("\t%u", m->dist);
            if (m->resemblance >= 0) printf("\t%.3f", m->resemblance);
            putchar('\n');
        }
    }
    return CLI_EXIT_OK;
}

/* Fingerprint lines from stdin (the fp format of the readers: HEX16, a
 * key after a TAB ignored; gzip or zstd decompressed). A line that is
 * not one is an error naming it, and when the first line looks like
 * another format the message says so. */
static int run_stdin(query_ctx *q)
{
    /* On a pipe or terminal, each query's answer goes out before the next
     * line is read (the reader returns a line as soon as it is complete). */
    struct stat st;
    int live = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
                                      S_ISCHR(st.st_mode));
    in_reader_opts ro = {.formats = IN_BIT(IN_FORMAT_FP)};
    in_reader *r;
    in_record rec;
    int got, rc = CLI_EXIT_OK;
    if (in_reader_open(&r, IN_FORMAT_FP, "-", &ro) < 0) return cli_fail("%s", in_reader_error(NULL));
    while (rc == CLI_EXIT_OK && (got = in_reader_next(r, &rec)) != 0) {
        if (got < 0) {
            rc = cli_fail("%s", in_reader_error(r));
            break;
        }
        rc = run_one(q, rec.fp, NULL);
        if (live) fflush(stdout);
    }
    in_reader_close(r);
    return rc;
}

int cmd_query(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},     {"limit", required_argument, 0, 'l'},
        {"first", no_argument, 0, '1'},       {"json", no_argument, 0, 'j'},
        {"text", required_argument, 0, 't'},  {"html", no_argument, 0, 'H'},
        {"mmap", no_argument, 0, 'm'},        {0, 0, 0, 0}};
    query_ctx q = {0};
    const char *text_path = NULL;
    int have_k = 0, html = 0, opt, rc;
    unsigned flags = ND_DB_READONLY;
    unsigned long v;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    q.qo = (nd_query_options)ND_QUERY_OPTIONS_INIT;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "query")) != -1) {
        switch (opt) {
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return cli_usage_fail("query", "--k must be 0..%u, got '%s'", ND_MAX_K, optarg);
            q.k = (unsigned)v;
            have_k = 1;
            break;
        case 'l':
            if (cli_parse_uint(optarg, 1, (unsigned long)-1, &v))
                return cli_usage_fail("query", "--limit must be a positive number, got '%s'", optarg);
            q.qo.limit = v;
            break;
        case '1': q.qo.flags |= ND_QUERY_FIRST; break;
        case 'j': q.json = 1; break;
        case 't': text_path = optarg; break;
        case 'H': html = 1; break;
        case 'm': flags |= ND_DB_MMAP; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return cli_usage_fail("query", "missing database path");
    const char *path = argv[optind++];
    if (!text_path && optind >= argc)
        return cli_usage_fail("query", "give fingerprints, '-' for stdin, or --text FILE");
    if (text_path && optind < argc)
        return cli_usage_fail("query", "--text and fingerprint arguments exclude each other");

    /* Check the arguments before opening, so bad input changes nothing. */
    for (int i = optind; i < argc; i++) {
        uint64_t fp;
        const char *why;
        if (strcmp(argv[i], "-") != 0 &&
            in_parse_hex64(argv[i], strlen(argv[i]), &fp, &why))
            return cli_fail("query: argument %d '%s': %s", i - optind + 1, argv[i], why);
    }
    rc = cli_open_db(&q.db, path, flags);
    if (rc) return rc;
    if (!have_k) {
        nd_plan_info p;
        nd_db_plan(&p, q.db);
        q.k = p.k;
    }
    if (nd_results_new(&q.res) < 0) {
        rc = cli_fail_nd(ND_ENOMEM, "query");
        goto cleanup;
    }
    if (text_path) {
        uint64_t fp;
        nd_sketch sk;
        nd_sketch *skp = nd_db_min_resemblance(q.db) > 0 ? &sk : NULL;
        rc = cli_fingerprint_file(&fp, skp, q.db, text_path, html);
        if (rc == CLI_EXIT_OK) rc = run_one(&q, fp, skp);
    } else {
        for (int i = optind; i < argc && rc == CLI_EXIT_OK; i++) {
            if (strcmp(argv[i], "-") == 0) {
                rc = run_stdin(&q);
            } else {
                uint64_t fp;
                const char *why;
                in_parse_hex64(argv[i], strlen(argv[i]), &fp, &why);
                rc = run_one(&q, fp, NULL);
            }
        }
    }
cleanup:
    nd_results_free(q.res);
    {
        int crc = cli_close_db(q.db, path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    return rc;
}
