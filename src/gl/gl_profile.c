/* Device profiles: every choice the GL op drivers make per device is a named trait of
 * tgl_gl_limits, resolved once at tgl_open (tgl_gl_profile_resolve) in this order:
 *   1. a named profile: the one TGL_DEVICE_PROFILE names, else the first whose renderer prefix
 *      the device's renderer starts with, else generic-gpu;
 *   2. TGL_DEVICE_PROFILE's trait=value overrides;
 *   3. what the device decides whatever the profile: the limits it reports (a tile it cannot
 *      hold, no buffer textures or image units, ES), the driver's own facts (llvmpipe's loop
 *      limit, its SIMD width, rasterizer threads), and counts asked of it (multiprocessors);
 *   4. TGL_GEMM and `tensorgl tune`'s saved GEMM shapes (gl_limits.c, gl_tune.c).
 * Each trait keeps where its value came from, which `tensorgl info --profile` prints. An
 * override the device cannot honour fails tgl_open rather than being dropped.
 *
 * Why the profiles hold what they hold (the runs behind each figure are in the commit history;
 * current figures in docs/performance.md):
 * - llvmpipe runs a workgroup's invocations as 8-wide SIMD coroutines and switches every one of
 *   them at each barrier, so its reducing kernels use a single 8-wide group (softmax 4096x1024:
 *   52 ms at 256, 14.6 ms at 8) while element-wise kernels prefer 256; it gathers texels where
 *   each SSBO load is a loop over the SIMD lanes, so its inputs are read as buffer textures (add
 *   of 4M floats 8.9 -> 14.9 GB/s; sgemm 1024^3 10.6 GFLOP/s with SSBO loads and 4 x 4, 51 with
 *   textures and 8 x 8 through the register kernel), as images where it has the units (it
 *   builds each texelFetch as a call, each imageLoad inline), and rows and GEMM blocks go one
 *   per invocation, without barriers. glCopyBufferSubData is a memcpy there (45 GB/s) and
 *   beats any shader; its buffers are host memory, so transfers map them.
 * - GPUs take the shared-memory tiles and SSBO loads. NVIDIA: 256-wide groups and 4 vec4s per
 *   invocation of element-wise kernels (add of 64M floats on the H100: 1950 / 1977 GB/s at 1 / 4);
 *   GEMM 128 x 256, BK 16, 16 x 8 per invocation, two slabs, unrolled, operands through buffer
 *   textures (4096^3: 44.6 / 44.0 TFLOP/s f32 / f16, the best shape tried), with a medium and a
 *   small tile for short grids (1024^3: 7.9 TFLOP/s with 128 x 256, 15.7 with 64 x 128). On the
 *   H100 glCopyBufferSubData moved 177 GB/s where a copy kernel reaches memory bandwidth, the
 *   driver may write a glBufferSubData from the host at once while earlier commands writing the
 *   same buffer are still queued (they then land on top: docs/internals.md, "Transfers"), and
 *   mapped buffers moved to system memory, so GPUs copy with a kernel, count each upload as
 *   queued work on its buffer (the next transfer into or from it waits) and transfer through
 *   staging buffers.
 * - The memory pool (gl_pool.c): llvmpipe carves small allocations from blocks; GPUs reuse freed
 *   buffers but do not carve (carving made the H100's decode steps a few percent slower: the
 *   driver synchronizes per buffer object). H200, bench engine, alternated runs: an eager op that
 *   allocates its output 10.8-12.0 us with reuse against 12.0-13.0 without, alloc/free pairs
 *   0.75-0.83 us against 2.9-3.8.
 * - generic-gpu is what a GPU the table does not know gets: the GPU kernels at the defaults
 *   every GL 4.3 / ES 3.1 device runs (128-wide groups, 64 x 64 GEMM tiles), and its own
 *   multiprocessor count where the driver tells it (NVIDIA's GL_SM_COUNT_NV). Named explicitly, it runs those kernels on
 *   llvmpipe too, which is how CI tests the code GPUs execute. */
#include "gl_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GEMM_REG(wx, wy, tm, tn, tex) {0, 0, 0, 0, tm, tn, wx, wy, 1, tex, 0, 0, 0}
/* The register kernel with its invocations' x along C's rows (llvmpipe's SIMD lanes run along x). */
#define GEMM_REG_ROWS(wx, wy, tm, tn, tex) {0, 0, 0, 0, tm, tn, wx, wy, 1, tex, 0, 0, 1}
#define GEMM_TILED(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 0, 0, 0, 0}
#define GEMM_TILED_DOUBLE(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 0, 1, 1, 0}
#define GEMM_TILED_DOUBLE_TEX(bm, bn, bk, tm, tn) {1, bm, bn, bk, tm, tn, 8, 8, 0, 1, 1, 1, 0}

