/*
 * cli_docs.c — documents held for bulk calls (see cli_docs.h).
 */
#include "cli_docs.h"

#include "cli.h"
#include "in_doc_io.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_record_fp(uint64_t *out, const in_record *rec, const nd_fp_options *fo, int html)
{
    if (rec->has_fp) {
        *out = rec->fp;
        return CLI_EXIT_OK;
    }
    nd_fp_options o = *fo;
    if (html || rec->is_html) o.flags |= ND_FP_HTML;
    int rc = nd_fingerprint(out, rec->text, rec->text_len, &o);
    if (rc < 0)
        return cli_fail_nd(rc, "%s:%llu: fingerprint", rec->file, (unsigned long long)rec->line);
    return CLI_EXIT_OK;
}

int cli_record_sign(uint64_t *fp, nd_sketch *sk, const in_record *rec, const nd_fp_options *fo,
                    int html, nd_db *db)
{
    if (!sk) return cli_record_fp(fp, rec, fo, html);
    if (rec->has_fp) {
        cli_progress_clear();
        fprintf(stderr, "neardup: %s:%llu: %s\n", rec->file, (unsigned long long)rec->line,
                CLI_NEEDS_TEXT);
        return CLI_BAD_RECORD;
    }
    nd_signature sig;
    int rc = nd_db_sign(&sig, db, rec->text, rec->text_len, html || rec->is_html ? ND_FP_HTML : 0);
    if (rc < 0)
        return cli_fail_nd(rc, "%s:%llu: fingerprint", rec->file, (unsigned long long)rec->line);
    *fp = sig.fp;
    *sk = sig.sketch;
    return CLI_EXIT_OK;
}

int cli_docs_push(cli_docs *l, const in_record *rec, uint64_t fp, const nd_sketch *sk,
                  int64_t time)
{
    nd_doc d = {rec->key, rec->key_len, fp, rec->has_score ? rec->score : 0, time, sk};
    return cli_docs_push_doc(l, &d);
}

int cli_docs_push_doc(cli_docs *l, const nd_doc *doc)
{
    const nd_sketch *sk = doc->sketch;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        nd_doc *d = realloc(l->d, cap * sizeof *d);
        if (d) l->d = d;
        size_t *ko = d ? realloc(l->koff, cap * sizeof *ko) : NULL;
        if (ko) l->koff = ko;
        nd_sketch *s = ko && sk ? realloc(l->sk, cap * sizeof *s) : NULL;
        if (s) l->sk = s;
        if (!ko || (sk && !s)) {
            cli_fail("out of memory holding %zu documents", l->n);
            return -1;
        }
        l->cap = cap;
    }
    if (sk && !l->sk) { /* the first sketch of a list grown without */
        l->sk = malloc(l->cap * sizeof *l->sk);
        if (!l->sk) {
            cli_fail("out of memory holding %zu documents", l->n);
            return -1;
        }
    }
    if (l->alen + doc->key_len + 1 > l->acap) {
        size_t cap = l->acap ? l->acap : 1 << 16;
        while (cap < l->alen + doc->key_len + 1) cap *= 2;
        char *a = realloc(l->arena, cap);
        if (!a) {
            cli_fail("out of memory holding %zu keys", l->n);
            return -1;
        }
        l->arena = a;
        l->acap = cap;
    }
    memcpy(l->arena + l->alen, doc->key, doc->key_len);
    l->arena[l->alen + doc->key_len] = '\0';
    l->koff[l->n] = l->alen;
    l->d[l->n] = (nd_doc){NULL, doc->key_len, doc->fp, doc->score, doc->time};
    if (sk) l->sk[l->n] = *sk;
    l->alen += doc->key_len + 1;
    l->n++;
    return 0;
}

void cli_docs_seal(cli_docs *l)
{
    for (size_t i = 0; i < l->n; i++) l->d[i].key = l->arena + l->koff[i];
    if (l->sk)
        for (size_t i = 0; i < l->n; i++) l->d[i].sketch = &l->sk[i];
}

void cli_docs_clear(cli_docs *l)
{
    l->n = 0;
    l->alen = 0;
}

void cli_docs_dispose(cli_docs *l)
{
    free(l->d);
    free(l->koff);
    free(l->sk);
    free(l->arena);
    memset(l, 0, sizeof *l);
}

size_t cli_load_piece(size_t chunk)
{
    enum { PIECE_MAX = 1000000 };
    return chunk && chunk < PIECE_MAX ? chunk : PIECE_MAX;
}

int cli_inputs_live(char **paths, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        int got = strcmp(paths[i], "-") == 0 ? fstat(0, &st) : stat(paths[i], &st);
        if (got == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)))
            return 1;
    }
    return 0;
}

