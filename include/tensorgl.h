/*
 * tensorgl — tensor operations as OpenGL 4.3 / OpenGL ES 3.1 compute shaders over SSBOs,
 * from a headless EGL context, with a CPU reference backend behind the same API.
 *
 * Conventions used by every function below unless its comment says otherwise:
 *  - Functions return tgl_status: TGL_OK (0) or a negative error. After an error,
 *    tgl_last_error(b) names the argument or step that failed, and no buffer was changed.
 *  - Device memory is addressed by tgl_ptr, an opaque 64-bit value returned by tgl_alloc.
 *    p + k (bytes) addresses byte k of the same allocation, like a CUDA device pointer.
 *    0 is the null pointer.
 *  - f32 operands must be 4-byte aligned (p % 4 == 0 relative to the allocation's base).
 *  - Sizes are in elements unless the name says bytes. A size of 0 is a no-op returning TGL_OK.
 *  - Ops are asynchronous: they return once queued. tgl_copy_dtoh and tgl_synchronize wait.
 *
 * Thread safety: a backend is used by one thread at a time (hand it over with tgl_detach, or
 * by ending the thread); different backends may be used from different threads at once. tgl_status_string and tgl_set_log_callback may be called
 * from any thread.
 */
#ifndef TENSORGL_H
#define TENSORGL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TGL_VERSION_MAJOR 0
#define TGL_VERSION_MINOR 1
#define TGL_VERSION_PATCH 0

#if defined(_WIN32)
#  define TGL_API
#elif defined(TGL_BUILDING_LIBRARY) && defined(__GNUC__)
#  define TGL_API __attribute__((visibility("default")))
#else
#  define TGL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The status codes, in contract order (values count down from 0). The X-macro list keeps the
 * enum and tgl_status_string in step. */
#define TGL_STATUS_MAP(X)                                                                   \
    X(TGL_OK, 0, "success")                                                                 \
    X(TGL_ERR_INVALID_ARGUMENT, -1, "invalid argument")                                     \
    X(TGL_ERR_INVALID_POINTER, -2, "invalid device pointer")                                \
    X(TGL_ERR_OUT_OF_MEMORY, -3, "out of memory")                                           \
    X(TGL_ERR_UNSUPPORTED, -4, "unsupported by this backend or device")                     \
    X(TGL_ERR_NO_DEVICE, -5, "no usable device")                                            \
    X(TGL_ERR_SHADER, -6, "kernel failed to compile or link")                               \
    X(TGL_ERR_DEVICE_LOST, -7, "device lost")                                               \
    X(TGL_ERR_TIMEOUT, -8, "timed out")                                                     \
    X(TGL_ERR_IO, -9, "I/O error")                                                          \
    X(TGL_ERR_INTERNAL, -10, "internal error")

typedef enum tgl_status {
#define TGL__STATUS_ENUM(name, value, text) name = (value),
    TGL_STATUS_MAP(TGL__STATUS_ENUM)
#undef TGL__STATUS_ENUM
} tgl_status;

/* One backend per EGL context (or CPU instance). Opaque. */
typedef struct tgl_backend tgl_backend;

/* Device address: allocation + byte offset; 0 is null. */
typedef uint64_t tgl_ptr;

typedef enum { TGL_BACKEND_AUTO = 0, TGL_BACKEND_GL, TGL_BACKEND_CPU } tgl_backend_kind;

/* Flags for tgl_options.flags. */
#define TGL_FLAG_DEBUG 1u /* debug GL context; KHR_debug messages go to the log (as TGL_DEBUG=1) */
#define TGL_FLAG_SELF_TEST 2u /* GL: at open, one small call of each op family on the device and on
                                 the CPU backend, outputs compared; a device that gets one wrong (or
                                 fails it) is refused: TGL_ERR_NO_DEVICE naming the op, and
                                 TGL_BACKEND_AUTO falls back to the CPU (as TGL_SELF_TEST=1; 14
                                 kernels: seconds on llvmpipe with cold caches, under one warm) */

/* Options for tgl_open. Zero means "default"; environment variables fill what is zero:
 *   kind   <- TGL_BACKEND=auto|gl|cpu   (auto: GL, falling back to CPU when no GL context works)
 *   device <- TGL_DEVICE=N              (index among EGL devices; 0 = first; TGL_DEVICE=text
 *                                        picks the first device whose name, driver or DRM node
 *                                        contains it: see tgl_list_devices)
 *   flags  <- TGL_DEBUG=1 sets TGL_FLAG_DEBUG, TGL_SELF_TEST=1 TGL_FLAG_SELF_TEST
 * Further variables read by tgl_open: TGL_API=gl|gles (which GL API to try first; without it,
 * desktop GL 4.3 core and then ES 3.1, logging why when it falls back to ES),
 * TGL_MAX_TASKS (dispatches between flushes), TGL_SYNC_TIMEOUT_MS (tgl_synchronize's limit),
 * TGL_MAX_DISPATCH_MS (GL: GEMM, attention and conv2d split so one dispatch holds about this many
 * ms of work at a low estimate of the device's rate, inside display watchdogs; default 200, 0
 * off), TGL_LOG=path (append log lines to a file instead of stderr), TGL_CACHE_DIR=dir (where linked
 * programs are kept between runs; default $XDG_CACHE_HOME/tensorgl or ~/.cache/tensorgl; empty
 * turns the cache off), TGL_MAX_MEMORY=bytes (a budget for the device memory tensorgl holds: the live
 * allocations, an op's temporary buffer while it runs (tgl_scatter, tgl_sort, ...), and the GL
 * backend's working buffers kept between calls (split-K partial outputs, conv_im2col's im2col and
 * products, conv_winograd's transformed filter, tiles and products, reduction partials, rope tables, decode attention's chunk counters); tgl_alloc past it
 * fails with TGL_ERR_OUT_OF_MEMORY once the kept working buffers that hold nothing between calls
 * have been given back; a tgl_gemm or tgl_conv2d whose working buffers find no room runs without
 * them (no split-K, no im2col, no Winograd: same results, other summation order), as does decode attention
 * without its chunk counters (a second pass merges its chunks); other ops whose working buffer
 * finds no room fail with
 * TGL_ERR_OUT_OF_MEMORY, their outputs untouched), TGL_TRACE=dir (tgl_trace_start), TGL_PROFILE=1
 * (tgl_profile_start, and the table on stderr at tgl_close), TGL_SHADER=glsl|spirv (GL kernels
 * from GLSL source, the default, or from the SPIR-V modules `make spirv` builds, through
 * GL_ARB_gl_spirv: desktop GL only), TGL_SPIRV_DIR=dir (where those modules are; default
 * tensorgl-spirv beside the shared library, where `make install-spirv` puts them),
 * TGL_LIMITS=gl43-min|es31-min (GL: the device's limits cut to the least that specification
 * allows, to run as on a minimal part; tgl_device_info reports the limits in force). */
typedef struct tgl_options {
    tgl_backend_kind kind;
    int device;
    unsigned flags;
} tgl_options;

/* Opens a backend.
 *   opts: NULL or zero fields for defaults (see tgl_options).
 *   out:  receives the backend; set to NULL on failure.
 * With TGL_BACKEND_AUTO, a GL failure falls back to the CPU backend (not where a device was named,
 * by TGL_DEVICE or opts->device, and cannot be had: TGL_ERR_NO_DEVICE); the reason stays readable
 * through tgl_last_error(b) and in tgl_device_info's fallback_reason.
 * Errors: TGL_ERR_INVALID_ARGUMENT (out NULL, bad kind, flags or environment value),
 *   TGL_ERR_NO_DEVICE (explicit GL request that failed; the message names the step: no EGL,
 *   no display, no GL >= 4.3 core / ES 3.1 context, no compute shaders, or a driver check that
 *   found the device computing wrong results: zink on lavapipe in Mesa 25.0 runs stale shader
 *   variants, or TGL_FLAG_SELF_TEST's self-test; with TGL_BACKEND_AUTO each of these falls back
 *   to the CPU backend),
 *   TGL_ERR_OUT_OF_MEMORY, TGL_ERR_IO (TGL_LOG cannot be opened; TGL_SHADER=spirv without
 *   modules in the directory), TGL_ERR_UNSUPPORTED (TGL_SHADER=spirv on OpenGL ES or a driver
 *   without GL_ARB_gl_spirv). These two TGL_SHADER=spirv failures fail TGL_BACKEND_AUTO as well:
 *   SPIR-V was asked for, and falling back to the CPU would hide the broken setup. tgl_last_error(NULL) gives
 *   the detail of the calling thread's last failed tgl_open.
 * Thread safety: any thread; the backend then belongs to one thread at a time.
 * Example: tgl_options o = {.kind = TGL_BACKEND_CPU}; tgl_backend *b;
 *          if (tgl_open(&o, &b)) puts(tgl_last_error(NULL)); */
TGL_API tgl_status tgl_open(const tgl_options *opts, tgl_backend **out);

/* Waits for pending work, frees every allocation and the context. NULL-safe.
 * Example: tgl_close(b); b = NULL; */
TGL_API void tgl_close(tgl_backend *b);

/* "gl" or "cpu" ("" for NULL).
 * Example: printf("running on %s\n", tgl_backend_name(b)); */
TGL_API const char *tgl_backend_name(const tgl_backend *b);

/* A static English description of s; "unknown status" for values outside the enum.
 * Example: fprintf(stderr, "%s: %s\n", tgl_status_string(st), tgl_last_error(b)); */
TGL_API const char *tgl_status_string(tgl_status s);

/* Detail of the last failure on b (or, for b == NULL, of the calling thread's last failed call
 * that has no backend: tgl_open, tgl_broadcast_shape, tgl_conv2d_output_size,
 * tgl_pool2d_output_size, a call passed a NULL backend). "" when nothing failed. The string stays valid until the next call on b.
 * Example: if (tgl_alloc(b, bytes, &p)) fprintf(stderr, "alloc: %s\n", tgl_last_error(b)); */
TGL_API const char *tgl_last_error(const tgl_backend *b);

/* What the backend runs on and the limits ops depend on. A struct tag without a typedef, like
 * POSIX's struct stat, so the function can carry the same name. */
struct tgl_device_info {
    char backend[8];          /* "gl" or "cpu" */
    char api[16];             /* "OpenGL", "OpenGL ES" or "C" */
    char version[128];        /* GL_VERSION, or the library version for the CPU backend */
    char glsl_version[64];    /* GL_SHADING_LANGUAGE_VERSION; "" on CPU */
    char vendor[128];
    char renderer[256];
    char egl_path[64];        /* which step of the EGL ladder won, e.g. "EGL_MESA_platform_surfaceless" */
    char egl_version[64];     /* EGL vendor and version; "" on CPU */
    char fallback_reason[512];/* why TGL_BACKEND_AUTO fell back to the CPU; "" otherwise */
    int robust;               /* 1: context has reset notification (device loss is detected) */
    int debug;                /* 1: debug context with KHR_debug output */
    uint64_t max_ssbo_block_size;      /* GL_MAX_SHADER_STORAGE_BLOCK_SIZE (bytes) */
    uint64_t ssbo_offset_alignment;    /* GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT (bytes) */
    uint32_t max_workgroup_size[3];    /* GL_MAX_COMPUTE_WORK_GROUP_SIZE */
    uint32_t max_workgroup_count[3];   /* GL_MAX_COMPUTE_WORK_GROUP_COUNT */
    uint32_t max_workgroup_invocations;/* GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS */
    uint64_t max_shared_memory;        /* GL_MAX_COMPUTE_SHARED_MEMORY_SIZE (bytes) */
    uint32_t workgroup_size;           /* the 1-D workgroup size of element-wise kernels */
    uint64_t device_memory;            /* bytes of device memory the driver reports
                                          (GL_NVX_gpu_memory_info, also asked of NVIDIA's ES
                                          contexts, which answer without listing it;
                                          GL_ATI_meminfo), or physical memory for the CPU
                                          backend; 0 = unknown */
    uint32_t reduce_workgroup_size;    /* ... of kernels that reduce within a workgroup */
    char shaders[16];                  /* what GL kernels are built from: "GLSL", or "SPIR-V"
                                          (TGL_SHADER=spirv; tgl_map's kernels stay GLSL);
                                          "" on CPU */
    uint32_t max_storage_blocks;       /* GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS: storage buffers
                                          one kernel may bind (GL 4.3 guarantees 8, ES 3.1 4);
                                          a tgl_map kernel binds up to its inputs + 1 (more
                                          inputs run in stages); 0 on CPU */
};

/* Fills *info. Errors: TGL_ERR_INVALID_ARGUMENT (b or info NULL).
 * Example: struct tgl_device_info info; tgl_device_info(b, &info);
 *          printf("%s on %s\n", info.api, info.renderer); */
TGL_API tgl_status tgl_device_info(tgl_backend *b, struct tgl_device_info *info);

/* One EGL device, as tgl_list_devices describes it. */
struct tgl_device_entry {
    int index;           /* what TGL_DEVICE=N and tgl_options.device take */
    int software;        /* 1: a software renderer (EGL_MESA_device_software, e.g. llvmpipe) */
    char name[256];      /* GL_RENDERER of a context made on it; "" when none could be made */
    char driver[128];    /* the EGL driver's vendor string, e.g. "NVIDIA" or "Mesa Project" */
    char api[16];        /* "OpenGL" (4.3 core or later), "OpenGL ES" (3.1 or later) or "" */
    char version[128];   /* GL_VERSION of that context */
    char drm_node[64];   /* DRM render node (or primary node) when the driver names one; else "" */
    char problem[256];   /* why no usable context was made; "" when api is set */
};

/* Lists the EGL devices (EGL_EXT_device_enumeration): *count receives how many there are, and
 * the first min(capacity, *count) are described into out. Each description opens a short-lived
 * context on the device (a device that cannot make one is listed with its problem), so a call
 * takes up to a few hundred ms per device; it does not touch any open backend, and the calling
 * thread's current EGL context is restored. TGL_DEVICE takes an index or a text found
 * (case-insensitively) in a device's name, driver or DRM node: `TGL_DEVICE=nvidia`.
 * Errors: TGL_ERR_INVALID_ARGUMENT (count NULL, capacity < 0, out NULL with capacity > 0),
 *   TGL_ERR_NO_DEVICE (no EGL, or EGL cannot enumerate devices; the message says which).
 * Thread safety: any thread.
 * Example: struct tgl_device_entry d[8]; int n;
 *          if (!tgl_list_devices(d, 8, &n)) printf("%d devices, first: %s\n", n, d[0].name); */
TGL_API tgl_status tgl_list_devices(struct tgl_device_entry *out, int capacity, int *count);

/* The op families, for tgl_supports. TGL_OP_GEMM covers tgl_gemm, tgl_gemm_batched and tgl_gemm_fused
 * (and, with TGL_DTYPE_F16, tgl_gemm_f16); TGL_OP_ATTENTION covers tgl_attention, tgl_attention_kv, tgl_attention_gqa and tgl_attention_t (f16 k and v);
 * TGL_OP_CONV2D tgl_conv2d and tgl_conv2d_fused; TGL_OP_CAST the two casts; TGL_OP_SOFTMAX .. TGL_OP_LAYERNORM the row-wise ops. TGL_OP_LIST(X)
 * lists them as X(ID, name) in enum order (tgl_op_name returns the name as a string). */
#define TGL_OP_LIST(X)                                                                             \
    X(UNARY, unary) X(BINARY, binary) X(BINARY_BROADCAST, binary_broadcast) X(PERMUTE, permute)      \
    X(FILL, fill) X(SCALE_ADD, scale_add) X(MAP, map) X(CAST, cast) X(REDUCE, reduce)                \
    X(ARG_REDUCE, arg_reduce) X(SOFTMAX, softmax) X(LOG_SOFTMAX, log_softmax) X(RMSNORM, rmsnorm)    \
    X(LAYERNORM, layernorm) X(ROPE, rope) X(GATHER_ROWS, gather_rows) X(GEMM, gemm) X(MATVEC, matvec) \
    X(ATTENTION, attention) X(CONV2D, conv2d) X(COPY, copy) X(COMPARE, compare) X(WHERE, where)           \
    X(UNARY_T, unary_t) X(BINARY_T, binary_t) X(CLAMP, clamp) X(FILL_T, fill_t) X(ARANGE, arange)      \
    X(CAT, cat) X(REDUCE_T, reduce_t) X(RANDOM, random) X(DROPOUT, dropout) \
    X(TRIANGLE, triangle) X(FLIP, flip) X(ROLL, roll) X(REPEAT, repeat) X(PAD, pad) X(ONE_HOT, one_hot)        \
    X(MASKED_FILL, masked_fill) X(GATHER, gather) X(INDEX_SELECT, index_select) X(POOL2D, pool2d) X(SCAN, scan)   \
    X(MASKED_SELECT, masked_select) X(NONZERO, nonzero) X(INTERPOLATE, interpolate)          \
    X(ADAPTIVE_POOL2D, adaptive_pool2d) X(SCATTER, scatter) X(SORT, sort)                           \
    X(CONV_TRANSPOSE2D, conv_transpose2d) X(QUANTIZE, quantize)
