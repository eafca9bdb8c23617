/* Programs are built on first use (from the disk cache when it has them, gl_disk_cache.c) and
 * kept per (kernel, workgroup size, defines) for the backend's life. */
#include "gl_internal.h"

#include <stdlib.h>
#include <string.h>

/* Reads a shader or program info log into a malloc'd string ("" when none or no memory). */
static char *info_log(GLuint object, int is_program)
{
    GLint len = 0;
    if (is_program)
        glGetProgramiv(object, GL_INFO_LOG_LENGTH, &len);
    else
        glGetShaderiv(object, GL_INFO_LOG_LENGTH, &len);
    char *log = malloc(len > 0 ? (size_t)len + 1 : 1);
    if (!log)
        return NULL;
    log[0] = '\0';
    if (len > 0) {
        if (is_program)
            glGetProgramInfoLog(object, len, NULL, log);
        else
            glGetShaderInfoLog(object, len, NULL, log);
        log[len] = '\0';
    }
    return log;
}

static tgl_status build_failed(tgl_backend *b, const char *label, const char *stage, GLuint object,
                               int is_program, const char *source)
{
    char *log = info_log(object, is_program);
    tgl_status st = tgl__fail(b, TGL_ERR_SHADER, "kernel %s: %s failed: %s", label, stage,
                              log && *log ? log : "(the driver gave no log)");
    if (b->config.flags & TGL_FLAG_DEBUG)
        tgl__log(b, TGL__LOG_ERROR, "kernel %s: %s failed; full source:\n%s", label, stage, source);
    free(log);
    return st;
}

GLuint tgl_gl_link_shader(GLuint shader, int retrievable, GLint *linked)
{
    GLuint program = glCreateProgram();
    if (retrievable)
        glProgramParameteri(program, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
    glAttachShader(program, shader);
    glLinkProgram(program);
    glDetachShader(program, shader);
    glDeleteShader(shader);
    *linked = 0;
    glGetProgramiv(program, GL_LINK_STATUS, linked);
    return program;
}

/* Compiles and links one compute program. `label` names it in errors. */
tgl_status tgl_gl_program_from_source(tgl_backend *b, const char *label, const char *source, GLuint *out)
{
    GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
    if (!shader) {
        tgl_status st = tgl_gl_check(b, "glCreateShader");
        return st ? st : tgl__fail(b, TGL_ERR_INTERNAL, "glCreateShader returned 0");
    }
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        tgl_status st = build_failed(b, label, "compile", shader, 0, source);
        glDeleteShader(shader);
        return st;
    }
    GLuint program = tgl_gl_link_shader(shader, tgl_gl_of(b)->disk.enabled, &ok);
    if (!ok) {
        tgl_status st = build_failed(b, label, "link", program, 1, source);
        glDeleteProgram(program);
        return st;
    }
    tgl_status st = tgl_gl_check(b, "building a kernel");
    if (st) {
        glDeleteProgram(program);
        return st;
    }
    *out = program;
    return TGL_OK;
}

static tgl_status remember(tgl_backend *b, tgl_gl_programs *cache, const char *key, GLuint program)
{
    if (cache->count == cache->cap) {
        size_t cap = cache->cap ? cache->cap * 2 : 32;
        tgl_gl_program *items = realloc(cache->items, cap * sizeof *items);
        if (!items)
            return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "no host memory for the program cache");
        cache->items = items;
        cache->cap = cap;
    }
    char *copy = strdup(key); /* the caller frees its own */
    if (!copy)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "no host memory for the program cache");
    cache->items[cache->count++] = (tgl_gl_program){.key = copy, .program = program};
    return TGL_OK;
}

/* From GLSL text: the program cache, else the compiler. */
static tgl_status from_glsl(tgl_backend *b, const char *kernel, const char *defines, uint32_t wg, uint32_t items,
                            GLuint *out)
{
    tgl_gl *gl = tgl_gl_of(b);
    char *source = tgl_gl_kernel_source(kernel, defines, gl->egl.es ? TGL_GL_TEXT_ES : TGL_GL_TEXT_GL, wg, items);
    if (!source)
        return tgl__fail(b, TGL_ERR_INTERNAL, "kernel %s: source not embedded or no host memory", kernel);
    tgl_status st = TGL_OK;
    if (!tgl_gl_disk_cache_load(b, source, out) && !(st = tgl_gl_program_from_source(b, kernel, source, out)))
        tgl_gl_disk_cache_store(b, source, *out);
    free(source);
    return st;
}

tgl_status tgl_gl_plan_program(tgl_backend *b, const tgl_gl_plan *p, GLuint *out)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!p->kernel)
        return tgl__fail(b, TGL_ERR_INTERNAL, "%s: its kernel plan has a flag value outside the kernel's define table",
                         p->op ? p->op : "an op");
    const char *kernel = p->kernel, *generated = p->generated ? p->generated : "";
    uint32_t wg = p->wg ? p->wg : gl->limits.workgroup_size, items = p->items ? p->items : 1;
    size_t size = strlen(kernel) + strlen(generated) + strlen(p->defines) + 32;
    char *key = malloc(size);
    if (!key)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "kernel %s: no host memory for the cache key", kernel);
    int head = snprintf(key, size, "%s\n%u\n%u\n", kernel, wg, items);
    snprintf(key + head, size - (size_t)head, "%s%s", generated, p->defines);
    const char *defines = key + head; /* the generated text, then the plan's defines */
    for (size_t i = 0; i < gl->programs.count; i++) {
        if (!strcmp(gl->programs.items[i].key, key)) {
            *out = gl->programs.items[i].program;
            free(key);
            return TGL_OK;
        }
    }
    GLuint program = 0;
    int found = 0;
    tgl_status st = TGL_OK;
    if (b->config.flags & TGL_FLAG_DEBUG) {
        tgl_gl_plan used = *p; /* as built: the device's defaults filled in */
        used.wg = wg;
        used.items = items;
        tgl_gl_plan_log(b, &used);
        if ((st = tgl_gl_plan_check_listed(b, p))) {
            free(key);
            return st;
        }
    }
    if (gl->spirv.enabled)
        st = tgl_gl_spirv_program(b, kernel, defines, wg, items, &program, &found);
    if (!st && !found)
        st = from_glsl(b, kernel, defines, wg, items, &program);
    if (!st && (st = remember(b, &gl->programs, key, program)))
        glDeleteProgram(program);
    free(key);
    if (!st)
        *out = program;
    return st;
}

void tgl_gl_programs_free(tgl_gl_programs *p)
{
    for (size_t i = 0; i < p->count; i++) {
        glDeleteProgram(p->items[i].program);
        free(p->items[i].key);
    }
    free(p->items);
    memset(p, 0, sizeof *p);
}
