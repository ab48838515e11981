/*
 * cmd_serve.c — `neardup serve DB`: the store behind an HTTP/1.1 + JSON
 * server (server/, protocol server/openapi.yaml).
 *
 * This file is the command's shell only: options, the loopback rule, the
 * token file, the TLS certificate and key files (read here, handed to the
 * daemon as PEM text), opening the store, then waiting for SIGINT or SIGTERM. The
 * signals are blocked before the server's threads start (they inherit the
 * mask) and taken here by sigwait, so that a signal never interrupts a
 * commit: it starts the drain (srv_stop), after which the store is closed
 * and the command exits 0. Built without libmicrohttpd (-Dserver=disabled
 * or not found) the command parses its options and says so.
 */
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef ND_HAVE_SERVER
#include "srv.h"
#endif

#define SERVE_DEFAULT_PORT 7340u
#define SERVE_DRAIN_SECONDS 30u

static const char usage[] =
    "usage: neardup serve DB [--listen HOST:PORT] [--token-file F] [--no-sync]\n"
    "                        [--max-body BYTES] [--max-batch N]\n"
    "                        [--max-connections N] [--idle-timeout S] [--k K]\n"
    "                        [--tls-cert FILE --tls-key FILE]\n"
    "       neardup serve DIR --shard I [the same options]\n"
    "\n"
    "Serve the store over HTTP/1.1 with JSON bodies (protocol version 1, paths\n"
    "under /v1/, described by server/openapi.yaml): check, check-and-add, add,\n"
    "batch, get, delete, query, stats; /healthz and /metrics (Prometheus).\n"
    "Writes of every connection are committed together by one writer (group\n"
    "commit); an answer is sent once its write is durable. Prints\n"
    "`listening on http://HOST:PORT` on stdout once it accepts requests.\n"
    "SIGINT or SIGTERM stops accepting, answers the requests in flight,\n"
    "closes the store and exits 0.\n"
    "  --listen HOST:PORT    numeric address and port (default 127.0.0.1:7340;\n"
    "                        [::1]:PORT for IPv6; port 0: any free port)\n"
    "  --token-file F        writes need `Authorization: Bearer TOKEN`, TOKEN\n"
    "                        being F's first line; required to listen on an\n"
    "                        address other than loopback\n"
    "  --no-sync             do not fsync each commit: an answer then survives\n"
    "                        a killed server, not a crashed machine; a group\n"
    "                        with a \"sync\": true request is fsynced still\n"
    "  --max-body BYTES      largest request body (default 16777216; 413 above)\n"
    "  --max-batch N         most documents of one /v1/batch (default 10000; 413)\n"
    "                        and most matches of one /v1/query (its default: 100)\n"
    "  --max-connections N   connections answered at once (default 256; 503)\n"
    "  --idle-timeout S      seconds before an idle connection is closed (60)\n"
    "  --k K                 default distance (default: the database's k)\n"
    "  --shard I             DIR is a sharded store (neardup shard init/split/\n"
    "                        import): serve its shard I only, as one server of a\n"
    "                        fleet of S (docs/server.md, \"A fleet\"); writes of\n"
    "                        keys of other shards are refused (421)\n"
    "  --tls-cert FILE       serve HTTPS with this PEM certificate (chain) ...\n"
    "  --tls-key FILE        ... and its PEM private key (both files are read\n"
    "                        once at start; `listening on https://...`)\n";

/* HOST:PORT, [V6]:PORT or HOST (the default port) into host and port. */
static int parse_listen(const char *s, char *host, size_t hostlen, unsigned *port)
{
    const char *colon;
    size_t n;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end) return -1;
        n = (size_t)(end - s - 1);
        if (n == 0 || n >= hostlen) return -1;
        memcpy(host, s + 1, n);
        host[n] = '\0';
        colon = end[1] == ':' ? end + 1 : NULL;
        if (!colon && end[1]) return -1;
    } else {
        colon = strrchr(s, ':');
        n = colon ? (size_t)(colon - s) : strlen(s);
        if (n == 0 || n >= hostlen) return -1;
        memcpy(host, s, n);
        host[n] = '\0';
    }
    if (strcmp(host, "localhost") == 0) strcpy(host, "127.0.0.1");
    unsigned long v = SERVE_DEFAULT_PORT;
    if (colon && cli_parse_uint(colon + 1, 0, 65535, &v)) return -1;
    *port = (unsigned)v;
    unsigned char buf[16];
    if (inet_pton(AF_INET, host, buf) != 1 && inet_pton(AF_INET6, host, buf) != 1) return -1;
    return 0;
}

static int is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The token: the file's first line, without its end of line. */
static int read_token(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) return cli_usage_fail("serve", "cannot read --token-file '%s': %s", path, strerror(errno));
    if (!fgets(out, (int)size, f)) out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    if (strlen(out) < 16)
        return cli_usage_fail("serve", "--token-file '%s': the token must be at least 16 bytes", path);
    return CLI_EXIT_OK;
}

