/* The op registry: every public entry point that the hook traces, profiles and replays is
 * declared here once, and everything that is bookkeeping about it is generated from that
 * declaration (calls.h, calls.c, hook.c, supports.c):
 *
 *   - its call id (TGL__FN_<ID>), name and trace signature;
 *   - a compile-time check that the public prototype in tensorgl.h takes exactly the argument
 *     types of the row, in order (a disagreement is a build error, not a corrupt trace);
 *   - the typed hook tgl__hook_<ID> that captures the arguments, and TGL__HOOK(<ID>), which a
 *     public wrapper returns through when tracing or profiling is on: it forwards the wrapper's
 *     own parameters by the row's names, so a renamed or missing parameter fails to compile;
 *   - the replay invoker (a recorded call made again) and the argument struct the cost model
 *     reads;
 *   - the tgl_supports answer: the op family (tgl_op), the vtable slot whose presence says a
 *     backend runs it, and the element types it takes.
 *
 * A row: X(ID, C name, op family, vtable slot, dtypes, comparison family, cost model, warm-up),
 * and beside it
 * TGL__ARGS_<ID>(ARG, ENUM, ARR), its arguments after the backend, in prototype order:
 *   ARG(kind, name)         one C argument of a kind below
 *   ENUM(type, name)        an int or enum argument of that C type (kind e)
 *   ARR(kind, ptr, count)   an array and its length, two C arguments (kinds S, J, L and U)
 * Kinds (the trace signature letters; docs/trace-format.md):
 *   z size_t   u uint64_t   f float   d double   p device pointer, not accessed (tgl_free)
 *   i device pointer read by the call (its allocation is snapshotted before the call)
 *   o written f32   O written f16   I written int32   b written bytes (copies)
 *   x read and written f32   X read and written f16
 *   S const size_t * + its count   q const size_t * of the preceding S's or J's count
 *   J const int64_t * + its count (at most 2 x TGL_MAX_DIMS values stored)
 *   L const tgl_ptr * + its count, each read like i
 *   U const tgl_tensor * + its count, each read like t
 *   s const char * (NUL-terminated)   c const tgl_conv2d_desc *   P const tgl_pool2d_desc *
 *   R const tgl_interpolate_desc *   Y const tgl_rope_desc *   N const tgl_attention_desc *
 *   t const tgl_tensor * read by the call (its allocation is snapshotted, like i)
 *   T const tgl_tensor * written by the call (compared as its dtype: floats by NMSE, i32 and
 *     bool bit for bit)
 *   M const tgl_tensor * read and written by the call (snapshotted like t, compared like T)
 *   D const void * host data of the following z's bytes   H void * host destination
 *   A tgl_ptr * result of tgl_alloc
 * The family is TGL__NO_OP for calls that are not ops (memory, copies); the dtypes are a mask
 * of TGL__DT(F32), TGL__DT(F16), ... (TGL__DT_FLOATS and TGL__DT_DATA name the usual sets). The cost model is a function in op_cost.c named cost_<name>
 * taking the row's argument struct, or cost_none. Warm-up is WARM when tgl_warmup (prepare.c)
 * calls the op, which test_trace checks, or NO_WARM (calls that are not ops, and tgl_map, whose
 * kernels are made per expression).
 *
 * Rows are never reordered or removed: the call id is what a trace file stores. New rows go at
 * the end. */
#ifndef TGL_CORE_OP_REGISTRY_H
#define TGL_CORE_OP_REGISTRY_H

#include "tensorgl.h"

#define TGL__NO_OP (-1)
#define TGL__DT(t) (1u << TGL_DTYPE_##t)
#define TGL__DT_NONE 0u
#define TGL__DT_FLOATS (TGL__DT(F32) | TGL__DT(F16) | TGL__DT(BF16))
#define TGL__DT_DATA (TGL__DT_FLOATS | TGL__DT(I32) | TGL__DT(BOOL)) /* every dtype but the block formats */
#define TGL__DT_WEIGHTS (TGL__DT_FLOATS | TGL__DT(Q8_0) | TGL__DT(Q4_0)) /* the weight formats */
#define TGL__WARM 1
#define TGL__NO_WARM 0

