/*
 * cmp_repair.c — salvage of a damaged database in place, before the engine
 * rebuilds its tables (nd_db_repair, engine/bulk/db_repair.c). It works on
 * a closed database, through the key-value adapter and the table file
 * reader (cmp_sstfile.c) only. In order:
 *
 * 1. The logs are rewritten with their intact records (cmp_walfix.c).
 * 2. The database is opened as its manifest says (salvage mode): the
 *    logs' records are replayed into table files, every family is given a
 *    file of its own (a deleted empty key, so that RocksDB's repair keeps
 *    the family), and the live files of each family are listed.
 * 3. Every table file is read block by block (cmp_sst_mend): one whose
 *    data blocks are partly damaged is replaced by a copy without them
 *    (the original set aside in lost/), so that only those blocks'
 *    entries are lost, not the file; one that cannot be read at all (its
 *    index, footer or a meta block damaged) is set aside whole: RocksDB
 *    7.8 reads a file whose LZ4 index is damaged as if it held nothing. A live file that was written aside
 *    and ingested whole (a bulk load's documents, reverse entries and
 *    tables in a new generation, the tables' fresh keys and refolds, a
 *    resemblance store's band entries) is set aside too, as
 *    lost/ingested-NAME: RocksDB's repair cannot keep such a file (its
 *    properties name no family, and its sequence number lives in them)
 *    and set it aside as damage — a healthy store written by `import`
 *    came out of a repair empty (issue 44).
 * 4. RocksDB's repair (kv_repair) rebuilds the manifest from the files
 *    left, setting aside the files it cannot read whole.
 * 5. The ingested files go back into their families: in the order of
 *    their sequence numbers, the first below everything the family holds
 *    (where a new generation's file was: the bottom), the others above.
 *    Exact for the families a generation wrote (one file each, before any
 *    other write to them); for a table's fresh keys and refolds and the
 *    band entries, which the engine rebuilds anyway, the order among
 *    later writes is approximate.
 * 6. What lost/ then holds is told apart (lost_sort): logs replayed, files
 *    of no use (an intact manifest's MANIFESTs, files no family used),
 *    and damage — so that a healthy store's repair reports none.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmp_gen.h"
#include "cmp_kv.h"
#include "cmp_kv_files.h"
#include "cmp_layout.h"
#include "cmp_manifest.h"
#include "cmp_repair.h"
#include "cmp_repairdir.h"
#include "cmp_sstfile.h"
#include "cmp_synced.h"
#include "cmp_walfix.h"
#include "nd_error.h"

#define HELD "ingested-" /* prefix of a held file's name in lost/ */

typedef struct repair_file {
    char *name;   /* "000046.sst" */
    char *family; /* its family, as the manifest said */
    uint64_t seqno;
    int held;     /* set aside as lost/HELD NAME, to be ingested again */
    int shape;    /* found without a manifest, ST_CF_DOCS (a generation's
                   * documents) or ST_CF_SKETCH (a load's sketches) by its
                   * shape: its family is named once the families are made
                   * again; else -1 */
} repair_file;

typedef struct repair_state {
    const char *path;
    repair_file *v;
    size_t n, cap;
    const char *family; /* the family being listed */
    st_repair_info info;
    int orphan; /* the manifest cannot be trusted: RocksDB's repair rebuilds
                 * it, the families are made again from the OPTIONS file */
    int manifest_intact; /* read whole, though it may leave unused files out */
    char *bad; /* the table files found damaged or not readable here,
                * NUL-separated (lost_sort) */
    size_t badlen, badcap;
    char *unnamed; /* the table files an intact manifest does not name live */
    size_t unnamedlen;
    char *gone; /* held files left in lost/ of no use: their family is no
                 * longer there, or the rebuild makes it again (restore) */
    size_t gonelen, gonecap;
    char **families; /* the families the newest OPTIONS file names */
    size_t nfamilies;
} repair_state;

