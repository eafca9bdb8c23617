/* Device limits, and the workgroup sizes, GEMM tiles and engine choices taken from them and
 * from the renderer table below. Why the table holds what it holds (the runs behind each figure
 * are in the commit history; current figures in docs/performance.md):
 * - Workgroups. llvmpipe runs a group's invocations as 8-wide SIMD coroutines and switches every
 *   one of them at each barrier, so its reducing kernels use a single 8-wide group (softmax
 *   4096x1024: 52 ms at 256, 14.6 ms at 8), while element-wise kernels prefer 256 (add: 2.7 GB/s
 *   at 8, 8.4 at 256). NVIDIA takes 256 for both, and 4 vec4s per invocation of element-wise
 *   kernels (add of 64M floats on the H100: 1950 / 1977 GB/s at 1 / 4). Unknown renderers take
 *   the defaults; every entry is clamped to the device's limits.
 * - GEMM. llvmpipe uses the register-only kernel (no barriers) with 8 x 8 per invocation, reading
 *   A and B through buffer textures: llvmpipe gathers texels, while each SSBO load is a loop over
 *   the SIMD lanes (sgemm 1024^3: 10.6 GFLOP/s with SSBO loads and 4 x 4, 51 with textures and
 *   8 x 8 in 16 x 4 groups). GPUs take the shared-memory tile; on the H100 the best shape tried
 *   at 4096^3 is 128 x 256, BK 16, 16 x 8 per invocation, two slabs, loops unrolled and operands
 *   through buffer textures (44.6 / 44.0 TFLOP/s f32 / f16; 128 x 128 BK 8 41.3, 64 x 128 38.8).
 *   Large tiles starve small products (1024^3: 7.9 TFLOP/s with 128 x 256, 15.7 with 64 x 128),
 *   hence the medium and small tiles, chosen by grid size in gl_gemm.c.
 * - Device-to-device copies. On the H100 glCopyBufferSubData moved 177 GB/s (16M floats) where a
 *   copy kernel reaches memory bandwidth; on llvmpipe glCopyBufferSubData is a memcpy (45 GB/s)
 *   and beats any shader, so it keeps it. Unknown renderers (GPUs) take the kernel.
 * - The memory pool (gl_pool.c) is on for llvmpipe only. GPUs create a buffer per allocation:
 *   carving made the H100's decode steps a few percent slower (the driver synchronizes per buffer
 *   object), and under TGL_POOL=reuse one run of test_attention failed a case by a small error
 *   that no rerun showed again; until that is explained the pool stays off there (its figures
 *   and that case: docs/internals.md). */
#include "gl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GEMM_REG(wx, wy, tm, tn, tex) {0, 0, 0, 0, tm, tn, wx, wy, 1, tex, 0, 0}
#define GEMM_TILED(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 0, 0, 0}
#define GEMM_TILED_DOUBLE(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 0, 1, 1}
#define GEMM_TILED_DOUBLE_TEX(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 1, 1, 1}
static const struct {
    const char *renderer_prefix;
    uint32_t elementwise, reducing, items;
    tgl_gl_gemm_config gemm, gemm_f16;
    tgl_gl_gemm_config gemm_medium, gemm_small; /* f32 and f16 where gemm's tiles make a short grid, or
                                                   few workgroups (gl_gemm.c) */
    int copy_by_glcopy; /* tgl_copy_dtod through glCopyBufferSubData rather than a copy kernel */
    int pool;           /* TGL_GL_POOL_*: freed buffers reused, small allocations carved too (gl_pool.c) */
    double gflops;      /* low estimate of the f32 GEMM rate; 0: LLVMPIPE_GFLOPS_PER_THREAD per thread */
} wg_table[] = {
    {"llvmpipe", 256, 8, 1, GEMM_REG(16, 4, 8, 8, 1), GEMM_REG(16, 4, 8, 8, 1), GEMM_REG(16, 4, 8, 8, 1),
     GEMM_REG(16, 4, 8, 8, 1), 1, TGL_GL_POOL_CARVE, 0},
    {"NVIDIA", 256, 256, 4, GEMM_TILED_DOUBLE_TEX(128, 256, 16, 16, 8), GEMM_TILED_DOUBLE_TEX(128, 256, 16, 16, 8),
     GEMM_TILED_DOUBLE_TEX(128, 128, 8, 8, 8), GEMM_TILED_DOUBLE(64, 128, 16, 8, 4), 0, 0, 2000},
    {"AMD", 256, 256, 1, GEMM_TILED(64, 64, 16, 4, 4), GEMM_TILED(64, 64, 16, 4, 4), GEMM_TILED(64, 64, 16, 4, 4),
     GEMM_TILED(64, 64, 16, 4, 4), 0, 0, 1000},
    {"Mesa Intel", 128, 128, 1, GEMM_TILED(64, 64, 16, 4, 4), GEMM_TILED(64, 64, 16, 4, 4),
     GEMM_TILED(64, 64, 16, 4, 4), GEMM_TILED(64, 64, 16, 4, 4), 0, 0, 100},
};
/* Rates for splitting heavy ops by time (TGL_MAX_DISPATCH_MS), kept low on purpose: too low
 * only costs a few more dispatches, too high lets one run past a watchdog. llvmpipe measured
 * 26 GFLOP/s per thread (sgemm 1024^3, 2 threads); the H100 23,000. Unknown devices: 100. */
