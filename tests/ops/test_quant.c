/* The weight formats: tgl_quantize / tgl_dequantize and tgl_matvec_t.
 * - The CPU backend's q8_0 / q4_0 bytes against this file's own transcription of ggml's
 *   reference quantizers (quantize_row_q8_0_ref, quantize_row_q4_0_ref), bit for bit, on random
 *   blocks and on blocks built to hit the rules' corners (ties for the largest magnitude, values
 *   on rounding boundaries, all zeros, subnormal scales); decoding exact.
 * - Round trips within ggml's published bound (tests/test-quantize-fns.cpp: on 0.1 + 2 cos(i),
 *   sqrt(sum of squared errors) / n at most 0.002) and per element within the block's step.
 * - GL against the CPU bit for bit, quantize (but for the quants of blocks whose binary16 scale
 *   is 0, whose values are 0 all the same) and dequantize; strided float sides, gapped and
 *   2-byte-aligned block rows, guard bytes around both.
 * - tgl_matvec_t, every weight format, n rows of x 1..9, awkward rows and cols, strided and
 *   reversed x and y, poisoned y with guards: GL against the CPU (NMSE 1e-7); slabs under a
 *   small SSBO limit; f16 / bf16 conversions equal tgl_copy's; the refusals, buffers intact.
 * - tgl_matvec_t_fused likewise with random epilogues (GL against the CPU, the CPU against its
 *   unfused chain), prompts in slabs, cols 0, its refusals. */
#include "testing.h"
#include "cpu/cpu_half.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x9A47);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static size_t block_size(tgl_dtype dt)
{
    return dt == TGL_DTYPE_Q8_0 ? 34 : 18;
}

static float from_half(const uint8_t *p)
{
    uint32_t bits = tgl_f16_to_f32_bits((uint16_t)(p[0] | (p[1] << 8)));
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return tgl_f32_to_f16_bits(bits);
}

/* ggml's reference quantizers as written there: the scale from the largest magnitude in f32,
 * its reciprocal from the unrounded scale, d stored as binary16. */
static void reference_block(tgl_dtype dt, const float *x, uint8_t *out)
{
    float d;
    if (dt == TGL_DTYPE_Q8_0) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++)
            amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
        d = amax / 127;
    } else {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 32; j++)
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        d = max / -8;
    }
    const float id = d ? 1.0f / d : 0.0f;
    uint16_t h = to_half(d);
    out[0] = (uint8_t)h;
    out[1] = (uint8_t)(h >> 8);
    for (int j = 0; j < (dt == TGL_DTYPE_Q8_0 ? 32 : 16); j++) {
        if (dt == TGL_DTYPE_Q8_0) {
            out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
        } else {
            int lo = (int)(int8_t)(x[j] * id + 8.5f), hi = (int)(int8_t)(x[j + 16] * id + 8.5f);
            out[2 + j] = (uint8_t)((lo < 15 ? lo : 15) | ((hi < 15 ? hi : 15) << 4));
        }
    }
}

static void reference_decode(tgl_dtype dt, const uint8_t *blk, float *x)
{
    float d = from_half(blk);
    for (int j = 0; j < 32; j++)
        x[j] = dt == TGL_DTYPE_Q8_0 ? (float)(int8_t)blk[2 + j] * d
                                    : (float)((j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4) - 8) * d;
}

/* Block k of `blocks` random blocks: mostly uniform values of a random magnitude, some built
 * for a corner of the rules. */
static void corner_block(tgt_rng *r, tgl_dtype dt, size_t k, float *x)
{
    float scale = powf(2.0f, (float)tgt_below(r, 40) - 20.0f);
    for (int j = 0; j < 32; j++)
        x[j] = tgt_uniform(r, -1, 1) * scale;
    switch (k % 8) {
    case 1: /* ties for the largest magnitude: the first one sets q4_0's sign */
        x[tgt_below(r, 16)] = scale;
        x[16 + tgt_below(r, 16)] = -scale;
        break;
    case 2: /* values on the rounding boundaries of their step */
        x[0] = dt == TGL_DTYPE_Q8_0 ? 127.0f : -8.0f;
        for (int j = 1; j < 32; j++)
            x[j] = (float)((int)tgt_below(r, 14) - 7) + 0.5f;
        break;
    case 3: memset(x, 0, 32 * sizeof *x); break;           /* d = 0 */
    case 4: for (int j = 0; j < 32; j++) x[j] *= 1e-30f; break; /* the scale a subnormal half, or 0 */
    case 5: x[tgt_below(r, 32)] = 60000.0f; break;          /* near binary16's largest */
    case 6: x[tgt_below(r, 32)] = tgt_below(r, 2) ? 3e38f : -1e38f; break; /* a scale past binary16: inf */
    default: break;
    }
}

static tgl_ptr upload_bytes(tgl_backend *b, const void *p, size_t n)
{
    tgl_ptr d;
    TGT_OK(b, tgl_alloc(b, n ? n : 1, &d));
    if (n)
        TGT_OK(b, tgl_copy_htod(b, d, p, n));
    return d;
}

static void test_cpu_matches_reference(void **state)
{
    pair *p = *state;
    const size_t blocks = 800;
    float *x = malloc(blocks * 32 * sizeof *x), *back = malloc(blocks * 32 * sizeof *back);
    uint8_t *want = malloc(blocks * 34), *got = malloc(blocks * 34);
    for (int f = 0; f < 2; f++) {
        tgl_dtype dt = f ? TGL_DTYPE_Q4_0 : TGL_DTYPE_Q8_0;
        size_t bs = block_size(dt);
        for (size_t k = 0; k < blocks; k++) {
            corner_block(&p->rng, dt, k, x + 32 * k);
            reference_block(dt, x + 32 * k, want + bs * k);
        }
        tgl_ptr xd = tgt_upload(p->cpu, x, blocks * 32, 0), qd, fd;
        TGT_OK(p->cpu, tgl_alloc(p->cpu, blocks * bs, &qd));
        TGT_OK(p->cpu, tgl_alloc(p->cpu, blocks * 32 * sizeof(float), &fd));
        tgl_tensor tx = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 2, (size_t[]){blocks / 4, 128});
        tgl_tensor tq = tgl_tensor_contiguous(qd, dt, 2, (size_t[]){blocks / 4, 128});
        tgl_tensor tf = tgl_tensor_contiguous(fd, TGL_DTYPE_F32, 2, (size_t[]){blocks / 4, 128});
        TGT_OK(p->cpu, tgl_quantize(p->cpu, &tx, &tq));
        TGT_OK(p->cpu, tgl_copy_dtoh(p->cpu, got, qd, blocks * bs));
        for (size_t k = 0; k < blocks; k++)
            if (memcmp(got + bs * k, want + bs * k, bs))
                fail_msg("%s block %zu differs from ggml's reference quantizer", tgl_dtype_name(dt), k);
        TGT_OK(p->cpu, tgl_dequantize(p->cpu, &tq, &tf));
        TGT_OK(p->cpu, tgl_copy_dtoh(p->cpu, back, fd, blocks * 32 * sizeof(float)));
        for (size_t k = 0; k < blocks; k++) {
            float dec[32];
            reference_decode(dt, want + bs * k, dec);
            if (memcmp(dec, back + 32 * k, sizeof dec)) // NOLINT(bugprone-suspicious-memory-comparison)
                fail_msg("%s block %zu decodes differently", tgl_dtype_name(dt), k);
        }
        tgl_free(p->cpu, xd);
        tgl_free(p->cpu, qd);
        tgl_free(p->cpu, fd);
    }
    free(x);
    free(back);
    free(want);
    free(got);
}