#define TGL__ARGS_ALLOC(ARG, ENUM, ARR) ARG(z, bytes) ARG(A, out)
#define TGL__ARGS_FREE(ARG, ENUM, ARR) ARG(p, p)
#define TGL__ARGS_COPY_HTOD(ARG, ENUM, ARR) ARG(b, dst) ARG(D, src) ARG(z, bytes)
#define TGL__ARGS_COPY_DTOH(ARG, ENUM, ARR) ARG(H, dst) ARG(i, src) ARG(z, bytes)
#define TGL__ARGS_COPY_DTOD(ARG, ENUM, ARR) ARG(b, dst) ARG(i, src) ARG(z, bytes)
#define TGL__ARGS_SYNCHRONIZE(ARG, ENUM, ARR)
#define TGL__ARGS_UNARY(ARG, ENUM, ARR) ENUM(tgl_unary_op, op) ARG(i, in) ARG(o, out) ARG(z, n)
#define TGL__ARGS_BINARY(ARG, ENUM, ARR) ENUM(tgl_binary_op, op) ARG(i, a) ARG(i, bb) ARG(o, out) ARG(z, n)
#define TGL__ARGS_MAP(ARG, ENUM, ARR) ARG(s, expr) ARR(L, inputs, n_inputs) ARG(o, out) ARG(z, n)
#define TGL__ARGS_BINARY_BROADCAST(ARG, ENUM, ARR) \
    ENUM(tgl_binary_op, op) ARG(i, a) ARR(S, a_shape, a_ndim) ARG(i, bb) ARR(S, b_shape, b_ndim) ARG(o, out)
#define TGL__ARGS_PERMUTE(ARG, ENUM, ARR) ARG(i, in) ARG(o, out) ARR(S, shape, ndim) ARG(q, perm)
#define TGL__ARGS_REDUCE(ARG, ENUM, ARR) ENUM(tgl_reduce_op, op) ARG(i, in) ARG(o, out) ARR(S, shape, ndim) ARG(z, axis)
#define TGL__ARGS_ARGMAX(ARG, ENUM, ARR) ARG(i, in) ARG(I, out) ARR(S, shape, ndim) ARG(z, axis)
#define TGL__ARGS_ARGMIN(ARG, ENUM, ARR) ARG(i, in) ARG(I, out) ARR(S, shape, ndim) ARG(z, axis)
#define TGL__ARGS_FILL(ARG, ENUM, ARR) ARG(o, out) ARG(f, value) ARG(z, n)
#define TGL__ARGS_SCALE_ADD(ARG, ENUM, ARR) ARG(f, alpha) ARG(i, x) ARG(f, beta) ARG(x, y) ARG(z, n)
#define TGL__ARGS_CAST_F32_F16(ARG, ENUM, ARR) ARG(i, in) ARG(O, out) ARG(z, n)
#define TGL__ARGS_CAST_F16_F32(ARG, ENUM, ARR) ARG(i, in) ARG(o, out) ARG(z, n)
#define TGL__ARGS_SOFTMAX(ARG, ENUM, ARR) ARG(i, in) ARG(o, out) ARG(z, rows) ARG(z, cols)
#define TGL__ARGS_LOG_SOFTMAX(ARG, ENUM, ARR) ARG(i, in) ARG(o, out) ARG(z, rows) ARG(z, cols)
#define TGL__ARGS_RMSNORM(ARG, ENUM, ARR) ARG(i, in) ARG(i, weight) ARG(o, out) ARG(z, rows) ARG(z, cols) ARG(f, eps)
#define TGL__ARGS_LAYERNORM(ARG, ENUM, ARR) \
    ARG(i, in) ARG(i, gamma) ARG(i, beta) ARG(o, out) ARG(z, rows) ARG(z, cols) ARG(f, eps)
#define TGL__ARGS_GEMM(ARG, ENUM, ARR)                                                                   \
    ENUM(tgl_transpose, ta) ENUM(tgl_transpose, tb) ARG(z, m) ARG(z, n) ARG(z, k) ARG(f, alpha) ARG(i, a) ARG(z, lda) \
    ARG(i, bm) ARG(z, ldb) ARG(f, beta) ARG(x, c) ARG(z, ldc)
#define TGL__ARGS_GEMM_BATCHED(ARG, ENUM, ARR)                                                           \
    ENUM(tgl_transpose, ta) ENUM(tgl_transpose, tb) ARG(z, m) ARG(z, n) ARG(z, k) ARG(f, alpha) ARG(i, a) ARG(z, lda) \
    ARG(z, stride_a) ARG(i, bm) ARG(z, ldb) ARG(z, stride_b) ARG(f, beta) ARG(x, c) ARG(z, ldc) ARG(z, stride_c)    \
    ARG(z, batch)
#define TGL__ARGS_GEMM_F16(ARG, ENUM, ARR)                                                               \
    ENUM(tgl_transpose, ta) ENUM(tgl_transpose, tb) ARG(z, m) ARG(z, n) ARG(z, k) ARG(f, alpha) ARG(i, a) ARG(z, lda) \
    ARG(i, bm) ARG(z, ldb) ARG(f, beta) ARG(X, c) ARG(z, ldc)
#define TGL__ARGS_GEMM_FUSED(ARG, ENUM, ARR)                                                             \
    ENUM(tgl_transpose, ta) ENUM(tgl_transpose, tb) ARG(z, m) ARG(z, n) ARG(z, k) ARG(f, alpha) ARG(i, a) ARG(z, lda) \
    ARG(i, bm) ARG(z, ldb) ARG(f, beta) ARG(x, c) ARG(z, ldc) ARG(i, bias) ENUM(tgl_activation, activation)          \
    ARG(f, slope) ENUM(int, gate)
