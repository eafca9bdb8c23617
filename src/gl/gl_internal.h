/* State and helpers shared by the GL backend's files. */
#ifndef TGL_GL_INTERNAL_H
#define TGL_GL_INTERNAL_H

#include "../core/internal.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

/* ---- EGL context (egl_context.c) ---- */
typedef struct tgl_egl {
    EGLDisplay dpy;
    EGLContext ctx;
    int es;             /* 1: OpenGL ES context */
    int robust;         /* reset notification requested and granted */
    int debug;
    char path[64];      /* which ladder step won */
    char version[64];   /* EGL vendor + version */
} tgl_egl;

/* Walks the ladder (device platform -> surfaceless -> default display; GL 4.3 core -> ES 3.1)
 * and leaves the new context current. On failure, the message names every step tried. */
tgl_status tgl_egl_create(tgl_backend *b, tgl_egl *e);
void tgl_egl_destroy(tgl_egl *e);
/* Makes e current on the calling thread if it is not already. */
tgl_status tgl_egl_make_current(tgl_backend *b, tgl_egl *e);
/* Makes no context current on this thread if e's is (tgl_detach). */
tgl_status tgl_egl_release(tgl_backend *b, tgl_egl *e);
/* 1 when libEGL loads and some display initializes (tests skip GL only when this is 0). */
int tgl_egl_display_exists(void);

/* ---- device limits (gl_limits.c) ---- */
/* How GEMM runs on this renderer: the shared-memory tile kernel (tiled) with BM x BN tiles,
 * BK-deep slabs and TM x TN results per invocation, or the register-only kernel with
 * (wg_x, wg_y) invocations of 4x4 results per workgroup. */
typedef struct tgl_gl_gemm_config {
    int tiled;
    uint32_t bm, bn, bk, tm, tn;   /* tiled: tile and per-invocation block; reg: tm, tn only */
    uint32_t wg_x, wg_y;
    int matvec_row_per_invocation; /* matvec: one row per invocation instead of per workgroup */
    int textures;                  /* read A and B through buffer textures: the reg kernel always
                                      (k > 0), the tiled one for products of one matrix (batch 1) */
    int unroll;                    /* tiled: ask NVIDIA's compiler to unroll every loop */
    int double_slab;               /* tiled: two slabs in shared memory, one barrier per slab */
    int rows_x;                    /* reg: invocations' x walks C's rows (SIMD lanes along m), y its
                                      columns; else x the columns */
} tgl_gl_gemm_config;

/* The memory pool's modes: a GL buffer per allocation, deleted on free; freed buffers kept and
 * handed to later allocations of about their size; and small allocations carved from shared
 * buffers as well. */
enum { TGL_GL_POOL_OFF = 0, TGL_GL_POOL_REUSE = 1, TGL_GL_POOL_CARVE = 2 };

/* tgl_gl_limits.transpose: the strided gather, shared-memory tiles (GPUs), or register blocks
 * per invocation read through buffer textures (llvmpipe); glsl/shape/transpose.comp. */
enum { TGL_GL_TRANSPOSE_OFF = 0, TGL_GL_TRANSPOSE_TILES = 1, TGL_GL_TRANSPOSE_BLOCK4 = 2 };

/* Storage buffers the library's fixed kernels bind at most (scripts/validate-kernels.sh checks
 * every variant): ES 3.1's guaranteed minimum, so only tgl_map, with up to 8 inputs, can need
 * more than a device offers. Variants for desktop GL only (tgl_gl_es_excluded) may bind up to
 * GL 4.3's minimum, TGL_GL_KERNEL_STORAGE_BLOCKS_GL, where the host checks the device's limits
 * in force (TGL_LIMITS may cut them). */
#define TGL_GL_KERNEL_STORAGE_BLOCKS 4
#define TGL_GL_KERNEL_STORAGE_BLOCKS_GL 8

/* The uniform location of the streaming kernels' direction (glsl/common/sweep.glsl). */

/* The device profile's traits (gl_profile.c): X(name, kind, help), each a field of
 * tgl_gl_limits of that name. Kinds: U32, U64, FLAG (0/1), WINOGRAD (0, 2 or 4), F64, POOL (TGL_GL_POOL_*), TRANSPOSE
 * (TGL_GL_TRANSPOSE_*), GEMM (tgl_gl_gemm_config). */
#define TGL_GL_TRAITS(X)                                                                                  \
    X(workgroup_size, U32, "1-D workgroup of the element-wise kernels")                                  \
    X(reduce_workgroup_size, U32, "workgroup of kernels that reduce within a group")                     \
    X(items_per_invocation, U32, "elements (vec4s) per invocation of element-wise kernels")              \
    X(texel_inputs, FLAG, "element-wise, row-wise, reduce, scan, topk, shape and rope inputs read as buffer textures") \
    X(image_inputs, FLAG, "... bound as read-only image buffers (imageLoad) instead")                    \
    X(wide_stores, FLAG, "pairs of vec4s stored as dvec4s (common/wide_store.glsl)")                     \
    X(rows_per_invocation, FLAG, "row-wise ops: one invocation per row, no barriers")                    \
    X(row_lanes, U32, "softmax rows of up to 128 x this many floats held in SIMD lanes; 0 never")       \
    X(vec4_lines, FLAG, "row-wise ops, argmax and column sums step through aligned rows by vec4s")       \
    X(transpose, TRANSPOSE, "permutes that move the contiguous axis: gather, tiles or block4")           \
    X(reduce_groups, U32, "workgroups a reduction with few outputs is split into")                       \
    X(cols_invocations, U32, "invocations a reduction over a strided axis aims for")                     \
    X(cols_min_chunk, U32, "... each reducing at least this many indices")                               \
    X(scan_items, U32, "consecutive elements per invocation in a scan's tiles: 8, 16 or 32")            \
    X(scan_staged, FLAG, "scans move their tiles through shared memory, reading and writing coalesced") \
    X(scan_one_pass, U32, "scans of 4-element-aligned lines in chunks of at most this many tiles (1, 2, 4 or 8) take one pass, each chunk awaiting the earlier ones' totals; 0 never") \
    X(radix_min, U64, "sorts of lines this long or longer take radix passes, not the network; 0 never") \
    X(radix_items, U32, "pairs per invocation in a radix pass's tiles: 8, 16 or 32")                    \
    X(radix_staged, FLAG, "radix passes put each tile's pairs in digit order in shared memory, then write them coalesced") \
    X(radix_bits, U32, "bits of a radix pass's digit: 4, or 8 (half the passes, each tile put in digit order in shared memory)") \
    X(sweep_bytes, U64, "streaming ops of at least this many bytes alternate direction; 0 never")        \
    X(scatter_window_bytes, U64, "scatter's atomics land in temp windows of at most this many bytes, a pass over the index each; 0 the block limit") \
    X(cast_vec4_min, U64, "casts of at least this many elements take four per invocation")               \
    X(weight_unpack, FLAG, "tgl_matvec_t reads f16 weights and block scales by unpackHalf2x16, not the bit-exact conversion") \
    X(attention_reg, FLAG, "attention runs flash_reg (register blocks, k and v as texels)")              \
    X(conv_im2col, FLAG, "convolutions of 16 or more output channels per group write im2col, then run the GEMM kernels") \
    X(conv_winograd, WINOGRAD, "3x3 stride-1 convolutions of 16 or more channels in and out, one group, run as Winograd F(m x m, 3x3) of this m (0: never): transforms around (m + 2)^2 batched GEMMs") \
    X(conv_winograd_f4_tiles, U32, "... m 4 where a batch holds at least this many 4x4 tiles, else 2 (too few columns for the GEMM)") \
    X(conv_winograd_min_tiles, U32, "... and none where a batch holds fewer 2x2 tiles (the transforms outweigh the multiplies saved)") \
    X(flash_block_keys, U32, "keys per shared-memory block of flash.comp")                               \
    X(attention_fill, U32, "flash grids of fewer workgroups cut their keys into chunks; 0 never")        \
    X(compute_units, U32, "multiprocessors (llvmpipe: rasterizer threads); split-K fills waves of them") \
    X(loop_limit, U32, "loop iterations an invocation may run in all; 0 no limit known")                 \
    X(copy_kernel, FLAG, "word-aligned device copies run a kernel, not glCopyBufferSubData")             \
    X(upload_waits, FLAG, "an upload is queued work on its buffer: the next transfer into or from it waits for it")                             \
    X(transfer_staging, FLAG, "transfers go through staging buffers, never mapping a tensor's")          \
    X(transfer_threads, U32, "threads sharing the host's memcpy of a large transfer")                    \
    X(readback_mapped, FLAG, "small staged downloads: the copy kernel writes a persistently mapped buffer") \
    X(pool, POOL, "memory pool: off, reuse (freed buffers) or carve (small ones from blocks too)")       \
    X(timer_queries, FLAG, "the profiler times calls with GL_TIME_ELAPSED queries")                      \
    X(gflops_floor, F64, "low estimate of the f32 rate (GFLOP/s) for TGL_MAX_DISPATCH_MS splits")        \
    X(gemm, GEMM, "f32 GEMM kernel")                                                                     \
    X(gemm_f16, GEMM, "binary16 GEMM kernel")                                                            \
    X(gemm_medium, GEMM, "both, where gemm's tiles make a short grid")                                   \
    X(gemm_small, GEMM, "both, where they make too few workgroups")                                     \
    X(gemm_tiny, GEMM, "products of one matrix whose small tiles would fill under half a wave of compute_units")   \
    X(gemm_thin, GEMM, "register kernels' products under a quarter as wide as their block of columns")