/* Quantize then dequantize n values on b, into back. */
static void round_trip(tgl_backend *b, tgl_dtype dt, const float *x, size_t n, float *back, uint8_t *blocks)
{
    tgl_ptr xd = tgt_upload(b, x, n, 0), qd, fd;
    TGT_OK(b, tgl_alloc(b, n / 32 * block_size(dt), &qd));
    TGT_OK(b, tgl_alloc(b, n * sizeof(float), &fd));
    tgl_tensor tx = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 1, &n), tq = tgl_tensor_contiguous(qd, dt, 1, &n),
               tf = tgl_tensor_contiguous(fd, TGL_DTYPE_F32, 1, &n);
    TGT_OK(b, tgl_quantize(b, &tx, &tq));
    TGT_OK(b, tgl_dequantize(b, &tq, &tf));
    TGT_OK(b, tgl_copy_dtoh(b, back, fd, n * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, blocks, qd, n / 32 * block_size(dt)));
    tgl_free(b, xd);
    tgl_free(b, qd);
    tgl_free(b, fd);
}

static void test_round_trip_bounds(void **state)
{
    pair *p = *state;
    const size_t n = 32 * 128; /* ggml's test size */
    float *x = malloc(n * sizeof *x), *back = malloc(n * sizeof *back);
    uint8_t *blocks = malloc(n / 32 * 34);
    for (size_t i = 0; i < n; i++)
        x[i] = 0.1f + 2 * cosf((float)i);
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        for (int f = 0; f < 2; f++) {
            tgl_dtype dt = f ? TGL_DTYPE_Q4_0 : TGL_DTYPE_Q8_0;
            round_trip(bs[k], dt, x, n, back, blocks);
            double sum = 0.0;
            for (size_t i = 0; i < n; i++) {
                double e = (double)back[i] - x[i];
                sum += e * e;
                /* a step of the stored scale (q4_0's clipped +8 is one whole step), plus what
                 * rounding the scale to binary16 moves the largest quant by */
                const uint8_t *blk = blocks + i / 32 * block_size(dt);
                double dq = fabs(from_half(blk)), steps = dt == TGL_DTYPE_Q8_0 ? 0.5 : 1.0, most = 128.0;
                double d = 0.0;
                for (size_t j = i / 32 * 32; j < i / 32 * 32 + 32; j++)
                    d = fabs(x[j]) > d ? fabs(x[j]) : d;
                d /= dt == TGL_DTYPE_Q8_0 ? 127.0 : 8.0;
                double bound = steps * dq + most * fabs(d - dq) + 1e-6 * d;
                if (fabs(e) > bound)
                    fail_msg("%s on %s: element %zu off by %g, bound %g", tgl_dtype_name(dt), bs[k] == p->gl ? "GL" : "CPU",
                             i, fabs(e), bound);
            }
            double total = sqrt(sum) / (double)n;
            if (total > 0.002)
                fail_msg("%s on %s: total error %g above ggml's 0.002", tgl_dtype_name(dt), k ? "GL" : "CPU", total);
        }
    }
    free(x);
    free(back);
    free(blocks);
}

/* A [rows, cols] f32 side laid out with column stride cs and row stride rs (either sign) inside
 * a buffer of *floats, data at *front. */
typedef struct layout {
    int64_t rs, cs;
    size_t front, floats;
} layout;

static layout float_layout(tgt_rng *r, size_t rows, size_t cols)
{
    layout l;
    int64_t cs = (int64_t)tgt_below(r, 2) + 1, rs = cs * (int64_t)cols + (int64_t)tgt_below(r, 3);
    if (tgt_below(r, 3) == 0)
        cs = -cs;
    if (tgt_below(r, 3) == 0)
        rs = -rs;
    uint64_t ac = (uint64_t)(cs < 0 ? -cs : cs), ar = (uint64_t)(rs < 0 ? -rs : rs);
    size_t back = (size_t)((cs < 0 ? ac * (cols - 1) : 0) + (rs < 0 ? ar * (rows - 1) : 0));
    l.rs = rows > 1 ? rs : 0;
    l.cs = cs;
    l.front = back + tgt_below(r, 3);
    l.floats = l.front + (size_t)((cs > 0 ? ac * (cols - 1) : 0) + (rs > 0 && rows > 1 ? ar * (rows - 1) : 0)) + 1 +
               tgt_below(r, 3);
    return l;
}

/* Rows forward with unit column strides and a gap of 0-2 floats between them: what a GEMM takes. */
static layout dense_layout(tgt_rng *r, size_t rows, size_t cols)
{
    layout l = {.rs = (int64_t)(cols + tgt_below(r, 3)), .cs = 1, .front = tgt_below(r, 3)};
    l.floats = l.front + (size_t)l.rs * (rows - 1) + cols + tgt_below(r, 3);
    return l;
}

