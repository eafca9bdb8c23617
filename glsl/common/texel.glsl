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
#ifdef TGL_VEC4
#define TGL_READ(t, i) texelFetch(t, int(i))
#else
#define TGL_READ(t, i) texelFetch(t, int(i)).x
#endif
