// TGL_TEX variants of the element-wise kernels read their inputs through buffer textures over
// the same buffer ranges (texture unit = binding index; RGBA32F with TGL_VEC4, else R32F):
// llvmpipe fetches texels with gathers, while each SSBO load is a loop over its SIMD lanes.
// TGL_READ(t, i) is element (or vec4) i of texture t.
// Every buffer texture in the kernels is declared at uniform location 60 + its binding, above
// the scalar uniforms (0..39): in a program linked from SPIR-V the linker gives an opaque
// uniform without a location any free one, which can be the location of a scalar uniform the
// module dropped as unused, and the host's glProgramUniform for it would then hit the sampler.
// On ES, samplerBuffer comes from GL_EXT_texture_buffer or GL_OES_texture_buffer, which the ES
// preamble enables (src/gl/gl_source.c) before any code, as NVIDIA's ES compiler insists.
// TGL_IMG (with TGL_TEX; llvmpipe): the same texture objects bound as read-only image buffers
// (image unit = binding index) and read with imageLoad. llvmpipe 22.3 builds a texelFetch of
// a 32-bit float format as a call to a generated sampling function and an imageLoad inline:
// 2 cores, `tensorgl bench ops`, alternated: add of 4M floats 1.78-1.84 -> 1.53-1.58
// ms, sum of 16M 2.02-2.03 -> 1.87-1.88, tgl_map sqrt(a*b+c) 2.49-2.68 -> 2.20-2.24. Not in
// norm/softmax_lanes, whose 32 unrolled reads per invocation ran slower inline (2.62-2.69 ->
// 2.81-3.28 ms). TGL_TEXTURE(location, binding, name) declares either kind.
#ifdef TGL_IMG
#ifdef TGL_VEC4
#define TGL_TEXTURE(loc, unit, name) \
    layout(location = loc, binding = unit, rgba32f) readonly uniform highp imageBuffer name
#define TGL_READ(t, i) imageLoad(t, int(i))
#else
#define TGL_TEXTURE(loc, unit, name) \
    layout(location = loc, binding = unit, r32f) readonly uniform highp imageBuffer name
#define TGL_READ(t, i) imageLoad(t, int(i)).x
#endif
#else
#define TGL_TEXTURE(loc, unit, name) layout(location = loc, binding = unit) uniform highp samplerBuffer name
#ifdef TGL_VEC4
#define TGL_READ(t, i) texelFetch(t, int(i))
#else
#define TGL_READ(t, i) texelFetch(t, int(i)).x
#endif
#endif
// Unsigned texels (any dtype's words, in kernels that work on bits): TGL_UTEXTURE(location,
// binding, name, format) declares a buffer texture of format r32ui or rgba32ui (both ES 3.1
// image formats) as a usamplerBuffer, or with TGL_IMG a read-only uimageBuffer; TGL_UREAD(t, i)
// is texel i as a uvec4.
#ifdef TGL_IMG
#define TGL_UTEXTURE(loc, unit, name, fmt) layout(location = loc, binding = unit, fmt) readonly uniform highp uimageBuffer name
#define TGL_UREAD(t, i) imageLoad(t, int(i))
#else
#define TGL_UTEXTURE(loc, unit, name, fmt) layout(location = loc, binding = unit) uniform highp usamplerBuffer name
#define TGL_UREAD(t, i) texelFetch(t, int(i))
#endif
