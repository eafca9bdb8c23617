/* The GLSL files embedded at build time (build/gen/kernels.c, from glsl/). */
#ifndef TGL_GL_KERNEL_TABLE_H
#define TGL_GL_KERNEL_TABLE_H
#include <stddef.h>

typedef struct tgl_kernel_file {
    const char *path;   /* relative to glsl/, e.g. "elementwise/unary.comp" */
    const char *text;   /* NUL-terminated */
    size_t size;
} tgl_kernel_file;

extern const tgl_kernel_file tgl_kernel_files[];
extern const size_t tgl_kernel_file_count;

#endif
