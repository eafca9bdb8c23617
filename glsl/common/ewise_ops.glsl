// The descriptor ops' unary and binary ops chosen at run time: `op` is a tgl_unary_op or
// tgl_binary_op value (their numbers are the enums' order in include/tensorgl.h). Floats are
// computed in f32 with common/math.glsl's formulas, i32 on uints (two's complement wrap, as C
// does it in src/cpu/cpu_math.h). An op the dtype does not take was refused by the host.
// Needs common/math.glsl.

float tgl_unary_f32(uint op, float x)
{
    switch (op) {
    case 0u: return -x;
    case 1u: return abs(x);
    case 2u: return exp(x);
    case 3u: return tgl_log(x);
    case 4u: return sqrt(x);
    case 5u: return inversesqrt(x);
    case 6u: return 1.0 / x;
    case 7u: return x * x;
    case 8u:
    case 9u: return tgl_sin_cos(x, op == 9u); // (one reduction in the kernel for both)
    case 10u: return tgl_tanh(x);
    case 11u: return tgl_sigmoid(x);
    case 12u: return tgl_relu(x);
    case 13u: return tgl_gelu(x);
    case 14u: return tgl_silu(x);
    case 15u: return floor(x);
    case 16u: return ceil(x);
    case 17u: return tgl_erf(x);
    case 18u: return tgl_gelu_erf(x);
    case 19u: return tgl_log1p(x);
    case 20u: return tgl_expm1(x);
    case 21u: return roundEven(x);
    case 22u: return trunc(x);
    case 23u: return tgl_sign(x);
    }
    return tgl_nan();
}

float tgl_binary_f32(uint op, float a, float b)
{
    switch (op) {
    case 0u: return a + b;
    case 1u: return a - b;
    case 2u: return a * b;
    case 3u: return tgl_quot(a, b);
    case 4u: return tgl_max(a, b);
    case 5u: return tgl_min(a, b);
    case 6u: return tgl_pow(a, b);
    case 7u: return tgl_atan2(a, b);
    case 8u: return tgl_fmod(a, b);
    case 9u: return tgl_remainder(a, b);
    }
    return tgl_nan();
}

uint tgl_unary_i32(uint op, uint x)
{
    int s = int(x);
    switch (op) {
    case 0u: return 0u - x;
    case 1u: return s < 0 ? 0u - x : x;
    case 7u: return x * x;
    case 23u: return s > 0 ? 1u : s < 0 ? 0xFFFFFFFFu : 0u;
    case 24u: return ~x;
    }
    return 0u;
}

// |a| and |b| as uints (|INT32_MIN| = 2^31 fits).
uint tgl_i32_magnitude(int v)
{
    return v < 0 ? 0u - uint(v) : uint(v);
}

// Python's floor division and remainder; by zero a // 0 == 0 and a % 0 == a.
uint tgl_floor_div_i32(int a, int b)
{
    if (b == 0)
        return 0u;
    uint ua = tgl_i32_magnitude(a), ub = tgl_i32_magnitude(b), q = ua / ub;
    bool neg = (a < 0) != (b < 0);
    return neg ? 0u - q - ((ua % ub) != 0u ? 1u : 0u) : q;
}
uint tgl_remainder_i32(int a, int b)
{
    if (b == 0)
        return uint(a);
    uint r = tgl_i32_magnitude(a) % tgl_i32_magnitude(b); // the truncated remainder's magnitude
    int t = a < 0 ? -int(r) : int(r);
    return uint(t != 0 && (t < 0) != (b < 0) ? t + b : t);
}

uint tgl_binary_i32(uint op, uint x, uint y)
{
    int a = int(x), b = int(y);
    switch (op) {
    case 0u: return x + y;
    case 1u: return x - y;
    case 2u: return x * y;
    case 4u: return uint(max(a, b));
    case 5u: return uint(min(a, b));
    case 9u: return tgl_remainder_i32(a, b);
    case 10u: return tgl_floor_div_i32(a, b);
    case 11u: return x & y;
    case 12u: return x | y;
    case 13u: return x ^ y;
    case 14u: return y > 31u ? 0u : x << y;
    case 15u: return y > 31u ? (a < 0 ? 0xFFFFFFFFu : 0u) : uint(a >> int(y));
    }
    return 0u;
}

// bool: NOT (unary 24); AND, OR, XOR (binary 11..13) on 0/1.
uint tgl_logical(uint op, bool unary, uint x, uint y)
{
    bool p = x != 0u, q = y != 0u;
    bool r = unary ? !p : op == 11u ? p && q : op == 12u ? p || q : p != q;
    return r ? 1u : 0u;
}
