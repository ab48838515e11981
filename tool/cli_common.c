/*
 * cli_common.c — the option parsers, the --help test and the decision line
 * that neardup and neardup-mpi share (see cli_common.h). Moved from
 * cli/cli_util.c and cli/cli_docs.c, unchanged, when neardup-mpi stopped
 * compiling files of cli/.
 */
#include "cli_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "in_text.h"

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

void cli_usage(FILE *f, const char *text) { fputs(text, f); }

int cli_parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-' || isspace((unsigned char)*s)) return -1;
    double v = strtod(s, &end);
    if (errno || end == s) return -1;
    switch (*end) {
    case 'k': case 'K': v *= 1e3; end++; break;
    case 'm': case 'M': v *= 1e6; end++; break;
    case 'g': case 'G': v *= 1e9; end++; break;
    case 't': case 'T': v *= 1e12; end++; break;
    default: break;
    }
    if (*end || !(v >= 0) || v > 1.8e19 || v != floor(v)) return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_uint(const char *s, unsigned long lo, unsigned long hi,
                   unsigned long *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

unsigned cli_batch_threads(void)
{
    unsigned long v;
    return cli_parse_uint(getenv("ND_BATCH_THREADS"), 1, 64, &v) ? 0 : (unsigned)v;
}

int cli_parse_features(const char *s, nd_fp_options *opts)
{
    static const struct { const char *name; nd_feature_kind kind; } kinds[] = {
        {"words", ND_FEATURES_WORDS},
        {"shingles", ND_FEATURES_SHINGLES},
        {"chars", ND_FEATURES_CHARS},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t len = strlen(kinds[i].name);
        if (strncmp(s, kinds[i].name, len) != 0) continue;
        unsigned long n = 0;
        if (s[len] == ':') {
            if (kinds[i].kind == ND_FEATURES_WORDS ||
                cli_parse_uint(s + len + 1, 1, 16, &n))
                return -1;
        } else if (s[len] != '\0' || kinds[i].kind == ND_FEATURES_CHARS) {
            return -1;
        }
        opts->features = kinds[i].kind;
        opts->n = (unsigned)n;
        return 0;
    }
    return -1;
}

void cli_print_decision(FILE *f, int json, const char *key, size_t key_len, int dup,
                        const char *match, size_t match_len, unsigned dist, double res)
{
    if (json) {
        fprintf(f, "{\"status\":\"%s\",\"key\":", dup ? "dup" : "new");
        in_put_json_string(f, key, key_len);
        if (dup) {
            fprintf(f, ",\"match\":");
            in_put_json_string(f, match, match_len);
            fprintf(f, ",\"dist\":%u", dist);
            if (res >= 0) fprintf(f, ",\"resemblance\":%.3f", res);
        }
        fputs("}\n", f);
        return;
    }
    fputs(dup ? "dup\t" : "new\t", f);
    in_put_field(f, key, key_len);
    if (dup) {
        fputc('\t', f);
        in_put_field(f, match, match_len);
        fprintf(f, "\t%u", dist);
        if (res >= 0) fprintf(f, "\t%.3f", res);
    }
    fputc('\n', f);
}

int cli_field_option(in_reader_opts *o, int opt, const char *arg, const char **why)
{
    const char **slot;
    switch (opt) {
    case CLI_OPT_ID_FIELD: slot = &o->id_field; *why = "--id-field needs a member name"; break;
    case CLI_OPT_TEXT_FIELD: slot = &o->text_field; *why = "--text-field needs a member name"; break;
    case CLI_OPT_HTML_FIELD: slot = &o->html_field; *why = "--html-field needs a member name"; break;
    default: return 0;
    }
    if (!*arg) return -1;
    *slot = arg;
    return 1;
}

const char *cli_fields_check(const in_reader_opts *o, int fmt_given, in_format fmt)
{
    if (o->text_field && o->html_field) return "give --text-field or --html-field, not both";
    const char *text = o->html_field ? o->html_field : o->text_field;
    if (strcmp(o->id_field ? o->id_field : "id", text ? text : "text") == 0)
        return "the key and the text cannot be one member";
    if ((o->id_field || text) && fmt_given && fmt != IN_FORMAT_JSONL)
        return "--id-field, --text-field and --html-field are for JSONL input";
    return NULL;
}