enum {
#define TGL_GL_TRAIT_ID_(name, kind, help) TGL_GL_TRAIT_##name,
    TGL_GL_TRAITS(TGL_GL_TRAIT_ID_)
#undef TGL_GL_TRAIT_ID_
    TGL_GL_TRAIT_COUNT
};

/* Where a trait's value came from (`tensorgl info --profile`). */
enum { TGL_GL_FROM_PROFILE = 0, TGL_GL_FROM_DEFAULT, TGL_GL_FROM_LIMIT, TGL_GL_FROM_QUERY, TGL_GL_FROM_OVERRIDE,
       TGL_GL_FROM_GEMM_ENV, TGL_GL_FROM_TUNE, TGL_GL_FROM_TEST };

typedef struct tgl_gl_limits {
    /* What the device reports. */
    uint64_t max_ssbo_block;
    uint64_t ssbo_align;
    uint64_t texture_buffer_texels; /* GL_MAX_TEXTURE_BUFFER_SIZE; 0: no buffer textures */
    uint64_t texture_align;         /* GL_TEXTURE_BUFFER_OFFSET_ALIGNMENT */
    uint32_t wg_size[3], wg_count[3], wg_invocations;
    uint64_t shared_memory;
    uint32_t storage_blocks; /* SSBOs one compute kernel may bind (GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS,
                                capped by GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS) */
    uint32_t image_units;    /* image uniforms a compute kernel may use */
    uint64_t memory_bytes;   /* device memory the driver reports (NVX/ATI); 0 = unknown */
    uint32_t subgroup_shuffle; /* compute shaders have subgroupShuffleXor (GL_KHR_shader_subgroup)
                                  over subgroups of this many invocations; 0 = not offered */
    int buffer_storage;      /* glBufferStorage: desktop GL 4.4 or GL_ARB_buffer_storage */
    /* The profile's traits (TGL_GL_TRAITS has what each means). */
    uint32_t workgroup_size, reduce_workgroup_size, items_per_invocation;
    int texel_inputs, image_inputs, wide_stores, rows_per_invocation;
    uint32_t row_lanes;
    int vec4_lines, transpose;
    uint32_t reduce_groups, cols_invocations, cols_min_chunk, scan_items;
    int scan_staged;
    uint32_t scan_one_pass; /* the most tiles a one-pass chunk holds in registers; 0: two passes always */
    uint64_t radix_min;
    uint32_t radix_items;
    int radix_staged;
    uint32_t radix_bits;
    uint64_t sweep_bytes, scatter_window_bytes, cast_vec4_min;
    int weight_unpack;
    int attention_reg, conv_im2col, conv_winograd;
    uint32_t conv_winograd_f4_tiles, conv_winograd_min_tiles;
    uint32_t flash_block_keys, attention_fill, compute_units, loop_limit;
    int copy_kernel, upload_waits, transfer_staging;
    uint32_t transfer_threads;
    int readback_mapped;
    int pool, timer_queries;
    double gflops_floor;
    tgl_gl_gemm_config gemm, gemm_f16, gemm_medium, gemm_small, gemm_tiny, gemm_thin;
    uint8_t trait_source[TGL_GL_TRAIT_COUNT]; /* TGL_GL_FROM_* per trait */
    char profile[32];         /* the named profile the traits started from */
    char profile_reason[64];  /* why that one */
} tgl_gl_limits;
/* Fills l's traits from the device profile (gl_profile.c); l holds the device's limits. Fails
 * with TGL_ERR_INVALID_ARGUMENT for a TGL_DEVICE_PROFILE the device cannot honour. */
tgl_status tgl_gl_profile_resolve(tgl_backend *b, tgl_gl_limits *l, const char *renderer, int es);
/* Records where trait TGL_GL_TRAIT_<name>'s value now comes from (TGL_GL_FROM_*: TGL_GEMM, tune, a test). */
void tgl_gl_profile_mark(tgl_gl_limits *l, int trait, int source);
/* Every trait with its value, where it came from and what it means (`tensorgl info --profile`). */
void tgl_gl_profile_print(const tgl_gl_limits *l, FILE *out);
/* 1 when a tiled GEMM configuration fits the device's workgroup and shared-memory limits. */
int tgl_gl_gemm_fits(const tgl_gl_gemm_config *g, const tgl_gl_limits *l);
tgl_status tgl_gl_limits_query(tgl_backend *b, tgl_gl_limits *l);
/* "reg:WX,WY,TM,TN" or "tiled:BM,BN,BK,TM,TN[,unroll]" -> *out; 0 when malformed or beyond l's limits. */
int tgl_gl_gemm_parse(const char *s, const tgl_gl_limits *l, tgl_gl_gemm_config *out);
/* Shared memory a tiled configuration's kernel declares (its slabs of A and B). */
uint64_t tgl_gl_gemm_shared_bytes(const tgl_gl_gemm_config *g);
/* The inverse of tgl_gl_gemm_parse. */
void tgl_gl_gemm_format(const tgl_gl_gemm_config *g, char *out, size_t size);

