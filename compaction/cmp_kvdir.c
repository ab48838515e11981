/*
 * cmp_kvdir.c — a RocksDB database directory seen as plain files: the
 * MANIFEST's state, a secondary reader's scratch directory, an unwanted
 * checkpoint (cmp_kvdir.h says why).
 */
#include "cmp_kvdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nd_error.h"

#ifndef ND_ROCKSDB_MAJOR /* meson defines both from rocksdb's pkg-config version */
#define ND_ROCKSDB_MAJOR 0
#define ND_ROCKSDB_MINOR 0
#endif

void kvdir_manifest_state(const char *path, char *buf, size_t cap)
{
    char name[256] = "", file[4096];
    struct stat st;
    buf[0] = '\0';
    snprintf(file, sizeof file, "%s/CURRENT", path);
    FILE *f = fopen(file, "r");
    if (!f) return;
    int got = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    if (!got || !name[0]) return;
    snprintf(file, sizeof file, "%s/%s", path, name);
    if (stat(file, &st) != 0) return;
    snprintf(buf, cap, "%s %lld", name, (long long)st.st_size);
}

/* Attempts at a whole view before the open gives up. */
#define KVDIR_TRIES 40

int kvdir_next_try(const char *path, int i, char *before, size_t cap)
{
    if (i >= KVDIR_TRIES) return 0;
    if (i) usleep(1000u * (unsigned)(i < 10 ? i : 10));
    kvdir_manifest_state(path, before, cap);
    return 1;
}

int kvdir_settled(const char *path, const char *before, char *view, size_t cap)
{
    kvdir_manifest_state(path, view, cap);
    return before[0] && strcmp(before, view) == 0;
}

int kvdir_busy(const char *path)
{
    return nd_err_set(ND_EBUSY,
                      "%s: a writer changed the database throughout %d attempts to read a "
                      "consistent view of it; try again",
                      path, KVDIR_TRIES);
}

/* The pid holding a write lock on path/LOCK, or 0 when none can be named
 * (no lock file, no lock, or one without a pid: an open file description
 * lock). Another process's only: F_GETLK never reports the caller's. */
static long lock_holder(const char *path)
{
    char file[4096];
    if ((size_t)snprintf(file, sizeof file, "%s/LOCK", path) >= sizeof file) return 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    long pid = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid > 0 ? (long)fl.l_pid : 0;
    close(fd);
    return pid;
}

int kvdir_locked(const char *path, int self)
{
    if (self)
        return nd_err_set(ND_EBUSY, "%s is open for writing by this process (another handle)", path);
    long pid = lock_holder(path);
    if (pid > 0)
        return nd_err_set(ND_EBUSY, "%s is open for writing by another process (pid %ld)", path, pid);
    return nd_err_set(ND_EBUSY, "%s is open for writing by another process", path);
}

char *kvdir_scratch_make(const char *parent)
{
    const char *tmp = parent && *parent ? parent : "/tmp";
    size_t len = strlen(tmp) + 32;
    char *dir = malloc(len);
    if (!dir) return NULL;
    snprintf(dir, len, "%s/neardup-reader-XXXXXX", tmp);
    if (mkdtemp(dir)) return dir;
    int e = errno;
    free(dir);
    errno = e;
    return NULL;
}

/* Remove the regular files of dir that keep() accepts (NULL: all); 0
 * when dir held nothing else. */
static int remove_files(const char *dir, int (*keep)(const char *name))
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int others = 0;
    struct dirent *e;
    char file[4096];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        if (lstat(file, &st) != 0 || !S_ISREG(st.st_mode) || (keep && !keep(e->d_name)))
            others = 1;
    }
    if (!others) {
        rewinddir(d);
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
            (void)unlink(file);
        }
    }
    closedir(d);
    return others ? -1 : 0;
}