uint64_t cli_inputs_size(char **paths, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0 || stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

int cli_read_option(cli_read_opts *o, int opt, const char *arg, const char *cmd)
{
    switch (opt) {
    case 'f':
        o->dump = strcmp(arg, "dump") == 0;
        if (!o->dump && in_format_parse(arg, &o->fmt)) {
            cli_usage_fail(cmd, "--format must be fp, jsonl, tsv, files, warc or dump, got '%s'", arg);
            return -1;
        }
        o->fmt_given = 1;
        return 1;
    case 'H': o->html = 1; return 1;
    case 't':
        if (in_parse_time(arg, &o->time)) {
            cli_usage_fail(cmd, "--time must be seconds since the epoch, got '%s'", arg);
            return -1;
        }
        return 1;
    case 'b': o->skip_bad = 1; return 1;
    default: {
        const char *why;
        int got = cli_field_option(&o->in, opt, arg, &why);
        if (got < 0) cli_usage_fail(cmd, "%s", why);
        return got;
    }
    }
}

int cli_read_check(const cli_read_opts *o, const char *cmd)
{
    const char *why = cli_fields_check(&o->in, o->fmt_given, o->dump ? IN_FORMAT_DUMP : o->fmt);
    return why ? cli_usage_fail(cmd, "%s", why) : CLI_EXIT_OK;
}

in_reader_opts cli_reader_opts(const cli_read_opts *o)
{
    in_reader_opts ro = o->in;
    ro.infer = !o->fmt_given;
    return ro;
}

/* One input: an in_reader, or a doc_reader for --format dump. */
typedef struct doc_source {
    in_reader *in;
    doc_reader *dump;
} doc_source;

static int source_open(doc_source *src, const cli_read_opts *o, const char *path)
{
    memset(src, 0, sizeof *src);
    if (o->dump) {
        if (doc_reader_open(&src->dump, path) < 0) return cli_fail("%s", doc_reader_error(NULL));
    } else {
        in_reader_opts ro = cli_reader_opts(o);
        if (in_reader_open(&src->in, o->fmt, path, &ro) < 0) {
            /* a signal while the first line was awaited (inference) */
            if (cli_interrupted()) return CLI_EXIT_INTERRUPTED;
            return cli_fail("%s", in_reader_error(NULL));
        }
    }
    return CLI_EXIT_OK;
}

/* in_reader_next's codes; *time is the record's own (dump) or o->time. */
static int source_next(doc_source *src, const cli_read_opts *o, in_record *rec, int64_t *time)
{
    *time = o->time;
    return src->dump ? doc_reader_next(src->dump, rec, time) : in_reader_next(src->in, rec);
}

static const char *source_error(const doc_source *src)
{
    return src->dump ? doc_reader_error(src->dump) : in_reader_error(src->in);
}

static uint64_t source_bytes(const doc_source *src)
{
    return src->dump ? doc_reader_bytes(src->dump) : in_reader_bytes(src->in);
}

static void source_close(doc_source *src)
{
    doc_reader_close(src->dump);
    in_reader_close(src->in);
}

int cli_read_docs(cli_docs *l, char **inputs, int ninputs, cli_read_opts *o,
                  cli_flush_fn flush, void *payload, uint64_t *docs, uint64_t *bad)
{
    uint64_t bytes_done = 0;
    int rc = CLI_EXIT_OK;
    *docs = *bad = 0;
    for (int f = 0; f < ninputs && rc == CLI_EXIT_OK; f++) {
        doc_source src;
        rc = source_open(&src, o, inputs[f]);
        if (rc) return rc;
        for (;;) {
            in_record rec;
            uint64_t fp;
            nd_sketch sk;
            if (o->live && l->n && src.in && in_reader_would_block(src.in)) {
                cli_docs_seal(l);
                rc = flush(l, payload);
                cli_docs_clear(l);
                if (rc) break;
            }
            int64_t time;
            int got = source_next(&src, o, &rec, &time);
            /* A signal breaks a blocked read too: not a read error. */
            if (cli_interrupted()) {
                rc = CLI_EXIT_INTERRUPTED;
                break;
            }
            if (got == 0) break;
            if (got == -1) {
                cli_progress_clear(); /* the message on a line of its own */
                fprintf(stderr, "neardup: %s\n", source_error(&src));
                (*bad)++;
                if (o->skip_bad) continue;
                rc = CLI_EXIT_USAGE;
                break;
            }
            if (got < 0) {
                rc = cli_fail("%s", source_error(&src));
                break;
            }
            rc = cli_record_sign(&fp, o->sign_db ? &sk : NULL, &rec, o->fo, o->html, o->sign_db);
            if (rc == CLI_BAD_RECORD) {
                (*bad)++;
                rc = CLI_EXIT_OK;
                if (o->skip_bad) continue;
                rc = CLI_EXIT_USAGE;
                break;
            }
            if (rc) break;
            if (cli_docs_push(l, &rec, fp, o->sign_db ? &sk : NULL, time) < 0) {
                rc = CLI_EXIT_DB;
                break;
            }
            (*docs)++;
            /* Asking the reader its offset is a system call: not per record. */
            if (o->progress && o->progress->tty && (*docs & 4095) == 0)
                cli_progress_update(o->progress, *docs, bytes_done + source_bytes(&src));
            if (o->chunk && l->n >= o->chunk) {
                cli_docs_seal(l);
                rc = flush(l, payload);
                cli_docs_clear(l);
                if (rc == CLI_EXIT_OK && cli_interrupted()) rc = CLI_EXIT_INTERRUPTED;
                if (rc) break;
            }
        }
        bytes_done += source_bytes(&src);
        source_close(&src);
    }
    if (rc == CLI_EXIT_OK) {
        cli_docs_seal(l);
        rc = flush(l, payload);
    }
    cli_docs_clear(l);
    return rc;
}
