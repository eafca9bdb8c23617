/* The self-test tgl_open runs on a GL device when asked (TGL_FLAG_SELF_TEST, TGL_SELF_TEST=1):
 * one small call of each op family on the device and on the CPU backend from the same inputs,
 * every output compared. A device that computes a wrong answer is refused with the op named, as
 * the zink check refuses one (TGL_BACKEND_AUTO then falls back to the CPU backend). It is opt-in
 * because it runs 14 calls at every open (llvmpipe, 2 cores: 0.9 s with warm caches, 7 s cold).
 * `tensorgl doctor` is the longer form, for a bug report. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* Bit-identical or within this NMSE (as `tensorgl doctor`): functions differ by a few ulps
 * between the device and the CPU backend's libm; a wrong kernel is off by far more. */
#define SELF_TEST_TOLERANCE 1e-6

#define MAX_IN 4

typedef struct check {
    const char *name;
    size_t in[MAX_IN]; /* floats in each input (0: none) */
    size_t out;        /* floats out */
    int ids_in;        /* input index holding row ids (i32 below `ids_below`), or -1 */
    size_t ids_below;
    tgl_status (*run)(tgl_backend *b, const tgl_ptr *in, tgl_ptr out);
} check;

/* The calls, on shapes a little past a workgroup and not multiples of 4. */
static tgl_status run_unary(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_unary(b, TGL_UNARY_TANH, in[0], out, 1031);
}
static tgl_status run_binary(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_binary(b, TGL_BINARY_MUL, in[0], in[1], out, 1031);
}
static tgl_status run_map(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_map(b, "a * b + exp(-c * c)", in, 3, out, 1031);
}
static tgl_status run_reduce(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_reduce(b, TGL_REDUCE_SUM, in[0], out, (size_t[]){37, 129}, 2, 1);
}
static tgl_status run_reduce_cols(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_reduce(b, TGL_REDUCE_MAX, in[0], out, (size_t[]){37, 129}, 2, 0);
}
static tgl_status run_softmax(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_softmax(b, in[0], out, 17, 300);
}
static tgl_status run_layernorm(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_layernorm(b, in[0], in[1], in[2], out, 17, 300, 1e-5f);
}
static tgl_status run_gemm(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 67, 45, 129, 1.0f, in[0], 129, in[1], 45, 0.0f, out, 45);
}
static tgl_status run_gemm_tn(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_gemm(b, TGL_TRANS, TGL_TRANS, 67, 45, 129, 0.5f, in[0], 67, in[1], 129, 0.0f, out, 45);
}
static tgl_status run_matvec(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_matvec(b, 300, 129, in[0], in[1], out);
}
static tgl_status run_attention(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_attention(b, in[0], in[1], in[2], out, 1, 2, 33, 33, 16, 0.25f, 1);
}
static tgl_status run_decode(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_attention_kv(b, in[0], in[1], in[2], out, 1, 2, 1, 600, 640, 16, 0.25f, 1);
}
static tgl_status run_conv2d(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    tgl_conv2d_desc d = {.batch = 1, .in_channels = 5, .in_h = 13, .in_w = 11, .out_channels = 7, .kernel_h = 3,
                         .kernel_w = 3, .pad_h = 1, .pad_w = 1};
    return tgl_conv2d(b, &d, in[0], in[1], in[2], out);
}
static tgl_status run_gather(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    return tgl_gather_rows(b, in[0], in[1], out, 50, 33, 20);
}

static const check checks[] = {
    {"tgl_unary (tanh)", {1031}, 1031, -1, 0, run_unary},
    {"tgl_binary (mul)", {1031, 1031}, 1031, -1, 0, run_binary},
    {"tgl_map", {1031, 1031, 1031}, 1031, -1, 0, run_map},
    {"tgl_reduce (sum of rows)", {37 * 129}, 37, -1, 0, run_reduce},
    {"tgl_reduce (max of columns)", {37 * 129}, 129, -1, 0, run_reduce_cols},
    {"tgl_softmax", {17 * 300}, 17 * 300, -1, 0, run_softmax},
    {"tgl_layernorm", {17 * 300, 300, 300}, 17 * 300, -1, 0, run_layernorm},
    {"tgl_gemm", {67 * 129, 129 * 45}, 67 * 45, -1, 0, run_gemm},
    {"tgl_gemm (both transposed)", {129 * 67, 45 * 129}, 67 * 45, -1, 0, run_gemm_tn},
    {"tgl_matvec", {300 * 129, 129}, 300, -1, 0, run_matvec},
    {"tgl_attention (causal)", {2 * 33 * 16, 2 * 33 * 16, 2 * 33 * 16}, 2 * 33 * 16, -1, 0, run_attention},
    {"tgl_attention_kv (decode)", {2 * 16, 2 * 640 * 16, 2 * 640 * 16}, 2 * 16, -1, 0, run_decode},
    {"tgl_conv2d", {5 * 13 * 11, 7 * 5 * 9, 7}, 7 * 13 * 11, -1, 0, run_conv2d},
    {"tgl_gather_rows", {50 * 33, 20}, 20 * 33, 1, 50, run_gather},
};