#define LLVMPIPE_GFLOPS_PER_THREAD 8.0
#define DEFAULT_GFLOPS 100.0
static const tgl_gl_gemm_config default_gemm = GEMM_TILED(64, 64, 16, 4, 4);
static const tgl_gl_gemm_config fallback_gemm = GEMM_REG(8, 8, 4, 4, 0);

const tgl_gl_gemm_config *tgl_gl_gemm_table_entry(size_t i)
{
    size_t n = sizeof wg_table / sizeof wg_table[0];
    if (i == 0)
        return &fallback_gemm;
    if (i == 1)
        return &default_gemm;
    i -= 2;
    if (i >= 4 * n)
        return NULL;
    switch (i % 4) {
    case 0: return &wg_table[i / 4].gemm;
    case 1: return &wg_table[i / 4].gemm_f16;
    case 2: return &wg_table[i / 4].gemm_medium;
    default: return &wg_table[i / 4].gemm_small;
    }
}
#define DEFAULT_WG_SIZE 128

static uint32_t clamp_pow2(uint32_t size, const tgl_gl_limits *l)
{
    if (size > l->wg_size[0])
        size = l->wg_size[0];
    if (size > l->wg_invocations)
        size = l->wg_invocations;
    /* Tree reductions halve the group each step: keep it a power of two. */
    uint32_t pow2 = 1;
    while (pow2 * 2 <= size)
        pow2 *= 2;
    return pow2;
}

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

static int tile_fits(const tgl_gl_gemm_config *g, const tgl_gl_limits *l)
{
    if (!g->tm || !g->tn || g->tm % 4 || g->tn % 4 || !g->bk || g->bk % 4 || g->bm % g->tm || g->bn % g->tn)
        return 0;
    uint32_t threads = (g->bm / g->tm) * (g->bn / g->tn);
    return threads <= l->wg_invocations && threads <= l->wg_size[0] &&
           tgl_gl_gemm_shared_bytes(g) <= l->shared_memory &&
           (g->bm * g->bk) % (4 * threads) == 0 && (g->bn * g->bk) % (4 * threads) == 0;
}

