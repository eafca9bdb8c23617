// Element-wise formulas shared by the kernels, with float and vec4 overloads so both kernel
// variants run the same formula. They match src/cpu/cpu_math.h (the oracle); the comments say
// where GLSL's own builtin would not.

#include "common/precise.glsl"

float tgl_nan() { return uintBitsToFloat(0x7fc00000u); }
float tgl_inf() { return uintBitsToFloat(0x7f800000u); }
// a / b. GLSL promises division's precision only for |b| in [2^-126, 2^126]; beyond, NVIDIA's
// division (a times b's reciprocal) gave 0 for 3e38 / 3e38, the reciprocal underflowing. There
// both operands are scaled by 1/4 first: exact, and a quotient the scaling changes (|a| below
// 2^-124) underflows to 0 anyway. `precise`, so that the scaling is not simplified away.
float tgl_div_scale(float b) { return abs(b) > uintBitsToFloat(0x7e800000u) ? 0.25 : 1.0; }
vec4 tgl_div_scale(vec4 b) { return mix(vec4(1.0), vec4(0.25), greaterThan(abs(b), vec4(uintBitsToFloat(0x7e800000u)))); }
float tgl_quot(float a, float b) { float s = tgl_div_scale(b); TGL_PRECISE float r = (a * s) / (b * s); return r; }
vec4 tgl_quot(vec4 a, vec4 b) { vec4 s = tgl_div_scale(b); TGL_PRECISE vec4 r = (a * s) / (b * s); return r; }

// |v| with NaN as +inf, and whether v is +-inf or NaN: on the bits, so nothing depends on how a
// driver treats NaN. The overflow rescans (reductions, norms) use them: a set's largest
// magnitude is finite exactly when every element is.
float tgl_magnitude(float v)
{
    uint b = floatBitsToUint(v) & 0x7FFFFFFFu;
    return b > 0x7F800000u ? tgl_inf() : uintBitsToFloat(b);
}
vec4 tgl_magnitude(vec4 v)
{
    uvec4 b = floatBitsToUint(v) & uvec4(0x7FFFFFFFu);
    return mix(uintBitsToFloat(b), vec4(tgl_inf()), greaterThan(b, uvec4(0x7F800000u)));
}
bool tgl_not_finite(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) >= 0x7F800000u; }
// For a finite magnitude m > 0, the exponent e with m in [2^(e-1), 2^e): ldexp(x, 32 - e) brings
// every element of a set whose largest magnitude is m to at most 2^32 (a sum of 2^32 of them is
// finite, and the largest stays a normal number), and ldexp(r, e - 32) undoes it exactly.
int tgl_rescan_exponent(float m)
{
    int e;
    frexp(m, e);
    return e;
}

// ±0, on the bits. erf, log1p and expm1 return a zero as it is: NVIDIA's compiler turned erf's
// x * p of -0 into +0 (it need not keep a zero's sign in arithmetic that is not `precise`).
bool tgl_is_zero(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0u; }

// tanh and gelu avoid the cancellations a driver's tanh and the textbook gelu have in f32:
// - drivers may compute tanh as (e^2x - 1) / (e^2x + 1): inf/inf = NaN for large |x|, and all
//   relative precision lost near 0. Here: odd Taylor series below |x| = 0.1 (truncation error
//   < 3e-10 relative), (1 - e^-2|x|) / (1 + e^-2|x|) above, with |x| clamped at 15 where tanh
//   already rounds to 1.
// - gelu's 1 + tanh(z) cancels for z << 0; 1 + tanh(z) == 2 * sigmoid(2z) does not.
// NaN is passed through explicitly: clamp(NaN) may return a bound (llvmpipe gives -15).
#define TGL_DEFINE_ACTIVATIONS(T)                                                            \
    T tgl_tanh(T x)                                                                          \
    {                                                                                        \
        T e = exp(-2.0 * min(abs(x), T(15.0)));                                              \
        T s = clamp(x, -0.1, 0.1), s2 = s * s;                                               \
        T series = s * (1.0 + s2 * (-1.0 / 3.0 + s2 * (2.0 / 15.0 - s2 * (17.0 / 315.0))));  \
        T r = mix(sign(x) * (1.0 - e) / (1.0 + e), series, 1.0 - step(T(0.1), abs(x)));     \
        return mix(r, x, isnan(x));                                                          \
    }                                                                                        \
    T tgl_sigmoid(T x) { return 1.0 / (1.0 + exp(-x)); }                                     \
    T tgl_silu(T x) { return x / (1.0 + exp(-x)); }                                          \
    T tgl_gelu(T x) { return x / (1.0 + exp(-1.5957691216 * (x + 0.044715 * x * x * x))); } \
    T tgl_relu(T x) { return mix(max(x, T(0.0)), x, isnan(x)); }  /* NaN stays NaN */