/* ---- tuning (gl_tune.c) ---- */
/* Reads this device's tuning file from the cache directory into l->gemm / l->gemm_f16 when
 * there is a valid one; a missing file changes nothing, a damaged one is logged and ignored. */
void tgl_gl_tune_load(tgl_backend *b, tgl_gl_limits *l);
/* tgl_tune for GL. */
tgl_status tgl_gl_tune(tgl_backend *b, size_t size, FILE *report);
/* Free device memory now where the driver tells (NVX, ATI); 0 = unknown. */
uint64_t tgl_gl_device_available_bytes(void);
/* Every GEMM configuration the table holds (for `tensorgl kernels`): entry 0 is the register
 * kernel that thin products and small devices use; NULL past the end. */
const tgl_gl_gemm_config *tgl_gl_gemm_table_entry(size_t i);
/* Test hook: shrinks the SSBO block limit (0 keeps it) and replaces the GEMM configuration
 * (NULL keeps it), so tests reach the splitting code and every kernel on any device. */
void tgl_gl_test_set_limits(tgl_backend *b, uint64_t max_ssbo_block, const tgl_gl_gemm_config *gemm);

/* ---- buffers (gl_pool.c: allocation; gl_buffers.c: transfers) ---- */
/* One GL buffer object. */
typedef struct tgl_gl_block {
    GLuint name;
    size_t bytes;
} tgl_gl_block;

/* One allocation (what the handle table holds): a range of a block. Views and bindings carry
 * offsets relative to the allocation; `base` is added where GL is called. Barriers are tracked
 * per allocation: a range only ever belongs to one record (a freed chunk's record is what the
 * next owner gets, sequence numbers included), so a dispatch still reading a range's previous
 * owner is seen by its next one. */
typedef struct tgl_gl_buffer {
    tgl_gl_block *block;
    size_t base;            /* byte offset in the block: a multiple of every binding alignment */
    size_t bytes;           /* usable size: at least the user's size rounded up to 16 */
    uint64_t last_write;    /* sequence number of the last dispatch (or GL copy) that wrote it */
    uint64_t last_access;   /* ... that read or wrote it */
    int cls;                /* pool size class, or -1 for a block of its own */
    struct tgl_gl_buffer *next; /* free-list or cache link while not in use */
} tgl_gl_buffer;

#define TGL_GL_POOL_CLASSES 11 /* 256 B .. 256 KiB */
typedef struct tgl_gl_pool {
    tgl_gl_buffer *free_chunks[TGL_GL_POOL_CLASSES];
    tgl_gl_block *carving[TGL_GL_POOL_CLASSES]; /* the block each class carves new chunks from */
    size_t carved[TGL_GL_POOL_CLASSES];
    tgl_gl_block **blocks;  /* every pooled block, deleted at close */
    size_t n_blocks, cap_blocks;
    tgl_gl_buffer *cached;  /* freed large allocations kept for reuse */
    uint64_t cached_bytes, reserved, live; /* bytes: cached; of all GL buffers; handed out */
    uint32_t small_min;     /* the smallest class's size */
    int small_ok, closing;
} tgl_gl_pool;

void tgl_gl_pool_init(tgl_backend *b);
/* Deletes every GL buffer the pool holds (current: the context is current). */
void tgl_gl_pool_fini(tgl_backend *b, int current);
/* Bytes of GL buffers held, and how many of them no allocation uses. */
void tgl_gl_pool_stats(tgl_backend *b, uint64_t *reserved, uint64_t *pooled);
tgl_status tgl_gl_buffer_create(tgl_backend *b, size_t bytes, void **out);
void tgl_gl_buffer_destroy(tgl_backend *b, void *buf);
tgl_status tgl_gl_upload(tgl_backend *b, tgl__view dst, const void *src, size_t bytes);
tgl_status tgl_gl_download(tgl_backend *b, void *dst, tgl__view src, size_t bytes);
tgl_status tgl_gl_copy(tgl_backend *b, tgl__view dst, tgl__view src, size_t bytes);

/* ---- program cache (gl_programs.c) ---- */
typedef struct tgl_gl_program {
    char *key;          /* kernel name, workgroup size and defines, '\n'-separated */
    GLuint program;
} tgl_gl_program;
typedef struct tgl_gl_programs {
    tgl_gl_program *items;
    size_t count, cap;
} tgl_gl_programs;
/* Every (kernel, defines) the enumerators list, sorted, built on the first TGL_DEBUG check. */
typedef struct tgl_gl_variant_list {
    char **keys; /* "kernel\ndefines" */
    size_t count;
} tgl_gl_variant_list;

/* ---- program binaries on disk (gl_disk_cache.c) ---- */
typedef struct tgl_gl_disk_cache {
    int enabled;          /* a directory is configured and the driver has a binary format */
    int write_failed;     /* logged once */
    char dir[1024];
    char identity[640];   /* what a binary is valid for: library version, API, vendor, renderer, version */
    unsigned long hits, stores, rejected; /* counters for tests and debugging */
} tgl_gl_disk_cache;
/* Enables the cache when b->config.cache_dir is set and the driver can save binaries. */
void tgl_gl_disk_cache_init(tgl_backend *b, tgl_gl_disk_cache *c);
/* 1 with *out a linked program when a valid binary of `source` is on disk; 0 otherwise (absent,
 * damaged, stale or refused by the driver: the caller compiles and stores a fresh one). */
int tgl_gl_disk_cache_load(tgl_backend *b, const char *source, GLuint *out);
/* Saves program's binary for `source` (write then rename); failures are logged once, not fatal. */
void tgl_gl_disk_cache_store(tgl_backend *b, const char *source, GLuint program);
/* What a saved binary or tuning result is valid for: library version, API, vendor, renderer
 * and GL version (which names the driver's). */
void tgl_gl_identity(tgl_backend *b, char *out, size_t size);
/* mkdir -p, mode 0700 for what it creates; -1 with errno on failure. */
int tgl_gl_make_dirs(const char *dir);
/* Test hook: {hits, stores, rejected} since the backend opened. */
void tgl_gl_test_cache_stats(tgl_backend *b, unsigned long stats[3]);
/* Fuzzing and test hooks: the path of source's entry (0 when the cache is off), and the bytes of
 * an entry that passes every check but the driver's, with payload as a binary of `format`
 * (0 when it does not fit in cap). */
int tgl_gl_test_cache_path(tgl_backend *b, const char *source, char *out, size_t size);
size_t tgl_gl_test_cache_entry(tgl_backend *b, const char *source, uint32_t format, const void *payload, size_t n,
                               unsigned char *out, size_t cap);

/* ---- kernels from SPIR-V modules (gl_spirv.c) ---- */
/* The uniform locations a module-built program's record holds, one bit each; the kernels'
 * fixed locations (glsl/common/locations.glsl) lie below it (gl_spirv.c asserts so). */
#define TGL_GL_ACTIVE_LOCATIONS 128
typedef struct tgl_gl_active {
    uint64_t bits[TGL_GL_ACTIVE_LOCATIONS / 64];
    int recorded; /* 0 for programs built from GLSL */
} tgl_gl_active;
typedef struct tgl_gl_spirv {
    int enabled;          /* TGL_SHADER=spirv on a context with ARB_gl_spirv and a module directory */
    char dir[1024];
    /* programs from modules; variants without a module file; modules refused; variants built
     * from GLSL by design (tgl_gl_spirv_excluded) */
    unsigned long loaded, missing, rejected, excluded;
    /* Indexed by program name: for a program from a module, its active uniform locations;
     * unrecorded for other programs (every location taken). */
    tgl_gl_active *active;
    size_t active_cap;
} tgl_gl_spirv;
/* With TGL_SHADER=spirv: checks the context can take SPIR-V and the module directory is there
 * (TGL_ERR_UNSUPPORTED, TGL_ERR_IO naming what is missing); otherwise leaves it disabled. */
