// TGL_WIDE (with TGL_VEC4, on desktop GL; for llvmpipe): each invocation computes
// TGL_WIDE_PAIRS pairs of neighbouring vec4s and stores each pair as one dvec4 holding the
// eight floats' bits. llvmpipe stores to an SSBO one SIMD lane at a time, each component a
// scalar store under its own tests, so a dvec4 writes twice the data of a vec4 for the same
// number of stores. Add of 4M floats in a bare kernel on llvmpipe (2 cores): 2.5 ms
// with a vec4 store per invocation, 1.7-1.8 with one pair (dvec4 from packDouble2x32, or
// u64vec4 from packUint2x32: the same; the u64vec4 built with shifts 2.0), 1.7 with two pairs.
// Only bits move (no arithmetic on the doubles), so NaNs and infinities come through. The host
// runs these kernels over whole workgroups only, with no bounds test (a test, and the exec mask
// it brings, took the same add from 1.7 to 2.2 ms) and sends what is left to the vec4 variant;
// the output's window offset (u_y_off, in vec4s) is then even.
#ifdef TGL_WIDE
#define TGL_WIDE_PAIRS 2u

// The same from the eight floats' bits (kernels that build floats as bits, such as casts).
dvec4 tgl_wide_bits(uvec4 a, uvec4 b)
{
    return dvec4(packDouble2x32(a.xy), packDouble2x32(a.zw), packDouble2x32(b.xy), packDouble2x32(b.zw));
}

dvec4 tgl_wide(vec4 lo, vec4 hi)
{
    return tgl_wide_bits(floatBitsToUint(lo), floatBitsToUint(hi));
}

// The first (second == 0) or the second vec4 of a pair tgl_wide stored: reading an output back
// as dvec4s (scale_add's y) halves the loads the same way.
vec4 tgl_unwide(dvec4 d, uint second)
{
    return second == 0u ? uintBitsToFloat(uvec4(unpackDouble2x32(d.x), unpackDouble2x32(d.y)))
                      : uintBitsToFloat(uvec4(unpackDouble2x32(d.z), unpackDouble2x32(d.w)));
}
#endif