static void state_free(repair_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].family);
    }
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* The profile of the family named name (cmp_gen.c: what the store opens it with). */
static unsigned profile_of(const char *name)
{
    int cf = cmp_family_fixed(name);
    uint64_t gen;
    if (cf < 0 && !cmp_family_parse(name, &cf, &gen)) return CMP_PROFILE_SMALL;
    return cmp_gen_profile(cf);
}

static int open_all(kv_db **kv, const char *path, int behind, char ***names, size_t *n,
                    kv_cf ***cfs)
{
    *kv = NULL;
    *cfs = NULL;
    ND_FORWARD(kv_list_families(path, names, n));
    *cfs = calloc(*n, sizeof **cfs);
    unsigned *prof = calloc(*n, sizeof *prof);
    int rc = *cfs && prof ? ND_OK : nd_err_set(ND_ENOMEM, "repair: out of memory");
    for (size_t i = 0; rc == ND_OK && i < *n; i++) prof[i] = profile_of((*names)[i]);
    kv_open_opts o = {.salvage = 1, .ingest_behind = behind, .profiles = cmp_gen_profiles(),
                      .nprofiles = CMP_PROFILES};
    if (rc == ND_OK)
        rc = kv_open(kv, path, &o, *n, (const char *const *)*names, prof, *cfs);
    free(prof);
    return rc;
}

static void close_all(kv_db *kv, char **names, size_t n, kv_cf **cfs)
{
    for (size_t i = 0; cfs && kv && i < n; i++) kv_family_free(cfs[i]);
    kv_close(kv);
    free(cfs);
    kv_names_free(names, n);
}

static int list_file(void *payload, const kv_file *f)
{
    repair_state *s = payload;
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        repair_file *v = realloc(s->v, cap * sizeof *v);
        ND_RETURN_IF(!v, ND_ENOMEM, "repair: out of memory listing the files");
        s->v = v;
        s->cap = cap;
    }
    repair_file *r = &s->v[s->n];
    *r = (repair_file){strdup(base), s->family ? strdup(s->family) : NULL, 0, 0, -1};
    if (!r->name || (s->family && !r->family)) {
        free(r->name);
        free(r->family);
        return nd_err_set(ND_ENOMEM, "repair: out of memory listing the files");
    }
    s->n++;
    return ND_OK;
}

/* Step 2: replay what the log holds intact, skipping damaged records, into
 * every family's table files, give every family a file of its own (a
 * deleted empty key) so that kv_repair keeps it, and list the live files
 * of each family. Fails when the manifest is unreadable. */
static int salvage_log(repair_state *s)
{
    char **names = NULL;
    size_t n = 0;
    kv_db *kv = NULL;
    kv_cf **cfs = NULL;
    kv_batch *b = NULL;
    int rc = open_all(&kv, s->path, 0, &names, &n, &cfs);
    if (rc == ND_OK) rc = kv_batch_new(&b, 0);
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        if (!cfs[i]) continue; /* RocksDB's "default", which the repair keeps */
        kv_batch_clear(b);
        kv_batch_put(b, cfs[i], "", 0, "", 0);
        kv_batch_delete(b, cfs[i], "", 0);
        rc = kv_write(kv, b, 0);
        if (rc == ND_OK) rc = kv_flush(kv, cfs[i]);
    }
    for (size_t i = 0; rc == ND_OK && i < n; i++) {
        s->family = names[i];
        rc = kv_live_files(kv, names[i], list_file, s);
    }
    kv_batch_free(b);
    close_all(kv, names, n, cfs);
    return rc;
}

/* Append name to the NUL-separated names *v (*len bytes of *cap). */
static int note(char **v, size_t *len, size_t *cap, const char *name)
{
    size_t l = strlen(name) + 1;
    if (*len + l > *cap) {
        char *p = realloc(*v, *cap = 2 * *cap + l + 256);
        ND_RETURN_IF(!p, ND_ENOMEM, "repair: out of memory");
        *v = p;
    }
    memcpy(*v + *len, name, l);
    *len += l;
    return ND_OK;
}

