/*
 * cmd_cluster.c — `neardup cluster`: collapse near-duplicate search results
 * per query (query-biased clustering, Pi et al.; the rule is nd_cluster's).
 *
 * Input lines are QUERY, RANK, DOCKEY and optionally HEX16 and SCORE. The
 * whole input is read first: query names become ids in order of first
 * appearance (that order is the popularity order), document keys become
 * indices into one table (so a document shared by several queries is one
 * document), and the items are grouped by query with a stable sort, since
 * nd_cluster wants each query's items contiguous. A missing fingerprint or
 * score is looked up once per document in --db. Deletions (--apply) only
 * start once every query is decided, so a failure half-way never leaves the
 * database changed by a partial decision.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: neardup cluster [--db DB] [--k K | --k-tiers TIERS] [--top M]\n"
    "                       [--apply] [--json] RESULTS...\n"
    "\n"
    "Collapse near-duplicate search results, the most popular queries first\n"
    "(query-biased clustering). RESULTS files (- for stdin) hold lines\n"
    "  QUERY<TAB>RANK<TAB>DOCKEY[<TAB>HEX16][<TAB>SCORE]\n"
    "(RANK 1 = top; with four fields, a 16-character fourth field is the\n"
    "fingerprint, anything else the score; an empty HEX16 field means none).\n"
    "Queries are taken in order of first appearance (most popular first).\n"
    "Per query: results removed by an earlier query are dropped; the M\n"
    "best-ranked remaining are ordered by score (ties: better rank); the\n"
    "first unassigned keeps every unassigned one within K bits of it, which\n"
    "is removed, and stays removed for every later query.\n"
    "A missing fingerprint is read from --db (an error if not stored there);\n"
    "a missing score from --db if stored, else 0.\n"
    "Prints removed<TAB>QUERY<TAB>DOCKEY<TAB>KEPTKEY<TAB>DIST per removal and\n"
    "a summary on stderr.\n"
    "  --db DB          database for fingerprints and scores (read-only\n"
    "                   unless --apply)\n"
    "  --k K            distance for every query, 0..64 (default 3)\n"
    "  --k-tiers TIERS  distance by query popularity rank, e.g.\n"
    "                   1-100:3,101-1000:2,rest:1 (ranges from 1, contiguous;\n"
    "                   without rest:K the last range's K applies beyond it)\n"
    "  --top M          results per query considered (default 10; 0 = all)\n"
    "  --apply          delete the removed documents from --db afterwards\n"
    "  --json           one JSON object per removal\n"
    "";

/* ---- a string -> id table (open addressing, FNV-1a) ---- */

typedef struct cl_name {
    char *s;
    size_t len;
} cl_name;

typedef struct cl_names {
    cl_name *v;       /* by id */
    size_t n, cap;
    uint32_t *slots;  /* id + 1, 0 = empty */
    size_t n_slots;   /* power of two */
} cl_names;

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* The id of s (added if new) -> 0; -1 out of memory. */
static int names_id(cl_names *t, const char *s, size_t len, uint32_t *out)
{
    if (2 * (t->n + 1) > t->n_slots) {
        size_t ns = t->n_slots ? 2 * t->n_slots : 64;
        uint32_t *sl = calloc(ns, sizeof *sl);
        if (!sl) return -1;
        for (size_t i = 0; i < t->n; i++) {
            size_t p = fnv1a(t->v[i].s, t->v[i].len) & (ns - 1);
            while (sl[p]) p = (p + 1) & (ns - 1);
            sl[p] = (uint32_t)i + 1;
        }
        free(t->slots);
        t->slots = sl;
        t->n_slots = ns;
    }
    size_t p = fnv1a(s, len) & (t->n_slots - 1);
    for (; t->slots[p]; p = (p + 1) & (t->n_slots - 1)) {
        const cl_name *e = &t->v[t->slots[p] - 1];
        if (e->len == len && memcmp(e->s, s, len) == 0) {
            *out = t->slots[p] - 1;
            return 0;
        }
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 64;
        cl_name *nv = realloc(t->v, nc * sizeof *nv);
        if (!nv) return -1;
        t->v = nv;
        t->cap = nc;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->v[t->n] = (cl_name){copy, len};
    t->slots[p] = (uint32_t)t->n + 1;
    *out = (uint32_t)t->n++;
    return 0;
}

static void names_free(cl_names *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->v[i].s);
    free(t->v);
    free(t->slots);
}

