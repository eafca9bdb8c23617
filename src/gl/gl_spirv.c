/* Kernels from prebuilt SPIR-V modules (TGL_SHADER=spirv, through ARB_gl_spirv).
 *
 * `make spirv` compiles every kernel variant the library can ask for (tgl_gl_each_variant) with
 * glslangValidator -G into one module per variant, named by the 128-bit hash of the GLSL text it
 * was compiled from (tgl_gl_kernel_source's TGL_GL_TEXT_SPIRV flavour). At run time the same
 * text is assembled and hashed, so a module built from other sources (an older library, an
 * edited kernel) is never found under the current name: nothing stale is ever loaded. The
 * workgroup size and the element-wise items per invocation vary by device, so they are the
 * modules' specialization constants 0 and 1 (glsl/common/local_size.glsl), set here.
 *
 * A variant without a module (tgl_map's kernels, generated from the expression at run time) or
 * with one the driver refuses is built from GLSL as usual and logged (TGL_DEBUG=1 for the
 * former, a warning for the latter), so an op never fails for want of SPIR-V.
 *
 * Programs from modules stay out of tensorgl's program cache (gl_disk_cache.c): Mesa 22.3
 * crashes inside glGetProgramiv(GL_PROGRAM_BINARY_LENGTH) on a program linked from SPIR-V
 * (a strlen of the GLSL source such a program does not have). Specializing a module skips
 * the GLSL front end, which is most of what that cache saves, and the driver's own shader cache
 * still applies. */
#define _GNU_SOURCE /* dladdr: where the library itself lies */
#include "gl_internal.h"
#include "../core/files.h"
#include "../core/hash.h"
#include "gl_divisor.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPIRV_MAGIC 0x07230203u
#define MAX_MODULE_BYTES (4u << 20) /* the largest module is ~60 KB; more is damage */
#define OP_DECORATE 71u
#define OP_FUNCTION_END 56u
#define DECORATION_SPEC_ID 1u

/* The default module directory: tensorgl-spirv beside the file the library was loaded from
 * (LIBDIR/tensorgl-spirv once installed; build/tensorgl-spirv in the build tree). */
static int default_dir(char *out, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)default_dir, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    int n = slash ? snprintf(out, size, "%.*s/tensorgl-spirv", (int)(slash - info.dli_fname), info.dli_fname)
                  : snprintf(out, size, "tensorgl-spirv");
    return n > 0 && (size_t)n < size;
}

tgl_status tgl_gl_spirv_init(tgl_backend *b, tgl_gl_spirv *s)
{
    tgl_gl *gl = tgl_gl_of(b);
    memset(s, 0, sizeof *s);
    if (!b->config.spirv)
        return TGL_OK;
    if (gl->egl.es)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "TGL_SHADER=spirv: this is an OpenGL ES context, and SPIR-V shaders (ARB_gl_spirv) "
                         "are desktop GL only; use TGL_SHADER=glsl or a desktop GL context");
    if (!epoxy_has_gl_extension("GL_ARB_gl_spirv"))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                         "TGL_SHADER=spirv: the driver (%s) does not offer GL_ARB_gl_spirv; use TGL_SHADER=glsl",
                         gl->renderer);
    if (b->config.spirv_dir[0])
        tgl__strlcpy(s->dir, b->config.spirv_dir, sizeof s->dir);
    else if (!default_dir(s->dir, sizeof s->dir))
        return tgl__fail(b, TGL_ERR_IO, "TGL_SHADER=spirv: cannot tell where the library lies; set TGL_SPIRV_DIR");
    char manifest[sizeof s->dir + 32];
    snprintf(manifest, sizeof manifest, "%s/tensorgl-spirv.txt", s->dir);
    struct stat st;
    if (stat(manifest, &st) || !S_ISREG(st.st_mode))
        return tgl__fail(b, TGL_ERR_IO,
                         "TGL_SHADER=spirv: no SPIR-V modules at %s (no tensorgl-spirv.txt there); `make spirv` "
                         "builds them into build/tensorgl-spirv and `make install-spirv` installs them; "
                         "TGL_SPIRV_DIR names another directory",
                         s->dir);
    s->enabled = 1;
    if (b->config.flags & TGL_FLAG_DEBUG)
        tgl__log(b, TGL__LOG_DEBUG, "kernels from SPIR-V modules in %s", s->dir);
    return TGL_OK;
}

/* The module's bytes (malloc'd) when the file holds something shaped like SPIR-V; NULL when it
 * is absent (*absent set) or unreadable, empty, oversized or not SPIR-V. */
