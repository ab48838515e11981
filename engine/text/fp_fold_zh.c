/*
 * fp_fold_zh.c — Traditional to Simplified Chinese folding of normalised
 * text (ND_FP_FOLD_CHINESE), through OpenCC. The only file that includes
 * <opencc.h>.
 *
 * The fold is OpenCC's "t2s" conversion (its TSPhrases and TSCharacters
 * dictionaries, longest phrase first), applied to the NFKC + case-folded
 * text before tokens are formed, so that the same paragraph in
 * Traditional and in Simplified characters has the same features.
 * Simplified text passes through unchanged, and so does every character
 * t2s does not map (Latin, kana, Hangul). The output is what OpenCC's
 * dictionaries say: golden vectors (tests/golden_fp.h) catch a change of
 * them under a later OpenCC, which would be a change of the fingerprint
 * function.
 *
 * One converter serves the process: opened on first use (pthread_once),
 * never closed; OpenCC's converter is safe to share between threads (its
 * maintainer's answer in BYVoid/OpenCC issue 231, covered by its tests).
 * Callers: fp_text.c (fp_text_features and the stop words).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <opencc.h>

#include "fp_internal.h"
#include "nd_error.h"

static pthread_once_t fold_once = PTHREAD_ONCE_INIT;
static opencc_t fold_cc = (opencc_t)-1;
static char fold_err[160];

static void fold_open(void)
{
    fold_cc = opencc_open(OPENCC_DEFAULT_CONFIG_TRAD_TO_SIMP);
    if (fold_cc == (opencc_t)-1) {
        const char *e = opencc_error();
        strncpy(fold_err, e ? e : "unknown error", sizeof fold_err - 1);
    }
}

/* Only text with a character of U+3000 or above (a lead byte 0xE3..0xEF
 * or 0xF0..0xF4) may hold Han: other text is left as it is, without a
 * call into OpenCC. */
static int may_have_han(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] >= 0xE3 && (unsigned char)text[i] <= 0xF4) return 1;
    return 0;
}

int fp_fold_chinese(char **out, size_t *out_len, const char *text, size_t len)
{
    *out = NULL;
    *out_len = 0;
    if (!len || !may_have_han(text, len)) return ND_OK;
    pthread_once(&fold_once, fold_open);
    ND_RETURN_IF(fold_cc == (opencc_t)-1, ND_EIO,
                 "fingerprint: cannot open OpenCC's %s (package libopencc-data): %s",
                 OPENCC_DEFAULT_CONFIG_TRAD_TO_SIMP, fold_err);
    /* The text may hold NUL (a separator): OpenCC converts up to it, so
     * each NUL-free piece is converted alone and the NULs kept. */
    size_t cap = len + 16, n = 0;
    char *buf = malloc(cap);
    ND_RETURN_IF(!buf, ND_ENOMEM, "fingerprint: out of memory folding %zu bytes", len);
    for (size_t i = 0; i < len;) {
        const char *nul = memchr(text + i, '\0', len - i);
        size_t piece = nul ? (size_t)(nul - (text + i)) : len - i;
        char *conv = piece ? opencc_convert_utf8(fold_cc, text + i, piece) : NULL;
        if (piece && (!conv || conv == (char *)-1)) {
            free(buf);
            return nd_err_set(ND_ENOMEM, "fingerprint: OpenCC failed on %zu bytes: %s", piece,
                              opencc_error() ? opencc_error() : "unknown error");
        }
        size_t cl = conv ? strlen(conv) : 0;
        if (n + cl + 1 > cap) {
            size_t ncap = (n + cl + 1) * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                opencc_convert_utf8_free(conv);
                free(buf);
                return nd_err_set(ND_ENOMEM, "fingerprint: out of memory folding %zu bytes", len);
            }
            buf = nb;
            cap = ncap;
        }
        if (cl) memcpy(buf + n, conv, cl);
        n += cl;
        if (conv) opencc_convert_utf8_free(conv);
        i += piece;
        if (nul) {
            buf[n++] = '\0';
            i++;
        }
    }
    *out = buf;
    *out_len = n;
    return ND_OK;
}
