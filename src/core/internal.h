/* Internal interface between the public entry points (src/core) and the backends. */
#ifndef TGL_CORE_INTERNAL_H
#define TGL_CORE_INTERNAL_H

#include "tensorgl.h"
#include "expr.h"
#include "handles.h"
#include <stdarg.h>
#include <stdio.h>

/* A resolved device address: the backend's buffer object and a byte offset inside it. */
typedef struct tgl__view {
    void *buf;
    size_t offset;
} tgl__view;

typedef struct tgl__trace tgl__trace;
typedef struct tgl__profile tgl__profile;

/* What tgl_open resolved from tgl_options and the environment. */
typedef enum { TGL__API_ANY = 0, TGL__API_GL, TGL__API_GLES } tgl__api;
/* TGL_POOL: the GL memory pool's mode, or the device's own choice. */
typedef enum { TGL__POOL_DEVICE = 0, TGL__POOL_OFF, TGL__POOL_REUSE, TGL__POOL_CARVE } tgl__pool_choice;
/* TGL_LIMITS: the device's own limits, or those cut to what a specification guarantees. */
typedef enum { TGL__LIMITS_DEVICE = 0, TGL__LIMITS_GL43_MIN, TGL__LIMITS_ES31_MIN } tgl__spec_limits;

typedef struct tgl__config {
    tgl_backend_kind kind;
    int device;
    int device_explicit; /* TGL_DEVICE or opts->device chose it: no silent fallback to others */
    char device_name[128]; /* TGL_DEVICE=text: the first EGL device whose description contains it */
    unsigned flags;
    tgl__api api;
    unsigned max_tasks;
    unsigned sync_timeout_ms;
    unsigned max_dispatch_ms; /* TGL_MAX_DISPATCH_MS: heavy ops split so one dispatch takes about this long at most; 0 = off */
    char log_path[512];
    char gemm[64];      /* TGL_GEMM: the GL backend's GEMM kernel override, "" for the table's */
    char cache_dir[1024]; /* program binaries on disk; "" = no disk cache */
    char trace_dir[1024]; /* TGL_TRACE: record every call into a trace file there; "" = off */
    int profile;          /* TGL_PROFILE=1: time every call, print the table at tgl_close */
    uint64_t max_memory;  /* TGL_MAX_MEMORY: bytes of live allocations allowed; 0 = no budget */
    int spirv;            /* TGL_SHADER=spirv: kernels from prebuilt SPIR-V modules (gl_spirv.c) */
    char spirv_dir[1024]; /* TGL_SPIRV_DIR: where the modules are; "" = next to the library */
    tgl__pool_choice pool; /* TGL_POOL=off|reuse|carve; TGL__POOL_DEVICE when unset or empty */
    int profile_timer;    /* TGL_PROFILE_TIMER=0|1: GL timer queries off or on; -1 = the device's choice */
    char device_profile[512]; /* TGL_DEVICE_PROFILE=[name][,trait=value...]: checked by the GL
                                 backend at open (gl_profile.c), which knows the names */
    tgl__spec_limits limits; /* TGL_LIMITS=gl43-min|es31-min: the device's limits cut to the spec's
                                minimums (gl_limits.c); TGL__LIMITS_DEVICE when unset or empty */
} tgl__config;

/* Whether the user named a device (TGL_DEVICE or opts->device, by index past the first or by
 * name): one that cannot be had is then an error for TGL_BACKEND_AUTO too, never a fallback to
 * another device or to the CPU backend. */
static inline int tgl__device_demanded(const tgl__config *c)
{
    return c->device_explicit && (c->device > 0 || c->device_name[0]);
}

/* A strided gather: out (row-major, `shape`) element at coordinates c reads a[sum c_d * a_stride[d]]
 * (and bb likewise); a stride of 0 broadcasts. Used by tgl_binary_broadcast and tgl_permute. */
typedef struct tgl__strided {
    size_t ndim;
    size_t shape[TGL_MAX_DIMS];
    size_t a_stride[TGL_MAX_DIMS], b_stride[TGL_MAX_DIMS];
    size_t n_out, n_a, n_b; /* element counts (n_b 0 without bb) */
} tgl__strided;

/* A validated (batched) matrix product; see tgl_gemm_batched. m, n, batch > 0; k may be 0 (then
 * a and b are not read and their views are empty). Strides are 0 when batch == 1. Elements are
 * f32, or binary16 when f16. */
typedef struct tgl__gemm {
    int trans_a, trans_b, f16;
    size_t m, n, k, batch;
    float alpha, beta;
    tgl__view a, b, c;
    size_t lda, ldb, ldc;
    size_t stride_a, stride_b, stride_c;
    /* tgl_gemm_fused's epilogue (every other caller leaves it zero): bias.buf NULL for none,
     * else n floats; act a tgl_activation; gate 1: C = act(alpha AB + bias) * C (beta is 0). */
    tgl__view bias;
    tgl_activation act;
    int gate;
    float slope;
} tgl__gemm;

/* Products of at most this many rows of x (x W^T, W stored [n, k]) read W once per few rows
 * (the matvec kernels: tgl_matvec_t, and GL's tgl_gemm of that form); more take the GEMM
 * kernels, whose tiles reuse each load of W across rows (api_quant.c's prefill, gl_gemm.c). */
