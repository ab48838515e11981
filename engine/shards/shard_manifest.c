/*
 * shard_manifest.c — read, write and apply the manifest of a sharded store
 * (format described in shard_manifest.h).
 *
 * The parser is strict: every line of version 1 must be present, in order,
 * with a value in range; anything else is refused with the file and line.
 * A reader that accepted unknown lines could silently place documents by a
 * rule it does not know, so an unknown rule or version is an error.
 */
#include "shard_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nd_error.h"

uint64_t shard_hash(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

unsigned shard_of(const shard_manifest *m, const void *key, size_t len)
{
    return (unsigned)(shard_hash(key, len) % m->shards);
}

int shard_path(char *out, size_t cap, const char *dir, unsigned s)
{
    int n = snprintf(out, cap, "%s/shard-%03u", dir, s);
    ND_RETURN_IF(n < 0 || (size_t)n >= cap, ND_ELIMIT, "path of shard %u under '%.60s' too long",
                 s, dir);
    return ND_OK;
}

int shard_manifest_format(char *out, size_t cap, const shard_manifest *m)
{
    int n = snprintf(out, cap,
                     "neardup-shards %u\n"
                     "shards %u\n"
                     "assign " SHARD_ASSIGN_RULE "\n"
                     "k %u\n"
                     "tables %u\n"
                     "docs %" PRIu64 "\n"
                     "fingerprint %s\n"
                     "format %u\n"
                     "fp-version %u\n",
                     m->version, m->shards, m->k, m->tables, m->docs, m->fp_config,
                     m->format, m->fp_version);
    if (n >= 0 && (size_t)n < cap && m->min_resemblance > 0)
        n += snprintf(out + n, cap - (size_t)n, "resemblance sketch%u;r=%.17g\n",
                      ND_SKETCH_VERSION, m->min_resemblance);
    ND_RETURN_IF(n < 0 || (size_t)n >= cap, ND_ELIMIT, "manifest larger than %zu bytes", cap);
    return n;
}

/* A manifest that does not parse: ND_ECORRUPT with the message. */
#define fail(...) nd_err_set(ND_ECORRUPT, __VA_ARGS__)

/* A whole number in [lo, hi] -> 0. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int shard_manifest_parse(shard_manifest *out, const char *text, size_t len, const char *name)
{
    static const char *const names[] = {"neardup-shards", "shards", "assign", "k",
                                        "tables", "docs", "fingerprint", "format",
                                        "fp-version"};
    enum { NFIELDS = sizeof names / sizeof names[0] };
    shard_manifest m;
    memset(&m, 0, sizeof m);
    size_t pos = 0;
    unsigned line = 0;
    for (unsigned f = 0; f < NFIELDS; f++) {
        char buf[512];
        line++;
        if (pos >= len)
            return fail("%s:%u: ends early: missing '%s'", name, line, names[f]);
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
        if (l >= sizeof buf) return fail("%s:%u: line too long", name, line);
        memcpy(buf, text + pos, l);
        buf[l] = '\0';
        if (memchr(buf, '\0', l))
            return fail("%s:%u: NUL byte", name, line);
        pos += l + (nl ? 1 : 0);
        size_t nlen = strlen(names[f]);
        if (strncmp(buf, names[f], nlen) != 0 || buf[nlen] != ' ')
            return fail("%s:%u: expected '%s VALUE', got '%.60s'", name, line,
                        names[f], buf);
        const char *v = buf + nlen + 1;
        uint64_t x;
        switch (f) {
        case 0:
            if (parse_u64(v, 1, UINT32_MAX, &x))
                return fail("%s:%u: neardup-shards: not a version", name, line);
            if (x != SHARD_MANIFEST_VERSION)
                return nd_err_set(ND_EVERSION, "%s:%u: manifest version %" PRIu64
                                  ", this build reads %u", name, line, x, SHARD_MANIFEST_VERSION);
            m.version = (unsigned)x;
            break;
        case 1:
            if (parse_u64(v, 1, SHARD_MAX, &x))
                return fail("%s:%u: shards: must be 1..%u", name, line, SHARD_MAX);
            m.shards = (unsigned)x;
            break;
        case 2:
            if (strcmp(v, SHARD_ASSIGN_RULE) != 0)
                return nd_err_set(ND_EVERSION, "%s:%u: assign: unknown rule '%.60s' (this "
                                  "build knows " SHARD_ASSIGN_RULE ")", name, line, v);
            break;
        case 3:
            if (parse_u64(v, 0, ND_MAX_PLAN_K, &x))
                return fail("%s:%u: k: must be 0..%u", name, line, ND_MAX_PLAN_K);
            m.k = (unsigned)x;
            break;
        case 4:
            if (parse_u64(v, 1, ND_MAX_TABLES, &x))
                return fail("%s:%u: tables: must be 1..%u", name, line, ND_MAX_TABLES);
            m.tables = (unsigned)x;
            break;
        case 5:
            if (parse_u64(v, 1, UINT64_MAX, &x))
                return fail("%s:%u: docs: not a positive number", name, line);
            m.docs = x;
            break;
        case 6:
            if (!*v || strlen(v) >= sizeof m.fp_config)
                return fail("%s:%u: fingerprint: empty or too long", name, line);
            strcpy(m.fp_config, v);
            break;
        case 7:
            if (parse_u64(v, 1, UINT32_MAX, &x))
                return fail("%s:%u: format: not a version", name, line);
            m.format = (unsigned)x;
            break;
        case 8:
            if (parse_u64(v, 1, UINT32_MAX, &x))
                return fail("%s:%u: fp-version: not a version", name, line);
            m.fp_version = (unsigned)x;
            if (m.fp_version < ND_FP_VERSION_OLDEST || m.fp_version > ND_FP_VERSION)
                return nd_err_set(ND_EVERSION, "%s:%u: fingerprint function version %u, this "
                                  "build computes %u to %u", name, line, m.fp_version,
                                  ND_FP_VERSION_OLDEST, ND_FP_VERSION);
            break;
        }
    }
    /* A store of resemblance shards has one line more. */
    static const char res[] = "resemblance ";
    if (pos < len && len - pos > sizeof res - 1 && memcmp(text + pos, res, sizeof res - 1) == 0) {
        char buf[64];
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
        unsigned version;
        int end = 0;
        line++;
        if (l >= sizeof buf) return fail("%s:%u: line too long", name, line);
        memcpy(buf, text + pos, l);
        buf[l] = '\0';
        pos += l + (nl ? 1 : 0);
        if (sscanf(buf, "resemblance sketch%u;r=%lf%n", &version, &m.min_resemblance, &end) != 2 ||
            (size_t)end != l || !(m.min_resemblance > 0 && m.min_resemblance <= 1))
            return fail("%s:%u: resemblance: not 'sketchV;r=R' with R in (0, 1]", name, line);
        if (version != ND_SKETCH_VERSION)
            return nd_err_set(ND_EVERSION, "%s:%u: sketch version %u, this build computes %u",
                              name, line, version, ND_SKETCH_VERSION);
    }
    if (pos < len)
        return fail("%s:%u: unexpected text after the last field", name, line + 1);
    *out = m;
    return ND_OK;
}

