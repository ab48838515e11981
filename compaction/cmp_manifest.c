/*
 * cmp_manifest.c — the table files a MANIFEST leaves live, each checked
 * against the directory: present, and of the size the MANIFEST records
 * (cmp_manifest.h says why and who calls it).
 *
 * A MANIFEST is a log (cmp_logfmt.h) of version edits, each a sequence of
 * tagged fields (RocksDB's db/version_edit.cc, pinned to what 7.8 writes,
 * like cmp_direct.c for table files): varint32 tag, then its value.
 *   1 comparator, 201 family added, 8192+ (ignorable)  length-prefixed bytes
 *   2 log, 3 next file, 4 last sequence, 9 prev log, 10 min log  varint64
 *   5 compact cursor    varint32 level, length-prefixed key
 *   6 deleted file      varint32 level, varint64 number
 *   7/100/102/103 new file  level, number, (102: path id), size, the
 *                       smallest and largest keys, (100+) two sequence
 *                       numbers, (103) custom fields: varint32 tag, 1
 *                       ending them, else length-prefixed bytes (65 the
 *                       path id)
 *   200 family (varint32 id; absent: 0), 202 family dropped (no value),
 *   203 max family (varint32), 300 atomic group (varint32 edits left)
 *   400/401 blob files  (neardup writes none: not read here)
 * An edit's family tag comes after its files, so an edit is read three
 * times: its family, then its deletions, then its additions (a file moved
 * between levels is deleted and added by one edit). Edits of an atomic
 * group apply when the group is whole; an unfinished one at the end is
 * dropped, as RocksDB drops it. A file number is unique in a database,
 * so the live set is keyed by number alone; a dropped family's files
 * leave it.
 *
 * An edit this reader cannot parse (a tag it does not know, a field that
 * runs past its record) ends the check with ND_OK: RocksDB's own open is
 * the judge of such a MANIFEST, and a store is never refused for what a
 * reader here does not know.
 */
#include "cmp_manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_kvdir.h"
#include "cmp_logfmt.h"
#include "nd_error.h"
#include "nd_grow.h"

enum {
    T_COMPARATOR = 1, T_LOG = 2, T_NEXT_FILE = 3, T_LAST_SEQ = 4, T_COMPACT_CURSOR = 5,
    T_DELETED = 6, T_NEW = 7, T_PREV_LOG = 9, T_MIN_LOG = 10, T_NEW2 = 100, T_NEW3 = 102,
    T_NEW4 = 103, T_FAMILY = 200, T_FAMILY_ADD = 201, T_FAMILY_DROP = 202, T_MAX_FAMILY = 203,
    T_ATOMIC = 300, T_IGNORABLE = 1 << 13
};
enum { C_TERMINATE = 1, C_PATH_ID = 65 };

/* ---- the live set ------------------------------------------------------ */

#define MF_FAMILIES 256 /* a store has 3 + 2 per table and generation at most */

typedef struct mf_file {
    uint64_t number, size;
    uint32_t cf;
    uint32_t path_id;
    int live;
} mf_file;

typedef struct mf_set {
    mf_file *v;
    size_t n, cap;
    uint32_t *slot; /* index into v plus one; 0 empty */
    size_t nslot;   /* a power of two, at least twice n */
    struct mf_family {
        uint32_t id;
        int live;
        uint64_t log;
        char name[32]; /* as added ("" the default family, or longer) */
    } fam[MF_FAMILIES]; /* the default family (0) and those added */
    size_t nfam;
    int too_many; /* more families than fam holds: no log check */
} mf_set;

static size_t slot_of(const mf_set *s, uint64_t number)
{
    size_t i = (size_t)((number * 0x9e3779b97f4a7c15ull) >> 17) & (s->nslot - 1);
    while (s->slot[i] && s->v[s->slot[i] - 1].number != number) i = (i + 1) & (s->nslot - 1);
    return i;
}