#define TGL__THIN_ROWS 16

/* Whether a product has an epilogue beyond tgl_gemm's alpha and beta. */
static inline int tgl__gemm_has_epilogue(const tgl__gemm *g)
{
    return g->bias.buf != NULL || g->act != TGL_ACTIVATION_NONE || g->gate;
}

/* Elements from the first to one past the last element of `batch` rows x cols matrices with
 * row stride ld, `stride` elements apart (0 when empty). Validated products do not overflow. */
static inline size_t tgl__matrix_span(size_t rows, size_t cols, size_t ld, size_t stride, size_t batch)
{
    return rows && cols && batch ? (batch - 1) * stride + (rows - 1) * ld + cols : 0;
}

/* The spans of an mc x kc slice of op(A) and a kc x nc slice of op(B), over bc products. */
static inline size_t tgl__gemm_span_a(const tgl__gemm *g, size_t mc, size_t kc, size_t bc)
{
    return g->trans_a ? tgl__matrix_span(kc, mc, g->lda, g->stride_a, bc)
                      : tgl__matrix_span(mc, kc, g->lda, g->stride_a, bc);
}

static inline size_t tgl__gemm_span_b(const tgl__gemm *g, size_t kc, size_t nc, size_t bc)
{
    return g->trans_b ? tgl__matrix_span(nc, kc, g->ldb, g->stride_b, bc)
                      : tgl__matrix_span(kc, nc, g->ldb, g->stride_b, bc);
}

/* A validated attention call (see tgl_attention_kv): every size > 0 except seq_kv, which may
 * be 0 (then k and v are empty views and o becomes zeros). k and v hold kv_cap positions per
 * (batch, head), of which the first seq_kv are used. */
/* heads_kv divides heads: (batch, head) block bh = b * heads + h reads the k and v of kv block
 * bh / (heads / heads_kv) = b * heads_kv + h / (heads / heads_kv) (grouped-query attention;
 * heads_kv == heads without grouping). */
/* A validated attention call (tgl_attention*: every entry point comes here). kv_f16: k and v
 * hold binary16. window, softcap and alibi_max_bias as tgl_attention_desc says (0: off). The
 * core cuts a call with per-item key lengths into calls over runs of whole batch items, so a
 * backend sees one seq_kv, and (batch, head) block bh is head bh % heads. */
typedef struct tgl__attention {
    tgl__view q, k, v, o;
    size_t batch, heads, heads_kv, seq_q, seq_kv, kv_cap, head_dim;
    float scale;
    int causal;
    int kv_f16;
    size_t window;
    float softcap;
    float alibi_max_bias;
    /* The additive mask (mask.buf NULL: none): f32, element (b, h, i, j) at mask_b b + mask_h h +
     * mask_i i + j from mask (0 for a broadcast dim; b counted from the call's first item). */
    tgl__view mask;
    size_t mask_b, mask_h, mask_i;
} tgl__attention;

/* The last key query i sees plus one (0: none); i < seq_q. */
static inline size_t tgl__attention_keys(const tgl__attention *a, size_t i)
{
    if (!a->causal)
        return a->seq_kv;
    size_t end = i + 1 + a->seq_kv; /* i + (seq_kv - seq_q) + 1, kept unsigned */
    return end <= a->seq_q ? 0 : end - a->seq_q < a->seq_kv ? end - a->seq_q : a->seq_kv;
}

/* The first key query i sees under the sliding window: keys j > p - window, p = i + seq_kv -
 * seq_q (0 without a window; may pass tgl__attention_keys, then the row sees none). */
static inline size_t tgl__attention_first_key(const tgl__attention *a, size_t i)
{
    size_t t = i + 1 + a->seq_kv; /* p + 1 + seq_q */
    return a->window && t > a->seq_q + a->window ? t - a->seq_q - a->window : 0;
}

/* ALiBi's slope parameters (BLOOM's and ggml's): heads below n take 2^(e0 (h + 1)), the rest
 * 2^(e1 (2 (h - n) + 1)); n 0 without ALiBi. One place for both backends. */
typedef struct tgl__alibi {
    size_t n;
    double e0, e1;
} tgl__alibi;

static inline tgl__alibi tgl__attention_alibi(const tgl__attention *a)
{
    tgl__alibi r = {0, 0, 0};
    if (!(a->alibi_max_bias > 0))
        return r;
    r.n = 1;
    while (r.n * 2 <= a->heads)
        r.n *= 2;
    r.e0 = -(double)a->alibi_max_bias / (double)r.n;
    r.e1 = -(double)a->alibi_max_bias / 2.0 / (double)r.n;
    return r;
}

/* A validated convolution: d has strides, dilations and groups >= 1; every size > 0; bias.buf
 * is NULL without a bias. */
/* The fused epilogue (tgl_conv2d_fused): residual 0 none, TGL__RESIDUAL_FIRST added before the
 * activation, TGL__RESIDUAL_AFTER after it; out holds the residual when the backend is called. */
