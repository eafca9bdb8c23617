/* The element-wise formulas of the CPU backend, in double precision and rounded once to f32,
 * so the oracle is as accurate as f32 output allows. docs/ops.md documents the same formulas;
 * glsl/common/elementwise.glsl implements them for GL. */
#ifndef TGL_CPU_MATH_H
#define TGL_CPU_MATH_H

#include "tensorgl.h"
#include <math.h>
#include <stdint.h>

/* The tanh approximation 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), computed as
 * x * sigmoid(2z): the same value, without the cancellation of 1 + tanh(z) for z << 0 (even in
 * double it gives 0 below z = -19). */
static inline double tgl_cpu_gelu(double x)
{
    const double k = 0.7978845608028654; /* sqrt(2 / pi) */
    return x / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x)));
}

static inline float tgl_cpu_unary(tgl_unary_op op, float xf)
{
    double x = xf;
    switch (op) {
    case TGL_UNARY_NEG: return (float)-x;
    case TGL_UNARY_ABS: return (float)fabs(x);
    case TGL_UNARY_EXP: return (float)exp(x);
    case TGL_UNARY_LOG: return (float)log(x);
    case TGL_UNARY_SQRT: return (float)sqrt(x);
    case TGL_UNARY_RSQRT: return (float)(1.0 / sqrt(x));
    case TGL_UNARY_RECIP: return (float)(1.0 / x);
    case TGL_UNARY_SQUARE: return (float)(x * x);
    case TGL_UNARY_SIN: return (float)sin(x);
    case TGL_UNARY_COS: return (float)cos(x);
    case TGL_UNARY_TANH: return (float)tanh(x);
    case TGL_UNARY_SIGMOID: return (float)(1.0 / (1.0 + exp(-x)));
    case TGL_UNARY_RELU: return isnan(x) ? xf : (float)(x > 0.0 ? x : 0.0);
    case TGL_UNARY_GELU: return (float)tgl_cpu_gelu(x);
    case TGL_UNARY_SILU: return (float)(x / (1.0 + exp(-x)));
    case TGL_UNARY_FLOOR: return (float)floor(x);
    case TGL_UNARY_CEIL: return (float)ceil(x);
    case TGL_UNARY_ERF: return (float)erf(x);
    case TGL_UNARY_GELU_ERF: return (float)(0.5 * x * erfc(-x * 0.7071067811865476)); /* 1 + erf(z) == erfc(-z) */
    case TGL_UNARY_LOG1P: return (float)log1p(x);
    case TGL_UNARY_EXPM1: return (float)expm1(x);
    case TGL_UNARY_ROUND: return nearbyintf(xf); /* the default rounding mode: half to even */
    case TGL_UNARY_TRUNC: return truncf(xf);
    case TGL_UNARY_SIGN: return xf > 0.0f ? 1.0f : xf < 0.0f ? -1.0f : xf; /* +-0 and NaN as they are */
    case TGL_UNARY_NOT: case TGL_UNARY_ISNAN: case TGL_UNARY_ISINF: case TGL_UNARY_ISFINITE:
        break; /* integer and bool only; the tests write bool (cpu_tensor_ewise.c) */
    }
    return NAN;
}

/* A fused epilogue's activation (tensorgl.h, tgl_activation), in double and rounded once. */
static inline float tgl_cpu_activation(tgl_activation act, float slope, float xf)
{
    double x = xf;
    switch (act) {
    case TGL_ACTIVATION_NONE: return xf;
    case TGL_ACTIVATION_RELU: return tgl_cpu_unary(TGL_UNARY_RELU, xf);
    case TGL_ACTIVATION_RELU6: return isnan(x) ? xf : (float)(x < 0.0 ? 0.0 : x > 6.0 ? 6.0 : x);
    case TGL_ACTIVATION_LEAKY_RELU: return x < 0.0 ? (float)(x * slope) : xf;
    case TGL_ACTIVATION_SIGMOID: return tgl_cpu_unary(TGL_UNARY_SIGMOID, xf);
    case TGL_ACTIVATION_SILU: return tgl_cpu_unary(TGL_UNARY_SILU, xf);
    case TGL_ACTIVATION_GELU: return tgl_cpu_unary(TGL_UNARY_GELU, xf);
    case TGL_ACTIVATION_GELU_ERF: return tgl_cpu_unary(TGL_UNARY_GELU_ERF, xf);
    case TGL_ACTIVATION_HARDSWISH: {
        if (isnan(x))
            return xf;
        double r = x + 3.0 < 0.0 ? 0.0 : x + 3.0 > 6.0 ? 6.0 : x + 3.0;
        return (float)(x * r / 6.0);
    }
    case TGL_ACTIVATION_TANH: return tgl_cpu_unary(TGL_UNARY_TANH, xf);
    }
    return NAN;
}

/* C's fmod, exact; the sign of a. */
static inline float tgl_cpu_fmod(float a, float b)
{
    return fmodf(a, b);
}