TGL_DEFINE_ACTIVATIONS(float)
TGL_DEFINE_ACTIVATIONS(vec4)

// GLSL's max/min may return either operand for NaN; ours return NaN, as documented.
bool tgl_either_nan(float a, float b) { return isnan(a) || isnan(b); }
bvec4 tgl_either_nan(vec4 a, vec4 b) { return notEqual(uvec4(isnan(a)) | uvec4(isnan(b)), uvec4(0u)); }
#define TGL_DEFINE_MINMAX(T)                                                                 \
    T tgl_max(T a, T b) { return mix(max(a, b), T(tgl_nan()), tgl_either_nan(a, b)); }     \
    T tgl_min(T a, T b) { return mix(min(a, b), T(tgl_nan()), tgl_either_nan(a, b)); }
TGL_DEFINE_MINMAX(float)
TGL_DEFINE_MINMAX(vec4)

// The log of a subnormal (x's magnitude bits u, 0 < u < 2^23, x = u * 2^-149) from the integer
// u, exactly converted (tgl_pow takes its log2 so): llvmpipe runs shaders with denormals treated
// as zero and its log read the exponent field (log(1e-45) came out -88.0, C's -103.3). A
// negative subnormal is NaN.
bool tgl_subnormal(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) - 1u < 0x7FFFFFu; }
float tgl_log(float x)
{
    if (!tgl_subnormal(x))
        return log(x);
    return (floatBitsToUint(x) >> 31) != 0u ? tgl_nan() : log(float(floatBitsToUint(x))) - 103.27892990343185;
}
vec4 tgl_log(vec4 x) { return vec4(tgl_log(x.x), tgl_log(x.y), tgl_log(x.z), tgl_log(x.w)); }

// C's powf: GLSL's pow is undefined for a < 0 and for a == 0 with b <= 0.
float tgl_pow(float a, float b)
{
    if (b == 0.0 || a == 1.0)
        return 1.0;
    if (isnan(a) || isnan(b))
        return tgl_nan();
    float m = abs(a);
    if (m == 1.0 && isinf(b))
        return 1.0;                                  // pow(-1, +-inf) == 1
    float r = floatBitsToUint(m) == 0u ? (b > 0.0 ? 0.0 : tgl_inf())
            : isinf(m) ? (b > 0.0 ? tgl_inf() : 0.0)
            : tgl_subnormal(m) ? exp2(b * (log2(float(floatBitsToUint(m))) - 149.0)) // (as tgl_log)
                               : pow(m, b);
    if ((floatBitsToUint(a) >> 31) == 0u)
        return r;
    bool integer = floor(b) == b;                    // +-inf counts as an even integer
    if (!integer)
        return (floatBitsToUint(m) == 0u || isinf(m)) ? r : tgl_nan();
    bool odd = !isinf(b) && abs(mod(b, 2.0)) == 1.0;
    return odd ? -r : r;
}
vec4 tgl_pow(vec4 a, vec4 b)
{
    return vec4(tgl_pow(a.x, b.x), tgl_pow(a.y, b.y), tgl_pow(a.z, b.z), tgl_pow(a.w, b.w));
}

