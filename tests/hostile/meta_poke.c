/*
 * meta_poke.c — read or overwrite one record of a database's meta family,
 * to make the databases the hostile-input tests need: one written by
 * another format version, one recording another fingerprint function.
 *
 * usage: meta_poke DB NAME          print the record
 *        meta_poke DB NAME VALUE    overwrite it (synced)
 * Goes through the storage layer directly (tests may use internals), so
 * the engine's own checks at open do not stand in the way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: meta_poke DB NAME [VALUE]\n");
        return 2;
    }
    st_store *s = NULL;
    st_batch *b = NULL;
    st_open_opts o = {0};
    int rc = st_open(&s, argv[1], &o);
    if (rc == ND_OK && argc == 3) {
        char *v = NULL;
        size_t len = 0;
        rc = st_get(s, ST_CF_META, argv[2], strlen(argv[2]), &v, &len);
        if (rc == ND_OK) printf("%.*s\n", (int)len, v);
        free(v);
    } else if (rc == ND_OK) {
        rc = st_batch_new(&b, s);
        if (rc == ND_OK)
            rc = st_batch_put(b, ST_CF_META, argv[2], strlen(argv[2]), argv[3], strlen(argv[3]));
        if (rc == ND_OK) rc = st_write(s, b, 1);
    }
    st_batch_free(b);
    st_close(s);
    if (rc < 0) {
        fprintf(stderr, "meta_poke: %s: %s\n", nd_strerror(rc), nd_errmsg());
        return 1;
    }
    return 0;
}