tgl_status tgl_gl_spirv_init(tgl_backend *b, tgl_gl_spirv *s);
/* *found = 1 with *out a linked program built from the variant's module specialized to wg and
 * items (or from the program cache); *found = 0 when there is no usable module, for the caller
 * to build from GLSL. Errors only for a lost context or no host memory. */
tgl_status tgl_gl_spirv_program(tgl_backend *b, const char *kernel, const char *defines, uint32_t wg,
                                uint32_t items, GLuint *out, int *found);
/* Test hook: {loaded, missing, rejected, excluded} since the backend opened. */
void tgl_gl_test_spirv_stats(tgl_backend *b, unsigned long stats[4]);

/* Uniform setters for the kernels' explicit locations. A program linked from SPIR-V has only
 * its active uniforms: Mesa drops those a variant does not use, and a glProgramUniform on such
 * a location is GL_INVALID_OPERATION. So for those programs a value for a location the program
 * lacks (and the kernel cannot read) is skipped; GLSL programs keep every declared location and
 * take every value. A location past TGL_GL_ACTIVE_LOCATIONS is always set (a missing one is
 * then a GL error the caller's check reports, never a value silently dropped). */
void tgl_gl_uniform_ui(tgl_backend *b, GLuint prog, GLint loc, GLuint v);
void tgl_gl_uniform_f(tgl_backend *b, GLuint prog, GLint loc, GLfloat v);
void tgl_gl_uniform_uiv(tgl_backend *b, GLuint prog, GLint loc, GLsizei count, const GLuint *v);
void tgl_gl_uniform_fv(tgl_backend *b, GLuint prog, GLint loc, GLsizei count, const GLfloat *v);
/* A uint[TGL_MAX_DIMS] array at loc from n sizes (n <= TGL_MAX_DIMS), the rest 0. */
void tgl_gl_uniform_dims(tgl_backend *b, GLuint prog, GLint loc, const size_t *v, size_t n);
/* The multipliers and shifts (gl_divisor.h) of dims v[0..n) at loc_m and loc_s: kernels divide
 * by the dims through common/divide.glsl's tgl_div. */
void tgl_gl_uniform_divisors(tgl_backend *b, GLuint prog, GLint loc_m, GLint loc_s, const size_t *v, size_t n);
/* Element strides as the kernels take them: two's complement uints, whose wrapping sums give the
 * right offsets (each operand is bound from its lowest element). */
static inline void tgl_gl_stride_bits(GLuint *to, const int64_t *strides, size_t ndim)
{
    for (size_t d = 0; d < ndim; d++)
        to[d] = (GLuint)(uint64_t)strides[d];
}
/* A uint uniform by its location's name (glsl/common/locations.glsl), for setting a list. */
typedef struct tgl_gl_uniform {
    GLint loc;
    size_t value; /* stored as a GLuint (the callers' values fit: windows and grids are bounded) */
} tgl_gl_uniform;
void tgl_gl_uniforms_ui(tgl_backend *b, GLuint prog, const tgl_gl_uniform *u, size_t n);

/* ---- the backend ---- */
#define TGL_GL_MAX_TEXTURE_BINDINGS 4
/* Buffer-texture views the backend keeps, by binding index: element-wise kernels read up to
 * TGL_GL_MAX_TEXTURE_BINDINGS of them, attention's mask is binding 5. */
#define TGL_GL_TEXTURE_SLOTS 6
enum { TGL_GL_FAULT_NONE = 0, TGL_GL_FAULT_GL_ERROR, TGL_GL_FAULT_RESET, TGL_GL_FAULT_TIMEOUT };

typedef struct tgl_gl {
    tgl_egl egl;
    tgl_gl_limits limits;
    tgl_gl_programs programs;
    tgl_gl_variant_list variants; /* TGL_DEBUG only */
    tgl_gl_disk_cache disk;
    tgl_gl_spirv spirv;
    tgl_gl_pool pool;
    char gl_version[128], glsl_version[64], vendor[128], renderer[256];
    int has_reset_query;
    uint64_t seq;               /* dispatches issued */
    uint64_t completed_seq;     /* dispatches known to have finished (the last wait) */
    uint64_t ssbo_barrier_seq;  /* dispatches made visible to shaders by a barrier */
    uint64_t update_barrier_seq;/* ... to buffer updates, copies and maps */
    unsigned since_flush;
    tgl_gl_buffer *scratch;     /* temporaries of multi-pass ops (reduction partials) */
    /* The index checks' status words (tgl_gl_status_slot), read back every call: in a buffer of
     * their own, as reading one from the scratch buffer slowed with the scratch's size (H100:
     * 0.056 ms per gather_rows with none, 0.078 after a 256 KB reduction, 0.157 after a 1 MB
     * one); status_next is the next unused slot. */
    tgl_gl_buffer *status;
    size_t status_next;
    tgl_gl_buffer *split_partials; /* split-K partial outputs (gl_conv2d.c, gl_gemm.c) */
    tgl_gl_buffer *conv_cols, *conv_sums; /* conv_im2col's im2col and products, conv_winograd's V and M (gl_conv2d.c) */
    tgl_gl_buffer *conv_filter;           /* conv_winograd's transformed filter U (gl_conv2d.c) */
    uint64_t conv_winograd_calls[2];      /* tgl_conv2d calls run as Winograd F(2x2), F(4x4) (tests read them) */
    tgl_gl_buffer *attention_kv;   /* an f16 KV cache widened to f32 for the flash kernels (gl_attention.c) */
    tgl_gl_buffer *decode_counts;  /* decode attention's MERGE words, zero between calls (gl_attention.c) */
    tgl_gl_buffer *scan_lookback;  /* one-pass scans' counters (zero between calls) and tagged chunk totals */
    uint32_t scan_epoch;           /* ... the tag of the last call's totals (gl_reduce_t.c) */
    GLuint staging[4];          /* transfers' staging buffers: 2 to upload, 2 to download (gl_buffers.c) */
    const void *staging_map[2]; /* the download ones' persistent maps (limits.buffer_storage), else NULL */
    /* small downloads' buffer (gl_buffers.c, readback_small): written by the copy kernel,
     * persistently mapped at readback_map; readback.block is &readback_block once made */
    tgl_gl_block readback_block;
    tgl_gl_buffer readback;
    const void *readback_map;
    /* The direction of the next streaming op of limits.sweep_bytes or more (1: backward),
     * flipped after each, so it starts where the one before it ended (glsl/common/sweep.glsl). */
    unsigned sweep_backward;
    /* tgl_rope's frequency table and what it was made for (gl_llm.c); rope_dim 0: none. */
    tgl_gl_buffer *rope_table;
    /* tgl_rope_t's frequencies on the device and the host copy of what they are (gl_llm.c):
     * uploaded only when a call's differ. */
    tgl_gl_buffer *rope_t_table;
    float *rope_t_host;
    size_t rope_t_count;
    size_t rope_dim, rope_pos;
    float rope_theta;
    uint64_t texture_barrier_seq; /* dispatches whose writes texture fetches may see */
    uint64_t image_barrier_seq;   /* ... and image loads */
    GLuint textures[TGL_GL_TEXTURE_SLOTS]; /* buffer-texture views, by binding (lazily) */
    GLuint timer_query;         /* the profiler's GL_TIME_ELAPSED query (lazily) */
    /* TGL_DEBUG's barrier audit (gl_barrier_audit.c): the dispatch numbers covered by the
     * barriers actually issued, per kind. */
    struct {
        uint64_t ssbo, texture, image, update, violations;
    } audit;
    /* What the tgl_gl_test_* hooks set, and nothing else: production code reads these only to
     * obey a test (each field's neutral value keeps the backend's own choice). */
    struct tgl_gl_test_overrides {
        int skip_barriers;           /* decide barriers but do not issue them */
        int conv2d_config;           /* -1: by shape; else the conv2d kernel configuration */
        int conv2d_splits;           /* 0: by shape; else split-K ranges of tiled conv2d, 1 none */
        int gemm_splits;             /* 0: by shape; else split-K ranges of sgemm, 1 none */
        int attention_path;          /* -1: by device and shape; else a TGL_GL_ATTENTION_* */
        size_t attention_chunk_keys; /* 0: by device and shape; else the keys per chunk of flash_reg
                                        and the flash kernels */
        int fault;                   /* tgl_gl_test_inject: the next check reports this fault */
        GLenum fault_error;
        unsigned lose_after;         /* GL_CONTEXT_LOST at this many error checks from now */
    } test;
} tgl_gl;