#define TGL__RESIDUAL_FIRST 1
#define TGL__RESIDUAL_AFTER 2
typedef struct tgl__conv2d {
    tgl_conv2d_desc d;
    size_t out_h, out_w;
    tgl__view in, filter, bias, out;
    tgl_activation act;
    float slope;
    int residual;
} tgl__conv2d;

/* A validated transposed convolution: d normalized (strides, dilations, groups >= 1). */
typedef struct tgl__conv_transpose2d {
    tgl_conv2d_desc d;
    size_t out_h, out_w;
    tgl__view in, filter, bias, out; /* bias.buf NULL for none */
} tgl__conv_transpose2d;

/* A validated pooling: d has strides and dilations >= 1 (average: dilation 1), every size > 0,
 * pads at most half the kernel; out_h, out_w >= 1. */
typedef struct tgl__pool2d {
    tgl_pool2d_desc d;
    size_t out_h, out_w;
    tgl__view in, out;
    tgl__view indices; /* max only: each output's i32 index within its plane; buf NULL for none */
} tgl__pool2d;

/* A validated resize (tgl_interpolate): every size > 0, align_corners 0 or 1 (0 for the nearest
 * modes); scale_h and scale_w the f32 scales of the source index (tensorgl.h), computed once on
 * the host as PyTorch does. */
typedef struct tgl__interpolate {
    tgl_interpolate_desc d;
    float scale_h, scale_w;
    tgl__view in, out;
} tgl__interpolate;

/* A validated tensor operand. view is at the lowest byte an element of it occupies (with
 * negative strides, below element (0, ..., 0)); `base` elements after it sits element
 * (0, ..., 0); `span` elements from view on cover every element reached. Strides are in the op's
 * index space (a broadcast dim has stride 0). */
typedef struct tgl__tensor_view {
    tgl__view view;
    tgl_dtype dtype;
    size_t base, span;
    int64_t strides[TGL_MAX_DIMS];
} tgl__tensor_view;

/* The block formats (q8_0, q4_0): 32 elements a block along the last dim. */
static inline int tgl__is_block(tgl_dtype dt)
{
    return dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0;
}

/* Bytes of a view's unit: an element, or a block of a block format (tgl_dtype_size is 0 for
 * those). */
static inline size_t tgl__unit_bytes(tgl_dtype dt)
{
    return dt == TGL_DTYPE_Q8_0 ? 34 : dt == TGL_DTYPE_Q4_0 ? 18 : tgl_dtype_size(dt);
}

/* The device range of a view's element (0, 0, ...), its base: where a product's operand starts. */
static inline tgl__view tgl__view_at_base(const tgl__tensor_view *v)
{
    return (tgl__view){v->view.buf, v->view.offset + v->base * tgl__unit_bytes(v->dtype)};
}

/* Bytes from the lowest to the highest unit that ni rows of nu units of a 2-D view reach (its
 * strides in units; ni, nu > 0). */
static inline size_t tgl__span_bytes(const tgl__tensor_view *v, size_t ni, size_t nu)
{
    uint64_t a0 = (uint64_t)(v->strides[0] < 0 ? -v->strides[0] : v->strides[0]);
    uint64_t a1 = (uint64_t)(v->strides[1] < 0 ? -v->strides[1] : v->strides[1]);
    return (size_t)(((ni - 1) * a0 + (nu - 1) * a1 + 1) * tgl__unit_bytes(v->dtype));
}

/* Rows [i0, i0 + ni) x units [u0, u0 + nu) of a 2-D view as a view of their own: its view starts
 * at their lowest unit, base is unit (i0, u0) from there, span what they reach. */
static inline tgl__tensor_view tgl__sub_view(const tgl__tensor_view *v, size_t i0, size_t ni, size_t u0, size_t nu)
{
    tgl__tensor_view s = *v;
    int64_t s0 = v->strides[0], s1 = v->strides[1];
    int64_t first = (int64_t)v->base + (int64_t)i0 * s0 + (int64_t)u0 * s1;
    int64_t lo = first + (s0 < 0 ? (int64_t)(ni - 1) * s0 : 0) + (s1 < 0 ? (int64_t)(nu - 1) * s1 : 0);
    size_t ub = tgl__unit_bytes(v->dtype);
    s.view.offset += (size_t)lo * ub;
    s.base = (size_t)(first - lo);
    s.span = tgl__span_bytes(v, ni, nu) / ub;
    return s;
}

/* The flat element-wise kernels (elementwise/, shape/strided, map) implement the unary and
 * binary ops before these; the later ones run on the descriptor kernels only. */
#define TGL__UNARY_FLAT_KERNELS (TGL_UNARY_CEIL + 1)
#define TGL__BINARY_FLAT_KERNELS (TGL_BINARY_POW + 1)
/* The dtypes (a TGL__DT mask) each unary and binary op takes in tgl_unary_t / tgl_binary_t
 * (ewise_dtypes.c); 0 for an op out of range. */
unsigned tgl__unary_dtypes(tgl_unary_op op);
unsigned tgl__binary_dtypes(tgl_binary_op op);
/* The unary ops that write bool (ISNAN, ISINF, ISFINITE) whatever their input's dtype. */
int tgl__unary_bool_out(tgl_unary_op op);

