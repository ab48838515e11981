/* readme_example.c — docs/c-api.md's "The C API in N lines", verbatim: store
 * each file in a database, saying which stored file it is a near-duplicate
 * of, if any; then list what is near the last file. Run by
 * tests/readme_example.sh. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <neardup.h>

int main(int argc, char **argv) /* usage: example DB FILE... */
{
    static char text[1 << 20];
    nd_db *db = NULL;
    nd_results *res = NULL;
    nd_db_options opts = ND_DB_OPTIONS_INIT;
    opts.flags = ND_DB_CREATE; /* k = 3, verifies by resemblance 0.85 */
    nd_signature sig;
    nd_doc doc = {0};
    int rc = argc < 3 ? ND_EINVAL : nd_db_open(&db, argv[1], &opts);
    if (rc == ND_OK) rc = nd_results_new(&res);
    for (int i = 2; rc == ND_OK && i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        size_t n = f ? fread(text, 1, sizeof text, f) : 0; /* first MB */
        if (f) fclose(f);
        rc = f ? nd_db_sign(&sig, db, text, n, 0) : ND_ENOTFOUND; /* fingerprint, sketch */
        doc = (nd_doc){argv[i], strlen(argv[i]), sig.fp, 0, time(NULL), &sig.sketch};
        if (rc == ND_OK) /* stores it; says which stored text it resembles, if any */
            rc = nd_db_add_doc_if_new(res, db, &doc, 3);
        if (rc == ND_OK && nd_results_count(res) > 0)
            printf("dup %s of %s\n", argv[i], nd_results_get(res, 0)->key);
        else if (rc == ND_OK)
            printf("new %s %016llx\n", argv[i], (unsigned long long)sig.fp);
    }
    if (rc == ND_OK) rc = nd_db_query_doc(res, db, &doc, 3, NULL); /* near the last one */
    for (size_t i = 0; rc == ND_OK && i < nd_results_count(res); i++)
        printf("near %s (resemblance %.2f)\n", nd_results_get(res, i)->key,
               nd_results_get(res, i)->resemblance);
    if (rc != ND_OK) fprintf(stderr, "%s: %s\n", nd_strerror(rc), nd_errmsg());
    nd_results_free(res);
    nd_db_close(db);
    return rc == ND_OK ? 0 : 1;
}