static int set_grow(mf_set *s)
{
    if (s->n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        mf_file *v = realloc(s->v, cap * sizeof *v);
        ND_RETURN_IF(!v, ND_ENOMEM, "out of memory reading a MANIFEST");
        s->v = v;
        s->cap = cap;
    }
    if (2 * (s->n + 1) > s->nslot) {
        size_t nslot = s->nslot ? s->nslot * 2 : 1024;
        uint32_t *slot = calloc(nslot, sizeof *slot);
        ND_RETURN_IF(!slot, ND_ENOMEM, "out of memory reading a MANIFEST");
        free(s->slot);
        s->slot = slot;
        s->nslot = nslot;
        for (size_t i = 0; i < s->n; i++) s->slot[slot_of(s, s->v[i].number)] = (uint32_t)(i + 1);
    }
    return ND_OK;
}

static int set_add(mf_set *s, uint64_t number, uint64_t size, uint32_t cf, uint32_t path_id)
{
    ND_RETURN_IF(s->n >= UINT32_MAX - 1, ND_ENOMEM, "a MANIFEST of too many files");
    ND_FORWARD(set_grow(s));
    size_t i = slot_of(s, number);
    if (!s->slot[i]) {
        s->v[s->n] = (mf_file){.number = number};
        s->slot[i] = (uint32_t)++s->n;
    }
    mf_file *f = &s->v[s->slot[i] - 1];
    f->size = size;
    f->cf = cf;
    f->path_id = path_id;
    f->live = 1;
    return ND_OK;
}

static void set_delete(mf_set *s, uint64_t number)
{
    if (!s->nslot) return;
    size_t i = slot_of(s, number);
    if (s->slot[i]) s->v[s->slot[i] - 1].live = 0;
}

/* ---- one edit ---------------------------------------------------------- */

typedef struct cur {
    const uint8_t *p, *end;
} cur;