/* The alignment a window's start needs: the SSBO offset alignment, and with `texture` (the
 * window is also read as a buffer texture) the texture buffer one too, whichever is larger
 * (both are powers of two). */
static inline size_t tgl_gl_window_align(const tgl_gl_limits *l, int texture)
{
    return texture && l->texture_align > l->ssbo_align ? (size_t)l->texture_align : (size_t)l->ssbo_align;
}

/* Whether `elems` elements of `elem_bytes` each fit one buffer texture read from a window
 * whose start is aligned for textures (tgl_gl_window_align: up to that many bytes before them). */
static inline int tgl_gl_texture_fits(const tgl_gl_limits *l, size_t elems, size_t elem_bytes)
{
    return l->texture_buffer_texels && elems + tgl_gl_window_align(l, 1) / elem_bytes <= l->texture_buffer_texels;
}

/* Workgroups (or tiles) of size b covering a items. */
static inline size_t tgl_gl_ceil_div(size_t a, size_t b)
{
    return (a + b - 1) / b;
}

static inline tgl_gl *tgl_gl_of(tgl_backend *b)
{
    return (tgl_gl *)b->impl;
}

/* Streaming ops (element-wise, casts, row-wise ops, reductions) that touch limits.sweep_bytes
 * or more walk their range the other way from the last such op (glsl/common/sweep.glsl). The
 * direction one touching `bytes` walks in (1: backward; smaller ones walk forward) ... */
static inline unsigned tgl_gl_sweep_direction(const tgl_gl *gl, uint64_t bytes)
{
    return gl->limits.sweep_bytes && bytes >= gl->limits.sweep_bytes ? gl->sweep_backward : 0u;
}

/* ... and, once it has been issued, the next such op turns round. */
static inline void tgl_gl_sweep_done(tgl_gl *gl, uint64_t bytes)
{
    if (gl->limits.sweep_bytes && bytes >= gl->limits.sweep_bytes)
        gl->sweep_backward ^= 1u;
}

/* ---- the profiler's device timer (gl_timer.c) ---- */
tgl_status tgl_gl_timer_begin(tgl_backend *b);
tgl_status tgl_gl_timer_end(tgl_backend *b, double *seconds);

/* ---- errors (gl_errors.c) ---- */
/* Drains glGetError; maps what it finds to a status naming `what`. Detects context loss. */
tgl_status tgl_gl_check(tgl_backend *b, const char *what);
/* Queries the reset status; TGL_ERR_DEVICE_LOST when the context was reset. */
tgl_status tgl_gl_check_reset(tgl_backend *b);
/* Test hook: makes the next check report `fault` (for a GL error, `error` is the code). */
void tgl_gl_test_inject(tgl_backend *b, int fault, GLenum error);
/* Test hook (TGL_FAULT=lose-context-after:N in the test suites): the N-th GL error check from
 * now reports GL_CONTEXT_LOST, as a driver does after a reset. */
void tgl_gl_test_lose_context_after(tgl_backend *b, unsigned checks);
/* Test hook: barriers are decided as usual but not issued (the audit must catch it). */
void tgl_gl_test_skip_barriers(tgl_backend *b, int skip);

/* ---- kernel sources and programs (gl_source.c, gl_programs.c) ---- */
#include "../../glsl/common/locations.glsl"
#include "gl_plan.h"
#include "kernel_variants.h"

/* Links a compiled compute shader into a new program and deletes the shader (GLSL source and
 * SPIR-V modules alike); *linked: GL_LINK_STATUS (the program's info log says why not).
 * retrievable: ask for a binary the program cache can save. */
GLuint tgl_gl_link_shader(GLuint shader, int retrievable, GLint *linked);
/* Compiles and links a compute program from full source; `label` names it in errors. */
tgl_status tgl_gl_program_from_source(tgl_backend *b, const char *label, const char *source, GLuint *out);
/* The program a plan runs (gl_plan.h): from the backend's cache, else built (from SPIR-V, the
 * disk cache or GLSL). With TGL_DEBUG=1 a plan whose program is not cached yet is logged and
 * checked against the listed variants (tgl_gl_plan_check_listed). */
tgl_status tgl_gl_plan_program(tgl_backend *b, const tgl_gl_plan *p, GLuint *out);
tgl_status tgl_gl_plan_check_listed(tgl_backend *b, const tgl_gl_plan *p);
void tgl_gl_plan_log(tgl_backend *b, const tgl_gl_plan *p);
void tgl_gl_variant_list_free(tgl_gl_variant_list *v);
void tgl_gl_programs_free(tgl_gl_programs *p);

/* ---- dispatch (gl_dispatch.c) ---- */
/* Bytes every GL buffer object has past its usable end (gl_pool.c), never handed out: a texture
 * window may be widened into them (gl_dispatch.c, texture_window_bytes). */
#define TGL_GL_BUFFER_TAIL 256u

typedef struct tgl_gl_binding {
    tgl_gl_buffer *buf;
    size_t offset;   /* must be a multiple of the SSBO offset alignment */
    size_t bytes;
    int writes;
    /* Not 0: the range is also bound as a buffer texture of this format (GL_R32F, ...) on
     * the texture unit of the binding's index; it must then be read-only and its offset a
     * multiple of the texture offset alignment too (tgl_gl_window_aligned). */
    GLenum texture_format;
    /* With texture_format: that texture is also bound read-only to the image unit of the
     * binding's index, for kernels that read it with imageLoad (TGL_IMG, common/texel.glsl). */
    int texture_image;
} tgl_gl_binding;

/* How a kernel reads an input (common/texel.glsl): SSBO loads, texel fetches from a buffer
 * texture over the same window (TGL_TEX), or loads from that texture bound as a read-only image
 * (TGL_TEX and TGL_IMG; a plan's TGL_GL_READ field writes those defines). */
