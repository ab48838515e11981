/* client_example.c — docs/server.md's "From C", verbatim: check-and-add each
 * file on a server, saying which stored file it is a near-duplicate of;
 * then list what is stored near the last one. Run by client_example.sh. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <neardup_client.h>

int main(int argc, char **argv) /* usage: example URL FILE... */
{
    static char text[1 << 20];
    nd_client *c = NULL;
    nd_client_results *res = NULL;
    int rc = argc < 3 ? ND_EINVAL : nd_client_open(&c, argv[1], NULL); /* no token */
    if (rc == ND_OK) rc = nd_client_results_new(&res);
    size_t n = 0;
    for (int i = 2; rc == ND_OK && i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        n = f ? fread(text, 1, sizeof text - 1, f) : 0; /* first MB */
        if (f) fclose(f);
        text[n] = '\0';
        rc = f ? nd_client_add_if_new_text(res, c, argv[i], strlen(argv[i]), text, n, 0,
                                           time(NULL), ND_CLIENT_DEFAULT_K, 0)
               : ND_ENOTFOUND;
        if (rc == ND_OK && nd_client_results_count(res) > 0)
            printf("dup %s of %s\n", argv[i], nd_client_results_get(res, 0)->key);
        else if (rc == ND_OK)
            printf("new %s\n", argv[i]);
    }
    if (rc == ND_OK) /* the stored near-duplicates of the last text, best first */
        rc = nd_client_query_text(res, c, text, n, ND_CLIENT_DEFAULT_K, 0, 0);
    for (size_t i = 0; rc == ND_OK && i < nd_client_results_count(res); i++)
        printf("near %s\n", nd_client_results_get(res, i)->key);
    if (rc < 0)
        fprintf(stderr, "example: %s: %s\n", nd_client_strerror(rc), nd_client_errmsg());
    nd_client_results_free(res);
    nd_client_close(c);
    return rc < 0;
}