#undef fail

int shard_manifest_read(shard_manifest *out, const char *dir)
{
    char path[4096], buf[SHARD_MANIFEST_MAX + 1];
    ND_RETURN_IF(snprintf(path, sizeof path, "%s/%s", dir, SHARD_MANIFEST_NAME) >= (int)sizeof path,
                 ND_ELIMIT, "sharded store path too long: '%.60s...'", dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return nd_err_set(e == ENOENT || e == ENOTDIR ? ND_ENOTFOUND : ND_EIO,
                          "'%s' is not a sharded store: cannot read %s: %s", dir, path,
                          strerror(e));
    }
    size_t n = fread(buf, 1, sizeof buf, f);
    int bad = ferror(f);
    fclose(f);
    ND_RETURN_IF(bad, ND_EIO, "cannot read %s: I/O error", path);
    ND_RETURN_IF(n > SHARD_MANIFEST_MAX, ND_ECORRUPT, "%s: larger than %u bytes: not a manifest",
                 path, SHARD_MANIFEST_MAX);
    buf[n] = '\0';
    return shard_manifest_parse(out, buf, n, path);
}

int shard_manifest_write(const shard_manifest *m, const char *dir)
{
    char text[SHARD_MANIFEST_MAX], tmp[4096], path[4096];
    int len = shard_manifest_format(text, sizeof text, m);
    if (len < 0) return len;
    ND_RETURN_IF(snprintf(path, sizeof path, "%s/%s", dir, SHARD_MANIFEST_NAME) >= (int)sizeof path ||
                     snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, SHARD_MANIFEST_NAME) >=
                         (int)sizeof tmp,
                 ND_ELIMIT, "sharded store path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ND_RETURN_IF(fd < 0, ND_EIO, "cannot create %s: %s", tmp, strerror(errno));
    ssize_t w = write(fd, text, (size_t)len);
    if (w != len || fsync(fd) != 0) {
        int e = w < 0 ? errno : (w != len ? ENOSPC : errno);
        close(fd);
        unlink(tmp);
        return nd_err_set(e == ENOSPC ? ND_ENOSPC : ND_EIO, "cannot write %s: %s", tmp,
                          strerror(e));
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return nd_err_set(ND_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return ND_OK;
}
