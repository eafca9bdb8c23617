/* Tracing, replay and profiling: a run with every op family recorded on each backend replays on both with
 * --compare and agrees; tracing leaves results bit for bit unchanged; an edited snapshot makes
 * replay name the call that produced it; and damaged or hostile traces (truncated at every
 * length, flipped bits, huge counts and sizes, wrong versions, freed allocations) each end in
 * a clear error, never a crash (CI runs this suite under ASan and UBSan). */
#include "testing.h"
#include "core/trace.h"
#include "core/trace_format.h"
#include "core/trace_read.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N = 96, ROWS = 6, COLS = 16 };

/* Outputs the workload reads back, to compare traced and untraced runs. */
typedef struct outputs {
    float ew[N], mapped[N], bcast[ROWS * COLS], perm[ROWS * COLS], red[ROWS], gemm[ROWS * ROWS];
    float soft[ROWS * COLS], norm[ROWS * COLS], rope[ROWS * COLS], gathered[3 * COLS], attn[2 * 4 * 8];
    float conv[2 * 3 * 3 * 4], conv_fused[2 * 3 * 3 * 4], conv_t[2 * 2 * 4 * 7], back[N], scaled[N], logsoft[ROWS * COLS], layer[ROWS * COLS];
    float batched[2 * ROWS * ROWS], mv[ROWS], attn_kv[2 * 4 * 8], attn_gqa[2 * 4 * 8], gemm16_out[ROWS * ROWS];
    float quanted[3 * 32], qmv[2 * 3]; /* tgl_quantize of x to q4_0 then tgl_dequantize; tgl_matvec_t by y */
    float rope_t[ROWS * COLS];         /* tgl_rope_t of pm: positions from ids, half the dims rotated, Llama 3 scaling */
    float rope_f[ROWS * COLS];         /* tgl_rope_t of pm: every dim rotated, per-frequency factors */
    float embedded[3 * COLS];          /* tgl_gather_rows_t of pm's rows as f16 */
    float attn_t[2 * 4 * 8];           /* tgl_attention_t over y as an f16 cache: mask, window, capping, ALiBi, key lengths */
    float gemm_fused[ROWS * ROWS];     /* tgl_gemm_fused: silu(pm pm^T / 2 + row) times the tgl_gemm result */
    float qmv_fused[2 * 3];            /* tgl_matvec_t_fused: gelu(the q4_0 product + qmv + row) */
    int32_t arg[ROWS], argmin[COLS];
    uint16_t gemm16[ROWS * ROWS];
    uint16_t half[N];
    uint16_t copied[ROWS * COLS]; /* tgl_copy: pm transposed into bf16 */
    float picked[2 * ROWS * COLS]; /* tgl_compare of pm against a row, then tgl_where and tgl_masked_fill */
    float mathed[ROWS * COLS];    /* tgl_unary_t of pm, tgl_binary_t with the row, tgl_clamp */
    float catted[ROWS * 3 * COLS]; /* tgl_cat of pm, the mask as f32 and the row repeated */
    float colmax[COLS];            /* tgl_reduce_t: pm's column maxima */
    int32_t rowarg[2 * ROWS];      /* tgl_argmax_t and tgl_argmin_t of pm's rows */
    uint16_t rowsoft[4 * ROWS * COLS]; /* tgl_softmax_t, tgl_log_softmax_t, tgl_rmsnorm_t, tgl_layernorm_t of pm (bf16) */
    uint16_t mapt[ROWS * COLS];        /* tgl_map_t of pm and the row into f16 */
    float rand[2 * ROWS * COLS];       /* tgl_random (normal, transposed), then tgl_dropout of pm */
    float tri[2 * ROWS * COLS];        /* tgl_triu and tgl_tril of pm */
    float moved[4 * ROWS * COLS + (ROWS + 2) * (COLS + 2)]; /* tgl_flip, tgl_roll, tgl_repeat (2 x 1), tgl_pad of pm */
    uint8_t hot[ROWS * COLS]; /* tgl_one_hot of rowarg's first ROWS (bool) */
    float pooled[2 * 2 * 3 * 3 * 2]; /* tgl_pool2d max then average over y as 2 x 2 planes of 4 x 5 */
    float resized[2 * 2 * 7 * 3 * 2]; /* tgl_interpolate of those planes to 7 x 3, bicubic then nearest */
    float adapted[2 * 2 * 3 * 2 * 2]; /* tgl_adaptive_pool2d of them to 3 x 2, max then average */
    float pool_at[2 * 2 * 3 * 3];     /* tgl_max_pool2d_indices's values */
    int32_t pool_idx[2 * 2 * 3 * 3];  /* ... and indices */
    float picks[ROWS + ROWS * ROWS]; /* tgl_gather of pm by those (a column), tgl_index_select of its columns */
    float scanned[4 * ROWS * COLS]; /* tgl_cumsum of pm along its columns; cumprod, cummax, cummin along its rows */
    int32_t scan_at[2 * ROWS * COLS]; /* tgl_cummax's and tgl_cummin's indices */
    float selected[ROWS * COLS];            /* tgl_masked_select of pm by the mask (zeros first) */
    int32_t nonzero[2 * ROWS * COLS + 2];   /* tgl_nonzero of the mask (zeros first), then both counts */
    float scattered[ROWS * COLS]; /* ones, tgl_scatter (add) of pm by the gather's column, tgl_index_add of
                                     the index_select's columns back */
    float sorted[ROWS * COLS];    /* tgl_sort of pm along its rows, descending */
    int32_t order[ROWS * COLS + 2 * COLS]; /* ... its indices, then tgl_topk's (k 2) of its columns */
} outputs;

static tgl_ptr upload(tgl_backend *b, const void *x, size_t bytes)
{
    tgl_ptr p = 0;
    assert_int_equal(tgl_alloc(b, bytes, &p), TGL_OK);
    assert_int_equal(tgl_copy_htod(b, p, x, bytes), TGL_OK);
    return p;
}

static tgl_ptr fresh(tgl_backend *b, size_t bytes)
{
    tgl_ptr p = 0;
    assert_int_equal(tgl_alloc(b, bytes, &p), TGL_OK);
    return p;
}

#define OK(call) assert_int_equal((call), TGL_OK)