typedef enum { TGL_GL_READ_SSBO, TGL_GL_READ_TEXELS, TGL_GL_READ_IMAGE, TGL_GL_READS } tgl_gl_read;

/* The element-wise kernels' and the reductions' read of an input, given whether it goes
 * through a buffer texture at all: as an image where the device takes those
 * (limits.image_inputs, llvmpipe). */
static inline tgl_gl_read tgl_gl_input_read(const tgl_gl_limits *l, int texture)
{
    return !texture ? TGL_GL_READ_SSBO : l->image_inputs ? TGL_GL_READ_IMAGE : TGL_GL_READ_TEXELS;
}

/* Sets bind up for read r, its texels of `format` (GL_R32F, GL_RGBA32F) unless r is SSBO loads. */
static inline void tgl_gl_bind_read(tgl_gl_binding *bind, tgl_gl_read r, GLenum format)
{
    bind->texture_format = r == TGL_GL_READ_SSBO ? 0 : format;
    bind->texture_image = r == TGL_GL_READ_IMAGE;
}

/* Binds the windows, issues the barriers the hazards need, runs `groups` workgroups of program
 * (split over a 2-D grid when the x limit is exceeded), and counts the dispatch for flushing.
 * The kernel derives its linear group index from gl_WorkGroupID and gl_NumWorkGroups. */
tgl_status tgl_gl_dispatch(tgl_backend *b, GLuint program, const tgl_gl_binding *bind, int nbind,
                           uint64_t groups);
/* The same with the grid given: gx x gy x gz workgroups, each within the device's limits. */
tgl_status tgl_gl_dispatch_grid(tgl_backend *b, GLuint program, const tgl_gl_binding *bind, int nbind,
                                uint32_t gx, uint32_t gy, uint32_t gz);
/* The binding for `bytes` at v: the window starts at v's offset rounded down to the SSBO offset
 * alignment (*pad gets the bytes skipped) and ends rounded up to 16 bytes where the buffer
 * allows, so vec4 views of it are whole. */
tgl_gl_binding tgl_gl_window(tgl_backend *b, tgl__view v, size_t bytes, int writes, size_t *pad);
/* The same with the window's start aligned to `align` (a power of two, at least the SSBO one). */
tgl_gl_binding tgl_gl_window_aligned(tgl__view v, size_t bytes, int writes, size_t align, size_t *pad);
/* Bytes per texel of a buffer texture format (GL_R32F, GL_RGBA32UI, ...). */
size_t tgl_gl_texel_bytes(GLenum format);
/* A read-only window of `bytes` at v that may also be read as a buffer texture of `format`: its
 * start aligned for both (tgl_gl_window_align), *pad the bytes skipped. 0 where the window
 * passes the SSBO block limit or holds more texels than the device's limit (read the operand
 * through the storage block instead); *bind and *pad are then unset. */
int tgl_gl_texture_window(const tgl_gl_limits *l, tgl__view v, size_t bytes, GLenum format, tgl_gl_binding *bind,
                          size_t *pad);
/* Floating-point operations one dispatch may hold so that it runs for about TGL_MAX_DISPATCH_MS
 * at most on this device (from limits.gflops_floor); 0 when there is no such bound. */
double tgl_gl_dispatch_flops(tgl_backend *b);
/* Largest element count whose window fits GL_MAX_SHADER_STORAGE_BLOCK_SIZE. */
size_t tgl_gl_max_window_elems(const tgl_gl_limits *l, size_t elem_size);
/* A buffer the backend keeps in *slot, replaced by a new one of `bytes` when smaller or absent
 * (contents undefined then). Counted in b->mem_scratch: growing past TGL_MAX_MEMORY (beside the
 * live allocations) fails with TGL_ERR_OUT_OF_MEMORY, the message naming `what` the buffer is
 * for ("tgl_conv2d's im2col columns"). */
tgl_status tgl_gl_grow(tgl_backend *b, tgl_gl_buffer **slot, size_t bytes, const char *what);
/* tgl_gl_grow, and a new buffer is zeroed (a slot whose words must be zero between calls). When
 * the zeroing fails the buffer is given back, so no later call finds words it cannot trust. */
tgl_status tgl_gl_grow_zeroed(tgl_backend *b, tgl_gl_buffer **slot, size_t bytes, const char *what);
/* Gives back the kept buffer in *slot (if any) and leaves it NULL. */
void tgl_gl_drop(tgl_backend *b, tgl_gl_buffer **slot);
/* The bytes tgl_gl_grow(b, &slot, bytes) would add to mem_scratch: paths with a way round a
 * buffer that TGL_MAX_MEMORY has no room for ask tgl__within_budget first. */
size_t tgl_gl_grow_extra(const tgl_gl_buffer *slot, size_t bytes);
/* Gives back the kept buffers that hold nothing between calls (vtable release_scratch). */
void tgl_gl_release_scratch(tgl_backend *b);
/* The backend's scratch buffer, grown to at least `bytes` (contents undefined) for `what`
 * (tgl_gl_grow's). */
tgl_status tgl_gl_scratch(tgl_backend *b, size_t bytes, const char *what, tgl_gl_buffer **out);
/* Before a transfer touches buf: waits for queued dispatches on it when the transfer writes
 * it, else issues the buffer-update barrier its pending writers need. */
tgl_status tgl_gl_before_transfer(tgl_backend *b, tgl_gl_buffer *buf, int writes);
/* After a GL transfer command that nothing waited for (a glCopyBufferSubData from `from` into
 * `to`, either NULL for a staging buffer; on GPUs a glBufferSubData into `to`): it counts as
 * queued work reading `from` and writing `to`, so a later transfer into or from them waits for
 * it (tgl_gl_before_transfer). NVIDIA's driver (580) may write a glBufferSubData into a buffer
 * from the host at once while earlier commands that write the same buffer (a copy, or an
 * earlier glBufferSubData it queued on the GPU because a dispatch still used the buffer) have
 * yet to run; they then land on top of it (docs/internals.md, "Transfers"). */
void tgl_gl_note_copy(tgl_backend *b, tgl_gl_buffer *from, tgl_gl_buffer *to);
tgl_status tgl_gl_finish(tgl_backend *b);
/* Waits (at most TGL_SYNC_TIMEOUT_MS) for everything queued; `who` names the caller in errors. */
tgl_status tgl_gl_wait_idle(tgl_backend *b, const char *who);
/* Waits likewise for `fence` alone (flushing the commands before it), then deletes it. */
tgl_status tgl_gl_wait_sync(tgl_backend *b, GLsync fence, const char *who);

/* ---- TGL_DEBUG=1 barrier audit (gl_barrier_audit.c) ---- */
/* Records a glMemoryBarrier really issued. */
void tgl_gl_audit_barrier(tgl_backend *b, GLbitfield bits);
/* TGL_ERR_INTERNAL (logged) when a binding or transfer meets an unguarded hazard. */
tgl_status tgl_gl_audit_dispatch(tgl_backend *b, const tgl_gl_binding *bind, int nbind);
tgl_status tgl_gl_audit_transfer(tgl_backend *b, const tgl_gl_buffer *buf, int writes);

/* ---- ops ---- */
tgl_status tgl_gl_unary(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n);
tgl_status tgl_gl_binary(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb, tgl__view out,
                         size_t n);