/* The element-wise descriptor ops as the backends see them: copy (in[0] converted to out's
 * dtype), the comparisons (in[0] op in[1] into a bool out, one input dtype), where (in[0] a
 * bool condition choosing in[1] or in[2], of out's dtype), unary and binary (out's dtype; the
 * float tests write bool), clamp (out's dtype), fill, arange. Validated: n > 0 elements of
 * `shape` (ndim 0..TGL_MAX_DIMS; dims of 1 kept), out reaches each element once, the inputs'
 * strides are seen in out's index space (broadcast: 0), and out shares no byte with an input
 * unless it is the same elements with the same dtype (`in_place` says so for copy's input). */
typedef enum {
    TGL__TEW_COPY,
    TGL__TEW_COMPARE, /* + tgl_compare_op in `sub` */
    TGL__TEW_WHERE,
    TGL__TEW_UNARY,   /* + tgl_unary_op in `sub`: out = op(in[0]), one dtype */
    TGL__TEW_BINARY,  /* + tgl_binary_op in `sub`: out = in[0] op in[1], one dtype */
    TGL__TEW_CLAMP,   /* out = min(max(in[0], in[1]), in[2]), one dtype */
    TGL__TEW_FILL,    /* out = `value` (an element's bits); in[0] is out itself, never read */
    TGL__TEW_ARANGE,  /* 1-D out = value + i * step (f32 or i32 bits by out's dtype); in[0] as fill */
    TGL__TEW_MAP,     /* out = `expr` of the inputs (tgl_map_t), each its own dtype */
    TGL__TEW_RANDOM,  /* + tgl_random_kind in `sub`: out from Philox words of (seed, offset +
                         out's row-major index); value, step, extra the kind's f32 or i32
                         parameters (api_random.c); in[0] as fill */
    TGL__TEW_DROPOUT, /* out = in[0] * f32 `value` where kept (first word >> 8 >= `step`), else 0 */
    TGL__TEW_TRIANGLE, /* out = in[0] where col - row >= (sub 1: triu) or <= (sub 0: tril) the
                          i32 diagonal in `value`, else 0; row, col the last two coordinates */
    TGL__TEW_ONE_HOT,  /* out = 1 where in[0] (i32) equals the last coordinate, else 0 */
    TGL__TEW_MASKED_FILL, /* out = `value` (an element's bits) where in[0] (bool), else in[1] */
    TGL__TEW_GATHER,   /* out = in[1] moved along `axis_stride` by the i32 in[0] (in[1]'s stride
                          along the gathered axis is 0 in the index space; the indices checked) */
    TGL__TEW_CHECK_INDEX, /* vtable->gather's first pass: the first element of the i32 in[0] outside
                             [0, `value`), in row-major order (GL: into a status word, out) */
    TGL__TEW_COUNT
} tgl__tew_op;
#define TGL__TEW_MAX_INPUTS 8
typedef struct tgl__tew {
    tgl__tew_op op;
    int sub;        /* the compare, unary or binary op */
    uint32_t value; /* fill: the element's bits (low bits for 1- and 2-byte dtypes); arange: start */
    uint32_t step;  /* arange: the step (f32 bits for the float dtypes, i32 for i32) */
    uint32_t extra; /* random: a third parameter */
    uint64_t seed, offset; /* random, dropout: Philox's key and first counter */
    int64_t axis_stride;   /* gather: in[1]'s stride (elements) along the gathered axis */
    size_t axis_len;       /* gather: in[1]'s extent along it (every index below it) */
    size_t ndim, n, nin;
    size_t shape[TGL_MAX_DIMS];
    tgl__tensor_view out, in[TGL__TEW_MAX_INPUTS];
    int in_place;
    const struct tgl_expr *expr; /* map: the parsed expression */
    const uint8_t *expr_int;     /* map: per node, whether it computes in i32 (tgl_expr_types,
                                    decided once from the inputs' dtypes, api_map.c) */
} tgl__tew;


/* A validated line op (tgl_reduce_t, tgl_argmax_t, tgl_argmin_t, the row-wise _t ops): out's
 * index space (ndim dims, n_out indices, never 0), each index taking a line of `len` elements of
 * in (len may be 0 for the reductions: the op's identity). in.strides are in's strides over those
 * dims (the axis left out), in_step its stride along the axis; out.strides out's own (a keepdim
 * axis left out). in's view is unset when len is 0. op is a tgl_reduce_op or one below: the two
 * index ops (an i32 out) and the row-wise ops. */
#define TGL__RDT_ARGMAX ((unsigned)TGL_REDUCE_COUNT)
#define TGL__RDT_ARGMIN ((unsigned)TGL_REDUCE_COUNT + 1u)
/* The row-wise ops (tgl_softmax_t, ...): out is a line of len elements per index like in's,
 * out_step apart (out.strides over the other dims, out's view covering its lines); w and bias
 * are 1-D views of len elements (strides[0] their step) where has_w / has_bias. */
#define TGL__RDT_SOFTMAX ((unsigned)TGL_REDUCE_COUNT + 2u)
#define TGL__RDT_LOG_SOFTMAX ((unsigned)TGL_REDUCE_COUNT + 3u)
#define TGL__RDT_RMSNORM ((unsigned)TGL_REDUCE_COUNT + 4u)
#define TGL__RDT_LAYERNORM ((unsigned)TGL_REDUCE_COUNT + 5u)
/* The scans (tgl_cumsum, ...): row-wise ops too (out a line per index); cummax and cummin also
 * write the i32 index of each prefix's best element into idx (idx.strides over the other dims,
 * idx_step along the axis) where has_idx. */