typedef enum {
#define TGL_OP_ENUM_ENTRY_(id, name) TGL_OP_##id,
    TGL_OP_LIST(TGL_OP_ENUM_ENTRY_)
#undef TGL_OP_ENUM_ENTRY_
    TGL_OP_COUNT
} tgl_op;

/* Element types an op's data may have. Half types (f16, bf16) are stored as such and computed
 * in f32; i32 arithmetic is exact; bool is one byte, read as true when non-zero and written as 0
 * or 1. The block formats are ggml's (GGUF files load as they are): blocks of 32 elements along
 * the last dim, q8_0 { binary16 d; int8_t q[32]; } (34 bytes, x[i] = q[i] * d) and q4_0
 * { binary16 d; uint8_t q[16]; } (18 bytes, x[i] = ((q[i] & 15) - 8) * d for i < 16,
 * ((q[i - 16] >> 4) - 8) * d after); they are weight operands only. */
typedef enum {
    TGL_DTYPE_F32,
    TGL_DTYPE_F16,  /* IEEE binary16 */
    TGL_DTYPE_BF16, /* bfloat16: the top 16 bits of an f32 */
    TGL_DTYPE_I32,
    TGL_DTYPE_BOOL,
    TGL_DTYPE_Q8_0,
    TGL_DTYPE_Q4_0,
    TGL_DTYPE_COUNT
} tgl_dtype;

/* How a backend runs an op on data of a type (tgl_supports). */
typedef enum {
    TGL_SUPPORT_NONE = 0,      /* the call returns TGL_ERR_UNSUPPORTED on this backend and device */
    TGL_SUPPORT_CONVERTED = 1, /* it runs, storing that type but computing in f32 or wider */
    TGL_SUPPORT_NATIVE = 2     /* it runs with arithmetic in that type (f32: every op that takes f32) */
} tgl_support;

/* Whether b runs op on data of type dtype, asked before a call so that a caller can route the
 * op elsewhere. It answers for the op as such: shape limits of the device (e.g. GL attention's
 * head_dim <= 256, one row past the SSBO block limit) are reported by the call itself. f16
 * exists for TGL_OP_GEMM (tgl_gemm_f16), TGL_OP_CAST and the descriptor ops (tgl_copy ...
 * tgl_cat, the "tensors" section below), which take the dtypes each says; the block formats
 * for TGL_OP_MATVEC (tgl_matvec_t, tgl_matvec_t_fused) and TGL_OP_QUANTIZE; other ops take f32 only. The half types
 * and the block formats answer CONVERTED where the op takes them (neither backend computes in f16 or bf16: f16 GEMM accumulates in f32, as
 * its contract says), f32, i32 and bool NATIVE. `tensorgl info` prints the table.
 * Returns TGL_SUPPORT_NONE for b NULL or op/dtype out of range.
 * Example: if (tgl_supports(b, TGL_OP_GEMM, TGL_DTYPE_F16)) tgl_gemm_f16(b, ...); */
TGL_API tgl_support tgl_supports(tgl_backend *b, tgl_op op, tgl_dtype dtype);
/* "gemm", "softmax", ...; NULL out of range. Example: puts(tgl_op_name(TGL_OP_CONV2D)); */
TGL_API const char *tgl_op_name(tgl_op op);
/* "f32", "f16", "bf16", "i32", "bool", "q8_0", "q4_0"; NULL out of range. */
TGL_API const char *tgl_dtype_name(tgl_dtype dtype);

/* Builds the device's kernels ahead of use: runs every op family once per kernel path an
 * ordinary program takes (every unary and binary op, scalar tails and vec4 bodies, reductions
 * over rows, columns, short strides and one long line, the row-wise ops with and without
 * weights, rope in both modes, gathers, broadcasts and permutes, casts, GEMM in every transpose
 * pair in f32 and f16 with and without whole-vec4 rows, batched GEMM, matvec, attention at head
 * sizes 64 and 128 (prefill with and without the mask, and decode), conv2d dense 3x3 at 64 and
 * 128 channels and over 205x205 pixels with a bias (a grid GPUs run without splitting K), 1x1,
 * depthwise and a 7x7 stride-2 stem; the first three also fused with a bias, relu and a
 * residual), pooling, on small zero-filled tensors, and waits
 * for them. The programs land in the program cache (TGL_CACHE_DIR) and the driver's own shader
 * cache, so a later process finds them built. Not covered: tgl_map expressions (one kernel per
 * expression), other attention head sizes, and the variants only huge tensors or very long rows
 * take. Takes seconds on a GPU and up to a minute on llvmpipe when both caches are cold.
 *   calls: NULL, or receives how many op calls ran.
 * Errors: TGL_ERR_INVALID_ARGUMENT (b NULL), and any error of the ops (e.g. TGL_ERR_SHADER when
 *   the driver rejects a kernel; the message names it). Allocates 16 MiB while it runs.
 * Example: unsigned n; if (!tgl_warmup(b, &n)) printf("%u kernels' calls warmed\n", n); */
TGL_API tgl_status tgl_warmup(tgl_backend *b, unsigned *calls);

/* Tunes the GEMM kernels' shapes for this device: times every candidate shape of the device's
 * kind (shared-memory tiles on GPUs, register blocks on llvmpipe) on a size x size product in
 * f32 and in f16, rejects any whose result differs from the current shape's, and keeps the
 * fastest (a candidate must beat the current one by 3%). b uses the winners from then on, and
 * they are saved next to the program cache (TGL_CACHE_DIR/tune-HASH.txt, HASH naming library
 * version, API, vendor, renderer and driver version), where every later tgl_open on the same
 * device reads them; TGL_GEMM overrides them. Without a cache directory nothing is saved.
 *   size:   0 for the default (2048 on GPUs, 512 on llvmpipe), else 64..8192.
 *   report: NULL, or where each candidate's GFLOP/s and the choice are printed.
 * Takes seconds to a minute. `tensorgl tune` runs it.
 * Errors: TGL_ERR_INVALID_ARGUMENT (b NULL, size out of range, TGL_GEMM set),
 *   TGL_ERR_UNSUPPORTED (the CPU backend: nothing to tune), TGL_ERR_IO (the file cannot be
 *   written), TGL_ERR_OUT_OF_MEMORY, the ops' errors.
 * Example: tgl_tune(b, 0, stdout); */
TGL_API tgl_status tgl_tune(tgl_backend *b, size_t size, FILE *report);

/* Log sink for messages (KHR_debug output, warnings). level: 0 debug, 1 info, 2 warning, 3 error.
 * fn == NULL restores the default (stderr, or the TGL_LOG file). Process-wide. fn may call into
 * tensorgl (this function included); it may run in several threads at once. Once this returns,
 * the previous fn runs in no thread (unless called from inside a callback, where it returns at
 * once), so its user state may be freed.
 * Example: tgl_set_log_callback(my_log, my_state); ... tgl_set_log_callback(NULL, NULL); */
typedef void (*tgl_log_fn)(void *user, int level, const char *message);
TGL_API void tgl_set_log_callback(tgl_log_fn fn, void *user);

/* ---- memory ---------------------------------------------------------------------------- */

/* Allocates bytes of device memory; *out is the allocation's base address. bytes == 0 gives
 * *out == 0 (null) and TGL_OK. Contents are undefined until written (a reused pooled block
 * holds whatever was there). GL on llvmpipe: small allocations share buffers and freed ones
 * are reused, so alloc/free in a loop creates no GL buffer after the first pass
 * (tgl_memory_info shows what is held); GPUs get a buffer per allocation.
 * Errors: TGL_ERR_INVALID_ARGUMENT (out NULL, bytes over 2^38), TGL_ERR_OUT_OF_MEMORY (the
 * device or the handle table is full; earlier allocations keep their data). Drivers that commit
 * memory lazily (NVIDIA's) accept any size: where the driver reports its memory
 * (tgl_device_info's device_memory) a larger allocation is refused here; where it reports none,
 * such an allocation may instead fail at first use.
 * Example: tgl_ptr x; tgl_status st = tgl_alloc(b, n * sizeof(float), &x); */
TGL_API tgl_status tgl_alloc(tgl_backend *b, size_t bytes, tgl_ptr *out);

/* Frees an allocation. p must be a base address from tgl_alloc; 0 is a no-op.
 * Pending work that uses p completes first. p and pointers into it are refused from then on:
 * no allocation of any backend in the process takes its address before 2^45 (allocations up
 * to 2 KiB) to 2^17 (256 GiB) more of its size class are made (docs/internals.md).
 * Errors: TGL_ERR_INVALID_POINTER (not a base address, freed already, or from another
 * backend).
 * Example: tgl_free(b, x); x = 0; */
TGL_API tgl_status tgl_free(tgl_backend *b, tgl_ptr p);

/* Copies bytes between host and device or within the device. Every range must lie inside one
 * allocation. dtoh waits for the work that writes src. dtod ranges must not overlap. The host
 * buffer is done with when htod returns. GL: the host side of a transfer of 2 MiB or more is
 * shared by up to 4 threads (one per core), started and joined inside the call.
 * Errors: TGL_ERR_INVALID_ARGUMENT (host pointer NULL, dtod ranges overlap),
 *   TGL_ERR_INVALID_POINTER (null/unknown/freed pointer, range past the allocation's end).
 * Example: tgl_copy_htod(b, x, host_in, n * 4); ...; tgl_copy_dtoh(b, host_out, y, n * 4); */
TGL_API tgl_status tgl_copy_htod(tgl_backend *b, tgl_ptr dst, const void *src, size_t bytes);
TGL_API tgl_status tgl_copy_dtoh(tgl_backend *b, void *dst, tgl_ptr src, size_t bytes);
TGL_API tgl_status tgl_copy_dtod(tgl_backend *b, tgl_ptr dst, tgl_ptr src, size_t bytes);

/* Memory accounting of a backend. A struct tag without a typedef, as tgl_device_info. */
struct tgl_memory_info {
    uint64_t in_use;           /* bytes of live allocations, as requested from tgl_alloc */
    uint64_t peak;             /* the largest in_use since tgl_open */
    uint64_t reserved;         /* bytes the backend holds: GL buffer objects, pooled ones included
                                  (small allocations share buffers, freed large ones are kept for
                                  reuse); on the CPU backend the live allocations' bytes; on both,
                                  the last temporary buffer an op used (tgl_scatter, tgl_masked_select,
                                  tgl_nonzero), kept for the next up to 1/16 of the device's memory
                                  (1/8 of TGL_MAX_MEMORY where set), given back when an allocation
                                  finds no room */
    uint64_t pooled;           /* of reserved, the bytes no live allocation uses */
    uint64_t device_total;     /* the device's memory where the driver tells (GL_NVX_gpu_memory_info,
                                  GL_ATI_meminfo), physical memory on the CPU backend; 0 = unknown */
    uint64_t device_available; /* free device memory now, where the driver tells; 0 = unknown */
};

/* Fills *info. Errors: TGL_ERR_INVALID_ARGUMENT (b or info NULL), TGL_ERR_DEVICE_LOST.
 * Example: struct tgl_memory_info m; tgl_memory_info(b, &m);
 *          printf("%llu MiB in use\n", (unsigned long long)(m.in_use >> 20)); */
TGL_API tgl_status tgl_memory_info(tgl_backend *b, struct tgl_memory_info *info);

/* Waits until every queued op and copy has finished (at most TGL_SYNC_TIMEOUT_MS).
 * Errors: TGL_ERR_TIMEOUT, TGL_ERR_DEVICE_LOST.
 * Example: tgl_status st = tgl_synchronize(b);  // TGL_ERR_TIMEOUT: the work is still running */
TGL_API tgl_status tgl_synchronize(tgl_backend *b);

/* The calling thread lets go of b, so that another thread can use it while this one lives on
 * (GL: b's context stops being current here, its queued work flushed, not waited for); b's next
 * call, on any thread, takes it. A thread that ends lets go of its backends by itself.
 * Nothing to do on the CPU backend. Errors: TGL_ERR_INVALID_ARGUMENT (b NULL),
 * TGL_ERR_DEVICE_LOST, TGL_ERR_INTERNAL (EGL refused to release the context).
 * Example: tgl_detach(b);  // then hand b to a worker thread */
TGL_API tgl_status tgl_detach(tgl_backend *b);

/* ---- element-wise ops (f32) ------------------------------------------------------------ */

/* The ops from TGL_UNARY_ERF and TGL_BINARY_ATAN2 on came with the tensor descriptors. The
 * flat tgl_unary and tgl_binary take those of them that are float ops (run by the descriptor
 * kernels); tgl_binary_broadcast and tgl_map's grammar take only the ops before them; the
 * integer and bool ops (NOT, FLOOR_DIV, AND ... SHR) and the tests ISNAN, ISINF, ISFINITE
 * (a bool out) are for tgl_unary_t and tgl_binary_t.
 * docs/ops.md gives each op's formula and dtypes. */
typedef enum { TGL_UNARY_NEG, TGL_UNARY_ABS, TGL_UNARY_EXP, TGL_UNARY_LOG, TGL_UNARY_SQRT,
               TGL_UNARY_RSQRT, TGL_UNARY_RECIP, TGL_UNARY_SQUARE, TGL_UNARY_SIN, TGL_UNARY_COS,
               TGL_UNARY_TANH, TGL_UNARY_SIGMOID, TGL_UNARY_RELU, TGL_UNARY_GELU /* tanh approx. */,
               TGL_UNARY_SILU, TGL_UNARY_FLOOR, TGL_UNARY_CEIL,
               TGL_UNARY_ERF, TGL_UNARY_GELU_ERF /* exact: x/2 (1 + erf(x/sqrt 2)) */, TGL_UNARY_LOG1P,
               TGL_UNARY_EXPM1, TGL_UNARY_ROUND /* half to even */, TGL_UNARY_TRUNC, TGL_UNARY_SIGN,
               TGL_UNARY_NOT /* i32: bitwise; bool: logical */,
               TGL_UNARY_ISNAN, TGL_UNARY_ISINF, TGL_UNARY_ISFINITE /* float in, bool out */ } tgl_unary_op;
#define TGL_UNARY_COUNT 28

typedef enum { TGL_BINARY_ADD, TGL_BINARY_SUB, TGL_BINARY_MUL, TGL_BINARY_DIV,
               TGL_BINARY_MAX, TGL_BINARY_MIN, TGL_BINARY_POW,
               TGL_BINARY_ATAN2, TGL_BINARY_FMOD /* C's fmod: the sign of a */,
               TGL_BINARY_REMAINDER /* Python's %: the sign of bb */, TGL_BINARY_FLOOR_DIV /* i32 */,
               TGL_BINARY_AND, TGL_BINARY_OR, TGL_BINARY_XOR /* i32: bitwise; bool: logical */,
               TGL_BINARY_SHL, TGL_BINARY_SHR /* i32; SHR is arithmetic */ } tgl_binary_op;
#define TGL_BINARY_COUNT 16

/* out[i] = op(in[i]) for i < n. out may equal in (in place) but must not partially overlap it.
 * Semantics are those of C's float functions (docs/ops.md lists each op's formula).
 * Errors: TGL_ERR_INVALID_ARGUMENT (op out of range, misaligned or partially overlapping
 *   operands), TGL_ERR_INVALID_POINTER (null/unknown/freed pointer, range past the end),
 *   TGL_ERR_UNSUPPORTED (an integer/bool op: NOT; tgl_binary: FLOOR_DIV, AND ... SHR).
 * Example: tgl_unary(b, TGL_UNARY_GELU, x, x, n);  // in place */
TGL_API tgl_status tgl_unary(tgl_backend *b, tgl_unary_op op, tgl_ptr in, tgl_ptr out, size_t n);

/* out[i] = a[i] op bb[i] for i < n. MAX and MIN return NaN when either input is NaN; POW
 * follows C's powf (negative bases with integer exponents included).
 * out may equal a or bb but must not partially overlap either. Errors: as tgl_unary.
 * Example: tgl_binary(b, TGL_BINARY_MUL, x, y, out, n); */
TGL_API tgl_status tgl_binary(tgl_backend *b, tgl_binary_op op, tgl_ptr a, tgl_ptr bb,
                              tgl_ptr out, size_t n);

/* Names of ops ("exp", "add", ...); NULL for values out of range.
 * Example: puts(tgl_unary_name(TGL_UNARY_SILU));  // "silu" */
TGL_API const char *tgl_unary_name(tgl_unary_op op);
TGL_API const char *tgl_binary_name(tgl_binary_op op);

#define TGL_MAX_DIMS 8

