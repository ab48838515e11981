/*
 * test_verify_pair.c — the near-duplicate decision (engine/text/verify_pair.c):
 * each branch of the rule (distance beyond k, resemblance, containment,
 * the distance alone without a sketch or with R = 0), the estimates it
 * returns in every case, and the containment estimate against exact
 * counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "verify_pair.h"

/* A sketch whose first `same` 4-bit bins equal base's and the rest
 * differ. Its estimate against base is (same / 256 - 1/16) / (15/16). */
static void sketch_like(nd_sketch *out, const nd_sketch *base, unsigned same)
{
    *out = *base;
    for (unsigned i = same; i < ND_SKETCH_BINS; i++) out->bin[i / 2] ^= (uint8_t)(1u << (4 * (i & 1)));
}

static void sketch_fill(nd_sketch *out, unsigned mul, unsigned add)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < ND_SKETCH_BYTES; i++) out->bin[i] = (uint8_t)(i * mul + add);
}

static void test_resemblance(void **state)
{
    (void)state;
    nd_sketch s1, s2;
    sketch_fill(&s1, 977, 0);
    sketch_like(&s2, &s1, 226); /* (226 / 256 - 1/16) / (15/16) = 0.875 */
    verify_doc a = {0x0f, &s1, 100}, b = {0x00, &s2, 100};
    verify_rule r = {24, 8, 0.85, 0};
    verify_result f;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    assert_int_equal(f.dist, 4);
    assert_true(f.resemblance == 0.875 && f.containment == -1 && !f.by_containment);
    r.min_resemblance = 0.9;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 0);
    assert_true(f.resemblance == 0.875); /* estimates either way */
    r.min_resemblance = 0.85;
    r.k = 3; /* beyond k: never, whatever the resemblance */
    assert_int_equal(verify_pair(&f, &a, &b, &r), 0);
    assert_int_equal(f.dist, 4);
    r.k = 4;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    r.min_resemblance = 0; /* distance alone */
    sketch_like(&s2, &s1, 16); /* 16 / 256 agree: chance alone, J = 0 */
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    assert_true(f.resemblance == 0);
}

static void test_containment(void **state)
{
    (void)state;
    nd_sketch s1, s2;
    sketch_fill(&s1, 31, 7);
    sketch_like(&s2, &s1, 136); /* J = 0.5: |A n B| = 0.5 * 300 / 1.5 = 100 */
    verify_doc a = {1, &s1, 100}, b = {1, &s2, 200};
    verify_rule r = {24, 8, 0.85, 0.9};
    verify_result f;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    assert_true(f.by_containment);
    assert_true(f.containment > 0.999 && f.containment <= 1);
    b.distinct = 400; /* |A n B| = 0.5 * 500 / 1.5 = 167 of 100: capped at 1 */
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    assert_true(f.containment == 1);
    a.distinct = 200; /* 0.5 * 600 / 1.5 = 200 of 200 */
    b.distinct = 400;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1);
    a.distinct = 300; /* 0.5 * 700 / 1.5 = 233 of 300 = 0.78 */
    assert_int_equal(verify_pair(&f, &a, &b, &r), 0);
    assert_true(f.containment > 0.77 && f.containment < 0.78 && !f.by_containment);
    r.min_containment = 0; /* off: not estimated */
    assert_int_equal(verify_pair(&f, &a, &b, &r), 0);
    assert_true(f.containment == -1);
    assert_true(verify_containment(0.5, 0, 10) == 0);
    assert_true(verify_containment(1, 10, 10) == 1);
}

static void test_without_sketch(void **state)
{
    (void)state;
    nd_sketch s1;
    memset(&s1, 0, sizeof s1);
    verify_doc a = {0, &s1, 10}, b = {0xff, NULL, 0};
    verify_rule r = {24, 8, 0.85, 0.5};
    verify_result f;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 1); /* 8 bits: within */
    assert_true(f.resemblance == -1 && f.containment == -1 && !f.by_containment);
    b.fp = 0x1ff;
    assert_int_equal(verify_pair(&f, &a, &b, &r), 0); /* 9 bits */
    assert_int_equal(verify_pair(&f, &b, &b, &r), 1);
    assert_int_equal(f.dist, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resemblance),
        cmocka_unit_test(test_containment),
        cmocka_unit_test(test_without_sketch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