#define TGL__RDT_CUMSUM ((unsigned)TGL_REDUCE_COUNT + 6u)
#define TGL__RDT_CUMPROD ((unsigned)TGL_REDUCE_COUNT + 7u)
#define TGL__RDT_CUMMAX ((unsigned)TGL_REDUCE_COUNT + 8u)
#define TGL__RDT_CUMMIN ((unsigned)TGL_REDUCE_COUNT + 9u)
static inline int tgl__rdt_is_scan(unsigned op)
{
    return op >= TGL__RDT_CUMSUM && op <= TGL__RDT_CUMMIN;
}
static inline int tgl__rdt_is_rows(unsigned op)
{
    return op >= TGL__RDT_SOFTMAX && op <= TGL__RDT_CUMMIN;
}
typedef struct tgl__rdt {
    unsigned op;
    size_t ndim, n_out, len;
    size_t shape[TGL_MAX_DIMS];
    int64_t in_step, out_step, idx_step;
    tgl__tensor_view in, out, w, bias, idx;
    int has_w, has_bias, has_idx;
    float eps;
} tgl__rdt;

/* A validated tgl_masked_select or tgl_nonzero (vtable->compact): over an index space of `shape`
 * (n > 0 elements, n < 2^31), element i (row-major) is taken where flag is true: masked_select's
 * bool mask, or nonzero's in (any data dtype: not +-0 or false, NaN taken, read as bits); flag
 * and val have their strides in the index space (broadcast: 0). prefix holds n dense i32s, the
 * count of taken elements up to and including each, so taken element i goes to position
 * prefix[i] - 1. masked_select: out is 1-D (strides[0] per position) and gets val's element, of
 * out's dtype, bits as they are (bool as 0 or 1); nonzero: row k of out (i32, strides[0] per
 * row, strides[1] per column) gets the coordinates. Nothing else is written. */
typedef struct tgl__compact {
    int nonzero;
    size_t ndim, n;
    size_t shape[TGL_MAX_DIMS];
    tgl__tensor_view flag, val, out;
    tgl__view prefix;
} tgl__compact;

/* A validated tgl_scatter (tgl_index_add is one): the index space is index's shape (ndim dims,
 * n > 0 elements; a 0-d index as one of one dim), over which index (i32) and src are viewed;
 * the element of index at coordinates c lands on out at c with c[axis] replaced by its value,
 * every value checked inside [0, out_shape[axis]). out is viewed over out_shape (ndim dims,
 * out_n elements). Both backends run the same passes over `temp`, `words` u32s per element of
 * out in row-major order (the layout below, decided by tgl__scatter_words): init from out, one
 * or two passes over the index space (their combining ops commute, so the order elements land
 * in changes nothing), then out from temp where the result differs from out's element.
 *   SET: [0] the last position + 1 that landed (0: none), [1] its element's bits.
 *   ADD of a float dtype: [0] the largest biased f32 exponent of a finite non-zero term (out's
 *     own element included; 0: none), [1] flags (TGL__SCATTER_NAN, _PINF, _NINF, _PZERO: a
 *     term of that kind landed), [2..4] the 96-bit two's complement sum of the terms that land,
 *     each a multiple of 2^([0] - 150 - shift) truncated toward zero (out's own added at the end).
 *   ADD of i32 (wrapping), bool (or), MAX and MIN: [0] the result so far as an order key.
 *   ADD_UNORDERED (floats; the API turns i32 and bool into ADD): no words (temp is empty): one
 *     pass over the index space adds each term to out's element as it lands (on GL a float
 *     atomic), an order that may differ from run to run. */
#define TGL__SCATTER_NAN 1u
#define TGL__SCATTER_PINF 2u
#define TGL__SCATTER_NINF 4u
#define TGL__SCATTER_PZERO 8u
typedef struct tgl__scatter {
    tgl_scatter_reduce reduce;
    size_t ndim, n, axis, out_n;
    size_t shape[TGL_MAX_DIMS], out_shape[TGL_MAX_DIMS];
    tgl__tensor_view index, src, out;
    unsigned words, shift; /* shift: ADD of floats, the bits kept below the largest term's lowest */
    tgl__view temp;
} tgl__scatter;
/* A validated tgl_sort or tgl_topk: lines of `len` elements of in along `axis` (in.strides over
 * the ndim dims of `shape`, in's shape with 1 along the axis: n_lines lines, in_step apart
 * along the line), each ordered by its elements' sort keys (ascending, or descending where
 * `descending`; ties by position), the first k written: values (in's dtype) and indices (i32)
 * viewed like in with k along the axis (v_step, i_step their steps), each present where has_*.
 * `temp` is the backend's working buffer, of the bytes its sort_temp_bytes asks for. */
typedef struct tgl__sort {
    size_t ndim, axis, n_lines, len, k;
    size_t shape[TGL_MAX_DIMS];
    int descending, has_values, has_indices;
    tgl__tensor_view in, values, indices;
    int64_t in_step, v_step, i_step;
    tgl__view temp;
} tgl__sort;