/* ---- the command ---- */

typedef struct cl_doc {
    int looked;    /* --db consulted */
    int stored;    /* found there */
    uint64_t fp;   /* stored fingerprint */
    double score;  /* stored score */
} cl_doc;

typedef struct cl_src {
    const char *file;
    size_t line;
    size_t seq;    /* input order: the stable tie-break */
} cl_src;

typedef struct cl_row {
    nd_cluster_item it;
    cl_src src;
} cl_row;

typedef struct cl_state {
    cl_names queries, keys;
    cl_doc *docs;
    size_t docs_cap;
    cl_row *rows;
    size_t n_rows, rows_cap;
    nd_db *db;
    nd_results *res;
    int json;
    uint32_t *removed; /* doc ids, for --apply */
    size_t n_removed;
} cl_state;

static int cmp_row(const void *a, const void *b)
{
    const cl_row *x = a, *y = b;
    if (x->it.query != y->it.query) return x->it.query < y->it.query ? -1 : 1;
    return (x->src.seq > y->src.seq) - (x->src.seq < y->src.seq);
}

/* "1-100:3,101-1000:2,rest:1" -> tiers; prints the problem and returns
 * CLI_EXIT_USAGE when malformed. */
static int parse_tiers(const char *s, nd_cluster_tier **out, size_t *out_n)
{
    size_t n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    nd_cluster_tier *t = calloc(n, sizeof *t);
    char *copy = strdup(s);
    int rc = CLI_EXIT_OK;
    size_t i = 0;
    unsigned long next = 1;
    if (!t || !copy) {
        rc = cli_fail("cluster: out of memory");
        goto done;
    }
    for (char *part = copy, *comma; part; part = comma, i++) {
        comma = strchr(part, ',');
        if (comma) *comma++ = '\0';
        char *colon = strrchr(part, ':');
        unsigned long k, lo, hi;
        if (!colon || colon == part) {
            rc = cli_fail("--k-tiers: tier '%s': want FIRST-LAST:K or rest:K", part);
            goto done;
        }
        *colon = '\0';
        if (cli_parse_uint(colon + 1, 0, 64, &k) < 0) {
            rc = cli_fail("--k-tiers: tier '%s': k '%s' is not 0..64", part, colon + 1);
            goto done;
        }
        if (strcmp(part, "rest") == 0) {
            if (comma) {
                rc = cli_fail("--k-tiers: 'rest' must be the last tier");
                goto done;
            }
            t[i] = (nd_cluster_tier){UINT32_MAX, (unsigned)k};
            continue;
        }
        char *dash = strchr(part, '-');
        if (!dash) {
            rc = cli_fail("--k-tiers: tier '%s': want FIRST-LAST:K or rest:K", part);
            goto done;
        }
        *dash = '\0';
        if (cli_parse_uint(part, 1, UINT32_MAX - 1, &lo) < 0 ||
            cli_parse_uint(dash + 1, 1, UINT32_MAX - 1, &hi) < 0) {
            rc = cli_fail("--k-tiers: tier '%s-%s': bad query rank range", part, dash + 1);
            goto done;
        }
        if (lo != next) {
            rc = cli_fail("--k-tiers: tier '%lu-%lu' should start at query rank %lu "
                          "(ranges ascending and contiguous from 1)", lo, hi, next);
            goto done;
        }
        if (hi < lo) {
            rc = cli_fail("--k-tiers: tier '%lu-%lu': range ends before it starts", lo, hi);
            goto done;
        }
        t[i] = (nd_cluster_tier){(uint32_t)hi, (unsigned)k};
        next = hi + 1;
    }
done:
    free(copy);
    if (rc != CLI_EXIT_OK) {
        free(t);
        return rc;
    }
    *out = t;
    *out_n = n;
    return CLI_EXIT_OK;
}