static uint32_t *read_module(const char *path, size_t *words, int *absent)
{
    *absent = 0;
    int fd = tgl__open_regular(path);
    if (fd < 0) {
        *absent = errno != EINVAL; /* EINVAL: something other than a file is there */
        return NULL;
    }
    struct stat st;
    uint32_t *data = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= 20 && st.st_size % 4 == 0 &&
        st.st_size <= (off_t)MAX_MODULE_BYTES && (data = malloc((size_t)st.st_size))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, (char *)data + got, (size_t)st.st_size - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size || data[0] != SPIRV_MAGIC) {
            free(data);
            data = NULL;
        }
        *words = got / 4;
    }
    close(fd);
    return data;
}

/* Which of specialization constants 0 and 1 the module declares (bit i for SpecId i): the
 * driver rejects values for constants a module does not have. *ok = 0 when the instructions do
 * not tile the file or the last is not OpFunctionEnd: a truncated or damaged file, which is not
 * handed to the driver's parser at all. */
static unsigned spec_ids(const uint32_t *m, size_t words, int *ok)
{
    unsigned ids = 0;
    uint32_t last = 0;
    *ok = 0;
    for (size_t i = 5; i < words;) {
        uint32_t count = m[i] >> 16, op = m[i] & 0xffffu;
        if (count == 0 || count > words - i)
            return 0;
        if (op == OP_DECORATE && count >= 4 && m[i + 2] == DECORATION_SPEC_ID && m[i + 3] < 2)
            ids |= 1u << m[i + 3];
        last = op;
        i += count;
    }
    *ok = last == OP_FUNCTION_END;
    return ids;
}

/* Compiles (specializes) and links the module; 0 with the driver's log in *why on refusal. */
static int build(const uint32_t *m, size_t words, unsigned ids, uint32_t wg, uint32_t items, GLuint *out,
                 char *why, size_t why_size)
{
    GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
    GLint ok = 0;
    why[0] = '\0';
    if (!shader) {
        snprintf(why, why_size, "glCreateShader failed");
        return 0;
    }
    glShaderBinary(1, &shader, GL_SHADER_BINARY_FORMAT_SPIR_V_ARB, m, (GLsizei)(words * 4));
    GLuint index[2], value[2];
    GLuint n = 0;
    if (ids & 1u) {
        index[n] = 0;
        value[n++] = wg;
    }
    if (ids & 2u) {
        index[n] = 1;
        value[n++] = items;
    }
    glSpecializeShaderARB(shader, "main", n, index, value);
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        glGetShaderInfoLog(shader, (GLsizei)why_size, NULL, why);
        glDeleteShader(shader);
        return 0;
    }
    GLuint program = tgl_gl_link_shader(shader, 0, &ok);
    if (!ok) {
        glGetProgramInfoLog(program, (GLsizei)why_size, NULL, why);
        glDeleteProgram(program);
        return 0;
    }
    *out = program;
    return 1;
}

/* The fixed locations a module-built kernel declares must fit its record. */
_Static_assert(LOC_SRT_COUNTS < TGL_GL_ACTIVE_LOCATIONS && LOC_TEXTURE5 < TGL_GL_ACTIVE_LOCATIONS,
               "a kernel's uniform location lies past the active-location record");

/* Records which uniform locations `program` (from a module) has; 0 without host memory. */
static int record_active(tgl_gl_spirv *s, GLuint program)
{
    if (program >= s->active_cap) {
        size_t cap = s->active_cap ? s->active_cap : 256;
        while (cap <= program)
            cap *= 2;
        tgl_gl_active *a = realloc(s->active, cap * sizeof *a);
        if (!a)
            return 0;
        memset(a + s->active_cap, 0, (cap - s->active_cap) * sizeof *a);
        s->active = a;
        s->active_cap = cap;
    }
    tgl_gl_active rec = {.recorded = 1};
    GLint n = 0;
    glGetProgramInterfaceiv(program, GL_UNIFORM, GL_ACTIVE_RESOURCES, &n);
    for (GLint i = 0; i < n; i++) {
        static const GLenum props[2] = {GL_LOCATION, GL_ARRAY_SIZE};
        GLint v[2] = {-1, 0};
        glGetProgramResourceiv(program, GL_UNIFORM, (GLuint)i, 2, props, 2, NULL, v);
        for (GLint j = 0; v[0] >= 0 && j < (v[1] > 0 ? v[1] : 1) && v[0] + j < TGL_GL_ACTIVE_LOCATIONS; j++)
            rec.bits[(v[0] + j) / 64] |= 1ull << ((v[0] + j) % 64);
    }
    s->active[program] = rec;
    return 1;
}