/* A validated tgl_matvec_t: y [n, rows] = x [n, cols] W^T, rows and n > 0. x and y are f32
 * views of those shapes; w is [rows, cols] of its dtype: a float format's view as any tensor's,
 * a block format's with view at block (0, 0), strides[0] the blocks from one row to the next
 * and span the blocks reached (base 0). epilogue: NULL, or the product whose alpha, beta and
 * tgl_gemm_fused epilogue apply to y, column r of y being its column r (tgl_matvec_t_fused, and
 * GL's tgl_gemm thin products with W f32). cols is 0 only with an epilogue (y gets the epilogue
 * of empty sums; w and x are then unset: they reach nothing). */
typedef struct tgl__matvec_t {
    size_t rows, cols, n;
    tgl__tensor_view w, x, y;
    const tgl__gemm *epilogue;
} tgl__matvec_t;

/* A validated tgl_quantize (to_blocks 1) or tgl_dequantize: f, the f32 side, and q, the block
 * side (q8_0 or q4_0, seen as tgl__matvec_t's w), are [rows, cols], cols a multiple of 32,
 * rows * cols > 0; the written side reaches no element twice and shares no byte with the other. */
typedef struct tgl__quant {
    int to_blocks;
    size_t rows, cols;
    tgl__tensor_view f, q;
} tgl__quant;

/* A validated tgl_gather_rows_t: out [n, cols] (f32) = rows of w [rows, cols] (as
 * tgl__matvec_t's w) picked by ids, an i32 view of [n] (strides[0]); n and cols > 0. */
typedef struct tgl__gather_w {
    size_t rows, cols, n;
    tgl__tensor_view w, ids, out;
} tgl__gather_w;

/* A validated tgl_rope_t: x and y f32 views of [batch, seq, heads, head_dim] (strides[3] 1; y
 * equal to x or apart from it), pos an i32 view of [batch, seq] (strides[0..1]) when has_pos;
 * freq the rotary_dim / 2 frequencies as both backends use them (the scaled inv_freq rounded
 * to f32); all sizes > 0. */
typedef struct tgl__rope_t {
    size_t batch, seq, heads, head_dim, rotary_dim, pos_offset;
    tgl_rope_mode mode;
    int has_pos;
    tgl__tensor_view x, y, pos;
    const float *freq;
} tgl__rope_t;

/* temp's u32s per element of out for a reduce of dtype dt. */
unsigned tgl__scatter_words(tgl_scatter_reduce reduce, tgl_dtype dt);

/* One backend's operations. Arguments arrive validated: pointers resolved and range-checked,
 * sizes non-zero, enums in range. Backends report failures through tgl__fail. */
