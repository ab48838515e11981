/*
 * cmd_distance.c — `neardup distance A B`: Hamming distance.
 */
#include "cli.h"
#include "in_reader.h"

#include <string.h>

static const char usage[] =
    "usage: neardup distance [--html] [--features F] A B\n"
    "\n"
    "Print the Hamming distance between A and B, each a fingerprint (16 hex\n"
    "digits) or a file to fingerprint (with --features, default shingles:3).\n";

static int resolve(const char *arg, const nd_fp_options *fo, int html, uint64_t *out)
{
    const char *why;
    if (strlen(arg) == 16 && in_parse_hex64(arg, 16, out, &why) == 0) return CLI_EXIT_OK;
    in_reader *r;
    in_record rec;
    if (in_reader_open(&r, IN_FORMAT_FILES, arg, NULL) < 0)
        return cli_fail("'%s' is neither 16 hex digits nor a readable file: %s", arg, in_reader_error(NULL));
    int got = in_reader_next(r, &rec), rc = CLI_EXIT_OK;
    if (got <= 0) {
        rc = cli_fail("%s", got == 0 ? "no document" : in_reader_error(r));
    } else {
        nd_fp_options o = *fo;
        if (html || rec.is_html) o.flags |= ND_FP_HTML;
        int nrc = nd_fingerprint(out, rec.text, rec.text_len, &o);
        if (nrc < 0) rc = cli_fail_nd(nrc, "%s", arg);
    }
    in_reader_close(r);
    return rc;
}

int cmd_distance(int argc, char **argv)
{
    nd_fp_options fo;
    int html = 0;
    const char *args[2];
    int nargs = 0;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--html") == 0) html = 1;
        else if (strcmp(argv[i], "--features") == 0) {
            if (i + 1 == argc) return cli_usage_fail("distance", "option '--features' needs a value");
            if (cli_parse_features(argv[++i], &fo))
                return cli_fail("distance: bad --features '%s'", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_fail("distance", "unrecognized option '%s'", argv[i]);
        else if (nargs < 2) args[nargs++] = argv[i];
        else return cli_usage_fail("distance", "expected exactly two arguments");
    }
    if (nargs != 2)
        return cli_usage_fail("distance", "expected exactly two arguments");
    uint64_t a, b;
    int rc = resolve(args[0], &fo, html, &a);
    if (rc == CLI_EXIT_OK) rc = resolve(args[1], &fo, html, &b);
    if (rc == CLI_EXIT_OK) printf("%u\n", nd_hamming(a, b));
    return rc;
}