int tgl_gl_gemm_parse(const char *s, const tgl_gl_limits *l, tgl_gl_gemm_config *out)
{
    unsigned v[5];
    char tail;
    int used = 0;
    tgl_gl_gemm_config g = {0};
    if (sscanf(s, "reg:%u,%u,%u,%u%c", &v[0], &v[1], &v[2], &v[3], &tail) == 4 && v[0] && v[1] &&
        v[0] * v[1] <= l->wg_invocations && v[0] <= l->wg_size[0] && v[1] <= l->wg_size[1] &&
        (v[2] == 4 || v[2] == 8) && (v[3] == 4 || v[3] == 8)) {
        g = (tgl_gl_gemm_config){0, 0, 0, 0, v[2], v[3], v[0], v[1], l->gemm.matvec_row_per_invocation,
                                 l->texture_buffer_texels > 0, 0, 0};
    } else if (sscanf(s, "tiled:%u,%u,%u,%u,%u%n", &v[0], &v[1], &v[2], &v[3], &v[4], &used) == 5 && used > 0) {
        /* then any of ",unroll", ",double" and ",tex", each at most once */
        int flags[3] = {0, 0, 0};
        static const char *const names[3] = {",unroll", ",double", ",tex"};
        for (const char *rest = s + used; *rest;) {
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
                                 flags[2] && l->texture_buffer_texels > 0, flags[0], flags[1]};
        if (!tile_fits(&g, l))
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
        snprintf(out, size, "reg:%u,%u,%u,%u", g->wg_x, g->wg_y, g->tm, g->tn);
}

/* TGL_GEMM: "reg:WX,WY,TM,TN" or "tiled:BM,BN,BK,TM,TN[,unroll][,double][,tex]" replaces the table's choice, and any
 * tuning result, for f32 and f16 (to measure a shape by hand). */
static tgl_status parse_gemm_override(tgl_backend *b, const char *s, tgl_gl_limits *l)
{
    tgl_gl_gemm_config g;
    if (!tgl_gl_gemm_parse(s, l, &g))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_GEMM: '%s' is not reg:WX,WY,TM,TN (TM, TN 4 or 8) or "
                         "tiled:BM,BN,BK,TM,TN[,unroll][,double][,tex] (TM, TN, BK multiples of 4; BM*BK and BN*BK multiples of 4 "
                         "invocations) within the device's limits", s);
    l->gemm = l->gemm_f16 = l->gemm_medium = l->gemm_small = g;
    return TGL_OK;
}

/* Floats per SIMD vector of llvmpipe, from its renderer string ("llvmpipe (LLVM 15.0.6, 256
 * bits)"); 0 when it does not say. */
static uint32_t simd_lanes(const char *renderer)
{
    const char *p = strstr(renderer, " bits)");
    while (p && p > renderer && p[-1] >= '0' && p[-1] <= '9')
        p--;
    unsigned bits = p ? (unsigned)strtoul(p, NULL, 10) : 0;
    return bits >= 128 && bits <= 1024 && bits % 32 == 0 ? bits / 32 : 0;
}

