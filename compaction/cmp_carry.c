/*
 * cmp_carry.c — the files a new generation lays over families it does
 * not write anew: an expiry's deletions over the docs and rev it carries,
 * a resemblance store's sketch and band files (cmp_carry.h).
 */
#include "cmp_carry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_store_impl.h"
#include "nd_error.h"

/* The families in the order their files are ingested: rev first, so that
 * a query of the old generation meanwhile (which finds a fingerprint's
 * documents through rev) misses the expired ones from the first ingest
 * on, then the band entries (a check's candidates), the sketches and
 * docs (a read by key finds an expired document until docs is in). */
static const struct {
    int cf;
    const char *file;
} carried[] = {
    {ST_CF_REV, "carried-rev.sst"},
    {ST_CF_BAND, "carried-band.sst"},
    {ST_CF_SKETCH, "carried-sketch.sst"},
    {ST_CF_DOCS, "carried-docs.sst"},
};
#define NCARRIED (sizeof carried / sizeof carried[0])

unsigned cmp_carry_bit(int cf)
{
    return cf == ST_CF_DOCS     ? CMP_CARRY_DOCS
           : cf == ST_CF_REV    ? CMP_CARRY_REV
           : cf == ST_CF_SKETCH ? CMP_CARRY_SKETCH
           : cf == ST_CF_BAND   ? CMP_CARRY_BAND
                                : 0;
}

char *cmp_carry_file(const struct st_store *s, int cf)
{
    for (size_t i = 0; i < NCARRIED; i++) {
        if (carried[i].cf != cf) continue;
        char *p = malloc(strlen(s->path) + strlen(carried[i].file) + 2);
        if (p) sprintf(p, "%s/%s", s->path, carried[i].file);
        return p;
    }
    return NULL;
}

void cmp_carry_unlink(const struct st_store *s, unsigned bits)
{
    for (size_t i = 0; i < NCARRIED; i++) {
        if (!(bits & cmp_carry_bit(carried[i].cf))) continue;
        char *p = cmp_carry_file(s, carried[i].cf);
        if (p) (void)unlink(p);
        free(p);
    }
}

int cmp_carry_value(const struct st_store *s, unsigned bits, char out[4], size_t *len)
{
    int fd = open(s->path, O_RDONLY | O_DIRECTORY);
    int ok = fd >= 0 && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0) close(fd);
    ND_RETURN_IF(!ok, ND_EIO, "cannot sync the directory %s: %s", s->path, strerror(err));
    *len = (size_t)snprintf(out, 4, "%u", bits & CMP_CARRY_ALL);
    return ND_OK;
}

/* Family cf of g, or the store's sketch or band. */
static kv_cf *family(struct st_store *s, cmp_gen *g, int cf)
{
    return cf == ST_CF_SKETCH ? s->fixed[1] : cf == ST_CF_BAND ? s->fixed[2] : g->cf[cf];
}

/* Ingest a copy of family cf's file (the file stays as written, to be
 * ingested again should a crash come before cmp_carry_done). */
static int apply_one(struct st_store *s, cmp_gen *g, int cf)
{
    char *path = cmp_carry_file(s, cf);
    struct stat st;
    int rc = ND_OK;
    if (!path) ND_FAIL(ND_ENOMEM, "storage: out of memory");
    if (stat(path, &st) != 0)
        ND_FAIL(errno == ENOENT ? ND_ECORRUPT : ND_EIO,
                "database %s: the file %s its new generation recorded: %s", s->path, path, strerror(errno));
    const char *files[1] = {path};
    rc = kv_ingest_copy(s->kv, family(s, g, cf), files, 1, "ingesting a new generation's carried file");
    if (rc == ND_OK && ST_CF_GENERATIONAL(cf)) atomic_store(&g->settled[cf], 0);
cleanup:
    free(path);
    return rc;
}

int cmp_carry_apply(struct st_store *s, cmp_gen *next, unsigned which)
{
    int rc = ND_OK;
    for (size_t i = 0; i < NCARRIED && rc == ND_OK; i++)
        if (which & cmp_carry_bit(carried[i].cf)) rc = apply_one(s, next, carried[i].cf);
    if (rc < 0) {
        atomic_store(&s->carry_unapplied, 1);
        next->made_current = 1; /* on disk: its families must stay */
        return nd_err_wrap(rc, "new generation recorded, its carried files not applied "
                               "(the next open applies them)");
    }
    return ND_OK;
}

int cmp_carry_done(struct st_store *s)
{
    kv_batch *b = NULL;
    int rc = kv_batch_new(&b, 0);
    if (rc == ND_OK) {
        kv_batch_delete(b, s->fixed[0], CMP_CARRY_KEY, strlen(CMP_CARRY_KEY));
        rc = kv_write(s->kv, b, 1);
    }
    kv_batch_free(b);
    if (rc < 0) {
        atomic_store(&s->carry_unapplied, 1);
        return nd_err_wrap(rc, "new generation's files applied; their record stays until the "
                               "next open");
    }
    cmp_carry_unlink(s, CMP_CARRY_ALL);
    return ND_OK;
}

int cmp_carry_recover(struct st_store *s)
{
    char *v = NULL;
    size_t len = 0;
    int rc = kv_get(s->kv, s->fixed[0], 1, CMP_CARRY_KEY, strlen(CMP_CARRY_KEY), &v, &len);
    if (rc == ND_ENOTFOUND) {
        nd_err_clear();
        if (!s->readonly) cmp_carry_unlink(s, CMP_CARRY_ALL);
        return ND_OK;
    }
    ND_FORWARD(rc);
    char *end = v; /* NUL-terminated */
    unsigned long which = len >= 1 && len <= 2 ? strtoul(v, &end, 10) : 0;
    if (end != v + len || which > CMP_CARRY_ALL) which = 0;
    free(v);
    ND_RETURN_IF(!which, ND_ECORRUPT, "database %s: a malformed %s record", s->path,
                 CMP_CARRY_KEY);
    if (s->readonly) return 1;
    ND_FORWARD(cmp_carry_apply(s, s->cur, (unsigned)which));
    return cmp_carry_done(s);
}