/* How many of the `count` locations from loc on the program takes (all for GLSL programs; for
 * one from a module, the active run starting at loc; past the record, all). */
static GLsizei taken(tgl_backend *b, GLuint prog, GLint loc, GLsizei count)
{
    const tgl_gl_spirv *s = &tgl_gl_of(b)->spirv;
    if (prog >= s->active_cap || !s->active[prog].recorded || loc >= TGL_GL_ACTIVE_LOCATIONS)
        return count;
    const tgl_gl_active *a = &s->active[prog];
    GLsizei n = 0;
    while (n < count && loc + n >= 0 && loc + n < TGL_GL_ACTIVE_LOCATIONS &&
           (a->bits[(loc + n) / 64] >> ((loc + n) % 64) & 1))
        n++;
    return n;
}

void tgl_gl_uniform_ui(tgl_backend *b, GLuint prog, GLint loc, GLuint v)
{
    if (taken(b, prog, loc, 1))
        glProgramUniform1ui(prog, loc, v);
}

void tgl_gl_uniform_f(tgl_backend *b, GLuint prog, GLint loc, GLfloat v)
{
    if (taken(b, prog, loc, 1))
        glProgramUniform1f(prog, loc, v);
}

void tgl_gl_uniform_uiv(tgl_backend *b, GLuint prog, GLint loc, GLsizei count, const GLuint *v)
{
    GLsizei n = taken(b, prog, loc, count);
    if (n > 0)
        glProgramUniform1uiv(prog, loc, n, v);
}

void tgl_gl_uniform_fv(tgl_backend *b, GLuint prog, GLint loc, GLsizei count, const GLfloat *v)
{
    GLsizei n = taken(b, prog, loc, count);
    if (n > 0)
        glProgramUniform1fv(prog, loc, n, v);
}

void tgl_gl_uniform_dims(tgl_backend *b, GLuint prog, GLint loc, const size_t *v, size_t n)
{
    GLuint u[TGL_MAX_DIMS] = {0};
    for (size_t i = 0; i < n && i < TGL_MAX_DIMS; i++)
        u[i] = (GLuint)v[i];
    tgl_gl_uniform_uiv(b, prog, loc, TGL_MAX_DIMS, u);
}

void tgl_gl_uniform_divisors(tgl_backend *b, GLuint prog, GLint loc_m, GLint loc_s, const size_t *v, size_t n)
{
    GLuint m[TGL_MAX_DIMS] = {0}, s[TGL_MAX_DIMS] = {0};
    for (size_t i = 0; i < n && i < TGL_MAX_DIMS; i++)
        tgl_gl_divisor_of((uint32_t)v[i], &m[i], &s[i]);
    tgl_gl_uniform_uiv(b, prog, loc_m, TGL_MAX_DIMS, m);
    tgl_gl_uniform_uiv(b, prog, loc_s, TGL_MAX_DIMS, s);
}

void tgl_gl_uniforms_ui(tgl_backend *b, GLuint prog, const tgl_gl_uniform *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tgl_gl_uniform_ui(b, prog, u[i].loc, (GLuint)u[i].value);
}

int tgl_gl_spirv_excluded(const char *kernel, const char *defines)
{
    /* Subgroup operations need SPIR-V 1.3; ARB_gl_spirv takes SPIR-V 1.0 (glslangValidator -G
     * refuses them), so variants that shuffle are built from GLSL: attention's, the scans'
     * whose SCAN_SG (the subgroup size) is not 0, and tgl_matvec_t's whose LANES is not. */
    const char *sg = defines ? strstr(defines, "#define SCAN_SG ") : NULL;
    const char *lanes = defines ? strstr(defines, "#define LANES ") : NULL; /* gemm/matvec_w's */
    if ((defines && strstr(defines, "#define SUBGROUP_XOR")) || !strcmp(kernel, "attention/flash_shuffle") ||
        (sg && sg[strlen("#define SCAN_SG ")] != '0') || (lanes && lanes[strlen("#define LANES ")] != '0'))
        return 1;
    /* norm/softmax_lanes (llvmpipe's softmax rows) reads across invocations with ARB_shader_ballot;
     * glslangValidator -G builds it (SPV_KHR_shader_ballot), but Mesa 22.3's llvmpipe crashed
     * (SIGSEGV) running the module, so it is built from GLSL too, as is gemm/matvec_lanes, which
     * sums across invocations the same way. */
    if (!strcmp(kernel, "norm/softmax_lanes") || !strcmp(kernel, "gemm/matvec_lanes"))
        return 1;
    /* flash_reg keeps RQ x DP and RQ x BKV accumulators in arrays indexed by loop counters;
     * Mesa 22.3's GLSL compiler unrolls those loops and splits the arrays into registers, but
     * from SPIR-V llvmpipe spent over two minutes compiling one variant (1.5 s from GLSL), and
     * flattening the arrays or [[unroll]] hints did not bring it near. Only llvmpipe takes
     * this kernel (GPUs run attention/flash), so it is built from GLSL everywhere. */
    if (!strcmp(kernel, "attention/flash_reg"))
        return 1;
    return 0;
}