/* The stored fingerprint and score of doc (looked up once). */
static int lookup(cl_state *st, uint32_t doc, const char *file, size_t line)
{
    cl_doc *d = &st->docs[doc];
    if (d->looked || !st->db) return CLI_EXIT_OK;
    d->looked = 1;
    const cl_name *k = &st->keys.v[doc];
    int nrc = nd_db_get(st->res, st->db, k->s, k->len);
    if (nrc == ND_ENOTFOUND) return CLI_EXIT_OK;
    if (nrc < 0) return cli_fail_nd(nrc, "%s:%zu: looking up '%s'", file, line, k->s);
    const nd_match *m = nd_results_get(st->res, 0);
    d->stored = 1;
    d->fp = m->fp;
    d->score = m->score;
    return CLI_EXIT_OK;
}

static int parse_score(const char *s, double *out)
{
    char *end;
    if (!*s) return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* One input line (without its newline) into a row. */
static int parse_line(cl_state *st, char *line, const char *file, size_t lineno)
{
    char *f[6] = {0}; /* all set: GCC -O3 cannot see that nf guards the reads */
    size_t nf = 0;
    for (char *p = line;; ) {
        if (nf == 6) break;
        f[nf++] = p;
        char *tab = strchr(p, '\t');
        if (!tab) break;
        *tab = '\0';
        p = tab + 1;
    }
    if (nf < 3) return cli_fail("%s:%zu: missing field: want QUERY<TAB>RANK<TAB>DOCKEY", file, lineno);
    if (nf > 5) return cli_fail("%s:%zu: too many fields (at most 5)", file, lineno);
    if (!*f[0]) return cli_fail("%s:%zu: empty query", file, lineno);
    if (!*f[2]) return cli_fail("%s:%zu: empty document key", file, lineno);
    unsigned long rank;
    if (cli_parse_uint(f[1], 1, UINT32_MAX, &rank) < 0)
        return cli_fail("%s:%zu: bad rank '%s' (a whole number >= 1)", file, lineno, f[1]);
    const char *hex = NULL, *score_s = NULL;
    if (nf == 4) {
        if (strlen(f[3]) == 16) hex = f[3];
        else score_s = f[3];
    } else if (nf == 5) {
        hex = *f[3] ? f[3] : NULL;
        score_s = f[4];
    }
    uint64_t fp = 0;
    double score = 0;
    const char *why;
    if (hex && in_parse_hex64(hex, strlen(hex), &fp, &why) < 0)
        return cli_fail("%s:%zu: bad fingerprint '%s': %s", file, lineno, hex, why);
    if (score_s && parse_score(score_s, &score) < 0)
        return cli_fail("%s:%zu: bad score '%s'", file, lineno, score_s);

    uint32_t q, doc;
    if (names_id(&st->queries, f[0], strlen(f[0]), &q) < 0 ||
        names_id(&st->keys, f[2], strlen(f[2]), &doc) < 0)
        return cli_fail("cluster: out of memory");
    if (doc >= st->docs_cap) {
        size_t nc = st->docs_cap ? 2 * st->docs_cap : 64;
        cl_doc *nd = realloc(st->docs, nc * sizeof *nd);
        if (!nd) return cli_fail("cluster: out of memory");
        memset(nd + st->docs_cap, 0, (nc - st->docs_cap) * sizeof *nd);
        st->docs = nd;
        st->docs_cap = nc;
    }
    if (!hex || !score_s) {
        int rc = lookup(st, doc, file, lineno);
        if (rc) return rc;
        const cl_doc *d = &st->docs[doc];
        if (!hex && !d->stored)
            return cli_fail(st->db ? "%s:%zu: no fingerprint for '%s': not in the database"
                                   : "%s:%zu: no fingerprint for '%s' (give HEX16 or --db)",
                            file, lineno, f[2]);
        if (!hex) fp = d->fp;
        if (!score_s && d->stored) score = d->score;
    }
    if (st->n_rows == st->rows_cap) {
        size_t nc = st->rows_cap ? 2 * st->rows_cap : 256;
        cl_row *nr = realloc(st->rows, nc * sizeof *nr);
        if (!nr) return cli_fail("cluster: out of memory");
        st->rows = nr;
        st->rows_cap = nc;
    }
    st->rows[st->n_rows] = (cl_row){{q, (uint32_t)rank, doc, fp, score}, {file, lineno, st->n_rows}};
    st->n_rows++;
    return CLI_EXIT_OK;
}

static int read_file(cl_state *st, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return cli_fail("cannot open '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = CLI_EXIT_OK;
    while (rc == CLI_EXIT_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        if (len == 0) continue; /* blank lines are allowed */
        if (memchr(line, '\0', (size_t)len))
            rc = cli_fail("%s:%zu: NUL byte in line", path, lineno);
        else
            rc = parse_line(st, line, path, lineno);
    }
    if (rc == CLI_EXIT_OK && ferror(f)) rc = cli_fail("reading '%s': %s", path, strerror(errno));
    free(line);
    if (f != stdin) fclose(f);
    return rc;
}

static int on_removed(uint32_t query, uint32_t removed, uint32_t kept, unsigned dist, void *payload)
{
    cl_state *st = payload;
    const cl_name *q = &st->queries.v[query], *r = &st->keys.v[removed], *k = &st->keys.v[kept];
    if (st->json) {
        fputs("{\"status\":\"removed\",\"query\":", stdout);
        in_put_json_string(stdout, q->s, q->len);
        fputs(",\"key\":", stdout);
        in_put_json_string(stdout, r->s, r->len);
        fputs(",\"kept\":", stdout);
        in_put_json_string(stdout, k->s, k->len);
        printf(",\"dist\":%u}\n", dist);
    } else {
        fputs("removed\t", stdout);
        in_put_field(stdout, q->s, q->len);
        putchar('\t');
        in_put_field(stdout, r->s, r->len);
        putchar('\t');
        in_put_field(stdout, k->s, k->len);
        printf("\t%u\n", dist);
    }
    st->removed[st->n_removed++] = removed;
    return 0;
}

int cmd_cluster(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"db", required_argument, 0, 'd'},  {"k", required_argument, 0, 'k'},
        {"k-tiers", required_argument, 0, 't'}, {"top", required_argument, 0, 'm'},
        {"apply", no_argument, 0, 'a'},     {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    const char *db_path = NULL, *k_arg = NULL, *tiers_arg = NULL;
    unsigned long top = 10, k = 3;
    int apply = 0, opt, rc = CLI_EXIT_OK;
    cl_state st;
    nd_cluster_tier *tiers = NULL;
    nd_cluster_item *items = NULL;
    size_t n_tiers = 0;
    memset(&st, 0, sizeof st);
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "cluster")) != -1) {
        switch (opt) {
        case 'd': db_path = optarg; break;
        case 'k': k_arg = optarg; break;
        case 't': tiers_arg = optarg; break;
        case 'm':
            if (cli_parse_uint(optarg, 0, UINT32_MAX, &top) < 0)
                return cli_usage_fail("cluster", "--top '%s' is not a whole number", optarg);
            break;
        case 'a': apply = 1; break;
        case 'j': st.json = 1; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return cli_usage_fail("cluster", "need at least one RESULTS file (- for stdin)");
    if (k_arg && tiers_arg) return cli_usage_fail("cluster", "give --k or --k-tiers, not both");
    if (apply && !db_path) return cli_usage_fail("cluster", "--apply needs --db");
    if (k_arg && cli_parse_uint(k_arg, 0, 64, &k) < 0)
        return cli_fail("cluster: k must be 0..64, not '%s'", k_arg);
    if (tiers_arg) {
        rc = parse_tiers(tiers_arg, &tiers, &n_tiers);
        if (rc) return rc;
    }
    nd_cluster_tier single = {UINT32_MAX, (unsigned)k};
    nd_cluster_options o = ND_CLUSTER_OPTIONS_INIT;
    o.top = top;
    o.tiers = tiers ? tiers : &single;
    o.n_tiers = tiers ? n_tiers : 1;

    if (db_path) {
        rc = cli_open_db(&st.db, db_path, apply ? 0 : ND_DB_READONLY);
        if (rc) goto done;
        if (nd_results_new(&st.res) < 0) {
            rc = cli_fail_nd(ND_ENOMEM, "cluster");
            goto done;
        }
    }
    for (int i = optind; i < argc && rc == CLI_EXIT_OK; i++) rc = read_file(&st, argv[i]);
    if (rc) goto done;

    /* Group by query (ids are in first-appearance order), keeping input
     * order inside a query; a key twice in one query is an input error. */
    qsort(st.rows, st.n_rows, sizeof *st.rows, cmp_row);
    items = malloc((st.n_rows ? st.n_rows : 1) * sizeof *items);
    st.removed = malloc((st.n_rows ? st.n_rows : 1) * sizeof *st.removed);
    size_t *first = malloc((st.keys.n ? st.keys.n : 1) * sizeof *first);
    if (!items || !st.removed || !first) {
        free(first);
        rc = cli_fail("cluster: out of memory");
        goto done;
    }
    for (size_t d = 0; d < st.keys.n; d++) first[d] = SIZE_MAX;
    for (size_t i = 0; i < st.n_rows && rc == CLI_EXIT_OK; i++) {
        const cl_row *r = &st.rows[i];
        size_t f = first[r->it.doc];
        if (f != SIZE_MAX && st.rows[f].it.query == r->it.query)
            rc = cli_fail("%s:%zu: document '%s' appears twice for query '%s' (first at %s:%zu)",
                          r->src.file, r->src.line, st.keys.v[r->it.doc].s,
                          st.queries.v[r->it.query].s, st.rows[f].src.file, st.rows[f].src.line);
        first[r->it.doc] = i;
        items[i] = r->it;
    }
    free(first);
    if (rc) goto done;

    int nrc = nd_cluster(items, st.n_rows, &o, on_removed, &st);
    if (nrc < 0) {
        rc = cli_fail_nd(nrc, "cluster");
        goto done;
    }
    if (fflush(stdout) != 0) {
        rc = cli_fail("cluster: writing the output: %s", strerror(errno));
        goto done;
    }
    fprintf(stderr, "neardup: cluster: %zu %s, %zu %s, %zu removed", st.queries.n,
            cli_plural(st.queries.n, "query", "queries"), st.n_rows,
            cli_plural(st.n_rows, "result", "results"), st.n_removed);
    if (apply) {
        size_t deleted = 0, absent = 0;
        for (size_t i = 0; i < st.n_removed; i++) {
            const cl_name *key = &st.keys.v[st.removed[i]];
            nrc = nd_db_delete(st.db, key->s, key->len);
            if (nrc == ND_ENOTFOUND) absent++;
            else if (nrc < 0) {
                fputc('\n', stderr);
                rc = cli_fail_nd(nrc, "cluster: deleting '%s'", key->s);
                goto done;
            } else deleted++;
        }
        fprintf(stderr, ", %zu deleted", deleted);
        if (absent) fprintf(stderr, " (%zu not stored)", absent);
    }
    fputc('\n', stderr);

done:
    if (st.db) {
        int crc = cli_close_db(st.db, db_path);
        if (rc == CLI_EXIT_OK) rc = crc;
    }
    nd_results_free(st.res);
    names_free(&st.queries);
    names_free(&st.keys);
    free(st.docs);
    free(st.rows);
    free(st.removed);
    free(items);
    free(tiers);
    return rc;
}
