// A fused epilogue's activation, chosen at run time: `act` is a tgl_activation value (its
// numbers are the enum's order in include/tensorgl.h), computed with common/math.glsl's formulas
// as the unary op of the same name; NaN stays NaN (src/cpu/cpu_math.h, tgl_cpu_activation).
// Needs common/math.glsl.

float tgl_activate(uint act, float x, float slope)
{
    switch (act) {
    case 1u: return tgl_relu(x);
    case 2u: return mix(clamp(x, 0.0, 6.0), x, isnan(x));              // relu6
    case 3u: return x < 0.0 ? slope * x : x;                           // leaky relu
    case 4u: return tgl_sigmoid(x);
    case 5u: return tgl_silu(x);
    case 6u: return tgl_gelu(x);
    case 7u: return tgl_gelu_erf(x);
    case 8u: return mix(x * clamp(x + 3.0, 0.0, 6.0) / 6.0, x, isnan(x)); // hardswish
    case 9u: return tgl_tanh(x);
    }
    return x;
}
