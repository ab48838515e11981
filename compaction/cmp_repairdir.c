/*
 * cmp_repairdir.c — what a repair reads from a damaged store's directory
 * as plain files, when its MANIFEST or CURRENT cannot be trusted
 * (cmp_repairdir.h says who calls it).
 *
 * CURRENT is one line naming the MANIFEST in use. One flipped byte, a cut
 * or a deletion loses only that name: the MANIFEST itself is intact, and
 * is the newest one in the directory (RocksDB writes a new MANIFEST, then
 * CURRENT, then deletes the old one). So CURRENT is written again naming
 * it, and the repair goes on exactly as for an intact store.
 *
 * A MANIFEST lost or damaged loses which family each table file belongs
 * to. A file RocksDB wrote names its family in its properties, and
 * RocksDB's repair puts it back; a file written aside and ingested whole
 * names none. The families themselves are also listed in RocksDB's
 * OPTIONS files, written at each open and each family made or dropped
 * (the newest one lists the families the store had last): the repair
 * makes again those its table files no longer name, and puts the
 * documents of the ingested files back (cmp_repair.c).
 */
#include "cmp_repairdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nd_error.h"

/* The highest N of the files PREFIX-N (decimal) in path, into *out; 0 if
 * there is none. */
static int newest(const char *path, const char *prefix, unsigned long long *out)
{
    size_t plen = strlen(prefix);
    *out = 0;
    DIR *d = opendir(path);
    if (!d) return nd_err_set(ND_EIO, "repair: cannot list %s: %s", path, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        unsigned long long n;
        int end = 0;
        if (strncmp(e->d_name, prefix, plen) != 0) continue;
        if (sscanf(e->d_name + plen, "%llu%n", &n, &end) != 1 || e->d_name[plen + end] != '\0')
            continue;
        if (!found || n > *out) *out = n;
        found = 1;
    }
    closedir(d);
    return found;
}

int cmp_current_mend(const char *path, int *mended)
{
    char file[4200], tmp[4200], text[64] = "", want[64];
    unsigned long long n;
    *mended = 0;
    int found = newest(path, "MANIFEST-", &n);
    if (found <= 0) return found < 0 ? found : ND_OK; /* no MANIFEST: nothing to name */
    snprintf(want, sizeof want, "MANIFEST-%06llu\n", n);
    snprintf(file, sizeof file, "%s/CURRENT", path);
    FILE *f = fopen(file, "rb");
    if (f) {
        size_t got = fread(text, 1, sizeof text - 1, f);
        text[got] = '\0';
        fclose(f);
    }
    if (strcmp(text, want) == 0) return ND_OK;
    /* Another name than the newest MANIFEST's, yet one that exists: RocksDB
     * judges it (an older MANIFEST left behind is not ours to prefer). */
    struct stat st;
    char named[4200];
    size_t len = strlen(text);
    if (len > 10 && text[len - 1] == '\n' && strncmp(text, "MANIFEST-", 9) == 0) {
        snprintf(named, sizeof named, "%s/%.*s", path, (int)(len - 1), text);
        if (stat(named, &st) == 0) return ND_OK;
    }
    snprintf(tmp, sizeof tmp, "%s/CURRENT.repair", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return nd_err_set(ND_EIO, "repair: cannot create %s: %s", tmp, strerror(errno));
    len = strlen(want);
    int ok = write(fd, want, len) == (ssize_t)len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, file) != 0) {
        int e = errno;
        unlink(tmp);
        return nd_err_set(ND_EIO, "repair: cannot write %s: %s", file, strerror(e));
    }
    *mended = 1;
    return ND_OK;
}

static int add_name(char ***v, size_t *n, const char *name, size_t len)
{
    char **w = realloc(*v, (*n + 1) * sizeof *w);
    ND_RETURN_IF(!w, ND_ENOMEM, "repair: out of memory reading the OPTIONS file");
    *v = w;
    ND_RETURN_IF(!(w[*n] = strndup(name, len)), ND_ENOMEM,
                 "repair: out of memory reading the OPTIONS file");
    (*n)++;
    return ND_OK;
}

int cmp_options_families(const char *path, char ***out, size_t *n)
{
    static const char tag[] = "[CFOptions \"";
    char file[4200], line[512];
    unsigned long long num;
    *out = NULL;
    *n = 0;
    int found = newest(path, "OPTIONS-", &num);
    if (found <= 0) return found < 0 ? found : ND_OK;
    snprintf(file, sizeof file, "%s/OPTIONS-%06llu", path, num);
    FILE *f = fopen(file, "r");
    if (!f) return ND_OK; /* unreadable: no families known from it */
    int rc = ND_OK;
    while (rc == ND_OK && fgets(line, sizeof line, f)) {
        if (strncmp(line, tag, sizeof tag - 1) != 0) continue;
        const char *name = line + sizeof tag - 1, *end = strchr(name, '"');
        if (end && end > name) rc = add_name(out, n, name, (size_t)(end - name));
    }
    fclose(f);
    if (rc < 0) {
        cmp_options_families_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void cmp_options_families_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}
