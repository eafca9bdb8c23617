/* Kernel plans: what one GL op driver runs and why.
 *
 * Each driver decides its variant in one pure function of the shape and the device profile
 * (tgl_gl_limits): a plan that names the kernel, its flags, the workgroup size, the grid and the
 * reason. A kernel family's flags are a typed struct of uint32_t fields; its define table
 * (tgl_gl_def rows) says which #define each field becomes, and tgl_gl_plan_kernel writes the
 * text from it: the only place a kernel's #define lines are produced. Dispatch gets its program
 * from the plan (tgl_gl_plan_program); the family's variant enumerator builds its plans through
 * the same flags -> plan function, so `tensorgl kernels`, validate-kernels and the SPIR-V build
 * list what dispatch runs. With TGL_DEBUG=1 each plan is logged when its program is first
 * asked for, and a program the enumerators do not list fails the call (gl_programs.c). */
#ifndef TGL_GL_PLAN_H
#define TGL_GL_PLAN_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TGL_GL_DEF_FLAG, /* "#define MACRO" where the field is not 0 */
    TGL_GL_DEF_UINT, /* "#define MACRO <value>" */
    TGL_GL_DEF_COUNT, /* "#define MACRO <value>" where the field is not 0, nothing otherwise */
    TGL_GL_DEF_NAME, /* "#define <names[value]>" (nothing for a NULL name) */
    TGL_GL_DEF_READ, /* the input read the field holds (tgl_gl_read: TGL_TEX, TGL_IMG) */
} tgl_gl_def_kind;

typedef struct tgl_gl_def {
    const char *macro;        /* FLAG, UINT */
    const char *const *names; /* NAME: one macro per value */
    size_t offset;            /* of the uint32_t field in the family's flags struct */
    uint32_t count;           /* NAME: how many */
    tgl_gl_def_kind kind;
} tgl_gl_def;

#define TGL_GL_FLAG(type, field, name) {.macro = (name), .offset = offsetof(type, field), .kind = TGL_GL_DEF_FLAG}
#define TGL_GL_UINT(type, field, name) {.macro = (name), .offset = offsetof(type, field), .kind = TGL_GL_DEF_UINT}
#define TGL_GL_COUNT(type, field, name) {.macro = (name), .offset = offsetof(type, field), .kind = TGL_GL_DEF_COUNT}
#define TGL_GL_NAME(type, field, list)                                                       \
    {.names = (list), .offset = offsetof(type, field),                                        \
     .count = (uint32_t)(sizeof(list) / sizeof(*(list))), .kind = TGL_GL_DEF_NAME}
#define TGL_GL_READ(type, field) {.offset = offsetof(type, field), .kind = TGL_GL_DEF_READ}
/* A define table and its length, as tgl_gl_plan_kernel takes them. */
#define TGL_GL_DEFS(table) (table), sizeof(table) / sizeof(*(table))

#define TGL_GL_DEFINES_MAX 384

typedef struct tgl_gl_plan {
    const char *op;                   /* the public op, for the log: "tgl_rmsnorm" */
    const char *kernel;               /* "norm/rows" */
    char defines[TGL_GL_DEFINES_MAX]; /* from the flags, by tgl_gl_plan_kernel */
    const char *generated;            /* text made at run time, ahead of the defines: tgl_map's
                                         expression; NULL for every other kernel */
    uint32_t wg;                      /* invocations per workgroup (TGL_WG_SIZE) */
    uint32_t items;                   /* elements per invocation (TGL_ITEMS; 1: the kernel's own) */
    uint64_t groups;                  /* workgroups in all (every dispatch of the op together) */
    const char *why;                  /* a static phrase: why this variant on this device */
    int user_config;                  /* built from a configuration the user chose (TGL_GEMM, a
                                         tune file): not among the listed variants */
} tgl_gl_plan;

/* Sets p's kernel and writes its defines from `flags` (a struct of uint32_t fields) through the
 * family's table. A value outside a NAME table or text past TGL_GL_DEFINES_MAX (a bug in the
 * driver) leaves the plan without a kernel, which tgl_gl_plan_program refuses, and returns -1. */
int tgl_gl_plan_kernel(tgl_gl_plan *p, const char *kernel, const tgl_gl_def *defs, size_t ndefs, const void *flags);

/* Hands a plan's kernel and defines to a variant enumerator's callback (tgl_gl_each_variant). */
static inline void tgl_gl_list_plan(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx,
                                    tgl_gl_plan p)
{
    fn(ctx, p.kernel, p.defines);
}

#endif
