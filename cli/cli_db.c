/*
 * cli_db.c — opening a database from a command, with the error printed
 * the one way every command prints it.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_open_db_threads(nd_db **out, const char *path, unsigned flags, unsigned threads)
{
    nd_db_options o;
    nd_db_options_init(&o, ND_DB_OPTIONS_VERSION);
    o.flags = flags;
    o.threads = threads;
    o.scratch_dir = getenv("TMPDIR"); /* a reader's scratch directory (the library reads no environment) */
    int rc = nd_db_open(out, path, &o);
    if (rc < 0) {
        /* Whatever the cause (missing, a regular file, not a database,
         * busy), a database that cannot be opened is a database error. */
        cli_fail_nd(rc, "cannot open database '%s'", path);
        return CLI_EXIT_DB;
    }
    return CLI_EXIT_OK;
}

int cli_open_db(nd_db **out, const char *path, unsigned flags)
{
    return cli_open_db_threads(out, path, flags, 0);
}

int cli_close_db(nd_db *db, const char *path)
{
    int rc = nd_db_close(db);
    if (rc < 0) return cli_fail_nd(rc, "closing database '%s'", path);
    return CLI_EXIT_OK;
}

/* Read a whole file (or stdin for "-") up to ND_MAX_DOC_BYTES. */
static int slurp(char **out, size_t *out_len, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return cli_fail("cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = CLI_EXIT_OK;
    while (buf) {
        if (len == cap) {
            if (cap > ND_MAX_DOC_BYTES) {
                rc = cli_fail("'%s': document larger than the %u MiB limit", path,
                              ND_MAX_DOC_BYTES >> 20);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = cli_fail("reading '%s': %s", path, strerror(errno));
            break;
        }
    }
    if (!buf) rc = cli_fail("'%s': out of memory", path);
    if (f != stdin) fclose(f);
    if (rc == CLI_EXIT_OK && len > ND_MAX_DOC_BYTES)
        rc = cli_fail("'%s': document larger than the %u MiB limit", path,
                      ND_MAX_DOC_BYTES >> 20);
    if (rc != CLI_EXIT_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return CLI_EXIT_OK;
}

int cli_fingerprint_file(uint64_t *out, nd_sketch *sk, nd_db *db, const char *path, int html)
{
    nd_fp_options fo;
    char *text = NULL;
    size_t len = 0;
    int rc = slurp(&text, &len, path);
    if (rc) return rc;
    nd_db_fp_options(&fo, db);
    if (html) fo.flags |= ND_FP_HTML;
    nd_signature sig;
    int nrc = sk ? nd_db_sign(&sig, db, text, len, html ? ND_FP_HTML : 0)
                 : nd_fingerprint(out, text, len, &fo);
    if (sk && nrc == ND_OK) {
        *out = sig.fp;
        *sk = sig.sketch;
    }
    free(text);
    if (nrc < 0) return cli_fail_nd(nrc, "fingerprinting '%s'", path);
    return CLI_EXIT_OK;
}

void cli_long_call_start(cli_progress *p, const char *verb)
{
    cli_progress_start(p, verb, 0);
    cli_signals_defer();
}

int cli_long_call_step(const nd_progress *np, void *payload)
{
    cli_progress *p = payload;
    /* "docs", as the other commands' lines count them */
    const char *unit = strcmp(np->unit, "documents") == 0 ? "docs" : np->unit;
    if (!p->phase || strcmp(p->phase, np->phase) != 0)
        cli_progress_phase(p, np->phase, unit, np->total);
    cli_progress_update(p, np->done, 0);
    return cli_interrupted() ? 1 : 0;
}

int cli_long_call_end(cli_progress *p, int nrc, const char *verb, const char *path)
{
    cli_progress_end(p);
    if (nrc == 1) {
        fprintf(stderr, "neardup: %s: interrupted\n", verb);
        return CLI_EXIT_INTERRUPTED;
    }
    if (nrc < 0) {
        int rc = cli_fail_nd(nrc, "%s '%s'", verb, path);
        return rc == CLI_EXIT_USAGE ? CLI_EXIT_DB : rc;
    }
    return CLI_EXIT_OK;
}

void cli_load_interrupted(const char *verb)
{
    fprintf(stderr, "neardup: %s: interrupted; nothing imported\n", verb);
}

void cli_load_late_signal(const char *verb)
{
    fprintf(stderr, "neardup: %s: interrupted while the store was written, which finished: "
                    "the import is complete\n", verb);
}
