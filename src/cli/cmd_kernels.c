/* `tensorgl kernels`: lists every kernel variant the library can compile and, with --dump DIR,
 * writes each one's full source (as the driver receives it) for offline validation, or with
 * --api spirv the text `make spirv` compiles into SPIR-V modules, each file named by the hash
 * the library looks its module up by (gl_spirv.c). --part K/N keeps every N-th variant of each
 * kernel from its K-th (at least one of each kernel), for the checks that cannot afford all of
 * them in one run (.ci/run): the N parts together are the whole list. */
#include "commands.h"
#include "core/hash.h"
#include "gl/kernel_variants.h"

#include "cli_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How many variants a kernel has, and how many of them have been seen, for --part. */
typedef struct kernel_count {
    const char *kernel; /* the registry's string: the same pointer on every pass */
    unsigned total, seen;
} kernel_count;

typedef struct dump_ctx {
    const char *dir;
    tgl_gl_text flavour;
    int count, failed;
    unsigned part_k, part_n; /* part_n 0: every variant */
    kernel_count *kernels;
    size_t n_kernels, cap_kernels;
    int no_memory;
} dump_ctx;

static kernel_count *kernel_entry(dump_ctx *ctx, const char *kernel)
{
    for (size_t i = 0; i < ctx->n_kernels; i++)
        if (!strcmp(ctx->kernels[i].kernel, kernel))
            return &ctx->kernels[i];
    if (ctx->n_kernels == ctx->cap_kernels) {
        size_t cap = ctx->cap_kernels ? 2 * ctx->cap_kernels : 64;
        kernel_count *k = realloc(ctx->kernels, cap * sizeof *k);
        if (!k)
            return NULL;
        ctx->kernels = k;
        ctx->cap_kernels = cap;
    }
    kernel_count *e = &ctx->kernels[ctx->n_kernels++];
    *e = (kernel_count){.kernel = kernel};
    return e;
}

static void count_variant(void *ctx_, const char *kernel, const char *defines)
{
    (void)defines;
    dump_ctx *ctx = ctx_;
    kernel_count *e = kernel_entry(ctx, kernel);
    if (e)
        e->total++;
    else
        ctx->no_memory = 1;
}

/* Whether --part keeps this variant: the i-th of its kernel's total is kept when i % N == K, and
 * a kernel with no such index (fewer than K + 1 variants) keeps its (K mod total)-th. Decided
 * before the API's exclusions, so the GL and ES lists of one part hold the same variants. */
static int in_part(dump_ctx *ctx, const char *kernel)
{
    if (!ctx->part_n)
        return 1;
    kernel_count *e = kernel_entry(ctx, kernel);
    if (!e || !e->total)
        return 1;
    unsigned i = e->seen++;
    if (e->total <= ctx->part_k)
        return i == ctx->part_k % e->total;
    return i % ctx->part_n == ctx->part_k;
}

/* "elementwise/unary" + "#define OP_EXP\n#define TGL_VEC4\n" -> "elementwise-unary.OP_EXP.TGL_VEC4";
 * a define's value follows its name ("#define BM 128" -> ".BM128"). */
static void variant_name(char *out, size_t size, const char *kernel, const char *defines)
{
    size_t n = 0;
    for (const char *p = kernel; *p && n + 1 < size; p++)
        out[n++] = *p == '/' ? '-' : *p;
    const char *d = defines;
    while ((d = strstr(d, "#define ")) != NULL) {
        d += 8;
        if (n + 1 < size)
            out[n++] = '.';
        while (*d && *d != '\n' && n + 1 < size) {
            if (*d != ' ')
                out[n++] = *d;
            d++;
        }
    }
    out[n] = '\0';
}

