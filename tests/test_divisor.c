/* The kernels' division by a dispatch-time divisor (src/gl/gl_divisor.h, common/divide.glsl)
 * against C's, on the host: every divisor up to 70000 and the powers of two and their
 * neighbours up to 2^32 - 1, each with the dividends around its multiples near 0 and near 2^32,
 * and random pairs. The kernels' coordinates go through the same arithmetic (the GL-vs-CPU
 * tests of strided and broadcast ops check the transliteration). */
#include "testing.h"
#include "gl/gl_divisor.h"

static tgt_rng rng; /* seeded from the run's seed (tgt_seed) in main */
static uint32_t next_u32(void)
{
    return (uint32_t)(tgt_next(&rng) >> 32);
}

/* Checks n / d for the dividends that probe d: around 0, around its multiples next to 2^32,
 * and a few random ones; returns the number of mismatches (printing the first). */
static unsigned check_divisor(uint32_t d)
{
    uint32_t m, s;
    tgl_gl_divisor_of(d, &m, &s);
    uint32_t top = UINT32_MAX / d * d; /* the largest multiple of d */
    uint32_t probes[] = {0,       1,        d - 1,   d,          d + 1,     2 * d - 1, 2 * d, top - 1, top,
                         top + 1, top - d,  top - d + 1, UINT32_MAX, UINT32_MAX - 1, next_u32(), next_u32()};
    unsigned bad = 0;
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        uint32_t n = probes[i], got = tgl_gl_divide(n, m, s);
        if (got != n / d && bad++ == 0)
            print_message("%u / %u: %u, expected %u (m %u, shifts %u)\n", n, d, got, n / d, m, s);
    }
    return bad;
}

static void test_small_divisors(void **state)
{
    (void)state;
    unsigned bad = 0;
    for (uint32_t d = 1; d <= 70000; d++)
        bad += check_divisor(d);
    assert_int_equal(bad, 0);
}

static void test_powers_and_neighbours(void **state)
{
    (void)state;
    unsigned bad = 0;
    for (int k = 1; k < 32; k++) {
        uint32_t p = (uint32_t)1 << k;
        bad += check_divisor(p - 1) + check_divisor(p) + check_divisor(p + 1);
    }
    bad += check_divisor(UINT32_MAX) + check_divisor(UINT32_MAX - 1) + check_divisor(0x80000001u);
    assert_int_equal(bad, 0);
}

static void test_random_pairs(void **state)
{
    (void)state;
    unsigned bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t d = next_u32() >> (next_u32() % 32), m, s;
        if (d == 0)
            continue;
        tgl_gl_divisor_of(d, &m, &s);
        uint32_t n = next_u32();
        bad += tgl_gl_divide(n, m, s) != n / d;
        bad += check_divisor(d);
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    tgt_rng_init(&rng, tgt_seed());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_divisors),
        cmocka_unit_test(test_powers_and_neighbours),
        cmocka_unit_test(test_random_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