/* Is name in the NUL-separated names v[0..len)? */
static int named_in(const char *v, size_t len, const char *name)
{
    for (size_t at = 0; at < len; at += strlen(v + at) + 1)
        if (strcmp(v + at, name) == 0) return 1;
    return 0;
}

static repair_file *find_file(repair_state *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0) return &s->v[i];
    return NULL;
}

/* Move from to to, unless to exists. */
static int move(const char *from, const char *to)
{
    struct stat st;
    ND_RETURN_IF(stat(to, &st) == 0, ND_EEXIST, "repair: %s exists: move it away first", to);
    ND_RETURN_IF(rename(from, to) != 0, ND_EIO, "repair: cannot move %s to %s: %s", from, to,
                 strerror(errno));
    return ND_OK;
}

/* Does a file ingested whole hold a generation's documents? Every entry a
 * put of 24 bytes (cmp_layout.h: docs); not all of 9-byte keys, which is
 * a table's shape (a run's value may be 24 bytes); reverse entries, band
 * entries and fresh keys have empty values. */
static int docs_like(const cmp_sst_info *i)
{
    return i->entries > 0 && i->deletions == 0 && i->value_bytes == 24 * i->entries &&
           i->key_bytes != (TBL_KEY_LEN + 8) * i->entries;
}

/* A file of puts of sketch values only: a resemblance store's load
 * (no other family has values of that length). */
static int sketch_like(const cmp_sst_info *i)
{
    return i->entries > 0 && i->deletions == 0 &&
           i->value_bytes == CMP_SKETCH_VALUE_LEN * i->entries;
}

/* A table file name lost entries: of which family, as the manifest
 * said (or, RocksDB could not open the store with it, as our own reading
 * of the MANIFEST says); a file of no known family may be anything, so
 * it counts as naming documents. The counters record is not to be
 * believed when only the meta family lost some (an older record comes
 * back). */
static void note_loss(repair_state *s, const char *name)
{
    repair_file *r = find_file(s, name);
    char fam[32] = "";
    int cf = -1;
    uint64_t gen;
    if (r && r->family) snprintf(fam, sizeof fam, "%s", r->family);
    else if (cmp_manifest_family_of(s->path, name, fam, sizeof fam) < 0) nd_err_clear();
    if (fam[0] && (cf = cmp_family_fixed(fam)) < 0 && !cmp_family_parse(fam, &cf, &gen)) cf = -1;
    if (cf == ST_CF_META) s->info.meta_lost = 1;
    else if (cf < 0 || cf == ST_CF_DOCS || cf == ST_CF_REV || cf == ST_CF_SKETCH)
        s->info.named_lost = 1;
}

/* Step 3 for the table file name: mended if partly damaged, held if it
 * was ingested whole into a family the manifest named. */