/* out[i] = expr evaluated on inputs[0..n_inputs-1] at i, in one kernel, e.g.
 * tgl_map(b, "sqrt(a*b + c)", (tgl_ptr[]){x, y, z}, 3, out, n). Inputs are named a, b, c, ...
 * (at most 8). The grammar: numbers (1, 1.5, .5, 2.5e-3: '.' whatever the process locale),
 * inputs, + - * /, unary minus, parentheses, and the
 * functions named like the unary ops (exp(x), gelu(x), ...) and binary ops (pow(x, y), max(x, y),
 * ...), plus clamp(x, lo, hi) = min(max(x, lo), hi) and select(c, x, y) = c != 0 ? x : y, and
 * the comparisons == != < <= > >= (lowest precedence, not chained; 1.0 where one holds, else 0.0,
 * NaN unordered as IEEE: only != holds; select(a > 0, a, 0)). Every node computes in f32. Each
 * function computes what the op of that name computes. The text is parsed into a tree (at most
 * 4096 bytes, 256 operations and operands, nesting 32 deep) and never pasted into GLSL; GL builds
 * and caches one kernel per distinct tree, its numbers aside (they are uniforms: a*0.5 and a*2
 * share one), and computes with IEEE semantics as the CPU backend does (a*0 is NaN for an
 * infinite a, -0 + 0 is +0: nothing is folded). out may equal an input exactly.
 * Errors: TGL_ERR_INVALID_ARGUMENT (a malformed expression: the message gives the position and
 *   what was expected; an input beyond n_inputs; n_inputs over 8; NULL; overlap),
 *   TGL_ERR_INVALID_POINTER, TGL_ERR_SHADER, TGL_ERR_OUT_OF_MEMORY (no room for the
 *   temporaries below; nothing is written).
 * GL: an expression reading more inputs than tgl_device_info's max_storage_blocks - 1 (GL 4.3
 *   guarantees 8 blocks, ES 3.1 only 4) runs in stages: each computes a subtree of at most that
 *   many inputs into a temporary of n elements (f32, or i32 for an i32 node of tgl_map_t), which
 *   later stages read; a few such temporaries are live at once. Every node computes the same
 *   operation on the same operands as in one kernel: exact operations give its bits; functions
 *   (exp, pow, ...) keep their accuracy, though a driver may round them differently in another
 *   kernel (H200: NMSE 2e-15). */
TGL_API tgl_status tgl_map(tgl_backend *b, const char *expr, const tgl_ptr *inputs, size_t n_inputs, tgl_ptr out,
                           size_t n);

/* ---- tensors: descriptors with a dtype, a shape and strides ------------------------------ */

/* A tensor in device memory, DLPack's idea in plain C. Element (i0, ..., ik) of a tensor t sits
 * at byte t.data + (i0 * strides[0] + ... + ik * strides[k]) * tgl_dtype_size(t.dtype): strides
 * count elements, a stride of 0 repeats one element along that dim (broadcast) and a negative one
 * walks backwards from data (a flip). ndim 0 is a scalar (one element); a shape with a 0 dim is
 * empty. Every element a descriptor reaches (the extreme indices, negative strides included) must
 * lie inside one allocation, or the call fails with TGL_ERR_INVALID_POINTER; data must be
 * aligned to the element size (TGL_ERR_INVALID_ARGUMENT). Block formats (q8_0, q4_0) have a last
 * dim that is a multiple of 32 with stride 1; shapes count elements, not blocks. */
typedef struct tgl_tensor {
    tgl_ptr data;                    /* address of the element at index (0, ..., 0) */
    tgl_dtype dtype;
    size_t ndim;                     /* 0 (a scalar) .. TGL_MAX_DIMS */
    size_t shape[TGL_MAX_DIMS];
    int64_t strides[TGL_MAX_DIMS];   /* in elements; 0 broadcasts, negative walks backwards */
} tgl_tensor;

/* Bytes per element of dtype: 4 for f32 and i32, 2 for f16 and bf16, 1 for bool; 0 for the
 * block formats (use tgl_tensor_bytes) and for values out of range. */
TGL_API size_t tgl_dtype_size(tgl_dtype dtype);
/* A row-major (C-contiguous) tensor of `ndim` dims at data: strides[k] is the product of the
 * dims after k. Dims past ndim are 0 in shape and strides. ndim above TGL_MAX_DIMS (or shape NULL
 * with ndim > 0) gives ndim = TGL_MAX_DIMS + 1, which every op refuses.
 * Example: tgl_tensor x = tgl_tensor_contiguous(p, TGL_DTYPE_F16, 2, (size_t[]){rows, cols}); */
TGL_API tgl_tensor tgl_tensor_contiguous(tgl_ptr data, tgl_dtype dtype, size_t ndim, const size_t *shape);
/* Elements of t (the product of its shape; 1 for ndim 0); 0 when ndim is out of range or the
 * product overflows size_t. */
TGL_API size_t tgl_tensor_numel(const tgl_tensor *t);
/* Bytes a contiguous tensor of t's dtype and shape occupies (block formats: whole blocks of the
 * last dim); 0 when that is not defined (a bad dtype or ndim, a block format whose last dim is
 * not a multiple of 32, overflow). Example: tgl_alloc(b, tgl_tensor_bytes(&x), &x.data); */
TGL_API size_t tgl_tensor_bytes(const tgl_tensor *t);

/* Copies src into dst element by element, converting between dtypes: this one op is
 * contiguous(), slice, slice_assign, expand, transpose-copy, flip-copy and cast. dst and src
 * take any strides; src is broadcast to dst's shape by NumPy's rules (dims aligned from the
 * right; a src dim of 1, or missing, repeats). Conversions: float to float rounds to nearest
 * even (f16 and bf16 overflow to infinity; f32 -> bf16 turns every NaN into 0x7FC0, as PyTorch
 * does; f32 -> f16 keeps a NaN's sign and top payload bits, quieted); float -> i32 truncates
 * toward zero and saturates at INT32_MIN / INT32_MAX, NaN -> 0; i32 -> float rounds to nearest
 * even (to the half types through f32, as PyTorch does); x -> bool is x != 0 (NaN is true, -0
 * false); bool -> x is 0 or 1. A copy to the same dtype moves the bits (NaN payloads kept), bool
 * excepted (written as 0 or 1). Block formats are not taken (TGL_ERR_UNSUPPORTED).
 * dst must not reach one element twice (a 0 stride on a dim above 1, or strides whose ranges
 * interleave); dst and src must not share bytes unless they are the same elements (same data,
 * dtype and strides: then the copy is in place). Size 0 (an empty dst) does nothing.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, ndim above TGL_MAX_DIMS, a dtype out of range, an
 *   element count or byte range that overflows, shapes that do not broadcast, a dst that reaches
 *   an element twice, overlap; the message names dst or src), TGL_ERR_INVALID_POINTER (an
 *   element out of its allocation, freed or foreign), TGL_ERR_INVALID_ARGUMENT also for data
 *   not aligned to its element size, TGL_ERR_UNSUPPORTED (a block format).
 * Example: transpose-copy a rows x cols f32 matrix into bf16, cols x rows:
 *     tgl_tensor s = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
 *     tgl_tensor d = tgl_tensor_contiguous(y, TGL_DTYPE_BF16, 2, (size_t[]){cols, rows});
 *     s.shape[0] = cols; s.shape[1] = rows; s.strides[0] = 1; s.strides[1] = (int64_t)cols;
 *     tgl_copy(b, &d, &s); */
TGL_API tgl_status tgl_copy(tgl_backend *b, const tgl_tensor *dst, const tgl_tensor *src);

/* Element-wise comparisons, bool results. */
typedef enum { TGL_COMPARE_EQ, TGL_COMPARE_NE, TGL_COMPARE_LT, TGL_COMPARE_LE, TGL_COMPARE_GT,
               TGL_COMPARE_GE } tgl_compare_op;
#define TGL_COMPARE_COUNT 6
/* "eq", "ne", "lt", "le", "gt", "ge"; NULL out of range. */
TGL_API const char *tgl_compare_name(tgl_compare_op op);

/* out = (a op bb) as bool (0 or 1), a and bb broadcast to out's shape by NumPy's rules (out's
 * shape must be the broadcast of theirs). a and bb have one dtype (f32, f16, bf16, i32 or bool;
 * tgl_copy converts first where they differ); floats compare as IEEE numbers: NaN is unequal to
 * everything (ne is true, every other op false), -0 equals +0, subnormals are kept; bool
 * compares as 0 and 1 (any non-zero byte is 1). Any strides on every operand. out must not
 * share bytes with an input, except as the same elements with the same dtype (bool inputs).
 * Errors: TGL_ERR_INVALID_ARGUMENT (op, NULL, ndim, a dtype out of range, dtypes of a and bb
 *   that differ, shapes that do not broadcast or an out shape that is not their broadcast, an
 *   out that reaches an element twice, overlap; the message names the argument),
 *   TGL_ERR_INVALID_POINTER (as tgl_copy), TGL_ERR_UNSUPPORTED (a block format, an out that
 *   is not bool).
 * Example: mask = x > 0 for an f32 tensor x and a bool tensor mask of its shape:
 *     tgl_tensor zero = tgl_tensor_contiguous(z, TGL_DTYPE_F32, 0, NULL);   // z holds 0.0f
 *     tgl_compare(b, TGL_COMPARE_GT, &x, &zero, &mask); */
TGL_API tgl_status tgl_compare(tgl_backend *b, tgl_compare_op op, const tgl_tensor *a, const tgl_tensor *bb,
                               const tgl_tensor *out);

/* out = cond ? a : bb element-wise, cond, a and bb broadcast to out's shape (which must be the
 * broadcast of theirs). cond is bool (any non-zero byte selects a); a, bb and out have one dtype
 * (f32, f16, bf16, i32 or bool), whose bits are moved as they are (bool as 0 or 1). Any strides.
 * out may be an input's elements exactly (same data, dtype and strides), otherwise shares no
 * byte with one. Errors: as tgl_compare (TGL_ERR_UNSUPPORTED for a cond that is not bool, a
 *   block format; TGL_ERR_INVALID_ARGUMENT for a, bb and out of different dtypes).
 * Example: y = where(mask, x, y) in place: tgl_where(b, &mask, &x, &y, &y); */
TGL_API tgl_status tgl_where(tgl_backend *b, const tgl_tensor *cond, const tgl_tensor *a, const tgl_tensor *bb,
                             const tgl_tensor *out);
/* out = mask ? value : in element-wise (PyTorch's masked_fill): mask (bool, any non-zero byte
 * true) and in broadcast to out's shape (which must be the broadcast of theirs); in and out of
 * one dtype (f32, f16, bf16, i32 or bool), in's bits moved as they are (bool as 0 or 1); value
 * converted to out's dtype once, as tgl_fill_t converts. Any strides; out may be in's elements
 * exactly (in place), otherwise shares no byte with in or mask.
 * Errors: as tgl_where (TGL_ERR_UNSUPPORTED for a mask that is not bool, a block format;
 *   TGL_ERR_INVALID_ARGUMENT for in and out of different dtypes).
 * Example: attention scores masked in place: tgl_masked_fill(b, &scores, &pad_mask, -INFINITY, &scores); */
TGL_API tgl_status tgl_masked_fill(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *mask, double value,
                                   const tgl_tensor *out);

/* out = op(in) element-wise over descriptors: in broadcast to out's shape (which must be the
 * broadcast of in's), any strides, in and out of one dtype. Float ops take f32, f16 and bf16
 * (half types computed in f32 and rounded back to nearest even); i32 takes NEG, ABS, SQUARE,
 * SIGN and NOT (bitwise), exact with two's complement wrap (-INT32_MIN == INT32_MIN); bool takes
 * NOT (logical). ISNAN, ISINF and ISFINITE read a float dtype and write a bool out. out may be in's elements exactly (in place), otherwise shares no byte with it.
 * Errors: as tgl_compare; TGL_ERR_UNSUPPORTED for an op the dtype does not take (naming both),
 *   TGL_ERR_INVALID_ARGUMENT for in and out of different dtypes.
 * Example: y = erf(x) for bf16 tensors: tgl_unary_t(b, TGL_UNARY_ERF, &x, &y); */
TGL_API tgl_status tgl_unary_t(tgl_backend *b, tgl_unary_op op, const tgl_tensor *in, const tgl_tensor *out);

/* out = a op bb element-wise over descriptors, a and bb broadcast to out's shape (which must
 * be the broadcast of theirs), any strides, a, bb and out of one dtype. Floats (f32, f16, bf16;
 * computed in f32): ADD ... POW as tgl_binary, ATAN2 (C's atan2, signed zeros and infinities
 * included), FMOD (exact, the sign of a), REMAINDER (a - floor(a/bb) * bb as PyTorch computes
 * it: fmod, plus bb where the signs differ). i32, exact with wrap: ADD, SUB, MUL, MAX, MIN,
 * FLOOR_DIV and REMAINDER (Python's signs: floor(a / bb), a - floor(a / bb) * bb;
 * INT32_MIN // -1 wraps to INT32_MIN; by zero: a // 0 == 0 and a % 0 == a, so that a ==
 * (a // bb) * bb + a % bb always), AND, OR, XOR, SHL and SHR (arithmetic; a count outside
 * 0..31 shifts everything out: 0, or -1 for a negative a under SHR). bool: AND, OR, XOR
 * (logical, 0 or 1). out may be an input's elements exactly, otherwise shares no byte with one.
 * Errors: as tgl_unary_t.
 * Example: q = a // bb for i32 tensors: tgl_binary_t(b, TGL_BINARY_FLOOR_DIV, &a, &bb, &q); */
TGL_API tgl_status tgl_binary_t(tgl_backend *b, tgl_binary_op op, const tgl_tensor *a, const tgl_tensor *bb,
                                const tgl_tensor *out);

/* out = min(max(x, lo), hi) element-wise (PyTorch's clamp): x, lo and hi broadcast to out's
 * shape (a 0-d lo or hi is a scalar bound), one dtype: f32, f16, bf16 (NaN in any of the three
 * gives NaN; lo > hi gives hi) or i32. out may be x's elements exactly (in place), otherwise
 * shares no byte with an input. Errors: as tgl_unary_t.
 * Example: relu6 in place: tgl_clamp(b, &x, &zero, &six, &x); */
TGL_API tgl_status tgl_clamp(tgl_backend *b, const tgl_tensor *x, const tgl_tensor *lo, const tgl_tensor *hi,
                             const tgl_tensor *out);

/* out = expr at each index of out's shape, in one kernel (in stages past the device's storage
 * blocks): tgl_map's grammar and functions over descriptors. inputs[k] (named a, b, ... in expr; at most 8) is f32, f16, bf16, i32 or bool,
 * any strides, each broadcast to out's shape by NumPy's rules; out is any of those dtypes and
 * strides (with no input, expr is a constant filling out). Types
 * follow the expression: a node computes in i32 (exact, two's complement wrap) when everything
 * it combines is i32 -- i32 and bool inputs (bool as 0 or 1), integer literals (written without
 * '.' or exponent, within i32) -- through + - * max min clamp select neg abs square relu floor
 * ceil; otherwise in f32 (half inputs exact, an i32 value rounded to the nearest f32 where it
 * meets f32). / and every other function are f32 (7 / 2 is 3.5). The comparisons == != < <= >
 * >= (lowest precedence, not chained: write (a < b) == c) give i32 1 or 0, IEEE's on f32 (NaN
 * unordered: only != holds). select(c, x, y) takes x where c is non-zero (a NaN c is non-zero).
 * The result is converted to out's dtype as tgl_copy converts (round to nearest even into
 * f16/bf16, f32 to i32 toward zero saturating with NaN -> 0, bool = non-zero). f32 nodes keep
 * IEEE semantics, nothing folded, as in tgl_map. out may be an input's elements exactly,
 * otherwise shares no byte with one.
 * Errors: as tgl_map (a malformed expr: position and what was expected; an input beyond
 *   n_inputs), as tgl_binary_t for the descriptors (shapes that do not broadcast to out's, a
 *   partial overlap, a dtype outside the five: TGL_ERR_UNSUPPORTED); past the device's storage
 *   blocks it runs in stages as tgl_map does (each temporary a dense tensor of out's shape).
 * Example: relu6 of an i32 tensor into f16: tgl_map_t(b, "clamp(a, 0, 6)", &x, 1, &y);
 *   a mask: tgl_map_t(b, "(a > 0.5) * b", (tgl_tensor[]){p, v}, 2, &out); */
TGL_API tgl_status tgl_map_t(tgl_backend *b, const char *expr, const tgl_tensor *inputs, size_t n_inputs,
                             const tgl_tensor *out);

/* Sets every element of out (any strides, any dtype but the block formats) to value, converted
 * once on the host: f32 rounds to nearest even; f16 and bf16 through f32 (as PyTorch converts a
 * Python float); i32 truncates toward zero and saturates, NaN -> 0; bool is value != 0 (NaN is
 * true). Bytes between strided elements keep theirs. out must reach no element twice.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, ndim, a dtype out of range, an out that reaches an
 *   element twice), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a block format).
 * Example: a bf16 mask of -inf: tgl_fill_t(b, &mask, -INFINITY); */
TGL_API tgl_status tgl_fill_t(tgl_backend *b, const tgl_tensor *out, double value);

/* out[i] = start + i * step for a 1-D out (any stride). Floats: start and step rounded to f32,
 * then start + (float)i * step in f32 (two roundings, never fused: PyTorch's GPU arithmetic),
 * rounded to f16/bf16 for those; i32: start and step must be integers in int32's range, the
 * values exact with two's complement wrap. Bool is not taken.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, out not 1-D, a non-integer or out-of-range start or
 *   step for i32, a stride of 0 over more than one element), TGL_ERR_INVALID_POINTER,
 *   TGL_ERR_UNSUPPORTED (bool, block formats).
 * Example: positions 0..n-1 as i32: tgl_arange(b, &pos, 0.0, 1.0); */
TGL_API tgl_status tgl_arange(tgl_backend *b, const tgl_tensor *out, double start, double step);