static tgl_tensor float_tensor(tgl_ptr base, const layout *l, size_t rows, size_t cols)
{
    tgl_tensor t = tgl_tensor_contiguous(base + l->front * sizeof(float), TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
    t.strides[0] = l->rs;
    t.strides[1] = l->cs;
    return t;
}

/* GL's quantize and dequantize against the CPU's over random layouts: the block side's rows
 * gapped by whole blocks and starting 0 or 2 bytes past a word, guard bytes around it. */
static void test_gl_against_cpu(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    size_t diffs = 0, quants = 0;
    for (int it = 0; it < tgt_count(40); it++) {
        tgl_dtype dt = it % 2 ? TGL_DTYPE_Q4_0 : TGL_DTYPE_Q8_0;
        size_t bs = block_size(dt), rows = 1 + tgt_below(&p->rng, 9), cols = 32 * (1 + tgt_below(&p->rng, 9));
        size_t gap = tgt_below(&p->rng, 3), row_blocks = cols / 32 + gap, lead = 2 * tgt_below(&p->rng, 4);
        size_t qbytes = lead + (rows * row_blocks) * bs + 8;
        layout fl = float_layout(&p->rng, rows, cols);
        float *fsrc = malloc(fl.floats * sizeof *fsrc);
        for (size_t i = 0; i < fl.floats; i++)
            fsrc[i] = tgt_uniform(&p->rng, -3, 3);
        for (size_t k = 0; k < rows * cols / 32; k++) { /* some blocks on the rules' corners */
            float blk[32];
            corner_block(&p->rng, dt, k, blk);
            size_t r = k / (cols / 32), c0 = k % (cols / 32) * 32;
            if (k % 3 == 0)
                for (size_t j = 0; j < 32; j++)
                    fsrc[(int64_t)fl.front + (int64_t)r * fl.rs + (int64_t)(c0 + j) * fl.cs] = blk[j];
            if (k % 5 == 4) /* an infinity: both backends' divisions take it as IEEE says */
                fsrc[(int64_t)fl.front + (int64_t)r * fl.rs + (int64_t)(c0 + tgt_below(&p->rng, 32)) * fl.cs] =
                    tgt_below(&p->rng, 2) ? INFINITY : -INFINITY;
        }
        uint8_t *q0 = malloc(qbytes), *qg = malloc(qbytes), *qc = malloc(qbytes);
        for (size_t i = 0; i < qbytes; i++)
            q0[i] = (uint8_t)tgt_next(&p->rng);
        tgl_backend *bs2[2] = {p->cpu, p->gl};
        uint8_t *outs[2] = {qc, qg};
        for (int k = 0; k < 2; k++) {
            tgl_backend *b = bs2[k];
            tgl_ptr fd = tgt_upload(b, fsrc, fl.floats, 0), qd = upload_bytes(b, q0, qbytes);
            tgl_tensor tf = float_tensor(fd, &fl, rows, cols);
            tgl_tensor tq = tgl_tensor_contiguous(qd + lead, dt, 2, (size_t[]){rows, cols});
            tq.strides[0] = (int64_t)(row_blocks * 32);
            TGT_OK(b, tgl_quantize(b, &tf, &tq));
            TGT_OK(b, tgl_copy_dtoh(b, outs[k], qd, qbytes));
            tgl_free(b, fd);
            tgl_free(b, qd);
        }
        for (size_t i = 0; i < qbytes; i++) {
            size_t at = i < lead ? SIZE_MAX : (i - lead) % (row_blocks * bs);
            int inside = i >= lead && i < lead + rows * row_blocks * bs && at < cols / 32 * bs;
            if (!inside && qg[i] != q0[i])
                fail_msg("%s: GL wrote byte %zu outside the blocks (%u -> %u)", tgl_dtype_name(dt), i, q0[i], qg[i]);
        }
        for (size_t r = 0; r < rows; r++) {
            for (size_t k = 0; k < cols / 32; k++) {
                const uint8_t *g = qg + lead + (r * row_blocks + k) * bs, *c = qc + lead + (r * row_blocks + k) * bs;
                quants += 32;
                if (!memcmp(g, c, bs))
                    continue;
                /* a block whose scale underflows binary16 (values below ~1e-36, where a device may
                 * flush subnormals) may differ in its quants (and so in the signs of its zeros),
                 * never in its values, all zero */
                float dg[32], dc[32];
                reference_decode(dt, g, dg);
                reference_decode(dt, c, dc);
                int same = from_half(c) == 0.0f && from_half(g) == 0.0f;
                for (int j = 0; j < 32 && same; j++)
                    same = dg[j] == dc[j];
                if (!same)
                    fail_msg("%s block (%zu, %zu) of %zu x %zu: GL's bytes differ from the CPU's", tgl_dtype_name(dt), r,
                             k, rows, cols);
                diffs += 32;
            }
        }
        /* dequantize the CPU's blocks on both: exact */
        size_t n_out = rows * cols;
        float *back[2];
        for (int k = 0; k < 2; k++) {
            tgl_backend *b = bs2[k];
            layout ol = float_layout(&p->rng, rows, cols);
            float *poison = malloc(ol.floats * sizeof *poison);
            tgt_poison(poison, ol.floats);
            tgl_ptr od = tgt_upload(b, poison, ol.floats, 0), qd = upload_bytes(b, qc, qbytes);
            tgl_tensor to = float_tensor(od, &ol, rows, cols);
            tgl_tensor tq = tgl_tensor_contiguous(qd + lead, dt, 2, (size_t[]){rows, cols});
            tq.strides[0] = (int64_t)(row_blocks * 32);
            TGT_OK(b, tgl_dequantize(b, &tq, &to));
            TGT_OK(b, tgl_copy_dtoh(b, poison, od, ol.floats * sizeof(float)));
            back[k] = malloc((n_out + 1) * sizeof(float));
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < cols; c++)
                    back[k][r * cols + c] = poison[(int64_t)ol.front + (int64_t)r * ol.rs + (int64_t)c * ol.cs];
            size_t written = 0;
            for (size_t i = 0; i < ol.floats; i++) {
                uint32_t bits;
                memcpy(&bits, poison + i, 4);
                written += bits != TGT_POISON_BITS;
            }
            if (written > n_out)
                fail_msg("dequantize on %s wrote %zu floats for %zu elements", k ? "GL" : "CPU", written, n_out);
            free(poison);
            tgl_free(b, od);
            tgl_free(b, qd);
        }
        for (size_t i = 0; i < n_out; i++) {
            uint32_t bg, bc;
            memcpy(&bg, &back[1][i], 4);
            memcpy(&bc, &back[0][i], 4);
            if (bg != bc && !(isnan(back[1][i]) && isnan(back[0][i]))) /* (an infinite scale's 0 * inf: NaN, bits the device's) */
                fail_msg("%s %zu x %zu: GL's dequantize of element %zu is %08x (%g), the CPU's %08x (%g)",
                         tgl_dtype_name(dt), rows, cols, i, bg, (double)back[1][i], bc, (double)back[0][i]);
        }
        free(back[0]);
        free(back[1]);
        free(fsrc);
        free(q0);
        free(qg);
        free(qc);
    }
    printf("GL quantize: %zu quants, bit for bit the CPU's but %zu in blocks of scale 0\n", quants, diffs);
}

/* ---- tgl_matvec_t ---- */

static const tgl_dtype weight_types[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_Q8_0,
                                         TGL_DTYPE_Q4_0};

/* A random weight of dt [rows, cols] as bytes: floats stored through strides for the float
 * formats (random ones, dense rows forward, or with dense 2 rows back to back), blocks quantized
 * on the CPU; *w gets the descriptor relative to data 0. */