/* PyTorch's float remainder: fmod, plus b where the result and b differ in sign. */
static inline float tgl_cpu_remainder(float a, float b)
{
    float m = fmodf(a, b);
    return m != 0.0f && (m < 0.0f) != (b < 0.0f) ? m + b : m;
}

static inline float tgl_cpu_binary(tgl_binary_op op, float af, float bf)
{
    double a = af, b = bf;
    switch (op) {
    case TGL_BINARY_ADD: return (float)(a + b);
    case TGL_BINARY_SUB: return (float)(a - b);
    case TGL_BINARY_MUL: return (float)(a * b);
    case TGL_BINARY_DIV: return (float)(a / b);
    case TGL_BINARY_MAX: return isnan(a) || isnan(b) ? NAN : (float)(a > b ? a : b);
    case TGL_BINARY_MIN: return isnan(a) || isnan(b) ? NAN : (float)(a < b ? a : b);
    case TGL_BINARY_POW: return (float)pow(a, b);
    case TGL_BINARY_ATAN2: return (float)atan2(a, b);
    case TGL_BINARY_FMOD: return tgl_cpu_fmod(af, bf);
    case TGL_BINARY_REMAINDER: return tgl_cpu_remainder(af, bf);
    case TGL_BINARY_FLOOR_DIV: case TGL_BINARY_AND: case TGL_BINARY_OR: case TGL_BINARY_XOR: case TGL_BINARY_SHL:
    case TGL_BINARY_SHR:
        break; /* integer and bool only */
    }
    return NAN;
}

/* x op y as IEEE compares (NaN unordered: only ne holds; -0 == +0); doubles hold every f32 and
 * i32 exactly. */
static inline int tgl_cpu_compare(tgl_compare_op op, double x, double y)
{
    switch (op) {
    case TGL_COMPARE_EQ: return x == y;
    case TGL_COMPARE_NE: return x != y;
    case TGL_COMPARE_LT: return x < y;
    case TGL_COMPARE_LE: return x <= y;
    case TGL_COMPARE_GT: return x > y;
    default: return x >= y;
    }
}

/* The i32 ops, exact with two's complement wrap (computed on uint32_t, where C defines it). */
static inline int32_t tgl_cpu_i32(uint32_t u)
{
    return u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

static inline int32_t tgl_cpu_unary_i32(tgl_unary_op op, int32_t x)
{
    uint32_t u = (uint32_t)x;
    switch (op) {
    case TGL_UNARY_NEG: return tgl_cpu_i32(0u - u);
    case TGL_UNARY_ABS: return x < 0 ? tgl_cpu_i32(0u - u) : x;
    case TGL_UNARY_SQUARE: return tgl_cpu_i32(u * u);
    case TGL_UNARY_SIGN: return (x > 0) - (x < 0);
    case TGL_UNARY_NOT: return tgl_cpu_i32(~u);
    default: return 0; /* not an i32 op: refused before */
    }
}

/* Python's floor division and remainder; by zero a // 0 == 0 and a % 0 == a. */
static inline int32_t tgl_cpu_floor_div_i32(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    int64_t q = (int64_t)a / b; /* truncated; INT32_MIN / -1 is 2^31 here */
    if ((int64_t)a % b != 0 && (a < 0) != (b < 0))
        q--;
    return tgl_cpu_i32((uint32_t)(uint64_t)q);
}

static inline int32_t tgl_cpu_remainder_i32(int32_t a, int32_t b)
{
    if (b == 0)
        return a;
    int64_t r = (int64_t)a % b;
    if (r != 0 && (r < 0) != (b < 0))
        r += b;
    return (int32_t)r;
}

static inline int32_t tgl_cpu_binary_i32(tgl_binary_op op, int32_t a, int32_t b)
{
    uint32_t x = (uint32_t)a, y = (uint32_t)b;
    switch (op) {
    case TGL_BINARY_ADD: return tgl_cpu_i32(x + y);
    case TGL_BINARY_SUB: return tgl_cpu_i32(x - y);
    case TGL_BINARY_MUL: return tgl_cpu_i32(x * y);
    case TGL_BINARY_MAX: return a > b ? a : b;
    case TGL_BINARY_MIN: return a < b ? a : b;
    case TGL_BINARY_FLOOR_DIV: return tgl_cpu_floor_div_i32(a, b);
    case TGL_BINARY_REMAINDER: return tgl_cpu_remainder_i32(a, b);
    case TGL_BINARY_AND: return tgl_cpu_i32(x & y);
    case TGL_BINARY_OR: return tgl_cpu_i32(x | y);
    case TGL_BINARY_XOR: return tgl_cpu_i32(x ^ y);
    case TGL_BINARY_SHL: return y > 31u ? 0 : tgl_cpu_i32(x << y); /* negative counts are > 31 as uint */
    case TGL_BINARY_SHR: /* arithmetic */
        if (y > 31u)
            return a < 0 ? -1 : 0;
        return a < 0 ? tgl_cpu_i32(~(~x >> y)) : (int32_t)(x >> y);
    default: return 0; /* not an i32 op: refused before */
    }
}

#endif