tgl_status tgl_gl_spirv_program(tgl_backend *b, const char *kernel, const char *defines, uint32_t wg,
                                uint32_t items, GLuint *out, int *found)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_spirv *s = &gl->spirv;
    *found = 0;
    /* Specialization takes any size, and a driver may not refuse one past its limit (llvmpipe
     * linked and ran 1025 invocations); the GLSL compiler does refuse, so refuse the same. */
    if (wg > gl->limits.wg_invocations)
        return tgl__fail(b, TGL_ERR_SHADER, "kernel %s: a workgroup of %u invocations exceeds the device's %u",
                         kernel, wg, gl->limits.wg_invocations);
    if (tgl_gl_spirv_excluded(kernel, defines)) {
        s->excluded++;
        return TGL_OK;
    }
    char *text = tgl_gl_kernel_source(kernel, defines, TGL_GL_TEXT_SPIRV, wg, items);
    if (!text)
        return tgl__fail(b, TGL_ERR_INTERNAL, "kernel %s: source not embedded or no host memory", kernel);
    static const uint64_t start[2];
    uint64_t h[2];
    tgl__hash128(text, strlen(text), start, h);
    char path[sizeof s->dir + 48];
    snprintf(path, sizeof path, "%s/%016llx%016llx.spv", s->dir, (unsigned long long)h[0],
             (unsigned long long)h[1]);
    free(text);
    size_t words = 0;
    int absent = 0;
    uint32_t *m = NULL;
    if (!(m = read_module(path, &words, &absent))) {
        if (absent) {
            s->missing++;
            if (b->config.flags & TGL_FLAG_DEBUG)
                tgl__log(b, TGL__LOG_DEBUG, "kernel %s: no SPIR-V module (%s) for the defines [%s]; built from GLSL",
                         kernel, path, defines);
        } else {
            s->rejected++;
            tgl__log(b, TGL__LOG_WARN, "kernel %s: %s is not a readable SPIR-V module; built from GLSL", kernel,
                     path);
        }
    } else {
        int ok;
        unsigned ids = spec_ids(m, words, &ok);
        char why[512];
        tgl_status st = TGL_OK;
        if (ok && build(m, words, ids, wg, items, out, why, sizeof why)) {
            if (!(st = tgl_gl_check(b, "building a kernel from SPIR-V")) && !record_active(s, *out))
                st = tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "kernel %s: no host memory for its uniform list", kernel);
            if (st)
                glDeleteProgram(*out);
            else
                *found = 1;
        } else {
            s->rejected++;
            tgl__log(b, TGL__LOG_WARN, "kernel %s: the driver refused SPIR-V module %s (%s); built from GLSL",
                     kernel, path, ok ? why : "truncated or damaged: its instructions do not end the file with OpFunctionEnd");
            /* A refused module raises GL errors of its own; only a lost context matters. */
            GLenum e;
            for (int i = 0; i < 16 && (e = glGetError()) != GL_NO_ERROR; i++)
                if (e == GL_CONTEXT_LOST)
                    st = tgl__fail(b, TGL_ERR_DEVICE_LOST, "kernel %s: GL_CONTEXT_LOST; close this backend", kernel);
            if (!st)
                st = tgl_gl_check_reset(b);
        }
        if (st) {
            free(m);
            return st;
        }
    }
    if (*found)
        s->loaded++;
    free(m);
    return TGL_OK;
}

void tgl_gl_test_spirv_stats(tgl_backend *b, unsigned long stats[4])
{
    const tgl_gl_spirv *s = &tgl_gl_of(b)->spirv;
    stats[0] = s->loaded;
    stats[1] = s->missing;
    stats[2] = s->rejected;
    stats[3] = s->excluded;
}