static uint8_t *make_weight(pair *p, tgl_dtype dt, size_t rows, size_t cols, int dense, size_t *bytes, tgl_tensor *w)
{
    *w = (tgl_tensor){.dtype = dt, .ndim = 2, .shape = {rows, cols}};
    if (dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0) {
        size_t gap = tgt_below(&p->rng, 2), lead = 2 * tgt_below(&p->rng, 3), bs = block_size(dt);
        *bytes = lead + rows * (cols / 32 + gap) * bs + 4;
        uint8_t *m = malloc(*bytes);
        for (size_t i = 0; i < *bytes; i++)
            m[i] = (uint8_t)tgt_next(&p->rng);
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols / 32; k++) {
                float x[32];
                for (int j = 0; j < 32; j++)
                    x[j] = tgt_uniform(&p->rng, -1, 1);
                reference_block(dt, x, m + lead + (r * (cols / 32 + gap) + k) * bs);
            }
        w->data = lead;
        w->strides[0] = (int64_t)((cols / 32 + gap) * 32);
        w->strides[1] = 1;
        return m;
    }
    layout l = dense ? dense_layout(&p->rng, rows, cols) : float_layout(&p->rng, rows, cols);
    if (dense == 2) { /* rows back to back */
        l.rs = (int64_t)cols;
        l.floats = l.front + rows * cols;
    }
    size_t es = tgl_dtype_size(dt);
    *bytes = l.floats * es;
    uint8_t *m = malloc(*bytes);
    for (size_t i = 0; i < l.floats; i++) {
        float v = tgt_uniform(&p->rng, -1, 1);
        uint32_t bits;
        memcpy(&bits, &v, 4);
        if (dt == TGL_DTYPE_F32) {
            memcpy(m + 4 * i, &bits, 4);
        } else {
            uint16_t h = dt == TGL_DTYPE_F16 ? tgl_f32_to_f16_bits(bits) : (uint16_t)(bits >> 16);
            memcpy(m + 2 * i, &h, 2);
        }
    }
    w->data = l.front * es;
    w->strides[0] = l.rs;
    w->strides[1] = l.cs;
    return m;
}

/* tgl_matvec_t_fused's epilogue for matvec_case: beta, a bias or not, an activation, a gate;
 * nan_y: y holds NaN on entry (beta 0, no gate: it must not be read). */
typedef struct epi_spec {
    float beta, slope;
    int bias, gate, nan_y;
    tgl_activation act;
} epi_spec;

/* The CPU's fused result against its unfused chain: the plain product (plain, [n, rows]), then
 * on the host + beta y0 + bias, the activation by its own op on the CPU backend (tgt_activate)
 * and the gate's multiply by y0. */
static void check_cpu_chain(pair *p, const epi_spec *e, const float *plain, const float *y0, const float *bias,
                            const float *fused, size_t n, size_t rows)
{
    size_t count = n * rows;
    float *z = malloc(count * sizeof *z);
    for (size_t j = 0; j < n; j++)
        for (size_t r = 0; r < rows; r++) {
            size_t i = j * rows + r;
            z[i] = plain[i] + (e->gate || e->beta == 0.0f ? 0.0f : e->beta * y0[i]) + (bias ? bias[r] : 0.0f);
        }
    tgl_ptr zd = tgt_upload(p->cpu, z, count, 0);
    tgt_activate(p->cpu, e->act, e->slope, zd, count);
    TGT_OK(p->cpu, tgl_copy_dtoh(p->cpu, z, zd, count * sizeof *z));
    tgl_free(p->cpu, zd);
    for (size_t i = 0; e->gate && i < count; i++)
        z[i] *= y0[i];
    double err = tgt_nmse_floor(fused, z, count, 0.05); /* cancelled sums: as matvec_case_epi */
    if (err > 1e-10)
        fail_msg("CPU tgl_matvec_t_fused (act %d, beta %g, bias %d, gate %d) against its chain: NMSE %g", (int)e->act,
                 (double)e->beta, e->bias, e->gate, err);
    free(z);
}

/* y = x W^T (e NULL) or tgl_matvec_t_fused's y = epilogue(x W^T) on both backends from the same
 * bytes; returns GL's NMSE against the CPU, elements counted as at least 0.05 (and checks the
 * CPU's fused result against its chain). */
static double matvec_case_epi(pair *p, tgl_backend *gl, tgl_dtype dt, size_t rows, size_t cols, size_t n, int vector,
                              int dense, const epi_spec *e)
{
    size_t wbytes;
    tgl_tensor w;
    uint8_t *wm = make_weight(p, dt, rows, cols, dense, &wbytes, &w);
    layout xl = dense ? dense_layout(&p->rng, n, cols) : float_layout(&p->rng, n, cols),
           yl = dense ? dense_layout(&p->rng, n, rows) : float_layout(&p->rng, n, rows);
    float *x = malloc(xl.floats * sizeof *x), *y[2], *y0 = malloc(yl.floats * sizeof *y0);
    float *bias = malloc((rows + 1) * sizeof *bias), *plain = malloc(n * rows * sizeof *plain);
    for (size_t i = 0; i < xl.floats; i++)
        x[i] = tgt_uniform(&p->rng, -1, 1);
    for (size_t i = 0; i <= rows; i++)
        bias[i] = tgt_uniform(&p->rng, -1, 1);
    tgt_poison(y0, yl.floats);
    for (size_t j = 0; e && j < n; j++) /* y's elements on entry; the rest stays poison */
        for (size_t r = 0; r < rows; r++)
            y0[(int64_t)yl.front + (int64_t)j * yl.rs + (int64_t)r * yl.cs] =
                e->nan_y ? NAN : tgt_uniform(&p->rng, -1.5f, 1.5f);
    tgl_backend *bs[2] = {p->cpu, gl};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bs[k];
        y[k] = malloc(yl.floats * sizeof(float));
        tgl_ptr wd = upload_bytes(b, wm, wbytes), xd = tgt_upload(b, x, xl.floats, 0),
                yd = tgt_upload(b, y0, yl.floats, 0), bd = tgt_upload(b, bias, rows + 1, 0);
        tgl_tensor tw = w, tx = float_tensor(xd, &xl, n, cols), ty = float_tensor(yd, &yl, n, rows);
        tw.data += wd;
        if (vector) { /* [cols] and [rows] */
            tx = (tgl_tensor){.data = tx.data, .dtype = TGL_DTYPE_F32, .ndim = 1, .shape = {cols}, .strides = {xl.cs}};
            ty = (tgl_tensor){.data = ty.data, .dtype = TGL_DTYPE_F32, .ndim = 1, .shape = {rows}, .strides = {yl.cs}};
        }
        /* the bias one float into its allocation */
        tgl_tensor tb = tgl_tensor_contiguous(bd + sizeof(float), TGL_DTYPE_F32, 1, &rows);
        if (e)
            TGT_OK(b, tgl_matvec_t_fused(b, &tw, &tx, e->beta, e->bias ? &tb : NULL, e->act, e->slope, e->gate, &ty));
        else
            TGT_OK(b, tgl_matvec_t(b, &tw, &tx, &ty));
        TGT_OK(b, tgl_copy_dtoh(b, y[k], yd, yl.floats * sizeof(float)));
        if (e && k == 0) { /* the plain product, for the chain */
            float *py = malloc(yl.floats * sizeof *py);
            TGT_OK(b, tgl_matvec_t(b, &tw, &tx, &ty));
            TGT_OK(b, tgl_copy_dtoh(b, py, yd, yl.floats * sizeof(float)));
            for (size_t j = 0; j < n; j++)
                for (size_t r = 0; r < rows; r++)
                    plain[j * rows + r] = py[(int64_t)yl.front + (int64_t)j * yl.rs + (int64_t)r * yl.cs];
            free(py);
        }
        tgl_free(b, wd);
        tgl_free(b, xd);
        tgl_free(b, yd);
        tgl_free(b, bd);
    }
    /* every y element written, nothing else */
    float *got = malloc(n * rows * sizeof *got), *want = malloc(n * rows * sizeof *want);
    for (size_t j = 0; j < n; j++)
        for (size_t r = 0; r < rows; r++) {
            int64_t at = (int64_t)yl.front + (int64_t)j * yl.rs + (int64_t)r * yl.cs;
            got[j * rows + r] = y[1][at];
            want[j * rows + r] = y[0][at];
        }
    for (size_t i = 0; i < n * rows; i++)
        if (isnan(want[i]) || isnan(got[i]))
            fail_msg("%s %zux%zu n %zu: y[%zu] GL %g CPU %g", tgl_dtype_name(dt), rows, cols, n, i, got[i], want[i]);
    if (e) {
        float *y0s = malloc(n * rows * sizeof *y0s);
        for (size_t j = 0; j < n; j++)
            for (size_t r = 0; r < rows; r++)
                y0s[j * rows + r] = y0[(int64_t)yl.front + (int64_t)j * yl.rs + (int64_t)r * yl.cs];
        check_cpu_chain(p, e, plain, y0s, e->bias ? bias + 1 : NULL, want, n, rows);
        free(y0s);
    }
    for (size_t j = 0; j < n; j++)
        for (size_t r = 0; r < rows; r++)
            tgt_poison(&y[1][(int64_t)yl.front + (int64_t)j * yl.rs + (int64_t)r * yl.cs], 1);
    if (tgt_first_unpoisoned(y[1], yl.floats) < yl.floats)
        fail_msg("%s: GL wrote y's buffer at %zu, outside y", tgl_dtype_name(dt), tgt_first_unpoisoned(y[1], yl.floats));
    /* each reference element counted as at least 0.05: a sum of O(1) terms that cancels to near 0
     * is a few f32 roundings away from the double sum, a large error relative to itself */
    double err = tgt_nmse_floor(got, want, n * rows, 0.05);
    free(got);
    free(want);
    free(y[0]);
    free(y[1]);
    free(y0);
    free(bias);
    free(plain);
    free(x);
    free(wm);
    return err;
}