static void pick_workgroup_sizes(const char *renderer, const tgl__config *cfg, tgl_gl_limits *l)
{
    const int llvmpipe = !strncmp(renderer, "llvmpipe", 8);
    uint32_t ew = DEFAULT_WG_SIZE, red = DEFAULT_WG_SIZE, items = 1;
    int glcopy = 0, pool = 0;
    double gflops = DEFAULT_GFLOPS;
    tgl_gl_gemm_config gemm = default_gemm, gemm_f16 = default_gemm, gemm_medium = default_gemm,
                       gemm_small = default_gemm;
    for (size_t i = 0; i < sizeof wg_table / sizeof wg_table[0]; i++) {
        if (!strncmp(renderer, wg_table[i].renderer_prefix, strlen(wg_table[i].renderer_prefix))) {
            ew = wg_table[i].elementwise;
            red = wg_table[i].reducing;
            items = wg_table[i].items;
            gemm = wg_table[i].gemm;
            gemm_f16 = wg_table[i].gemm_f16;
            gemm_medium = wg_table[i].gemm_medium;
            gemm_small = wg_table[i].gemm_small;
            glcopy = wg_table[i].copy_by_glcopy;
            pool = wg_table[i].pool;
            gflops = wg_table[i].gflops;
        }
    }
    /* A tile the device cannot hold (invocations, shared memory) falls back to the register
     * kernel, whose 8 x 8 groups every GL 4.3 device runs. */
    if (gemm.tiled && !tile_fits(&gemm, l))
        gemm = fallback_gemm;
    if (gemm_f16.tiled && !tile_fits(&gemm_f16, l))
        gemm_f16 = fallback_gemm;
    if (gemm_medium.tiled && !tile_fits(&gemm_medium, l))
        gemm_medium = fallback_gemm;
    if (gemm_small.tiled && !tile_fits(&gemm_small, l))
        gemm_small = fallback_gemm;
    if (!l->texture_buffer_texels)
        gemm.textures = gemm_f16.textures = gemm_medium.textures = gemm_small.textures = 0;
    /* Where GEMM's register kernel gathers texels (llvmpipe), element-wise inputs do too: add
     * of 4M floats 8.9 -> 14.9 GB/s there (the stores stay SSBO scatters). GPUs whose tiles read
     * through textures (NVIDIA) keep SSBO loads elsewhere. */
    l->elementwise_textures = !gemm.tiled && gemm.textures;
    /* ... as read-only images (imageLoad), where the device has an image unit for each
     * texture binding: llvmpipe 22.3 builds each texelFetch of a float buffer texture as a call
     * to a generated sampling function and each imageLoad inline (common/texel.glsl). */
    l->elementwise_images = llvmpipe && l->elementwise_textures && l->image_units >= TGL_GL_MAX_TEXTURE_BINDINGS;
    /* ... and store pairs of vec4s as dvec4s (common/wide_store.glsl; doubles are core in
     * desktop GL 4.0): llvmpipe, 2 cores, `tensorgl bench ops`, alternated runs:
     * add of 4M floats 3.2-4.6 -> 2.3-2.8 ms, softmax 4096x1024 5.2-5.4 -> 4.5-4.6 ms. */
    l->wide_stores = l->elementwise_textures && epoxy_is_desktop_gl();
    /* ... and row-wise ops give each row one invocation, as its GEMM gives each invocation a
     * register block: no barriers (softmax 4096x4096 there: see docs/performance.md). */
    l->rows_per_invocation = l->elementwise_textures;
    /* ... except softmax and log-softmax of rows of up to 1024 floats, which take one SIMD
     * vector (8 lanes at llvmpipe's 256 bits) per row, hold it in registers and read it once,
     * combining the lanes with readInvocationARB (no barrier): where the rows are stored a pair
     * of vec4s at a time. 2 cores, `tensorgl bench ops`, alternated: 4096 x 1024
     * 3.8-4.0 -> 2.8-3.0 ms; 8192 x 512 3.7-3.9 -> 2.8-2.9. Rows of 2048 in 64 vec4s per lane
     * ran slower than one invocation per row (5.3 against 3.8 ms: spilled), as did 16, 32 and
     * 64 lanes per row with barriers (4.6, 8.6, 24 ms at 1024). The lanes are llvmpipe's
     * SIMD width, which its renderer string gives ("256 bits"), its subgroup size; the kernel
     * is GLSL 4.50 (see its header). */
    l->row_lanes = llvmpipe && l->rows_per_invocation && l->wide_stores && epoxy_gl_version() >= 45 &&
                   epoxy_has_gl_extension("GL_ARB_shader_ballot") ? simd_lanes(renderer) : 0u;
    /* Only the widths llvmpipe builds (128, 256 and, with LP_NATIVE_VECTOR_WIDTH=512 on AVX-512
     * CPUs, 512 bits): the variants tgl_gl_rows_variants lists, which `make check` validates. */
    if (l->row_lanes != 4 && l->row_lanes != 8 && l->row_lanes != 16)
        l->row_lanes = 0;
    /* Transposes in tiles: in shared memory where GEMM stages its tiles there (barriers are
     * cheap), else as register blocks per invocation where inputs are read as texels (llvmpipe). */
    l->transpose = gemm.tiled ? TGL_GL_TRANSPOSE_TILES
                 : l->elementwise_textures ? TGL_GL_TRANSPOSE_BLOCK4 : TGL_GL_TRANSPOSE_OFF;
    /* gallivm counts every loop back-edge of an invocation against one limit of 65535 and then
     * leaves the loops, silently (a softmax row of 65536 walked by one invocation came out
     * wrong); kernels that walk long ranges in one invocation check this. */
    l->loop_limit = llvmpipe ? 65535u : 0u;
    /* Rows a vec4 at a time: on llvmpipe a quarter of the fetches and loop trips (sum of 16M
     * floats 12.3 -> 3.2 ms, softmax 4096x1024 11.0 -> 4.9 ms); on the H100 it gained nothing
     * and cost softmax 5% (0.0614 -> 0.0645 ms at 4096x4096), so GPUs keep the scalar steps
     * there; reduce.comp's sums and maxima take vec4s everywhere (gl_reduce.c). */
    l->vec4_lines = llvmpipe;
    /* Reductions with few outputs split their lines into about this many workgroups (then a
     * pass over the partials). H100, sum of 16M floats (`tensorgl bench --ops reduce_sum`), by
     * target: 264 0.049 ms, 512 0.0374, 1024 0.0351, 2048 0.0353, 4096 0.0371 (a
     * float per step); since reductions read vec4s on GPUs too (gl_reduce.c), two
     * alternated runs: 512 0.0342, 1024 0.0345, 2048 0.0296, 4096 0.0298-0.0299, 8192 (chunks of
     * 2048) 0.0380; floats per step: 1024 0.0352, 2048 0.0304, 4096 0.0324. llvmpipe, with a
     * workgroup per core at a time, gains nothing past 512 (1.96-2.11 ms against 2.08-3.47). */
    l->reduce_groups = llvmpipe ? 512u : 2048u;
    /* Reductions over a strided axis (reduce_cols.comp) cut their lines into chunks, one
     * invocation each. H100, `tensorgl bench --ops reduce_sum_cols` (sums over axis 0), by
     * target invocations and shortest chunk: 64K, 64 (the old constants) 0.0545 ms at 4096 x
     * 4096 and 0.0153 at 1024 x 1024; 128K 0.0448; 256K 0.0436; 512K 0.0436-0.0462; chunks of
     * 32 or 16 rows 0.0139 and 0.0136 at 1024 x 1024; reading vec4s, two alternated runs at 4096 x
     * 4096: 256K 0.0433-0.0434, 512K 0.0391-0.0392 (1024 x 1024 unchanged, 0.0138), 1M
     * 0.0455; vec4s of four columns per invocation 0.0562 at 1M. llvmpipe keeps 64K and 64: the
     * GPU values gave nothing there (three alternated runs, 1024 x 1024 0.68-0.88 ms against
     * 0.86-0.88; 4096 x 4096 5.5-6.7 against 5.8-6.3). */
    l->cols_invocations = llvmpipe ? 1u << 16 : 1u << 19;
    l->cols_min_chunk = llvmpipe ? 64u : 16u;
    /* Streaming ops over 48 MiB or more turn round from one to the next (glsl/common/sweep.glsl).
     * H100, a one-off chain of 50 calls: add of 64M floats 1.97 -> 2.72 TB/s; the
     * standard set's 16M-float element-wise ops 5-14% faster, its 4096² row-wise ops 12%; below the L2's size turning round lost (add of
     * 3M floats, 36 MB, 0.0109 -> 0.0125 ms; 4M, 48 MB, already gained: 0.0221 -> 0.0165).
     * llvmpipe keeps walking forward: the same chain there gained nothing (a ping-pong of
     * negations over 1-16M floats ran 1-2.6x slower in one run of two, the same in the other). */
    l->sweep_bytes = llvmpipe ? 0 : (uint64_t)48 << 20;
    /* Casts take four elements per invocation (16-byte accesses on the f32 side) from this many
     * elements on. H100, a one-off chain of 50 casts, ms per cast at 64K / 1M / 4M /
     * 16M elements, one per invocation against four: to f16 0.0061-0.0063 / 0.0076 /
     * 0.0137-0.0138 / 0.0449-0.0459 against 0.0065-0.0066 / 0.0070 / 0.0108-0.0109 / 0.0344;
     * to f32 0.0056-0.0057 / 0.0078-0.0079 / 0.0159 / 0.0571-0.0581 against 0.0058-0.0061 /
     * 0.0067 / 0.0104 / 0.0357. llvmpipe gains at every size of the standard set (to f16, 64K /
     * 1M / 16M: 0.21-0.31 / 3.0-4.0 / 47.5-47.9 ms against 0.11 / 1.27-1.35 / 24.0-24.7). */
    l->cast_vec4_min = llvmpipe ? 0 : (uint64_t)1 << 20;
    /* Flash attention whose grid has fewer workgroups than this cuts its keys into chunks
     * (gl_attention.c, flash_chunk_keys): the H100's 132 multiprocessors (GL reports no count;
     * other GPUs take the same figure). llvmpipe runs flash_reg, which has its own rule. */
    l->attention_fill = llvmpipe ? 0 : 132u;
    /* Keys per shared-memory block of flash.comp, which llvmpipe runs in its ES contexts (no
     * buffer textures for flash_reg there) and where tests force it: 8 there. ES, 2 cores,
     * `TGL_API=gles tensorgl bench attention --shape 1,8,512,64`, two runs: 150-199
     * ms with 8, 150-248 with 16, 320-357 with 32; and LLVM compiles the 64-dim variant in
     * seconds rather than minutes (the whole bench with the shader caches off: 8.3 / 28 / 90 s;
     * in test_attention one dispatch of the 32-key variant took 177-218 s). */
    l->flash_block_keys = llvmpipe ? 8u : 32u;
    /* TGL_PROFILE_TIMER=1 forces the queries on (to compare them with wall time), 0 off. */
    l->timer_queries = cfg->profile_timer >= 0 ? cfg->profile_timer : !llvmpipe;
    l->gemm = gemm;
    l->gemm_f16 = gemm_f16;
    l->gemm_medium = gemm_medium;
    l->gemm_small = gemm_small;
    l->items_per_invocation = items;
    l->copy_kernel = !glcopy;
    /* On the H100 (driver 580) an update by glBufferSubData was sometimes lost when work on the
     * same buffer followed it quickly: tests/test_ordering.c failed 13 of 24 runs with 8 copies
     * at once, and 0 of 24 with a wait after each upload. So on GPUs an upload waits for its
     * update to land; llvmpipe's glBufferSubData is a memcpy done before it returns. */
    l->upload_waits = !llvmpipe;
    /* GPUs never map a tensor's buffer: NVIDIA's driver moves mapped ones to system memory
     * (gl_buffers.c). llvmpipe's buffers are host memory whichever way. */
    l->transfer_staging = !llvmpipe;
    /* One thread's memcpy is what bounds a large transfer (the H100 host's: 9.2-11.2 GB/s): 256
     * MiB on an H200 machine of 16 cores (`tensorgl bench engine --transfer-mib 256`,
     * two runs each) moved htod 8.3-8.9 / 12.3-12.6 / 20.0-20.5 / 20.4-20.6 GB/s on 1 / 2 / 4 / 8
     * threads, dtoh 7.0-7.3 / 9.6-10.2 / 12.0-12.3 / 9.9-10.8; on the H100, 4 threads against 1,
     * alternated: htod 16.7-18.5 against 7.7-8.5, dtoh 11.0-11.8 against 6.0-7.4. llvmpipe's
     * mapped transfers on the 2-core VM: htod 14.7-18.1 -> 31.9-33.5 GB/s, dtoh 13.2-16.3 ->
     * 29.4-30.1 on 2 threads. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    l->transfer_threads = cores >= 4 ? 4u : cores > 1 ? (unsigned)cores : 1u;
    /* TGL_POOL=off|reuse|carve overrides the table (to measure a device, or to rule the pool out). */
    if (cfg->pool != TGL__POOL_DEVICE)
        pool = cfg->pool == TGL__POOL_OFF ? TGL_GL_POOL_OFF : cfg->pool == TGL__POOL_REUSE ? TGL_GL_POOL_REUSE
                                                                                          : TGL_GL_POOL_CARVE;
    l->pool = pool;
    if (gflops == 0.0) { /* llvmpipe: one rasterizer thread per core, or LP_NUM_THREADS */
        const char *lp = getenv("LP_NUM_THREADS");
        long threads = lp && *lp ? atol(lp) : sysconf(_SC_NPROCESSORS_ONLN);
        gflops = LLVMPIPE_GFLOPS_PER_THREAD * (double)(threads > 1 ? threads : 1);
    }
    l->gflops_floor = gflops;
    l->workgroup_size = clamp_pow2(ew, l);
    l->reduce_workgroup_size = clamp_pow2(red, l);
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
    if (!l->ssbo_align || !l->max_ssbo_block || !l->wg_count[0] || !l->wg_count[1] || !l->wg_size[0])
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "no compute shaders: the driver reports zero SSBO or "
                         "workgroup limits");
    if (l->storage_blocks < TGL_GL_KERNEL_STORAGE_BLOCKS)
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "compute shaders may bind %u storage buffers here; the kernels "
                         "need %d (ES 3.1 guarantees 4, GL 4.3 8)", l->storage_blocks, TGL_GL_KERNEL_STORAGE_BLOCKS);
    pick_workgroup_sizes(tgl_gl_of(b)->renderer, &b->config, l);
    if (tgl_gl_of(b)->egl.es)
        l->timer_queries = 0; /* GL_TIME_ELAPSED is an extension there (EXT_disjoint_timer_query) */
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
        l->gemm_f16 = l->gemm_medium = l->gemm_small = l->gemm;
    }
}
