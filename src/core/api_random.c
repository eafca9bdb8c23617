/* tgl_random and tgl_dropout (tensorgl.h): their parameters checked and turned into the f32 or
 * i32 bits the backends compute with, once, here; the descriptors through the element-wise
 * checking path (api_tensor_ewise.c). Philox itself lives with the backends (cpu_random.h,
 * glsl/common/philox.glsl). */
#include "trace.h"
#include "validate.h"

#include <float.h>
#include <math.h>

static const char *const kind_names[TGL_RANDOM_COUNT] = {"uniform", "normal", "bernoulli", "randint"};

static uint32_t f32_bits(float f)
{
    return (uint32_t)tgl__f32_bits(f);
}

/* v as an f32 that is finite (the call fails naming it otherwise). */
static tgl_status finite_f32(tgl_backend *b, const char *name, double v, float *f)
{
    if (!(fabs(v) <= FLT_MAX))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %.17g is not a finite f32 value", name, v);
    *f = (float)v;
    return TGL_OK;
}

/* round(p * 2^24) for a probability p in [0, 1]: where (x >> 8) falls below it. */
static tgl_status threshold(tgl_backend *b, const char *name, double p, uint32_t *t)
{
    if (!(p >= 0.0 && p <= 1.0))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %.17g is not a probability in [0, 1]", name, p);
    *t = (uint32_t)floor(p * 16777216.0 + 0.5);
    return TGL_OK;
}

/* The kind's parameters into e->value, e->step, e->extra. */
static tgl_status random_params(tgl_backend *b, tgl__tew *e, double a, double bb)
{
    float lo = 0.0f, hi = 0.0f, scale = 0.0f;
    int32_t low = 0, high = 0;
    tgl_status st;
    switch ((tgl_random_kind)e->sub) {
    case TGL_RANDOM_UNIFORM:
        if ((st = finite_f32(b, "a", a, &lo)) || (st = finite_f32(b, "bb", bb, &hi)))
            return st;
        if (!(a < bb))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a, bb: uniform takes a < bb, not [%.17g, %.17g)", a, bb);
        if ((double)hi >= bb)
            hi = nextafterf(hi, -INFINITY); /* the largest f32 below bb */
        if ((st = finite_f32(b, "bb - a", bb - a, &scale)))
            return st;
        if (hi < lo)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a, bb: no f32 value lies in [%.17g, %.17g)", a, bb);
        e->value = f32_bits(lo);
        e->step = f32_bits(scale);
        e->extra = f32_bits(hi);
        return TGL_OK;
    case TGL_RANDOM_NORMAL:
        if ((st = finite_f32(b, "a (mean)", a, &lo)) || (st = finite_f32(b, "bb (std)", bb, &scale)))
            return st;
        if (scale < 0.0f)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "bb (std): %.17g is negative", bb);
        e->value = f32_bits(lo);
        e->step = f32_bits(scale);
        return TGL_OK;
    case TGL_RANDOM_BERNOULLI: return threshold(b, "a (p)", a, &e->step);
    default:
        if ((st = tgl__i32_arg(b, "a (low)", a, &low)) || (st = tgl__i32_arg(b, "bb (high)", bb, &high)))
            return st;
        if (low >= high)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a, bb: randint takes low < high, not [%lld, %lld)",
                             (long long)low, (long long)high);
        e->value = (uint32_t)low;
        e->step = (uint32_t)((int64_t)high - low);
        return TGL_OK;
    }
}

TGL_API tgl_status tgl_random(tgl_backend *b, tgl_random_kind kind, const tgl_tensor *out, double a, double bb,
                              uint64_t seed, uint64_t offset)
{
    if (tgl__hooked(b))
        return TGL__HOOK(RANDOM);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if ((unsigned)kind >= TGL_RANDOM_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kind: %d is not a tgl_random_kind", (int)kind);
    tgl__tew e = {.op = TGL__TEW_RANDOM, .sub = (int)kind, .nin = 1, .seed = seed, .offset = offset};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {out}; /* out itself: resolved alike, never read */
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"out"};
    int empty = 0;
    if ((st = random_params(b, &e, a, bb)) || (st = tgl__check_tew(b, TGL__FN_RANDOM, out, "out", ins, names, &e, &empty)))
        return st;
    int is_float = out->dtype != TGL_DTYPE_I32 && out->dtype != TGL_DTYPE_BOOL;
    if ((!is_float && kind <= TGL_RANDOM_NORMAL) || (out->dtype == TGL_DTYPE_BOOL && kind == TGL_RANDOM_RANDINT))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "out: %s does not write %s", kind_names[kind],
                         tgl_dtype_name(out->dtype));
    return empty ? TGL_OK : tgl__run_tew(b, &e, "tgl_random");
}

TGL_API tgl_status tgl_dropout(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, double p, uint64_t seed,
                               uint64_t offset)
{
    if (tgl__hooked(b))
        return TGL__HOOK(DROPOUT);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl__tew e = {.op = TGL__TEW_DROPOUT, .nin = 1, .seed = seed, .offset = offset};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {in};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"in"};
    int empty = 0;
    if ((st = threshold(b, "p", p, &e.step)) || (st = tgl__check_tew(b, TGL__FN_DROPOUT, out, "out", ins, names, &e, &empty)))
        return st;
    e.value = f32_bits(p == 1.0 ? 0.0f : (float)(1.0 / (1.0 - p))); /* p = 1: in * 0, as PyTorch */
    return empty ? TGL_OK : tgl__run_tew(b, &e, "tgl_dropout");
}