#define TGL__ARGS_MATVEC(ARG, ENUM, ARR) ARG(z, rows) ARG(z, cols) ARG(i, w) ARG(i, x) ARG(o, y)
#define TGL__ARGS_ROPE(ARG, ENUM, ARR)                                                                    \
    ARG(i, in) ARG(o, out) ARG(z, batch) ARG(z, seq) ARG(z, heads) ARG(z, head_dim) ARG(z, pos_offset) ARG(f, theta) \
    ENUM(tgl_rope_mode, mode)
#define TGL__ARGS_GATHER_ROWS(ARG, ENUM, ARR) ARG(i, table) ARG(i, ids) ARG(o, out) ARG(z, table_rows) ARG(z, cols) ARG(z, n_ids)
#define TGL__ARGS_ATTENTION(ARG, ENUM, ARR)                                                               \
    ARG(i, q) ARG(i, k) ARG(i, v) ARG(o, o) ARG(z, batch) ARG(z, heads) ARG(z, seq_q) ARG(z, seq_kv) ARG(z, head_dim) \
    ARG(f, scale) ENUM(int, causal)
#define TGL__ARGS_ATTENTION_KV(ARG, ENUM, ARR)                                                            \
    ARG(i, q) ARG(i, k) ARG(i, v) ARG(o, o) ARG(z, batch) ARG(z, heads) ARG(z, seq_q) ARG(z, seq_kv)                \
    ARG(z, kv_capacity) ARG(z, head_dim) ARG(f, scale) ENUM(int, causal)
#define TGL__ARGS_CONV2D(ARG, ENUM, ARR) ARG(c, desc) ARG(i, input) ARG(i, filter) ARG(i, bias) ARG(o, output)
#define TGL__ARGS_CONV_TRANSPOSE2D(ARG, ENUM, ARR)                                                      \
    ARG(c, desc) ARG(z, output_padding_h) ARG(z, output_padding_w) ARG(i, input) ARG(i, filter) ARG(i, bias)     \
    ARG(o, output)
#define TGL__ARGS_CONV2D_FUSED(ARG, ENUM, ARR)                                                           \
    ARG(c, desc) ARG(i, input) ARG(i, filter) ARG(i, bias) ENUM(tgl_activation, activation) ARG(f, slope)          \
    ARG(i, residual) ENUM(int, residual_first) ARG(x, output)
#define TGL__ARGS_COPY(ARG, ENUM, ARR) ARG(T, dst) ARG(t, src)
#define TGL__ARGS_COMPARE(ARG, ENUM, ARR) ENUM(tgl_compare_op, op) ARG(t, a) ARG(t, bb) ARG(T, out)
#define TGL__ARGS_WHERE(ARG, ENUM, ARR) ARG(t, cond) ARG(t, a) ARG(t, bb) ARG(T, out)
#define TGL__ARGS_UNARY_T(ARG, ENUM, ARR) ENUM(tgl_unary_op, op) ARG(t, in) ARG(T, out)
#define TGL__ARGS_BINARY_T(ARG, ENUM, ARR) ENUM(tgl_binary_op, op) ARG(t, a) ARG(t, bb) ARG(T, out)
#define TGL__ARGS_CLAMP(ARG, ENUM, ARR) ARG(t, x) ARG(t, lo) ARG(t, hi) ARG(T, out)
#define TGL__ARGS_FILL_T(ARG, ENUM, ARR) ARG(T, out) ARG(d, value)
#define TGL__ARGS_ARANGE(ARG, ENUM, ARR) ARG(T, out) ARG(d, start) ARG(d, step)
#define TGL__ARGS_CAT(ARG, ENUM, ARR) ARR(U, inputs, n_inputs) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_REDUCE_T(ARG, ENUM, ARR) ENUM(tgl_reduce_op, op) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_ARGMAX_T(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_ARGMIN_T(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_SOFTMAX_T(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_LOG_SOFTMAX_T(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_RMSNORM_T(ARG, ENUM, ARR) ARG(t, in) ARG(t, weight) ARG(T, out) ARG(f, eps)
#define TGL__ARGS_LAYERNORM_T(ARG, ENUM, ARR) ARG(t, in) ARG(t, gamma) ARG(t, beta) ARG(T, out) ARG(f, eps)
#define TGL__ARGS_MAP_T(ARG, ENUM, ARR) ARG(s, expr) ARR(U, inputs, n_inputs) ARG(T, out)
#define TGL__ARGS_RANDOM(ARG, ENUM, ARR) \
    ENUM(tgl_random_kind, kind) ARG(T, out) ARG(d, a) ARG(d, bb) ARG(u, seed) ARG(u, offset)
