#ifndef TGL_MAP_OPS_GLSL
#define TGL_MAP_OPS_GLSL
// The functions tgl_map's generated expressions call (glsl/map/map.comp, glsl/tensor/map.comp)
// beside common/math.glsl's, in f32 and (for the flat kernel's TGL_VEC4) vec4.

// The four arithmetic operators as functions whose result is precise: `precise` on the stored
// value alone did not reach a subexpression that feeds a select's condition (NVIDIA folded
// a-a to 0 there, so select(a-a, 1, 2) gave 2 for an infinite a).
float tgl_add(float a, float b) { TGL_PRECISE float r = a + b; return r; }
vec4 tgl_add(vec4 a, vec4 b) { TGL_PRECISE vec4 r = a + b; return r; }
float tgl_sub(float a, float b) { TGL_PRECISE float r = a - b; return r; }
vec4 tgl_sub(vec4 a, vec4 b) { TGL_PRECISE vec4 r = a - b; return r; }
float tgl_mul(float a, float b) { TGL_PRECISE float r = a * b; return r; }
vec4 tgl_mul(vec4 a, vec4 b) { TGL_PRECISE vec4 r = a * b; return r; }
float tgl_div(float a, float b) { return tgl_quot(a, b); } // common/math.glsl: precise, and right for |b| > 2^126
vec4 tgl_div(vec4 a, vec4 b) { return tgl_quot(a, b); }

// Functions rather than inline text, so a nested argument is generated (and evaluated) once.
float tgl_neg(float x) { return -x; }
vec4 tgl_neg(vec4 x) { return -x; }
float tgl_recip(float x) { return 1.0 / x; }
vec4 tgl_recip(vec4 x) { return 1.0 / x; }
float tgl_square(float x) { return x * x; }
vec4 tgl_square(vec4 x) { return x * x; }
// select tests c's bits for +-0 rather than comparing floats: NVIDIA's compiler turned
// (a - a) != 0 into false, which is wrong for an infinite or NaN a (the difference is NaN, and
// NaN selects x, as on the CPU backend).
float tgl_select(float c, float x, float y) { return (floatBitsToUint(c) & 0x7fffffffu) == 0u ? y : x; }
vec4 tgl_select(vec4 c, vec4 x, vec4 y)
{
    return mix(x, y, equal(floatBitsToUint(c) & uvec4(0x7fffffffu), uvec4(0u)));
}

// a op b (op a tgl_compare_op: eq ne lt le gt ge) as 1 or 0, decided on the bits as IEEE
// compares: NaN is unordered (only ne holds), -0 equals +0. A compiler that assumes no NaN
// cannot fold these.
int tgl_fkey(uint f) { return (f & 0x80000000u) != 0u ? -int(f & 0x7FFFFFFFu) : int(f); }
int tgl_fcmp(uint op, float a, float b)
{
    uint fa = floatBitsToUint(a), fb = floatBitsToUint(b);
    if ((fa & 0x7FFFFFFFu) > 0x7F800000u || (fb & 0x7FFFFFFFu) > 0x7F800000u)
        return op == 1u ? 1 : 0;
    int ka = tgl_fkey(fa), kb = tgl_fkey(fb);
    bool r = op == 0u ? ka == kb : op == 1u ? ka != kb : op == 2u ? ka < kb : op == 3u ? ka <= kb
             : op == 4u ? ka > kb : ka >= kb;
    return r ? 1 : 0;
}
// tgl_map computes in f32: a comparison is 1.0 or 0.0.
float tgl_fcmpf(uint op, float a, float b) { return float(tgl_fcmp(op, a, b)); }
vec4 tgl_fcmpf(uint op, vec4 a, vec4 b)
{
    return vec4(tgl_fcmp(op, a.x, b.x), tgl_fcmp(op, a.y, b.y), tgl_fcmp(op, a.z, b.z), tgl_fcmp(op, a.w, b.w));
}
#endif
