/*
 * fuzz_html.c — libFuzzer target for HTML -> text (nd_html_extract):
 * malformed HTML never fails and never crashes; the title and body are
 * NUL-terminated at their lengths; the HTML fingerprint path agrees.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nd_html_text t;
    memset(&t, 0, sizeof t);
    int rc = nd_html_extract(&t, (const char *)data, size);
    if (rc == ND_OK) {
        if (!t.title || !t.body) abort();
        if (t.title[t.title_len] != '\0' || t.body[t.body_len] != '\0') abort();
    } else if (rc != ND_ENOMEM) {
        abort();
    }
    nd_html_text_dispose(&t);
    nd_html_text_dispose(&t); /* disposing twice (a zeroed struct) is fine */

    nd_fp_options o = ND_FP_OPTIONS_INIT;
    o.flags = ND_FP_HTML;
    uint64_t fp;
    rc = nd_fingerprint(&fp, (const char *)data, size, &o);
    if (rc != ND_OK && rc != ND_ENOMEM) abort();
    return 0;
}
