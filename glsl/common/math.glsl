// Element-wise formulas shared by the kernels, with float and vec4 overloads so both kernel
// variants run the same formula. They match src/cpu/cpu_math.h (the oracle); the comments say
// where GLSL's own builtin would not.

float tgl_nan() { return uintBitsToFloat(0x7fc00000u); }
float tgl_inf() { return uintBitsToFloat(0x7f800000u); }

// Drivers may compute tanh as (e^2x - 1) / (e^2x + 1), which is inf/inf = NaN for large |x|;
// tanh(15) already rounds to 1.0 in f32, so clamping changes no result. clamp(NaN) may
// return a bound (llvmpipe gives -15), so NaN is passed through explicitly.
#define TGL_DEFINE_ACTIVATIONS(T)                                                            \
    T tgl_tanh(T x) { return mix(tanh(clamp(x, -15.0, 15.0)), x, isnan(x)); }               \
    T tgl_sigmoid(T x) { return 1.0 / (1.0 + exp(-x)); }                                     \
    T tgl_silu(T x) { return x / (1.0 + exp(-x)); }                                          \
    T tgl_gelu(T x) { return 0.5 * x * (1.0 + tgl_tanh(0.7978845608 * (x + 0.044715 * x * x * x))); } \
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