/* A trait value the device supplies in step 3 (rasterizer threads, multiprocessors, SIMD width). */
#define FROM_DEVICE UINT32_MAX
/* Multiprocessors of a GPU that does not say (GL has no query; NVIDIA's shader builtin aside). */
#define DEFAULT_COMPUTE_UNITS 16u
/* Rates for splitting heavy ops by time (TGL_MAX_DISPATCH_MS), kept low on purpose: too low only
 * costs a few more dispatches, too high lets one run past a watchdog. llvmpipe measured 26
 * GFLOP/s per thread (sgemm 1024^3, 2 threads); the H100 23,000. */
#define LLVMPIPE_GFLOPS_PER_THREAD 8.0

/* What every GPU profile shares (step 1 values; see the comment at the top and at each field of
 * tgl_gl_limits). */
#define GPU_TRAITS                                                                                  \
    .texel_inputs = 0, .image_inputs = 0, .wide_stores = 0, .rows_per_invocation = 0, .row_lanes = 0, \
    .vec4_lines = 0, .transpose = TGL_GL_TRANSPOSE_TILES, .reduce_groups = 2048,                    \
    .cols_invocations = 1u << 19, .cols_min_chunk = 16, .scan_items = 8, .scan_staged = 1,          \
    .radix_min = 1u << 22, /* H200: the network to 4M (1M 0.49 ms, radix 0.61), radix past (16M 6.7 -> 4.5) */ \
    /* H100, a 16M f32 sort: 4.81 ms direct, 4.76 staged, 6.46 with 8-bit digits (gl_sort.c) */ \
    .radix_items = 8, .radix_staged = 0, .radix_bits = 4,                                           \
    .sweep_bytes = (uint64_t)48 << 20,                                                             \
    /* H200, a 16M f32 scatter_add (320 MB of temp words): windows of 64 / 128 / 192 MB 2.4 / 2.1 / \
     * 6.2 ms, the whole 14.7; smaller ones re-read the index more (16 MB 5.5 ms) */              \
    .scatter_window_bytes = (uint64_t)64 << 20,                                                    \
    .cast_vec4_min = (uint64_t)1 << 20, .attention_reg = 0, .conv_im2col = 0, .flash_block_keys = 32, \
    .conv_winograd_min_tiles = 0,                                                                  \
    /* H200, f16 matvec 4096 x 11008: 51.8 us through the bit-exact conversion, 27.6 unpacked */  \
    .weight_unpack = 1,                                                                            \
    .attention_fill = FROM_DEVICE, .compute_units = FROM_DEVICE, .copy_kernel = 1, .upload_waits = 1, .transfer_staging = 1,       \
    .readback_mapped = 1, .transfer_threads = FROM_DEVICE, .pool = TGL_GL_POOL_REUSE, .timer_queries = 1, \
    .gemm_thin = GEMM_REG(8, 8, 4, 4, 0) /* the register kernel thin products take (gl_gemm.c) */