tgl_status tgl_gl_reduce(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                         size_t len, size_t inner);
tgl_status tgl_gl_arg_reduce(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                             size_t len, size_t inner);
tgl_status tgl_gl_rows(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                       size_t rows, size_t cols, float eps);
void tgl_gl_rows_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
void tgl_gl_reduce_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* The element-wise kernels (gl_elementwise.c) and one run of one: the op (for the log), the
 * kernel, its op selector (gl_elementwise.c's numbering), tgl_map's generated expression (NULL
 * for the others), the operands (v[0..nv-2] read, v[nv-1] written) and float parameters. */
typedef enum {
    TGL_GL_EW_UNARY, TGL_GL_EW_BINARY, TGL_GL_EW_SCALE_ADD, TGL_GL_EW_FILL, TGL_GL_EW_COPY, TGL_GL_EW_MAP,
    TGL_GL_EW_KERNELS
} tgl_gl_ew_kernel;
#define TGL_GL_EW_OPERANDS 9 /* tgl_map: 8 inputs and the output */
typedef struct tgl_gl_ew_run {
    const char *op_name;
    tgl_gl_ew_kernel kernel;
    uint32_t op;
    const char *generated;
    tgl__view v[TGL_GL_EW_OPERANDS];
    int nv;
    float params[2];
    int nparams;
    const float *nums; /* tgl_map's numbers, the uniform array at LOC_MAP_NUM0 */
    int n_nums;
} tgl_gl_ew_run;
/* Runs an element-wise kernel (bindings 0..nv-1, the last written; uniforms: 0 the count,
 * 1..nv the operands' offsets, 8.. float params) over n elements, vec4 where aligned. */
tgl_status tgl_gl_run_elementwise(tgl_backend *b, const tgl_gl_ew_run *r, size_t n);
tgl_status tgl_gl_fill(tgl_backend *b, tgl__view out, float value, size_t n);
tgl_status tgl_gl_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n);
tgl_status tgl_gl_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n);
void tgl_gl_cast_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_rope(tgl_backend *b, tgl__view in, tgl__view out, size_t rows, size_t seq, size_t heads,
                       size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode);
tgl_status tgl_gl_rope_t(tgl_backend *b, const tgl__rope_t *r);
tgl_status tgl_gl_gather_rows_t(tgl_backend *b, const tgl__tew *check, const tgl__gather_w *g, uint64_t *bad_pos,
                                int32_t *bad_value);
tgl_status tgl_gl_gather_rows(tgl_backend *b, tgl__view table, tgl__view ids, tgl__view out, size_t table_rows,
                              size_t cols, size_t n_ids, size_t *bad_pos, int32_t *bad_id);
void tgl_gl_llm_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_strided(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s);
void tgl_gl_shape_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* A permute by glsl/shape/transpose.comp where limits.transpose and the shapes allow (*done 1);
 * else nothing is run and *done is 0. */
tgl_status tgl_gl_transpose(tgl_backend *b, tgl__view a, tgl__view out, const tgl__strided *s, int *done);
void tgl_gl_transpose_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_tensor_ewise(tgl_backend *b, const tgl__tew *e);
/* The window of v (an operand over `ndim` dims) over the box [lo, lo + ext): its view at the
 * box's lowest element, base the box origin's elements past it, span the elements reached. */
tgl__tensor_view tgl_gl_sub_view(const tgl__tensor_view *v, size_t ndim, const size_t *lo, const size_t *ext);
/* vtable->gather: a fill of the status word, the CHECK_INDEX pass into it, the GATHER pass that
 * writes only while the word says no index was bad, then a 4-byte read of the word. */
tgl_status tgl_gl_gather(tgl_backend *b, const tgl__tew *check, const tgl__tew *e, uint64_t *bad_pos,
                         int32_t *bad_value);
/* The same check alone (tgl_gl_scatter's first step): the pass into a fresh status word, then
 * the read. */
tgl_status tgl_gl_check_index(tgl_backend *b, const tgl__tew *check, uint64_t *bad_pos, int32_t *bad_value);
/* A fresh status word for an index check (0xFFFFFFFF, which the check lowers to the first bad
 * position): the next slot of gl->status, its binding (16 bytes at an SSBO-aligned offset) in
 * *slot. The slots are reset together, by one fill dispatch when they run out, so a check is
 * not also a dispatch clearing its word. */
tgl_status tgl_gl_status_slot(tgl_backend *b, tgl_gl_binding *slot);
/* The bounding box [lo, lo + ext) of the row-major indices [i0, i1) (i1 > i0) of `shape`: the
 * dims outside the first that changes fixed, that one spanning the run, those inside it whole. */
void tgl_gl_run_box(size_t ndim, const size_t *shape, size_t i0, size_t i1, size_t *lo, size_t *ext);
void tgl_gl_tensor_ewise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_reduce_t(tgl_backend *b, const tgl__rdt *r);
void tgl_gl_reduce_t_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* vtable->compact (glsl/tensor/compact.comp): an invocation per element of the index space, cut
 * into runs whose windows fit, each run's places written a window of out at a time. */
tgl_status tgl_gl_compact(tgl_backend *b, const tgl__compact *c);
void tgl_gl_compact_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* vtable->scatter (glsl/tensor/scatter.comp): the index check, then the passes (gl_scatter.c). */
tgl_status tgl_gl_scatter(tgl_backend *b, const tgl__tew *check, const tgl__scatter *s, uint64_t *bad_pos,
                          int32_t *bad_value);
/* vtable->sort (glsl/tensor/sort.comp): groups of lines, a bitonic network over (key, position). */
tgl_status tgl_gl_sort(tgl_backend *b, const tgl__sort *s);
uint64_t tgl_gl_sort_temp_bytes(tgl_backend *b, const tgl__sort *s);
/* Whether tgl_topk of k of lines of len selects on GL (no pairs in memory, so no line is refused
 * for its pairs' bytes) rather than sorting them; test_sort's refusal rule reads it. */
int tgl_gl_topk_selects(const tgl_gl_limits *l, size_t len, size_t k);
/* Digits a radix pass of tgl_sort sorts by on this device (gl_sort.c): 256 where its passes
 * take 8-bit digits (the profile's radix_bits and the shared memory they need), else 16. */
unsigned tgl_gl_radix_digits(const tgl_gl_limits *l);
void tgl_gl_sort_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
void tgl_gl_scatter_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* vtable->interpolate (glsl/conv/interpolate.comp): an invocation per output pixel, slabs of
 * whole planes whose windows fit. */
tgl_status tgl_gl_interpolate(tgl_backend *b, const tgl__interpolate *p);
/* vtable->adaptive_pool2d (glsl/conv/pool2d.comp's ADAPTIVE variants, gl_pool2d.c). */
tgl_status tgl_gl_adaptive_pool2d(tgl_backend *b, const tgl__pool2d *p);
void tgl_gl_interpolate_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_map(tgl_backend *b, const tgl_expr *e, const tgl__view *inputs, size_t n_inputs, tgl__view out,
                      size_t n);
/* tgl_map_t on the element-wise descriptor runner (gl_tensor_ewise.c cuts out's index space into
 * boxes whose windows fit; gl_map.c's glsl/tensor/map.comp runs each): begin generates the
 * expression's kernel text once per call (TGL_ERR_UNSUPPORTED when it reads more inputs than
 * the device's storage blocks allow), box dispatches one box (words: out is dense with elements
 * below 4 bytes; linear: every operand is dense), end frees the text. */
