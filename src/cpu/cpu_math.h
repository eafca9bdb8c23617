/* The element-wise formulas of the CPU backend, in double precision and rounded once to f32,
 * so the oracle is as accurate as f32 output allows. docs/ops.md documents the same formulas;
 * glsl/common/elementwise.glsl implements them for GL. */
#ifndef TGL_CPU_MATH_H
#define TGL_CPU_MATH_H

#include "tensorgl.h"
#include <math.h>

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
    }
    return NAN;
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
    }
    return NAN;
}

#endif