static const struct named_profile {
    const char *name;
    const char *renderer_prefix; /* NULL: only by name */
    tgl_gl_limits t;             /* its traits (the limits' other fields unused) */
} profiles[] = {
    {"llvmpipe", "llvmpipe",
     {.workgroup_size = 256, .reduce_workgroup_size = 8, .items_per_invocation = 1,
      .gemm = GEMM_REG(16, 4, 8, 8, 1), .gemm_f16 = GEMM_REG(16, 4, 8, 8, 1), .gemm_medium = GEMM_REG(16, 4, 8, 8, 1),
      .gemm_small = GEMM_REG(16, 4, 8, 8, 1), .gemm_tiny = GEMM_REG(16, 4, 8, 8, 1),
      /* Thin products: 16 x 4 invocations with x along the rows, 4 x 4 of C each, so a product 4
       * columns wide fills every SIMD lane, where gemm's x along 128 columns left 1 lane in 8
       * working (Winograd's 16 products of 512 x 4 x 512: ResNet's 512 channels at 2x2, batch 2) */
      .gemm_thin = GEMM_REG_ROWS(16, 4, 4, 4, 1), .texel_inputs = 1, .image_inputs = 1, .wide_stores = 1,
      .rows_per_invocation = 1, .row_lanes = FROM_DEVICE, .vec4_lines = 1, .transpose = TGL_GL_TRANSPOSE_BLOCK4,
      .reduce_groups = 512, .cols_invocations = 1u << 16, .cols_min_chunk = 64, .sweep_bytes = 0,
      .scatter_window_bytes = 0,
      .scan_items = 32, /* 4x fewer barriers than 8: a 16M cumsum 139 -> 94 ms (2 cores) */
      .scan_staged = 0, /* every SSBO access is a loop over the lanes anyway: staging 99 -> 190 ms */
      .scan_one_pass = 0, /* (tests/ops/test_scan.c turns it on) */
      .radix_min = 4096, .radix_items = 32, /* radix from 4096: 16K 10.8 -> 4.9 ms, 1M 600 -> 150 ms */
      .radix_staged = 0, /* its register arrays held in memory: a 1M sort 192-216 -> 834-845 ms staged */
      .radix_bits = 4, /* 8-bit digits: a 1M sort 172-225 ms against 189-192, no clear win */
      .cast_vec4_min = 0, .weight_unpack = 0 /* 6-10% slower unpacked */, .attention_reg = 1, .flash_block_keys = 8, .attention_fill = 0,
      .conv_im2col = 1, /* 64 -> 64 channels, 3x3 at 56x56: the direct kernel 8.8 GFLOP/s, GEMM 41 */
      /* F(2x2): the 56x56 layer, batch 1: 12-16 ms against im2col's 24-26. F(4x4) where a batch
       * has 64 or more of its tiles, batch 2 (rows of V and M padded to 4): 64 at 56x56 11.3 ms
       * against F(2x2)'s 13.3, 128 at 28x28 (98 tiles) 6.7 against 9.7; 256 at 14x14 (32) 13.4
       * against 8.7, 512 at 7x7 (8) 35 against 18 */
      .conv_winograd = 4, .conv_winograd_f4_tiles = 64,
      /* Fewer 2x2 tiles than 16 in a batch take im2col (thin GEMMs, gemm_thin), batch 2: 512
       * channels at 2x2 (2 tiles) 4.8-5.0 ms against Winograd's 12.5-13.1, 256 at 4x4 (8) 2.4-2.5
       * against 4.4-5.0; at 16 (512 at 7x7, batch 1) the two within the VM's noise */
      .conv_winograd_min_tiles = 16,
      .compute_units = FROM_DEVICE,
      .copy_kernel = 0, .upload_waits = 0, .transfer_staging = 0, .readback_mapped = 0, .transfer_threads = FROM_DEVICE,
      .pool = TGL_GL_POOL_CARVE, .timer_queries = 0, .gflops_floor = 0.0 /* per thread */}},
    {"nvidia", "NVIDIA",
     {.workgroup_size = 256, .reduce_workgroup_size = 256, .items_per_invocation = 4,
      .gemm = GEMM_TILED_DOUBLE_TEX(128, 256, 16, 16, 8), .gemm_f16 = GEMM_TILED_DOUBLE_TEX(128, 256, 16, 16, 8),
      .gemm_medium = GEMM_TILED_DOUBLE_TEX(128, 128, 8, 8, 8), .gemm_small = GEMM_TILED_DOUBLE(64, 128, 16, 8, 4),
      /* H100, us (small tile -> tiny): 128^3 15.0 -> 9.6, 512^3 28.6 -> 19.8 (f16 40.3 -> 20.8), 128 x
       * 3072 x 768 47.0 -> 45.8 (gelu 59.7 -> 52.5); but 128 x 11008 x 4096 (172 small tiles)
       * 0.56 -> 0.68 ms, so only grids under half a wave of small tiles take it */
      .gemm_tiny = GEMM_TILED_DOUBLE(32, 64, 16, 4, 4),
      GPU_TRAITS, .gflops_floor = 2000,
      /* H100, batch 32 of ResNet's 3x3 layers, ms (tiled implicit GEMM -> F(2x2) -> F(4x4), cuDNN):
       * 64 ch at 56x56 (6272 4x4 tiles) 0.342 -> 0.251 -> 0.193, 0.254; 128 at 28x28 (1568) 0.331
       * -> 0.210 -> 0.141, 0.133; 256 at 14x14 (512) 0.333 -> 0.154 -> 0.140, 0.249; 512 at 7x7
       * (128) 0.402 -> 0.147 -> 0.160, 0.330: F(4x4) from 256 tiles */
      .conv_winograd = 4, .conv_winograd_f4_tiles = 256,
      /* H100, one pass against two (tgl_cumsum along lines of up to 512 chunks): chunks of at
       * most 2 tiles 0.73-0.96x the time; of 4, 0.79-1.11x; of 8, 1.35-1.41x (their registers cut
       * the workgroups per multiprocessor) */
      .scan_one_pass = 2}},
    {"amd", "AMD",
     {.workgroup_size = 256, .reduce_workgroup_size = 256, .items_per_invocation = 1,
      .gemm = GEMM_TILED(64, 64, 16, 4, 4), .gemm_f16 = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_medium = GEMM_TILED(64, 64, 16, 4, 4), .gemm_small = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_tiny = GEMM_TILED(64, 64, 16, 4, 4), GPU_TRAITS,
      .conv_winograd = 2, .conv_winograd_f4_tiles = 0, .gflops_floor = 1000}},
    {"intel", "Mesa Intel",
     {.workgroup_size = 128, .reduce_workgroup_size = 128, .items_per_invocation = 1,
      .gemm = GEMM_TILED(64, 64, 16, 4, 4), .gemm_f16 = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_medium = GEMM_TILED(64, 64, 16, 4, 4), .gemm_small = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_tiny = GEMM_TILED(64, 64, 16, 4, 4), GPU_TRAITS,
      .conv_winograd = 2, .conv_winograd_f4_tiles = 0, .gflops_floor = 100}},
    {"generic-gpu", NULL,
     {.workgroup_size = 128, .reduce_workgroup_size = 128, .items_per_invocation = 1,
      .gemm = GEMM_TILED(64, 64, 16, 4, 4), .gemm_f16 = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_medium = GEMM_TILED(64, 64, 16, 4, 4), .gemm_small = GEMM_TILED(64, 64, 16, 4, 4),
      .gemm_tiny = GEMM_TILED(64, 64, 16, 4, 4), GPU_TRAITS,
      .conv_winograd = 2, .conv_winograd_f4_tiles = 0, .gflops_floor = 100}},
};
#define N_PROFILES (sizeof profiles / sizeof profiles[0])
#define GENERIC (&profiles[N_PROFILES - 1])

