/* Kernel source assembly: the embedded .comp file with its #version line replaced by the
 * API's preamble, the variant's #defines after it, and `#include "common/..."` lines spliced
 * in. The .comp files stay valid standalone GLSL for glslangValidator (which resolves the same
 * includes through GL_GOOGLE_include_directive). No user data ever reaches the text: defines
 * come from the op drivers' fixed tables. */
#include "gl_internal.h"
#include "kernel_table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *p;
    size_t len, cap;
    int failed;
    const char *before_code; /* emitted once, before the first line that is not a directive,
                                comment or blank (ES: the precision statements) */
} text;

static void append_n(text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void appendf(text *t, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        append_n(t, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static const tgl_kernel_file *find_file(const char *path)
{
    for (size_t i = 0; i < tgl_kernel_file_count; i++)
        if (!strcmp(tgl_kernel_files[i].path, path))
            return &tgl_kernel_files[i];
    return NULL;
}

/* 1 for a line of GLSL code: not blank, not a preprocessor directive, not a // comment. */
static int is_code(const char *line, size_t len)
{
    while (len && (*line == ' ' || *line == '\t')) {
        line++;
        len--;
    }
    return len && *line != '#' && !(len >= 2 && line[0] == '/' && line[1] == '/');
}

/* The quoted path of an `#include "..."` line, or 0 if the line is not one. */
static int include_path(const char *line, size_t len, char *out, size_t out_size)
{
    const char *kw = "#include \"";
    size_t kwlen = strlen(kw);
    if (len <= kwlen || strncmp(line, kw, kwlen))
        return 0;
    const char *end = memchr(line + kwlen, '"', len - kwlen);
    if (!end || (size_t)(end - line - kwlen) >= out_size)
        return 0;
    memcpy(out, line + kwlen, (size_t)(end - line - kwlen));
    out[end - line - kwlen] = '\0';
    return 1;
}

/* Copies a file's body (every line after the first when skip_version is set), splicing
 * includes. Returns 0 when an include is missing or nests too deep. */
static int splice(text *t, const tgl_kernel_file *f, int skip_version, int depth)
{
    const char *p = f->text, *end = f->text + f->size;
    int line_no = 1, continued = 0; /* continued: the line before ended in a backslash */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char path[128];
        if (line_no == 1 && skip_version && !strncmp(p, "#version", 8)) {
            appendf(t, "#line 2\n");
        } else if (len >= 10 && !strncmp(p, "#extension GL_GOOGLE_include_directive", 38)) {
            append_n(t, "\n", 1);
        } else if (include_path(p, len, path, sizeof path)) {
            const tgl_kernel_file *inc = find_file(path);
            if (!inc || depth > 4 || !splice(t, inc, 0, depth + 1))
                return 0;
            appendf(t, "#line %d\n", line_no + 1);
        } else {
            /* A line that continues a macro definition is part of that directive. */
            if (t->before_code && !continued && is_code(p, len)) {
                append_n(t, t->before_code, strlen(t->before_code));
                appendf(t, "#line %d\n", line_no);
                t->before_code = NULL;
            }
            append_n(t, p, len);
            append_n(t, "\n", 1);
        }
        continued = len && p[len - 1] == '\\';
        p += len + 1;
        line_no++;
    }
    return 1;
}

/* Whether a file's first line asks for GLSL 4.50. */
static int wants_450(const tgl_kernel_file *f)
{
    return f->size >= 12 && !strncmp(f->text, "#version 450", 12);
}

char *tgl_gl_kernel_source(const char *name, const char *defines, tgl_gl_text flavour, uint32_t wg_size,
                           uint32_t items)
{
    char path[128];
    snprintf(path, sizeof path, "%s.comp", name);
    const tgl_kernel_file *f = find_file(path);
    if (!f)
        return NULL;
    /* ES: `precise` keeps compensated sums from being simplified away; ES 3.1 has it only
     * through gpu_shader5. Buffer textures (samplerBuffer, the TEX variants) need
     * EXT_texture_buffer or OES_texture_buffer, enabled here before any code; the host runs
     * those variants only where the context offers one (gl_limits.c). The precision
     * statements wait for the first line of code: ES wants a kernel's own #extension lines
     * (attention/flash.comp's subgroup shuffles) before any statement, and NVIDIA's ES
     * compiler refuses them after one. */
    static const char es_preamble[] =
        "#version 310 es\n"
        "#if defined(GL_EXT_gpu_shader5)\n#extension GL_EXT_gpu_shader5 : enable\n#define TGL_HAS_PRECISE 1\n"
        "#elif defined(GL_OES_gpu_shader5)\n#extension GL_OES_gpu_shader5 : enable\n#define TGL_HAS_PRECISE 1\n"
        "#endif\n"
        "#if defined(GL_EXT_texture_buffer)\n#extension GL_EXT_texture_buffer : enable\n"
        "#elif defined(GL_OES_texture_buffer)\n#extension GL_OES_texture_buffer : enable\n"
        "#endif\n"
        "#define TGL_ES 1\n";
    static const char es_precision[] = "precision highp float;\nprecision highp int;\n";
    /* Desktop GL and SPIR-V: GLSL 4.30, or 4.50 for a file that asks for it
     * (norm/softmax_lanes.comp: glslang declares ARB_shader_ballot's functions from 4.50 on;
     * llvmpipe's 4.5 context takes it). */
    const char *gl_version = wants_450(f) ? "#version 450 core\n" : "#version 430 core\n";
    /* SPIR-V: one module serves every workgroup size and item count, so both are
     * specialization constants (0 and 1; gl_spirv.c sets them) instead of #defines; loops
     * with constant trip counts carry an unroll hint (common/unroll.glsl). */
    static const char spirv_body[] =
        "#extension GL_EXT_control_flow_attributes : require\n#define TGL_SPIRV 1\n"
        "#define TGL_UNROLL [[unroll]]\n"
        "layout(constant_id = 0) const uint tgl_wg_size = 64u;\n"
        "layout(constant_id = 1) const uint tgl_items = 1u;\n"
        "#define TGL_WG_SIZE tgl_wg_size\n#define TGL_ITEMS tgl_items\n";
    text t = {0};
    if (flavour == TGL_GL_TEXT_ES) {
        t.before_code = es_precision;
        append_n(&t, es_preamble, strlen(es_preamble));
    } else {
        append_n(&t, gl_version, strlen(gl_version));
        if (flavour == TGL_GL_TEXT_SPIRV)
            append_n(&t, spirv_body, strlen(spirv_body));
    }
    if (flavour != TGL_GL_TEXT_SPIRV) {
        appendf(&t, "#define TGL_WG_SIZE %u\n", wg_size);
        if (items > 1)
            appendf(&t, "#define TGL_ITEMS %u\n", items);
    }
    if (defines)
        append_n(&t, defines, strlen(defines));
    if (!splice(&t, f, 1, 0) || t.failed) {
        free(t.p);
        return NULL;
    }
    return t.p;
}

int tgl_gl_es_excluded(const char *kernel, const char *defines)
{
    /* dvec4 stores and ARB_shader_ballot: desktop GL only; so are decode attention's MERGE, whose
     * six storage buffers pass ES 3.1's guaranteed four, and Winograd convolutions (five) */
    return (defines && strstr(defines, "#define TGL_WIDE") != NULL) || !strcmp(kernel, "norm/softmax_lanes") ||
           !strcmp(kernel, "gemm/matvec_lanes") ||
           (!strcmp(kernel, "attention/decode") && defines && strstr(defines, "#define MERGE") != NULL) ||
           !strcmp(kernel, "conv/conv2d_winograd");
}

void tgl_gl_each_variant(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    tgl_gl_elementwise_variants(fn, ctx);
    tgl_gl_reduce_variants(fn, ctx);
    tgl_gl_rows_variants(fn, ctx);
    tgl_gl_cast_variants(fn, ctx);
    tgl_gl_llm_variants(fn, ctx);
    tgl_gl_shape_variants(fn, ctx);
    tgl_gl_transpose_variants(fn, ctx);
    tgl_gl_gemm_variants(fn, ctx);
    tgl_gl_matvec_variants(fn, ctx);
    tgl_gl_attention_variants(fn, ctx);
    tgl_gl_conv2d_variants(fn, ctx);
    tgl_gl_pool2d_variants(fn, ctx);
    tgl_gl_conv_transpose2d_variants(fn, ctx);
    tgl_gl_quant_variants(fn, ctx);
    tgl_gl_tensor_ewise_variants(fn, ctx);
    tgl_gl_map_t_variants(fn, ctx);
    tgl_gl_reduce_t_variants(fn, ctx);
    tgl_gl_compact_variants(fn, ctx);
    tgl_gl_scatter_variants(fn, ctx);
    tgl_gl_sort_variants(fn, ctx);
    tgl_gl_interpolate_variants(fn, ctx);
    tgl_gl_check_variants(fn, ctx);
}
