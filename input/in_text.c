/*
 * in_text.c — the text forms of keys, fingerprints and times (see
 * in_text.h): the hex fingerprint, the TSV field escapes and their
 * inverse, JSON strings, whole seconds, and what makes a key valid.
 * Moved from cli/cli_util.c, unchanged but for the names, when the
 * readers left cli/ for input/.
 */
#include "in_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <neardup.h>

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int in_parse_hex64(const char *s, size_t len, uint64_t *out, const char **why)
{
    uint64_t v = 0;
    if (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        *why = "0x prefix not allowed (give exactly 16 hex digits)";
        return -1;
    }
    if (len < 16) {
        *why = "too short (need exactly 16 hex digits)";
        return -1;
    }
    for (size_t i = 0; i < 16; i++) {
        int d = hex_digit((unsigned char)s[i]);
        if (d < 0) {
            *why = "not a hex digit";
            return -1;
        }
        v = (v << 4) | (uint64_t)d;
    }
    if (len > 16) {
        /* "HEX16 KEY": the separator is a TAB, not a space */
        *why = s[16] == ' ' ? "expected HEX16<TAB>KEY; found a space after the fingerprint"
                            : "too long (need exactly 16 hex digits)";
        return -1;
    }
    *out = v;
    return 0;
}

int in_parse_time(const char *s, int64_t *out)
{
    char *end;
    if (!s || !(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = (int64_t)v;
    return 0;
}

void in_put_field(FILE *f, const char *bytes, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)bytes[i];
        switch (c) {
        case '\\': fputs("\\\\", f); break;
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fputc('\\', f);
                fputc('x', f);
                fputc(hex[c >> 4], f);
                fputc(hex[c & 15], f);
            } else {
                fputc(c, f);
            }
        }
    }
}

long in_unescape_field(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\\') {
            s[o++] = s[i];
            continue;
        }
        if (++i == len) return -1;
        switch (s[i]) {
        case '\\': s[o++] = '\\'; break;
        case 't': s[o++] = '\t'; break;
        case 'n': s[o++] = '\n'; break;
        case 'r': s[o++] = '\r'; break;
        case 'x': {
            int hi = i + 2 < len ? hex_digit((unsigned char)s[i + 1]) : -1;
            int lo = hi >= 0 ? hex_digit((unsigned char)s[i + 2]) : -1;
            if (lo < 0) return -1;
            s[o++] = (char)(hi << 4 | lo);
            i += 2;
            break;
        }
        default: return -1;
        }
    }
    return (long)o;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

void in_put_json_string(FILE *f, const char *bytes, size_t len)
{
    const unsigned char *s = (const unsigned char *)bytes;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\t': fputs("\\t", f); break;
            case '\r': fputs("\\r", f); break;
            default: fprintf(f, "\\u%04x", c);
            }
            i++;
        } else {
            size_t l = utf8_valid_len(s + i, len - i);
            if (l == 0) {
                fprintf(f, "\\u%04x", c);
                i++;
            } else {
                fwrite(s + i, 1, l, f);
                i += l;
            }
        }
    }
    fputc('"', f);
}

const char *in_key_problem(const char *key, size_t len)
{
    if (len == 0) return "empty key";
    if (len > ND_MAX_KEY_LEN) return "key longer than 4096 bytes";
    if (memchr(key, '\0', len)) return "key contains a NUL byte";
    return NULL;
}

int in_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\f\v", p[i]) || p[i] == '\0') return 0;
    return 1;
}
