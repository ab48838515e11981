/*
 * cmd_fingerprint.c — `neardup fingerprint`: print documents' fingerprints.
 */
#include "cli.h"
#include "in_reader.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: neardup fingerprint [--html] [--features words|shingles:N|chars:N]\n"
    "                           [--fold-chinese]\n"
    "                           [--format files|jsonl|tsv|warc] [--jsonl] [--json]\n"
    "                           [--id-field F] [--text-field F | --html-field F]\n"
    "                           [FILE...|-]\n"
    "\n"
    "Print HEX16<TAB>NAME per document. A FILE of no record format is one\n"
    "document (\"-\" or no FILE: stdin, named \"-\"); NAME is the file name,\n"
    "or the key of a record (the id of a JSON line with --format jsonl,\n"
    "--jsonl for short).\n"
    "  --html       documents are HTML (files ending .html/.htm are anyway)\n"
    "  --features   words, shingles:N (default shingles:3) or chars:N\n"
    "  --fold-chinese  Traditional Chinese folded to Simplified first\n"
    "  --json       JSON lines {\"id\":...,\"fp\":\"HEX16\"}\n"
    CLI_FIELD_HELP
    CLI_INFER_HELP("a directory is files; else ", "files (one document: the file's bytes,\n"
                   "or stdin's decompressed)");

static void print_fp(int json, const char *name, size_t len, uint64_t fp)
{
    if (json) {
        printf("{\"id\":");
        in_put_json_string(stdout, name, len);
        printf(",\"fp\":\"%016llx\"}\n", (unsigned long long)fp);
    } else {
        cli_put_hex(stdout, fp);
        putchar('\t');
        in_put_field(stdout, name, len);
        putchar('\n');
    }
}

static int run_reader(in_format fmt, const char *path, const in_reader_opts *ro,
                      const nd_fp_options *fo, int html, int json)
{
    in_reader *r;
    in_record rec;
    int got, rc = CLI_EXIT_OK;
    if (in_reader_open(&r, fmt, path, ro) < 0) return cli_fail("%s", in_reader_error(NULL));
    while ((got = in_reader_next(r, &rec)) != 0) {
        if (got < 0) {
            rc = cli_fail("%s", in_reader_error(r));
            break;
        }
        uint64_t fp = rec.fp;
        if (!rec.has_fp) {
            nd_fp_options o = *fo;
            if (html || rec.is_html) o.flags |= ND_FP_HTML;
            int nrc = nd_fingerprint(&fp, rec.text, rec.text_len, &o);
            if (nrc < 0) {
                rc = cli_fail_nd(nrc, "%s:%llu", rec.file, (unsigned long long)rec.line);
                break;
            }
        }
        print_fp(json, rec.key, rec.key_len, fp);
    }
    in_reader_close(r);
    return rc;
}

int cmd_fingerprint(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"html", no_argument, 0, 'H'},     {"features", required_argument, 0, 'f'},
        {"format", required_argument, 0, 'F'}, {"jsonl", no_argument, 0, 'J'},
        {"json", no_argument, 0, 'j'},     {"fold-chinese", no_argument, 0, 'Z'},
        CLI_FIELD_LONGOPTS,
        {0, 0, 0, 0}};
    nd_fp_options fo;
    in_format fmt = IN_FORMAT_FILES;
    in_reader_opts ro = {.formats = IN_BIT(IN_FORMAT_FILES) | IN_BIT(IN_FORMAT_JSONL) |
                                    IN_BIT(IN_FORMAT_TSV) | IN_BIT(IN_FORMAT_WARC),
                         .stream_document = 1};
    int html = 0, json = 0, fmt_given = 0, opt, rc = CLI_EXIT_OK;
    const char *why;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "fingerprint")) != -1) {
        switch (opt) {
        case 'H': html = 1; break;
        case 'Z': fo.flags |= ND_FP_FOLD_CHINESE; break;
        case 'f':
            if (cli_parse_features(optarg, &fo))
                return cli_usage_fail("fingerprint", "--features must be words, shingles:N or chars:N, got '%s'", optarg);
            break;
        case 'F':
            if (in_format_parse(optarg, &fmt) || fmt == IN_FORMAT_FP)
                return cli_usage_fail("fingerprint", "--format must be files, jsonl, tsv or warc, got '%s'", optarg);
            fmt_given = 1;
            break;
        case 'J':
            fmt = IN_FORMAT_JSONL;
            fmt_given = 1;
            break;
        case 'j': json = 1; break;
        default:
            switch (cli_field_option(&ro, opt, optarg, &why)) {
            case 1: break;
            case -1: return cli_usage_fail("fingerprint", "%s", why);
            default: return CLI_EXIT_USAGE;
            }
        }
    }
    if ((why = cli_fields_check(&ro, fmt_given, fmt))) return cli_usage_fail("fingerprint", "%s", why);
    ro.infer = !fmt_given;
    if (optind == argc || (argc - optind == 1 && strcmp(argv[optind], "-") == 0)) {
        if (fmt != IN_FORMAT_FILES || !fmt_given) return run_reader(fmt, "-", &ro, &fo, html, json);
        /* stdin as one document */
        uint64_t fp;
        char *text = NULL;
        size_t len = 0, cap = 0;
        for (;;) {
            if (len == cap) {
                cap = cap ? cap * 2 : 65536;
                if (cap > (size_t)ND_MAX_DOC_BYTES * 2) return cli_fail("<stdin>: document larger than 64 MiB");
                char *p = realloc(text, cap);
                if (!p) { free(text); return cli_fail("out of memory"); }
                text = p;
            }
            size_t got = fread(text + len, 1, cap - len, stdin);
            len += got;
            if (got == 0) break;
        }
        if (html) fo.flags |= ND_FP_HTML;
        int nrc = nd_fingerprint(&fp, text ? text : "", len, &fo);
        free(text);
        if (nrc < 0) return cli_fail_nd(nrc, "<stdin>");
        print_fp(json, "-", 1, fp);
        return CLI_EXIT_OK;
    }
    for (int i = optind; i < argc && rc == CLI_EXIT_OK; i++)
        rc = run_reader(fmt, argv[i], &ro, &fo, html, json);
    return rc;
}