typedef struct tgl_gl_map_t {
    const tgl__tew *e;
    char *generated;
    int used;                          /* inputs the expression reads, bound in order */
    int slot[TGL_EXPR_MAX_INPUTS];     /* input k -> its binding */
    GLuint nums[TGL_EXPR_MAX_NODES];   /* the numbers' bits (f32, or i32 for integer literals) */
    int n_nums;
    int itof;                          /* the expression converts an i32 node (u_zero is live) */
    GLuint prog[2][2];                 /* by WORDS and LINEAR; 0 until a box needs it */
} tgl_gl_map_t;
tgl_status tgl_gl_map_t_begin(tgl_backend *b, const tgl__tew *e, tgl_gl_map_t *m);
tgl_status tgl_gl_map_t_box(tgl_backend *b, tgl_gl_map_t *m, const tgl__tensor_view *out,
                            const tgl__tensor_view *in, const size_t *shape, size_t n, int words, int linear);
void tgl_gl_map_t_end(tgl_gl_map_t *m);
void tgl_gl_map_t_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_gemm(tgl_backend *b, const tgl__gemm *g);
void tgl_gl_gemm_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_matvec(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols);
/* The same with tgl_gemm_fused's epilogue (NULL none; cols > 0), the bias indexed by the row. */
tgl_status tgl_gl_matvec_epilogue(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols,
                                  const tgl__gemm *epilogue);
/* tgl_gemm_fused's epilogue for a dispatch of program prog over columns j0 .. j0 + n - 1 of g's
 * product (gl_epilogue.c): sets glsl/common/epilogue.glsl's uniforms and returns binding 3, the
 * bias's window, or without a bias stand_in (any live buffer) read-only, never read. */
tgl_gl_binding tgl_gl_epilogue(tgl_backend *b, GLuint prog, const tgl__gemm *g, size_t j0, size_t n,
                               tgl_gl_binding stand_in);
void tgl_gl_matvec_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_attention(tgl_backend *b, const tgl__attention *a);
void tgl_gl_attention_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
tgl_status tgl_gl_conv2d(tgl_backend *b, const tgl__conv2d *c);
tgl_status tgl_gl_pool2d(tgl_backend *b, const tgl__pool2d *p);
/* The NCHW f32 plane kernels' dispatch (pool2d.comp, interpolate.comp; gl_pool2d.c): planes of
 * in_plane floats in, out_plane out (and, where indices.buf is set, i32s laid out as out), run in
 * slabs of `per` planes whose windows fit, an invocation per output element, through the
 * kernels' shared LOC_POOL_N .. LOC_POOL_I_OFF locations. */
typedef struct tgl_gl_slabs {
    tgl__view in, out, indices;
    size_t planes, in_plane, out_plane, per;
} tgl_gl_slabs;
/* Planes per slab: the most whose windows fit and whose counts stay in 32 bits; 0 when one plane
 * exceeds the SSBO block limit. */
size_t tgl_gl_slab_planes(const tgl_gl_limits *l, size_t in_plane, size_t out_plane);
tgl_status tgl_gl_run_slabs(tgl_backend *b, GLuint prog, const tgl_gl_slabs *s);
void tgl_gl_pool2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
void tgl_gl_conv2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* vtable->conv_transpose2d (glsl/conv/conv_transpose2d.comp): an invocation per output element,
 * slabs of whole images. */
tgl_status tgl_gl_conv_transpose2d(tgl_backend *b, const tgl__conv_transpose2d *c);
void tgl_gl_conv_transpose2d_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* tgl_matvec_t, tgl_quantize and tgl_dequantize (gl_quant.c). */
tgl_status tgl_gl_matvec_t(tgl_backend *b, const tgl__matvec_t *m);
tgl_status tgl_gl_quantize(tgl_backend *b, const tgl__quant *q);
void tgl_gl_quant_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* Driver checks at open (gl_driver_check.c): TGL_ERR_NO_DEVICE, naming the bug, where the
 * device is known to compute wrong results; the kernels they run. */
tgl_status tgl_gl_driver_check(tgl_backend *b);
void tgl_gl_check_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx);
/* Test hook, process-wide, read by every later tgl_open: 0 runs the checks on the renderers they
 * are for, 1 on every renderer, 2 reports the bug without running them. */
void tgl_gl_test_driver_check(int mode);
/* The attention kernels: flash_reg (llvmpipe), flash (shared memory; flash_shuffle or its
 * SUBGROUP_XOR variants where subgroups shuffle), decode + combine (or decode merging its own
 * chunks: MERGE). The last three are test hooks' paths, to keep every form covered whatever the
 * device would choose: flash.comp without subgroup operations even where the device has them,
 * and decode with its chunks merged by MERGE wherever it can and by the combine pass. */
enum {
    TGL_GL_ATTENTION_REG,
    TGL_GL_ATTENTION_FLASH,
    TGL_GL_ATTENTION_DECODE,
    TGL_GL_ATTENTION_FLASH_NO_SUBGROUPS,
    TGL_GL_ATTENTION_DECODE_MERGE,
    TGL_GL_ATTENTION_DECODE_COMBINE
};
/* Test hook: forces an attention path (-1: by device and shape). */
void tgl_gl_test_force_attention(tgl_backend *b, int path);
/* Test hook: flash_reg cuts the keys into chunks of `keys` (a multiple of 16) merged by a second
 * pass, as it does past llvmpipe's loop limit (0: only there). */
void tgl_gl_test_attention_chunk_keys(tgl_backend *b, size_t keys);
/* Test hook: 1 sends word-aligned tgl_copy_dtod through the copy kernel, 0 through
 * glCopyBufferSubData (the per-renderer choice is made at open). */
void tgl_gl_test_force_copy_kernel(tgl_backend *b, int on);
/* Test hook: transfers through staging buffers (GPUs' way) on or off. */
void tgl_gl_test_force_transfer_staging(tgl_backend *b, int on);
/* Test hook: readback_mapped on or off; 0 (nothing changed) where the device cannot map persistently. */
int tgl_gl_test_force_readback_mapped(tgl_backend *b, int on);
/* Tests: the host side of transfers on this many threads (1: the calling thread alone). */
void tgl_gl_test_set_transfer_threads(tgl_backend *b, unsigned threads);
/* Test hook: the number of conv2d kernel configurations, and forcing one (-1: by shape). */
size_t tgl_gl_conv2d_config_count(void);
void tgl_gl_test_force_conv2d(tgl_backend *b, int config);
/* ... and the number of split-K ranges of the tiled kernels (0: by shape; 1: never split). */
void tgl_gl_test_force_conv2d_splits(tgl_backend *b, int splits);
/* Tests: how many tgl_conv2d calls on b ran as Winograd (conv_winograd) F(m x m, 3x3), m 2 or 4. */
uint64_t tgl_gl_test_conv2d_winograd_calls(tgl_backend *b, int m);
/* Test hook: split-K ranges of sgemm where it may split (one f32 product, beta == 0, ldc == n;
 * 0: by shape; 1: never). */
void tgl_gl_test_force_gemm_splits(tgl_backend *b, int splits);
void tgl_gl_elementwise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines),
                                 void *ctx);

#endif