static double matvec_case(pair *p, tgl_backend *gl, tgl_dtype dt, size_t rows, size_t cols, size_t n, int vector,
                          int dense)
{
    return matvec_case_epi(p, gl, dt, rows, cols, n, vector, dense, NULL);
}

static void test_matvec_t(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t rows_list[] = {1, 7, 31, 67, 130}, n_list[] = {1, 2, 3, 4, 5, 9};
    static const size_t block_cols[] = {32, 64, 96, 320, 1088}, float_cols[] = {1, 3, 31, 67, 257};
    for (size_t f = 0; f < sizeof weight_types / sizeof *weight_types; f++) {
        tgl_dtype dt = weight_types[f];
        int blocks = dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0;
        for (int it = 0; it < tgt_count(12); it++) {
            size_t rows = rows_list[tgt_below(&p->rng, 5)], n = n_list[tgt_below(&p->rng, 6)];
            size_t cols = blocks ? block_cols[tgt_below(&p->rng, 5)] : float_cols[tgt_below(&p->rng, 5)];
            int vector = n == 1 && tgt_below(&p->rng, 2);
            double e = matvec_case(p, p->gl, dt, rows, cols, n, vector, 0);
            if (e > 1e-7)
                fail_msg("tgl_matvec_t %s %zu x %zu, n %zu: NMSE %g", tgl_dtype_name(dt), rows, cols, n, e);
        }
    }
    /* one row of x over an f32 W of back-to-back rows (tgl_matvec's kernel on GL), x and y
     * dense or not, some of them vectors */
    for (int it = 0; it < tgt_count(8); it++) {
        size_t rows = rows_list[tgt_below(&p->rng, 5)], cols = float_cols[tgt_below(&p->rng, 5)];
        double e = matvec_case(p, p->gl, TGL_DTYPE_F32, rows, cols, 1, (int)tgt_below(&p->rng, 2), 2);
        if (e > 1e-7)
            fail_msg("tgl_matvec_t f32 %zu x %zu, contiguous W: NMSE %g", rows, cols, e);
    }
    /* a decode-sized q4_0 product */
    double e = matvec_case(p, p->gl, TGL_DTYPE_Q4_0, 1000, 2048, 1, 1, 0);
    if (e > 1e-7)
        fail_msg("q4_0 1000 x 2048: NMSE %g", e);
}

/* Prompts (more than 16 rows of x, x and y with unit column strides) run as W in f32 times x
 * by the GEMM; under a memory budget too small for all of W in f32, in slabs of W's rows; and
 * strided x the backend's own way. */
static void test_matvec_t_prompts(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t n_list[] = {17, 33, 70};
    for (size_t f = 0; f < sizeof weight_types / sizeof *weight_types; f++) {
        tgl_dtype dt = weight_types[f];
        int blocks = dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0;
        for (int it = 0; it < 3; it++) {
            size_t n = n_list[it], rows = 37 + 30 * (size_t)it, cols = blocks ? 96 + 64 * (size_t)it : 61 + 50 * (size_t)it;
            double e = matvec_case(p, p->gl, dt, rows, cols, n, 0, it != 2);
            if (e > 1e-7)
                fail_msg("prompt, %s %zu x %zu, n %zu: NMSE %g", tgl_dtype_name(dt), rows, cols, n, e);
        }
    }
    /* a budget of 640 KiB: room for the operands (at most ~372 KiB), not for 300 x 512 weights
     * in f32 (600 KiB) beside them (an f32 W is the GEMM's operand as it is: no temporary) */
    tgt_setenv("TGL_MAX_MEMORY", "655360");
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (size_t f = 1; f < sizeof weight_types / sizeof *weight_types; f++) {
        double e = matvec_case(p, gl, weight_types[f], 300, 512, 20, 0, 1);
        if (e > 1e-7)
            fail_msg("prompt in slabs, %s: NMSE %g", tgl_dtype_name(weight_types[f]), e);
    }
    tgl_close(gl);
    tgt_env_restore();
}

