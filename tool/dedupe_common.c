/*
 * dedupe_common.c — the dedupe commands' options and output lines (see
 * dedupe_common.h). Keys go out as TSV fields (escaped) or JSON strings
 * (input/in_text.c). Part of tool/ (moved from cli/), which neardup and
 * neardup-mpi link.
 */
#include "dedupe_common.h"

#include <stdio.h>
#include <stdlib.h>

#include "in_text.h"

void dedupe_cli_options(nd_dedupe_options *o, double min_res, int fp_input)
{
    if (min_res == 0 || fp_input) o->flags |= ND_DEDUPE_SIMHASH_ONLY;
    else o->min_resemblance = min_res;
    const char *tmp = getenv("TMPDIR");
    o->scratch_dir = tmp && *tmp ? tmp : NULL;
}

static void put_bytes(const char *k, size_t len, int json)
{
    if (json) in_put_json_string(stdout, k, len);
    else in_put_field(stdout, k, len);
}

int dedupe_print_pair(const nd_dedupe_pair *p, void *payload)
{
    int json = *(const int *)payload;
    if (!json) {
        put_bytes(p->key_a, p->key_a_len, 0);
        putchar('\t');
        put_bytes(p->key_b, p->key_b_len, 0);
        printf("\t%u\n", p->dist);
        return 0;
    }
    printf("{\"a\":");
    put_bytes(p->key_a, p->key_a_len, 1);
    printf(",\"b\":");
    put_bytes(p->key_b, p->key_b_len, 1);
    printf(",\"dist\":%u", p->dist);
    if (p->resemblance >= 0) printf(",\"resemblance\":%.3f", p->resemblance);
    if (p->containment >= 0) printf(",\"containment\":%.3f", p->containment);
    printf("}\n");
    return 0;
}

int dedupe_print_member(const nd_dedupe_member *m, void *payload)
{
    int json = *(const int *)payload;
    const char *role = m->role == ND_DEDUPE_ROLE_KEEP ? "keep" : "drop";
    if (json) printf("{\"cluster\":%llu,\"role\":\"%s\",\"key\":", (unsigned long long)m->cluster, role);
    else printf("%llu\t%s\t", (unsigned long long)m->cluster, role);
    put_bytes(m->key, m->key_len, json);
    printf(json ? ",\"dist\":%u}\n" : "\t%u\n", m->dist);
    return 0;
}

int dedupe_print_role(const nd_dedupe_member *m, void *payload)
{
    const dedupe_role_view *v = payload;
    if (m->role != v->want) return 0;
    if (v->json) {
        printf("{\"%s\":", v->want == ND_DEDUPE_ROLE_KEEP ? "keep" : "drop");
        put_bytes(m->key, m->key_len, 1);
        printf("}\n");
    } else {
        put_bytes(m->key, m->key_len, 0);
        putchar('\n');
    }
    return 0;
}