// The descriptor ops' float formulas (scalar; src/cpu/cpu_math.h computes the same in double).
// erf: the odd Taylor series below |x| = 1 (11 terms: truncation < 2e-9), 1 - erfc above.
// tgl_erfc_tail(a), a >= 1: erfc(a) to a relative 1.2e-7 by the Chebyshev fit published in
// Numerical Recipes (erfcc: t exp(-a^2 + P(t)), t = 1 / (1 + a/2)), so the tails of erf and
// exact gelu keep their relative precision; a^2 is split (ah: a's top 12 bits, ah^2 exact) so
// its rounding does not become the result's error at large a.
float tgl_erfc_tail(float a)
{
    if (a >= 10.0)
        return 0.0; // erfc(10) is 2e-45, about the least f32 (and keeps inf out of the split)
    float t = 1.0 / (1.0 + 0.5 * a);
    float p = 0.17087277;
    p = -0.82215223 + t * p;
    p = 1.48851587 + t * p;
    p = -1.13520398 + t * p;
    p = 0.27886807 + t * p;
    p = -0.18628806 + t * p;
    p = 0.09678418 + t * p;
    p = 0.37409196 + t * p;
    p = 1.00002368 + t * p;
    p = -1.26551223 + t * p;
    float ah = uintBitsToFloat(floatBitsToUint(a) & 0xFFFFF000u);
    return t * exp(-ah * ah) * exp(p - (a - ah) * (a + ah));
}
float tgl_erf_small(float x) // |x| < 1
{
    float z = x * x;
    float p = 1.0 / 76204800.0;
    p = -1.0 / 6894720.0 + z * p;
    p = 1.0 / 685440.0 + z * p;
    p = -1.0 / 75600.0 + z * p;
    p = 1.0 / 9360.0 + z * p;
    p = -1.0 / 1320.0 + z * p;
    p = 1.0 / 216.0 + z * p;
    p = -1.0 / 42.0 + z * p;
    p = 1.0 / 10.0 + z * p;
    p = -1.0 / 3.0 + z * p;
    p = 1.0 + z * p;
    return 1.1283791670955126 * x * p; // 2 / sqrt(pi)
}
float tgl_erf(float x)
{
    float a = abs(x);
    if (tgl_is_zero(x))
        return x;
    if (!(a >= 1.0))
        return tgl_erf_small(x); // NaN passes through
    float y = 1.0 - tgl_erfc_tail(a);
    return x < 0.0 ? -y : y;
}
// x/2 (1 + erf(x / sqrt 2)); for x <= -sqrt 2, 1 + erf is erfc's tail, computed directly.
float tgl_gelu_erf(float x)
{
    float z = x * 0.70710678118654752;
    return z <= -1.0 ? 0.5 * x * tgl_erfc_tail(-z) : 0.5 * x * (1.0 + tgl_erf(z));
}
// log1p: 2 atanh(s), s = x / (2 + x), by its odd series where |s| < 1/3 (GLSL's log has only
// absolute precision near 1); log(1 + x) elsewhere (NaN, -1, below and +inf included).
float tgl_log1p(float x)
{
    if (tgl_is_zero(x))
        return x;
    if (!(x > -0.5 && x < 1.0))
        return log(1.0 + x);
    float s = x / (2.0 + x), z = s * s;
    float p = 1.0 / 17.0;
    p = 1.0 / 15.0 + z * p;
    p = 1.0 / 13.0 + z * p;
    p = 1.0 / 11.0 + z * p;
    p = 1.0 / 9.0 + z * p;
    p = 1.0 / 7.0 + z * p;
    p = 1.0 / 5.0 + z * p;
    p = 1.0 / 3.0 + z * p;
    p = 1.0 + z * p;
    return 2.0 * s * p;
}
// expm1: its Taylor series below |x| = 0.5 (truncation < 2e-11), exp(x) - 1 elsewhere.
float tgl_expm1(float x)
{
    if (tgl_is_zero(x))
        return x;
    if (!(abs(x) < 0.5))
        return exp(x) - 1.0;
    float p = 1.0 / 3628800.0;
    p = 1.0 / 362880.0 + x * p;
    p = 1.0 / 40320.0 + x * p;
    p = 1.0 / 5040.0 + x * p;
    p = 1.0 / 720.0 + x * p;
    p = 1.0 / 120.0 + x * p;
    p = 1.0 / 24.0 + x * p;
    p = 1.0 / 6.0 + x * p;
    p = 0.5 + x * p;
    p = 1.0 + x * p;
    return x * p;
}
// +-1, or x itself for +-0 and NaN.
bool tgl_sign_bit(float x)
{
    return (floatBitsToUint(x) >> 31) != 0u;
}
// On the bits: drivers may flush a subnormal to zero in a comparison (NVIDIA does), which would
// pass the smallest subnormal through as if it were a zero.
float tgl_sign(float x)
{
    uint m = floatBitsToUint(x) & 0x7fffffffu;
    if (m == 0u || m > 0x7f800000u)
        return x; // ±0 and NaN
    return tgl_sign_bit(x) ? -1.0 : 1.0;
}
// C's atan2, its zeros and infinities spelled out (GLSL's atan(y, x) leaves them undefined).
float tgl_atan2(float y, float x)
{
    if (isnan(x) || isnan(y))
        return tgl_nan();
    const float pi = 3.14159265358979;
    bool xneg = tgl_sign_bit(x);
    float r;
    if (y == 0.0)
        r = xneg ? pi : 0.0;
    else if (isinf(x))
        r = isinf(y) ? (xneg ? 0.75 * pi : 0.25 * pi) : (xneg ? pi : 0.0);
    else if (x == 0.0 || isinf(y))
        r = 0.5 * pi;
    else
        r = atan(abs(y), x);
    return tgl_sign_bit(y) ? -r : r;
}
// C's fmod, exactly, on the bits: a binary long division of |a|'s significand by |b|'s, one
// exponent step at a time (at most 277), so subnormals count whatever the device does with them
// in float arithmetic. The result takes a's sign (-0 included).
float tgl_fmod(float a, float b)
{
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b), sign = ua & 0x80000000u;
    ua &= 0x7FFFFFFFu;
    ub &= 0x7FFFFFFFu;
    if (ub == 0u || ua >= 0x7F800000u || ub > 0x7F800000u)
        return tgl_nan(); // b zero or NaN, a infinite or NaN
    if (ua < ub)
        return a; // |a| < |b|, b infinite included
    // value = m * 2^(e - 150) with 2^23 <= m < 2^24: subnormals normalized to e below 1
    int ea = int(ua >> 23), eb = int(ub >> 23);
    uint ma = (ua & 0x7FFFFFu) | (ea == 0 ? 0u : 0x800000u);
    uint mb = (ub & 0x7FFFFFu) | (eb == 0 ? 0u : 0x800000u);
    int sa = 23 - findMSB(ma), sb = 23 - findMSB(mb);
    ma <<= uint(sa);
    mb <<= uint(sb);
    ea = max(ea, 1) - sa;
    eb = max(eb, 1) - sb;
    for (int e = ea; e > eb; e--) { // ma < 2 mb < 2^25 throughout
        if (ma >= mb)
            ma -= mb;
        ma <<= 1;
    }
    if (ma >= mb)
        ma -= mb;
    if (ma == 0u)
        return uintBitsToFloat(sign);
    int shift = 23 - findMSB(ma); // normalize; below exponent 1 the result is subnormal,
    ma <<= uint(shift);           // representable, so the shift right drops no bit
    eb -= shift;
    uint bits = eb >= 1 ? (uint(eb) << 23) | (ma - 0x800000u) : ma >> uint(1 - eb);
    return uintBitsToFloat(bits | sign);
}
// PyTorch's float remainder: fmod, plus b where the result and b differ in sign.
float tgl_remainder(float a, float b)
{
    float m = tgl_fmod(a, b);
    return m != 0.0 && (m < 0.0) != (b < 0.0) ? m + b : m;
}