#define TGL__ARGS_DROPOUT(ARG, ENUM, ARR) ARG(t, in) ARG(T, out) ARG(d, p) ARG(u, seed) ARG(u, offset)
#define TGL__ARGS_TRIU(ARG, ENUM, ARR) ARG(t, in) ARG(T, out) ENUM(int64_t, diagonal)
#define TGL__ARGS_TRIL(ARG, ENUM, ARR) ARG(t, in) ARG(T, out) ENUM(int64_t, diagonal)
#define TGL__ARGS_ONE_HOT(ARG, ENUM, ARR) ARG(t, indices) ARG(T, out)
#define TGL__ARGS_MASKED_FILL(ARG, ENUM, ARR) ARG(t, in) ARG(t, mask) ARG(d, value) ARG(T, out)
#define TGL__ARGS_GATHER(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(t, index) ARG(T, out)
#define TGL__ARGS_INDEX_SELECT(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(t, index) ARG(T, out)
#define TGL__ARGS_POOL2D(ARG, ENUM, ARR) ARG(P, desc) ARG(i, input) ARG(o, output)
#define TGL__ARGS_CUMSUM(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_CUMPROD(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out)
#define TGL__ARGS_CUMMAX(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out) ARG(T, indices)
#define TGL__ARGS_CUMMIN(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ARG(T, out) ARG(T, indices)
#define TGL__ARGS_MASKED_SELECT(ARG, ENUM, ARR) ARG(t, in) ARG(t, mask) ARG(T, out) ARG(T, count)
#define TGL__ARGS_NONZERO(ARG, ENUM, ARR) ARG(t, in) ARG(T, out) ARG(T, count)
#define TGL__ARGS_MAX_POOL2D_INDICES(ARG, ENUM, ARR) ARG(P, desc) ARG(i, input) ARG(o, output) ARG(I, indices)
#define TGL__ARGS_ADAPTIVE_POOL2D(ARG, ENUM, ARR) \
    ENUM(tgl_pool_kind, kind) ARG(z, batch) ARG(z, channels) ARG(z, in_h) ARG(z, in_w) ARG(z, out_h) ARG(z, out_w) \
    ARG(i, input) ARG(o, output)
#define TGL__ARGS_INTERPOLATE(ARG, ENUM, ARR) ARG(R, desc) ARG(i, input) ARG(o, output)
#define TGL__ARGS_FLIP(ARG, ENUM, ARR) ARG(t, in) ARR(S, dims, n_dims) ARG(T, out)
#define TGL__ARGS_ROLL(ARG, ENUM, ARR) ARG(t, in) ARR(J, shifts, n_shifts) ARG(q, dims) ARG(T, out)
#define TGL__ARGS_REPEAT(ARG, ENUM, ARR) ARG(t, in) ARR(S, repeats, n_repeats) ARG(T, out)
#define TGL__ARGS_SCATTER(ARG, ENUM, ARR) \
    ARG(t, src) ARG(z, axis) ARG(t, index) ARG(M, out) ENUM(tgl_scatter_reduce, reduce)
#define TGL__ARGS_INDEX_ADD(ARG, ENUM, ARR) ARG(t, src) ARG(z, axis) ARG(t, index) ARG(M, out)
#define TGL__ARGS_SORT(ARG, ENUM, ARR) ARG(t, in) ARG(z, axis) ENUM(int, descending) ARG(T, values) ARG(T, indices)
#define TGL__ARGS_TOPK(ARG, ENUM, ARR) \
    ARG(t, in) ARG(z, axis) ARG(z, k) ENUM(int, largest) ARG(T, values) ARG(T, indices)
#define TGL__ARGS_PAD(ARG, ENUM, ARR) \
    ARG(t, in) ARR(J, pads, n_pads) ENUM(tgl_pad_mode, mode) ARG(d, value) ARG(T, out)
#define TGL__ARGS_MATVEC_T(ARG, ENUM, ARR) ARG(t, w) ARG(t, x) ARG(T, y)
#define TGL__ARGS_MATVEC_T_FUSED(ARG, ENUM, ARR)                                                        \
    ARG(t, w) ARG(t, x) ARG(f, beta) ARG(t, bias) ENUM(tgl_activation, activation) ARG(f, slope) ENUM(int, gate) \
    ARG(M, y)
#define TGL__ARGS_ATTENTION_GQA(ARG, ENUM, ARR)                                                           \
    ARG(i, q) ARG(i, k) ARG(i, v) ARG(o, o) ARG(z, batch) ARG(z, heads) ARG(z, heads_kv) ARG(z, seq_q) ARG(z, seq_kv) \
    ARG(z, kv_capacity) ARG(z, head_dim) ARG(f, scale) ENUM(int, causal)
