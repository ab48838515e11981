/*
 * cmd_dump.c — `neardup dump DB`: every stored document, streamed from one
 * snapshot through nd_db_foreach_doc, in a format import reads back (see
 * in_doc_io.h). A resemblance store's sketches are not dumped: they cannot
 * be turned back into texts, which such a store needs (see usage).
 */
#include "cli.h"
#include "in_doc_io.h"

#include <errno.h>
#include <string.h>

static const char usage[] =
    "usage: neardup dump DB [--format tsv|jsonl]\n"
    "\n"
    "Print every stored document, in key order, from one consistent snapshot\n"
    "(writers may go on meanwhile):\n"
    "  tsv    KEY<TAB>HEX16<TAB>SCORE<TAB>LASTSEEN (default), as `get` prints;\n"
    "         the key escaped as in every TSV output (\\\\ \\t \\n \\r \\xHH).\n"
    "         `neardup import NEWDB --format dump FILE` reads it back exactly\n"
    "  jsonl  {\"id\":KEY,\"fp\":\"HEX16\",\"score\":S,\"time\":T} per line, which\n"
    "         `import --format jsonl` reads (key, fingerprint and score; the\n"
    "         time is import's --time); a key byte that is not valid UTF-8\n"
    "         is written as \\u00XX, so such a key does not come back byte for\n"
    "         byte: use tsv to copy a store\n"
    "A store verifying by resemblance dumps the same lines: its sketches\n"
    "are summaries of the texts, not the texts, and cannot be made back into\n"
    "them, so they are left out. Such a dump imports into a fingerprint-only\n"
    "store; a resemblance store refuses it (its records carry fingerprints, and\n"
    "it needs texts): copy one with `backup` or `shard split`, or import the\n"
    "texts again. A note on stderr says so.\n";

typedef struct dump_ctx {
    int json;
    uint64_t n;
} dump_ctx;

static int put_one(const nd_doc *d, void *payload)
{
    dump_ctx *c = payload;
    doc_put(stdout, d, c->json);
    c->n++;
    /* a closed pipe or a full disk: stop now, not after the last document */
    return ferror(stdout) ? 1 : 0;
}

int cmd_dump(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, 0, 'f'},
                                             {0, 0, 0, 0}};
    dump_ctx c = {0};
    int opt;
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "dump")) != -1) {
        switch (opt) {
        case 'f':
            if (strcmp(optarg, "tsv") == 0) c.json = 0;
            else if (strcmp(optarg, "jsonl") == 0) c.json = 1;
            else return cli_usage_fail("dump", "--format must be tsv or jsonl, got '%s'", optarg);
            break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return cli_usage_fail("dump", "expected exactly one database path");
    const char *path = argv[optind];
    nd_db *db;
    int rc = cli_open_db(&db, path, ND_DB_READONLY);
    if (rc) return rc;
    if (nd_db_min_resemblance(db) > 0)
        fprintf(stderr, "neardup: dump: '%s' verifies by resemblance: the dump holds no "
                        "sketches and imports into a fingerprint-only store only (a "
                        "resemblance store needs the texts; `backup` copies it)\n", path);
    int nrc = nd_db_foreach_doc(db, put_one, &c);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_fail("dump: writing the output: %s", strerror(errno ? errno : EIO));
        rc = CLI_EXIT_DB;
    } else if (nrc < 0) {
        cli_fail_nd(nrc, "dump '%s'", path);
        rc = CLI_EXIT_DB;
    }
    int crc = cli_close_db(db, path);
    return rc ? rc : crc;
}