/* Under a 4 KiB SSBO limit the weight runs in slabs of rows. */
static void test_matvec_t_slabs(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    for (size_t f = 0; f < sizeof weight_types / sizeof *weight_types; f++) {
        int blocks = weight_types[f] == TGL_DTYPE_Q8_0 || weight_types[f] == TGL_DTYPE_Q4_0;
        double e = matvec_case(p, gl, weight_types[f], 157, blocks ? 96 : 61, 3, 0, 0);
        if (e > 1e-7)
            fail_msg("slabs, %s: NMSE %g", tgl_dtype_name(weight_types[f]), e);
    }
    /* conversions of rows longer than a window (8 KiB of floats): in pieces, the same bytes
     * and floats as on the device's own limits */
    const size_t rows = 3, cols = 2048, n = rows * cols;
    float *x = malloc(n * sizeof *x), *back[2];
    for (size_t i = 0; i < n; i++)
        x[i] = tgt_uniform(&p->rng, -2, 2);
    uint8_t *q[2];
    tgl_backend *bs[2] = {p->gl, gl};
    for (int t = 0; t < 2; t++) {
        tgl_dtype dt = t ? TGL_DTYPE_Q4_0 : TGL_DTYPE_Q8_0;
        for (int k = 0; k < 2; k++) {
            q[k] = malloc(n / 32 * 34);
            back[k] = malloc(n * sizeof(float));
            round_trip(bs[k], dt, x, n, back[k], q[k]);
        }
        assert_memory_equal(q[0], q[1], n / 32 * block_size(dt));
        assert_memory_equal(back[0], back[1], n * sizeof(float));
        for (int k = 0; k < 2; k++) {
            free(q[k]);
            free(back[k]);
        }
    }
    free(x);
    tgl_close(gl);
}

/* cols 0 writes zeros; rows 0 or n 0 nothing. f16 and bf16 conversions are tgl_copy's. */
static void test_edges(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        tgl_backend *b = bs[k];
        float y[4] = {1, 2, 3, 4}, x[1] = {5};
        tgl_ptr yd = tgt_upload(b, y, 4, 0), xd = tgt_upload(b, x, 1, 0), wd = tgt_upload(b, x, 1, 0);
        tgl_tensor tw = tgl_tensor_contiguous(wd, TGL_DTYPE_Q4_0, 2, (size_t[]){3, 0});
        tgl_tensor tx = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 1, (size_t[]){0});
        tgl_tensor ty = tgl_tensor_contiguous(yd, TGL_DTYPE_F32, 1, (size_t[]){3});
        TGT_OK(b, tgl_matvec_t(b, &tw, &tx, &ty));
        TGT_OK(b, tgl_copy_dtoh(b, y, yd, sizeof y));
        assert_true(y[0] == 0.0f && y[1] == 0.0f && y[2] == 0.0f && y[3] == 4.0f);
        tw.shape[0] = 0;
        ty.shape[0] = 0;
        TGT_OK(b, tgl_matvec_t(b, &tw, &tx, &ty));
        /* f16 / bf16 through tgl_quantize equal tgl_copy */
        float v[6] = {1.0f / 3.0f, -65519.0f, 1e-8f, 70000.0f, -0.0f, 2.5f};
        tgl_ptr vd = tgt_upload(b, v, 6, 0), h1, h2;
        TGT_OK(b, tgl_alloc(b, 12, &h1));
        TGT_OK(b, tgl_alloc(b, 12, &h2));
        for (int t = 0; t < 2; t++) {
            tgl_dtype dt = t ? TGL_DTYPE_BF16 : TGL_DTYPE_F16;
            tgl_tensor tv = tgl_tensor_contiguous(vd, TGL_DTYPE_F32, 1, (size_t[]){6});
            tgl_tensor a = tgl_tensor_contiguous(h1, dt, 1, (size_t[]){6}), c = tgl_tensor_contiguous(h2, dt, 1, (size_t[]){6});
            uint16_t ha[6], hc[6];
            TGT_OK(b, tgl_quantize(b, &tv, &a));
            TGT_OK(b, tgl_copy(b, &c, &tv));
            TGT_OK(b, tgl_copy_dtoh(b, ha, h1, 12));
            TGT_OK(b, tgl_copy_dtoh(b, hc, h2, 12));
            assert_memory_equal(ha, hc, 12);
            float back[6], viacopy[6];
            TGT_OK(b, tgl_dequantize(b, &a, &tv));
            TGT_OK(b, tgl_copy_dtoh(b, back, vd, sizeof back));
            TGT_OK(b, tgl_copy(b, &tv, &c));
            TGT_OK(b, tgl_copy_dtoh(b, viacopy, vd, sizeof viacopy));
            assert_memory_equal(back, viacopy, sizeof back);
            TGT_OK(b, tgl_copy_htod(b, vd, v, sizeof v));
        }
        assert_int_equal(tgl_supports(b, TGL_OP_MATVEC, TGL_DTYPE_Q4_0), TGL_SUPPORT_CONVERTED);
        assert_int_equal(tgl_supports(b, TGL_OP_QUANTIZE, TGL_DTYPE_Q8_0), TGL_SUPPORT_CONVERTED);
        assert_int_equal(tgl_supports(b, TGL_OP_MATVEC, TGL_DTYPE_I32), TGL_SUPPORT_NONE);
        tgl_free(b, vd);
        tgl_free(b, h1);
        tgl_free(b, h2);
        tgl_free(b, yd);
        tgl_free(b, xd);
        tgl_free(b, wd);
    }
}