/* Concatenates n_inputs tensors along dim `axis` into out (PyTorch's cat): inputs[k] fills
 * out's indices offset_k .. offset_k + inputs[k].shape[axis] - 1 along axis, where offset_k is
 * the sum of the earlier inputs' extents. Every input has out's ndim (at least 1) and out's
 * extent along every other dim; the extents along axis add up to out's. An input may be empty
 * along axis (it adds nothing). Any strides on every operand (an input's 0 stride repeats its
 * element, as in tgl_copy); each input is converted to out's dtype as tgl_copy converts (any
 * dtype but the block formats). out must reach no element twice and share no byte with an input.
 * One copy runs per non-empty input, in order.
 * Errors: TGL_ERR_INVALID_ARGUMENT (inputs NULL or n_inputs 0, an ndim of 0 or above
 *   TGL_MAX_DIMS, axis not below out's ndim, an input whose ndim or other extents differ from
 *   out's, extents along axis that do not add up to out's, an out that reaches an element twice,
 *   overlap; the message names inputs[k] or out), TGL_ERR_INVALID_POINTER (as tgl_copy),
 *   TGL_ERR_UNSUPPORTED (a block format). Nothing is written unless every operand is valid.
 * Example: out (rows x (c1 + c2)) = [a | bb] for f32 a (rows x c1) and bb (rows x c2):
 *     tgl_tensor parts[2] = {a, bb};
 *     tgl_cat(b, parts, 2, 1, &out); */
TGL_API tgl_status tgl_cat(tgl_backend *b, const tgl_tensor *inputs, size_t n_inputs, size_t axis,
                           const tgl_tensor *out);

/* The upper (tgl_triu) or lower (tgl_tril) triangle of each matrix in the last two dims
 * (PyTorch's triu and tril): out[..., i, j] = in[..., i, j] where j - i >= diagonal (triu) or
 * j - i <= diagonal (tril), else 0 (false for bool); diagonal 0 is the main one, positive ones
 * lie above it. in broadcasts to out's shape (at least 2 dims), one dtype of the five (kept
 * elements as tgl_copy moves them: bits as they are, bool as 0 or 1); out may be in's elements
 * exactly, otherwise shares no byte with them.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, out of fewer than 2 dims, dtypes that differ, shapes,
 *   overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a block format; GL: a matrix dim past
 *   2^31 - 1).
 * Example: a causal mask, -inf above the diagonal and 0 elsewhere:
 *   tgl_fill_t(b, &mask, -INFINITY); tgl_triu(b, &mask, &mask, 1); */
TGL_API tgl_status tgl_triu(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, int64_t diagonal);
TGL_API tgl_status tgl_tril(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, int64_t diagonal);

/* One-hot encoding (PyTorch's F.one_hot, with TensorFlow's and JAX's rule for indices out of
 * range): out[..., c] = 1 where indices[...] == c, else 0, for c below num_classes, out's last
 * extent. indices is i32 of any strides, its shape out's without the last dim (broadcast to it
 * by NumPy's rules: a missing dim or one of 1 repeats); out any of the five dtypes (1, 1.0 or
 * true) and strides, sharing no byte with indices (but as their same elements: i32, one class).
 * An index outside [0, num_classes) gives a
 * row of zeros, where PyTorch raises: compare tgl_reduce_t's min and max of the indices first
 * where that must be an error. One pass over out.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, out of 0 dims, indices of TGL_MAX_DIMS dims, shapes,
 *   overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (indices not i32, a block format;
 *   GL: a dim past 2^31 - 1).
 * Example: class labels (batch) into a (batch x classes) f32 target: tgl_one_hot(b, &labels, &target); */
TGL_API tgl_status tgl_one_hot(tgl_backend *b, const tgl_tensor *indices, const tgl_tensor *out);

/* ---- indexing along an axis: gather, index_select (descriptors) ------------------------- */
/* PyTorch's torch.gather: out[i0, .., id, .., in] = in[i0, .., index[i0, .., id, .., in], .., in]
 * with id at `axis`. index is i32 of in's ndim (any strides, broadcast views included), no larger
 * than in along the other dims; out has index's shape and in's dtype, any strides, sharing no
 * byte with in or index. Every index must lie in [0, in's extent along axis) (no negative
 * indices, as PyTorch): the indices are checked on the device before anything is written, and
 * one outside fails the call, naming its position and value. A 0-d in, index and out are one
 * element (axis 0). The call waits for the check (GL: a 4-byte status read).
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, axis, ndim or shapes, an index out of range, overlap),
 *   TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (index not i32, a block format; GL: more than
 *   2^32 - 2 indices).
 * Example: each row's label probability, probs (batch x classes) and labels (batch x 1):
 *   tgl_gather(b, &probs, 1, &labels, &picked); */
TGL_API tgl_status tgl_gather(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *index,
                              const tgl_tensor *out);
/* PyTorch's torch.index_select: out is in with the `axis` dim replaced by the rows, columns, ...
 * that the 1-D i32 index names, in its order (repeats allowed): out's extent along axis is
 * index's, the others in's; out has in's dtype, any strides, sharing no byte with in or index.
 * Indices are checked as tgl_gather's (range [0, in's extent along axis), nothing written on a
 * bad one). One pass over out.
 * Errors: as tgl_gather's, and index not 1-D.
 * Example: rows 4, 0 and 4 of a table: tgl_index_select(b, &table, 0, &ids, &rows); */
TGL_API tgl_status tgl_index_select(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *index,
                                    const tgl_tensor *out);

/* ---- writing along an axis: scatter, index_add (descriptors) ---------------------------- */
/* How tgl_scatter combines what lands on one element of out with what it holds. */
typedef enum {
    TGL_SCATTER_SET, /* out's element replaced; of several that land on it, the last in the
                        row-major order of index wins (PyTorch leaves that choice undefined) */
    TGL_SCATTER_ADD, /* out's element plus all that land on it, rounded once (below) */
    TGL_SCATTER_MAX, /* the largest of out's element and all that land on it; NaN wins */
    TGL_SCATTER_MIN, /* the smallest; NaN wins */
    TGL_SCATTER_ADD_UNORDERED, /* ADD as PyTorch's CUDA scatter_add_: floats added one at a time
                                  in whatever order they land, so the last bits may change from
                                  run to run (below) */
    TGL_SCATTER_REDUCE_COUNT
} tgl_scatter_reduce;
/* PyTorch's out.scatter_(axis, index, src) (SET) and out.scatter_reduce_(axis, index, src, ...)
 * (ADD "sum", MAX "amax", MIN "amin", with include_self=True): gather's mirror, in place on out
 * (the arguments in gather's order: inputs, then out, which is read and written). For every
 * element of index, at coordinates (i0, .., id,
 * .., in) with id at `axis`, src[i0, .., id, .., in] lands on out[i0, .., index[i0, .., in], ..,
 * in]. index is i32 of out's ndim, no larger than src along any dim nor than out along the dims
 * but axis (any strides, broadcast views included); src has out's dtype; out shares no byte with
 * index or src and reaches each element once. Every index must lie in [0, out's extent along
 * axis): they are checked on the device before anything is written, and one outside fails the
 * call, naming its position and value (the call waits for that check). Elements nothing lands
 * on keep their bits.
 * But for ADD_UNORDERED, the result does not depend on the order in which elements land (every
 * run, both backends, bit for bit). ADD of the float dtypes sums each element's terms (out's own included) in 96-bit
 * fixed point whose unit is 2^(e - 150 - s), e the largest biased f32 exponent among them and
 * s = 71 - ceil(log2(L + 1)), L index's extent along axis; a term's bits below that unit are
 * dropped (toward zero), so the sum is within (L + 1) units of the exact one (under an ulp of
 * the largest term times 2^-39 for L below 2^16, 2^-7 at 2^32) before one rounding to out's
 * dtype, nearest even, where a running float sum drifts by up to L ulps: NaN if a NaN or both infinities land, else an infinity that
 * lands, else that sum, -0 only when every term is -0. i32 ADD wraps; bool ADD and MAX are
 * logical or, MIN logical and. MAX and MIN order -0 below +0. Out's own NaN stays as it is.
 * ADD_UNORDERED trades that for speed (one float atomic per element on GL, where ADD takes
 * three or four): out's element is a running sum, each of its m terms (out's own first) added
 * in f32 and rounded to out's dtype as it lands, in an order that may differ between runs and
 * backends (the CPU backend adds them in index's row-major order). So its result lies within
 * g S of the exact sum, S the sum of the terms' magnitudes, g = (m - 1) u / (1 - (m - 1) u)
 * and u 2^-24 (f32), 2^-11 + 2^-24 (f16), 2^-8 + 2^-24 (bf16), plus m times f32's least normal
 * (a device that flushes subnormal sums), and one unit of the result's last place: NaN where
 * a NaN or both infinities land, an infinity where one lands or a partial sum overflows, -0
 * only when every term is -0; out's own NaN stays NaN.
 * i32 and bool ADD_UNORDERED are ADD (exact whatever the order).
 * Dtypes: every data dtype (f32, f16, bf16, i32, bool).
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, axis, ndim or shapes, reduce, an index out of range,
 *   overlap, dtypes differ), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (index not i32, a
 *   block format; more than 2^32 - 2 indices or 2^32 - 1 elements of out),
 *   TGL_ERR_OUT_OF_MEMORY (the temporary buffer, 4 to 20 bytes per element of out, none for
 *   ADD_UNORDERED of floats, counted against TGL_MAX_MEMORY).
 * Example: per-class sums of a batch's values, classes (batch) i32 into sums (n_classes):
 *   tgl_scatter(b, &values, 0, &classes, &sums, TGL_SCATTER_ADD); */
TGL_API tgl_status tgl_scatter(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                               const tgl_tensor *out, tgl_scatter_reduce reduce);
/* PyTorch's out.index_add_(axis, index, src) (alpha 1: scale src with tgl_binary_t first), in
 * place on out: the
 * slice of src at position k along `axis` is added to the slice of out at index[k]. index is a
 * 1-D i32 tensor; src has out's shape but index's length along axis, and out's dtype. It is
 * tgl_scatter's ADD with index repeated along the other dims, so the sum, its bounds, the
 * checks and the errors are tgl_scatter's.
 * Example: an embedding's gradient, rows of grad (n_tokens x dim) added at the tokens' ids:
 *   tgl_index_add(b, &grad, 0, &ids, &grad_table); */
TGL_API tgl_status tgl_index_add(tgl_backend *b, const tgl_tensor *src, size_t axis, const tgl_tensor *index,
                                 const tgl_tensor *out);


/* ---- selecting by a mask: masked_select, nonzero (descriptors) -------------------------- */
/* Both pack a data-dependent number of results into an out sized for the most there can be,
 * and write that number, `count`, into a one-element i32 tensor on the device (read it with
 * tgl_copy_dtoh when the host needs it; device ops can take it as it is). out's elements past
 * count keep what they held. A prefix count of the taken elements (the scan of tgl_cumsum) gives
 * each one its place, so results follow the row-major order of the index space on every
 * backend and run. The call takes a temporary device buffer of 5 bytes per element of the index
 * space (counted against TGL_MAX_MEMORY while it runs). GL: an index space of more than the
 * device's buffer window in i32s (128 MiB: 2^25 elements on ES 3.1's minimum) is refused, as a
 * tgl_cumsum line is. Errors, besides each one's own: TGL_ERR_INVALID_ARGUMENT (NULL, ndim above
 * TGL_MAX_DIMS, count not i32 of one element, an out that reaches an element twice, out or count
 * sharing a byte with an input or each other, an index space of 2^31 elements or more),
 * TGL_ERR_INVALID_POINTER (as tgl_copy), TGL_ERR_OUT_OF_MEMORY (the temporary buffer). */

/* torch.masked_select: the elements of in where mask is true, in row-major order of the shape
 * in and mask broadcast to (NumPy's rule), into out[0 .. count - 1]. mask is bool (any non-zero
 * byte true), in and out of one dtype (any but the block formats: bits moved as they are, bool
 * written 0 or 1), out 1-D of at least the broadcast shape's element count, any strides.
 * Errors: TGL_ERR_INVALID_ARGUMENT (shapes that do not broadcast, out not 1-D or too short,
 *   dtypes that differ), TGL_ERR_UNSUPPORTED (mask not bool, a block format).
 * Example: the scores above a threshold, packed: tgl_compare(b, TGL_COMPARE_GT, &s, &t, &keep);
 *   tgl_masked_select(b, &s, &keep, &picked, &n); then tgl_copy_dtoh(b, &host_n, n.data, 4). */
TGL_API tgl_status tgl_masked_select(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *mask,
                                     const tgl_tensor *out, const tgl_tensor *count);
/* torch.nonzero: the coordinates of in's non-zero elements (true, numbers other than +-0, NaN),
 * in row-major order, one row each: row k of the i32 out (capacity x in's ndim, at least in's
 * element count rows, any strides) holds the k-th one's coordinates. A 0-d in has columns of
 * none: only count is written (0 or 1). Subnormal numbers are non-zero on every device (the
 * test reads bits). Each dim of in must be below 2^31 (i32 coordinates).
 * Errors: TGL_ERR_INVALID_ARGUMENT (out not i32 of 2 dims, its column count not in's ndim, too
 *   few rows), TGL_ERR_UNSUPPORTED (a block format).
 * Example: where a (rows x cols) bool tensor is true: tgl_nonzero(b, &hits, &where, &n); */
TGL_API tgl_status tgl_nonzero(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out,
                               const tgl_tensor *count);
/* ---- moving elements: flip, roll, repeat, pad (descriptors) ------------------------------- */
/* Each is strided copies (and, for a constant pad, fills) of in into out, which have one ndim
 * (tgl_repeat: out's may be larger) and any strides: in's elements are converted to out's dtype
 * as tgl_copy converts (any dtype but the block formats). out must reach no element twice and
 * share no byte with in; every operand is checked before anything is written. An empty out does
 * nothing. Errors, besides each one's own: TGL_ERR_INVALID_ARGUMENT (NULL, ndim above
 * TGL_MAX_DIMS, an out that reaches an element twice, overlap), TGL_ERR_INVALID_POINTER (as
 * tgl_copy), TGL_ERR_UNSUPPORTED (a block format). */

/* out = in reversed along each of dims[0 .. n_dims - 1] (PyTorch's flip): out[.., i, ..] =
 * in[.., shape - 1 - i, ..]. out has in's shape; n_dims 0 copies. One copy (a view of in with
 * negated strides).
 * Errors: TGL_ERR_INVALID_ARGUMENT (a dim not below ndim or named twice, shapes that differ).
 * Example: a batch of images mirrored left-right (NCHW): tgl_flip(b, &x, (size_t[]){3}, 1, &y); */
TGL_API tgl_status tgl_flip(tgl_backend *b, const tgl_tensor *in, const size_t *dims, size_t n_dims,
                            const tgl_tensor *out);
/* out = in rolled by shifts[k] along dims[k], k < n_shifts (PyTorch's roll with dims given):
 * out[.., (i + shift) mod n, ..] = in[.., i, ..], a negative shift rolling toward lower indices;
 * a dim named twice rolls by the sum. PyTorch's roll without dims rolls the flattened tensor:
 * pass 1-d views of contiguous in and out. out has in's shape. At most 2^k copies for k dims
 * whose shift is not a multiple of their extent.
 * Errors: TGL_ERR_INVALID_ARGUMENT (n_shifts 0 or above TGL_MAX_DIMS, shifts or dims NULL, a dim
 *   not below ndim, shapes that differ).
 * Example: a sequence (batch x seq x d) shifted one step later, wrapping:
 *     tgl_roll(b, &x, (int64_t[]){1}, 1, (size_t[]){1}, &y); */
TGL_API tgl_status tgl_roll(tgl_backend *b, const tgl_tensor *in, const int64_t *shifts, size_t n_shifts,
                            const size_t *dims, const tgl_tensor *out);
/* out = in repeated repeats[d] times along each dim (PyTorch's Tensor.repeat; NumPy's tile with
 * as many repeats as dims): n_repeats >= in's ndim; in is seen with n_repeats - ndim leading dims
 * of 1, and out's shape is that shape times repeats, dim by dim (a repeat of 0 gives an empty
 * out). One copy (each dim split into repeat x extent in a view of out) while the split dims fit
 * in TGL_MAX_DIMS; past that, one copy per index of the outermost repeats.
 * Errors: TGL_ERR_INVALID_ARGUMENT (n_repeats below in's ndim or above TGL_MAX_DIMS, repeats NULL,
 *   out's shape not in's times repeats).
 * Example: a row broadcast into 4 copies of a (1 x n) row: tgl_repeat(b, &row, (size_t[]){4, 1}, 2, &out); */
TGL_API tgl_status tgl_repeat(tgl_backend *b, const tgl_tensor *in, const size_t *repeats, size_t n_repeats,
                              const tgl_tensor *out);
