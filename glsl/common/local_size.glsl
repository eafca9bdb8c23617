// The 1-D workgroup of kernels sized by TGL_WG_SIZE. GLSL text carries the size as a #define
// (gl_source.c's preamble); a SPIR-V module (TGL_SPIRV) is built once for every size, so the
// size is its specialization constant 0, set when the module is specialized (gl_spirv.c), and
// TGL_WG_SIZE names that constant there.
#ifdef TGL_SPIRV
layout(local_size_x_id = 0) in;
#else
layout(local_size_x = TGL_WG_SIZE) in;
#endif
