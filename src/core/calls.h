/* The traced and profiled public calls, described as data: one table row per entry point
 * names it, gives its argument signature and its comparison family. The hook (hook.c) captures
 * a call's arguments into a tgl__call through the signature, and tgl__call_invoke makes the
 * same call from one; the trace writer, the trace reader and replay all work from the table.
 *
 * Signature letters, one per argument after the backend:
 *   e  int or enum              z  size_t                 f  float
 *   p  device pointer, not accessed (tgl_free)
 *   i  device pointer read by the call (its allocation is snapshotted before the call)
 *   o  written f32    O  written f16    I  written int32    b  written bytes (copies)
 *   x  read and written f32             X  read and written f16
 *   S  const size_t *array + size_t count (two C arguments)
 *   q  const size_t *array of the preceding S's count
 *   L  const tgl_ptr *list + size_t count (two C arguments), each read like i
 *   s  const char * (NUL-terminated)    c  const tgl_conv2d_desc *
 *   D  const void * host data of the following z's bytes (tgl_copy_htod)
 *   H  void * host destination (tgl_copy_dtoh)      A  tgl_ptr * result of tgl_alloc */
#ifndef TGL_CORE_CALLS_H
#define TGL_CORE_CALLS_H

#include "internal.h"

/* How a replay compares what a call wrote with what the trace recorded. */
typedef enum {
    TGL__CMP_EXACT,       /* copies, fills, casts, gathers, permutes, indices: bit for bit */
    TGL__CMP_ELEMENTWISE, /* one rounding per element plus libm differences: NMSE <= 1e-9 */
    TGL__CMP_ACCUMULATE,  /* sums over many terms (reductions, norms, gemm, attention): 1e-7 */
    TGL__CMP_F16          /* f16 results: 1e-5 */
} tgl__cmp_family;

/* X(id, C name, signature, family) */
#define TGL__CALLS(X)                                                                  \
    X(ALLOC, tgl_alloc, "zA", EXACT)                                                   \
    X(FREE, tgl_free, "p", EXACT)                                                      \
    X(COPY_HTOD, tgl_copy_htod, "bDz", EXACT)                                          \
    X(COPY_DTOH, tgl_copy_dtoh, "Hiz", EXACT)                                          \
    X(COPY_DTOD, tgl_copy_dtod, "biz", EXACT)                                          \
    X(SYNCHRONIZE, tgl_synchronize, "", EXACT)                                         \
    X(UNARY, tgl_unary, "eioz", ELEMENTWISE)                                           \
    X(BINARY, tgl_binary, "eiioz", ELEMENTWISE)                                        \
    X(MAP, tgl_map, "sLoz", ELEMENTWISE)                                               \
    X(BINARY_BROADCAST, tgl_binary_broadcast, "eiSiSo", ELEMENTWISE)                   \
    X(PERMUTE, tgl_permute, "ioSq", EXACT)                                             \
    X(REDUCE, tgl_reduce, "eioSz", ACCUMULATE)                                         \
    X(ARGMAX, tgl_argmax, "iISz", EXACT)                                               \
    X(ARGMIN, tgl_argmin, "iISz", EXACT)                                               \
    X(FILL, tgl_fill, "ofz", EXACT)                                                    \
    X(SCALE_ADD, tgl_scale_add, "fifxz", ELEMENTWISE)                                  \
    X(CAST_F32_F16, tgl_cast_f32_f16, "iOz", EXACT)                                    \
    X(CAST_F16_F32, tgl_cast_f16_f32, "ioz", EXACT)                                    \
    X(SOFTMAX, tgl_softmax, "iozz", ACCUMULATE)                                        \
    X(LOG_SOFTMAX, tgl_log_softmax, "iozz", ACCUMULATE)                                \
    X(RMSNORM, tgl_rmsnorm, "iiozzf", ACCUMULATE)                                      \
    X(LAYERNORM, tgl_layernorm, "iiiozzf", ACCUMULATE)                                 \
    X(GEMM, tgl_gemm, "eezzzfizizfxz", ACCUMULATE)                                     \
    X(GEMM_BATCHED, tgl_gemm_batched, "eezzzfizzizzfxzzz", ACCUMULATE)                 \
    X(GEMM_F16, tgl_gemm_f16, "eezzzfizizfXz", F16)                                    \
    X(MATVEC, tgl_matvec, "zziio", ACCUMULATE)                                         \
    X(ROPE, tgl_rope, "iozzzzzfe", ELEMENTWISE)                                        \
    X(GATHER_ROWS, tgl_gather_rows, "iiozzz", EXACT)                                   \
    X(ATTENTION, tgl_attention, "iiiozzzzzfe", ACCUMULATE)                             \
    X(ATTENTION_KV, tgl_attention_kv, "iiiozzzzzzfe", ACCUMULATE)                      \
    X(CONV2D, tgl_conv2d, "ciiio", ACCUMULATE)

typedef enum {
#define TGL__CALL_ID(id, name, sig, family) TGL__FN_##id,
    TGL__CALLS(TGL__CALL_ID)
#undef TGL__CALL_ID
    TGL__FN_COUNT
} tgl__fn;

#define TGL__CALL_MAX_ARGS 20
#define TGL__CONV2D_FIELDS 14 /* size_t members of tgl_conv2d_desc */

/* One argument in native form: what the C call takes. Arrays, strings, descriptors and host
 * buffers point at the caller's memory (tracing) or at the reader's copy (replay). */
typedef struct tgl__arg {
    uint64_t u;      /* e (as int64), z, f (float bits), device pointers, counts of S and L */
    const void *ptr; /* S, q, L, s, c, D, H, A */
} tgl__arg;

typedef struct tgl__call {
    tgl__fn fn;
    tgl__arg args[TGL__CALL_MAX_ARGS];
} tgl__call;

const char *tgl__fn_name(tgl__fn fn);
const char *tgl__fn_signature(tgl__fn fn);
tgl__cmp_family tgl__fn_family(tgl__fn fn);
/* The NMSE a replay accepts for a family (0 for exact). */
double tgl__cmp_threshold(tgl__cmp_family f);

static inline float tgl__arg_f32(const tgl__arg *a)
{
    union { uint32_t u; float f; } v = {.u = (uint32_t)a->u};
    return v.f;
}

/* Makes the call `c` describes on b and returns its status. */
tgl_status tgl__call_invoke(tgl_backend *b, const tgl__call *c);

/* Writes "name(arg, arg, ...)" into buf (device pointers as given, arrays in brackets). */
void tgl__call_format(const tgl__call *c, char *buf, size_t size);

/* Estimated work of a call for the profiler: floating-point operations and bytes moved. */
void tgl__call_cost(const tgl__call *c, double *flops, double *bytes);

#endif
