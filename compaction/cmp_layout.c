/*
 * cmp_layout.c — family names and table keys (cmp_layout.h), and the
 * decoding of a run's value: the codec's complements from the tail down,
 * turned back into ascending values.
 */
#include "cmp_layout.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nd_endian.h"
#include "nd_error.h"

void cmp_family_name(char out[32], int cf, uint64_t gen)
{
    int len = cf == ST_CF_DOCS  ? snprintf(out, 32, "docs")
              : cf == ST_CF_REV ? snprintf(out, 32, "rev")
                                : snprintf(out, 32, "t%02d", cf - ST_CF_TABLE0);
    if (gen) snprintf(out + len, (size_t)(32 - len), ".g%" PRIu64, gen);
}

int cmp_family_parse(const char *name, int *cf, uint64_t *gen)
{
    const char *p;
    if (strncmp(name, "docs", 4) == 0) {
        *cf = ST_CF_DOCS;
        p = name + 4;
    } else if (strncmp(name, "rev", 3) == 0) {
        *cf = ST_CF_REV;
        p = name + 3;
    } else if (name[0] == 't' && name[1] >= '0' && name[1] <= '9' && name[2] >= '0' &&
               name[2] <= '9') {
        *cf = ST_CF_TABLE((name[1] - '0') * 10 + (name[2] - '0'));
        p = name + 3;
    } else {
        return 0;
    }
    *gen = 0;
    if (*p == '\0') return 1;
    if (p[0] != '.' || p[1] != 'g' || p[2] == '\0') return 0;
    for (p += 2; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        *gen = *gen * 10 + (uint64_t)(*p - '0');
    }
    return *gen > 0;
}

/* Decimal digits of v[0..len) into *out: 1, or 0 when none or not all
 * digits (or more than 19). */
static int parse_decimal(const char *v, size_t len, uint64_t *out)
{
    *out = 0;
    if (len == 0 || len > 19) return 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return 0;
        *out = *out * 10 + (uint64_t)(v[i] - '0');
    }
    return 1;
}

int cmp_gen_record_parse(const char *v, size_t len, uint64_t *gen, uint64_t *keyed)
{
    const char *comma = memchr(v, ',', len);
    size_t glen = comma ? (size_t)(comma - v) : len;
    if (!parse_decimal(v, glen, gen)) return 0;
    if (!comma) {
        *keyed = *gen;
        return 1;
    }
    return parse_decimal(comma + 1, len - glen - 1, keyed) && *keyed < *gen;
}

size_t cmp_gen_record_format(char out[48], uint64_t gen, uint64_t keyed)
{
    int n = keyed == gen ? snprintf(out, 48, "%" PRIu64, gen)
                         : snprintf(out, 48, "%" PRIu64 ",%" PRIu64, gen, keyed);
    return (size_t)n;
}

int cmp_family_fixed(const char *name)
{
    for (int cf = ST_CF_META; cf < ST_CF_ALL; cf += cf == ST_CF_META ? ST_CF_MAX : 1)
        if (strcmp(name, cmp_family_fixed_name(cf)) == 0) return cf;
    return -1;
}

const char *cmp_family_fixed_name(int cf)
{
    return cf == ST_CF_META     ? "meta"
           : cf == ST_CF_SKETCH ? "sketch"
           : cf == ST_CF_BAND   ? "band"
                                : "";
}

void tbl_key(uint8_t out[TBL_KEY_LEN], char tag, uint64_t v)
{
    out[0] = (uint8_t)tag;
    nd_store_be64(out + 1, v);
}

int tbl_parse_key(char *tag, uint64_t *v, unsigned t, const char *key, size_t klen)
{
    if (klen != TBL_KEY_LEN || (key[0] != TBL_FRESH && key[0] != TBL_RUN))
        return nd_err_set(ND_ECORRUPT, "table %u: malformed key (%zu bytes, tag 0x%02x)", t,
                          klen, klen ? (unsigned)(unsigned char)key[0] : 0u);
    *tag = key[0];
    *v = nd_load_be64(key + 1);
    return ND_OK;
}

int tbl_key_in(char tag, unsigned t, const char *key, size_t klen, uint64_t *v, int *rc)
{
    char ktag;
    if (klen == 0 || key[0] != tag) return 0;
    *rc = tbl_parse_key(&ktag, v, t, key, klen);
    return *rc == ND_OK;
}

int tbl_decode_run(cmp_codec *c, uint64_t *buf, size_t *n, unsigned t, uint64_t tail,
                   uint64_t lo, const char *val, size_t vlen)
{
    /* Stored from the tail down as complements: values >= lo come first. */
    int rc = cmp_run_decode_upto(c, buf, CMP_RUN_MAX, n, ~tail, val, vlen, ~lo);
    if (rc < 0)
        return nd_err_wrap(rc == ND_ELIMIT ? ND_ECORRUPT : rc, "table %u, run %016llx", t,
                           (unsigned long long)tail);
    /* ~tail < ... < ~head: reverse and complement into head < ... < tail. */
    for (size_t i = 0, j = *n - 1; i < j; i++, j--) {
        uint64_t x = buf[i];
        buf[i] = ~buf[j];
        buf[j] = ~x;
    }
    if (*n & 1) buf[*n / 2] = ~buf[*n / 2];
    return ND_OK;
}