static int check_file(repair_state *s, const char *name)
{
    size_t len = strlen(s->path) + strlen(name) + 32;
    char *file = malloc(len), *tmp = malloc(len), *lost = malloc(len);
    int rc = file && tmp && lost ? ND_OK : nd_err_set(ND_ENOMEM, "repair: out of memory");
    if (rc < 0) goto cleanup;
    snprintf(file, len, "%s/%s", s->path, name);
    snprintf(tmp, len, "%s/%s.mend", s->path, name);
    cmp_sst_info info;
    int ok = cmp_sst_mend(file, tmp, &info);
    ND_TRY(ok);
    rc = ND_OK;
    struct stat st;
    /* an entry takes more than 8 bytes of a file (a key and its trailer) */
    if (ok && info.entries) s->info.entries_bound += info.entries;
    else if (stat(file, &st) == 0) s->info.entries_bound += (uint64_t)st.st_size / 8;
    /* not read here: RocksDB's repair decides (and what it sets aside of
     * such a file is damage) */
    int lost_entries = !ok || ok == CMP_SST_DAMAGED || info.bad_blocks;
    if (lost_entries || info.bad_filter) ND_TRY(note(&s->bad, &s->badlen, &s->badcap, name));
    if (lost_entries) note_loss(s, name);
    if (!ok) goto cleanup;
    if (ok == CMP_SST_DAMAGED) { /* nothing to keep; RocksDB 7.8 may misread it */
        snprintf(lost, len, "%s/lost/%s", s->path, name);
        ND_TRY(move(file, lost));
        s->info.files_damaged++;
        goto cleanup;
    }
    if (info.bad_blocks || info.bad_filter) {
        snprintf(lost, len, "%s/lost/%s", s->path, name);
        ND_TRY(move(file, lost));
        ND_TRY(move(tmp, file));
        s->info.files_mended++;
        s->info.blocks_cut += info.bad_blocks;
    }
    repair_file *r = find_file(s, name);
    int shape = docs_like(&info) ? ST_CF_DOCS : sketch_like(&info) ? ST_CF_SKETCH : -1;
    if (info.external && !r && s->orphan && shape >= 0) {
        /* its family is named once the families are made again */
        kv_file f = {.path = name};
        s->family = NULL;
        ND_TRY(list_file(s, &f));
        r = &s->v[s->n - 1];
        r->shape = shape;
    }
    if (info.external && r) {
        snprintf(lost, len, "%s/lost/" HELD "%s", s->path, name);
        ND_TRY(move(file, lost));
        r->held = 1;
        r->seqno = info.global_seqno;
    }
cleanup:
    if (rc < 0 && tmp) remove(tmp);
    free(file);
    free(tmp);
    free(lost);
    return rc;
}

static int check_files(repair_state *s)
{
    char lost[4200];
    snprintf(lost, sizeof lost, "%s/lost", s->path);
    if (mkdir(lost, 0755) != 0 && errno != EEXIST)
        return nd_err_set(ND_EIO, "repair: cannot make %s: %s", lost, strerror(errno));
    DIR *d = opendir(s->path);
    if (!d) return nd_err_set(ND_EIO, "repair: cannot list %s: %s", s->path, strerror(errno));
    int rc = ND_OK;
    for (struct dirent *e; rc == ND_OK && (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".sst") == 0) rc = check_file(s, e->d_name);
        struct stat st;
        char file[4200];
        snprintf(file, sizeof file, "%s/%s", s->path, e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".log") == 0 && stat(file, &st) == 0)
            s->info.entries_bound += (uint64_t)st.st_size / 8;
    }
    closedir(d);
    return rc;
}

/* Put the held files back where they were (a failed check of the files). */
static void unhold(repair_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (!s->v[i].held) continue;
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/lost/" HELD "%s", s->path, s->v[i].name);
        snprintf(to, sizeof to, "%s/%s", s->path, s->v[i].name);
        if (rename(from, to) == 0) s->v[i].held = 0;
    }
}

/* Step 4b, the manifest lost: make again the families of the current
 * generation (and sketch, band) that the newest OPTIONS file names and
 * RocksDB's repair did not make (no file it kept names them: all of
 * theirs were ingested whole), empty; name the generation's documents
 * family as that of the documents files held, and the sketch family as
 * that of a load's sketch files. The tables, reverse and
 * band entries of files ingested whole stay in lost/: nd_db_repair
 * rebuilds them from the documents. */