/* The register kernel's 8 x 8 groups, which every GL 4.3 / ES 3.1 device runs: what a tile the
 * device cannot hold falls back to. */
static const tgl_gl_gemm_config fallback_gemm = GEMM_REG(8, 8, 4, 4, 0);

const tgl_gl_gemm_config *tgl_gl_gemm_table_entry(size_t i)
{
    if (i == 0)
        return &fallback_gemm;
    i -= 1;
    if (i >= 6 * N_PROFILES)
        return NULL;
    const tgl_gl_limits *t = &profiles[i / 6].t;
    switch (i % 6) {
    case 0: return &t->gemm;
    case 1: return &t->gemm_f16;
    case 2: return &t->gemm_medium;
    case 3: return &t->gemm_small;
    case 4: return &t->gemm_tiny;
    default: return &t->gemm_thin;
    }
}

/* ---- the trait list ---- */

/* What a value of each kind looks like, for messages; GEMM values contain commas. */
#define EXPECT_U32 "an integer below 2^32 - 1"
#define EXPECT_U64 "an integer"
#define EXPECT_FLAG "0 or 1"
#define EXPECT_WINOGRAD "0 (off), 2 or 4"
#define EXPECT_F64 "a positive number"
#define EXPECT_POOL "off, reuse or carve"
#define EXPECT_TRANSPOSE "gather, tiles or block4"
#define EXPECT_GEMM "reg:WX,WY,TM,TN or tiled:BM,BN,BK,TM,TN[,unroll][,double][,tex] within the device's limits"
#define COMMAS_U32 0
#define COMMAS_U64 0
#define COMMAS_FLAG 0
#define COMMAS_WINOGRAD 0
#define COMMAS_F64 0
#define COMMAS_POOL 0
#define COMMAS_TRANSPOSE 0
#define COMMAS_GEMM 1

static const struct {
    const char *name, *help, *expect;
    int commas; /* the value may hold commas (TGL_DEVICE_PROFILE items run on through them) */
} traits[] = {
#define TRAIT_ROW(name, kind, help) {#name, help, EXPECT_##kind, COMMAS_##kind},
    TGL_GL_TRAITS(TRAIT_ROW)
#undef TRAIT_ROW
};

static const char *const source_names[] = {"profile", "default", "device limit", "device query", "override",
                                           "TGL_GEMM", "tensorgl tune", "test"};

static const char *const pool_names[] = {"off", "reuse", "carve"};
static const char *const transpose_names[] = {"gather", "tiles", "block4"};

static void copy_traits(tgl_gl_limits *l, const tgl_gl_limits *from)
{
#define COPY(name, kind, help) l->name = from->name;
    TGL_GL_TRAITS(COPY)
#undef COPY
}

/* ---- values as text ---- */

static int name_index(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return (int)i;
    return -1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return 0;
    *out = v;
    return 1;
}

static int parse_U32(const char *s, const tgl_gl_limits *l, uint32_t *out)
{
    (void)l;
    uint64_t v;
    if (!parse_u64(s, UINT32_MAX - 1, &v))
        return 0;
    *out = (uint32_t)v;
    return 1;
}

static int parse_U64(const char *s, const tgl_gl_limits *l, uint64_t *out)
{
    (void)l;
    return parse_u64(s, UINT64_MAX, out);
}

static int parse_FLAG(const char *s, const tgl_gl_limits *l, int *out)
{
    (void)l;
    if (strcmp(s, "0") && strcmp(s, "1"))
        return 0;
    *out = *s == '1';
    return 1;
}

static int parse_WINOGRAD(const char *s, const tgl_gl_limits *l, int *out)
{
    (void)l;
    if (strcmp(s, "0") && strcmp(s, "2") && strcmp(s, "4"))
        return 0;
    *out = *s - '0';
    return 1;
}

static int parse_F64(const char *s, const tgl_gl_limits *l, double *out)
{
    (void)l;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v > 0.0 && v < 1e12))
        return 0;
    *out = v;
    return 1;
}

static int parse_POOL(const char *s, const tgl_gl_limits *l, int *out)
{
    (void)l;
    int i = name_index(s, pool_names, 3);
    return i >= 0 ? (*out = i, 1) : 0;
}

static int parse_TRANSPOSE(const char *s, const tgl_gl_limits *l, int *out)
{
    (void)l;
    int i = name_index(s, transpose_names, 3);
    return i >= 0 ? (*out = i, 1) : 0;
}