static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        tgl_backend *b = bs[k];
        float init[512];
        for (int i = 0; i < 512; i++)
            init[i] = (float)i;
        tgl_ptr wd = tgt_upload(b, init, 512, 0), xd = tgt_upload(b, init, 512, 0), yd = tgt_upload(b, init, 512, 0);
        tgl_tensor w = tgl_tensor_contiguous(wd, TGL_DTYPE_Q8_0, 2, (size_t[]){4, 64});
        tgl_tensor x = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 1, (size_t[]){64});
        tgl_tensor y = tgl_tensor_contiguous(yd, TGL_DTYPE_F32, 1, (size_t[]){4});
        tgl_tensor t;
        TGT_OK(b, tgl_matvec_t(b, &w, &x, &y)); /* the baseline is valid */
        float before[512], after[512];
        TGT_OK(b, tgl_copy_dtoh(b, before, yd, sizeof before));
        t = w, t.shape[1] = 48, t.strides[0] = 48;
        tgl_tensor x48 = x;
        x48.shape[0] = 48;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x48, &y), TGL_ERR_INVALID_ARGUMENT); /* not whole blocks */
        assert_non_null(strstr(tgl_last_error(b), "blocks of 32"));
        t = w, t.strides[0] = 80;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT); /* row stride */
        t = w, t.strides[0] = -64;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT);
        t = w, t.strides[1] = 2;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT);
        t = w, t.data = wd + 1;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT); /* odd offset */
        t = w, t.shape[0] = 1000;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT); /* y's length */
        tgl_tensor y1000 = y;
        y1000.shape[0] = 1000;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y1000), TGL_ERR_INVALID_POINTER); /* past w's allocation */
        t = w, t.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_UNSUPPORTED);
        t = x, t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_matvec_t(b, &w, &t, &y), TGL_ERR_UNSUPPORTED);
        t = w, t.ndim = 3, t.shape[2] = 1, t.strides[2] = 1;
        TGT_EXPECT(b, tgl_matvec_t(b, &t, &x, &y), TGL_ERR_INVALID_ARGUMENT);
        t = x, t.shape[0] = 63;
        TGT_EXPECT(b, tgl_matvec_t(b, &w, &t, &y), TGL_ERR_INVALID_ARGUMENT);
        t = y, t.data = xd; /* y over x */
        TGT_EXPECT(b, tgl_matvec_t(b, &w, &x, &t), TGL_ERR_INVALID_ARGUMENT);
        t = y, t.strides[0] = 0; /* y reaching one element twice */
        TGT_EXPECT(b, tgl_matvec_t(b, &w, &x, &t), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_matvec_t(b, NULL, &x, &y), TGL_ERR_INVALID_ARGUMENT);
        TGT_OK(b, tgl_copy_dtoh(b, after, yd, sizeof after));
        assert_memory_equal(before, after, sizeof before);

        tgl_tensor f = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 2, (size_t[]){2, 64});
        tgl_tensor q = tgl_tensor_contiguous(yd, TGL_DTYPE_Q4_0, 2, (size_t[]){2, 64});
        TGT_OK(b, tgl_copy_dtoh(b, before, yd, sizeof before));
        t = q, t.shape[1] = 32;
        TGT_EXPECT(b, tgl_quantize(b, &f, &t), TGL_ERR_INVALID_ARGUMENT); /* shapes differ */
        t = f, t.shape[1] = 40;
        tgl_tensor q40 = q;
        q40.shape[1] = 40;
        TGT_EXPECT(b, tgl_quantize(b, &t, &q40), TGL_ERR_INVALID_ARGUMENT);
        t = f, t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_quantize(b, &t, &q), TGL_ERR_UNSUPPORTED);
        t = q, t.dtype = TGL_DTYPE_I32;
        TGT_EXPECT(b, tgl_quantize(b, &f, &t), TGL_ERR_UNSUPPORTED);
        tgl_tensor f3 = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 3, (size_t[]){2, 2, 32});
        tgl_tensor q3 = tgl_tensor_contiguous(yd, TGL_DTYPE_Q8_0, 3, (size_t[]){2, 2, 32});
        f3.strides[0] = 200; /* dims 0 and 1 no longer one run of rows */
        TGT_EXPECT(b, tgl_quantize(b, &f3, &q3), TGL_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tgl_last_error(b), "one run of rows"));
        q3.data = xd + 4; /* blocks over the floats */
        f3.strides[0] = 64;
        TGT_EXPECT(b, tgl_quantize(b, &f3, &q3), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_dequantize(b, &q, NULL), TGL_ERR_INVALID_ARGUMENT);
        TGT_OK(b, tgl_copy_dtoh(b, after, yd, sizeof after));
        assert_memory_equal(before, after, sizeof before);
        tgl_free(b, wd);
        tgl_free(b, xd);
        tgl_free(b, yd);
    }
}

/* A random epilogue: any activation (leaky relu's slope random), a bias half the time, a gate a
 * third of the time, else beta 0 (NaN in y half the time then), 1 or -0.75. */
static epi_spec random_epilogue(tgt_rng *r)
{
    static const float betas[] = {0.0f, 1.0f, -0.75f};
    epi_spec e = {.act = (tgl_activation)tgt_below(r, TGL_ACTIVATION_COUNT), .slope = tgt_uniform(r, -0.5f, 0.5f),
                  .bias = (int)tgt_below(r, 2), .gate = tgt_below(r, 3) == 0};
    e.beta = e.gate ? 0.0f : betas[tgt_below(r, 3)];
    e.nan_y = !e.gate && e.beta == 0.0f && tgt_below(r, 2);
    return e;
}

/* tgl_matvec_t_fused: GL against the CPU (NMSE 1e-7) and the CPU against its unfused chain, for
 * every format and random epilogues: decode rows (n 1..9, vectors, random strides), prompts (n
 * 17..40: the GEMM path, W in f32 slabs with the bias following each slab, also under a memory
 * budget), long f32 rows (1027 to 2048 columns), slabs under a 4 KiB SSBO limit; cols 0 (the
 * epilogue of empty sums); refusals. */
static void test_matvec_t_fused(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t rows_list[] = {1, 7, 31, 67, 130}, n_list[] = {1, 2, 3, 4, 5, 9};
    static const size_t block_cols[] = {32, 64, 96, 320}, float_cols[] = {1, 3, 31, 67, 257};
    char what[160];
    for (size_t f = 0; f < sizeof weight_types / sizeof *weight_types; f++) {
        tgl_dtype dt = weight_types[f];
        int blocks = dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0;
        for (int it = 0; it < tgt_count(10); it++) {
            epi_spec e = random_epilogue(&p->rng);
            int prompt = it % 4 == 3, dense = prompt || tgt_below(&p->rng, 3) == 0 ? 1 + (int)tgt_below(&p->rng, 2) : 0;
            size_t rows = rows_list[tgt_below(&p->rng, 5)];
            size_t n = prompt ? 17 + tgt_below(&p->rng, 24) : n_list[tgt_below(&p->rng, 6)];
            size_t cols = blocks ? block_cols[tgt_below(&p->rng, 4)] : float_cols[tgt_below(&p->rng, 5)];
            int vector = n == 1 && tgt_below(&p->rng, 2);
            double err = matvec_case_epi(p, p->gl, dt, rows, cols, n, vector, dense, &e);
            snprintf(what, sizeof what, "%s %zu x %zu, n %zu, dense %d: act %d beta %g bias %d gate %d nan_y %d",
                     tgl_dtype_name(dt), rows, cols, n, dense, (int)e.act, (double)e.beta, e.bias, e.gate, e.nan_y);
            if (err > 1e-7)
                fail_msg("tgl_matvec_t_fused %s: NMSE %g", what, err);
        }
    }
    /* one dense row of x over long f32 rows: llvmpipe's lanes kernel from 1024 columns (vec4s),
     * its row per invocation below or unaligned */
    static const size_t long_cols[] = {1028, 1027, 2048};
    for (int it = 0; it < 6; it++) {
        epi_spec e = random_epilogue(&p->rng);
        size_t cols = long_cols[it % 3], rows = it < 3 ? 67 : 130;
        double err = matvec_case_epi(p, p->gl, TGL_DTYPE_F32, rows, cols, 1, it % 2, 2, &e);
        if (err > 1e-7)
            fail_msg("tgl_matvec_t_fused f32 %zu x %zu: act %d beta %g bias %d gate %d nan_y %d: NMSE %g", rows, cols,
                     (int)e.act, (double)e.beta, e.bias, e.gate, e.nan_y, err);
    }
    /* prompts in slabs of W under a memory budget (as test_matvec_t_prompts), and slabs of rows
     * under a 4 KiB SSBO limit: the bias and y's columns follow each slab */
    const epi_spec biased = {.beta = 1.0f, .bias = 1, .act = TGL_ACTIVATION_GELU},
                   gated = {.bias = 1, .gate = 1, .act = TGL_ACTIVATION_SILU};
    tgt_setenv("TGL_MAX_MEMORY", "655360");
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (size_t f = 1; f < sizeof weight_types / sizeof *weight_types; f++)
        for (int g = 0; g < 2; g++) {
            double err = matvec_case_epi(p, gl, weight_types[f], 300, 512, 20, 0, 1, g ? &gated : &biased);
            if (err > 1e-7)
                fail_msg("fused prompt in slabs, %s, gate %d: NMSE %g", tgl_dtype_name(weight_types[f]), g, err);
        }
    tgl_close(gl);
    tgt_env_restore();
    gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    for (size_t f = 0; f < sizeof weight_types / sizeof *weight_types; f++) {
        int blocks = weight_types[f] == TGL_DTYPE_Q8_0 || weight_types[f] == TGL_DTYPE_Q4_0;
        for (int g = 0; g < 2; g++) {
            double err = matvec_case_epi(p, gl, weight_types[f], 157, blocks ? 96 : 61, 3, 0, 0, g ? &gated : &biased);
            if (err > 1e-7)
                fail_msg("fused slabs, %s, gate %d: NMSE %g", tgl_dtype_name(weight_types[f]), g, err);
        }
    }
    tgl_close(gl);
}

