/*
 * in_files.c — each file is one document; directories are walked.
 *
 * The walk lists every regular file under the given path, depth first,
 * names in byte order, before reading any (so errors in the walk surface
 * at open). Symbolic links are followed, as `find -L` does: a link to a
 * file is a document keyed by the link's path, a link to a directory is
 * walked under the link's path. A directory met again inside itself (a
 * link to one of the directories being walked) would loop: it becomes an
 * entry that next_files reports as a bad record, at its place in the
 * order, and the walk goes on; so does a dangling link. Other kinds of
 * files (FIFOs, sockets, devices) inside a walk are not documents and are
 * skipped; a path given as the input is read whatever it is.
 *
 * One row of the format table (in_files.h). The reader's state is the
 * list the walk made; each file is read whole into the reader's buffer
 * (in_source.c's, without a source). Without a state the reader is a
 * stream the dispatcher opened and inferred no record format in: one
 * document, read through in_source.c (next_stream).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <neardup.h>

#include "in_files.h"

#include "in_source.h"
#include "in_text.h"

#define WALK_DEPTH_MAX 64

typedef struct file_entry {
    char *path;
    char *problem; /* NULL: a file to read; else reported when reached */
} file_entry;

/* The reader's state: every entry of the walk, and the next to read. */
typedef struct file_list {
    file_entry *v;
    size_t n, cap, next;
} file_list;

/* The directories on the way down from the walk's root: a directory that
 * is one of them again is a loop. */
typedef struct walk_dir {
    dev_t dev;
    ino_t ino;
    const char *path;
    const struct walk_dir *up;
} walk_dir;

static int add_entry(in_reader *r, const char *path, const char *problem)
{
    file_list *l = r->state;
    if (l->n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 64;
        file_entry *p = realloc(l->v, c * sizeof *p);
        if (!p) return in_fail_file(r, -2, path, "out of memory");
        l->v = p;
        l->cap = c;
    }
    file_entry *e = &l->v[l->n];
    e->path = strdup(path);
    e->problem = problem ? strdup(problem) : NULL;
    if (!e->path || (problem && !e->problem)) {
        free(e->path);
        free(e->problem);
        return in_fail_file(r, -2, path, "out of memory");
    }
    l->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(in_reader *r, const char *dir, const walk_dir *here, int depth);

/* One name inside a walked directory: follow links, sort out its kind. */
static int visit(in_reader *r, const char *path, const walk_dir *parent, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        char why[256];
        snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        return add_entry(r, path, why); /* a dangling link, or gone meanwhile */
    }
    if (S_ISREG(st.st_mode)) return add_entry(r, path, NULL);
    if (!S_ISDIR(st.st_mode)) return 0;
    for (const walk_dir *a = parent; a; a = a->up)
        if (a->dev == st.st_dev && a->ino == st.st_ino) {
            char why[1200];
            snprintf(why, sizeof why, "directory loop: leads back to '%s' (not walked again)", a->path);
            return add_entry(r, path, why);
        }
    walk_dir self = {st.st_dev, st.st_ino, path, parent};
    return walk(r, path, &self, depth + 1);
}

