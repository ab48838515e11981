/*
 * quality_stream.c — the crawler's stream into a resemblance store,
 * through the public API only, for bench/quality.sh: each document of a
 * corpus, in corpus order, is signed (nd_db_sign) and checked-and-stored
 * (nd_db_add_doc_if_new), and its decision printed as `neardup add`
 * prints it in such a store:
 *     new<TAB>KEY
 *     dup<TAB>KEY<TAB>MATCH<TAB>DIST<TAB>RES
 * bench/quality_score.py judges the lines against exact resemblance. The
 * same measure as the CLI's, without the CLI: a cross-check of the
 * library's decision, and a run that needs no JSON parsing.
 *
 * Usage: quality_stream CORPUS.texts DB [--min-resemblance R] [--k K]
 *                      [--fold-chinese]
 *   CORPUS.texts  records "KEY<TAB>BYTES\n" then the text and "\n"
 *                 (bench/quality_corpus.py)
 *   DB            a new database directory (must not exist)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <neardup.h>

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "quality_stream: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: quality_stream CORPUS.texts DB [--min-resemblance R] [--k K] "
            "[--fold-chinese]", NULL);
    double r = ND_DB_DEFAULT_MIN_RESEMBLANCE;
    unsigned k = 3;
    nd_fp_options fo = ND_FP_OPTIONS_INIT;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--fold-chinese") == 0) fo.flags |= ND_FP_FOLD_CHINESE;
        else if (strcmp(argv[i], "--min-resemblance") == 0 && i + 1 < argc) r = atof(argv[++i]);
        else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc) k = (unsigned)atoi(argv[++i]);
        else die("unknown argument", argv[i]);
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) die("cannot open", argv[1]);
    nd_db_options o = ND_DB_OPTIONS_INIT;
    o.flags = ND_DB_CREATE | ND_DB_EXCL;
    o.k = k;
    o.min_resemblance = r;
    o.fp = &fo;
    if (r == 0) o.flags |= ND_DB_FINGERPRINT_ONLY;
    nd_db *db = NULL;
    nd_results *res = NULL;
    if (nd_db_open(&db, argv[2], &o) < 0) die("open", nd_errmsg());
    if (nd_results_new(&res) < 0) die("results", nd_errmsg());
    char head[8192];
    char *text = NULL;
    size_t cap = 0;
    int64_t now = (int64_t)time(NULL);
    while (fgets(head, sizeof head, f)) {
        char *tab = strrchr(head, '\t');
        if (!tab) die("malformed record", head);
        *tab = '\0';
        size_t len = strtoull(tab + 1, NULL, 10);
        if (len + 1 > cap) {
            cap = len + 1;
            text = realloc(text, cap);
            if (!text) die("out of memory", NULL);
        }
        if (fread(text, 1, len + 1, f) != len + 1) die("truncated record", head);
        nd_signature sig;
        if (nd_db_sign(&sig, db, text, len, 0) < 0) die("sign", nd_errmsg());
        nd_doc d = {head, strlen(head), sig.fp, 0.0, now, &sig.sketch};
        if (nd_db_add_doc_if_new(res, db, &d, k) < 0) die("add", nd_errmsg());
        if (nd_results_count(res) == 0) {
            printf("new\t%s\n", head);
        } else {
            const nd_match *m = nd_results_get(res, 0);
            printf("dup\t%s\t%.*s\t%u\t%.3f\n", head, (int)m->key_len, m->key, m->dist,
                   m->resemblance);
        }
    }
    free(text);
    fclose(f);
    nd_results_free(res);
    if (nd_db_close(db) < 0) die("close", nd_errmsg());
    return 0;
}