/* Against the device's limits when l has them (wg_invocations set), else syntax only. */
static int parse_GEMM(const char *s, const tgl_gl_limits *l, tgl_gl_gemm_config *out)
{
    if (l->wg_invocations)
        return tgl_gl_gemm_parse(s, l, out);
    tgl_gl_limits any = {.wg_size = {1024, 1024, 64}, .wg_invocations = 1024, .shared_memory = (uint64_t)1 << 20,
                         .texture_buffer_texels = 1};
    return tgl_gl_gemm_parse(s, &any, out);
}

static void format_U32(char *out, size_t size, const uint32_t *v) { snprintf(out, size, "%u", (unsigned)*v); }
static void format_U64(char *out, size_t size, const uint64_t *v) { snprintf(out, size, "%llu", (unsigned long long)*v); }
static void format_FLAG(char *out, size_t size, const int *v) { snprintf(out, size, "%d", *v); }
static void format_WINOGRAD(char *out, size_t size, const int *v) { snprintf(out, size, "%d", *v); }
static void format_F64(char *out, size_t size, const double *v) { snprintf(out, size, "%g", *v); }
static void format_POOL(char *out, size_t size, const int *v) { snprintf(out, size, "%s", pool_names[*v % 3]); }
static void format_TRANSPOSE(char *out, size_t size, const int *v)
{
    snprintf(out, size, "%s", transpose_names[*v % 3]);
}
static void format_GEMM(char *out, size_t size, const tgl_gl_gemm_config *v) { tgl_gl_gemm_format(v, out, size); }

/* Sets trait i of l from text; 0 when the text is not a value of its kind. */
static int parse_trait(int i, const char *value, tgl_gl_limits *l)
{
    switch (i) {
#define PARSE(name, kind, help) case TGL_GL_TRAIT_##name: return parse_##kind(value, l, &l->name);
        TGL_GL_TRAITS(PARSE)
#undef PARSE
    default: return 0;
    }
}

static void format_trait(int i, const tgl_gl_limits *l, char *out, size_t size)
{
    switch (i) {
#define FORMAT(name, kind, help) case TGL_GL_TRAIT_##name: format_##kind(out, size, &l->name); break;
        TGL_GL_TRAITS(FORMAT)
#undef FORMAT
    default: snprintf(out, size, "?");
    }
}

static int trait_index(const char *name, size_t len)
{
    for (int i = 0; i < TGL_GL_TRAIT_COUNT; i++)
        if (strlen(traits[i].name) == len && !strncmp(traits[i].name, name, len))
            return i;
    return -1;
}

/* ---- TGL_DEVICE_PROFILE ---- */

static const struct named_profile *profile_named(const char *name, size_t len)
{
    for (size_t i = 0; i < N_PROFILES; i++)
        if (strlen(profiles[i].name) == len && !strncmp(profiles[i].name, name, len))
            return &profiles[i];
    return NULL;
}

/* Walks "[name][,trait=value]..." (a GEMM value's own commas continue it): the profile's name,
 * then each override applied to l when l is not NULL (and checked against l's limits when it
 * has them). Fails with the item named. */
static tgl_status walk_spec(tgl_backend *b, const char *spec, const struct named_profile **named, tgl_gl_limits *l,
                            uint8_t *sources)
{
    char item[512];
    const char *p = spec;
    *named = NULL;
    int first = 1;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq && first) {
            if (len && !(*named = profile_named(p, len))) {
                size_t n = 0;
                char list[128] = "";
                for (size_t i = 0; i < N_PROFILES; i++)
                    n += (size_t)snprintf(list + n, n < sizeof list ? sizeof list - n : 0, "%s%s", i ? ", " : "",
                                          profiles[i].name);
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE_PROFILE: '%.*s' is not a profile (%s)",
                                 (int)len, p, list);
            }
        } else {
            if (!eq)
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE_PROFILE: '%.*s' is not trait=value",
                                 (int)len, p);
            int t = trait_index(p, (size_t)(eq - p));
            if (t < 0)
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                                 "TGL_DEVICE_PROFILE: no trait '%.*s' (`tensorgl info --profile` lists them)",
                                 (int)(eq - p), p);
            /* A GEMM value runs on through the items after it that are not trait=value (to the
             * end of the text when no such item follows). */
            while (traits[t].commas && end) {
                const char *next = end + 1;
                size_t n = strcspn(next, ",");
                if (memchr(next, '=', n))
                    break;
                end = next[n] ? next + n : NULL;
            }
            len = end ? (size_t)(end - p) : strlen(p);
            size_t vlen = len - (size_t)(eq + 1 - p);
            if (vlen >= sizeof item)
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE_PROFILE: %s: value too long", traits[t].name);
            memcpy(item, eq + 1, vlen);
            item[vlen] = '\0';
            tgl_gl_limits scratch = {0}; /* syntax only: a value parsed into nothing */
            if (!parse_trait(t, item, l ? l : &scratch))
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE_PROFILE: %s=%s: expected %s",
                                 traits[t].name, item, traits[t].expect);
            if (sources)
                sources[t] = TGL_GL_FROM_OVERRIDE;
        }
        first = 0;
        p = end ? end + 1 : p + len;
    }
    return TGL_OK;
}

