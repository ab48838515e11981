/*
 * in_files.c — each file is one document; directories are walked.
 *
 * The walk lists every regular file under the given paths, depth first,
 * names in byte order, before reading any (so errors in the walk surface
 * at open). Symbolic links inside a walked directory are skipped, so a
 * link cycle cannot loop; a path given on the command line is followed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <neardup.h>

#include "in_internal.h"

static int add_file(in_reader *r, const char *path, size_t *cap)
{
    if (r->nfiles == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        char **p = realloc(r->files, c * sizeof *p);
        if (!p) return in_fail(r, -2, "out of memory");
        r->files = p;
        *cap = c;
    }
    r->files[r->nfiles] = strdup(path);
    if (!r->files[r->nfiles]) return in_fail(r, -2, "out of memory");
    r->nfiles++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(in_reader *r, const char *dir, size_t *cap, int depth)
{
    if (depth > 64) return in_fail(r, -2, "'%s': directories nested deeper than 64", dir);
    DIR *d = opendir(dir);
    if (!d) return in_fail(r, -2, "cannot list '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, ncap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == ncap) {
            ncap = ncap ? ncap * 2 : 32;
            char **p = realloc(names, ncap * sizeof *p);
            if (!p) { rc = in_fail(r, -2, "out of memory"); break; }
            names = p;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) { rc = in_fail(r, -2, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (rc == 0 && n > 1) qsort(names, n, sizeof *names, cmp_str); /* names is NULL when empty */
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *p = malloc(len);
        if (!p) { rc = in_fail(r, -2, "out of memory"); break; }
        snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (lstat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode)) rc = walk(r, p, cap, depth + 1);
            else if (S_ISREG(st.st_mode)) rc = add_file(r, p, cap);
        }
        free(p);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int in_files_open(in_reader *r, const char *path)
{
    struct stat st;
    size_t cap = 0;
    if (strcmp(path, "-") == 0) return in_fail(r, -2, "format files needs paths, not stdin");
    if (stat(path, &st) != 0) return in_fail(r, -2, "cannot open '%s': %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return walk(r, path, &cap, 0);
    return add_file(r, path, &cap);
}

void in_files_close(in_reader *r)
{
    for (size_t i = 0; i < r->nfiles; i++) free(r->files[i]);
    free(r->files);
    r->files = NULL;
    r->nfiles = 0;
}

static int is_html_name(const char *p)
{
    const char *dot = strrchr(p, '.');
    return dot && (strcasecmp(dot, ".html") == 0 || strcasecmp(dot, ".htm") == 0 ||
                   strcasecmp(dot, ".xhtml") == 0);
}

int in_next_files(in_reader *r, in_record *rec)
{
    if (r->next_file == r->nfiles) return 0;
    const char *path = r->files[r->next_file++];
    r->lineno = r->next_file;
    FILE *f = fopen(path, "rb");
    if (!f) return in_fail(r, -1, "cannot open '%s': %s", path, strerror(errno));
    r->len = 0;
    int rc = 1;
    for (;;) {
        if (r->len + 65536 + 1 > r->cap) {
            size_t c = r->cap ? r->cap * 2 : 131072;
            char *p = realloc(r->line, c);
            if (!p) { rc = in_fail(r, -2, "out of memory"); break; }
            r->line = p;
            r->cap = c;
        }
        size_t got = fread(r->line + r->len, 1, 65536, f);
        r->len += got;
        if (r->len > ND_MAX_DOC_BYTES) {
            rc = in_fail(r, -1, "'%s' is larger than the %u MiB document limit", path,
                         ND_MAX_DOC_BYTES >> 20);
            break;
        }
        if (got < 65536) {
            if (ferror(f)) rc = in_fail(r, -1, "reading '%s': %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc != 1) return rc;
    r->line[r->len] = '\0';
    rec->key = path;
    rec->key_len = strlen(path);
    const char *kp = in_key_problem(rec->key, rec->key_len);
    if (kp) return in_fail(r, -1, "key: %s", kp);
    rec->text = r->line;
    rec->text_len = r->len;
    rec->is_html = is_html_name(path);
    rec->file = path;
    rec->line = r->lineno;
    return 1;
}