/* Padding modes of tgl_pad (PyTorch's F.pad modes). */
typedef enum { TGL_PAD_CONSTANT, TGL_PAD_REFLECT, TGL_PAD_REPLICATE, TGL_PAD_CIRCULAR, TGL_PAD_MODE_COUNT } tgl_pad_mode;
/* out = in padded (PyTorch's F.pad): pads lists (before, after) pairs from the last dim
 * backwards, n_pads even and at most 2 x ndim (dims it does not reach are not padded); out's
 * extent is in's + before + after along each dim. CONSTANT writes value (converted to out's
 * dtype as tgl_fill_t converts) and takes negative widths, which crop (at most the extent in
 * all); REFLECT mirrors without repeating the edge (out[-j] = in[j]; widths below the extent);
 * REPLICATE repeats the edge element (any width; an extent of at least 1); CIRCULAR wraps (out[-j] =
 * in[n - j]; widths at most the extent). The other modes take widths >= 0 and ignore value. One
 * copy or fill per block of out (3 per padded dim, multiplied: 9 for the last two dims).
 * Errors: TGL_ERR_INVALID_ARGUMENT (pads NULL with n_pads > 0, n_pads odd or above 2 x ndim, a
 *   mode out of range, a width the mode does not take, out's shape not the padded one).
 * Example: reflection padding of 1 around each NCHW image:
 *     tgl_pad(b, &x, (int64_t[]){1, 1, 1, 1}, 4, TGL_PAD_REFLECT, 0.0, &y); */
TGL_API tgl_status tgl_pad(tgl_backend *b, const tgl_tensor *in, const int64_t *pads, size_t n_pads, tgl_pad_mode mode,
                           double value, const tgl_tensor *out);

/* ---- random numbers (descriptors) ---------------------------------------------------------- */

/* Counter-based random numbers from Philox4x32-10 (Salmon et al., SC'11; the Random123 known
 * answers hold): block j gives four 32-bit words W_j[0..3], the generator's output for key
 * (seed's low word, high word) and counter (j as 64 bits, low word first, then 0, 0). Element
 * i of out (its row-major index in out's shape, whatever out's strides) draws from block
 * offset + i / 4: word x = W[i % 4], and for normal the pair x0 = W[i % 4 & 2], x1 = the word
 * after it. The same (seed, offset, shape) gives the same bits on every backend and device,
 * whatever else ran before; offset counts blocks, so a call of n elements uses blocks offset ..
 * offset + ceil(n / 4) - 1, and a later call that must not repeat them takes offset +
 * ceil(n / 4) (or another seed). With u24(x) = (x >> 8) * 2^-24, in [0, 1):
 *   uniform: TGL_RANDOM_UNIFORM (a, bb), a + (bb - a) * u24(x) in f32, a and bb - a rounded to
 *     f32 once, kept below bb (f32), then rounded to out's dtype (f16/bf16 rounding may reach
 *     bb); floats only; a < bb, both finite.
 *   normal: TGL_RANDOM_NORMAL (mean a, std bb), a + bb * z by Box-Muller: with u = u24(x0) +
 *     2^-24 in (0, 1], t = 2 pi u24(x1) - pi, z = sqrt(-2 ln u) cos t for even i, sin t for odd
 *     i (|z| < 5.8); floats only; bb >= 0, both finite. ln (for u < 0.75; above, the series of
 *     4 atanh((1 - u) / (1 + u)), since a device's ln may err there by more than -2 ln u), sqrt,
 *     cos and sin are the device's: values agree across backends to a few f32 ulps, not bit for bit.
 *   bernoulli: TGL_RANDOM_BERNOULLI (p a, bb ignored), 1 where (x >> 8) < round(p * 2^24),
 *     else 0 (the probability is p to within 2^-25); any dtype but the block formats;
 *     0 <= p <= 1.
 *   randint: TGL_RANDOM_RANDINT (low a, high bb), low + floor(x * (high - low) / 2^32), an
 *     integer in [low, high) (bias under (high - low) / 2^32); low and high integers in
 *     int32's range, low < high; i32 and the float dtypes (the integer rounded to them).
 * Bytes between strided elements keep theirs; out must reach no element twice.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, kind, a parameter outside its range, naming it, an out
 *   that reaches an element twice), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a dtype the
 *   kind does not write).
 * Example: tgl_random(b, TGL_RANDOM_NORMAL, &noise, 0.0, 1.0, seed, offset); offset += n; */
typedef enum { TGL_RANDOM_UNIFORM, TGL_RANDOM_NORMAL, TGL_RANDOM_BERNOULLI,
               TGL_RANDOM_RANDINT } tgl_random_kind;
#define TGL_RANDOM_COUNT 4
TGL_API tgl_status tgl_random(tgl_backend *b, tgl_random_kind kind, const tgl_tensor *out, double a, double bb,
                              uint64_t seed, uint64_t offset);
/* Inverted dropout (PyTorch's F.dropout in training): out[i] = (in[i] * m) * (1 / (1 - p)),
 * m = 0 where element i is dropped, else 1 (so a dropped element is in[i] * 0: -0 for a
 * negative, NaN for an infinity or NaN, as PyTorch's mask product). Element i is dropped where
 * (x >> 8) < round(p * 2^24), x its tgl_random word for (seed, offset): a
 * tgl_random(TGL_RANDOM_BERNOULLI, p) with the same seed, offset and shape is its drop mask.
 * in broadcasts to out's shape; one float dtype (f32, f16, bf16), the scale rounded to f32 once
 * and the products computed in f32 (a device that flushes subnormal products, as GLSL allows and
 * NVIDIA's GL does, writes 0 for them); p = 1 drops everything (in * 0), p = 0 copies. out may
 * be in's elements exactly, otherwise shares no byte with them.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, p outside [0, 1], shapes, dtypes that differ, a partial
 *   overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (i32, bool, block formats).
 * Example: tgl_dropout(b, &h, &h, 0.1, seed, offset); offset += (n + 3) / 4; */
TGL_API tgl_status tgl_dropout(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, double p, uint64_t seed,
                               uint64_t offset);

/* ---- shapes (f32, row-major, up to TGL_MAX_DIMS dims) ------------------------------------ */

/* The NumPy broadcast of two shapes (dims aligned from the right; each pair equal or one of
 * them 1): writes max(a_ndim, b_ndim) dims to out_shape (room for TGL_MAX_DIMS) and their
 * count to *out_ndim. Errors: TGL_ERR_INVALID_ARGUMENT (NULL, ndim outside 1..8, shapes that
 * do not broadcast, naming the first dim that clashes).
 * Example: size_t s[TGL_MAX_DIMS], nd;
 *          tgl_broadcast_shape((size_t[]){8, 1, 5}, 3, (size_t[]){4, 5}, 2, s, &nd);  // 8x4x5 */
TGL_API tgl_status tgl_broadcast_shape(const size_t *a_shape, size_t a_ndim, const size_t *b_shape,
                                       size_t b_ndim, size_t *out_shape, size_t *out_ndim);

/* out = a op bb with NumPy broadcasting; out has the broadcast shape (tgl_broadcast_shape).
 * out may equal an input that is not broadcast (same shape) but must not otherwise overlap a
 * or bb. Errors: TGL_ERR_INVALID_ARGUMENT (shapes that do not broadcast, bad op, overlap),
 * TGL_ERR_INVALID_POINTER.
 * Example: tgl_binary_broadcast(b, TGL_BINARY_ADD, x, (size_t[]){rows, cols}, 2,
 *                               bias, (size_t[]){cols}, 1, out); */
TGL_API tgl_status tgl_binary_broadcast(tgl_backend *b, tgl_binary_op op, tgl_ptr a, const size_t *a_shape,
                                        size_t a_ndim, tgl_ptr bb, const size_t *b_shape, size_t b_ndim,
                                        tgl_ptr out);

/* Transposes axes: out has shape[perm[0]], ..., shape[perm[ndim-1]], and out[i0, ..., ik] =
 * in at the coordinates those indices name. perm must hold each of 0..ndim-1 once; out must not
 * overlap in. Errors: TGL_ERR_INVALID_ARGUMENT (NULL, ndim, perm not a permutation, overlap),
 * TGL_ERR_INVALID_POINTER.
 * Example: tgl_permute(b, x, xt, (size_t[]){rows, cols}, 2, (size_t[]){1, 0});  // transpose */
TGL_API tgl_status tgl_permute(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape, size_t ndim,
                               const size_t *perm);

/* ---- reductions (f32) -------------------------------------------------------------------- */

/* ANY and ALL (is any / every element non-zero, into a bool out) are tgl_reduce_t's only. */
typedef enum { TGL_REDUCE_SUM, TGL_REDUCE_MEAN, TGL_REDUCE_MAX, TGL_REDUCE_MIN,
               TGL_REDUCE_PROD, TGL_REDUCE_ANY, TGL_REDUCE_ALL } tgl_reduce_op;
#define TGL_REDUCE_COUNT 7

/* Reduces axis `axis` of a row-major tensor of `ndim` dims (1..TGL_MAX_DIMS); out has the shape
 * without that axis. Sums are accurate on long axes (compensated per thread, then a tree: NMSE
 * against a double-precision sum stays near 1e-14), and finite values whose f32 running sum
 * overflows give the double sum's result on both backends (the mean of 3e38s is 3e38; a sum past
 * FLT_MAX is inf). MAX and MIN return NaN when the axis holds
 * one. An empty axis gives 0 (sum), 1 (prod) or NaN (mean); max and min of an empty axis are an
 * error. out must not overlap in. On GL, slices along the axis larger than the SSBO block limit
 * are reduced piece by piece into out (a sum's pieces are added in order, each summed in a tree).
 * Errors: TGL_ERR_INVALID_ARGUMENT (shape NULL, ndim 0 or over 8, axis >= ndim, op out of range,
 *   element count overflow, max/min of an empty axis, overlap), TGL_ERR_INVALID_POINTER,
 *   TGL_ERR_UNSUPPORTED (ANY and ALL: tgl_reduce_t).
 * Example: tgl_reduce(b, TGL_REDUCE_MEAN, x, means, (size_t[]){rows, cols}, 2, 1);  // mean of each row */
TGL_API tgl_status tgl_reduce(tgl_backend *b, tgl_reduce_op op, tgl_ptr in, tgl_ptr out,
                              const size_t *shape, size_t ndim, size_t axis);

/* Reduces dim `axis` of in into out, both any strides. out has in's shape without that dim, or
 * with it as 1 (keepdim). Floats (f32, f16, bf16): SUM, MEAN, PROD, MAX, MIN computed in f32
 * or wider and rounded to out's dtype, which is in's (sums and means of finite values as
 * tgl_reduce: no f32 overflow midway); MAX and MIN give NaN where the axis holds one. i32: SUM and PROD exact with two's complement wrap, MAX and MIN exact; MEAN is not taken.
 * ANY and ALL (every dtype: an element is true when non-zero, NaN included, -0 not) write a bool
 * out. An empty axis gives 0 (sum), 1 (prod), NaN (mean), false (any) or true (all); max and min
 * of an empty axis are an error. out must reach no element twice and share no byte with in.
 * Errors: TGL_ERR_INVALID_ARGUMENT (op, NULL, ndim, in 0-d, axis not below in's ndim, an out
 *   shape that is neither form, out's dtype not the op's, max/min of an empty axis, an out that
 *   reaches an element twice, overlap), TGL_ERR_INVALID_POINTER (as tgl_copy),
 *   TGL_ERR_UNSUPPORTED (bool with an op but ANY and ALL, MEAN of i32, block formats).
 * Example: column sums of a strided bf16 matrix x (rows x cols) into s (cols):
 *     tgl_reduce_t(b, TGL_REDUCE_SUM, &x, 0, &s); */
TGL_API tgl_status tgl_reduce_t(tgl_backend *b, tgl_reduce_op op, const tgl_tensor *in, size_t axis,
                                const tgl_tensor *out);

/* Index (i32) of the largest / smallest element along dim `axis` of in (f32, f16, bf16 or i32,
 * any strides) into out (i32, any strides), whose shape is in's without that dim or with it as 1
 * (keepdim). The first index on ties; NaN counts as larger than every number for argmax and
 * smaller for argmin (the first NaN wins), as torch.argmax / argmin. The axis must hold
 * 1..2^31-1 elements. out must reach no element twice and share no byte with in.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, ndim, in 0-d, axis not below in's ndim, an empty axis,
 *   an axis of 2^31 or more, an out shape that is neither form, out not i32, an out that reaches
 *   an element twice, overlap), TGL_ERR_INVALID_POINTER (as tgl_copy), TGL_ERR_UNSUPPORTED (bool,
 *   block formats).
 * Example: the token of each row of bf16 logits (batch x vocab) into ids (batch, i32):
 *     tgl_argmax_t(b, &logits, 1, &ids); */
TGL_API tgl_status tgl_argmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);
TGL_API tgl_status tgl_argmin_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);

/* Index (int32) of the largest / smallest element along `axis`; the first one on ties. NaN counts
 * as larger than every number for argmax and smaller for argmin (the first NaN wins). The axis
 * length must be 1..2^31-1. Errors: as tgl_reduce; an empty axis is TGL_ERR_INVALID_ARGUMENT.
 * Example: tgl_argmax(b, logits, ids, (size_t[]){batch, vocab}, 2, 1);  // ids: batch int32 */
TGL_API tgl_status tgl_argmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape,
                              size_t ndim, size_t axis);
TGL_API tgl_status tgl_argmin(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape,
                              size_t ndim, size_t axis);
TGL_API const char *tgl_reduce_name(tgl_reduce_op op);

/* out[i] = value for i < n. Errors: TGL_ERR_INVALID_ARGUMENT (misaligned), TGL_ERR_INVALID_POINTER.
 * Example: tgl_fill(b, x, 0.0f, n); */
TGL_API tgl_status tgl_fill(tgl_backend *b, tgl_ptr out, float value, size_t n);

/* y[i] = alpha * x[i] + beta * y[i] for i < n; with beta == 0, y's old contents are ignored (NaN
 * in y does not leak). y may equal x but must not partially overlap it. Errors: as tgl_binary.
 * Example: tgl_scale_add(b, -lr, grad, 1.0f, w, n);  // w -= lr * grad */
TGL_API tgl_status tgl_scale_add(tgl_backend *b, float alpha, tgl_ptr x, float beta, tgl_ptr y, size_t n);

/* ---- casts (IEEE binary16 storage: 2 bytes per element, 2-byte aligned) ----------------- */

/* f32 -> f16, round to nearest even; overflow gives +-inf, values below half the smallest
 * subnormal give +-0, NaN stays NaN (quiet, sign and top payload bits kept). Elements outside
 * [out, out + 2n) are never written, even when they share a 32-bit word with the output.
 * in and out must not overlap. Errors: TGL_ERR_INVALID_ARGUMENT (misaligned, overlap),
 * TGL_ERR_INVALID_POINTER.
 * Example: tgl_cast_f32_f16(b, x, x16, n);  // x16: n * 2 bytes */
TGL_API tgl_status tgl_cast_f32_f16(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t n);
/* f16 -> f32, exact (subnormals included; NaN payloads kept). Errors: as tgl_cast_f32_f16.
 * Example: tgl_cast_f16_f32(b, x16, x, n); */
TGL_API tgl_status tgl_cast_f16_f32(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t n);

/* ---- row-wise normalization (f32, rows x cols, row-major) -------------------------------- */

/* out = exp(x - max) / sum(exp(x - max)) per row: numerically stable (rows of +-1e4 stay
 * finite). -inf entries (masked positions) give exactly 0 (log_softmax: -inf) when the row has
 * a finite element; a row of only -inf gives NaN. out may equal in exactly. rows or cols 0 is
 * a no-op.
 * Errors: TGL_ERR_INVALID_ARGUMENT (size overflow, partial overlap), TGL_ERR_INVALID_POINTER,
 *   TGL_ERR_UNSUPPORTED (GL: a row longer than the SSBO block limit).
 * Example: tgl_softmax(b, scores, probs, rows, cols); */
TGL_API tgl_status tgl_softmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t rows, size_t cols);
/* out = x - max - log(sum(exp(x - max))) per row. As tgl_softmax otherwise.
 * Example: tgl_log_softmax(b, logits, logp, batch, vocab); */
TGL_API tgl_status tgl_log_softmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t rows, size_t cols);
/* out = x / sqrt(mean(x^2) + eps) * weight per row; weight: cols floats, or 0 for none.
 * eps must be finite and >= 0. out may equal in exactly, and must not overlap weight.
 * Example: tgl_rmsnorm(b, x, weight, y, tokens, dim, 1e-5f); */
TGL_API tgl_status tgl_rmsnorm(tgl_backend *b, tgl_ptr in, tgl_ptr weight, tgl_ptr out, size_t rows,
                               size_t cols, float eps);
/* out = (x - mean) / sqrt(var + eps) * gamma + beta per row, var the biased variance;
 * gamma and beta: cols floats each, or 0 for none. As tgl_rmsnorm otherwise.
 * Example: tgl_layernorm(b, x, gamma, beta, y, tokens, dim, 1e-5f); */
TGL_API tgl_status tgl_layernorm(tgl_backend *b, tgl_ptr in, tgl_ptr gamma, tgl_ptr beta, tgl_ptr out,
                                 size_t rows, size_t cols, float eps);