/* Every op family once, at small awkward sizes, plus a rejected call and a freed buffer. */
static void workload(tgl_backend *b, uint64_t seed, outputs *o)
{
    tgt_rng r;
    tgt_rng_init(&r, seed);
    float x[N], y[N], m[ROWS * COLS];
    for (int i = 0; i < N; i++) {
        x[i] = tgt_uniform(&r, -2.0f, 2.0f);
        y[i] = tgt_uniform(&r, 0.5f, 3.0f);
    }
    for (int i = 0; i < ROWS * COLS; i++)
        m[i] = tgt_uniform(&r, -1.0f, 1.0f);
    tgl_ptr px = upload(b, x, sizeof x), py = upload(b, y, sizeof y), pm = upload(b, m, sizeof m);
    tgl_ptr t = fresh(b, sizeof x), u = fresh(b, sizeof x);

    OK(tgl_unary(b, TGL_UNARY_TANH, px, t, N));
    OK(tgl_binary(b, TGL_BINARY_MUL, t, py, t, N)); /* in place */
    OK(tgl_copy_dtoh(b, o->ew, t, sizeof o->ew));
    OK(tgl_map(b, "sqrt(a*a + b) - c", (tgl_ptr[]){px, py, t}, 3, u, N));
    OK(tgl_copy_dtoh(b, o->mapped, u, sizeof o->mapped));
    OK(tgl_scale_add(b, 0.5f, px, -2.0f, u, N));
    OK(tgl_copy_dtoh(b, o->scaled, u, sizeof o->scaled));

    tgl_ptr row = upload(b, x, COLS * sizeof(float)), q = fresh(b, sizeof m);
    OK(tgl_binary_broadcast(b, TGL_BINARY_ADD, pm, (size_t[]){ROWS, COLS}, 2, row, (size_t[]){COLS}, 1, q));
    OK(tgl_copy_dtoh(b, o->bcast, q, sizeof o->bcast));
    OK(tgl_permute(b, pm, q, (size_t[]){ROWS, COLS}, 2, (size_t[]){1, 0}));
    OK(tgl_copy_dtoh(b, o->perm, q, sizeof o->perm));
    tgl_ptr red = fresh(b, ROWS * sizeof(float)), arg = fresh(b, ROWS * sizeof(int32_t));
    OK(tgl_reduce(b, TGL_REDUCE_SUM, pm, red, (size_t[]){ROWS, COLS}, 2, 1));
    OK(tgl_argmax(b, pm, arg, (size_t[]){ROWS, COLS}, 2, 1));
    OK(tgl_copy_dtoh(b, o->red, red, sizeof o->red));
    OK(tgl_copy_dtoh(b, o->arg, arg, sizeof o->arg));

    tgl_ptr c = fresh(b, ROWS * ROWS * sizeof(float));
    OK(tgl_fill(b, c, 1.0f, ROWS * ROWS));
    OK(tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, ROWS, ROWS, COLS, 0.5f, pm, COLS, pm, COLS, 1.0f, c, ROWS));
    OK(tgl_copy_dtoh(b, o->gemm, c, sizeof o->gemm));
    OK(tgl_gemm_fused(b, TGL_NO_TRANS, TGL_TRANS, ROWS, ROWS, COLS, 0.5f, pm, COLS, pm, COLS, 0.0f, c, ROWS, row,
                      TGL_ACTIVATION_SILU, 0.0f, 1));
    OK(tgl_copy_dtoh(b, o->gemm_fused, c, sizeof o->gemm_fused));
    OK(tgl_softmax(b, pm, q, ROWS, COLS));
    OK(tgl_copy_dtoh(b, o->soft, q, sizeof o->soft));
    OK(tgl_rmsnorm(b, pm, row, q, ROWS, COLS, 1e-5f));
    OK(tgl_copy_dtoh(b, o->norm, q, sizeof o->norm));
    OK(tgl_log_softmax(b, pm, q, ROWS, COLS));
    OK(tgl_copy_dtoh(b, o->logsoft, q, sizeof o->logsoft));
    OK(tgl_layernorm(b, pm, row, py, q, ROWS, COLS, 1e-5f));
    OK(tgl_copy_dtoh(b, o->layer, q, sizeof o->layer));
    tgl_ptr amin = fresh(b, COLS * sizeof(int32_t)), cb = fresh(b, sizeof o->batched), mv = fresh(b, sizeof o->mv);
    OK(tgl_argmin(b, pm, amin, (size_t[]){ROWS, COLS}, 2, 0));
    OK(tgl_copy_dtoh(b, o->argmin, amin, sizeof o->argmin));
    OK(tgl_gemm_batched(b, TGL_NO_TRANS, TGL_TRANS, ROWS, ROWS, COLS / 2, 1.0f, pm, COLS, COLS / 2, pm, COLS,
                        COLS / 2, 0.0f, cb, ROWS, ROWS * ROWS, 2));
    OK(tgl_copy_dtoh(b, o->batched, cb, sizeof o->batched));
    OK(tgl_matvec(b, ROWS, COLS, pm, px, mv));
    OK(tgl_copy_dtoh(b, o->mv, mv, sizeof o->mv));
    /* x as a [3, 32] weight in q4_0, back to f32, and its product with y's rows */
    tgl_tensor tw32 = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 2, (size_t[]){3, 32});
    tgl_tensor tq4 = tgl_tensor_contiguous(fresh(b, 3 * 18), TGL_DTYPE_Q4_0, 2, (size_t[]){3, 32});
    tgl_tensor tdq = tgl_tensor_contiguous(fresh(b, sizeof o->quanted), TGL_DTYPE_F32, 2, (size_t[]){3, 32});
    tgl_tensor tyx = tgl_tensor_contiguous(py, TGL_DTYPE_F32, 2, (size_t[]){2, 32});
    tgl_tensor tqmv = tgl_tensor_contiguous(fresh(b, sizeof o->qmv), TGL_DTYPE_F32, 2, (size_t[]){2, 3});
    OK(tgl_quantize(b, &tw32, &tq4));
    OK(tgl_dequantize(b, &tq4, &tdq));
    OK(tgl_matvec_t(b, &tq4, &tyx, &tqmv));
    OK(tgl_copy_dtoh(b, o->quanted, tdq.data, sizeof o->quanted));
    OK(tgl_copy_dtoh(b, o->qmv, tqmv.data, sizeof o->qmv));
    tgl_tensor tbias = tgl_tensor_contiguous(row, TGL_DTYPE_F32, 1, (size_t[]){3});
    OK(tgl_matvec_t_fused(b, &tq4, &tyx, 1.0f, &tbias, TGL_ACTIVATION_GELU, 0.0f, 0, &tqmv));
    OK(tgl_copy_dtoh(b, o->qmv_fused, tqmv.data, sizeof o->qmv_fused));
    tgl_ptr h16 = fresh(b, ROWS * COLS * 2), c16 = fresh(b, sizeof o->gemm16);
    OK(tgl_cast_f32_f16(b, pm, h16, ROWS * COLS));
    OK(tgl_fill(b, c, 0.0f, ROWS * ROWS));
    OK(tgl_cast_f32_f16(b, c, c16, ROWS * ROWS));
    OK(tgl_gemm_f16(b, TGL_NO_TRANS, TGL_TRANS, ROWS, ROWS, COLS, 1.0f, h16, COLS, h16, COLS, 0.0f, c16, ROWS));
    OK(tgl_copy_dtoh(b, o->gemm16, c16, sizeof o->gemm16));
    OK(tgl_rope(b, pm, q, 1, ROWS, 1, COLS, 3, 10000.0f, TGL_ROPE_NEOX));
    OK(tgl_copy_dtoh(b, o->rope, q, sizeof o->rope));
    int32_t ids[3] = {4, 0, 4};
    tgl_ptr pid = upload(b, ids, sizeof ids), g = fresh(b, sizeof o->gathered);
    OK(tgl_gather_rows(b, pm, pid, g, ROWS, COLS, 3));
    OK(tgl_copy_dtoh(b, o->gathered, g, sizeof o->gathered));
    {
        int32_t where[ROWS] = {7, 0, 3, 1000, 5, 5};
        tgl_ptr ppos = upload(b, where, sizeof where), rt = fresh(b, sizeof o->rope_t);
        tgl_tensor xin = tgl_tensor_contiguous(pm, TGL_DTYPE_F32, 4, (size_t[]){1, ROWS, 1, COLS});
        tgl_tensor xout = tgl_tensor_contiguous(rt, TGL_DTYPE_F32, 4, (size_t[]){1, ROWS, 1, COLS});
        tgl_tensor pos = tgl_tensor_contiguous(ppos, TGL_DTYPE_I32, 2, (size_t[]){1, ROWS});
        tgl_rope_desc rd = {.theta = 500000.0f, .mode = TGL_ROPE_NEOX, .rotary_dim = COLS / 2,
                            .scaling = TGL_ROPE_SCALE_LLAMA3, .factor = 8.0f, .low_freq_factor = 1.0f,
                            .high_freq_factor = 4.0f, .original_context = 64};
        OK(tgl_rope_t(b, &xin, &xout, &pos, &rd));
        OK(tgl_copy_dtoh(b, o->rope_t, rt, sizeof o->rope_t));
        const float factors[COLS / 2] = {1, 1, 1.5f, 2, 3, 8, 8, 8};
        tgl_rope_desc rf = {.theta = 10000.0f, .mode = TGL_ROPE_INTERLEAVED, .pos_offset = 3, .freq_factors = factors};
        OK(tgl_rope_t(b, &xin, &xout, NULL, &rf));
        OK(tgl_copy_dtoh(b, o->rope_f, rt, sizeof o->rope_f));
        tgl_ptr h = fresh(b, ROWS * COLS * 2), e = fresh(b, sizeof o->embedded);
        tgl_tensor table = tgl_tensor_contiguous(h, TGL_DTYPE_F16, 2, (size_t[]){ROWS, COLS});
        tgl_tensor src = tgl_tensor_contiguous(pm, TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
        tgl_tensor tids = tgl_tensor_contiguous(pid, TGL_DTYPE_I32, 1, (size_t[]){3});
        tgl_tensor rows = tgl_tensor_contiguous(e, TGL_DTYPE_F32, 2, (size_t[]){3, COLS});
        OK(tgl_copy(b, &table, &src));
        OK(tgl_gather_rows_t(b, &table, &tids, &rows));
        OK(tgl_copy_dtoh(b, o->embedded, e, sizeof o->embedded));
    }

    /* Attention over x (2 heads x 4 queries x 8) and a conv2d over the start of y. */
    tgl_ptr att = fresh(b, sizeof o->attn);
    OK(tgl_attention(b, px, py, px, att, 1, 2, 4, 4, 8, 0.35f, 1));
    OK(tgl_copy_dtoh(b, o->attn, att, sizeof o->attn));
    OK(tgl_attention_kv(b, px, py, px, att, 1, 2, 4, 3, 6, 8, 0.35f, 0)); /* 3 of 6 cached positions */
    OK(tgl_copy_dtoh(b, o->attn_kv, att, sizeof o->attn_kv));
    OK(tgl_attention_gqa(b, px, py, px, att, 1, 2, 1, 4, 4, 4, 8, 0.35f, 1)); /* both heads on one k, v */
    OK(tgl_copy_dtoh(b, o->attn_gqa, att, sizeof o->attn_gqa));
    {
        tgl_ptr cache = fresh(b, 2 * 2 * 4 * 8 * 2); /* keys from y, values from x */
        tgl_tensor src = tgl_tensor_contiguous(py, TGL_DTYPE_F32, 1, (size_t[]){2 * 4 * 8});
        tgl_tensor half = tgl_tensor_contiguous(cache, TGL_DTYPE_F16, 1, (size_t[]){2 * 4 * 8});
        OK(tgl_copy(b, &half, &src));
        src.data = px;
        half.data = cache + 2 * 4 * 8 * 2;
        OK(tgl_copy(b, &half, &src));
        tgl_tensor tq = tgl_tensor_contiguous(px, TGL_DTYPE_F32, 4, (size_t[]){2, 1, 4, 8}), out = tq;
        tgl_tensor k = tgl_tensor_contiguous(cache, TGL_DTYPE_F16, 4, (size_t[]){2, 1, 4, 8}), v = k;
        v.data = cache + 2 * 4 * 8 * 2;
        out.data = att;
        const size_t lens[2] = {3, 4};
        tgl_attention_desc ad = {.scale = 0.35f, .causal = 1, .window = 2, .softcap = 5.0f, .alibi_max_bias = 8.0f,
                                 .seq_lens = lens};
        tgl_tensor mask = tgl_tensor_contiguous(py + 64 * sizeof(float), TGL_DTYPE_F32, 4, (size_t[]){1, 1, 4, 4});
        OK(tgl_attention_t(b, &tq, &k, &v, &mask, &out, &ad));
        OK(tgl_copy_dtoh(b, o->attn_t, att, sizeof o->attn_t));
    }
    tgl_conv2d_desc d = {.batch = 2, .in_channels = 2, .in_h = 4, .in_w = 5, .out_channels = 3, .kernel_h = 2,
                         .kernel_w = 2};
    tgl_ptr conv = fresh(b, sizeof o->conv);
    OK(tgl_conv2d(b, &d, py, px, 0, conv));
    OK(tgl_copy_dtoh(b, o->conv, conv, sizeof o->conv));
    tgl_ptr fused = fresh(b, sizeof o->conv_fused); /* silu(conv + the one above) */
    OK(tgl_conv2d_fused(b, &d, py, px, 0, TGL_ACTIVATION_SILU, 0.0f, conv, 1, fused));
    OK(tgl_copy_dtoh(b, o->conv_fused, fused, sizeof o->conv_fused));
    tgl_conv2d_desc dt = {.batch = 2, .in_channels = 3, .in_h = 2, .in_w = 3, .out_channels = 2, .kernel_h = 3,
                          .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1}; /* 4 x 7 + output padding 1, 0 */
    tgl_ptr conv_t = fresh(b, sizeof o->conv_t);
    OK(tgl_conv_transpose2d(b, &dt, 1, 0, conv, px, py, conv_t));
    OK(tgl_copy_dtoh(b, o->conv_t, conv_t, sizeof o->conv_t));
    tgl_pool2d_desc pd = {.batch = 2, .channels = 2, .in_h = 4, .in_w = 5, .kernel_h = 3, .kernel_w = 2,
                          .stride_h = 2, .stride_w = 2, .pad_h = 1, .ceil_mode = 1}; /* 3 x 3 outputs */
    tgl_ptr pooled = fresh(b, sizeof o->pooled);
    OK(tgl_pool2d(b, &pd, py, pooled));
    pd.kind = TGL_POOL_AVG;
    OK(tgl_pool2d(b, &pd, py, pooled + sizeof o->pooled / 2));
    OK(tgl_copy_dtoh(b, o->pooled, pooled, sizeof o->pooled));
    tgl_interpolate_desc rd = {.batch = 2, .channels = 2, .in_h = 4, .in_w = 5, .out_h = 7, .out_w = 3,
                               .mode = TGL_INTERP_BICUBIC, .align_corners = 1};
    tgl_ptr resized = fresh(b, sizeof o->resized);
    OK(tgl_interpolate(b, &rd, py, resized));
    rd.mode = TGL_INTERP_NEAREST;
    rd.align_corners = 0;
    rd.scale_w = 0.7;
    OK(tgl_interpolate(b, &rd, py, resized + sizeof o->resized / 2));
    OK(tgl_copy_dtoh(b, o->resized, resized, sizeof o->resized));
    pd.kind = TGL_POOL_MAX;
    tgl_ptr pool_at = fresh(b, sizeof o->pool_at), pool_idx = fresh(b, sizeof o->pool_idx);
    OK(tgl_max_pool2d_indices(b, &pd, py, pool_at, pool_idx));
    OK(tgl_copy_dtoh(b, o->pool_at, pool_at, sizeof o->pool_at));
    OK(tgl_copy_dtoh(b, o->pool_idx, pool_idx, sizeof o->pool_idx));
    tgl_ptr adapted = fresh(b, sizeof o->adapted);
    OK(tgl_adaptive_pool2d(b, TGL_POOL_MAX, 2, 2, 4, 5, 3, 2, py, adapted));
    OK(tgl_adaptive_pool2d(b, TGL_POOL_AVG, 2, 2, 4, 5, 3, 2, py, adapted + sizeof o->adapted / 2));
    OK(tgl_copy_dtoh(b, o->adapted, adapted, sizeof o->adapted));
    tgl_tensor tsrc = tgl_tensor_contiguous(pm, TGL_DTYPE_F32, 2, (size_t[]){COLS, ROWS});
    tgl_tensor tdst = tgl_tensor_contiguous(fresh(b, sizeof o->copied), TGL_DTYPE_BF16, 2, (size_t[]){COLS, ROWS});
    tsrc.strides[0] = 1;
    tsrc.strides[1] = COLS;
    OK(tgl_copy(b, &tdst, &tsrc));
    OK(tgl_copy_dtoh(b, o->copied, tdst.data, sizeof o->copied));
    tgl_tensor tm = tgl_tensor_contiguous(pm, TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    tgl_tensor trow = tgl_tensor_contiguous(row, TGL_DTYPE_F32, 1, (size_t[]){COLS});
    tgl_tensor tmask = tgl_tensor_contiguous(fresh(b, ROWS * COLS), TGL_DTYPE_BOOL, 2, (size_t[]){ROWS, COLS});
    tgl_tensor tpick = tgl_tensor_contiguous(fresh(b, sizeof o->picked), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    OK(tgl_compare(b, TGL_COMPARE_GT, &tm, &trow, &tmask));
    OK(tgl_where(b, &tmask, &tm, &trow, &tpick));
    tgl_tensor tfilled = tpick;
    tfilled.data += ROWS * COLS * sizeof(float);
    OK(tgl_masked_fill(b, &tm, &tmask, -2.5, &tfilled));
    OK(tgl_copy_dtoh(b, o->picked, tpick.data, sizeof o->picked));
    tgl_tensor tmath = tgl_tensor_contiguous(fresh(b, sizeof o->mathed), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    OK(tgl_unary_t(b, TGL_UNARY_ERF, &tm, &tmath));
    OK(tgl_binary_t(b, TGL_BINARY_REMAINDER, &tmath, &trow, &tmath));
    tgl_tensor lo = trow, hi = trow;
    lo.ndim = hi.ndim = 0; /* scalar bounds: the row's first two elements */
    hi.data += sizeof(float);
    OK(tgl_clamp(b, &tmath, &lo, &hi, &tmath));
    tgl_tensor corner = tmath; /* every other element of the first row */
    corner.ndim = 1;
    corner.shape[0] = COLS / 2;
    corner.strides[0] = 2;
    OK(tgl_fill_t(b, &corner, -0.25));
    corner.data += sizeof(float) * COLS; /* the second row's: 0.5, 0.25, 0, ... */
    OK(tgl_arange(b, &corner, 0.5, -0.25));
    OK(tgl_copy_dtoh(b, o->mathed, tmath.data, sizeof o->mathed));
    tgl_tensor parts[3] = {tm, tmask, trow};
    parts[2].ndim = 2;
    parts[2].shape[0] = ROWS;
    parts[2].shape[1] = COLS;
    parts[2].strides[0] = 0;
    parts[2].strides[1] = 1;
    tgl_tensor tcat = tgl_tensor_contiguous(fresh(b, sizeof o->catted), TGL_DTYPE_F32, 2, (size_t[]){ROWS, 3 * COLS});
    OK(tgl_cat(b, parts, 3, 1, &tcat));
    OK(tgl_copy_dtoh(b, o->catted, tcat.data, sizeof o->catted));
    tgl_tensor tcol = tgl_tensor_contiguous(fresh(b, sizeof o->colmax), TGL_DTYPE_F32, 1, (size_t[]){COLS});
    OK(tgl_reduce_t(b, TGL_REDUCE_MAX, &tm, 0, &tcol));
    OK(tgl_copy_dtoh(b, o->colmax, tcol.data, sizeof o->colmax));
    tgl_tensor targ = tgl_tensor_contiguous(fresh(b, sizeof o->rowarg), TGL_DTYPE_I32, 1, (size_t[]){ROWS}), targ2 = targ;
    targ2.data += ROWS * sizeof(int32_t);
    OK(tgl_argmax_t(b, &tm, 1, &targ));
    OK(tgl_argmin_t(b, &tm, 1, &targ2));
    OK(tgl_copy_dtoh(b, o->rowarg, targ.data, sizeof o->rowarg));
    tgl_tensor trs = tgl_tensor_contiguous(fresh(b, sizeof o->rowsoft), TGL_DTYPE_BF16, 2, (size_t[]){ROWS, COLS});
    tgl_tensor trs2 = trs, trs3 = trs, trs4 = trs, tw = trow;
    trs2.data += ROWS * COLS * 2;
    trs3.data += 2 * ROWS * COLS * 2;
    trs4.data += 3 * ROWS * COLS * 2;
    tw.ndim = 1;
    tw.shape[0] = COLS;
    tw.strides[0] = 1;
    OK(tgl_softmax_t(b, &tm, 0, &trs));
    OK(tgl_log_softmax_t(b, &tm, 1, &trs2));
    OK(tgl_rmsnorm_t(b, &tm, &tw, &trs3, 1e-5f));
    OK(tgl_layernorm_t(b, &tm, &tw, NULL, &trs4, 1e-5f));
    OK(tgl_copy_dtoh(b, o->rowsoft, trs.data, sizeof o->rowsoft));
    tgl_tensor tmt = tgl_tensor_contiguous(fresh(b, sizeof o->mapt), TGL_DTYPE_F16, 2, (size_t[]){ROWS, COLS});
    OK(tgl_map_t(b, "select(a > b, a * 2, b - 1) + (a < 0)", (tgl_tensor[]){tm, trow}, 2, &tmt));
    OK(tgl_copy_dtoh(b, o->mapt, tmt.data, sizeof o->mapt));
    tgl_tensor trand = tgl_tensor_contiguous(fresh(b, sizeof o->rand), TGL_DTYPE_F32, 2, (size_t[]){COLS, ROWS});
    tgl_tensor tdrop = tm;
    tdrop.data = trand.data + ROWS * COLS * sizeof(float);
    trand.strides[0] = 1; /* written column by column */
    trand.strides[1] = COLS;
    OK(tgl_random(b, TGL_RANDOM_NORMAL, &trand, 0.5, 2.0, seed, 1u << 20));
    OK(tgl_dropout(b, &tm, &tdrop, 0.25, seed, 77));
    OK(tgl_copy_dtoh(b, o->rand, trand.data, sizeof o->rand));
    tgl_tensor ttri = tgl_tensor_contiguous(fresh(b, sizeof o->tri), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS}), ttri2 = ttri;
    ttri2.data += ROWS * COLS * sizeof(float);
    OK(tgl_triu(b, &tm, &ttri, 1));
    OK(tgl_tril(b, &tm, &ttri2, -1));
    OK(tgl_copy_dtoh(b, o->tri, ttri.data, sizeof o->tri));
    tgl_ptr moved = fresh(b, sizeof o->moved);
    tgl_tensor tflip = tgl_tensor_contiguous(moved, TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS}), troll = tflip;
    troll.data += ROWS * COLS * sizeof(float);
    tgl_tensor trep = tgl_tensor_contiguous(troll.data + ROWS * COLS * sizeof(float), TGL_DTYPE_F32, 2,
                                            (size_t[]){2 * ROWS, COLS});
    tgl_tensor tpad = tgl_tensor_contiguous(trep.data + 2 * ROWS * COLS * sizeof(float), TGL_DTYPE_F32, 2,
                                            (size_t[]){ROWS + 2, COLS + 2});
    OK(tgl_flip(b, &tm, (const size_t[]){1, 0}, 2, &tflip));
    OK(tgl_roll(b, &tm, (const int64_t[]){-3, 2}, 2, (const size_t[]){1, 0}, &troll));
    OK(tgl_repeat(b, &tm, (const size_t[]){2, 1}, 2, &trep));
    OK(tgl_pad(b, &tm, (const int64_t[]){1, 1, 1, 1}, 4, TGL_PAD_REFLECT, 0.0, &tpad));
    OK(tgl_copy_dtoh(b, o->moved, moved, sizeof o->moved));
    tgl_tensor tids = tgl_tensor_contiguous(upload(b, o->rowarg, ROWS * sizeof(int32_t)), TGL_DTYPE_I32, 1, (size_t[]){ROWS});
    tgl_tensor thot = tgl_tensor_contiguous(fresh(b, sizeof o->hot), TGL_DTYPE_BOOL, 2, (size_t[]){ROWS, COLS});
    OK(tgl_one_hot(b, &tids, &thot));
    OK(tgl_copy_dtoh(b, o->hot, thot.data, sizeof o->hot));
    tgl_tensor tidcol = tids, tcolumn = tgl_tensor_contiguous(fresh(b, sizeof o->picks), TGL_DTYPE_F32, 2, (size_t[]){ROWS, 1});
    tgl_tensor tsel = tgl_tensor_contiguous(tcolumn.data + ROWS * sizeof(float), TGL_DTYPE_F32, 2, (size_t[]){ROWS, ROWS});
    tidcol.ndim = 2;
    tidcol.shape[1] = 1;
    tidcol.strides[1] = 1;
    OK(tgl_gather(b, &tm, 1, &tidcol, &tcolumn));
    OK(tgl_index_select(b, &tm, 1, &tids, &tsel));
    OK(tgl_copy_dtoh(b, o->picks, tcolumn.data, sizeof o->picks));
    tgl_tensor tscat = tgl_tensor_contiguous(fresh(b, sizeof o->scattered), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    OK(tgl_fill_t(b, &tscat, 1.0));
    OK(tgl_scatter(b, &tm, 1, &tidcol, &tscat, TGL_SCATTER_ADD));
    OK(tgl_index_add(b, &tsel, 1, &tids, &tscat));
    OK(tgl_copy_dtoh(b, o->scattered, tscat.data, sizeof o->scattered));
    tgl_tensor tsorted = tgl_tensor_contiguous(fresh(b, sizeof o->sorted), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    tgl_tensor torder = tgl_tensor_contiguous(fresh(b, sizeof o->order), TGL_DTYPE_I32, 2, (size_t[]){ROWS, COLS});
    tgl_tensor ttop = tgl_tensor_contiguous(torder.data + ROWS * COLS * sizeof(int32_t), TGL_DTYPE_I32, 2,
                                            (size_t[]){2, COLS});
    OK(tgl_sort(b, &tm, 1, 1, &tsorted, &torder));
    OK(tgl_topk(b, &tm, 0, 2, 1, NULL, &ttop));
    OK(tgl_copy_dtoh(b, o->sorted, tsorted.data, sizeof o->sorted));
    OK(tgl_copy_dtoh(b, o->order, torder.data, sizeof o->order));
    tgl_tensor tsum = tgl_tensor_contiguous(fresh(b, sizeof o->scanned), TGL_DTYPE_F32, 2, (size_t[]){ROWS, COLS});
    tgl_tensor tmax = tgl_tensor_contiguous(tsum.data + ROWS * COLS * sizeof(float), TGL_DTYPE_F32, 2,
                                            (size_t[]){ROWS, COLS});
    tgl_tensor tat = tgl_tensor_contiguous(fresh(b, sizeof o->scan_at), TGL_DTYPE_I32, 2, (size_t[]){ROWS, COLS});
    tgl_tensor tprod = tmax, tmin = tmax, tat_min = tat;
    tprod.data += ROWS * COLS * sizeof(float);
    tmin.data += 2 * ROWS * COLS * sizeof(float);
    tat_min.data += ROWS * COLS * sizeof(int32_t);
    OK(tgl_cumsum(b, &tm, 0, &tsum));
    OK(tgl_cummax(b, &tm, 1, &tmax, &tat));
    OK(tgl_cumprod(b, &tm, 1, &tprod));
    OK(tgl_cummin(b, &tm, 1, &tmin, &tat_min));
    OK(tgl_copy_dtoh(b, o->scanned, tsum.data, sizeof o->scanned));
    OK(tgl_copy_dtoh(b, o->scan_at, tat.data, sizeof o->scan_at));
    tgl_tensor tpacked = tgl_tensor_contiguous(fresh(b, sizeof o->selected), TGL_DTYPE_F32, 1, (size_t[]){ROWS * COLS});
    tgl_tensor tnz = tgl_tensor_contiguous(fresh(b, sizeof o->nonzero), TGL_DTYPE_I32, 2, (size_t[]){ROWS * COLS, 2});
    tgl_tensor tcounts = tgl_tensor_contiguous(tnz.data + 2 * ROWS * COLS * sizeof(int32_t), TGL_DTYPE_I32, 1,
                                               (size_t[]){2});
    tgl_tensor tfound = tgl_tensor_contiguous(tcounts.data, TGL_DTYPE_I32, 0, NULL), tfound_nz = tfound;
    tfound_nz.data += sizeof(int32_t);
    OK(tgl_fill_t(b, &tpacked, 0.0));
    OK(tgl_fill_t(b, &tnz, 0.0));
    OK(tgl_fill_t(b, &tcounts, 0.0));
    OK(tgl_masked_select(b, &tm, &tmask, &tpacked, &tfound));
    OK(tgl_nonzero(b, &tmask, &tnz, &tfound_nz));
    OK(tgl_copy_dtoh(b, o->selected, tpacked.data, sizeof o->selected));
    OK(tgl_copy_dtoh(b, o->nonzero, tnz.data, sizeof o->nonzero));

    tgl_ptr h = fresh(b, N * 2), back = fresh(b, sizeof x);
    OK(tgl_cast_f32_f16(b, px, h, N));
    OK(tgl_cast_f16_f32(b, h, back, N));
    OK(tgl_copy_dtoh(b, o->half, h, sizeof o->half));
    OK(tgl_copy_dtod(b, u, back, sizeof x));
    OK(tgl_copy_dtoh(b, o->back, u, sizeof o->back));

    /* The program's own errors are part of the record too. */
    assert_int_equal(tgl_unary(b, (tgl_unary_op)999, px, t, N), TGL_ERR_INVALID_ARGUMENT);
    OK(tgl_free(b, t));
    assert_int_equal(tgl_unary(b, TGL_UNARY_EXP, t, u, N), TGL_ERR_INVALID_POINTER);
    OK(tgl_synchronize(b));
}

/* A new empty directory under /tmp. */
static void temp_dir(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/tgl-trace-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1200];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The one trace file in dir. */
static void trace_file(const char *dir, char *path, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, TGL__TRACE_SUFFIX)) {
            snprintf(path, size, "%s/%s", dir, e->d_name);
            found++;
        }
    if (d)
        closedir(d);
    assert_int_equal(found, 1);
}

static tgl_status replay(const char *path, tgl_backend_kind kind, int compare)
{
    tgl__replay_opts o = {.kind = kind, .compare = compare, .max_bytes = 64u << 20};
    return tgl__replay(path, &o);
}

/* The workload makes every call of the op registry at least once and successfully, so the
 * replay below round-trips each row's signature, capture and invoker: a row added without a
 * call here fails. */
/* Counts the successful calls of each registry row in the trace file at path. */
static void count_ok_calls(const char *path, unsigned ok[TGL__FN_COUNT])
{
    tgl__trace_reader r;
    static tgl__rcall rc;
    int done = 0;
    memset(ok, 0, TGL__FN_COUNT * sizeof ok[0]);
    assert_int_equal(tgl__reader_open(&r, path), TGL_OK);
    while (tgl__reader_next(&r, &rc, &done) == TGL_OK && !done)
        ok[rc.fn] += rc.status == TGL_OK;
    tgl__reader_close(&r);
}

static void every_row_recorded(const char *path)
{
    unsigned ok[TGL__FN_COUNT];
    count_ok_calls(path, ok);
    for (int fn = 0; fn < TGL__FN_COUNT; fn++)
        if (!ok[fn])
            fail_msg("%s: no successful call in the traced workload (tests/test_trace.c)", tgl__fn_name((tgl__fn)fn));
}

/* Records the workload on `kind` (checking the results equal an untraced run's, bit for bit)
 * and replays it on the CPU and GL backends with compare. */
static void record_and_replay(tgl_backend_kind kind)
{
    uint64_t seed = tgt_seed();
    static outputs plain, traced;
    tgl_backend *b = tgt_open(kind);
    workload(b, seed, &plain);
    tgl_close(b);

    char dir[64], path[1200];
    temp_dir(dir, sizeof dir);
    b = tgt_open(kind);
    tgl_ptr early = upload(b, (float[]){1, 2, 3}, 12); /* made before the trace starts */
    OK(tgl_trace_start(b, dir));
    assert_int_equal(tgl_trace_start(b, dir), TGL_ERR_INVALID_ARGUMENT);
    OK(tgl_unary(b, TGL_UNARY_SQUARE, early, early, 3));
    workload(b, seed, &traced);
    OK(tgl_trace_stop(b));
    assert_int_equal(tgl_trace_stop(b), TGL_ERR_INVALID_ARGUMENT);
    tgl_close(b);
    assert_memory_equal(&plain, &traced, sizeof plain);

    trace_file(dir, path, sizeof path);
    every_row_recorded(path);
    tgl_status st = replay(path, TGL_BACKEND_CPU, 1);
    assert_int_equal(st, TGL_OK);
    tgl_options o = {.kind = TGL_BACKEND_GL};
    if (!tgt_cpu_only() && tgl_open(&o, &b) == TGL_OK) { /* GL replay where a device exists */
        tgl_close(b);
        st = replay(path, TGL_BACKEND_GL, 1);
        if (st)
            fail_msg("GL replay: %s", tgl_last_error(NULL));
    }
    assert_int_equal(replay(dir, TGL_BACKEND_CPU, 0), TGL_OK); /* a directory, without compare */
    remove_dir(dir);
}

/* tgl_warmup makes every op whose registry row says WARM at least once, and none of the others:
 * an op added without a warm-up call fails here. Traced on the CPU backend, which runs the same
 * calls. */
static void test_warmup_covers_every_op(void **state)
{
    (void)state;
    char dir[64], path[1200];
    temp_dir(dir, sizeof dir);
    tgl_backend *b = tgt_open(TGL_BACKEND_CPU);
    OK(tgl_trace_start(b, dir));
    unsigned calls = 0;
    OK(tgl_warmup(b, &calls));
    OK(tgl_trace_stop(b));
    tgl_close(b);
    trace_file(dir, path, sizeof path);
    unsigned ok[TGL__FN_COUNT];
    count_ok_calls(path, ok);
    remove_dir(dir);
    for (int fn = 0; fn < TGL__FN_COUNT; fn++)
        if (tgl__fn_warmed((tgl__fn)fn) && !ok[fn])
            fail_msg("%s: tgl_warmup never calls it (src/core/prepare.c)", tgl__fn_name((tgl__fn)fn));
        else if (tgl__fn_op((tgl__fn)fn) != TGL__NO_OP && !tgl__fn_warmed((tgl__fn)fn) && ok[fn])
            fail_msg("%s: tgl_warmup calls it, but its registry row says NO_WARM", tgl__fn_name((tgl__fn)fn));
}

static void test_record_cpu_replay_both(void **state)
{
    (void)state;
    record_and_replay(TGL_BACKEND_CPU);
}

/* Snapshots are deduplicated by a 128-bit hash that is not collision-resistant: with every
 * content hashing alike, each match is checked byte for byte, so the trace keeps every distinct
 * content and replays without a false divergence (sharing the first record, it diverged). */
static void test_hash_collisions_kept_apart(void **state)
{
    (void)state;
    tgl__test_trace_weak_hash(1);
    char dir[64], path[1200];
    temp_dir(dir, sizeof dir);
    tgl_backend *b = tgt_open(TGL_BACKEND_CPU);
    OK(tgl_trace_start(b, dir));
    static outputs out;
    workload(b, tgt_seed(), &out);
    OK(tgl_trace_stop(b));
    tgl_close(b);
    tgl__test_trace_weak_hash(0);
    trace_file(dir, path, sizeof path);
    tgl_status st = replay(path, TGL_BACKEND_CPU, 1);
    if (st)
        fail_msg("replay: %s", tgl_last_error(NULL));
    remove_dir(dir);
}

static void test_record_gl_replay_both(void **state)
{
    (void)state;
    tgl_close(tgt_open(TGL_BACKEND_GL)); /* skips without a display */
    record_and_replay(TGL_BACKEND_GL);
}

/* ---- the file, read back for editing ---- */

typedef struct blob {
    uint8_t *data;
    size_t size;
} blob;

static blob slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    blob bl = {.size = (size_t)ftell(f)};
    rewind(f);
    bl.data = malloc(bl.size ? bl.size : 1);
    assert_non_null(bl.data);
    assert_int_equal(fread(bl.data, 1, bl.size, f), bl.size);
    fclose(f);
    return bl;
}

