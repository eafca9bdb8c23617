/* Device limits: what the driver reports, and the GEMM shape helpers; the choices made from
 * them are the device profile's (gl_profile.c). */
#include "gl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Some drivers (NVIDIA) accept any glBufferData size and commit memory lazily, so an
 * allocation larger than the device only fails later, at first use. Where the driver reports
 * its memory, allocations beyond it are refused up front. */
#define TGL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX 0x9048
#define TGL_GPU_MEMORY_INFO_CURRENT_AVAILABLE_VIDMEM_NVX 0x9049
#define TGL_VBO_FREE_MEMORY_ATI 0x87FB

/* NVIDIA's ES contexts answer the NVX queries without listing the extension (H100, driver
 * 580.159.04: the same 81559 MiB as its GL context), and commit buffers lazily
 * there too: a 256 GiB tgl_alloc succeeded on ES until the query was made there as well. */
static int has_nvx_memory_info(void)
{
    if (epoxy_has_gl_extension("GL_NVX_gpu_memory_info"))
        return 1;
    const char *vendor = (const char *)glGetString(GL_VENDOR);
    return !epoxy_is_desktop_gl() && vendor && !strncmp(vendor, "NVIDIA", 6);
}

/* Device memory in bytes as the driver's NVX (pname: its total or current-available query) or
 * ATI query reports it (ATI's [0] is free memory in the pool); 0 when neither answers. */
static uint64_t query_memory(GLenum nvx_pname)
{
    GLint kib[4] = {0};
    if (has_nvx_memory_info())
        glGetIntegerv(nvx_pname, kib);
    else if (epoxy_has_gl_extension("GL_ATI_meminfo"))
        glGetIntegerv(TGL_VBO_FREE_MEMORY_ATI, kib);
    while (glGetError() != GL_NO_ERROR) /* a driver that refuses the query: unknown */
        kib[0] = 0;
    return kib[0] > 0 ? (uint64_t)kib[0] * 1024u : 0;
}

uint64_t tgl_gl_device_available_bytes(void)
{
    return query_memory(TGL_GPU_MEMORY_INFO_CURRENT_AVAILABLE_VIDMEM_NVX);
}

static uint64_t device_memory_bytes(void)
{
    return query_memory(TGL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX);
}

static uint64_t get_u64(GLenum pname)
{
    GLint64 v = 0;
    glGetInteger64v(pname, &v);
    return v > 0 ? (uint64_t)v : 0;
}

/* A tile the device runs: its invocations and shared memory within the limits, and every
 * invocation staging whole vec4s (see gemm_tiled.comp). */
uint64_t tgl_gl_gemm_shared_bytes(const tgl_gl_gemm_config *g)
{
    return (uint64_t)g->bk * (g->bm + g->bn) * sizeof(float) * (g->double_slab ? 2 : 1);
}

/* The largest tile edge, slab depth and per-invocation block a configuration may ask for: far
 * above any that fits a device's shared memory, and small enough that every product below is
 * exact (a configuration may come from TGL_GEMM, a tune file or a profile override). */
#define GEMM_MAX_EDGE 4096u
#define GEMM_MAX_BLOCK 64u

int tgl_gl_gemm_fits(const tgl_gl_gemm_config *g, const tgl_gl_limits *l)
{
    if (g->bm > GEMM_MAX_EDGE || g->bn > GEMM_MAX_EDGE || g->bk > GEMM_MAX_EDGE || g->tm > GEMM_MAX_BLOCK ||
        g->tn > GEMM_MAX_BLOCK || !g->tm || !g->tn || g->tm % 4 || g->tn % 4 || !g->bk || g->bk % 4 ||
        g->bm < g->tm || g->bn < g->tn || g->bm % g->tm || g->bn % g->tn)
        return 0;
    uint64_t threads = (uint64_t)(g->bm / g->tm) * (g->bn / g->tn); /* >= 1: bm >= tm, bn >= tn */
    return threads <= l->wg_invocations && threads <= l->wg_size[0] &&
           tgl_gl_gemm_shared_bytes(g) <= l->shared_memory &&
           ((uint64_t)g->bm * g->bk) % (4 * threads) == 0 && ((uint64_t)g->bn * g->bk) % (4 * threads) == 0;
}