#define TGL__ARGS_QUANTIZE(ARG, ENUM, ARR) ARG(t, in) ARG(T, out)
#define TGL__ARGS_DEQUANTIZE(ARG, ENUM, ARR) ARG(t, in) ARG(T, out)
#define TGL__ARGS_ROPE_T(ARG, ENUM, ARR) ARG(t, in) ARG(T, out) ARG(t, positions) ARG(Y, d)
#define TGL__ARGS_GATHER_ROWS_T(ARG, ENUM, ARR) ARG(t, table) ARG(t, ids) ARG(T, out)
#define TGL__ARGS_ATTENTION_T(ARG, ENUM, ARR) ARG(t, q) ARG(t, k) ARG(t, v) ARG(t, mask) ARG(T, o) ARG(N, d)

/* X(ID, C name, op family, vtable slot, dtypes, comparison family, cost model, warm-up) */
#define TGL__OPS(X)                                                                                        \
    X(ALLOC, tgl_alloc, TGL__NO_OP, buffer_create, TGL__DT_NONE, EXACT, cost_none, NO_WARM)                         \
    X(FREE, tgl_free, TGL__NO_OP, buffer_destroy, TGL__DT_NONE, EXACT, cost_none, NO_WARM)                          \
    X(COPY_HTOD, tgl_copy_htod, TGL__NO_OP, upload, TGL__DT_NONE, EXACT, cost_copy_htod, NO_WARM)                   \
    X(COPY_DTOH, tgl_copy_dtoh, TGL__NO_OP, download, TGL__DT_NONE, EXACT, cost_copy_dtoh, NO_WARM)                 \
    X(COPY_DTOD, tgl_copy_dtod, TGL__NO_OP, copy, TGL__DT_NONE, EXACT, cost_copy_dtod, NO_WARM)                     \
    X(SYNCHRONIZE, tgl_synchronize, TGL__NO_OP, synchronize, TGL__DT_NONE, EXACT, cost_none, NO_WARM)               \
    X(UNARY, tgl_unary, TGL_OP_UNARY, unary, TGL__DT(F32), ELEMENTWISE, cost_unary, WARM)                        \
    X(BINARY, tgl_binary, TGL_OP_BINARY, binary, TGL__DT(F32), ELEMENTWISE, cost_binary, WARM)                   \
    X(MAP, tgl_map, TGL_OP_MAP, map, TGL__DT(F32), ELEMENTWISE, cost_map, NO_WARM)                                  \
    X(BINARY_BROADCAST, tgl_binary_broadcast, TGL_OP_BINARY_BROADCAST, strided, TGL__DT(F32), ELEMENTWISE, \
      cost_binary_broadcast, WARM)                                                                               \
    X(PERMUTE, tgl_permute, TGL_OP_PERMUTE, strided, TGL__DT(F32), EXACT, cost_permute, WARM)                    \
    X(REDUCE, tgl_reduce, TGL_OP_REDUCE, reduce, TGL__DT(F32), ACCUMULATE, cost_reduce, WARM)                    \
    X(ARGMAX, tgl_argmax, TGL_OP_ARG_REDUCE, arg_reduce, TGL__DT(F32), EXACT, cost_argmax, WARM)                 \
    X(ARGMIN, tgl_argmin, TGL_OP_ARG_REDUCE, arg_reduce, TGL__DT(F32), EXACT, cost_argmin, WARM)                 \
    X(FILL, tgl_fill, TGL_OP_FILL, fill, TGL__DT(F32), EXACT, cost_fill, WARM)                                   \
    X(SCALE_ADD, tgl_scale_add, TGL_OP_SCALE_ADD, scale_add, TGL__DT(F32), ELEMENTWISE, cost_scale_add, WARM)    \
    X(CAST_F32_F16, tgl_cast_f32_f16, TGL_OP_CAST, cast, TGL__DT(F32) | TGL__DT(F16), EXACT, cost_cast, WARM)    \
    X(CAST_F16_F32, tgl_cast_f16_f32, TGL_OP_CAST, cast, TGL__DT(F32) | TGL__DT(F16), EXACT, cost_cast, WARM)    \
    X(SOFTMAX, tgl_softmax, TGL_OP_SOFTMAX, rows, TGL__DT(F32), ACCUMULATE, cost_softmax, WARM)                  \
    X(LOG_SOFTMAX, tgl_log_softmax, TGL_OP_LOG_SOFTMAX, rows, TGL__DT(F32), ACCUMULATE, cost_softmax, WARM)      \
    X(RMSNORM, tgl_rmsnorm, TGL_OP_RMSNORM, rows, TGL__DT(F32), ACCUMULATE, cost_rmsnorm, WARM)                  \
    X(LAYERNORM, tgl_layernorm, TGL_OP_LAYERNORM, rows, TGL__DT(F32), ACCUMULATE, cost_layernorm, WARM)          \
    X(GEMM, tgl_gemm, TGL_OP_GEMM, gemm, TGL__DT(F32), ACCUMULATE, cost_gemm, WARM)                              \
    X(GEMM_BATCHED, tgl_gemm_batched, TGL_OP_GEMM, gemm, TGL__DT(F32), ACCUMULATE, cost_gemm_batched, WARM)      \
    X(GEMM_F16, tgl_gemm_f16, TGL_OP_GEMM, gemm, TGL__DT(F16), F16, cost_gemm_f16, WARM)                         \
    X(MATVEC, tgl_matvec, TGL_OP_MATVEC, matvec, TGL__DT(F32), ACCUMULATE, cost_matvec, WARM)                    \
    X(ROPE, tgl_rope, TGL_OP_ROPE, rope, TGL__DT(F32), ELEMENTWISE, cost_rope, WARM)                             \
    X(GATHER_ROWS, tgl_gather_rows, TGL_OP_GATHER_ROWS, gather_rows, TGL__DT(F32), EXACT, cost_gather_rows, WARM) \
    X(ATTENTION, tgl_attention, TGL_OP_ATTENTION, attention, TGL__DT(F32), ACCUMULATE, cost_attention, WARM)     \
    X(ATTENTION_KV, tgl_attention_kv, TGL_OP_ATTENTION, attention, TGL__DT(F32), ACCUMULATE,               \
      cost_attention_kv, WARM)                                                                                   \
    X(CONV2D, tgl_conv2d, TGL_OP_CONV2D, conv2d, TGL__DT(F32), ACCUMULATE, cost_conv2d, WARM)                    \
    X(COPY, tgl_copy, TGL_OP_COPY, tensor_ewise, TGL__DT_DATA, EXACT, cost_copy, WARM)                          \
    X(COMPARE, tgl_compare, TGL_OP_COMPARE, tensor_ewise, TGL__DT_DATA, EXACT, cost_compare, WARM)              \
    X(WHERE, tgl_where, TGL_OP_WHERE, tensor_ewise, TGL__DT_DATA, EXACT, cost_where, WARM)                      \
    X(UNARY_T, tgl_unary_t, TGL_OP_UNARY_T, tensor_ewise, TGL__DT_DATA, ELEMENTWISE, cost_unary_t, WARM)        \
    X(BINARY_T, tgl_binary_t, TGL_OP_BINARY_T, tensor_ewise, TGL__DT_DATA, ELEMENTWISE, cost_binary_t, WARM)    \
    X(CLAMP, tgl_clamp, TGL_OP_CLAMP, tensor_ewise, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_clamp, WARM)       \
    X(FILL_T, tgl_fill_t, TGL_OP_FILL_T, tensor_ewise, TGL__DT_DATA, EXACT, cost_fill_t, WARM)                  \
    X(ARANGE, tgl_arange, TGL_OP_ARANGE, tensor_ewise, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_arange, WARM) \
    X(CAT, tgl_cat, TGL_OP_CAT, tensor_ewise, TGL__DT_DATA, EXACT, cost_cat, WARM)                            \
    X(REDUCE_T, tgl_reduce_t, TGL_OP_REDUCE_T, reduce_t, TGL__DT_DATA, ACCUMULATE, cost_reduce_t, WARM)          \
    X(ARGMAX_T, tgl_argmax_t, TGL_OP_ARG_REDUCE, reduce_t, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_arg_t, WARM) \
    X(ARGMIN_T, tgl_argmin_t, TGL_OP_ARG_REDUCE, reduce_t, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_arg_t, WARM) \
    X(SOFTMAX_T, tgl_softmax_t, TGL_OP_SOFTMAX, reduce_t, TGL__DT_FLOATS, ACCUMULATE, cost_rows_t, WARM)          \
    X(LOG_SOFTMAX_T, tgl_log_softmax_t, TGL_OP_LOG_SOFTMAX, reduce_t, TGL__DT_FLOATS, ACCUMULATE, cost_rows_t, WARM) \
    X(RMSNORM_T, tgl_rmsnorm_t, TGL_OP_RMSNORM, reduce_t, TGL__DT_FLOATS, ACCUMULATE, cost_rows_t, WARM)          \
    X(LAYERNORM_T, tgl_layernorm_t, TGL_OP_LAYERNORM, reduce_t, TGL__DT_FLOATS, ACCUMULATE, cost_rows_t, WARM) \
    X(MAP_T, tgl_map_t, TGL_OP_MAP, tensor_ewise, TGL__DT_DATA, ELEMENTWISE, cost_map_t, NO_WARM)    \
    X(RANDOM, tgl_random, TGL_OP_RANDOM, tensor_ewise, TGL__DT_DATA, ELEMENTWISE, cost_random, WARM)    \
    X(DROPOUT, tgl_dropout, TGL_OP_DROPOUT, tensor_ewise, TGL__DT_FLOATS, EXACT, cost_dropout, WARM)      \
    X(TRIU, tgl_triu, TGL_OP_TRIANGLE, tensor_ewise, TGL__DT_DATA, EXACT, cost_triu, WARM)                 \
    X(TRIL, tgl_tril, TGL_OP_TRIANGLE, tensor_ewise, TGL__DT_DATA, EXACT, cost_tril, WARM)                 \
    X(FLIP, tgl_flip, TGL_OP_FLIP, tensor_ewise, TGL__DT_DATA, EXACT, cost_flip, WARM)                     \
    X(ROLL, tgl_roll, TGL_OP_ROLL, tensor_ewise, TGL__DT_DATA, EXACT, cost_roll, WARM)                     \
    X(REPEAT, tgl_repeat, TGL_OP_REPEAT, tensor_ewise, TGL__DT_DATA, EXACT, cost_repeat, WARM)             \
    X(PAD, tgl_pad, TGL_OP_PAD, tensor_ewise, TGL__DT_DATA, EXACT, cost_pad, WARM)                         \
    X(ONE_HOT, tgl_one_hot, TGL_OP_ONE_HOT, tensor_ewise, TGL__DT_DATA, EXACT, cost_one_hot, WARM)             \
    X(MASKED_FILL, tgl_masked_fill, TGL_OP_MASKED_FILL, tensor_ewise, TGL__DT_DATA, EXACT, cost_masked_fill, WARM) \
    X(GATHER, tgl_gather, TGL_OP_GATHER, gather, TGL__DT_DATA, EXACT, cost_gather, WARM)                  \
    X(INDEX_SELECT, tgl_index_select, TGL_OP_INDEX_SELECT, gather, TGL__DT_DATA, EXACT, cost_index_select, WARM) \
    X(POOL2D, tgl_pool2d, TGL_OP_POOL2D, pool2d, TGL__DT(F32), ACCUMULATE, cost_pool2d, WARM)                    \
    X(CUMSUM, tgl_cumsum, TGL_OP_SCAN, reduce_t, TGL__DT_DATA, ACCUMULATE, cost_scan, WARM)                      \
    X(CUMPROD, tgl_cumprod, TGL_OP_SCAN, reduce_t, TGL__DT_DATA, ACCUMULATE, cost_scan, WARM)                    \
    X(CUMMAX, tgl_cummax, TGL_OP_SCAN, reduce_t, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_scan_arg, WARM)      \
    X(CUMMIN, tgl_cummin, TGL_OP_SCAN, reduce_t, TGL__DT_FLOATS | TGL__DT(I32), EXACT, cost_scan_arg, WARM)      \
    X(MASKED_SELECT, tgl_masked_select, TGL_OP_MASKED_SELECT, compact, TGL__DT_DATA, EXACT, cost_masked_select, WARM) \
    X(NONZERO, tgl_nonzero, TGL_OP_NONZERO, compact, TGL__DT_DATA, EXACT, cost_nonzero, WARM)                  \
    X(INTERPOLATE, tgl_interpolate, TGL_OP_INTERPOLATE, interpolate, TGL__DT(F32), ACCUMULATE, cost_interpolate, WARM) \
    X(ADAPTIVE_POOL2D, tgl_adaptive_pool2d, TGL_OP_ADAPTIVE_POOL2D, adaptive_pool2d, TGL__DT(F32), ACCUMULATE,       \
      cost_adaptive_pool2d, WARM)                                                                               \
    X(MAX_POOL2D_INDICES, tgl_max_pool2d_indices, TGL_OP_POOL2D, pool2d, TGL__DT(F32), EXACT, cost_max_pool2d_indices, \
      WARM)                                                                                                      \
    X(SCATTER, tgl_scatter, TGL_OP_SCATTER, scatter, TGL__DT_DATA, EXACT, cost_scatter, WARM)                     \
    X(INDEX_ADD, tgl_index_add, TGL_OP_SCATTER, scatter, TGL__DT_DATA, EXACT, cost_index_add, WARM)             \
    X(SORT, tgl_sort, TGL_OP_SORT, sort, TGL__DT_DATA, EXACT, cost_sort, WARM)                                    \
    X(TOPK, tgl_topk, TGL_OP_SORT, sort, TGL__DT_DATA, EXACT, cost_topk, WARM)                                    \
    X(CONV2D_FUSED, tgl_conv2d_fused, TGL_OP_CONV2D, conv2d, TGL__DT(F32), ACCUMULATE, cost_conv2d_fused, WARM)    \
    X(CONV_TRANSPOSE2D, tgl_conv_transpose2d, TGL_OP_CONV_TRANSPOSE2D, conv_transpose2d, TGL__DT(F32), ACCUMULATE, \
      cost_conv_transpose2d, WARM)                                                                               \
    X(MATVEC_T, tgl_matvec_t, TGL_OP_MATVEC, matvec_t, TGL__DT_WEIGHTS, ACCUMULATE, cost_matvec_t, WARM)          \
    X(QUANTIZE, tgl_quantize, TGL_OP_QUANTIZE, quantize, TGL__DT_WEIGHTS, EXACT, cost_quantize, WARM)             \
    X(DEQUANTIZE, tgl_dequantize, TGL_OP_QUANTIZE, quantize, TGL__DT_WEIGHTS, EXACT, cost_dequantize, WARM)      \
    X(ATTENTION_GQA, tgl_attention_gqa, TGL_OP_ATTENTION, attention, TGL__DT(F32), ACCUMULATE, cost_attention_gqa, WARM) \
    X(ROPE_T, tgl_rope_t, TGL_OP_ROPE, rope_t, TGL__DT(F32), ELEMENTWISE, cost_rope_t, WARM)                     \
    X(GATHER_ROWS_T, tgl_gather_rows_t, TGL_OP_GATHER_ROWS, gather_rows_t, TGL__DT_WEIGHTS, EXACT, cost_gather_rows_t, \
      WARM)                                                                                                      \
    X(ATTENTION_T, tgl_attention_t, TGL_OP_ATTENTION, attention, TGL__DT(F32) | TGL__DT(F16), ACCUMULATE,        \
      cost_attention_t, WARM)                                                                                    \
    X(GEMM_FUSED, tgl_gemm_fused, TGL_OP_GEMM, gemm, TGL__DT(F32), ACCUMULATE, cost_gemm_fused, WARM)             \
    X(MATVEC_T_FUSED, tgl_matvec_t_fused, TGL_OP_MATVEC, matvec_t, TGL__DT_WEIGHTS, ACCUMULATE, cost_matvec_t_fused, \
      WARM)

