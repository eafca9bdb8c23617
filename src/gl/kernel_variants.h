/* Kernel sources and their variants, without needing a GL context: used by the GL backend and
 * by `tensorgl kernels`, which dumps every variant for offline validation. */
#ifndef TGL_GL_KERNEL_VARIANTS_H
#define TGL_GL_KERNEL_VARIANTS_H
#include <stdint.h>

/* Full source of kernel `name` (e.g. "elementwise/unary") for desktop GL (es == 0) or ES 3.1,
 * with the defines and common snippets spliced in. malloc'd; NULL for an unknown kernel. */
char *tgl_gl_kernel_source(const char *name, const char *defines, int es, uint32_t wg_size);
/* Calls fn for every (kernel, defines) variant the op drivers can ask for. */
void tgl_gl_each_variant(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);

#endif