static int refamily(repair_state *s)
{
    char **names = NULL;
    size_t n = 0;
    kv_db *kv = NULL;
    kv_cf **cfs = NULL;
    uint64_t gen = 0, keyed = 0;
    int rc = open_all(&kv, s->path, 0, &names, &n, &cfs), have_docs = 0, have_sketch = 0;
    char docs[32];
    for (size_t i = 0; rc == ND_OK && i < n; i++)
        if (cmp_family_fixed(names[i]) == ST_CF_META)
            rc = cmp_gen_read(kv, cfs[i], s->path, &gen, &keyed);
    cmp_family_name(docs, ST_CF_DOCS, keyed);
    for (size_t i = 0; rc == ND_OK && i < s->nfamilies; i++) {
        const char *f = s->families[i];
        int cf, known = 0;
        uint64_t g;
        if (cmp_family_fixed(f) < 0 &&
            !(cmp_family_parse(f, &cf, &g) && g == CMP_FAMILY_GEN(cf, gen, keyed)))
            continue;
        for (size_t j = 0; j < n && !known; j++) known = strcmp(names[j], f) == 0;
        if (!known) {
            kv_cf *c = NULL;
            rc = kv_family_create(kv, f, profile_of(f), &c);
            kv_family_free(c);
        }
        have_docs |= strcmp(f, docs) == 0;
        have_sketch |= cmp_family_fixed(f) == ST_CF_SKETCH;
    }
    for (size_t j = 0; j < n; j++) {
        have_docs |= strcmp(names[j], docs) == 0;
        have_sketch |= cmp_family_fixed(names[j]) == ST_CF_SKETCH;
    }
    for (size_t i = 0; rc == ND_OK && i < s->n; i++) {
        repair_file *r = &s->v[i];
        const char *name = r->shape == ST_CF_DOCS && have_docs ? docs
                           : r->shape == ST_CF_SKETCH && have_sketch
                               ? cmp_family_fixed_name(ST_CF_SKETCH)
                               : NULL;
        if (name && r->held && !r->family && !(r->family = strdup(name)))
            rc = nd_err_set(ND_ENOMEM, "repair: out of memory");
    }
    close_all(kv, names, n, cfs);
    return rc;
}

/* Is family name one nd_db_repair makes again from the documents (a
 * table, the reverse entries, the band entries)? A file of it that cannot
 * be put back is then no loss: RocksDB refuses to ingest again a file
 * whose global sequence number it wrote in place (an import's above
 * earlier files: "have global seqno property ... while largest seqno in
 * the file is 0"). */
static int rebuilt_family(const char *name)
{
    int cf = cmp_family_fixed(name);
    uint64_t gen;
    if (cf < 0 && !cmp_family_parse(name, &cf, &gen)) return 0;
    return cf == ST_CF_REV || cf == ST_CF_BAND || ST_CF_IS_TABLE(cf);
}

static int by_seqno(const void *a, const void *b)
{
    const repair_file *x = a, *y = b;
    int c = strcmp(x->family ? x->family : "", y->family ? y->family : "");
    return c ? c : x->seqno < y->seqno ? -1 : x->seqno > y->seqno;
}

/* Step 5: ingest the held files again, each family's in sequence order,
 * the first below all (else above), the others above. A file RocksDB
 * refuses stays in lost/. */
