// TGL_UNROLL before a loop with a compile-time trip count asks for it to be unrolled. GLSL
// compilers unroll such loops by themselves (that is how the register arrays of the GEMM,
// convolution and attention kernels stay in registers), so in GLSL text it is empty. For
// SPIR-V, gl_source.c's preamble makes it GL_EXT_control_flow_attributes' [[unroll]], which
// `make spirv`'s spirv-opt --loop-unroll acts on: the H100's driver does not unroll SPIR-V
// loops itself (GEMM from glslangValidator's output alone ran 7x slower than from GLSL).
#ifndef TGL_UNROLL
#define TGL_UNROLL
#endif