/* Reads `n` comma-separated decimal numbers (digits only, each at most 2^32 - 1) after `prefix`;
 * returns where the text goes on, or NULL. Not sscanf: its %u takes a sign and has no defined
 * result past UINT_MAX. */
static const char *read_numbers(const char *s, const char *prefix, unsigned *v, int n)
{
    size_t plen = strlen(prefix);
    if (strncmp(s, prefix, plen))
        return NULL;
    s += plen;
    for (int i = 0; i < n; i++) {
        if (i > 0 && *s++ != ',')
            return NULL;
        uint64_t x = 0;
        const char *start = s;
        for (; *s >= '0' && *s <= '9'; s++)
            if ((x = x * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
                return NULL;
        if (s == start)
            return NULL;
        v[i] = (unsigned)x;
    }
    return s;
}

int tgl_gl_gemm_parse(const char *s, const tgl_gl_limits *l, tgl_gl_gemm_config *out)
{
    unsigned v[5];
    const char *rest;
    tgl_gl_gemm_config g = {0};
    if ((rest = read_numbers(s, "reg:", v, 4)) && (!*rest || !strcmp(rest, ",rows")) && v[0] && v[1] &&
        (uint64_t)v[0] * v[1] <= l->wg_invocations && v[0] <= l->wg_size[0] && v[1] <= l->wg_size[1] &&
        (v[2] == 4 || v[2] == 8) && (v[3] == 4 || v[3] == 8)) {
        g = (tgl_gl_gemm_config){0, 0, 0, 0, v[2], v[3], v[0], v[1], l->gemm.matvec_row_per_invocation,
                                 l->texture_buffer_texels > 0, 0, 0, *rest != 0};
    } else if ((rest = read_numbers(s, "tiled:", v, 5))) {
        /* then any of ",unroll", ",double" and ",tex", each at most once */
        int flags[3] = {0, 0, 0};
        static const char *const names[3] = {",unroll", ",double", ",tex"};
        while (*rest) {
            int known = 0;
            for (int i = 0; i < 3 && !known; i++)
                if (!flags[i] && !strncmp(rest, names[i], strlen(names[i])) &&
                    (rest[strlen(names[i])] == ',' || !rest[strlen(names[i])]))
                    flags[i] = 1, rest += strlen(names[i]), known = 1;
            if (!known)
                return 0;
        }
        /* ",tex" where the API has buffer textures (not ES), like the register kernel's */
        g = (tgl_gl_gemm_config){1, v[0], v[1], v[2], v[3], v[4], 8, 8, l->gemm.matvec_row_per_invocation,
                                 flags[2] && l->texture_buffer_texels > 0, flags[0], flags[1], 0};
        if (!tgl_gl_gemm_fits(&g, l))
            return 0;
    } else {
        return 0;
    }
    *out = g;
    return 1;
}

void tgl_gl_gemm_format(const tgl_gl_gemm_config *g, char *out, size_t size)
{
    if (g->tiled)
        snprintf(out, size, "tiled:%u,%u,%u,%u,%u%s%s%s", g->bm, g->bn, g->bk, g->tm, g->tn,
                 g->unroll ? ",unroll" : "", g->double_slab ? ",double" : "", g->textures ? ",tex" : "");
    else
        snprintf(out, size, "reg:%u,%u,%u,%u%s", g->wg_x, g->wg_y, g->tm, g->tn, g->rows_x ? ",rows" : "");
}

static const int gemm_traits[] = {TGL_GL_TRAIT_gemm, TGL_GL_TRAIT_gemm_f16, TGL_GL_TRAIT_gemm_medium,
                                   TGL_GL_TRAIT_gemm_small, TGL_GL_TRAIT_gemm_tiny, TGL_GL_TRAIT_gemm_thin};

/* TGL_GEMM: "reg:WX,WY,TM,TN[,rows]" or "tiled:BM,BN,BK,TM,TN[,unroll][,double][,tex]" replaces
 * the table's choice, and any tuning result, for f32 and f16 and every product size (to measure
 * a shape by hand). */
static tgl_status parse_gemm_override(tgl_backend *b, const char *s, tgl_gl_limits *l)
{
    tgl_gl_gemm_config g;
    if (!tgl_gl_gemm_parse(s, l, &g))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_GEMM: '%s' is not reg:WX,WY,TM,TN[,rows] (TM, TN 4 or 8) or "
                         "tiled:BM,BN,BK,TM,TN[,unroll][,double][,tex] (TM, TN, BK multiples of 4; BM*BK and BN*BK multiples of 4 "
                         "invocations) within the device's limits", s);
    l->gemm = l->gemm_f16 = l->gemm_medium = l->gemm_small = l->gemm_tiny = l->gemm_thin = g;
    for (size_t i = 0; i < sizeof gemm_traits / sizeof gemm_traits[0]; i++)
        tgl_gl_profile_mark(l, gemm_traits[i], TGL_GL_FROM_GEMM_ENV);
    return TGL_OK;
}

/* TGL_LIMITS: cuts the limits the device reports to the least the GL 4.3 or the ES 3.1
 * specification allows (their tables of implementation-dependent values), so a machine with a
 * generous driver runs the library as a minimal part would: smaller SSBO windows, fewer storage
 * blocks and image units, less shared memory, smaller workgroups, shorter buffer textures, the
 * coarsest offset alignment. The device profile is then resolved within them. */
static void cut_to_spec(tgl_gl_limits *l, tgl__spec_limits which)
{
    typedef struct spec {
        uint64_t ssbo_block, shared, texels, align;
        uint32_t blocks, invocations, size[3], count, images;
    } spec;
    static const spec gl43 = {(uint64_t)16 << 20, 32768, 65536, 256, 8, 1024, {1024, 1024, 64}, 65535, 8};
    static const spec es31 = {(uint64_t)128 << 20, 16384, 65536, 256, 4, 128, {128, 128, 64}, 65535, 4};
    const spec *m = which == TGL__LIMITS_GL43_MIN ? &gl43 : &es31;
#define CUT(field, value) (l->field = l->field < (value) ? l->field : (value))
    CUT(max_ssbo_block, m->ssbo_block);
    CUT(shared_memory, m->shared);
    CUT(storage_blocks, m->blocks);
    CUT(wg_invocations, m->invocations);
    CUT(image_units, m->images);
    if (l->texture_buffer_texels)
        CUT(texture_buffer_texels, m->texels);
    for (int i = 0; i < 3; i++) {
        CUT(wg_size[i], m->size[i]);
        CUT(wg_count[i], m->count);
    }
#undef CUT
    /* Alignments are maxima in the specifications: the coarsest a device may ask for. */
    l->ssbo_align = l->ssbo_align > m->align ? l->ssbo_align : m->align;
    if (l->texture_align)
        l->texture_align = l->texture_align > m->align ? l->texture_align : m->align;
}

tgl_status tgl_gl_limits_query(tgl_backend *b, tgl_gl_limits *l)
{
    memset(l, 0, sizeof *l);
    l->max_ssbo_block = get_u64(GL_MAX_SHADER_STORAGE_BLOCK_SIZE);
    l->ssbo_align = get_u64(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT);
    l->shared_memory = get_u64(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE);
    uint64_t blocks = get_u64(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS);
    uint64_t bindings = get_u64(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS);
    blocks = blocks < bindings ? blocks : bindings;
    l->storage_blocks = (uint32_t)(blocks < UINT32_MAX ? blocks : UINT32_MAX);
    l->wg_invocations = (uint32_t)get_u64(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS);
    for (GLuint i = 0; i < 3; i++) {
        GLint size = 0, count = 0;
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, i, &size);
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i, &count);
        l->wg_size[i] = size > 0 ? (uint32_t)size : 0;
        /* Some drivers report 2^31-1 as a signed int; keep it as the unsigned count it means. */
        l->wg_count[i] = count > 0 ? (uint32_t)count : 0;
    }
    if (epoxy_has_gl_extension("GL_KHR_shader_subgroup")) {
        GLint size = 0, stages = 0, features = 0;
        glGetIntegerv(GL_SUBGROUP_SIZE_KHR, &size);
        glGetIntegerv(GL_SUBGROUP_SUPPORTED_STAGES_KHR, &stages);
        glGetIntegerv(GL_SUBGROUP_SUPPORTED_FEATURES_KHR, &features);
        if ((stages & GL_COMPUTE_SHADER_BIT) && (features & GL_SUBGROUP_FEATURE_SHUFFLE_BIT_KHR) && size > 0)
            l->subgroup_shuffle = (uint32_t)size;
    }
    l->buffer_storage = !tgl_gl_of(b)->egl.es &&
                        (epoxy_gl_version() >= 44 || epoxy_has_gl_extension("GL_ARB_buffer_storage"));
    /* Buffer textures are core in desktop GL; ES kernels (GLSL ES 3.10) have them through
     * GL_EXT_texture_buffer or GL_OES_texture_buffer, which the ES preamble enables where the
     * compiler has one (gl_source.c). Without either, ES keeps SSBO loads. */
    if (!tgl_gl_of(b)->egl.es || epoxy_has_gl_extension("GL_EXT_texture_buffer") ||
        epoxy_has_gl_extension("GL_OES_texture_buffer")) {
        l->texture_buffer_texels = get_u64(GL_MAX_TEXTURE_BUFFER_SIZE);
        l->texture_align = get_u64(GL_TEXTURE_BUFFER_OFFSET_ALIGNMENT);
        if (!l->texture_align || (l->texture_align & (l->texture_align - 1)))
            l->texture_buffer_texels = 0;
    }
    {
        GLint units = 0, compute = 0;
        glGetIntegerv(GL_MAX_IMAGE_UNITS, &units);
        glGetIntegerv(GL_MAX_COMPUTE_IMAGE_UNIFORMS, &compute);
        l->image_units = (uint32_t)(units < compute ? (units > 0 ? units : 0) : (compute > 0 ? compute : 0));
    }
    tgl_status st = tgl_gl_check(b, "querying device limits");
    if (st)
        return st;
    /* after the check: a driver that refuses the query leaves an error this clears */
    l->memory_bytes = device_memory_bytes();
    if (b->config.limits != TGL__LIMITS_DEVICE)
        cut_to_spec(l, b->config.limits);
    if (!l->ssbo_align || !l->max_ssbo_block || !l->wg_count[0] || !l->wg_count[1] || !l->wg_size[0])
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "no compute shaders: the driver reports zero SSBO or "
                         "workgroup limits");
    if (l->storage_blocks < TGL_GL_KERNEL_STORAGE_BLOCKS)
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "compute shaders may bind %u storage buffers here; the kernels "
                         "need %d (ES 3.1 guarantees 4, GL 4.3 8)", l->storage_blocks, TGL_GL_KERNEL_STORAGE_BLOCKS);
    if ((st = tgl_gl_profile_resolve(b, l, tgl_gl_of(b)->renderer, tgl_gl_of(b)->egl.es)))
        return st;
    if (b->config.gemm[0])
        return parse_gemm_override(b, b->config.gemm, l);
    tgl_gl_tune_load(b, l); /* `tensorgl tune`'s winners for this device, where saved */
    return TGL_OK;
}

void tgl_gl_test_set_limits(tgl_backend *b, uint64_t max_ssbo_block, const tgl_gl_gemm_config *gemm)
{
    tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (max_ssbo_block)
        l->max_ssbo_block = max_ssbo_block;
    if (gemm) {
        l->gemm = *gemm;
        if (!l->texture_buffer_texels)
            l->gemm.textures = 0;
        l->gemm_f16 = l->gemm_medium = l->gemm_small = l->gemm_tiny = l->gemm_thin = l->gemm;
        for (size_t i = 0; i < sizeof gemm_traits / sizeof gemm_traits[0]; i++)
            tgl_gl_profile_mark(l, gemm_traits[i], TGL_GL_FROM_TEST);
    }
}
