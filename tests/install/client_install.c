/* client_install.c — test_install.sh's check of the installed
 * libneardup-client: built with `pkg-config --cflags --libs
 * neardup-client` against the installed tree, it opens a client of a
 * url no server listens on (argv[1]) and expects a call to fail with
 * ND_CLIENT_ECONNECT, its message naming the call. Exit 0 when so. */
#include <stdio.h>
#include <string.h>
#include <neardup_client.h>

int main(int argc, char **argv)
{
    nd_client *c = NULL;
    nd_client_results *res = NULL;
    nd_client_options o;
    int rc = argc == 2 ? nd_client_options_init(&o, ND_CLIENT_OPTIONS_VERSION) : ND_EINVAL;
    o.connect_timeout_ms = 2000;
    if (rc == ND_OK) rc = nd_client_open(&c, argv[1], &o);
    if (rc == ND_OK) rc = nd_client_results_new(&res);
    if (rc == ND_OK) rc = nd_client_check(res, c, 0x7875f531905d17aaull, ND_CLIENT_DEFAULT_K);
    int ok = rc == ND_CLIENT_ECONNECT && strstr(nd_client_errmsg(), "/v1/check") != NULL;
    printf("%s: %s: %s\n", ok ? "ok" : "unexpected", nd_client_strerror(rc), nd_client_errmsg());
    nd_client_results_free(res);
    nd_client_close(c);
    nd_client_close(NULL); /* a no-op */
    return !ok;
}