static int v64(cur *c, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

static int v32(cur *c, uint32_t *out)
{
    uint64_t v;
    if (!v64(c, &v) || v > UINT32_MAX) return 0;
    *out = (uint32_t)v;
    return 1;
}

static int bytes(cur *c, const uint8_t **p, uint32_t *len)
{
    uint32_t n;
    if (!v32(c, &n) || (size_t)(c->end - c->p) < n) return 0;
    *p = c->p;
    *len = n;
    c->p += n;
    return 1;
}

static int skip_bytes(cur *c)
{
    const uint8_t *p;
    uint32_t n;
    return bytes(c, &p, &n);
}

typedef struct edit {
    uint32_t cf;
    int add, drop;
    const uint8_t *name; /* the family added */
    uint32_t name_len;
    int has_log;
    uint64_t log; /* the family's first log holding writes not in its files */
    int atomic;        /* part of an atomic group */
    uint32_t remaining; /* its edits after this one */
} edit;

/* Pass 0 reads e; pass 1 applies the deletions, pass 2 the additions. 0
 * when the edit cannot be parsed. */
static int walk(const uint8_t *rec, size_t len, int pass, edit *e, mf_set *s, int *rc)
{
    cur c = {rec, rec + len};
    uint64_t u;
    uint32_t tag, level;
    while (c.p < c.end) {
        if (!v32(&c, &tag)) return 0;
        switch (tag) {
        case T_FAMILY_ADD:
            e->add = 1;
            if (!bytes(&c, &e->name, &e->name_len)) return 0;
            break;
        case T_COMPARATOR:
            if (!skip_bytes(&c)) return 0;
            break;
        case T_LOG:
            if (!v64(&c, &e->log)) return 0;
            e->has_log = 1;
            break;
        case T_NEXT_FILE:
        case T_LAST_SEQ:
        case T_PREV_LOG:
        case T_MIN_LOG:
            if (!v64(&c, &u)) return 0;
            break;
        case T_COMPACT_CURSOR:
            if (!v32(&c, &level) || !skip_bytes(&c)) return 0;
            break;
        case T_DELETED:
            if (!v32(&c, &level) || !v64(&c, &u)) return 0;
            if (pass == 1) set_delete(s, u);
            break;
        case T_NEW:
        case T_NEW2:
        case T_NEW3:
        case T_NEW4: {
            uint64_t number, size, seq;
            uint32_t path_id = 0;
            if (!v32(&c, &level) || !v64(&c, &number)) return 0;
            if (tag == T_NEW3 && !v32(&c, &path_id)) return 0;
            if (!v64(&c, &size) || !skip_bytes(&c) || !skip_bytes(&c)) return 0;
            if (tag != T_NEW && (!v64(&c, &seq) || !v64(&c, &seq))) return 0;
            while (tag == T_NEW4) {
                uint32_t ct, n;
                const uint8_t *p;
                if (!v32(&c, &ct)) return 0;
                if (ct == C_TERMINATE) break;
                if (!bytes(&c, &p, &n)) return 0;
                if (ct == C_PATH_ID && n == 1) path_id = p[0];
            }
            if (pass == 2 && *rc == ND_OK) *rc = set_add(s, number, size, e->cf, path_id);
            break;
        }
        case T_FAMILY:
            if (!v32(&c, &e->cf)) return 0;
            break;
        case T_FAMILY_DROP:
            e->drop = 1;
            break;
        case T_MAX_FAMILY:
            if (!v32(&c, &level)) return 0;
            break;
        case T_ATOMIC:
            e->atomic = 1;
            if (!v32(&c, &e->remaining)) return 0;
            break;
        default:
            if (!(tag & T_IGNORABLE) || !skip_bytes(&c)) return 0;
        }
    }
    return 1;
}

static struct mf_family *family(mf_set *s, uint32_t id)
{
    for (size_t i = 0; i < s->nfam; i++)
        if (s->fam[i].id == id) return &s->fam[i];
    return NULL;
}

/* Apply one edit to s. 0 when it cannot be parsed. */
static int apply(const uint8_t *rec, size_t len, mf_set *s, int *rc)
{
    edit e = {0};
    if (!walk(rec, len, 0, &e, s, rc)) return 0;
    struct mf_family *f = family(s, e.cf);
    if (e.add && !f) {
        if (s->nfam == MF_FAMILIES) s->too_many = 1;
        else f = &s->fam[s->nfam++];
        if (f) {
            *f = (struct mf_family){.id = e.cf, .live = 1};
            if (e.name_len < sizeof f->name) memcpy(f->name, e.name, e.name_len);
        }
    }
    if (e.drop) {
        if (f) f->live = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->v[i].cf == e.cf) s->v[i].live = 0;
        return 1;
    }
    if (e.has_log && f && e.log > f->log) f->log = e.log;
    return walk(rec, len, 1, &e, s, rc) && walk(rec, len, 2, &e, s, rc);
}

/* ---- the check ---------------------------------------------------------- */

/* The edits of an atomic group waiting for its last one. */
typedef struct group {
    uint8_t *p;
    size_t n, cap;
    size_t *ends; /* end offset of each edit */
    size_t k, kcap;
} group;

static int group_put(group *g, const uint8_t *rec, size_t len)
{
    uint8_t *p = nd_grow(g->p, &g->cap, g->n + len, 1, 4096);
    ND_RETURN_IF(!p, ND_ENOMEM, "out of memory reading a MANIFEST");
    g->p = p;
    size_t *ends = nd_grow(g->ends, &g->kcap, g->k + 1, sizeof *ends, 16);
    ND_RETURN_IF(!ends, ND_ENOMEM, "out of memory reading a MANIFEST");
    g->ends = ends;
    memcpy(g->p + g->n, rec, len);
    g->n += len;
    g->ends[g->k++] = g->n;
    return ND_OK;
}

/* The first len bytes of file into *out (malloc'd), *n: fewer if it is
 * shorter. */
