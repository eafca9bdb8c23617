/* `tensorgl kernels`: lists every kernel variant the library can compile and, with --dump DIR,
 * writes each one's full source (as the driver receives it) for offline validation, or with
 * --api spirv the text `make spirv` compiles into SPIR-V modules, each file named by the hash
 * the library looks its module up by (gl_spirv.c). */
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

typedef struct dump_ctx {
    const char *dir;
    tgl_gl_text flavour;
    int count, failed;
} dump_ctx;

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
    static const char usage[] = "tensorgl kernels [--dump DIR] [--api gl|gles|spirv]";
    static const char *const apis[] = {"gl", "gles", "spirv"};
    static const tgl_gl_text flavours[] = {TGL_GL_TEXT_GL, TGL_GL_TEXT_ES, TGL_GL_TEXT_SPIRV};
    dump_ctx ctx = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dump") || !strcmp(argv[i], "--api")) {
            if (i + 1 >= argc)
                return tgl_cli_missing_value("kernels", argv[i]);
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
    tgl_gl_each_variant(each, &ctx);
    if (ctx.dir)
        printf("wrote %d kernel variants (%s) to %s\n", ctx.count - ctx.failed,
               ctx.flavour == TGL_GL_TEXT_ES ? "ES 3.1" : ctx.flavour == TGL_GL_TEXT_SPIRV ? "for SPIR-V" : "GL 4.3",
               ctx.dir);
    return ctx.failed ? 1 : 0;
}
