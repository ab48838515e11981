/*
 * cmp_kvdir.c — a RocksDB database directory seen as plain files: the
 * MANIFEST's state, a secondary reader's scratch directory, a killed
 * checkpoint's leftovers (cmp_kvdir.h says why).
 */
#include "cmp_kvdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

char *kvdir_scratch_make(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
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

void kvdir_scratch_remove(char *dir)
{
    if (!dir) return;
    if (remove_files(dir, NULL) == 0) (void)rmdir(dir);
    free(dir);
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

int kvdir_remove_stale_checkpoint(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    if (remove_files(dir, checkpoint_file) != 0) return 0;
    return rmdir(dir) == 0;
}