typedef struct tgl__vtable {
    const char *name;
    /* 1 when the backend's device state does not survive fork() (a GL context is the opening
     * process's): a forked child's calls on it fail, and its tgl_close frees host memory only. */
    int process_bound;
    /* Called before every call on b that may touch the device (GL: makes the context current). */
    tgl_status (*activate)(tgl_backend *b);
    /* Optional: the calling thread lets go of the device (GL: no context current here). */
    tgl_status (*detach)(tgl_backend *b);
    void (*destroy)(tgl_backend *b);
    void (*device_info)(tgl_backend *b, struct tgl_device_info *info);
    /* Fills reserved, pooled, device_total and device_available (in_use and peak are the core's). */
    void (*memory_info)(tgl_backend *b, struct tgl_memory_info *info);
    /* Called without activate: activates itself before it touches the device. */
    tgl_status (*buffer_create)(tgl_backend *b, size_t bytes, void **out);
    void (*buffer_destroy)(tgl_backend *b, void *buf);
    /* Optional: gives back the buffers kept between calls that keep no state (mem_scratch falls);
     * called between calls only, never while an op runs. */
    void (*release_scratch)(tgl_backend *b);
    tgl_status (*upload)(tgl_backend *b, tgl__view dst, const void *src, size_t bytes);
    tgl_status (*download)(tgl_backend *b, void *dst, tgl__view src, size_t bytes);
    tgl_status (*copy)(tgl_backend *b, tgl__view dst, tgl__view src, size_t bytes);
    tgl_status (*synchronize)(tgl_backend *b);
    /* Optional device timer for the profiler: the device time of the work issued between
     * timer_begin and timer_end (which waits for it). Left NULL where no timer measures it. */
    tgl_status (*timer_begin)(tgl_backend *b);
    tgl_status (*timer_end)(tgl_backend *b, double *seconds);
    tgl_status (*unary)(tgl_backend *b, tgl_unary_op op, tgl__view in, tgl__view out, size_t n);
    tgl_status (*binary)(tgl_backend *b, tgl_binary_op op, tgl__view a, tgl__view bb,
                         tgl__view out, size_t n);
    /* Reductions see the tensor as [outer, len, inner] reduced over len into [outer, inner];
     * outer * inner > 0; len may be 0 (sum, mean, prod only). */
    tgl_status (*reduce)(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                         size_t len, size_t inner);
    tgl_status (*arg_reduce)(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                             size_t len, size_t inner);
    tgl_status (*fill)(tgl_backend *b, tgl__view out, float value, size_t n);
    tgl_status (*scale_add)(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n);
    /* to_f16: f32 -> f16 when 1, f16 -> f32 when 0. */
    tgl_status (*cast)(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n);
    /* rows = batch * seq; token r has position pos_offset + r % seq. */
    tgl_status (*rope)(tgl_backend *b, tgl__view in, tgl__view out, size_t rows, size_t seq, size_t heads,
                       size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode);
    /* On a bad id: returns TGL_ERR_INVALID_ARGUMENT with *bad_pos set, having written nothing. */
    tgl_status (*gather_rows)(tgl_backend *b, tgl__view table, tgl__view ids, tgl__view out, size_t table_rows,
                              size_t cols, size_t n_ids, size_t *bad_pos, int32_t *bad_id);
    /* op >= 0: out = a op bb; op < 0: out = a (copy); see tgl__strided. */
    tgl_status (*strided)(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s);
    tgl_status (*map)(tgl_backend *b, const tgl_expr *e, const tgl__view *inputs, size_t n_inputs, tgl__view out,
                      size_t n);
    /* Row-wise ops: w and bias have buf == NULL when absent. */
    tgl_status (*rows)(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                       size_t rows, size_t cols, float eps);
    tgl_status (*gemm)(tgl_backend *b, const tgl__gemm *g);
    /* y = W x; rows > 0, cols may be 0 (y = 0). */
    tgl_status (*matvec)(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols);
    tgl_status (*attention)(tgl_backend *b, const tgl__attention *a);
    tgl_status (*conv2d)(tgl_backend *b, const tgl__conv2d *c);
    tgl_status (*conv_transpose2d)(tgl_backend *b, const tgl__conv_transpose2d *c);
    tgl_status (*pool2d)(tgl_backend *b, const tgl__pool2d *p);
    tgl_status (*tensor_ewise)(tgl_backend *b, const tgl__tew *e);
    /* tgl_gather's two passes: check, a TGL__TEW_CHECK_INDEX over a non-empty index view (in[0]),
     * then, only where every index is inside [0, check->value), e (a TGL__TEW_GATHER). Sets
     * *bad_pos to the row-major position of check's first element outside that range and
     * *bad_value to it (e then writes nothing), or *bad_pos to UINT64_MAX. */
    tgl_status (*gather)(tgl_backend *b, const tgl__tew *check, const tgl__tew *e, uint64_t *bad_pos,
                         int32_t *bad_value);
    tgl_status (*reduce_t)(tgl_backend *b, const tgl__rdt *r);
    /* tgl_masked_select, tgl_nonzero: the placement pass after the core's scan (tgl__compact). */
    tgl_status (*compact)(tgl_backend *b, const tgl__compact *c);
    tgl_status (*interpolate)(tgl_backend *b, const tgl__interpolate *p);
    /* tgl_adaptive_pool2d: p->d holds kind, batch, channels, in_h and in_w, the rest zero. */
    tgl_status (*adaptive_pool2d)(tgl_backend *b, const tgl__pool2d *p);
    /* tgl_scatter, tgl_index_add: check as gather's (check->value is out's extent along the
     * axis), then, only where every index is inside it, the passes of s (tgl__scatter). */
    tgl_status (*scatter)(tgl_backend *b, const tgl__tew *check, const tgl__scatter *s, uint64_t *bad_pos,
                          int32_t *bad_value);
    /* tgl_sort, tgl_topk (tgl__sort); len > 0, k > 0, n_lines > 0. sort_temp_bytes: the bytes
     * s->temp must hold (s->temp left empty and unset here); 0 for none, UINT64_MAX past any
     * buffer. */
    tgl_status (*sort)(tgl_backend *b, const tgl__sort *s);
    uint64_t (*sort_temp_bytes)(tgl_backend *b, const tgl__sort *s);
    /* tgl_gather_rows_t: check as gather's (a TGL__TEW_CHECK_INDEX over g->ids against
     * [0, g->rows)), then, only where every id passes, the rows decoded into g->out. */
    tgl_status (*gather_rows_t)(tgl_backend *b, const tgl__tew *check, const tgl__gather_w *g, uint64_t *bad_pos,
                                int32_t *bad_value);
    /* tgl_rope_t (tgl__rope_t). */
    tgl_status (*rope_t)(tgl_backend *b, const tgl__rope_t *r);
    /* tgl_matvec_t (tgl__matvec_t; cols > 0). */
    tgl_status (*matvec_t)(tgl_backend *b, const tgl__matvec_t *m);
    /* tgl_quantize, tgl_dequantize to and from the block formats (tgl__quant). */
    tgl_status (*quantize)(tgl_backend *b, const tgl__quant *q);
    /* Optional: the device profile's traits, their values and sources (`tensorgl info --profile`). */
    void (*print_profile)(tgl_backend *b, FILE *out);
    /* Optional: tgl_tune (NULL: nothing to tune, TGL_ERR_UNSUPPORTED). */
    tgl_status (*tune)(tgl_backend *b, size_t size, FILE *report);
} tgl__vtable;