/* cols 0: y = act(beta y + bias) (or act(bias) y), nothing read from w or x; a plain epilogue
 * (beta 0, nothing else) writes zeros as tgl_matvec_t; the refusals leave y intact. */
static void test_matvec_t_fused_edges(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int k = 0; k < 2 && bs[k]; k++) {
        tgl_backend *b = bs[k];
        float y[7] = {1, -2, 3, 4, 5, 6, 7}, bias[3] = {0.5f, 0.25f, -4.0f}, x[1] = {5};
        tgl_ptr yd = tgt_upload(b, y, 7, 0), xd = tgt_upload(b, x, 1, 0), bd = tgt_upload(b, bias, 3, 0);
        tgl_tensor tw = tgl_tensor_contiguous(xd, TGL_DTYPE_Q4_0, 2, (size_t[]){3, 0});
        tgl_tensor tx = tgl_tensor_contiguous(xd, TGL_DTYPE_F32, 2, (size_t[]){2, 0});
        tgl_tensor ty = tgl_tensor_contiguous(yd, TGL_DTYPE_F32, 2, (size_t[]){2, 3});
        tgl_tensor tb = tgl_tensor_contiguous(bd, TGL_DTYPE_F32, 1, (size_t[]){3});
        /* relu(2 y + bias): rows {1, -2, 3} and {4, 5, 6}; y[6] untouched */
        TGT_OK(b, tgl_matvec_t_fused(b, &tw, &tx, 2.0f, &tb, TGL_ACTIVATION_RELU, 0.0f, 0, &ty));
        float got[7];
        TGT_OK(b, tgl_copy_dtoh(b, got, yd, sizeof got));
        const float want[7] = {2.5f, 0.0f, 2.0f, 8.5f, 10.25f, 8.0f, 7.0f};
        for (int i = 0; i < 7; i++)
            if (got[i] != want[i])
                fail_msg("%s cols 0: y[%d] = %g, expected %g", k ? "GL" : "CPU", i, got[i], want[i]);
        /* the gate: relu(bias) * y */
        TGT_OK(b, tgl_matvec_t_fused(b, &tw, &tx, 0.0f, &tb, TGL_ACTIVATION_RELU, 0.0f, 1, &ty));
        TGT_OK(b, tgl_copy_dtoh(b, got, yd, sizeof got));
        const float gated[7] = {1.25f, 0.0f, 0.0f, 4.25f, 2.5625f, 0.0f, 7.0f};
        for (int i = 0; i < 7; i++)
            if (got[i] != gated[i])
                fail_msg("%s cols 0, gate: y[%d] = %g, expected %g", k ? "GL" : "CPU", i, got[i], gated[i]);
        /* nothing to apply: zeros, as tgl_matvec_t */
        TGT_OK(b, tgl_matvec_t_fused(b, &tw, &tx, 0.0f, NULL, TGL_ACTIVATION_NONE, 0.0f, 0, &ty));
        TGT_OK(b, tgl_copy_dtoh(b, got, yd, sizeof got));
        assert_true(got[0] == 0.0f && got[5] == 0.0f && got[6] == 7.0f);

        /* refusals: y as it was */
        float init[256];
        for (int i = 0; i < 256; i++)
            init[i] = (float)i;
        tgl_ptr wd = tgt_upload(b, init, 256, 0);
        tgl_tensor w = tgl_tensor_contiguous(wd, TGL_DTYPE_Q8_0, 2, (size_t[]){3, 64});
        tgl_tensor x64 = tgl_tensor_contiguous(wd, TGL_DTYPE_F32, 1, (size_t[]){64});
        tgl_tensor y3 = tgl_tensor_contiguous(yd, TGL_DTYPE_F32, 1, (size_t[]){3});
        TGT_OK(b, tgl_copy_dtoh(b, y, yd, sizeof y));
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, NULL, TGL_ACTIVATION_COUNT, 0.0f, 0, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, NULL, TGL_ACTIVATION_LEAKY_RELU, INFINITY, 0, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, NULL, TGL_ACTIVATION_SILU, 0.0f, 2, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 1.0f, NULL, TGL_ACTIVATION_SILU, 0.0f, 1, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tgl_last_error(b), "beta must be 0"));
        tgl_tensor t = tb;
        t.shape[0] = 2; /* not [rows] */
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, &t, TGL_ACTIVATION_NONE, 0.0f, 0, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        t = tb, t.strides[0] = 2; /* not stride 1 */
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, &t, TGL_ACTIVATION_NONE, 0.0f, 0, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        t = tb, t.dtype = TGL_DTYPE_F16;
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, &t, TGL_ACTIVATION_NONE, 0.0f, 0, &y3),
                   TGL_ERR_UNSUPPORTED);
        t = tb, t.data = yd + 4; /* the bias over y */
        TGT_EXPECT(b, tgl_matvec_t_fused(b, &w, &x64, 0.0f, &t, TGL_ACTIVATION_NONE, 0.0f, 0, &y3),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_OK(b, tgl_copy_dtoh(b, got, yd, sizeof got));
        assert_memory_equal(y, got, sizeof got);
        tgl_free(b, wd);
        tgl_free(b, yd);
        tgl_free(b, xd);
        tgl_free(b, bd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_matches_reference), cmocka_unit_test(test_round_trip_bounds),
        cmocka_unit_test(test_gl_against_cpu),        cmocka_unit_test(test_matvec_t),
        cmocka_unit_test(test_matvec_t_prompts),      cmocka_unit_test(test_matvec_t_slabs),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_matvec_t_fused),        cmocka_unit_test(test_matvec_t_fused_edges),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