void kvdir_scratch_remove(const char *dir)
{
    if (dir && remove_files(dir, NULL) == 0) (void)rmdir(dir);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A file name RocksDB's checkpoint writes. */
static int checkpoint_file(const char *name)
{
    static const char *const prefixes[] = {"MANIFEST-", "OPTIONS-", "CURRENT", "IDENTITY"};
    static const char *const suffixes[] = {".sst", ".log", ".tmp", ".dbtmp", ".blob"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (ends_with(name, suffixes[i])) return 1;
    return 0;
}

int kvdir_remove_checkpoint(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    if (remove_files(dir, checkpoint_file) != 0) return 0;
    return rmdir(dir) == 0;
}

/* What a closed store's directory holds: a checkpoint's names, and the
 * lock and info logs of a store that was open. */
static int store_file(const char *name)
{
    return checkpoint_file(name) || strcmp(name, "LOCK") == 0 || strcmp(name, "LOG") == 0 ||
           strcmp(name, "SYNCED") == 0 ||
           strncmp(name, "LOG.old.", 8) == 0;
}

int kvdir_remove_store(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    if (remove_files(dir, store_file) != 0) return 0;
    return rmdir(dir) == 0;
}

void kv_version(unsigned *major, unsigned *minor)
{
    *major = ND_ROCKSDB_MAJOR;
    *minor = ND_ROCKSDB_MINOR;
}

static int has_suffix(const char *n, const char *suffix)
{
    size_t len = strlen(n), sl = strlen(suffix);
    return len > sl && !strcmp(n + len - sl, suffix);
}

/* A name RocksDB itself writes while it creates a database, before
 * CURRENT (the write-ahead log and table files come after it): a
 * directory holding only such names is a creation that did not finish (a
 * crash), not somebody else's files. */
static int creation_name(const char *n)
{
    static const char *const exact[] = {"LOCK", "IDENTITY", "LOG"};
    static const char *const prefix[] = {"LOG.old.", "MANIFEST-", "OPTIONS-"};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(n, exact[i]) || !strncmp(n, prefix[i], strlen(prefix[i]))) return 1;
    return has_suffix(n, ".dbtmp");
}

int kv_probe(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return -1;
    /* No allocation: one that failed would read as "no database" (and an
     * open of a store then as ND_ENOTFOUND, not ND_ENOMEM). */
    int dfd = open(path, O_RDONLY | O_DIRECTORY);
    if (dfd < 0) return 0;
    if (fstatat(dfd, "CURRENT", &st, 0) == 0) {
        close(dfd);
        return 1;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    int foreign = 0, data = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (!strcmp(n, ".") || !strcmp(n, "..") || creation_name(n)) continue;
        if (has_suffix(n, ".sst") || has_suffix(n, ".log")) data = 1;
        else foreign = 1;
    }
    closedir(d); /* closes dfd */
    return data ? 3 : foreign ? 2 : 0;
}

int kvdir_open_check(const char *path, int create, int excl, int readonly, int *exists)
{
    int state = kv_probe(path);
    *exists = state == 1;
    if (state < 0 && create)
        return nd_err_set(ND_EEXIST, "'%s' already exists and is not a directory", path);
    if (state < 0) return nd_err_set(ND_EINVAL, "%s exists and is not a directory", path);
    if (state == 1 && create && excl)
        return nd_err_set(ND_EEXIST, "database %s already exists", path);
    if (state == 2 && create)
        return nd_err_set(ND_EEXIST, "'%s' already exists and is not empty (a database is "
                          "created in a new or empty directory)", path);
    if (state == 3)
        return nd_err_set(ND_ECORRUPT, "%s holds a database's files but no CURRENT: a damaged "
                          "database, which `neardup repair` salvages", path);
    if (state != 1 && (!create || readonly))
        return nd_err_set(ND_ENOTFOUND, "no database at %s", path);
    return ND_OK;
}

int kvdir_make(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return ND_OK;
    return nd_err_set(errno == EACCES || errno == EROFS ? ND_EREADONLY
                      : errno == ENOSPC                 ? ND_ENOSPC
                      : errno == ENOENT                 ? ND_ENOTFOUND
                                                        : ND_EIO,
                      "cannot create database directory %s: %s", path, strerror(errno));
}