static int walk(in_reader *r, const char *dir, const walk_dir *here, int depth)
{
    if (depth > WALK_DEPTH_MAX)
        return in_fail_file(r, -2, dir, "directories nested deeper than %d", WALK_DEPTH_MAX);
    DIR *d = opendir(dir);
    if (!d) return in_fail_file(r, -2, dir, "cannot list: %s", strerror(errno));
    char **names = NULL;
    size_t n = 0, ncap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == ncap) {
            ncap = ncap ? ncap * 2 : 32;
            char **p = realloc(names, ncap * sizeof *p);
            if (!p) { rc = in_fail_file(r, -2, dir, "out of memory"); break; }
            names = p;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) { rc = in_fail_file(r, -2, dir, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (rc == 0 && n > 1) qsort(names, n, sizeof *names, cmp_str); /* names is NULL when empty */
    size_t dlen = strlen(dir);
    int slash = dlen && dir[dlen - 1] == '/';
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t len = dlen + strlen(names[i]) + 2;
        char *p = malloc(len);
        if (!p) { rc = in_fail_file(r, -2, dir, "out of memory"); break; }
        snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", names[i]);
        rc = visit(r, p, here, depth);
        free(p);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

static int open_files(in_reader *r, const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0) return in_fail_file(r, -2, "<stdin>", "format files needs paths, not stdin");
    if (!(r->state = calloc(1, sizeof(file_list)))) return in_fail_file(r, -2, path, "out of memory");
    if (stat(path, &st) != 0) return in_fail_file(r, -2, path, "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        walk_dir root = {st.st_dev, st.st_ino, path, NULL};
        return walk(r, path, &root, 0);
    }
    return add_entry(r, path, NULL);
}

static void close_files(in_reader *r)
{
    file_list *l = r->state;
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].problem);
    }
    free(l->v);
    free(l);
    r->state = NULL;
}

static int is_html_name(const char *p)
{
    const char *dot = strrchr(p, '.');
    return dot && (strcasecmp(dot, ".html") == 0 || strcasecmp(dot, ".htm") == 0 ||
                   strcasecmp(dot, ".xhtml") == 0);
}

/* Read the whole file at path into buf as the view r->line, r->len.
 * 1, or -1 (a message naming the file). */
static int read_file(in_reader *r, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return in_fail_file(r, -1, path, "cannot open: %s", strerror(errno));
    int rc = 1;
    size_t len = 0;
    for (;;) {
        if (len == r->buf_cap && in_buf_reserve(r, r->buf_cap ? r->buf_cap * 2 : 1)) {
            rc = in_fail_file(r, -2, path, "out of memory");
            break;
        }
        ssize_t got = read(fd, r->buf + len, r->buf_cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            rc = in_fail_file(r, -1, path, "read error: %s", strerror(errno));
            break;
        }
        if (got == 0) break;
        len += (size_t)got;
        if (len > ND_MAX_DOC_BYTES) {
            rc = in_fail_file(r, -1, path, "larger than the %u MiB document limit", ND_MAX_DOC_BYTES >> 20);
            break;
        }
    }
    close(fd);
    if (rc != 1) return rc;
    memset(r->buf + len, 0, IN_PAD + 1);
    r->line = r->buf;
    r->len = len;
    return 1;
}

/* A stream (stdin, a FIFO) of no record format, under inference: the
 * whole of it is one document, keyed by r->key, which the dispatcher set
 * ("-" for stdin, else the path); read through the source (decoded). */
static int next_stream(in_reader *r, in_record *rec)
{
    if (r->lineno) return 0;
    r->lineno = 1;
    int rc = in_read_all(r);
    if (rc != 1) return rc;
    rec->key = r->key;
    rec->key_len = strlen(r->key);
    rec->text = r->line;
    rec->text_len = r->len;
    rec->is_html = is_html_name(r->path);
    rec->line = 1;
    return 1;
}

static int next_files(in_reader *r, in_record *rec)
{
    file_list *l = r->state;
    if (!l) return next_stream(r, rec);
    if (l->next == l->n) return 0;
    const file_entry *e = &l->v[l->next++];
    r->lineno = l->next;
    if (e->problem) return in_fail_file(r, -1, e->path, "%s", e->problem);
    int rc = read_file(r, e->path);
    if (rc != 1) return rc;
    rec->key = e->path;
    rec->key_len = strlen(e->path);
    const char *kp = in_key_problem(rec->key, rec->key_len);
    if (kp) return in_fail_file(r, -1, e->path, "key: %s", kp);
    rec->text = r->line;
    rec->text_len = r->len;
    rec->is_html = is_html_name(e->path);
    rec->file = e->path;
    rec->line = r->lineno;
    return 1;
}

const in_format_ops in_files_format = {
    .name = "files", .open = open_files, .next = next_files, .close = close_files};
