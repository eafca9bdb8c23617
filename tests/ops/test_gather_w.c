/* tgl_gather_rows_t, the embedding lookup from weight tables:
 * - every weight format (f32, f16, bf16, q8_0, q4_0) at awkward shapes (1 row, primes, block
 *   rows of 1, 3 and 5 blocks), ids with duplicates, the first and the last row, strided and
 *   reversed ids, out transposed or gapped with guard values around it: the CPU's rows equal the
 *   whole table decoded by tgl_dequantize / tgl_copy and picked on the host, and GL's equal the
 *   CPU's bit for bit; the same on GL under a 4 KiB SSBO limit (table windows, runs of columns
 *   and output slabs; a block of a transposed out that reaches past the limit is refused);
 * - an id outside [0, rows) (negative, rows, INT32_MAX) fails naming its position, out intact;
 * - refusals: dims, dtypes, shapes, block rows not whole blocks, overlap. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x6A7E);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static const tgl_dtype formats[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_Q8_0, TGL_DTYPE_Q4_0};

static int is_block(tgl_dtype dt)
{
    return dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0;
}

/* A random table of dtype dt on the CPU backend, as bytes (quantized or converted from random
 * floats by the CPU backend); *bytes its size. */
static uint8_t *make_table(pair *p, tgl_dtype dt, size_t rows, size_t cols, size_t *bytes)
{
    size_t n = rows * cols;
    float *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = tgt_uniform(&p->rng, -3.0f, 3.0f);
    tgl_tensor out = tgl_tensor_contiguous(0, dt, 2, (size_t[]){rows, cols});
    *bytes = tgl_tensor_bytes(&out);
    tgl_ptr src = tgt_upload(p->cpu, f, n, 0), dst;
    assert_int_equal(tgl_alloc(p->cpu, *bytes, &dst), TGL_OK);
    out.data = dst;
    tgl_tensor in = tgl_tensor_contiguous(src, TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
    assert_int_equal(is_block(dt) ? tgl_quantize(p->cpu, &in, &out) : tgl_copy(p->cpu, &out, &in), TGL_OK);
    uint8_t *t = malloc(*bytes);
    assert_int_equal(tgl_copy_dtoh(p->cpu, t, dst, *bytes), TGL_OK);
    tgl_free(p->cpu, src);
    tgl_free(p->cpu, dst);
    free(f);
    return t;
}

/* The whole table decoded to f32 on the CPU backend (tgl_dequantize or tgl_copy). */
static float *decode_all(pair *p, tgl_dtype dt, const uint8_t *t, size_t bytes, size_t rows, size_t cols)
{
    tgl_ptr src, dst;
    assert_int_equal(tgl_alloc(p->cpu, bytes, &src), TGL_OK);
    assert_int_equal(tgl_copy_htod(p->cpu, src, t, bytes), TGL_OK);
    assert_int_equal(tgl_alloc(p->cpu, rows * cols * 4, &dst), TGL_OK);
    tgl_tensor in = tgl_tensor_contiguous(src, dt, 2, (size_t[]){rows, cols});
    tgl_tensor out = tgl_tensor_contiguous(dst, TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
    assert_int_equal(is_block(dt) ? tgl_dequantize(p->cpu, &in, &out) : tgl_copy(p->cpu, &out, &in), TGL_OK);
    float *f = malloc(rows * cols * 4);
    assert_int_equal(tgl_copy_dtoh(p->cpu, f, dst, rows * cols * 4), TGL_OK);
    tgl_free(p->cpu, src);
    tgl_free(p->cpu, dst);
    return f;
}

enum { GUARD = 5 };
#define GUARD_VALUE 12345.0f

/* Runs the gather on b: ids stored with stride ids_stride (negative: reversed), out written
 * transposed (out_t) or with a gap of 3 floats after each row; the result into got[n][cols]. */
static tgl_status gather(tgl_backend *b, tgl_dtype dt, const uint8_t *t, size_t bytes, size_t rows, size_t cols,
                         const int32_t *ids, size_t n, int ids_stride, int out_t, float *got)
{
    tgl_ptr dt_buf, di, dy;
    assert_int_equal(tgl_alloc(b, bytes + 64, &dt_buf), TGL_OK);
    assert_int_equal(tgl_copy_htod(b, dt_buf + 32, t, bytes), TGL_OK);
    size_t as = (size_t)abs(ids_stride), ni = (n - 1) * as + 1;
    int32_t *raw = calloc(ni, sizeof *raw);
    for (size_t k = 0; k < n; k++)
        raw[ids_stride > 0 ? k * as : (n - 1 - k) * as] = ids[k];
    di = tgt_upload(b, (const float *)(const void *)raw, ni, 0);
    size_t row_len = out_t ? n : cols + 3, lines = out_t ? cols : n, ny = 2 * GUARD + lines * row_len;
    float *y = malloc(ny * sizeof *y);
    for (size_t i = 0; i < ny; i++)
        y[i] = GUARD_VALUE;
    dy = tgt_upload(b, y, ny, 0);
    tgl_tensor table = tgl_tensor_contiguous(dt_buf + 32, dt, 2, (size_t[]){rows, cols});
    tgl_tensor ti = {.data = di + (ids_stride > 0 ? 0 : (n - 1) * as * 4), .dtype = TGL_DTYPE_I32, .ndim = 1,
                     .shape = {n}, .strides = {ids_stride}};
    tgl_tensor to = {.data = dy + GUARD * 4, .dtype = TGL_DTYPE_F32, .ndim = 2, .shape = {n, cols},
                     .strides = {out_t ? 1 : (int64_t)(cols + 3), out_t ? (int64_t)n : 1}};
    tgl_status st = tgl_gather_rows_t(b, &table, &ti, &to);
    float *back = malloc(ny * sizeof *back);
    assert_int_equal(tgl_copy_dtoh(b, back, dy, ny * 4), TGL_OK);
    for (size_t k = 0; k < n; k++)
        for (size_t c = 0; c < cols; c++)
            got[k * cols + c] = back[GUARD + (out_t ? c * n + k : k * (cols + 3) + c)];
    /* the guards and the gaps keep their value; a refused call leaves everything */
    for (size_t i = 0; i < ny; i++) {
        size_t j = i - GUARD;
        int inside = i >= GUARD && j < lines * row_len && (out_t || j % row_len < cols);
        if ((!inside || st) && back[i] != GUARD_VALUE)
            fail_msg("float %zu of the output buffer changed (%g)%s", i, (double)back[i], st ? " by a refused call" : "");
    }
    tgl_free(b, dt_buf);
    tgl_free(b, di);
    tgl_free(b, dy);
    free(raw);
    free(y);
    free(back);
    return st;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One case on both backends: the CPU against the decoded table, GL against the CPU. */
static void check_case(pair *p, tgl_backend *gl, tgl_dtype dt, size_t rows, size_t cols, size_t n, int plain_out)
{
    size_t bytes;
    uint8_t *t = make_table(p, dt, rows, cols, &bytes);
    float *all = decode_all(p, dt, t, bytes, rows, cols);
    int32_t *ids = malloc(n * sizeof *ids);
    for (size_t k = 0; k < n; k++)
        ids[k] = k == 0 ? 0 : k == 1 ? (int32_t)rows - 1 : (int32_t)tgt_below(&p->rng, rows);
    int stride = (int)tgt_below(&p->rng, 3) == 0 ? -2 : 1 + (int)tgt_below(&p->rng, 2);
    int out_t = !plain_out && (int)tgt_below(&p->rng, 2);
    float *cpu = malloc(n * cols * 4), *g = malloc(n * cols * 4);
    assert_int_equal(gather(p->cpu, dt, t, bytes, rows, cols, ids, n, stride, out_t, cpu), TGL_OK);
    for (size_t k = 0; k < n; k++)
        if (memcmp(cpu + k * cols, all + (size_t)ids[k] * cols, cols * 4))
            fail_msg("cpu, %s %zu x %zu: row %zu (id %d) differs from the decoded table", tgl_dtype_name(dt), rows, cols,
                     k, ids[k]);
    if (gl) {
        tgl_status st = gather(gl, dt, t, bytes, rows, cols, ids, n, stride, out_t, g);
        if (st)
            fail_msg("gl: %s: %s", tgl_status_string(st), tgl_last_error(gl));
        for (size_t i = 0; i < n * cols; i++)
            if (bits(g[i]) != bits(cpu[i]))
                fail_msg("gl, %s %zu x %zu, %zu ids (stride %d%s): element (%zu, %zu) %g, cpu %g", tgl_dtype_name(dt),
                         rows, cols, n, stride, out_t ? ", out transposed" : "", i / cols, i % cols, (double)g[i],
                         (double)cpu[i]);
    }
    free(t);
    free(all);
    free(ids);
    free(cpu);
    free(g);
}

static void test_formats(void **state)
{
    pair *p = *state;
    static const size_t rows[] = {1, 7, 33};
    static const size_t float_cols[] = {1, 13, 130}, block_cols[] = {32, 96, 160};
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
        for (size_t r = 0; r < 3; r++)
            for (size_t c = 0; c < 3; c++)
                if (tgt_pick(9 * f + 3 * r + c))
                    check_case(p, p->gl, formats[f], rows[r], is_block(formats[f]) ? block_cols[c] : float_cols[c],
                               2 + tgt_below(&p->rng, 9), 0);
}

static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++)
        for (int rep = 0; rep < 2; rep++) /* a transposed out's block (40 rows x 32) is past the limit */
            check_case(p, gl, formats[f], 61, is_block(formats[f]) ? 96 : 100, 40, is_block(formats[f]));
    tgl_close(gl);
}

static void test_bad_ids(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const int32_t bad[3] = {-1, 7, INT32_MAX};
    for (int k = 0; k < 2 && bs[k]; k++)
        for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
            size_t bytes, cols = is_block(formats[f]) ? 32 : 5;
            uint8_t *t = make_table(p, formats[f], 7, cols, &bytes);
            float got[4 * 32];
            for (int i = 0; i < 3; i++) {
                int32_t ids[4] = {1, 6, bad[i], 0};
                tgt_expected_begin();
                tgl_status st = gather(bs[k], formats[f], t, bytes, 7, cols, ids, 4, 1, 0, got);
                tgt_expected_end();
                if (st != TGL_ERR_INVALID_ARGUMENT || !strstr(tgl_last_error(bs[k]), "[2]"))
                    fail_msg("%s, %s, id %d: %s (%s)", k ? "gl" : "cpu", tgl_dtype_name(formats[f]), bad[i],
                             tgl_status_string(st), tgl_last_error(bs[k]));
            }
            free(t);
        }
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        tgl_backend *b = bs[k];
        tgl_ptr tb, ib, ob;
        assert_int_equal(tgl_alloc(b, 4096, &tb), TGL_OK);
        assert_int_equal(tgl_alloc(b, 64, &ib), TGL_OK);
        assert_int_equal(tgl_alloc(b, 4096, &ob), TGL_OK);
        assert_int_equal(tgl_fill(b, ib, 0.0f, 16), TGL_OK);
        tgl_tensor table = tgl_tensor_contiguous(tb, TGL_DTYPE_Q8_0, 2, (size_t[]){4, 64});
        tgl_tensor ids = tgl_tensor_contiguous(ib, TGL_DTYPE_I32, 1, (size_t[]){3});
        tgl_tensor out = tgl_tensor_contiguous(ob, TGL_DTYPE_F32, 2, (size_t[]){3, 64});
        assert_int_equal(tgl_gather_rows_t(b, &table, &ids, &out), TGL_OK);
        tgl_tensor t2 = table, i2 = ids, o2 = out;
        t2.shape[1] = o2.shape[1] = 48, t2.strides[0] = 48, o2.strides[0] = 48; /* not whole blocks */
        assert_int_equal(tgl_gather_rows_t(b, &t2, &ids, &o2), TGL_ERR_INVALID_ARGUMENT);
        o2 = out;
        o2.shape[0] = 2; /* n disagrees */
        assert_int_equal(tgl_gather_rows_t(b, &table, &ids, &o2), TGL_ERR_INVALID_ARGUMENT);
        i2.dtype = TGL_DTYPE_F32;
        assert_int_equal(tgl_gather_rows_t(b, &table, &i2, &out), TGL_ERR_UNSUPPORTED);
        o2 = out;
        o2.dtype = TGL_DTYPE_F16;
        assert_int_equal(tgl_gather_rows_t(b, &table, &ids, &o2), TGL_ERR_UNSUPPORTED);
        t2 = table;
        t2.ndim = 3, t2.shape[2] = 1, t2.strides[2] = 1;
        assert_int_equal(tgl_gather_rows_t(b, &t2, &ids, &out), TGL_ERR_INVALID_ARGUMENT);
        o2 = out;
        o2.data = tb; /* out over the table */
        assert_int_equal(tgl_gather_rows_t(b, &table, &ids, &o2), TGL_ERR_INVALID_ARGUMENT);
        assert_int_equal(tgl_gather_rows_t(b, NULL, &ids, &out), TGL_ERR_INVALID_ARGUMENT);
        ids.shape[0] = 0, out.shape[0] = 0; /* nothing to do */
        assert_int_equal(tgl_gather_rows_t(b, &table, &ids, &out), TGL_OK);
        tgl_free(b, tb);
        tgl_free(b, ib);
        tgl_free(b, ob);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_bad_ids),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