static void each(void *ctx_, const char *kernel, const char *defines)
{
    dump_ctx *ctx = ctx_;
    if (!in_part(ctx, kernel))
        return;
    if ((ctx->flavour == TGL_GL_TEXT_SPIRV && tgl_gl_spirv_excluded(kernel, defines)) ||
        (ctx->flavour == TGL_GL_TEXT_ES && tgl_gl_es_excluded(kernel, defines)))
        return;
    char name[256];
    variant_name(name, sizeof name, kernel, defines);
    ctx->count++;
    if (!ctx->dir) {
        printf("%s\n", name);
        return;
    }
    char *src = tgl_gl_kernel_source(kernel, defines, ctx->flavour, 256, 1);
    char path[1024];
    if (src && ctx->flavour == TGL_GL_TEXT_SPIRV) {
        static const uint64_t start[2];
        uint64_t h[2];
        tgl__hash128(src, strlen(src), start, h);
        snprintf(path, sizeof path, "%s/%016llx%016llx.comp", ctx->dir, (unsigned long long)h[0],
                 (unsigned long long)h[1]);
    } else {
        snprintf(path, sizeof path, "%s/%s.comp", ctx->dir, name);
    }
    FILE *f = src ? fopen(path, "w") : NULL;
    if (!f || fputs(src, f) < 0 || fclose(f)) {
        fprintf(stderr, "tensorgl kernels: cannot write %s\n", path);
        ctx->failed++;
    }
    free(src);
}

int tgl_cmd_kernels(int argc, char **argv)
{
    static const char usage[] = "tensorgl kernels [--dump DIR] [--api gl|gles|spirv] [--part K/N]";
    static const char *const apis[] = {"gl", "gles", "spirv"};
    static const tgl_gl_text flavours[] = {TGL_GL_TEXT_GL, TGL_GL_TEXT_ES, TGL_GL_TEXT_SPIRV};
    dump_ctx ctx = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dump") || !strcmp(argv[i], "--api") || !strcmp(argv[i], "--part")) {
            if (i + 1 >= argc)
                return tgl_cli_missing_value("kernels", argv[i]);
            if (!strcmp(argv[i], "--part")) {
                const char *v = argv[++i];
                unsigned k, n;
                int used = 0;
                if (sscanf(v, "%u/%u%n", &k, &n, &used) != 2 || v[used] || v[0] < '0' || v[0] > '9' ||
                    n == 0 || n > 1000000 || k >= n)
                    return tgl_cli_bad_value("kernels", "--part", v, "K/N with 0 <= K < N, such as 2/4");
                ctx.part_k = k;
                ctx.part_n = n;
                continue;
            }
            if (!strcmp(argv[i], "--dump")) {
                ctx.dir = argv[++i];
                continue;
            }
            const char *api = argv[++i];
            size_t k = 0;
            while (k < 3 && strcmp(api, apis[k]))
                k++;
            if (k == 3)
                return tgl_cli_bad_choice("kernels", "API", api, strlen(api), apis, 3);
            ctx.flavour = flavours[k];
        } else {
            return tgl_cli_bad_option("kernels", argv[i], usage);
        }
    }
    /* One clear error for a directory that cannot take the files, not one per variant. */
    struct stat st;
    errno = 0;
    if (ctx.dir && (stat(ctx.dir, &st) || !S_ISDIR(st.st_mode) || access(ctx.dir, W_OK))) {
        fprintf(stderr, "tensorgl kernels: --dump %s: %s (the directory must exist and be writable)\n", ctx.dir,
                errno ? strerror(errno) : "not a directory");
        return 2;
    }
    if (ctx.part_n) {
        tgl_gl_each_variant(count_variant, &ctx);
        if (ctx.no_memory) {
            free(ctx.kernels);
            fprintf(stderr, "tensorgl kernels: no memory for the kernel list\n");
            return 1;
        }
    }
    tgl_gl_each_variant(each, &ctx);
    free(ctx.kernels);
    if (ctx.dir)
        printf("wrote %d kernel variants (%s) to %s\n", ctx.count - ctx.failed,
               ctx.flavour == TGL_GL_TEXT_ES ? "ES 3.1" : ctx.flavour == TGL_GL_TEXT_SPIRV ? "for SPIR-V" : "GL 4.3",
               ctx.dir);
    return ctx.failed ? 1 : 0;
}