/* The row-wise ops over descriptors: in f32, f16 or bf16 with any strides, out of in's shape and
 * any float dtype with any strides, computed in f32 and rounded to out's dtype. Softmax and
 * log-softmax run along dim `axis`; the norms along the last dim, whose length their optional
 * 1-D operands (weight, gamma, beta: any float dtype, any stride; gamma and beta of one dtype;
 * NULL for none) must have. Semantics as the flat functions above (a NaN in a line makes that
 * line NaN). out may be in itself (the same data, dtype and strides) and must otherwise share no
 * byte with in or the 1-D operands; it must reach no element twice. Empty tensors are a no-op.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL in or out, ndim, in 0-d, axis not below in's ndim, out's
 *   shape not in's, a 1-D operand of the wrong length, gamma and beta of two dtypes, eps not
 *   finite and >= 0, an out that reaches an element twice, overlap), TGL_ERR_INVALID_POINTER (as
 *   tgl_copy), TGL_ERR_UNSUPPORTED (i32, bool, block formats; GL: one line spanning more than the
 *   device's buffer window).
 * Example: attention probabilities of bf16 scores (batch, heads, q, k) over the keys in place:
 *     tgl_softmax_t(b, &scores, 3, &scores); */
TGL_API tgl_status tgl_softmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);
TGL_API tgl_status tgl_log_softmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);
/* Example: an f16 hidden state (tokens, dim) with f32 weights: tgl_rmsnorm_t(b, &h, &w, &h, 1e-6f); */
TGL_API tgl_status tgl_rmsnorm_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *weight,
                                 const tgl_tensor *out, float eps);
TGL_API tgl_status tgl_layernorm_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *gamma,
                                   const tgl_tensor *beta, const tgl_tensor *out, float eps);

/* Scans along dim `axis` of in (any strides) into out of in's shape (any strides), as
 * torch.cumsum / cumprod / cummax / cummin: out[..., k, ...] combines in's elements 0..k of the
 * line. cumsum and cumprod take f32, f16 or bf16 (computed in f32, rounded to out's dtype: any
 * float), i32 (exact, two's complement wrap, out i32) and bool (counted: out i32). On GL each
 * output is its prefix's sum (product) in f32 through a blocked scan that passes each element
 * through a few dozen roundings (docs/ops.md gives the bound: 53 for a line of 2^24 on a GPU)
 * where a running sum takes one per element; the CPU backend accumulates in double. cummax and cummin take f32, f16, bf16 or i32 into values of in's
 * dtype and, unless indices is NULL, the i32 index of each prefix's largest (smallest) element into
 * indices (in's shape, any strides): the last index among equal values, NaN larger than
 * everything for both and the last NaN's index once one is seen (PyTorch's rule). Exact on both
 * backends. out (values) may be in itself (the same data, dtype and strides) and must otherwise
 * share no byte with in; indices shares no byte with either; neither reaches an element twice.
 * Axes of 2^31 elements or more are refused (an i32 index). Empty tensors are a no-op.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL in or out, ndim, in 0-d, axis not below in's ndim,
 *   shapes that differ, out's or indices' dtype, an axis of 2^31 or more, an out that reaches an
 *   element twice, overlap), TGL_ERR_INVALID_POINTER (as tgl_copy), TGL_ERR_UNSUPPORTED (other
 *   dtypes; GL: one line spanning more than the device's buffer window).
 * Example: running totals of a (batch, n) i32 tensor of counts along n, in place:
 *     tgl_cumsum(b, &counts, 1, &counts);
 * Example: the running maximum of f32 scores and where it was reached:
 *     tgl_cummax(b, &scores, 0, &best, &at); */
TGL_API tgl_status tgl_cumsum(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);
TGL_API tgl_status tgl_cumprod(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out);
TGL_API tgl_status tgl_cummax(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                              const tgl_tensor *indices);
TGL_API tgl_status tgl_cummin(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                              const tgl_tensor *indices);

/* ---- ordering along an axis: sort, topk (descriptors) ----------------------------------- */
/* PyTorch's torch.sort(in, dim=axis, descending, stable=True): each line of in along `axis` in
 * order into values (in's dtype and shape) and the i32 position in the line each came from into
 * indices (in's shape); either may be NULL (NULL values: torch.argsort), not both. Stable: equal
 * elements keep their order, descending too. NaN counts as larger than every number, as in
 * PyTorch (last ascending, first descending), -0 as equal to +0. Every data dtype (bool: false
 * before true), any strides; values and indices share no byte with in or each other. Lines
 * longer than 2^31 - 1 are refused.
 * GL: a bitonic network over (key, position) pairs, which makes it stable, on a temporary buffer
 * of 8 bytes per element of each line padded to a power of two; lines of the device profile's
 * radix_min elements or more (`tensorgl info --profile`) take radix passes instead, on 16 bytes
 * per element of one line (and, per 128 x radix_items of them, 8 bytes per digit: 16 digits of
 * 4 bits, or 256 of 8 where the profile's radix_bits is 8); both counted against TGL_MAX_MEMORY. A line whose pairs (radix: keys) exceed the SSBO block limit is
 * TGL_ERR_UNSUPPORTED. CPU: 8 bytes per element of one line.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL in, both outputs NULL, axis, shapes, dtypes, overlap),
 *   TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a block format), TGL_ERR_OUT_OF_MEMORY.
 * Example: scores (batch x n) by row, largest first, with where each came from:
 *   tgl_sort(b, &scores, 1, 1, &sorted, &order); */
TGL_API tgl_status tgl_sort(tgl_backend *b, const tgl_tensor *in, size_t axis, int descending, const tgl_tensor *values,
                            const tgl_tensor *indices);
/* PyTorch's torch.topk(in, k, dim=axis, largest, sorted=True): the first k elements of each
 * line as tgl_sort orders it (descending where largest): values and indices have in's shape
 * with k along axis (k from 0 to the line's length), either may be NULL, not both. Ties keep
 * their order in the line (PyTorch leaves that unspecified); NaN counts as the largest.
 * Errors: tgl_sort's, and k past the line's length.
 * Example: the 50 most likely tokens of each row of logits (rows x vocab):
 *   tgl_topk(b, &logits, 1, 50, 1, &top, &ids); */
TGL_API tgl_status tgl_topk(tgl_backend *b, const tgl_tensor *in, size_t axis, size_t k, int largest,
                            const tgl_tensor *values, const tgl_tensor *indices);

/* ---- matrix multiplication ------------------------------------------------------------ */

/* The activations a fused epilogue applies (tgl_gemm_fused, tgl_matvec_t_fused, tgl_conv2d_fused), each as the op
 * of that name computes it: RELU and the GELUs as TGL_UNARY_RELU, TGL_UNARY_GELU (tanh
 * approximation) and TGL_UNARY_GELU_ERF; RELU6 = min(max(x, 0), 6); LEAKY_RELU = x < 0 ?
 * slope * x : x; HARDSWISH = x * min(max(x + 3, 0), 6) / 6 (PyTorch's). NaN stays NaN through
 * each. */
typedef enum { TGL_ACTIVATION_NONE = 0, TGL_ACTIVATION_RELU, TGL_ACTIVATION_RELU6, TGL_ACTIVATION_LEAKY_RELU,
               TGL_ACTIVATION_SIGMOID, TGL_ACTIVATION_SILU, TGL_ACTIVATION_GELU, TGL_ACTIVATION_GELU_ERF,
               TGL_ACTIVATION_HARDSWISH, TGL_ACTIVATION_TANH } tgl_activation;
#define TGL_ACTIVATION_COUNT 10

typedef enum { TGL_NO_TRANS = 0, TGL_TRANS = 1 } tgl_transpose;

/* C = alpha * op(A) * op(B) + beta * C, row-major, f32. op(A) is m x k, op(B) is k x n, C is
 * m x n. lda, ldb, ldc are the row strides (in elements) of the matrices as stored: A is m x k
 * (k x m when ta == TGL_TRANS), so lda >= its column count, and likewise ldb and ldc >= n.
 * beta == 0 ignores C's old contents (NaN there does not leak); k == 0 gives C = beta * C.
 * m == 0 or n == 0 is a no-op. C must not overlap A or B. Sums run in f32 on GL and in double
 * on the CPU backend.
 * Errors: TGL_ERR_INVALID_ARGUMENT (bad transpose flag, ld smaller than the row length, size
 *   overflow, C overlapping A or B), TGL_ERR_INVALID_POINTER (unknown pointer, or a matrix
 *   reaching past its allocation: the last element of A is at ((rows - 1) * lda + cols - 1)).
 * Thread safety: as every call on b.
 * Example: tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, m, n, k, 1.0f, a, k, w, k, 0.0f, c, n);  // C = A W^T, W n x k */
TGL_API tgl_status tgl_gemm(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                            float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                            size_t ldc);

/* batch independent products: product i uses a + i * stride_a, bm + i * stride_b and
 * c + i * stride_c (strides in elements). A stride of 0 shares that operand between all
 * products (allowed for A and B only). The products' C matrices must not share an element:
 * either one after the other (stride_c >= (m - 1) * ldc + n) or side by side within the rows
 * (stride_c >= n and (batch - 1) * stride_c + n <= ldc, e.g. attention heads in one row).
 * Otherwise as tgl_gemm; batch == 0 is a no-op.
 * Example: tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, m, n, k, 1.0f, a, k, m * k,
 *                           w, n, 0, 0.0f, c, n, m * n, batch);  // W shared */
TGL_API tgl_status tgl_gemm_batched(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n,
                                    size_t k, float alpha, tgl_ptr a, size_t lda, size_t stride_a, tgl_ptr bm,
                                    size_t ldb, size_t stride_b, float beta, tgl_ptr c, size_t ldc,
                                    size_t stride_c, size_t batch);

/* tgl_gemm with A, B and C stored as IEEE binary16 (2 bytes per element, pointers 2-byte
 * aligned); products and sums are f32, the result is rounded to nearest even once.
 * Example: tgl_gemm_f16(b, TGL_NO_TRANS, TGL_NO_TRANS, m, n, k, 1.0f, a16, k, b16, n, 0.0f, c16, n); */
TGL_API tgl_status tgl_gemm_f16(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                                float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                                size_t ldc);

/* tgl_gemm with a linear layer's epilogue in the same pass (as many dispatches as tgl_gemm's).
 * With t = alpha * op(A) * op(B) + bias[j] (bias: n floats, one per column of C; 0 for none)
 * each element of C becomes
 *   gate == 0:  activation(t + beta * C)    a linear layer (x W^T + b, then relu, gelu, ...);
 *                                           beta == 0 ignores C's old contents, as in tgl_gemm
 *   gate == 1:  activation(t) * C           a gated linear unit: C holds the other projection
 *                                           on entry (SwiGLU: silu(x Wg^T) * (x Wu^T) with SILU
 *                                           after C = x Wu^T; GEGLU with GELU); beta must be 0
 * The activations are tgl_conv2d_fused's (tgl_activation; slope is LEAKY_RELU's and must be
 * finite). The epilogue runs in f32 after the sum (the CPU backend: the sum in double, rounded
 * to f32 once, then the same f32 steps). bias may overlap A or B, not C. With no bias, no
 * activation and gate 0 this is tgl_gemm.
 * GL: products whose k is cut into slices (split-K, or an operand past the SSBO block limit)
 * apply the epilogue once, with the last slice; a gate whose operands' k rows do not fit one
 * window runs in two passes through a temporary of m x n floats (counted as device memory).
 * Errors: tgl_gemm's; TGL_ERR_INVALID_ARGUMENT (activation out of range, slope not finite, gate
 *   not 0 or 1, gate with beta != 0, bias overlapping C), TGL_ERR_INVALID_POINTER (bias).
 *   Nothing is written unless every argument is valid.
 * Example: a transformer's feed-forward block, W1 and W3 [ff, d], W2 [d, ff], x [tokens, d]:
 *   tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, t, ff, d, 1.0f, x, d, w3, d, 0.0f, h, ff);
 *   tgl_gemm_fused(b, TGL_NO_TRANS, TGL_TRANS, t, ff, d, 1.0f, x, d, w1, d, 0.0f, h, ff,
 *                  0, TGL_ACTIVATION_SILU, 0.0f, 1);                     // h = silu(x W1^T) * h
 *   tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, t, d, ff, 1.0f, h, ff, w2, ff, 1.0f, x, d); // x += h W2^T */
TGL_API tgl_status tgl_gemm_fused(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                                  float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                                  size_t ldc, tgl_ptr bias, tgl_activation activation, float slope, int gate);

/* y[rows] = W[rows x cols] * x[cols], W row-major and dense (f32). cols == 0 gives y = 0.
 * y must not overlap W or x.
 * Errors: TGL_ERR_INVALID_ARGUMENT (overlap, size overflow), TGL_ERR_INVALID_POINTER.
 * Example: tgl_matvec(b, vocab, dim, w_out, hidden, logits); */
TGL_API tgl_status tgl_matvec(tgl_backend *b, size_t rows, size_t cols, tgl_ptr w, tgl_ptr x, tgl_ptr y);

/* ---- weight formats -------------------------------------------------------------------- */

/* A linear layer's product with its weight in any weight format: y = x W^T, that is
 * y[j, r] = sum over c of W[r, c] * x[j, c], for W [rows, cols] in f32, f16, bf16, q8_0 or q4_0
 * (tgl_dtype), x [n, cols] and y [n, rows] f32 (or x [cols] and y [rows]: n = 1). This is
 * tgl_matvec for n = 1 and the weight operand of a linear layer stored as frameworks store it
 * ([out, in]). Weights are decoded to f32 and products summed in f32 (the CPU backend: double);
 * each weight byte is read once per up to 4 rows of x. More than 16 rows of x (a prompt) with x
 * and y of unit column stride and rows forward run as W decoded to f32 once (a temporary of at
 * most 256 MiB; in slabs of W's rows where memory or TGL_MAX_MEMORY is short) times x by
 * tgl_gemm's kernels; an f32 W of unit column stride is their operand as it is. x and y take any
 * strides; a float W
 * too; a block-format W is 2-D with cols a multiple of 32, stride 1 along cols and a row
 * stride of whole blocks (a multiple of 32, not negative). y must not overlap W or x nor reach
 * an element twice. cols == 0 gives y = 0; rows == 0 or n == 0 is a no-op.
 * Errors: TGL_ERR_INVALID_ARGUMENT (shapes that disagree, a block row that is not whole
 *   blocks, overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (x or y not f32, W in i32 or
 *   bool; GL: a row past the SSBO block limit).
 * Example: tgl_tensor w = tgl_tensor_contiguous(wq, TGL_DTYPE_Q4_0, 2, (size_t[]){4096, 11008});
 *          tgl_tensor x = tgl_tensor_contiguous(h, TGL_DTYPE_F32, 1, (size_t[]){11008});
 *          tgl_tensor y = tgl_tensor_contiguous(o, TGL_DTYPE_F32, 1, (size_t[]){4096});
 *          tgl_matvec_t(b, &w, &x, &y); */
TGL_API tgl_status tgl_matvec_t(tgl_backend *b, const tgl_tensor *w, const tgl_tensor *x, const tgl_tensor *y);

/* tgl_matvec_t with tgl_gemm_fused's epilogue in the same pass: y = act(x W^T + beta y + bias)
 * or, with gate 1, y = act(x W^T + bias) * y (y holds the gate's other factor on entry: SwiGLU
 * with TGL_ACTIVATION_SILU and y = x Wu^T; beta must then be 0). bias: NULL or f32 [rows] with
 * stride 1, bias[r] added to column r of every row of y; activation and slope as in
 * tgl_gemm_fused (slope: leaky relu's, finite). y is read where beta is not 0 or gate is 1 (an
 * unread y may hold NaN); beta 0 with no bias, activation or gate is tgl_matvec_t. W, x and y as
 * in tgl_matvec_t; the bias must not overlap y. cols == 0 gives y the epilogue of zero sums.
 * Errors: as tgl_matvec_t, and TGL_ERR_INVALID_ARGUMENT (an activation out of range, a slope
 *   that is not finite, gate not 0 or 1, beta not 0 with gate 1, a bias that is not [rows]
 *   with stride 1 or overlaps y).
 * Example: y += W_o o (a residual add):  tgl_matvec_t_fused(b, &wo, &o, 1.0f, NULL, TGL_ACTIVATION_NONE, 0, 0, &y);
 *          up = silu(x W_g^T) * up:       tgl_matvec_t_fused(b, &wg, &x, 0.0f, NULL, TGL_ACTIVATION_SILU, 0, 1, &up); */
TGL_API tgl_status tgl_matvec_t_fused(tgl_backend *b, const tgl_tensor *w, const tgl_tensor *x, float beta,
                                      const tgl_tensor *bias, tgl_activation activation, float slope, int gate,
                                      const tgl_tensor *y);

/* Stores the f32 tensor in as out's weight format (q8_0, q4_0, f16 or bf16; same shape). The
 * block formats round as ggml's reference quantizers do (so the bytes equal a GGUF file's):
 * q8_0 per block d = max|x| / 127, q[i] = round(x[i] / d) (half away from zero); q4_0 per block
 * m = the element of largest magnitude (the first of equals), d = m / -8,
 * q[i] = min(15, trunc(x[i] / d + 8.5)); d is stored as binary16 and x / d computed as
 * x * (1 / d), with 1 / d taken from d before its rounding. Both backends take these steps
 * in f32 exactly (GL divides by long division of the significands: GLSL lets a division be
 * 2.5 ulp off), so their bytes are equal; only a block whose values are all below ~1e-36 (its
 * binary16 scale 0) may get other quants on a device that flushes subnormals, never other
 * values. f16 and bf16 round to nearest even (tgl_copy's conversion). The block tensor is as in
 * tgl_matvec_t but of any rank: its last dim a multiple of 32 with stride 1 and its leading
 * dims one run of whole-block rows; in's leading dims must also form one run of rows (its
 * last dim any stride). An infinite input gives its block an infinite d; a NaN gives its block
 * unspecified quants (they may differ between backends).
 * Errors: TGL_ERR_INVALID_ARGUMENT (shapes differ, last dim not a multiple of 32, leading dims
 *   that are not one row stride, overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (in
 *   not f32, out not a weight format).
 * Example: tgl_quantize(b, &w_f32, &w_q8); */