#ifdef ND_HAVE_SERVER
/* Whether dir holds a sharded store's manifest. */
static int is_sharded(const char *dir)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, ND_SHARDS_MANIFEST_NAME);
    return stat(p, &st) == 0;
}

static int open_plain(nd_db **db, const char *path, int durable)
{
    if (is_sharded(path))
        return cli_usage_fail("serve", "'%s' is a sharded store: serve one shard of it with "
                              "--shard I (one server per shard)", path);
    return cli_open_db(db, path, durable ? ND_DB_SYNC : 0);
}

/* Shard I of the sharded store dir: its manifest read for S, then part I
 * of S opened (that shard alone, checked against the manifest). */
static int open_shard(nd_shards **out, nd_db **db, const char *dir, unsigned shard, int durable)
{
    nd_shards_options o;
    nd_shards_info info;
    nd_shards *s = NULL;
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.flags = ND_SHARDS_MANIFEST_ONLY;
    int rc = nd_shards_open(&s, dir, &o);
    if (rc == ND_ENOTFOUND)
        return cli_usage_fail("serve", "--shard: '%s' is not a sharded store: %s", dir, nd_errmsg());
    if (rc < 0) return cli_fail_nd(rc, "serve: cannot open sharded store '%s'", dir), CLI_EXIT_DB;
    nd_shards_info_get(&info, s);
    nd_shards_close(s);
    if (shard >= info.shards)
        return cli_usage_fail("serve", "--shard %u: '%s' has %u shards (0..%u)", shard, dir,
                              info.shards, info.shards - 1);
    nd_shards_options_init(&o, ND_SHARDS_OPTIONS_VERSION);
    o.db_flags = durable ? ND_DB_SYNC : 0;
    o.part = shard;
    o.parts = info.shards;
    rc = nd_shards_open(&s, dir, &o);
    if (rc < 0) return cli_fail_nd(rc, "serve: cannot open shard %u of '%s'", shard, dir), CLI_EXIT_DB;
    *out = s;
    *db = nd_shards_db(s, shard);
    return CLI_EXIT_OK;
}

static int close_store(nd_db *db, nd_shards *shards, const char *path)
{
    if (!shards) return cli_close_db(db, path);
    int rc = nd_shards_close(shards);
    if (rc < 0) return cli_fail_nd(rc, "closing sharded store '%s'", path);
    return CLI_EXIT_OK;
}
#endif

/* A PEM file's text, whole (malloc'd, NUL-terminated): the key stays in
 * a file, never on the command line. what: "--tls-cert"; label: the PEM
 * block it must hold ("CERTIFICATE", "PRIVATE KEY": also "EC PRIVATE
 * KEY"). Whether GnuTLS can use it, the daemon's start tells. */
#define SERVE_PEM_MAX (1u << 20)
static int read_pem(const char *what, const char *path, const char *label, char **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return cli_usage_fail("serve", "cannot read %s '%s': %s", what, path, strerror(errno));
    char *buf = malloc(SERVE_PEM_MAX + 1);
    size_t n = buf ? fread(buf, 1, SERVE_PEM_MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf) return cli_fail("serve: out of memory");
    buf[n < SERVE_PEM_MAX ? n : SERVE_PEM_MAX] = '\0';
    const char *why = bad                    ? "cannot be read"
                      : n > SERVE_PEM_MAX    ? "is over 1 MiB"
                      : !strstr(buf, "-----BEGIN ") || !strstr(buf, label) ? "holds no PEM "
                                                                               : NULL;
    if (why) {
        free(buf);
        return cli_usage_fail("serve", "%s '%s' %s%s", what, path, why,
                              why[0] == 'h' ? label : "");
    }
    *out = buf;
    return CLI_EXIT_OK;
}

