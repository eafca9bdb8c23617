/* Kernel sources and their variants, without needing a GL context: used by the GL backend and
 * by `tensorgl kernels`, which dumps every variant for offline validation. */
#ifndef TGL_GL_KERNEL_VARIANTS_H
#define TGL_GL_KERNEL_VARIANTS_H
#include <stdint.h>

/* Which text a kernel's source is assembled for: GLSL for desktop GL 4.3 or ES 3.1, or GLSL
 * meant for glslangValidator -G (SPIR-V for ARB_gl_spirv), where the workgroup size and the
 * items per invocation are specialization constants rather than #defines. */
typedef enum { TGL_GL_TEXT_GL = 0, TGL_GL_TEXT_ES = 1, TGL_GL_TEXT_SPIRV = 2 } tgl_gl_text;

/* Full source of kernel `name` (e.g. "elementwise/unary") with the defines and common snippets
 * spliced in; wg_size (TGL_WG_SIZE) and items (TGL_ITEMS, elements per invocation of the
 * element-wise kernels; 1 leaves the kernel's default) go into GLSL text and are ignored for
 * TGL_GL_TEXT_SPIRV. malloc'd; NULL for an unknown kernel. */
char *tgl_gl_kernel_source(const char *name, const char *defines, tgl_gl_text flavour, uint32_t wg_size,
                           uint32_t items);
/* 1 for a kernel variant that has no SPIR-V module (`make spirv` skips it, TGL_SHADER=spirv builds it
 * from GLSL; gl_spirv.c says why). */
int tgl_gl_spirv_excluded(const char *kernel, const char *defines);
/* 1 for a variant only desktop GL runs (TGL_WIDE stores doubles, which ES 3.1 has not; the op
 * drivers never ask an ES context for it), so `tensorgl kernels --api gles` leaves it out. */
int tgl_gl_es_excluded(const char *kernel, const char *defines);
/* Calls fn for every (kernel, defines) variant the op drivers can ask for. */
void tgl_gl_each_variant(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);

#endif