static int restore(repair_state *s)
{
    size_t held = 0;
    for (size_t i = 0; i < s->n; i++) held += s->v[i].held && s->v[i].family;
    if (!held) return ND_OK;
    qsort(s->v, s->n, sizeof *s->v, by_seqno);
    char **names = NULL;
    size_t n = 0;
    kv_db *kv = NULL;
    kv_cf **cfs = NULL;
    int rc = open_all(&kv, s->path, 1, &names, &n, &cfs);
    const char *family = NULL;
    for (size_t i = 0; rc == ND_OK && i < s->n; i++) {
        repair_file *r = &s->v[i];
        if (!r->held || !r->family) continue;
        int first = !family || strcmp(family, r->family) != 0;
        family = r->family;
        kv_cf *cf = NULL;
        for (size_t j = 0; j < n; j++)
            if (strcmp(names[j], r->family) == 0) cf = cfs[j];
        if (!cf) { /* its family is gone: the file stays in lost/ */
            rc = note(&s->gone, &s->gonelen, &s->gonecap, r->name);
            continue;
        }
        char file[4200];
        snprintf(file, sizeof file, "%s/lost/" HELD "%s", s->path, r->name);
        const char *files[1] = {file};
        int ing = first ? kv_ingest_behind(kv, cf, files, 1, "restoring an ingested file") : -1;
        if (ing < 0) ing = kv_ingest(kv, cf, files, 1, "restoring an ingested file");
        if (ing == ND_OK) s->info.files_restored++;
        else if (ing == ND_ENOMEM || ing == ND_ENOSPC || ing == ND_EIO) rc = ing;
        else { /* refused: it stays set aside; of no use if the rebuild makes it again */
            nd_err_clear();
            if (rebuilt_family(r->family)) rc = note(&s->gone, &s->gonelen, &s->gonecap, r->name);
        }
    }
    close_all(kv, names, n, cfs);
    return rc;
}

/* The names in path/lost/, NUL-separated in one buffer (*out, *len; NULL
 * when there is no lost/), to tell what RocksDB's repair moves there. */
static int lost_names(const char *path, char **out, size_t *len)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/lost", path);
    *out = NULL;
    *len = 0;
    DIR *d = opendir(dir);
    if (!d) return ND_OK;
    size_t cap = 0;
    int rc = ND_OK;
    for (struct dirent *e; rc == ND_OK && (e = readdir(d));) {
        size_t l = strlen(e->d_name) + 1;
        if (*len + l > cap) {
            char *p = realloc(*out, cap = 2 * cap + l + 256);
            if (!p) rc = nd_err_set(ND_ENOMEM, "repair: out of memory");
            else *out = p;
        }
        if (rc == ND_OK) memcpy(*out + *len, e->d_name, l), *len += l;
    }
    closedir(d);
    return rc;
}

/* After the checks of the files or RocksDB's repair failed (a full or
 * failing disk: the write of its new MANIFEST): files set aside were in
 * lost/, RocksDB had moved the MANIFESTs there too, and CURRENT named one
 * no longer there: the store no longer opened (fault_sweep: repair, EIO
 * at call 1). Move back what was moved (every name in lost/ not in
 * before[0..len) but the held files, unhold's), so that the store is as
 * it was and a new repair can start again. */
static void unarchive(const char *path, const char *before, size_t len)
{
    char dir[4200], from[4600], to[4600];
    snprintf(dir, sizeof dir, "%s/lost", path);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, HELD, strlen(HELD)) == 0) continue;
        int known = named_in(before, len, e->d_name);
        struct stat st;
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", path, e->d_name);
        if (!known && stat(to, &st) != 0) (void)rename(from, to);
    }
    closedir(d);
    if (!before) (void)rmdir(dir); /* made by RocksDB's repair: gone if empty */
}

/* Step 6: sort what lost/ holds that was not there before (before[0..len),
 * lost_names'), into s->info's lost_* counts. A log was replayed (its
 * damaged records cut out before, cmp_walfix.c: they count as dropped
 * documents, not as a file). A MANIFEST is damage only when it could not
 * be read whole; else RocksDB's repair only replaced it (also when it
 * left out files no family used, which makes the salvage distrust it). A
 * table file is damage when it was found damaged or could not be read
 * here (check_file), unless an intact MANIFEST did not name it (of no
 * use, whatever its bytes); an intact one RocksDB's repair set aside belonged to
 * no family it keeps: of no use (a dropped generation's; without a
 * manifest, a table the rebuild makes again). A file ingested whole
 * still there is of no use when its family is gone or is one the rebuild
 * makes again (restore), else it was not put back: damage, its entries
 * lost. */
