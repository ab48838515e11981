/*
 * test_plan.c — table plans: permutations are bijections, the pigeonhole
 * property holds for every design, extra probes beyond k are exact, the
 * text form round-trips and rejects garbage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oracle.h"
#include "plan.h"

static oracle_rng rng = {0x1234567};
static uint64_t rnd(void)
{
    return oracle_next(&rng);
}

/* b at exactly distance d from a. */
static uint64_t flip_bits(uint64_t a, unsigned d)
{
    return oracle_flip(&rng, a, d);
}

static uint64_t top(uint64_t x, unsigned p) { return p == 0 ? 0 : x >> (64 - p); }

/* Smallest number of differing prefix bits over the tables of plan. */
static unsigned min_prefix_diff(const nd_plan *plan, uint64_t a, uint64_t b)
{
    unsigned best = 64;
    for (unsigned i = 0; i < plan->info.tables; i++) {
        const nd_perm *p = &plan->table[i];
        unsigned d = (unsigned)__builtin_popcountll(top(nd_perm_apply(p, a), p->prefix_bits) ^
                                                    top(nd_perm_apply(p, b), p->prefix_bits));
        if (d < best) best = d;
    }
    return best;
}

static void check_bijection(const nd_plan *plan)
{
    for (unsigned i = 0; i < plan->info.tables; i++) {
        const nd_perm *p = &plan->table[i];
        uint64_t seen = 0;
        for (unsigned bit = 0; bit < 64; bit++) {
            uint64_t img = nd_perm_apply(p, 1ull << bit);
            assert_int_equal(__builtin_popcountll(img), 1);
            assert_int_equal(seen & img, 0);
            seen |= img;
            assert_true(nd_perm_invert(p, img) == (1ull << bit));
        }
        for (int r = 0; r < 100; r++) {
            uint64_t x = rnd();
            assert_true(nd_perm_invert(p, nd_perm_apply(p, x)) == x);
        }
    }
}

/* Every design of every k: bijections, and pigeonhole + extra probes. */
static void test_all_designs(void **state)
{
    (void)state;
    for (unsigned k = 0; k <= ND_MAX_PLAN_K; k++) {
        nd_plan_info infos[256];
        size_t n = 0;
        assert_int_equal(nd_plan_candidates(infos, 256, &n, k, 1000000), ND_OK);
        assert_true(n > 0 && n <= 256);
        for (size_t c = 0; c < n; c++) {
            nd_plan plan;
            assert_int_equal(nd_plan_choose(&plan, k, 1000000, infos[c].tables), ND_OK);
            check_bijection(&plan);
            for (int r = 0; r < 300; r++) {
                uint64_t a = rnd();
                unsigned d = (unsigned)(rnd() % (k + 1));
                assert_int_equal(min_prefix_diff(&plan, a, flip_bits(a, d)), 0);
                /* Beyond k: some table's prefix differs in <= extra bits. */
                unsigned extra = 1 + (unsigned)(rnd() % 3);
                assert_true(min_prefix_diff(&plan, a, flip_bits(a, k + extra)) <= extra);
            }
        }
    }
}

/* d differing bits spread as evenly as possible over b blocks of 64 bits
 * cut as the planner cuts (as equal as possible, larger first), counted
 * from bit 0 up (from_top = 0) or from bit 63 down: the placements that
 * put the most differences into the blocks holding the fewest. */
static uint64_t even_flips(uint64_t a, unsigned d, unsigned b, int from_top)
{
    unsigned start[65], size[64], at = 0;
    for (unsigned i = 0; i < b; i++) {
        size[i] = 64 / b + (i < 64 % b);
        start[i] = at;
        at += size[i];
    }
    uint64_t mask = 0;
    unsigned used[64] = {0};
    for (unsigned j = 0; j < d; j++) {
        unsigned blk = (unsigned)((j + rnd()) % b), tries = 0;
        while (used[blk] >= size[blk] && tries++ < b) blk = (blk + 1) % b;
        unsigned pos;
        do pos = start[blk] + (unsigned)(rnd() % size[blk]);
        while ((mask >> (from_top ? 63 - pos : pos)) & 1);
        mask |= 1ull << (from_top ? 63 - pos : pos);
        used[blk]++;
    }
    return a ^ mask;
}