/* The C type of each kind (two-argument kinds: the array's). */
#define TGL__T_z size_t
#define TGL__T_u uint64_t
#define TGL__T_f float
#define TGL__T_d double
#define TGL__T_p tgl_ptr
#define TGL__T_i tgl_ptr
#define TGL__T_o tgl_ptr
#define TGL__T_O tgl_ptr
#define TGL__T_I tgl_ptr
#define TGL__T_b tgl_ptr
#define TGL__T_x tgl_ptr
#define TGL__T_X tgl_ptr
#define TGL__T_S const size_t *
#define TGL__T_q const size_t *
#define TGL__T_J const int64_t *
#define TGL__T_L const tgl_ptr *
#define TGL__T_U const tgl_tensor *
#define TGL__T_s const char *
#define TGL__T_c const tgl_conv2d_desc *
#define TGL__T_P const tgl_pool2d_desc *
#define TGL__T_R const tgl_interpolate_desc *
#define TGL__T_Y const tgl_rope_desc *
#define TGL__T_N const tgl_attention_desc *
#define TGL__T_t const tgl_tensor *
#define TGL__T_T const tgl_tensor *
#define TGL__T_M const tgl_tensor *
#define TGL__T_D const void *
#define TGL__T_H void *
#define TGL__T_A tgl_ptr *

