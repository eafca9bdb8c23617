// Element-wise formulas shared by the kernels, with float and vec4 overloads so both kernel
// variants run the same formula. They match src/cpu/cpu_math.h (the oracle); the comments say
// where GLSL's own builtin would not.

float tgl_nan() { return uintBitsToFloat(0x7fc00000u); }
float tgl_inf() { return uintBitsToFloat(0x7f800000u); }

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
    float r = m == 0.0 ? (b > 0.0 ? 0.0 : tgl_inf())
            : isinf(m) ? (b > 0.0 ? tgl_inf() : 0.0)
                       : pow(m, b);
    if ((floatBitsToUint(a) >> 31) == 0u)
        return r;
    bool integer = floor(b) == b;                    // +-inf counts as an even integer
    if (!integer)
        return (m == 0.0 || isinf(m)) ? r : tgl_nan();
    bool odd = !isinf(b) && abs(mod(b, 2.0)) == 1.0;
    return odd ? -r : r;
}
vec4 tgl_pow(vec4 a, vec4 b)
{
    return vec4(tgl_pow(a.x, b.x), tgl_pow(a.y, b.y), tgl_pow(a.z, b.z), tgl_pow(a.w, b.w));
}