/* Beyond k, probes flip at most nd_plan_flip_bound bits: some table's
 * prefix always differs in no more, on random and on evenly spread
 * differences; the bound never exceeds k' - k. */
static void test_flip_bound(void **state)
{
    (void)state;
    for (unsigned k = 0; k <= ND_MAX_PLAN_K; k++) {
        nd_plan_info infos[256];
        size_t n = 0;
        assert_int_equal(nd_plan_candidates(infos, 256, &n, k, 1000000), ND_OK);
        for (size_t c = 0; c < n; c++) {
            nd_plan plan;
            assert_int_equal(nd_plan_choose(&plan, k, 1000000, infos[c].tables), ND_OK);
            assert_int_equal(nd_plan_flip_bound(&plan, k), 0);
            for (unsigned kq = k + 1; kq <= k + 5 && kq <= ND_MAX_K; kq++) {
                unsigned bound = nd_plan_flip_bound(&plan, kq);
                assert_true(bound <= kq - k);
                for (int r = 0; r < 120; r++) {
                    uint64_t a = rnd();
                    assert_true(min_prefix_diff(&plan, a, flip_bits(a, kq)) <= bound);
                    uint64_t e = even_flips(a, kq, plan.info.blocks[0], r & 1);
                    assert_true(min_prefix_diff(&plan, a, e) <= bound);
                }
            }
        }
    }
    /* The case that motivated it: k=3 on 4 blocks, queried at 6. */
    nd_plan plan;
    assert_int_equal(nd_plan_choose(&plan, 3, 1000000, 4), ND_OK);
    assert_int_equal(nd_plan_flip_bound(&plan, 6), 1);
}

/* Exhaustive for k=2: every placement of two differing bits. */
static void test_exhaustive_k2(void **state)
{
    (void)state;
    nd_plan plan;
    assert_int_equal(nd_plan_choose(&plan, 2, 1000000, 6), ND_OK); /* b=4 */
    uint64_t a = rnd();
    for (unsigned i = 0; i < 64; i++)
        for (unsigned j = i + 1; j < 64; j++)
            assert_int_equal(min_prefix_diff(&plan, a, a ^ (1ull << i) ^ (1ull << j)), 0);
}

static void test_manku_designs(void **state)
{
    (void)state;
    nd_plan plan;
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 4), ND_OK);
    assert_int_equal(plan.info.tables, 4);
    assert_int_equal(plan.info.prefix_min, 16);
    assert_int_equal(plan.info.prefix_max, 16);
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 10), ND_OK);
    assert_int_equal(plan.info.tables, 10);
    assert_in_range(plan.info.prefix_min, 25, 26);
    assert_in_range(plan.info.prefix_max, 25, 26);
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 20), ND_OK);
    assert_int_equal(plan.info.tables, 20);
    assert_in_range(plan.info.prefix_min, 30, 33);
    assert_in_range(plan.info.prefix_max, 30, 33);
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 16), ND_OK);
    assert_int_equal(plan.info.levels, 2);
    assert_int_equal(plan.info.prefix_min, 28);
    assert_int_equal(nd_plan_choose(&plan, 0, 1000, 0), ND_OK);
    assert_int_equal(plan.info.tables, 1);
    assert_int_equal(plan.info.prefix_min, 64);
    /* The default for k=3 at 1e8 is the 10-table design. */
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 0), ND_OK);
    assert_int_equal(plan.info.tables, 10);
    assert_int_equal(nd_plan_choose(&plan, 3, 100000000, 7), ND_EINVAL);
    assert_non_null(strstr(nd_errmsg(), "available"));
    assert_int_equal(nd_plan_choose(&plan, 9, 100, 0), ND_EINVAL);
    assert_int_equal(nd_plan_choose(&plan, 3, 0, 0), ND_EINVAL);
}