tgl_status tgl_gl_profile_check(const char *spec)
{
    const struct named_profile *named;
    return walk_spec(NULL, spec, &named, NULL, NULL);
}

/* ---- what the device decides (step 3) ---- */

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

/* llvmpipe's rasterizer threads: LP_NUM_THREADS, else one per core. */
static uint32_t llvmpipe_threads(void)
{
    const char *lp = getenv("LP_NUM_THREADS");
    long threads = lp && *lp ? atol(lp) : sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 1 ? (uint32_t)threads : 1u;
}

/* NVIDIA's multiprocessor count (GL_NV_shader_thread_group's GL_SM_COUNT_NV: GL itself has no
 * such query); 0 where the driver does not answer. NVIDIA's ES contexts may answer without
 * listing the extension, as they do the NVX memory queries (gl_limits.c), so NVIDIA is asked
 * either way and a refusal is cleared. */
#define TGL_SM_COUNT_NV 0x933B
static uint32_t query_sm_count(void)
{
    const char *vendor = (const char *)glGetString(GL_VENDOR);
    if (!epoxy_has_gl_extension("GL_NV_shader_thread_group") && !(vendor && !strncmp(vendor, "NVIDIA", 6)))
        return 0;
    GLint count = 0;
    glGetIntegerv(TGL_SM_COUNT_NV, &count);
    int refused = 0;
    while (glGetError() != GL_NO_ERROR)
        refused = 1;
    return !refused && count > 0 && count < 100000 ? (uint32_t)count : 0;
}

/* Step 3 for one trait: where `cond` fails the device sets `value`, unless the trait was
 * overridden, which fails the open (an override is never dropped). */
#define DEVICE_SETS(trait, cond, value, why)                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (l->trait_source[TGL_GL_TRAIT_##trait] == TGL_GL_FROM_OVERRIDE)                            \
                return overridden_but(b, l, TGL_GL_TRAIT_##trait, why);                                   \
            l->trait = value;                                                                      \
            l->trait_source[TGL_GL_TRAIT_##trait] = TGL_GL_FROM_LIMIT;                                    \
        }                                                                                          \
    } while (0)

static tgl_status overridden_but(tgl_backend *b, const tgl_gl_limits *l, int trait, const char *why)
{
    char v[96];
    format_trait(trait, l, v, sizeof v);
    return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE_PROFILE: %s=%s: %s", traits[trait].name, v, why);
}

static int tile_fits(const tgl_gl_gemm_config *g, const tgl_gl_limits *l)
{
    return !g->tiled || tgl_gl_gemm_fits(g, l);
}

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

static int pow2(uint32_t v) { return v && !(v & (v - 1)); }

