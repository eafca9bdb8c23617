/* The CPU backend's op functions, one file per family. */
#ifndef TGL_CPU_OPS_H
#define TGL_CPU_OPS_H

#include "../core/internal.h"

/* NULL for an absent operand (an optional weight): NULL + 0 is undefined behaviour in C (clang's
 * UBSan reports it; the API fuzzer found it). */
static inline void *tgl_cpu_at(tgl__view v)
{
    return v.buf ? (char *)v.buf + v.offset : NULL;
}

/* One element of tgl_gemm_fused's epilogue (also tgl_matvec_t_fused's): alpha sum + beta old +
 * bias in double, then the activation and the gate in f32 steps, as a kernel stores them; old is
 * the element's value on entry, bias NULL or the element's bias. */
float tgl_cpu_epilogue(const tgl__gemm *g, double sum, float old, const float *bias);

tgl_status tgl_cpu_reduce(tgl_backend *b, tgl_reduce_op op, tgl__view in, tgl__view out, size_t outer,
                          size_t len, size_t inner);
tgl_status tgl_cpu_arg_reduce(tgl_backend *b, int want_max, tgl__view in, tgl__view out, size_t outer,
                              size_t len, size_t inner);
tgl_status tgl_cpu_rows(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                        size_t rows, size_t cols, float eps);
tgl_status tgl_cpu_fill(tgl_backend *b, tgl__view out, float value, size_t n);
tgl_status tgl_cpu_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n);
tgl_status tgl_cpu_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n);
tgl_status tgl_cpu_rope(tgl_backend *b, tgl__view in, tgl__view out, size_t rows, size_t seq, size_t heads,
                        size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode);
tgl_status tgl_cpu_rope_t(tgl_backend *b, const tgl__rope_t *r);
tgl_status tgl_cpu_gather_rows(tgl_backend *b, tgl__view table, tgl__view ids, tgl__view out, size_t table_rows,
                               size_t cols, size_t n_ids, size_t *bad_pos, int32_t *bad_id);
tgl_status tgl_cpu_strided(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s);
tgl_status tgl_cpu_map(tgl_backend *b, const tgl_expr *e, const tgl__view *inputs, size_t n_inputs, tgl__view out,
                       size_t n);
/* tgl_map_t per element (cpu_map.c): evaluates e's expression (its node types e->expr_int) on
 * the inputs' elements x[k] and writes out's element o. */
void tgl_cpu_map_element(const tgl__tew *e, const uint8_t *const *x, uint8_t *o);
tgl_status tgl_cpu_gemm(tgl_backend *b, const tgl__gemm *g);
tgl_status tgl_cpu_matvec(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols);
tgl_status tgl_cpu_attention(tgl_backend *b, const tgl__attention *a);
tgl_status tgl_cpu_conv2d(tgl_backend *b, const tgl__conv2d *c);
tgl_status tgl_cpu_conv_transpose2d(tgl_backend *b, const tgl__conv_transpose2d *c);
tgl_status tgl_cpu_pool2d(tgl_backend *b, const tgl__pool2d *p);
tgl_status tgl_cpu_tensor_ewise(tgl_backend *b, const tgl__tew *e);
tgl_status tgl_cpu_gather(tgl_backend *b, const tgl__tew *check, const tgl__tew *e, uint64_t *bad_pos,
                          int32_t *bad_value);
/* tgl_random's and tgl_dropout's element at out's row-major index `index`; x is dropout's input
 * element (cpu_random.c). st keeps the block of four last drawn; zero it before a call's walk. */
typedef struct tgl_cpu_random_state {
    int drawn;
    uint64_t block;
    uint32_t words[4];
} tgl_cpu_random_state;
void tgl_cpu_random_element(tgl_cpu_random_state *st, const tgl__tew *e, uint64_t index, const uint8_t *x,
                            uint8_t *o);
tgl_status tgl_cpu_reduce_t(tgl_backend *b, const tgl__rdt *r);
tgl_status tgl_cpu_compact(tgl_backend *b, const tgl__compact *c);
/* The first index of check's i32 view outside [0, check->value) (gather's and scatter's check). */
tgl_status tgl_cpu_index_check(tgl_backend *b, const tgl__tew *check, uint64_t *bad_pos, int32_t *bad_value);
tgl_status tgl_cpu_sort(tgl_backend *b, const tgl__sort *s);
uint64_t tgl_cpu_sort_temp_bytes(tgl_backend *b, const tgl__sort *s);
tgl_status tgl_cpu_scatter(tgl_backend *b, const tgl__tew *check, const tgl__scatter *s, uint64_t *bad_pos,
                           int32_t *bad_value);
tgl_status tgl_cpu_interpolate(tgl_backend *b, const tgl__interpolate *p);
tgl_status tgl_cpu_adaptive_pool2d(tgl_backend *b, const tgl__pool2d *p);
tgl_status tgl_cpu_matvec_t(tgl_backend *b, const tgl__matvec_t *m);
tgl_status tgl_cpu_gather_rows_t(tgl_backend *b, const tgl__tew *check, const tgl__gather_w *g, uint64_t *bad_pos,
                                 int32_t *bad_value);
tgl_status tgl_cpu_quantize(tgl_backend *b, const tgl__quant *q);
/* One q8_0 or q4_0 block at blk decoded into out (cpu_quant.c). */
void tgl_cpu_decode_block(tgl_dtype dt, const uint8_t *blk, float out[32]);

#endif