/* The row-wise op kinds behind vtable->rows. */
enum { TGL__ROWS_SOFTMAX, TGL__ROWS_LOG_SOFTMAX, TGL__ROWS_RMSNORM, TGL__ROWS_LAYERNORM, TGL__ROWS_COUNT };

struct tgl_backend {
    const tgl__vtable *vt;
    void *impl;                 /* the backend's own state */
    tgl__handles handles;
    tgl__config config;
    int lost;                   /* sticky TGL_ERR_DEVICE_LOST */
    long pid;                   /* the process that opened it (getpid), for messages */
    unsigned long fork_generation; /* tgl__fork_generation() at open: another value means a fork()ed child */
    uint64_t mem_in_use, mem_peak; /* bytes of live allocations as requested; the most since open */
    /* The last temporary buffer (tgl__temp_create), kept for the next call's: a GPU driver
     * takes milliseconds to create a large buffer. Not counted in mem_in_use while idle; given
     * back when an allocation finds no room, and at tgl_close. */
    void *temp_keep;
    size_t temp_keep_bytes;
    int temp_keep_busy;
    /* Bytes of the backend's own buffers kept between calls (GL, tgl_gl_grow: split-K partials,
     * im2col, reduction partials, rope tables, ...): counted against TGL_MAX_MEMORY beside the
     * live allocations; the idle ones that keep no state are given back (vtable release_scratch)
     * when an allocation or a temporary finds no room. */
    uint64_t mem_scratch;
    FILE *log_file;             /* TGL_LOG, or NULL for stderr */
    char fallback_reason[512];  /* why auto chose the CPU backend */
    struct tgl__trace *trace;   /* recording (TGL_TRACE, tgl_trace_start), or NULL */
    struct tgl__profile *profile; /* timing per call kind (TGL_PROFILE, tgl_profile_start), or NULL */
    int hook_busy;              /* the hook is making its own calls: do not record or time them */
    char last_error[1024];
};

/* Gives back the temporary buffer kept between calls (an idle one; api.c), e.g. at tgl_close. */
void tgl__temp_release(tgl_backend *b);
/* Whether `bytes` more fit under TGL_MAX_MEMORY beside the live allocations and the backend's
 * kept buffers (mem_scratch); without a budget, always. */
int tgl__within_budget(const tgl_backend *b, uint64_t bytes);
/* 1 when b is process-bound (vtable) and this process is a fork() of the one that opened it. */
int tgl__forked(const tgl_backend *b);
/* The fork() count that tgl__forked compares with; the first call registers the counter. */
unsigned long tgl__fork_generation(void);

/* Records a failure on b (or the thread's open error for b == NULL) and returns status. */
tgl_status tgl__fail(tgl_backend *b, tgl_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log levels match tgl_log_fn's. */
enum { TGL__LOG_DEBUG = 0, TGL__LOG_INFO, TGL__LOG_WARN, TGL__LOG_ERROR };
void tgl__log(tgl_backend *b, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fills *cfg from opts and the environment. Returns TGL_ERR_INVALID_ARGUMENT with a message. */
tgl_status tgl__config_resolve(const tgl_options *opts, tgl__config *cfg);

/* Prints b's device profile (`tensorgl info --profile`); a line saying it has none where the
 * backend keeps no profile (the CPU backend). */
void tgl__print_device_profile(tgl_backend *b, FILE *out);

/* tgl_open without TGL_TRACE (replay opens its backend this way: replaying a trace must not
 * record another into the directory it reads). */
tgl_status tgl__open_untraced(const tgl_options *opts, tgl_backend **out);
/* The self-test of an opened GL backend (self_test.c): TGL_ERR_NO_DEVICE, with the op named, where
 * the device computes a wrong result or fails a call. */
tgl_status tgl__self_test(tgl_backend *b);
/* NMSE of n bytes got against want as elements of `kind` ('o'/'x' f32, 'O'/'X' f16, 'T' a
 * tensor of dtype dt: f32, f16 or bf16; anything else: bytes, which must match); NaN and inf
 * must sit where want has the same value (else INFINITY). Replay and the self-test compare with it. */
double tgl__buffer_nmse(const uint8_t *got, const uint8_t *want, size_t n, char kind, tgl_dtype dt);
/* Test hook: check number n (1-based, 0 none) of the self-test sees a wrong device result. */
void tgl__test_self_test_fault(int n);

/* The monotonic clock, in seconds (profile.c). */
double tgl__seconds(void);

/* Bounded string copy that always terminates (dst_size > 0). */
void tgl__strlcpy(char *dst, const char *src, size_t dst_size);

/* Backend constructors: fill b->vt and b->impl, or fail through tgl__fail(b, ...). */
tgl_status tgl_cpu_open(tgl_backend *b);
tgl_status tgl_gl_open(tgl_backend *b);
/* tgl_list_devices after its argument checks (egl_context.c). */
tgl_status tgl_gl_list_devices(struct tgl_device_entry *out, int capacity, int *count);
/* Checks a TGL_DEVICE_PROFILE value's profile and trait names and its values' syntax without a
 * device (gl_profile.c; config.c calls it so that a bad value fails tgl_open on every backend). */
tgl_status tgl_gl_profile_check(const char *spec);

#endif