/* Argument-list expanders, for TGL__ARGS_<ID>(ARG, ENUM, ARR). */
#define TGL__SIG_A(k, name) #k                      /* the trace signature */
#define TGL__SIG_E(t, name) "e"
#define TGL__SIG_N(k, p, count) #k
#define TGL__TYPE_A(k, name) , TGL__T_##k           /* the parameter types, after the backend */
#define TGL__TYPE_E(t, name) , t
#define TGL__TYPE_N(k, p, count) , TGL__T_##k, size_t
#define TGL__PARAM_A(k, name) , TGL__T_##k name     /* the parameters, after the backend */
#define TGL__PARAM_E(t, name) , t name
#define TGL__PARAM_N(k, p, count) , TGL__T_##k p, size_t count
#define TGL__FWD_A(k, name) , name                  /* the arguments, forwarded by name */
#define TGL__FWD_E(t, name) , name
#define TGL__FWD_N(k, p, count) , p, count
#define TGL__FIELD_A(k, name) TGL__T_##k name;      /* the argument struct's members */
#define TGL__FIELD_E(t, name) t name;
#define TGL__FIELD_N(k, p, count) TGL__T_##k p; size_t count;

/* The function type of a row's public prototype. */
#define TGL__FN_TYPE(id) tgl_status (*)(tgl_backend * TGL__ARGS_##id(TGL__TYPE_A, TGL__TYPE_E, TGL__TYPE_N))

/* Inside a public wrapper whose parameters carry the row's names:
 *     if (tgl__hooked(b)) return TGL__HOOK(ROPE);                                         */
#define TGL__HOOK(id) tgl__hook_##id(b TGL__ARGS_##id(TGL__FWD_A, TGL__FWD_E, TGL__FWD_N))

#endif
