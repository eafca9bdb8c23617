/* CPU tgl_random and tgl_dropout, one element at a time: Philox words (cpu_random.h) turned into
 * the kind's value by the formulas tensorgl.h gives, in f32 statement by statement (C11 does not
 * contract them into fused multiply-adds), as glsl/tensor/elementwise.comp does. */
#include "cpu_convert.h"
#include "cpu_ops.h"
#include "cpu_random.h"

#include <math.h>
#include <string.h>

static float f32_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* (x >> 8) * 2^-24: exact, in [0, 1). */
static float u24(uint32_t x)
{
    return (float)(x >> 8) * 0x1p-24f;
}

/* -2 ln u for u in (0, 1], as glsl/tensor/elementwise.comp's minus_two_ln: for u >= 0.75 the
 * series of 4 atanh((1 - u) / (1 + u)), since GLSL's log may err near u = 1 by more than the value. */
static float minus_two_ln(float u)
{
    if (u < 0.75f)
        return -2.0f * logf(u);
    float t = (1.0f - u) / (1.0f + u);
    float t2 = t * t;
    return 4.0f * t * (1.0f + t2 * (1.0f / 3.0f + t2 * (0.2f + t2 * (1.0f / 7.0f + t2 * (1.0f / 9.0f)))));
}

void tgl_cpu_random_element(tgl_cpu_random_state *st, const tgl__tew *e, uint64_t index, const uint8_t *x, uint8_t *o)
{
    uint64_t block = e->offset + index / 4;
    unsigned q = (unsigned)(index % 4);
    if (!st->drawn || st->block != block) { /* the walk is in index order: a block serves four */
        tgl_random_block(e->seed, block, st->words);
        st->block = block;
        st->drawn = 1;
    }
    const uint32_t *w = st->words;
    tgl_dtype dt = e->out.dtype;
    if (e->op == TGL__TEW_DROPOUT) {
        float keep = (w[q] >> 8) >= e->step ? 1.0f : 0.0f;
        float masked = tgl_cpu_load_f32(dt, x) * keep; /* a dropped inf or NaN gives NaN, as PyTorch's */
        tgl_cpu_store_f32(dt, masked * f32_of(e->value), o);
        return;
    }
    switch ((tgl_random_kind)e->sub) {
    case TGL_RANDOM_UNIFORM: {
        float scaled = f32_of(e->step) * u24(w[q]);
        float r = f32_of(e->value) + scaled;
        tgl_cpu_store_f32(dt, r < f32_of(e->extra) ? r : f32_of(e->extra), o);
        break;
    }
    case TGL_RANDOM_NORMAL: { /* a pair of elements from words 2 (q / 2) and the one after */
        float u = u24(w[q & 2u]) + 0x1p-24f, v = u24(w[(q & 2u) + 1]);
        float radius = sqrtf(minus_two_ln(u));
        float turn = 6.28318548f * v;
        float angle = turn - 3.14159274f;
        float z = radius * (q & 1u ? sinf(angle) : cosf(angle));
        float scaled = f32_of(e->step) * z;
        tgl_cpu_store_f32(dt, f32_of(e->value) + scaled, o);
        break;
    }
    case TGL_RANDOM_BERNOULLI: {
        int32_t one = (w[q] >> 8) < e->step;
        tgl_cpu_convert(dt, TGL_DTYPE_I32, (const uint8_t *)&one, o);
        break;
    }
    default: { /* randint: low + the high word of x * range, wrapping as i32 */
        uint32_t v = e->value + (uint32_t)(((uint64_t)w[q] * e->step) >> 32);
        int32_t i;
        memcpy(&i, &v, 4);
        tgl_cpu_convert(dt, TGL_DTYPE_I32, (const uint8_t *)&i, o);
        break;
    }
    }
}
