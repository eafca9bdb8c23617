/* Kernel plans (gl_plan.h): define text from a family's flags, and the TGL_DEBUG check that
 * every program an op asks for is a variant the enumerators list. */
#include "gl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends "#define NAME" (and " VALUE" for a number) and a newline at *len; 0 when it does not
 * fit. Plain copies, not snprintf: a plan is built on every dispatch. */
static int put_define(char *out, size_t size, size_t *len, const char *name, int with_value, uint32_t value)
{
    char digits[10];
    size_t nd = 0, nn = strlen(name);
    do
        digits[nd++] = (char)('0' + value % 10);
    while (with_value && (value /= 10) > 0);
    size_t need = 8 + nn + (with_value ? 1 + nd : 0) + 1;
    if (*len + need >= size)
        return 0;
    char *o = out + *len;
    memcpy(o, "#define ", 8);
    memcpy(o + 8, name, nn);
    o += 8 + nn;
    if (with_value) {
        *o++ = ' ';
        while (nd > 0)
            *o++ = digits[--nd];
    }
    *o++ = '\n';
    *o = '\0';
    *len = (size_t)(o - out);
    return 1;
}

int tgl_gl_plan_kernel(tgl_gl_plan *p, const char *kernel, const tgl_gl_def *defs, size_t ndefs, const void *flags)
{
    size_t len = 0, size = sizeof p->defines;
    p->kernel = kernel;
    p->defines[0] = '\0';
    for (size_t i = 0; i < ndefs; i++) {
        uint32_t v;
        memcpy(&v, (const char *)flags + defs[i].offset, sizeof v);
        int ok = 1;
        switch (defs[i].kind) {
        case TGL_GL_DEF_FLAG:
            if (v)
                ok = put_define(p->defines, size, &len, defs[i].macro, 0, 0);
            break;
        case TGL_GL_DEF_UINT:
            ok = put_define(p->defines, size, &len, defs[i].macro, 1, v);
            break;
        case TGL_GL_DEF_COUNT:
            if (v)
                ok = put_define(p->defines, size, &len, defs[i].macro, 1, v);
            break;
        case TGL_GL_DEF_NAME:
            if (v >= defs[i].count)
                goto bad;
            if (defs[i].names[v])
                ok = put_define(p->defines, size, &len, defs[i].names[v], 0, 0);
            break;
        case TGL_GL_DEF_READ:
            if (v >= TGL_GL_READS)
                goto bad;
            if (v != TGL_GL_READ_SSBO)
                ok = put_define(p->defines, size, &len, "TGL_TEX", 0, 0);
            if (ok && v == TGL_GL_READ_IMAGE)
                ok = put_define(p->defines, size, &len, "TGL_IMG", 0, 0);
            break;
        }
        if (!ok)
            goto bad;
    }
    return 0;
bad: /* tgl_gl_plan_program refuses a plan without a kernel */
    p->kernel = NULL;
    p->defines[0] = '\0';
    return -1;
}

/* The defines on one line, for the log: "A B 1 C". */
static void one_line(const char *defines, char *out, size_t size)
{
    size_t o = 0;
    for (const char *s = defines; *s && o + 1 < size;) {
        if (!strncmp(s, "#define ", 8)) {
            s += 8;
            continue;
        }
        char c = *s++;
        if (c == '\n')
            c = *s ? ' ' : '\0';
        if (c)
            out[o++] = c;
    }
    out[o] = '\0';
}

/* ---- TGL_DEBUG: the program must be a listed variant ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct listing {
    char **items;
    size_t count, cap;
    int failed;
} listing;

static void collect(void *ctx, const char *kernel, const char *defines)
{
    listing *l = ctx;
    if (l->failed)
        return;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        char **items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            l->failed = 1;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    size_t size = strlen(kernel) + strlen(defines) + 2;
    char *key = malloc(size);
    if (!key) {
        l->failed = 1;
        return;
    }
    snprintf(key, size, "%s\n%s", kernel, defines);
    l->items[l->count++] = key;
}

void tgl_gl_variant_list_free(tgl_gl_variant_list *v)
{
    for (size_t i = 0; i < v->count; i++)
        free(v->keys[i]);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

/* tgl_map's and tgl_map_t's kernels are generated from the expression, so they are listed by
 * their other variants only (gl_map.c); every other kernel's defines must be listed exactly. */
static int generated(const char *kernel)
{
    return !strcmp(kernel, "map/map") || !strcmp(kernel, "tensor/map");
}

tgl_status tgl_gl_plan_check_listed(tgl_backend *b, const tgl_gl_plan *p)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_variant_list *v = &gl->variants;
    if (generated(p->kernel) || p->user_config)
        return TGL_OK;
    if (!v->keys) {
        listing l = {0};
        tgl_gl_each_variant(collect, &l);
        if (l.failed) {
            v->keys = l.items;
            v->count = l.count;
            tgl_gl_variant_list_free(v);
            return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "TGL_DEBUG: no host memory for the kernel variant list");
        }
        qsort(l.items, l.count, sizeof *l.items, cmp_str);
        v->keys = l.items;
        v->count = l.count;
    }
    size_t size = strlen(p->kernel) + strlen(p->defines) + 2;
    char *key = malloc(size);
    if (!key)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "TGL_DEBUG: no host memory for a variant key");
    snprintf(key, size, "%s\n%s", p->kernel, p->defines);
    int found = bsearch(&key, v->keys, v->count, sizeof *v->keys, cmp_str) != NULL;
    free(key);
    if (found)
        return TGL_OK;
    char line[TGL_GL_DEFINES_MAX];
    one_line(p->defines, line, sizeof line);
    /* A trait the user set (TGL_DEVICE_PROFILE, TGL_GEMM, tune) may ask for a variant the
     * built-in profiles never do: said, not failed. */
    for (int t = 0; t < TGL_GL_TRAIT_COUNT; t++)
        if (gl->limits.trait_source[t] >= TGL_GL_FROM_OVERRIDE) {
            tgl__log(b, TGL__LOG_WARN, "TGL_DEBUG: %s: kernel %s [%s] is not a listed variant (a trait set by "
                     "the user asked for it)", p->op, p->kernel, line);
            return TGL_OK;
        }
    return tgl__fail(b, TGL_ERR_INTERNAL, "TGL_DEBUG: %s planned kernel %s [%s], a variant tgl_gl_each_variant "
                     "does not list (`tensorgl kernels`, the SPIR-V build and validate-kernels would miss it)",
                     p->op, p->kernel, line);
}

void tgl_gl_plan_log(tgl_backend *b, const tgl_gl_plan *p)
{
    char line[TGL_GL_DEFINES_MAX];
    one_line(p->defines, line, sizeof line);
    tgl__log(b, TGL__LOG_DEBUG, "%s: kernel %s [%s], %u invocations per workgroup, %u item%s each, %llu workgroups: %s",
             p->op, p->kernel, line, p->wg, p->items, p->items == 1 ? "" : "s", (unsigned long long)p->groups,
             p->why ? p->why : "its only variant");
}