int cmd_serve(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"listen", required_argument, 0, 'l'},       {"token-file", required_argument, 0, 't'},
        {"no-sync", no_argument, 0, 'n'},            {"max-body", required_argument, 0, 'b'},
        {"max-batch", required_argument, 0, 'B'},    {"max-connections", required_argument, 0, 'c'},
        {"idle-timeout", required_argument, 0, 'i'}, {"k", required_argument, 0, 'k'},
        {"shard", required_argument, 0, 's'},
        /* TLS (issue 46) */
        {"tls-cert", required_argument, 0, 'C'},     {"tls-key", required_argument, 0, 'K'},
        {0, 0, 0, 0}};
    const char *tls_cert_file = NULL, *tls_key_file = NULL;
    char *tls_cert = NULL, *tls_key = NULL;
    char host[64] = "127.0.0.1", token[4096];
    const char *token_file = NULL;
    unsigned port = SERVE_DEFAULT_PORT, k = 0;
    int have_k = 0, durable = 1, opt, rc, sharded = 0;
    unsigned long shard = 0;
    unsigned long max_body = 0, max_batch = 0, max_conn = 0, idle = 0, v;

    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    optind = 1;
    while ((opt = cli_getopt(argc, argv, longopts, "serve")) != -1) {
        switch (opt) {
        case 'l':
            if (parse_listen(optarg, host, sizeof host, &port))
                return cli_usage_fail("serve", "--listen must be HOST:PORT with a numeric address, got '%s'", optarg);
            break;
        case 't': token_file = optarg; break;
        case 'n': durable = 0; break;
        case 'b':
            if (cli_parse_uint(optarg, 1, 1ul << 30, &max_body))
                return cli_usage_fail("serve", "--max-body must be 1..%lu, got '%s'", 1ul << 30, optarg);
            break;
        case 'B':
            if (cli_parse_uint(optarg, 1, 1000000, &max_batch))
                return cli_usage_fail("serve", "--max-batch must be 1..1000000, got '%s'", optarg);
            break;
        case 'c':
            if (cli_parse_uint(optarg, 1, 10000, &max_conn))
                return cli_usage_fail("serve", "--max-connections must be 1..10000, got '%s'", optarg);
            break;
        case 'i':
            if (cli_parse_uint(optarg, 1, 86400, &idle))
                return cli_usage_fail("serve", "--idle-timeout must be 1..86400 seconds, got '%s'", optarg);
            break;
        case 'k':
            if (cli_parse_uint(optarg, 0, ND_MAX_K, &v))
                return cli_usage_fail("serve", "--k must be 0..%u, got '%s'", ND_MAX_K, optarg);
            k = (unsigned)v;
            have_k = 1;
            break;
        case 's':
            if (cli_parse_uint(optarg, 0, ND_SHARDS_MAX - 1, &shard))
                return cli_usage_fail("serve", "--shard must be 0..%u, got '%s'", ND_SHARDS_MAX - 1, optarg);
            sharded = 1;
            break;
        case 'C': tls_cert_file = optarg; break;
        case 'K': tls_key_file = optarg; break;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) return cli_usage_fail("serve", "expected exactly one database path");
    if (!is_loopback(host) && !token_file)
        return cli_usage_fail("serve", "listening on %s (not loopback) needs --token-file", host);
    if (token_file && (rc = read_token(token_file, token, sizeof token))) return rc;
    if (!tls_cert_file != !tls_key_file)
        return cli_usage_fail("serve", "--tls-cert and --tls-key go together");
#ifndef ND_HAVE_SERVER
    (void)max_body, (void)max_batch, (void)max_conn, (void)idle, (void)have_k, (void)durable, (void)k;
    (void)sharded, (void)shard;
    (void)tls_cert, (void)tls_key;
    return cli_fail("serve: this neardup was built without the server (libmicrohttpd; "
                    "meson setup -Dserver=enabled)");
#else
    if (tls_cert_file && ((rc = read_pem("--tls-cert", tls_cert_file, "CERTIFICATE", &tls_cert)) ||
                          (rc = read_pem("--tls-key", tls_key_file, "PRIVATE KEY", &tls_key)))) {
        free(tls_cert);
        return rc;
    }
    const char *path = argv[optind];
    /* Before any thread starts, the store's own included (RocksDB's
     * background threads start at the open): every thread inherits the
     * mask, so only sigwait below ever takes these signals. (Set after
     * the open, a SIGTERM could reach a RocksDB thread and kill the server
     * undrained: the C client's tests met exit 143.) A signal during the
     * open waits for sigwait: the server then stops as soon as it is up. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    nd_db *db;
    nd_shards *shards = NULL;
    rc = sharded ? open_shard(&shards, &db, path, (unsigned)shard, durable)
                 : open_plain(&db, path, durable);
    if (rc) {
        free(tls_cert), free(tls_key);
        return rc;
    }
    if (!have_k) {
        nd_plan_info p;
        nd_db_plan(&p, db);
        k = p.k;
    }
    srv_config cfg = {host, port, token_file ? token : NULL, max_body, max_batch,
                      (unsigned)max_conn, (unsigned)idle, k, durable};
    cfg.tls_cert = tls_cert;
    cfg.tls_key = tls_key;
    srv *s;
    char err[512];
    cfg.shards = shards;
    cfg.shard = (unsigned)shard;
    if (srv_start(&s, db, &cfg, err, sizeof err)) {
        cli_fail("serve: %s", err);
        close_store(db, shards, path);
        free(tls_cert), free(tls_key);
        return CLI_EXIT_USAGE;
    }
    const char *scheme = tls_cert ? "https" : "http";
    printf(strchr(host, ':') ? "listening on %s://[%s]:%u\n" : "listening on %s://%s:%u\n",
           scheme, host, srv_port(s));
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "neardup: serve: %s: draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    srv_stop(s, SERVE_DRAIN_SECONDS);
    free(tls_cert), free(tls_key);
    rc = close_store(db, shards, path);
    if (rc == CLI_EXIT_OK) fprintf(stderr, "neardup: serve: stopped, store closed\n");
    return rc;
#endif
}