static void spill(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Byte offset of the k-th record (0-based) of `type` (0: any), or 0 when there is none. */
static size_t record_at(const blob *bl, uint32_t type, int k)
{
    size_t pos = 16 + tgl__le32(bl->data + 12);
    while (pos + 16 <= bl->size) {
        if ((!type || tgl__le32(bl->data + pos) == type) && k-- == 0)
            return pos;
        pos += 16 + (size_t)tgl__le64(bl->data + pos + 8);
    }
    return 0;
}

/* A small CPU trace: alloc x, y; x <- data; y = exp(x); read y back; free x; a rejected call
 * on the freed x. */
static void small_trace(char *dir, size_t dsize, char *path, size_t psize)
{
    temp_dir(dir, dsize);
    tgl_backend *b = tgt_open(TGL_BACKEND_CPU);
    OK(tgl_trace_start(b, dir));
    float x[8] = {0, 1, 2, 3, -1, -2, 0.5f, 7}, y[8];
    tgl_ptr px = upload(b, x, sizeof x), py = fresh(b, sizeof y);
    OK(tgl_unary(b, TGL_UNARY_EXP, px, py, 8));
    OK(tgl_copy_dtoh(b, y, py, sizeof y));
    OK(tgl_reduce(b, TGL_REDUCE_MAX, py, px, (size_t[]){2, 4}, 2, 1));
    OK(tgl_free(b, px));
    assert_int_equal(tgl_unary(b, TGL_UNARY_EXP, px, py, 8), TGL_ERR_INVALID_POINTER);
    tgl_close(b); /* ends the trace */
    trace_file(dir, path, psize);
}

/* Editing the snapshot of exp's output (the second distinct content) makes replay name
 * tgl_unary as the call that diverges. */
static void test_edited_snapshot_names_the_op(void **state)
{
    (void)state;
    char dir[64], path[1200];
    small_trace(dir, sizeof dir, path, sizeof path);
    assert_int_equal(replay(path, TGL_BACKEND_CPU, 1), TGL_OK);
    blob bl = slurp(path);
    size_t at = record_at(&bl, TGL__REC_DATA, 1);
    assert_true(at > 0);
    float v;
    memcpy(&v, bl.data + at + 32 + 4 * 3, 4); /* exp(3) */
    assert_true(fabsf(v - expf(3.0f)) < 1e-4f);
    v *= 1.01f;
    memcpy(bl.data + at + 32 + 4 * 3, &v, 4);
    spill(path, bl.data, bl.size);
    assert_int_equal(replay(path, TGL_BACKEND_CPU, 1), TGL_ERR_INTERNAL);
    const char *msg = tgl_last_error(NULL);
    tgt_expected("replay: %s", msg);
    assert_non_null(strstr(msg, "tgl_unary"));
    assert_non_null(strstr(msg, "diverges"));
    assert_int_equal(replay(path, TGL_BACKEND_CPU, 0), TGL_OK); /* without compare it just runs */
    free(bl.data);
    remove_dir(dir);
}

/* Writes bl with one change and replays it; the status must be one of the clean outcomes. */
static tgl_status replay_variant(const char *path, const blob *bl, size_t size)
{
    spill(path, bl->data, size);
    tgl_status st = replay(path, TGL_BACKEND_CPU, 1);
    if (st != TGL_OK && st != TGL_ERR_IO && st != TGL_ERR_INTERNAL)
        fail_msg("replay -> %s: %s", tgl_status_string(st), tgl_last_error(NULL));
    if (st)
        assert_true(strlen(tgl_last_error(NULL)) > 0);
    return st;
}

static void test_truncated_at_every_length(void **state)
{
    (void)state;
    char dir[64], path[1200];
    small_trace(dir, sizeof dir, path, sizeof path);
    blob bl = slurp(path);
    int ok = 0, io = 0;
    for (size_t n = 0; n < bl.size; n++) {
        tgl_status st = replay_variant(path, &bl, n);
        ok += st == TGL_OK;
        io += st == TGL_ERR_IO;
    }
    printf("%zu truncations: %d replay a shorter run, %d are errors\n", bl.size, ok, io);
    assert_true(io > 0);
    free(bl.data);
    remove_dir(dir);
}

static void test_flipped_bits(void **state)
{
    (void)state;
    char dir[64], path[1200];
    small_trace(dir, sizeof dir, path, sizeof path);
    blob bl = slurp(path);
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0xf11b);
    int outcome[3] = {0};
    for (size_t pos = 0; pos < bl.size; pos++) {
        uint8_t bit = (uint8_t)(1u << tgt_below(&r, 8));
        bl.data[pos] ^= bit;
        tgl_status st = replay_variant(path, &bl, bl.size);
        outcome[st == TGL_OK ? 0 : st == TGL_ERR_IO ? 1 : 2]++;
        bl.data[pos] ^= bit;
    }
    printf("%zu flipped bits: %d replay, %d damaged-trace errors, %d divergences\n", bl.size, outcome[0], outcome[1],
           outcome[2]);
    assert_true(outcome[1] > 0 && outcome[2] > 0);
    free(bl.data);
    remove_dir(dir);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* Checks the replay fails with TGL_ERR_IO and a message containing `want`. */
static void expect_io(const char *path, const blob *bl, const char *want)
{
    tgl_status st = replay_variant(path, bl, bl->size);
    const char *msg = tgl_last_error(NULL);
    tgt_expected("%s", msg);
    assert_int_equal(st, TGL_ERR_IO);
    assert_non_null(strstr(msg, want));
}

/* A trace that frees an allocation, then allocates and frees 600 times (under the old 8-bit
 * generation, the slot came round to the stale pointer's value and a copy from it read the new
 * allocation) and copies from the stale pointer: the library refuses it (no handle repeats), the
 * trace records the refusal against the freed allocation, and replay agrees (it once copied a
 * live allocation's bytes into a placeholder host buffer for such a pointer). */
static void test_stale_pointer_after_reuse(void **state)
{
    (void)state;
    char dir[64], path[1200];
    temp_dir(dir, sizeof dir);
    tgl_backend *b = tgt_open(TGL_BACKEND_CPU);
    OK(tgl_trace_start(b, dir));
    tgl_ptr stale = fresh(b, 16), q, big;
    OK(tgl_free(b, stale));
    for (int i = 0; i < 600; i++) {
        OK(tgl_alloc(b, 16, &q));
        assert_true(q != stale);
        OK(tgl_free(b, q));
    }
    OK(tgl_alloc(b, 4096, &big));
    static uint8_t host[4096];
    assert_int_equal(tgl_copy_dtoh(b, host, stale, 16), TGL_ERR_INVALID_POINTER);
    OK(tgl_free(b, big));
    OK(tgl_trace_stop(b));
    tgl_close(b);
    trace_file(dir, path, sizeof path);
    blob bl = slurp(path);
    /* the copy to the host names the freed allocation (0): record header 16, fn, status,
     * count 12, then 'H' present (2), 'i' tag (2), the id */
    size_t at = 0;
    for (int k = 0; record_at(&bl, TGL__REC_CALL, k); k++) {
        size_t r = record_at(&bl, TGL__REC_CALL, k);
        if (tgl__le32(bl.data + r + 16) == TGL__FN_COPY_DTOH)
            at = r;
    }
    assert_true(at != 0);
    assert_int_equal((int32_t)tgl__le32(bl.data + at + 20), TGL_ERR_INVALID_POINTER);
    assert_int_equal(bl.data[at + 31], TGL__PTR_ALLOC);
    assert_int_equal(tgl__le32(bl.data + at + 32), 0);
    free(bl.data);
    tgl_status rs = replay(path, TGL_BACKEND_CPU, 1);
    if (rs)
        fail_msg("replay: %s", tgl_last_error(NULL));
    remove_dir(dir);
}

static void test_hostile_fields(void **state)
{
    (void)state;
    char dir[64], path[1200];
    small_trace(dir, sizeof dir, path, sizeof path);
    blob orig = slurp(path), bl = {malloc(orig.size), orig.size};
    assert_non_null(bl.data);
#define RESET() memcpy(bl.data, orig.data, orig.size)

    RESET();
    put32(bl.data + 8, 2);
    expect_io(path, &bl, "version 2");
    RESET();
    bl.data[0] = 'X';
    expect_io(path, &bl, "not a tensorgl trace");
    RESET();
    put32(bl.data + 12, 0xfffffff0u);
    expect_io(path, &bl, "description");

    size_t first = record_at(&orig, 0, 0), call = record_at(&orig, TGL__REC_CALL, 0);
    size_t data = record_at(&orig, TGL__REC_DATA, 0);
    RESET();
    put64(bl.data + first + 8, (uint64_t)1 << 62); /* a record claiming 4 EiB */
    expect_io(path, &bl, "truncated");
    RESET();
    put32(bl.data + first, 77);
    expect_io(path, &bl, "record type 77");
    RESET();
    put64(bl.data + data + 8, 3); /* data shorter than its hash */
    expect_io(path, &bl, "shorter than its 16-byte hash");
    RESET();
    put32(bl.data + call + 16, 4000); /* call number */
    expect_io(path, &bl, "not a traced function");
    RESET();
    put32(bl.data + call + 24, 9); /* argument count of tgl_alloc */
    expect_io(path, &bl, "takes 2 arguments");
    RESET();
    put64(bl.data + call + 16 + 12 + 1, (uint64_t)1 << 60); /* tgl_alloc of 2^60 bytes */
    expect_io(path, &bl, "limit");
    RESET();
    put64(bl.data + call + 16 + 12 + 1, (uint64_t)1 << 20); /* bigger than its snapshots */
    expect_io(path, &bl, "bytes where");

    /* The reduce's shape count (its S argument) made huge: the values no longer fit. */
    size_t reduce = record_at(&orig, TGL__REC_CALL, 5);
    assert_int_equal(tgl__le32(orig.data + reduce + 16), TGL__FN_REDUCE);
    size_t s_at = reduce + 16 + 12 + 9 + 14 + 14; /* e(9) i(14+4) o(14) */
    s_at += 4;
    assert_int_equal(orig.data[s_at], 'S');
    RESET();
    put64(bl.data + s_at + 2, (uint64_t)1 << 60);
    expect_io(path, &bl, "tgl_reduce");

    /* The last call used a freed allocation and failed; claiming it succeeded is refused. */
    size_t last = 0, k = 0, at;
    while ((at = record_at(&orig, TGL__REC_CALL, (int)k++)))
        last = at;
    assert_int_equal(tgl__le32(orig.data + last + 16), TGL__FN_UNARY);
    RESET();
    put32(bl.data + last + 20, 0);
    expect_io(path, &bl, "freed by call");
    /* ... and a snapshot pointing past the data records read so far. */
    RESET();
    put32(bl.data + last + 16 + 12 + 9 + 14, 999);
    expect_io(path, &bl, "only");

    /* A file that ends right after the header is an empty, valid trace. */
    spill(path, orig.data, first);
    assert_int_equal(replay(path, TGL_BACKEND_CPU, 1), TGL_OK);
    free(orig.data);
    free(bl.data);
    remove_dir(dir);
}

static void test_errors(void **state)
{
    (void)state;
    assert_int_equal(tgl_trace_start(NULL, "/tmp"), TGL_ERR_INVALID_ARGUMENT);
    assert_int_equal(tgl_trace_stop(NULL), TGL_ERR_INVALID_ARGUMENT);
    tgl_backend *b = tgt_open(TGL_BACKEND_CPU);
    assert_int_equal(tgl_trace_start(b, NULL), TGL_ERR_INVALID_ARGUMENT);
    assert_int_equal(tgl_trace_start(b, "/proc/no-such-dir/x"), TGL_ERR_IO);
    tgt_expected("%s", tgl_last_error(b));
    tgl_close(b);
    assert_int_equal(replay("/tmp/no-such-trace.tgltrace", TGL_BACKEND_CPU, 1), TGL_ERR_IO);
    char dir[64];
    temp_dir(dir, sizeof dir);
    assert_int_equal(replay(dir, TGL_BACKEND_CPU, 1), TGL_ERR_IO); /* holds no trace */
    assert_non_null(strstr(tgl_last_error(NULL), "no *.tgltrace"));
    /* A FIFO named like a trace: refused at once (its open once waited for a writer forever;
     * alarm() turns a hang into a failure). */
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo" TGL__TRACE_SUFFIX, dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(60);
    assert_int_equal(replay(fifo, TGL_BACKEND_CPU, 1), TGL_ERR_IO);
    assert_non_null(strstr(tgl_last_error(NULL), "not a regular file"));
    assert_int_equal(replay(dir, TGL_BACKEND_CPU, 1), TGL_ERR_IO); /* the directory's only "trace" */
    alarm(0);
    assert_int_equal(unlink(fifo), 0);
    /* TGL_TRACE=DIR from tgl_open. */
    tgt_setenv("TGL_TRACE", dir);
    b = tgt_open(TGL_BACKEND_CPU);
    tgl_ptr p = fresh(b, 64);
    OK(tgl_fill(b, p, 2.0f, 16));
    tgl_close(b);
    tgt_env_restore();
    char path[1200];
    trace_file(dir, path, sizeof path);
    assert_int_equal(replay(dir, TGL_BACKEND_CPU, 1), TGL_OK);
    remove_dir(dir);
}

/* The profiler counts calls and errors per kind and prints one row per kind used. */
static void profile_on(tgl_backend_kind kind)
{
    tgl_backend *b = tgt_open(kind);
    assert_int_equal(tgl_profile_report(b, stdout), TGL_ERR_INVALID_ARGUMENT); /* not started */
    OK(tgl_profile_start(b));
    tgl_ptr x = fresh(b, 64 * 64 * sizeof(float)), y = fresh(b, 64 * 64 * sizeof(float));
    OK(tgl_fill(b, x, 0.5f, 64 * 64));
    for (int i = 0; i < 3; i++)
        OK(tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 64, 64, 64, 1.0f, x, 64, x, 64, 0.0f, y, 64));
    assert_int_equal(tgl_unary(b, (tgl_unary_op)999, x, y, 8), TGL_ERR_INVALID_ARGUMENT);
    FILE *f = tmpfile();
    assert_non_null(f);
    OK(tgl_profile_report(b, f));
    char text[4096] = {0};
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    printf("%.*s", (int)n, text);
    const char *row = strstr(text, "\ntgl_gemm ");
    assert_non_null(row);
    unsigned calls = 0, errors = 1;
    double total = 0;
    assert_int_equal(sscanf(row, " tgl_gemm %u %u %lf", &calls, &errors, &total), 3);
    assert_int_equal(calls, 3);
    assert_int_equal(errors, 0);
    assert_true(total > 0.0);
    row = strstr(text, "\ntgl_unary ");
    assert_non_null(row);
    assert_int_equal(sscanf(row, " tgl_unary %u %u", &calls, &errors), 2);
    assert_int_equal(errors, 1);
    assert_null(strstr(text, "tgl_softmax"));
    OK(tgl_profile_stop(b));
    assert_int_equal(tgl_profile_report(b, stdout), TGL_ERR_INVALID_ARGUMENT);
    tgl_close(b);
}

static void test_profile_cpu(void **state)
{
    (void)state;
    profile_on(TGL_BACKEND_CPU);
}

static void test_profile_gl(void **state)
{
    (void)state;
    tgl_close(tgt_open(TGL_BACKEND_GL));
    profile_on(TGL_BACKEND_GL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_cpu_replay_both),
        cmocka_unit_test(test_warmup_covers_every_op),
        cmocka_unit_test(test_record_gl_replay_both),
        cmocka_unit_test(test_hash_collisions_kept_apart),
        cmocka_unit_test(test_edited_snapshot_names_the_op),
        cmocka_unit_test(test_truncated_at_every_length),
        cmocka_unit_test(test_flipped_bits),
        cmocka_unit_test(test_hostile_fields),
        cmocka_unit_test(test_stale_pointer_after_reuse),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_profile_cpu),
        cmocka_unit_test(test_profile_gl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