static tgl_status device_decides(tgl_backend *b, tgl_gl_limits *l, const char *renderer, int es)
{
    const int llvmpipe = !strncmp(renderer, "llvmpipe", 8);
    /* Values the device supplies where the profile leaves them to it. */
    if (l->transfer_threads == FROM_DEVICE) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        l->transfer_threads = cores >= 4 ? 4u : cores > 1 ? (unsigned)cores : 1u;
        l->trait_source[TGL_GL_TRAIT_transfer_threads] = TGL_GL_FROM_QUERY;
    }
    if (l->compute_units == FROM_DEVICE) {
        uint32_t sm = llvmpipe ? llvmpipe_threads() : query_sm_count();
        l->compute_units = sm ? sm : DEFAULT_COMPUTE_UNITS;
        l->trait_source[TGL_GL_TRAIT_compute_units] = sm ? TGL_GL_FROM_QUERY : TGL_GL_FROM_DEFAULT;
    }
    if (l->attention_fill == FROM_DEVICE) { /* one workgroup per multiprocessor */
        l->attention_fill = l->compute_units;
        l->trait_source[TGL_GL_TRAIT_attention_fill] = l->trait_source[TGL_GL_TRAIT_compute_units];
    }
    if (l->gflops_floor == 0.0) { /* the llvmpipe profile: per rasterizer thread */
        l->gflops_floor = LLVMPIPE_GFLOPS_PER_THREAD * (double)llvmpipe_threads();
        l->trait_source[TGL_GL_TRAIT_gflops_floor] = TGL_GL_FROM_QUERY;
    }
    if (l->row_lanes == FROM_DEVICE) {
        l->row_lanes = simd_lanes(renderer);
        l->trait_source[TGL_GL_TRAIT_row_lanes] = TGL_GL_FROM_QUERY;
    }
    /* gallivm counts every loop back-edge of an invocation against one limit of 65535 and then
     * leaves the loops, silently (a softmax row of 65536 walked by one invocation came out
     * wrong): a fact of the driver, whatever the profile; kernels that walk long ranges in one
     * invocation check it. */
    l->loop_limit = llvmpipe ? 65535u : 0u;
    l->trait_source[TGL_GL_TRAIT_loop_limit] = TGL_GL_FROM_QUERY;

    /* Limits. A tile the device cannot hold (invocations, shared memory) falls back to the
     * register kernel. */
    DEVICE_SETS(gemm, tile_fits(&l->gemm, l), fallback_gemm, "a tile the device cannot run");
    DEVICE_SETS(gemm_f16, tile_fits(&l->gemm_f16, l), fallback_gemm, "a tile the device cannot run");
    DEVICE_SETS(gemm_medium, tile_fits(&l->gemm_medium, l), fallback_gemm, "a tile the device cannot run");
    DEVICE_SETS(gemm_small, tile_fits(&l->gemm_small, l), fallback_gemm, "a tile the device cannot run");
    DEVICE_SETS(gemm_tiny, tile_fits(&l->gemm_tiny, l), fallback_gemm, "a tile the device cannot run");
    DEVICE_SETS(gemm_thin, tile_fits(&l->gemm_thin, l), fallback_gemm, "a tile the device cannot run");
    /* softpipe (Mesa 22.3.6, ES 3.1) reads a buffer texel at or past byte 512 KiB of its buffer
     * (the bound range's offset counted) as the texel 512 KiB before it, in R32F and RGBA32F
     * alike (a vec4 neg of 140000 floats, inputs as texels: element 131072 came out as element
     * 0's), though it reports 65536 texels per range, so windows cannot steer clear of it; its
     * sampler fetches buffer texels through the texture tile cache, whose tile address packs x
     * into a narrow bit field. No buffer textures there. */
    if (!strncmp(renderer, "softpipe", 8))
        l->texture_buffer_texels = 0;
    if (!l->texture_buffer_texels) {
        l->gemm.textures = l->gemm_f16.textures = l->gemm_medium.textures = l->gemm_small.textures = 0;
        l->gemm_tiny.textures = 0;
        l->gemm_thin.textures = 0;
        DEVICE_SETS(texel_inputs, !l->texel_inputs, 0, "the device has no buffer textures");
        DEVICE_SETS(attention_reg, !l->attention_reg, 0, "flash_reg reads buffer textures, which the device lacks");
    }
    DEVICE_SETS(image_inputs, !l->image_inputs || (l->texel_inputs && l->image_units >= TGL_GL_MAX_TEXTURE_BINDINGS),
                0, "images need texel_inputs and an image unit per texture binding");
    /* A persistent map (glBufferStorage) is desktop GL 4.4 or GL_ARB_buffer_storage; the
     * buffer is read where staged downloads would be (gl_buffers.c asks transfer_staging). */
    DEVICE_SETS(readback_mapped, !l->readback_mapped || l->buffer_storage, 0,
                "needs desktop GL 4.4 or ARB_buffer_storage");
    /* dvec4 stores: doubles are core in desktop GL 4.0, absent from ES. */
    DEVICE_SETS(wide_stores, !l->wide_stores || !es, 0, "ES has no doubles");
    DEVICE_SETS(transpose, l->transpose != TGL_GL_TRANSPOSE_BLOCK4 || l->texel_inputs, TGL_GL_TRANSPOSE_OFF,
                "block4 reads texels (texel_inputs=1)");
    /* Softmax rows in SIMD lanes (norm/softmax_lanes.comp) need GLSL 4.50 with
     * GL_ARB_shader_ballot, one row per invocation elsewhere and paired vec4 stores; and only the
     * widths llvmpipe builds (128, 256 and, with LP_NATIVE_VECTOR_WIDTH=512, 512 bits), the
     * variants `make check` validates. */
    DEVICE_SETS(row_lanes,
                !l->row_lanes || (l->rows_per_invocation && l->wide_stores && !es && epoxy_gl_version() >= 45 &&
                                  epoxy_has_gl_extension("GL_ARB_shader_ballot") &&
                                  (l->row_lanes == 4 || l->row_lanes == 8 || l->row_lanes == 16)),
                0, "needs 4, 8 or 16, desktop GL 4.5 with ARB_shader_ballot, rows_per_invocation=1, wide_stores=1");
    /* GL_TIME_ELAPSED is an extension in ES (EXT_disjoint_timer_query), and llvmpipe's queries
     * read 0 around compute dispatches (test_profile_gl under generic-gpu: 0.000 ms in all). */
    DEVICE_SETS(timer_queries, !l->timer_queries || !es, 0, "ES has no GL_TIME_ELAPSED");
    DEVICE_SETS(timer_queries, !l->timer_queries || !llvmpipe, 0, "llvmpipe's timer queries do not time compute work");
    DEVICE_SETS(workgroup_size, pow2(l->workgroup_size) && l->workgroup_size == clamp_pow2(l->workgroup_size, l),
                clamp_pow2(l->workgroup_size ? l->workgroup_size : 1, l), "a power of two within the device's limits");
    DEVICE_SETS(reduce_workgroup_size,
                pow2(l->reduce_workgroup_size) && l->reduce_workgroup_size == clamp_pow2(l->reduce_workgroup_size, l),
                clamp_pow2(l->reduce_workgroup_size ? l->reduce_workgroup_size : 1, l),
                "a power of two within the device's limits");
    DEVICE_SETS(items_per_invocation, l->items_per_invocation >= 1 && l->items_per_invocation <= 16, 1,
                "1 to 16 per invocation");
    DEVICE_SETS(compute_units, l->compute_units >= 1, 1, "at least 1");
    DEVICE_SETS(flash_block_keys, l->flash_block_keys >= 1 && l->flash_block_keys <= 64, 8, "1 to 64");
    DEVICE_SETS(reduce_groups, l->reduce_groups >= 1, 1, "at least 1");
    DEVICE_SETS(cols_invocations, l->cols_invocations >= 1, 1, "at least 1");
    DEVICE_SETS(cols_min_chunk, l->cols_min_chunk >= 1, 1, "at least 1");
    DEVICE_SETS(scan_items, l->scan_items == 8 || l->scan_items == 16 || l->scan_items == 32, 8, "8, 16 or 32");
    DEVICE_SETS(scan_one_pass, l->scan_one_pass <= 8 && !(l->scan_one_pass & (l->scan_one_pass - 1)), 0,
                "0, 1, 2, 4 or 8");
    DEVICE_SETS(radix_items, l->radix_items == 8 || l->radix_items == 16 || l->radix_items == 32, 8, "8, 16 or 32");
    DEVICE_SETS(radix_bits, l->radix_bits == 4 || l->radix_bits == 8, 4, "4 or 8");
    DEVICE_SETS(transfer_threads, l->transfer_threads >= 1 && l->transfer_threads <= 64, 1, "1 to 64");
    return TGL_OK;
}