/* Test hook: the device's output of check `fault_check` (1-based; 0 none) gets one element off,
 * as a wrong kernel would give. */
static int fault_check;

void tgl__test_self_test_fault(int check_number)
{
    fault_check = check_number;
}

/* A fixed stream (xorshift64*): every open tests the same inputs. */
static float next_value(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    uint64_t r = *s * 2685821657736338717ull;
    return (float)((double)(r >> 40) / (double)(1u << 24) * 4.0 - 2.0); /* [-2, 2) */
}

/* One check on backend b: inputs uploaded, the call, out downloaded into host (c->out floats). */
static tgl_status run_on(tgl_backend *b, const check *c, float *const *in, float *host)
{
    tgl_ptr p[MAX_IN] = {0}, out = 0;
    tgl_status st = TGL_OK;
    for (int k = 0; !st && k < MAX_IN && c->in[k]; k++)
        if (!(st = tgl_alloc(b, c->in[k] * sizeof(float), &p[k])))
            st = tgl_copy_htod(b, p[k], in[k], c->in[k] * sizeof(float));
    if (!st && !(st = tgl_alloc(b, c->out * sizeof(float), &out)) && !(st = c->run(b, p, out)))
        st = tgl_copy_dtoh(b, host, out, c->out * sizeof(float));
    for (int k = 0; k < MAX_IN; k++)
        tgl_free(b, p[k]);
    tgl_free(b, out);
    return st;
}

tgl_status tgl__self_test(tgl_backend *b)
{
    tgl_backend *cpu = NULL;
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    tgl_status st = tgl__open_untraced(&o, &cpu);
    if (st)
        return tgl__fail(b, st, "self-test: the CPU backend did not open: %s", tgl_last_error(NULL));
    if (cpu->profile) /* TGL_PROFILE: this backend's figures are not the user's */
        tgl__profile_end(cpu, 0);
    uint64_t seed = 0x5E1F7E57u;
    for (size_t i = 0; !st && i < sizeof checks / sizeof *checks; i++) {
        const check *c = &checks[i];
        float *in[MAX_IN] = {NULL}, *got = malloc(c->out * sizeof(float)), *want = malloc(c->out * sizeof(float));
        int ok = got && want;
        for (int k = 0; ok && k < MAX_IN && c->in[k]; k++) {
            if (!(in[k] = malloc(c->in[k] * sizeof(float)))) {
                ok = 0;
                break;
            }
            for (size_t j = 0; j < c->in[k]; j++) {
                float v = next_value(&seed);
                if (k == c->ids_in) { /* an i32 id below ids_below, in the float's bytes */
                    int32_t id = (int32_t)((v + 2.0f) / 4.0f * (float)c->ids_below) % (int32_t)c->ids_below;
                    memcpy(&in[k][j], &id, sizeof id);
                } else {
                    in[k][j] = v;
                }
            }
        }
        if (!ok) {
            st = tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "self-test: no host memory for %s", c->name);
        } else if ((st = run_on(cpu, c, in, want))) {
            st = tgl__fail(b, st, "self-test: %s on the CPU backend: %s", c->name, tgl_last_error(cpu));
        } else if ((st = run_on(b, c, in, got))) {
            st = tgl__fail(b, TGL_ERR_NO_DEVICE, "self-test (TGL_SELF_TEST): %s failed on this device (%s): %s",
                           c->name, tgl_status_string(st), tgl_last_error(b));
        } else {
            if ((size_t)fault_check == i + 1)
                got[c->out / 2] += 1.0f;
            double e = tgl__buffer_nmse((const uint8_t *)got, (const uint8_t *)want, c->out * sizeof(float), 'o',
                                        TGL_DTYPE_F32);
            if (!(e <= SELF_TEST_TOLERANCE))
                st = tgl__fail(b, TGL_ERR_NO_DEVICE,
                               "self-test (TGL_SELF_TEST): %s computes wrong results on this device (NMSE %.3g against "
                               "the CPU backend; at most %.0e passes): run `tensorgl doctor` for a report",
                               c->name, e, SELF_TEST_TOLERANCE);
        }
        for (int k = 0; k < MAX_IN; k++)
            free(in[k]);
        free(got);
        free(want);
    }
    tgl_close(cpu);
    return st;
}