static void test_candidates_order(void **state)
{
    (void)state;
    nd_plan_info a[256], b[3];
    size_t n = 0, n2 = 0;
    assert_int_equal(nd_plan_candidates(a, 256, &n, 3, 1000000000ull), ND_OK);
    for (size_t i = 1; i < n; i++) assert_true(a[i - 1].cost <= a[i].cost);
    assert_int_equal(nd_plan_candidates(b, 3, &n2, 3, 1000000000ull), ND_OK);
    assert_int_equal(n2, n);
    assert_memory_equal(a, b, 3 * sizeof b[0]);
}

static void test_probe_count(void **state)
{
    (void)state;
    nd_plan plan;
    uint64_t c;
    assert_int_equal(nd_plan_choose(&plan, 3, 1000000, 4), ND_OK);
    nd_plan_probe_count(&plan, 3, &c);
    assert_int_equal(c, 4);
    nd_plan_probe_count(&plan, 4, &c);
    assert_int_equal(c, 4 * 17);
    nd_plan_probe_count(&plan, 5, &c);
    assert_int_equal(c, 4 * 17); /* one flipped bit suffices up to k=7 */
    nd_plan_probe_count(&plan, 8, &c);
    assert_int_equal(c, 4 * (1 + 16 + 120));
}

static void test_encode_decode(void **state)
{
    (void)state;
    char buf[8192];
    for (unsigned k = 0; k <= 8; k++) {
        nd_plan plan, back;
        assert_int_equal(nd_plan_choose(&plan, k, 50000000, 0), ND_OK);
        assert_int_equal(nd_plan_encode(buf, sizeof buf, &plan), ND_OK);
        assert_int_equal(nd_plan_decode(&back, buf, strlen(buf)), ND_OK);
        assert_int_equal(back.info.k, k);
        assert_int_equal(back.info.tables, plan.info.tables);
        for (unsigned i = 0; i < plan.info.tables; i++) {
            assert_int_equal(back.table[i].prefix_bits, plan.table[i].prefix_bits);
            uint64_t x = rnd();
            assert_true(nd_perm_apply(&back.table[i], x) == nd_perm_apply(&plan.table[i], x));
        }
        /* Every truncation is rejected, never a crash. */
        size_t len = strlen(buf);
        for (size_t cut = 0; cut < len; cut++) assert_int_equal(nd_plan_decode(&back, buf, cut), ND_ECORRUPT);
    }
    assert_int_equal(nd_plan_encode(buf, 10, &(nd_plan){.info = {.tables = 1}}), ND_ELIMIT);
    nd_plan back;
    const char *dup = "plan1 k=0 t=1 levels=1 b=1,0\np=64 segs=0:0:32,0:32:32\n";
    assert_int_equal(nd_plan_decode(&back, dup, strlen(dup)), ND_ECORRUPT);
    const char *shortp = "plan1 k=0 t=1 levels=1 b=1,0\np=64 segs=0:0:32\n";
    assert_int_equal(nd_plan_decode(&back, shortp, strlen(shortp)), ND_ECORRUPT);
    const char *ok = "plan1 k=0 t=1 levels=1 b=1,0\np=64 segs=0:0:64\n";
    assert_int_equal(nd_plan_decode(&back, ok, strlen(ok)), ND_OK);
    /* Random garbage never crashes. */
    for (int r = 0; r < 2000; r++) {
        char g[64];
        size_t gl = rnd() % sizeof g;
        for (size_t i = 0; i < gl; i++) g[i] = (char)("plan1 k=t0123456789:,\np=segs"[rnd() % 28]);
        nd_plan_decode(&back, g, gl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_designs),     cmocka_unit_test(test_exhaustive_k2),
        cmocka_unit_test(test_manku_designs),   cmocka_unit_test(test_candidates_order),
        cmocka_unit_test(test_probe_count),     cmocka_unit_test(test_flip_bound),     cmocka_unit_test(test_encode_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