tgl_status tgl_gl_profile_resolve(tgl_backend *b, tgl_gl_limits *l, const char *renderer, int es)
{
    const struct named_profile *named = NULL;
    tgl_status st = walk_spec(b, b->config.device_profile, &named, NULL, NULL); /* names and syntax */
    if (st)
        return st;
    int by_name = named != NULL;
    for (size_t i = 0; i < N_PROFILES && !named; i++)
        if (profiles[i].renderer_prefix &&
            !strncmp(renderer, profiles[i].renderer_prefix, strlen(profiles[i].renderer_prefix)))
            named = &profiles[i];
    if (!named)
        named = GENERIC;
    copy_traits(l, &named->t);
    memset(l->trait_source, named == GENERIC ? TGL_GL_FROM_DEFAULT : TGL_GL_FROM_PROFILE, sizeof l->trait_source);
    tgl__strlcpy(l->profile, named->name, sizeof l->profile);
    snprintf(l->profile_reason, sizeof l->profile_reason, "%s",
             by_name ? "named by TGL_DEVICE_PROFILE"
             : named != GENERIC ? "the renderer matches the table"
                                : "a renderer the table does not know");
    if ((st = walk_spec(b, b->config.device_profile, &named, l, l->trait_source)) ||
        (st = device_decides(b, l, renderer, es)))
        return st;
    /* TGL_POOL=off|reuse|carve, to measure a device or rule the pool out. */
    if (b->config.pool != TGL__POOL_DEVICE) {
        l->pool = b->config.pool == TGL__POOL_OFF     ? TGL_GL_POOL_OFF
                : b->config.pool == TGL__POOL_REUSE ? TGL_GL_POOL_REUSE
                                                      : TGL_GL_POOL_CARVE;
        l->trait_source[TGL_GL_TRAIT_pool] = TGL_GL_FROM_OVERRIDE;
    }
    /* TGL_PROFILE_TIMER=0|1, the profiler's switch; ES has no timer queries to turn on. */
    if (b->config.profile_timer >= 0 && !es) {
        l->timer_queries = b->config.profile_timer;
        l->trait_source[TGL_GL_TRAIT_timer_queries] = TGL_GL_FROM_OVERRIDE;
    }
    return TGL_OK;
}

void tgl_gl_profile_mark(tgl_gl_limits *l, int trait, int source)
{
    if (trait >= 0 && trait < TGL_GL_TRAIT_COUNT)
        l->trait_source[trait] = (uint8_t)source;
}

void tgl_gl_profile_print(const tgl_gl_limits *l, FILE *out)
{
    fprintf(out, "profile:        %s (%s)\n", l->profile, l->profile_reason);
    for (int i = 0; i < TGL_GL_TRAIT_COUNT; i++) {
        char v[96];
        format_trait(i, l, v, sizeof v);
        unsigned src = l->trait_source[i] < sizeof source_names / sizeof source_names[0] ? l->trait_source[i] : 0;
        fprintf(out, "  %-22s %-34s %-13s %s\n", traits[i].name, v, source_names[src], traits[i].help);
    }
}