static void lost_sort(repair_state *s, const char *before, size_t len)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/lost", s->path);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        size_t l = strlen(name);
        if (name[0] == '.' || named_in(before, len, name)) continue;
        if (l > 4 && strcmp(name + l - 4, ".log") == 0) s->info.lost_logs++;
        else if (strncmp(name, "MANIFEST-", 9) == 0) {
            if (s->manifest_intact) s->info.lost_unused++;
            else s->info.lost_damaged++;
        } else if (strncmp(name, HELD, strlen(HELD)) == 0) {
            if (named_in(s->gone, s->gonelen, name + strlen(HELD))) s->info.lost_unused++;
            else s->info.lost_damaged++; /* not put back: its entries are lost */
        } else if (l > 4 && strcmp(name + l - 4, ".sst") == 0 &&
                   (named_in(s->unnamed, s->unnamedlen, name) ||
                    !named_in(s->bad, s->badlen, name)))
            s->info.lost_unused++;
        else s->info.lost_damaged++;
    }
    closedir(d);
}

int st_repair(const char *path, st_repair_info *info)
{
    int probe = kv_probe(path), mended = 0;
    ND_RETURN_IF(probe != 1 && probe != 3, ND_ENOTFOUND, "%s is not a database", path);
    repair_state s = {.path = path};
    s.info.synced_docs = CMP_SYNCED_NO_DOCS;
    /* The last synced write's documents, acknowledged: what is not found
     * again counts as lost. A damaged record tells nothing. */
    cmp_synced_rec synced;
    int have_synced = 0;
    if (cmp_synced_read(path, &synced, &have_synced) < 0) nd_err_clear();
    if (have_synced) {
        s.info.synced_docs = synced.docs;
        s.info.synced_seq = synced.seq;
    }
    /* Before any open: RocksDB's writes a new OPTIONS file naming only
     * the families it opened. */
    int rc = cmp_options_families(path, &s.families, &s.nfamilies);
    /* CURRENT lost or damaged: the newest MANIFEST is intact. */
    if (rc == ND_OK) rc = cmp_current_mend(path, &mended);
    /* RocksDB's reader would drop the rest of a block after a damaged
     * record: give it logs whose damage is cut out. */
    if (rc == ND_OK) rc = cmp_wal_resync(path, &s.info.log_records_dropped);
    /* A manifest damaged or cut is not opened: RocksDB would delete every
     * table file its view does not name. */
    int whole = rc == ND_OK ? cmp_manifest_whole(path, &s.manifest_intact) : 0;
    if (whole < 0) rc = whole;
    s.orphan = !whole;
    if (rc == ND_OK && !whole && s.manifest_intact)
        rc = cmp_manifest_unnamed(path, &s.unnamed, &s.unnamedlen);
    /* A failed salvage leaves all to the repair, as a lost manifest. */
    if (rc == ND_OK && whole && salvage_log(&s) < 0) {
        nd_err_clear();
        state_free(&s);
        s.orphan = 1;
    }
    char *lost = NULL;
    size_t nlost = 0;
    if (rc == ND_OK) rc = lost_names(path, &lost, &nlost);
    if (rc == ND_OK) rc = check_files(&s);
    if (rc == ND_OK) rc = kv_repair(path);
    if (rc < 0) { /* as they were, for another try */
        unhold(&s);
        unarchive(path, lost, nlost);
    }
    if (rc == ND_OK && s.orphan) rc = refamily(&s);
    if (rc == ND_OK) rc = restore(&s);
    if (rc == ND_OK) lost_sort(&s, lost, nlost);
    free(lost);
    /* The loss is accepted: the store opens again as it now is. */
    if (rc == ND_OK) rc = cmp_synced_remove(path);
    if (info) *info = s.info;
    state_free(&s);
    free(s.bad);
    free(s.unnamed);
    free(s.gone);
    cmp_options_families_free(s.families, s.nfamilies);
    return rc;
}

int st_remove_store(const char *path) { return kvdir_remove_store(path); }