TGL_API tgl_status tgl_quantize(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out);
/* The inverse: out (f32, same shape) = in (q8_0, q4_0, f16 or bf16) decoded, exactly (each
 * block element is q * d, which f32 holds exactly). Operands as tgl_quantize's, in and out
 * swapped. Errors: as tgl_quantize.
 * Example: tgl_dequantize(b, &w_q4, &w_f32); */
TGL_API tgl_status tgl_dequantize(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out);

/* Embedding lookup from a weight table: out[k, :] = table[ids[k], :] decoded to f32, exactly
 * (f16 and bf16 widened, block elements q * d). table is [rows, cols] in f32, f16, bf16, q8_0
 * or q4_0, taken as tgl_matvec_t takes W (float formats any strides; block rows whole blocks
 * apart, 2-byte aligned); ids i32 [n] with any stride; out f32 [n, cols] with any strides,
 * reaching no element twice and sharing no byte with table or ids. Every id is checked on the
 * device before anything is written. n 0 or cols 0 does nothing.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, dims, dtypes, shapes that disagree, a block row not
 *   whole blocks, an id outside [0, rows) named with its position, overlap),
 *   TGL_ERR_INVALID_POINTER.
 * Example: tgl_tensor e = tgl_tensor_contiguous(embd, TGL_DTYPE_Q4_0, 2, (size_t[]){vocab, dim});
 *          tgl_gather_rows_t(b, &e, &ids, &x);  // ids i32 [n], x f32 [n, dim] */
TGL_API tgl_status tgl_gather_rows_t(tgl_backend *b, const tgl_tensor *table, const tgl_tensor *ids,
                                     const tgl_tensor *out);

/* ---- LLM kernels ----------------------------------------------------------------------- */

typedef enum {
    TGL_ROPE_NEOX,        /* rotates pairs (i, i + head_dim/2): the half-split ("NeoX") layout */
    TGL_ROPE_INTERLEAVED  /* rotates pairs (2i, 2i + 1): the GPT-J / original layout */
} tgl_rope_mode;

/* Rotary position embedding on [batch, seq, heads, head_dim] (f32): token s has position
 * pos_offset + s; pair i rotates by position * theta^(-2i / head_dim). head_dim must be even
 * and theta finite and > 1. out may equal in exactly. GL takes each frequency's phase at
 * pos_offset from the host (double precision) and adds s * frequency in f32 for token s of the
 * call, reduced mod 2 pi before sin/cos: accuracy does not depend on pos_offset.
 * Errors: TGL_ERR_INVALID_ARGUMENT (odd head_dim, bad theta or mode, size overflow, partial
 *   overlap), TGL_ERR_INVALID_POINTER.
 * Example: tgl_rope(b, q, q, 1, seq, heads, 64, past_len, 10000.0f, TGL_ROPE_NEOX);  // in place */
TGL_API tgl_status tgl_rope(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t batch, size_t seq, size_t heads,
                            size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode);

/* Frequency scaling of tgl_rope_t (Hugging Face's rope_scaling types; inv_freq[i] =
 * theta^(-2i / rotary_dim) before scaling). */
typedef enum {
    TGL_ROPE_SCALE_NONE,   /* as is */
    TGL_ROPE_SCALE_LINEAR, /* "linear" (position interpolation): inv_freq / factor */
    TGL_ROPE_SCALE_NTK,    /* static NTK-aware: theta * factor^(rotary_dim / (rotary_dim - 2)) as the base */
    TGL_ROPE_SCALE_LLAMA3  /* Llama 3.1's: wavelengths 2 pi / inv_freq above original_context /
                            * low_freq_factor divided by factor, below original_context /
                            * high_freq_factor kept, blended in between (smooth = (original_context /
                            * wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)) */
} tgl_rope_scaling;

/* tgl_rope_t's settings. Zero-initialized fields keep the plain rotary embedding: rotary_dim 0
 * is head_dim, scaling NONE. */
typedef struct tgl_rope_desc {
    float theta;             /* the base, finite and > 1 (10000 in most models) */
    tgl_rope_mode mode;      /* which dims pair up within the rotated part */
    size_t rotary_dim;       /* 0 or an even count <= head_dim: dims [0, rotary_dim) rotate, the rest pass through */
    size_t pos_offset;       /* without a positions tensor, token s sits at pos_offset + s */
    tgl_rope_scaling scaling;
    float factor;            /* LINEAR, NTK and LLAMA3: finite, > 0 */
    float low_freq_factor, high_freq_factor; /* LLAMA3: 0 < low < high */
    size_t original_context; /* LLAMA3: the context the model was trained at (8192 for Llama 3.1), > 0 */
    /* NULL, or rotary_dim / 2 host floats, each finite and > 0: frequency i is divided by
     * freq_factors[i] after the scaling above (ggml's freq_factors: the rope_freqs tensor in
     * which GGUF files of Llama 3.1 and later carry their Llama 3 scaling, with scaling NONE) */
    const float *freq_factors;
} tgl_rope_desc;

/* Rotary position embedding with per-token positions, partial rotation and frequency scaling,
 * as Hugging Face's models apply it. in and out: f32 [batch, seq, heads, head_dim], stride 1
 * along head_dim, any other strides; out may be in exactly (same data and strides) or must not
 * overlap it. positions: NULL (token s at d->pos_offset + s, pos_offset + seq within 2^32), or
 * i32 [batch, seq] with any strides (stride 0 over batch shares one row), any values.
 * Pair i < rotary_dim / 2 is (i, i + rotary_dim / 2) in TGL_ROPE_NEOX mode, (2i, 2i + 1) in
 * TGL_ROPE_INTERLEAVED; it turns by the angle f32(position) * f_i rounded to f32, f_i the
 * scaled inv_freq[i] as Hugging Face's rope_init functions compute it, float32 step by step
 * (1 / base^(f32(2i) / rotary_dim), its pow taken correctly rounded; then the scaling's steps),
 * then divided by freq_factors[i] where given: the angle PyTorch's models compute (their f32
 * pow may differ from the correctly rounded one by an ulp, in about 1 in 200 frequencies).
 * y0 = x0 cos - x1 sin, y1 = x0 sin + x1 cos. Dims from rotary_dim on are copied.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL in, out or d, shapes that are not 4-D and alike,
 *   head_dim odd, rotary_dim odd or past head_dim, a dtype other than f32 (i32 for positions),
 *   positions not [batch, seq], theta, factor, a freq_factors entry or the Llama 3 settings out
 *   of range, pos_offset + seq past 2^32, overlap, a stride along head_dim other than 1),
 *   TGL_ERR_INVALID_POINTER.
 * Example: tgl_rope_desc d = {.theta = 500000.0f, .mode = TGL_ROPE_NEOX, .scaling = TGL_ROPE_SCALE_LLAMA3,
 *              .factor = 8, .low_freq_factor = 1, .high_freq_factor = 4, .original_context = 8192};
 *          tgl_rope_t(b, &q, &q, &pos, &d);  // q [batch, seq, heads, 128], pos i32 [batch, seq] */
TGL_API tgl_status tgl_rope_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out,
                              const tgl_tensor *positions, const tgl_rope_desc *d);

/* Embedding lookup: out[k, :] = table[ids[k], :] for k < n_ids; table is [table_rows, cols] f32,
 * ids int32. Every id is checked first: one outside [0, table_rows) fails the call with
 * TGL_ERR_INVALID_ARGUMENT naming its position and value, and nothing is written. (So this call
 * waits for the ids, and for the work that writes them.) out must not overlap table or ids.
 * Tables larger than the GL SSBO block limit are read window by window.
 * Errors: TGL_ERR_INVALID_ARGUMENT, TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (GL: one row
 *   longer than the SSBO block limit).
 * Example: tgl_gather_rows(b, embedding, token_ids, x, vocab, dim, n_tokens); */
TGL_API tgl_status tgl_gather_rows(tgl_backend *b, tgl_ptr table, tgl_ptr ids, tgl_ptr out, size_t table_rows,
                                   size_t cols, size_t n_ids);

/* ---- attention and convolution (f32) ----------------------------------------------------- */

/* Scaled dot-product attention: o = softmax(scale * q k^T + mask) v per (batch, head).
 * q: [batch, heads, seq_q, head_dim], k and v: [batch, heads, seq_kv, head_dim], o like q.
 * causal: query i sees key j iff j <= i + (seq_kv - seq_q) (bottom-right aligned, so a single
 * decode query sees the whole cache; equals the usual mask when seq_q == seq_kv). A query that
 * sees no key (causal with seq_kv < seq_q) gets a row of zeros. scale must be finite; seq_kv == 0
 * gives zeros; batch, heads, seq_q or head_dim 0 is a no-op. o must not overlap q, k or v.
 * GL runs one fused pass with an online softmax (no seq_q x seq_kv matrix in memory) and, for
 * few query rows or (llvmpipe) keys past what one invocation may walk, a pass over chunks of
 * keys and a merge, which keeps the device busy on long caches.
 * Errors: TGL_ERR_INVALID_ARGUMENT (scale not finite, size overflow, o overlapping an input),
 *   TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (GL: head_dim > 256; one (batch, head) block's
 *   query rows, or 256 of its keys, past the device's SSBO block size; keys past it are walked a
 *   window at a time).
 * Example: tgl_attention(b, q, k, v, o, 1, heads, seq, seq, 64, 0.125f, 1);  // causal self-attention */
TGL_API tgl_status tgl_attention(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                 size_t heads, size_t seq_q, size_t seq_kv, size_t head_dim, float scale,
                                 int causal);
/* tgl_attention over a KV cache: k and v are [batch, heads, kv_capacity, head_dim] of which the
 * first seq_kv positions of each head are used (kv_capacity >= seq_kv), so a decoder appends
 * to its cache and attends without repacking it. tgl_attention is this with kv_capacity ==
 * seq_kv. Errors: as tgl_attention, and TGL_ERR_INVALID_ARGUMENT for kv_capacity < seq_kv.
 * Example: tgl_attention_kv(b, q, kc, vc, o, 1, heads, 1, past + 1, max_seq, 64, 0.125f, 1);  // a decode step */
TGL_API tgl_status tgl_attention_kv(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                    size_t heads, size_t seq_q, size_t seq_kv, size_t kv_capacity,
                                    size_t head_dim, float scale, int causal);

/* tgl_attention_kv with grouped-query attention (GQA; multi-query attention with heads_kv 1):
 * k and v are [batch, heads_kv, kv_capacity, head_dim], and query head h attends with key/value
 * head h / (heads / heads_kv), as PyTorch's scaled_dot_product_attention(enable_gqa=True) and
 * Llama-family models do: no copy of k or v per query head. heads_kv must divide heads;
 * heads_kv == heads is tgl_attention_kv.
 * Errors: as tgl_attention_kv, and TGL_ERR_INVALID_ARGUMENT for heads_kv 0 or not dividing heads.
 * Example: tgl_attention_gqa(b, q, kc, vc, o, 1, 32, 8, 1, past + 1, max_seq, 128, 0.0884f, 1);  // a decode step */
TGL_API tgl_status tgl_attention_gqa(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                     size_t heads, size_t heads_kv, size_t seq_q, size_t seq_kv, size_t kv_capacity,
                                     size_t head_dim, float scale, int causal);

/* tgl_attention_t's settings beyond the shapes its tensors carry. Zero-initialized fields give
 * plain softmax(scale q k^T) v over every key: no causal mask, window, capping or bias. */
typedef struct tgl_attention_desc {
    float scale;          /* finite; 0 is 1 / sqrt(head_dim) */
    int causal;           /* query i sees key j iff j <= i + (seq_kv - seq_q), as tgl_attention */
    size_t seq_kv;        /* keys used of k and v's kv_capacity (their dim 2); 0: all of them */
    size_t window;        /* 0, or a sliding window: query i (at position p = i + seq_kv - seq_q)
                           * sees only keys j > p - window (Mistral's, Gemma's local layers) */
    float softcap;        /* 0, or > 0: each scaled score s becomes softcap * tanh(s / softcap)
                           * (Gemma 2's logit soft-capping), before the ALiBi bias */
    float alibi_max_bias; /* 0, or > 0: ALiBi, the bias -slope_h |p - j| added to each score of
                           * head h, the slopes of BLOOM and ggml: with n = the largest power of 2
                           * <= heads, slope_h = 2^(-max_bias (h + 1) / n) for h < n, else
                           * 2^(-max_bias (2 (h - n) + 1) / (2 n)); 8 in BLOOM and MPT */
    const size_t *seq_lens; /* NULL, or batch host values: batch item b uses its first
                           * seq_lens[b] keys (<= seq_kv), as if seq_kv were seq_lens[b] (the causal
                           * mask and positions then count from its own length): ragged batched
                           * decoding from one cache */
} tgl_attention_desc;

/* Scaled dot-product attention over tensors, the extended form: grouped-query heads, a KV cache
 * in f16, an additive mask, sliding windows, logit soft-capping, ALiBi and per-item key
 * lengths, in the same fused online-softmax kernels as tgl_attention.
 * q: f32 [batch, heads, seq_q, head_dim]; k and v: f32 or f16 (both the same)
 * [batch, heads_kv, kv_capacity, head_dim], heads_kv dividing heads (query head h reads key /
 * value head h / (heads / heads_kv)); o: f32 like q. q, k, v and o contiguous (row-major); o
 * must not overlap q, k, v or mask. mask: NULL, or f32 [batch or 1, heads or 1, seq_q, seq_kv]
 * added to the scores (a dim of 1 broadcasts; -inf hides a key, as PyTorch's attn_mask), any
 * non-negative strides with stride 1 along the keys. Per query row: the scores s_j = scale
 * q.k_j, capped, biased, plus the mask, over the keys it sees (causal, window, seq_lens), then
 * o = sum_j softmax(s)_j v_j accumulated in f32. A row that sees no key, or whose every score is
 * -inf, is zeros. head_dim up to 256 on GL.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL q, k, v, o or d; shapes that do not match as above, a
 *   tensor that is not contiguous, a mask stride that is negative or not 1 along the keys,
 *   scale, softcap or alibi_max_bias not finite or negative, seq_kv past kv_capacity, a seq_lens
 *   entry past seq_kv, overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a dtype other
 *   than these; GL: as tgl_attention, and a mask on a device without buffer textures: ES 3.1
 *   without OES/EXT_texture_buffer).
 * Example: tgl_attention_desc d = {.causal = 1, .seq_kv = past + 1, .window = 4096};
 *          tgl_attention_t(b, &q, &k_cache, &v_cache, NULL, &o, &d);  // f16 caches [1, 8, ctx, 128] */
TGL_API tgl_status tgl_attention_t(tgl_backend *b, const tgl_tensor *q, const tgl_tensor *k, const tgl_tensor *v,
                                   const tgl_tensor *mask, const tgl_tensor *o, const tgl_attention_desc *d);

/* 2-D convolution (cross-correlation, as in every deep-learning framework). input: NCHW
 * [batch, in_channels, in_h, in_w]; filter: OIHW [out_channels, in_channels / groups, kernel_h,
 * kernel_w]; bias: [out_channels] or 0; output: NCHW [batch, out_channels, out_h, out_w] with
 * out_h = (in_h + 2 pad_h - dilation_h (kernel_h - 1) - 1) / stride_h + 1 (likewise w).
 * Output channel o of group g = o / (out_channels / groups) reads input channels
 * g * in_channels / groups ... (g + 1) * in_channels / groups - 1; groups == in_channels ==
 * out_channels is a depthwise convolution. Zero strides, dilations and groups mean 1.
 * 1-D convolution (PyTorch's conv1d: input [batch, in_channels, length], filter [out_channels,
 * in_channels / groups, kernel]) is this with in_h = kernel_h = 1 and no padding, stride or
 * dilation along h: the tensors are the same bytes, and out_h is 1. */
typedef struct tgl_conv2d_desc {
    size_t batch, in_channels, in_h, in_w, out_channels, kernel_h, kernel_w;
    size_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups; /* 0 -> 1 (pads 0) */
} tgl_conv2d_desc;
/* The output's spatial size. Errors: TGL_ERR_INVALID_ARGUMENT (NULL, kernel 0, the dilated
 * kernel larger than the padded input, channels not divisible by groups, size overflow).
 * Example: size_t oh, ow; tgl_conv2d_output_size(&d, &oh, &ow);  // 224x224, k 7, stride 2, pad 3: 112x112 */
