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
    static const struct option longopts[] = {{"html", no_argument, 0, 'H'},
                                             {"features", required_argument, 0, 'f'},
                                             {0, 0, 0, 0}};
    nd_fp_options fo;
    int html = 0, opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    nd_fp_options_init(&fo, ND_FP_OPTIONS_VERSION);
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "distance")) != -1) {
        if (opt == 'H') html = 1;
        else if (opt != 'f') return CLI_EXIT_USAGE;
        else if (cli_parse_features(optarg, &fo))
            return cli_fail("distance: bad --features '%s'", optarg);
    }
    const char *args[2];
    int nargs = argc - optind;
    if (nargs == 2) {
        args[0] = argv[optind];
        args[1] = argv[optind + 1];
    }
    if (nargs != 2)
        return cli_usage_fail("distance", "expected exactly two arguments");
    uint64_t a, b;
    int rc = resolve(args[0], &fo, html, &a);
    if (rc == CLI_EXIT_OK) rc = resolve(args[1], &fo, html, &b);
    if (rc == CLI_EXIT_OK) printf("%u\n", nd_hamming(a, b));
    return rc;
}