static int read_prefix(const char *file, size_t len, uint8_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return ND_OK; /* replaced since: the caller's state moved */
    ND_RETURN_IF(fd < 0, ND_EIO, "cannot open %s: %s", file, strerror(errno));
    uint8_t *p = malloc(len ? len : 1);
    if (!p) {
        close(fd);
        return nd_err_set(ND_ENOMEM, "out of memory reading %s", file);
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(p);
            return nd_err_set(ND_EIO, "cannot read %s: %s", file, strerror(e));
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    *out = p;
    *n = got;
    return ND_OK;
}

/* Every live file of s against directory path; the first one wrong
 * named, with how many more there are. */
static int check_files(const char *path, const char *manifest, const mf_set *s)
{
    char file[4096], first[4400] = "";
    size_t bad = 0;
    for (size_t i = 0; i < s->n; i++) {
        const mf_file *f = &s->v[i];
        if (!f->live || f->path_id) continue; /* another db_path: not ours to find */
        struct stat st;
        char name[32];
        snprintf(name, sizeof name, "%06" PRIu64 ".sst", f->number);
        snprintf(file, sizeof file, "%s/%s", path, name);
        int r = stat(file, &st);
        if (r != 0 && errno == ENOENT) { /* RocksDB also reads LevelDB's name */
            char old[4096];
            snprintf(old, sizeof old, "%s/%06" PRIu64 ".ldb", path, f->number);
            if (stat(old, &st) == 0) r = 0;
            else errno = ENOENT;
        }
        if (r != 0 && errno != ENOENT)
            return nd_err_set(ND_EIO, "%s: cannot read table file %s: %s", path, name,
                              strerror(errno));
        if (r == 0 && (uint64_t)st.st_size == f->size) continue;
        if (!bad++) {
            if (r != 0)
                snprintf(first, sizeof first, "table file %s, listed in %s, is missing", name,
                         manifest);
            else
                snprintf(first, sizeof first, "table file %s is %lld bytes; %s records %" PRIu64,
                         name, (long long)st.st_size, manifest, f->size);
        }
    }
    if (!bad) return ND_OK;
    if (bad == 1)
        return nd_err_set(ND_ECORRUPT, "%s: %s (a damaged database, which `neardup repair` "
                          "salvages)", path, first);
    return nd_err_set(ND_ECORRUPT, "%s: %s, and %zu more table files are missing or of "
                      "another size (a damaged database, which `neardup repair` salvages)",
                      path, first, bad - 1);
}

/* The write-ahead log. Each family's log number says its writes in
 * older logs are in its files; the log RocksDB writes now is at least
 * every one of them, is made before an edit names it, and is never
 * deleted while it is open nor at close. A copy (a checkpoint) may leave
 * out an empty live log, though, and never holds an obsolete one (older
 * than every family's number). So: no log from the smallest family
 * number on, while an older log is there (RocksDB had not yet removed
 * it when the writer was killed), is a deleted log, and the writes it
 * held (`add --sync`'s acknowledged documents) would vanish with verify
 * saying ok. A store whose every log is gone is not told from a copy:
 * that case is not caught here. */
static int check_log(const char *path, const char *manifest, const mf_set *s)
{
    uint64_t need = UINT64_MAX;
    for (size_t i = 0; i < s->nfam; i++)
        if (s->fam[i].live && s->fam[i].log < need) need = s->fam[i].log;
    if (need == UINT64_MAX || !need) return ND_OK;
    DIR *d = opendir(path);
    if (!d) return ND_OK; /* RocksDB's open says what is wrong */
    int live = 0, old = 0;
    for (struct dirent *e; (e = readdir(d));) {
        unsigned long long n;
        int end = 0;
        if (sscanf(e->d_name, "%llu.log%n", &n, &end) != 1 || e->d_name[end] != '\0') continue;
        if ((uint64_t)n >= need) live = 1;
        else old = 1;
    }
    closedir(d);
    if (live || !old) return ND_OK;
    return nd_err_set(ND_ECORRUPT,
                      "%s: the write-ahead log %06" PRIu64 ".log (or a later one) that %s "
                      "names is missing: the writes it held would be lost (a damaged database, "
                      "which `neardup repair` salvages; restore a backup for the writes)",
                      path, need, manifest);
}

/* Read the MANIFEST of state (NULL: the one CURRENT names now) into *s,
 * its name into name: ND_OK with *known 0 when it holds an edit this
 * reader does not know, *read 0 when there is no state to read; else a
 * record failing its checksum (ND_ECORRUPT), ND_ENOMEM, ND_EIO. */
static int load(const char *path, const char *state, mf_set *s, char *name, int *known,
                int *read)
{
    char now[KVDIR_STATE_MAX], file[4096 + KVDIR_STATE_MAX];
    unsigned long long size = 0;
    *known = 1;
    *read = 0;
    if (!state) {
        kvdir_manifest_state(path, now, sizeof now);
        state = now;
    }
    if (sscanf(state, "%319s %llu", name, &size) != 2 || strncmp(name, "MANIFEST-", 9) != 0)
        return ND_OK; /* no CURRENT to read: RocksDB's open says what is wrong */
    snprintf(file, sizeof file, "%s/%s", path, name);
    uint8_t *in = NULL;
    size_t n = 0;
    s->fam[0] = (struct mf_family){.id = 0, .live = 1};
    s->nfam = 1;
    group g = {0};
    cmp_log_reader r;
    int rc = read_prefix(file, (size_t)size, &in, &n);
    if (rc < 0 || !in) return rc;
    *read = 1;
    cmp_log_reader_init(&r, in, n);
    const uint8_t *rec;
    size_t len, at = 0;
    int got;
    while (rc == ND_OK && *known && (got = cmp_log_next(&r, &rec, &len, &at)) != 0) {
        if (got < 0) {
            rc = got == ND_ECORRUPT
                     ? nd_err_set(ND_ECORRUPT, "%s: %s: the record at byte %zu fails its checksum "
                                  "(a damaged database, which `neardup repair` salvages)",
                                  path, name, at)
                     : got;
            break;
        }
        edit e = {0};
        if (!walk(rec, len, 0, &e, s, &rc)) {
            *known = 0;
            break;
        }
        if (!e.atomic && !g.k) {
            *known = apply(rec, len, s, &rc);
            continue;
        }
        /* An atomic group: its edits wait for its last one. */
        rc = group_put(&g, rec, len);
        if (rc == ND_OK && e.remaining == 0) {
            for (size_t i = 0, from = 0; *known && rc == ND_OK && i < g.k; from = g.ends[i++])
                *known = apply(g.p + from, g.ends[i] - from, s, &rc);
            g.n = g.k = 0;
        }
    }
    cmp_log_reader_dispose(&r);
    free(in);
    free(g.p);
    free(g.ends);
    return rc;
}

int cmp_manifest_check(const char *path, const char *state)
{
    char name[KVDIR_STATE_MAX];
    mf_set s = {0};
    int known, read;
    int rc = load(path, state, &s, name, &known, &read);
    if (rc == ND_OK && read && known) rc = check_files(path, name, &s);
    if (rc == ND_OK && read && known && !s.too_many) rc = check_log(path, name, &s);
    free(s.v);
    free(s.slot);
    return rc;
}

/* Is table file name (NNNNNN.sst) live in s with its size? */
static int live_in(const mf_set *s, const char *path, const char *name)
{
    unsigned long long number;
    int end = 0;
    if (sscanf(name, "%llu.sst%n", &number, &end) != 1 || name[end] != '\0') return 1;
    if (!s->nslot) return 0;
    uint32_t slot = s->slot[slot_of(s, number)];
    if (!slot || !s->v[slot - 1].live) return 0;
    char file[4200];
    struct stat st;
    snprintf(file, sizeof file, "%s/%s", path, name);
    return stat(file, &st) == 0 && (uint64_t)st.st_size == s->v[slot - 1].size;
}

int cmp_manifest_whole(const char *path, int *intact)
{
    char name[KVDIR_STATE_MAX];
    mf_set s = {0};
    int known, read;
    int rc = load(path, NULL, &s, name, &known, &read);
    int whole = rc == ND_OK && read;
    if (intact) *intact = whole;
    if (rc == ND_ECORRUPT) {
        nd_err_clear();
        rc = ND_OK;
    }
    DIR *d = whole && known ? opendir(path) : NULL;
    for (struct dirent *e; d && whole && (e = readdir(d));) whole = live_in(&s, path, e->d_name);
    if (d) closedir(d);
    free(s.v);
    free(s.slot);
    return rc < 0 ? rc : whole;
}

int cmp_manifest_unnamed(const char *path, char **out, size_t *len)
{
    char name[KVDIR_STATE_MAX];
    mf_set s = {0};
    int known, read;
    size_t cap = 0;
    *out = NULL;
    *len = 0;
    int rc = load(path, NULL, &s, name, &known, &read);
    if (rc == ND_ECORRUPT) {
        nd_err_clear();
        rc = ND_OK;
        read = 0;
    }
    DIR *d = rc == ND_OK && read && known ? opendir(path) : NULL;
    for (struct dirent *e; d && rc == ND_OK && (e = readdir(d));) {
        unsigned long long number;
        int end = 0;
        if (sscanf(e->d_name, "%llu.sst%n", &number, &end) != 1 || e->d_name[end] != '\0')
            continue;
        uint32_t slot = s.nslot ? s.slot[slot_of(&s, number)] : 0;
        if (slot && s.v[slot - 1].live) continue;
        size_t l = strlen(e->d_name) + 1;
        if (*len + l > cap) {
            char *p = realloc(*out, cap = 2 * cap + l + 256);
            if (!p) {
                rc = nd_err_set(ND_ENOMEM, "repair: out of memory");
                break;
            }
            *out = p;
        }
        memcpy(*out + *len, e->d_name, l);
        *len += l;
    }
    if (d) closedir(d);
    free(s.v);
    free(s.slot);
    return rc;
}

int cmp_manifest_restore(const char *path, const char *const *saved, size_t n)
{
    char name[KVDIR_STATE_MAX], file[4200];
    mf_set s = {0};
    int known, read, restored = 0;
    int rc = load(path, NULL, &s, name, &known, &read);
    for (size_t i = 0; rc == ND_OK && read && known && i < s.n; i++) {
        const mf_file *f = &s.v[i];
        struct stat st;
        if (!f->live || f->path_id) continue;
        snprintf(file, sizeof file, "%s/%06" PRIu64 ".sst", path, f->number);
        if (stat(file, &st) == 0 || errno != ENOENT) continue;
        for (size_t j = 0; j < n; j++)
            if (saved[j] && stat(saved[j], &st) == 0 && (uint64_t)st.st_size == f->size &&
                link(saved[j], file) == 0) {
                restored++;
                break;
            }
    }
    free(s.v);
    free(s.slot);
    return rc == ND_ECORRUPT ? restored : rc < 0 ? rc : restored;
}

int cmp_manifest_family_of(const char *path, const char *file, char *out, size_t cap)
{
    char name[KVDIR_STATE_MAX];
    mf_set s = {0};
    int known, read, found = 0;
    unsigned long long number;
    int end = 0;
    *out = '\0';
    int rc = load(path, NULL, &s, name, &known, &read);
    if (rc == ND_ECORRUPT) { /* what was read before the damaged record */
        nd_err_clear();
        rc = ND_OK;
    }
    if (rc == ND_OK && read && s.nslot && sscanf(file, "%llu.sst%n", &number, &end) == 1 &&
        file[end] == '\0') {
        uint32_t slot = s.slot[slot_of(&s, number)];
        struct mf_family *f = slot && s.v[slot - 1].live ? family(&s, s.v[slot - 1].cf) : NULL;
        if (f && f->name[0] && strlen(f->name) < cap) {
            snprintf(out, cap, "%s", f->name);
            found = 1;
        }
    }
    free(s.v);
    free(s.slot);
    return rc < 0 ? rc : found;
}