TGL_API tgl_status tgl_conv2d_output_size(const tgl_conv2d_desc *d, size_t *out_h, size_t *out_w);
/* Runs the convolution; batch, channels 0 are no-ops. output must not overlap input, filter or
 * bias. GL runs it as an implicit GEMM (filter x on-the-fly im2col, nothing materialized) or,
 * where the device profile says conv_im2col (llvmpipe), groups of 16 or more output channels as
 * im2col written into a working buffer times the filter; where it says conv_winograd (every
 * profile; desktop GL contexts), 3x3 kernels of stride and dilation 1 in one group of 16 or more
 * channels in and out as Winograd's F(2x2, 3x3) or F(4x4, 3x3) (the profile's tile, 2x2 where a
 * batch has few 4x4 tiles), 2.25x or 4x fewer multiplies through working buffers, each output a
 * sum of transformed terms, so its rounding differs from the direct sum's within f32 (outputs that come out NaN or infinite are summed again directly, so special
 * values give what the other kernels give; docs/ops.md);
 * the CPU backend as direct loops with double sums. The padding is zeros that multiply the
 * filter on every path (PyTorch's semantics): an infinite or NaN filter tap over it gives NaN.
 * Errors: as tgl_conv2d_output_size, TGL_ERR_INVALID_ARGUMENT (overlap), TGL_ERR_INVALID_POINTER.
 * Example: tgl_conv2d(b, &d, image, filter, bias, out);  // out: [batch, out_channels, oh, ow] */
TGL_API tgl_status tgl_conv2d(tgl_backend *b, const tgl_conv2d_desc *d, tgl_ptr input, tgl_ptr filter,
                              tgl_ptr bias, tgl_ptr output);

/* 2-D transposed convolution, PyTorch's F.conv_transpose2d (the gradient of tgl_conv2d with
 * respect to its input). d holds what PyTorch's ConvTranspose2d names: batch, in_channels,
 * in_h, in_w of this op's own input [batch, in_channels, in_h, in_w], out_channels, the kernel,
 * stride, padding, dilation and groups (zero strides, dilations and groups mean 1); filter is
 * [in_channels, out_channels / groups, kernel_h, kernel_w] (PyTorch's weight layout), bias
 * [out_channels] or 0, output [batch, out_channels, out_h, out_w] with out_h = (in_h - 1)
 * stride_h - 2 pad_h + dilation_h (kernel_h - 1) + output_padding_h + 1 (likewise w):
 * output[n, o, y, x] = bias[o] + the sum over the group's input channels c and taps (ky, kx)
 * with y = iy stride_h - pad_h + ky dilation_h (likewise x) of input[n, c, iy, ix] filter[c,
 * o within its group, ky, kx]. output_padding (each below its stride or its dilation, as
 * PyTorch requires) only adds rows and columns at the far edge. */
TGL_API tgl_status tgl_conv_transpose2d_output_size(const tgl_conv2d_desc *d, size_t output_padding_h,
                                                    size_t output_padding_w, size_t *out_h, size_t *out_w);
/* Runs it; batch, channels 0 are no-ops; output must not overlap input, filter or bias. GL: an
 * invocation per output element gathering the taps that reach it; the CPU backend: double sums.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, empty kernel or input, channels not divisible by
 *   groups, an output padding not below its stride or its dilation, an output of no rows or
 *   columns (padding larger than the full output), sizes past 2^40, overlap),
 *   TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (GL: one image or the filter past the SSBO
 *   block limit).
 * Example: U-Net's 2x upsampling: d = {.batch = 1, .in_channels = 128, .in_h = 32, .in_w = 32,
 *   .out_channels = 64, .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};
 *   tgl_conv_transpose2d(b, &d, 0, 0, x, w, bias, y);  // y: [1, 64, 64, 64] */
TGL_API tgl_status tgl_conv_transpose2d(tgl_backend *b, const tgl_conv2d_desc *d, size_t output_padding_h,
                                        size_t output_padding_w, tgl_ptr input, tgl_ptr filter, tgl_ptr bias,
                                        tgl_ptr output);

/* tgl_conv2d with its epilogue in the same pass: y = conv + bias, then (residual_first) y +=
 * residual, y = activation(y), then (!residual_first) y += residual, one store per element.
 * residual (0: none) is a tensor of output's shape; it may be output itself (accumulate in place)
 * and otherwise shares no byte with it (it may overlap input, filter or bias). ResNet's block
 * ends are residual_first with RELU: relu(conv + bias + identity); a batch norm in inference
 * form folds into filter and bias first (tgl_fold_batchnorm). slope is LEAKY_RELU's (PyTorch's
 * default 0.01 is not implied), ignored otherwise. With no activation and no residual this is
 * tgl_conv2d. Where a residual other than output is given, it is copied into output before the
 * convolution runs (GL reads it there: a fifth storage buffer is more than ES 3.1 guarantees).
 * Errors: as tgl_conv2d; TGL_ERR_INVALID_ARGUMENT (activation out of range, residual_first not 0
 *   or 1, slope not finite, residual overlapping output without being it);
 *   TGL_ERR_INVALID_POINTER (residual). Nothing is written unless every argument is valid.
 * Example: a ResNet basic block's second conv, BN folded, identity shortcut x:
 *   tgl_conv2d_fused(b, &d, h, w2, b2, TGL_ACTIVATION_RELU, 0.0f, x, 1, out); */
TGL_API tgl_status tgl_conv2d_fused(tgl_backend *b, const tgl_conv2d_desc *d, tgl_ptr input, tgl_ptr filter,
                                    tgl_ptr bias, tgl_activation activation, float slope, tgl_ptr residual,
                                    int residual_first, tgl_ptr output);

/* Folds a batch norm in inference form that follows a convolution into the convolution's filter
 * and bias, on the host, so the pair is one tgl_conv2d: with s = gamma / sqrt(var + eps) per
 * output channel o, filter[o, ...] *= s[o] (per_channel = in_channels / groups * kernel_h *
 * kernel_w floats each) and bias[o] = (bias[o] - mean[o]) * s[o] + beta[o] (pass the conv's
 * bias, or zeros where it has none). s is computed in double and each result rounded once.
 * Errors: TGL_ERR_INVALID_ARGUMENT (a NULL array with out_channels > 0; var[o] + eps not
 *   positive or not finite, naming o; nothing is changed then).
 * Example: tgl_fold_batchnorm(64, 64 * 9, w, bias, bn_w, bn_b, bn_mean, bn_var, 1e-5f); */
TGL_API tgl_status tgl_fold_batchnorm(size_t out_channels, size_t per_channel, float *filter, float *bias,
                                      const float *gamma, const float *beta, const float *mean, const float *var,
                                      float eps);

/* 2-D max and average pooling, PyTorch's F.max_pool2d and F.avg_pool2d. NCHW f32 in and out
 * (output [batch, channels, out_h, out_w]). stride 0 means the kernel size, dilation 0 means 1
 * (max only: average takes none, as PyTorch's). Padding (at most half the kernel, as PyTorch
 * requires) adds pad_h rows and pad_w columns on each side that no window reads as values: max
 * takes the largest element inside the input (NaN wins, as PyTorch's), average divides the
 * window's sum by its size clipped to the padded input (count_include_pad) or by its elements
 * inside the input, and a window with none gives 0. out_h = (in_h + 2 pad_h - dilation_h
 * (kernel_h - 1) - 1 + (ceil_mode ? stride_h - 1 : 0)) / stride_h + 1, less one in ceil_mode
 * when the last window would start in the bottom padding (likewise w). */
typedef enum { TGL_POOL_MAX = 0, TGL_POOL_AVG = 1 } tgl_pool_kind;
typedef struct tgl_pool2d_desc {
    size_t batch, channels, in_h, in_w, kernel_h, kernel_w;
    size_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
    tgl_pool_kind kind;
    int ceil_mode;            /* PyTorch's: the last window may start in the padding's range */
    int count_include_pad;    /* average: divide by the window's size, padding included */
    /* fields may be appended (a layout, say); zero always means the default above (NCHW) */
} tgl_pool2d_desc;
/* The output's spatial size. Errors: TGL_ERR_INVALID_ARGUMENT (NULL, an empty input or kernel,
 * padding past half the kernel, a dilated average, an unknown kind, an output of no element,
 * size overflow).
 * Example: size_t oh, ow; tgl_pool2d_output_size(&d, &oh, &ow);  // 112x112, k 3, stride 2, pad 1: 56x56 */
TGL_API tgl_status tgl_pool2d_output_size(const tgl_pool2d_desc *d, size_t *out_h, size_t *out_w);
/* Runs the pooling; batch or channels 0 are no-ops. output must not overlap input. One
 * invocation per output element on GL; the CPU backend sums averages in double.
 * Errors: as tgl_pool2d_output_size, TGL_ERR_INVALID_ARGUMENT (overlap), TGL_ERR_INVALID_POINTER,
 *   TGL_ERR_UNSUPPORTED (GL: one image plane past the SSBO block limit).
 * Example: ResNet's stem pool: d = {.batch = 1, .channels = 64, .in_h = 112, .in_w = 112,
 *   .kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
 *   tgl_pool2d(b, &d, x, y);  // y: [1, 64, 56, 56] */
TGL_API tgl_status tgl_pool2d(tgl_backend *b, const tgl_pool2d_desc *d, tgl_ptr input, tgl_ptr output);
/* tgl_pool2d's max pooling that also writes, for each output element, the index within its plane
 * (y * in_w + x) of the input pixel it took, as i32 into indices ([batch, channels, out_h,
 * out_w]): PyTorch's max_pool2d with return_indices, the first largest tap in row-major order (the
 * window's first tap inside the input when all are -inf, and for a window with no tap inside the
 * input, which dilation can make, -inf with the index its first tap past the padding would have,
 * perhaps outside the plane), the last NaN once one is seen; what
 * max_unpool2d and a training backward pass read. d->kind must be TGL_POOL_MAX; indices shares no
 * byte with input or output.
 * Errors: as tgl_pool2d's, TGL_ERR_INVALID_ARGUMENT (an average kind, indices overlapping input or
 *   output), TGL_ERR_UNSUPPORTED (planes of 2^31 pixels or more: i32 indices).
 * Example: pooled = max_pool2d(x) with where each came from: tgl_max_pool2d_indices(b, &d, x, y, at); */
TGL_API tgl_status tgl_max_pool2d_indices(tgl_backend *b, const tgl_pool2d_desc *d, tgl_ptr input, tgl_ptr output,
                                          tgl_ptr indices);
/* PyTorch's F.adaptive_max_pool2d and F.adaptive_avg_pool2d over NCHW f32: output pixel (oy, ox)
 * of [batch, channels, out_h, out_w] pools the input rows floor(oy in_h / out_h) ..
 * ceil((oy + 1) in_h / out_h) - 1 and the columns likewise (PyTorch's window rule: windows of
 * unequal sizes that may overlap, every input pixel in one at least); max takes the largest, a
 * NaN winning, average the window's sum in f32 divided by its rows and then its columns (PyTorch's
 * order). An output of 1 x 1 is the global pool. batch or channels 0 are no-ops; output must not
 * overlap input. One invocation per output element on GL.
 * Errors: TGL_ERR_INVALID_ARGUMENT (an unknown kind, an empty input or output, size overflow,
 *   overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (a side of 2^31 pixels or more; GL:
 *   one image plane past the SSBO block limit, an input side times its output side past 2^32).
 * Example: ResNet's global average before the classifier: tgl_adaptive_pool2d(b, TGL_POOL_AVG,
 *   1, 512, 7, 7, 1, 1, features, pooled);  // pooled: [1, 512, 1, 1] */
TGL_API tgl_status tgl_adaptive_pool2d(tgl_backend *b, tgl_pool_kind kind, size_t batch, size_t channels, size_t in_h,
                                       size_t in_w, size_t out_h, size_t out_w, tgl_ptr input, tgl_ptr output);

/* Resizing NCHW f32 images, PyTorch's F.interpolate (upsample_nearest2d, _upsample_nearest_exact2d,
 * upsample_bilinear2d, upsample_bicubic2d on the CPU; antialias off): each output pixel (oy, ox)
 * reads the source index r = s * oy (align_corners) or s * (oy + 0.5) - 0.5 (else; nearest:
 * s * oy), likewise along x, where s is computed in f32 on the host: align_corners ? (in - 1) /
 * (out - 1) (0 for an output of 1) : scale > 0 ? 1 / scale : in / out. NEAREST takes floor(r),
 * but, where out_h + out_w <= 128, o along an axis whose output size equals its input's and o / 2
 * along one that doubles it, whatever the scale (PyTorch's CPU kernels: its vectorized one takes
 * those outputs, its generic one the larger; its CUDA kernel takes floor(r) on every size);
 * NEAREST_EXACT floor(max(r, 0) + 0.5); both at most in - 1. BILINEAR (r below 0 taken as 0;
 * an axis whose output size equals its input's copies it) blends the two neighbours of floor(r)
 * by r - floor(r) (the last pixel repeating at the edge); BICUBIC the four around it with
 * Keys' cubic convolution (a = -0.75, PyTorch's), indices clamped to the image. The index and
 * weight arithmetic is PyTorch's in f32, in its order, on both backends. */
typedef enum {
    TGL_INTERP_NEAREST = 0,       /* mode "nearest" (OpenCV's INTER_NEAREST rule) */
    TGL_INTERP_NEAREST_EXACT = 1, /* mode "nearest-exact" (pixel centres) */
    TGL_INTERP_BILINEAR = 2,
    TGL_INTERP_BICUBIC = 3,
    TGL_INTERP_MODE_COUNT
} tgl_interp_mode;
typedef struct tgl_interpolate_desc {
    size_t batch, channels, in_h, in_w, out_h, out_w;
    tgl_interp_mode mode;
    int align_corners; /* bilinear and bicubic: the corner pixels' centres map onto each other */
    /* PyTorch's scale_factor with recompute_scale_factor off: > 0 gives the source index's scale
     * 1 / scale (F.interpolate's output size is then floor(in * scale)); 0 takes in / out */
    double scale_h, scale_w;
} tgl_interpolate_desc;
/* Runs the resize; batch or channels 0 are no-ops. output ([batch, channels, out_h, out_w])
 * must not overlap input. One invocation per output element on GL.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, an empty image or output, align_corners with a
 *   nearest mode, an unknown mode, a scale that is negative, not finite or whose 1 / scale is
 *   not a finite f32, size overflow, overlap), TGL_ERR_INVALID_POINTER, TGL_ERR_UNSUPPORTED (GL:
 *   one image plane past the SSBO block limit, or a side past 2^24 pixels, where f32 indices
 *   stop being exact).
 * Example: a 2x bilinear upsample of a feature map: d = {.batch = 1, .channels = 256, .in_h = 20,
 *   .in_w = 20, .out_h = 40, .out_w = 40, .mode = TGL_INTERP_BILINEAR}; tgl_interpolate(b, &d, x, y); */
TGL_API tgl_status tgl_interpolate(tgl_backend *b, const tgl_interpolate_desc *d, tgl_ptr input, tgl_ptr output);

/* ---- tracing and profiling -------------------------------------------------------------- */

/* Records every later call on b (memory, copies, synchronization, ops: function, arguments,
 * status) and the contents of every buffer at the moment a call reads it, into a new file
 * dir/PID-N-BACKEND.tgltrace (dir is created if missing; equal contents are stored once).
 * Allocations that exist already enter the trace with their current contents. While tracing,
 * new allocations start zeroed (so bytes no call wrote replay identically), and every call
 * waits for the device to read its inputs back: results are unchanged, speed is not.
 * TGL_TRACE=DIR does this from tgl_open. `tensorgl replay DIR` re-executes the trace
 * (docs/trace-format.md describes the file). A write error stops the recording, is logged,
 * and is reported by tgl_trace_stop; the calls themselves go on.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, already tracing, path too long), TGL_ERR_IO.
 * Example: tgl_trace_start(b, "/tmp/run1");  ...  tgl_trace_stop(b); */
TGL_API tgl_status tgl_trace_start(tgl_backend *b, const char *dir);
/* Ends the recording and closes the file (tgl_close does this too).
 * Errors: TGL_ERR_INVALID_ARGUMENT (not tracing), TGL_ERR_IO (a write failed: the trace is
 *   incomplete). */
TGL_API tgl_status tgl_trace_stop(tgl_backend *b);

/* Starts (or restarts, from zero) timing every call on b by kind. Each call is timed alone: the
 * profiler waits for the device before and after it, and uses GL timer queries for the device
 * time where the driver has them (not llvmpipe, whose queries do not time compute work), wall
 * time otherwise. TGL_PROFILE=1 does this from tgl_open and prints the table to stderr at
 * tgl_close. Errors: TGL_ERR_INVALID_ARGUMENT (NULL), TGL_ERR_OUT_OF_MEMORY.
 * Example: tgl_profile_start(b);  ...  tgl_profile_report(b, stdout); */
TGL_API tgl_status tgl_profile_start(tgl_backend *b);
/* Prints the table so far to out: per call kind, calls, total and mean time, share of the
 * total, GFLOP/s and GB/s (from the call's nominal work). Profiling goes on.
 * Errors: TGL_ERR_INVALID_ARGUMENT (NULL, or not profiling). */
TGL_API tgl_status tgl_profile_report(tgl_backend *b, FILE *out);
/* Stops profiling and drops the figures. Errors: TGL_ERR_INVALID_ARGUMENT (NULL). */
TGL_API tgl_status tgl_profile_stop(tgl_backend *b);

#ifdef __cplusplus
}
#endif
#endif /* TENSORGL_H */
