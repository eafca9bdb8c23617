/* Memory on both backends: pointer arithmetic, every invalid-pointer case, bounds, size 0,
 * out of memory with earlier buffers intact, 10,000 random alloc/free/copy rounds checked
 * against a host shadow, and device copies through each GL path. Each test runs once per
 * backend (cmocka prestate = backend kind). */
#include "testing.h"
#include "gl/gl_internal.h"
#include "core/host_copy.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    tgl_backend_kind kind;
    tgl_backend *b;
} ctx;

static ctx gl_ctx = {TGL_BACKEND_GL, NULL}, cpu_ctx = {TGL_BACKEND_CPU, NULL};

static int setup(void **state)
{
    ctx *c = *state;
    /* Under TGL_TEST_CPU_ONLY the GL fixture stays empty and its tests skip (a skip inside a
     * setup counts as a failure in cmocka). */
    c->b = c->kind == TGL_BACKEND_GL && tgt_cpu_only() ? NULL : tgt_open(c->kind);
    return 0;
}

/* The fixture's backend; skips the test when it has none. */
static tgl_backend *backend_of(void **state)
{
    tgl_backend *b = ((ctx *)*state)->b;
    if (!b) {
        printf("TGL_TEST_CPU_ONLY=1: the GL part is skipped\n");
        skip();
    }
    return b;
}

static int teardown(void **state)
{
    ctx *c = *state;
    tgl_close(c->b);
    c->b = NULL;
    return 0;
}

/* Reads back `bytes` at p and compares them with want. */
static void expect_contents(tgl_backend *b, tgl_ptr p, const void *want, size_t bytes)
{
    unsigned char *got = malloc(bytes ? bytes : 1);
    TGT_OK(b, tgl_copy_dtoh(b, got, p, bytes));
    if (memcmp(got, want, bytes))
        fail_msg("device contents differ from what was written");
    free(got);
}

static void test_roundtrip_and_offsets(void **state)
{
    tgl_backend *b = backend_of(state);
    unsigned char src[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    tgl_ptr p, q;
    TGT_OK(b, tgl_alloc(b, 1000, &p));
    TGT_OK(b, tgl_alloc(b, 1000, &q));
    assert_true(p != 0 && q != 0 && p != q);
    TGT_OK(b, tgl_copy_htod(b, p, src, 1000));
    expect_contents(b, p, src, 1000);
    /* p + k addresses byte k of the allocation, at any byte offset. */
    TGT_OK(b, tgl_copy_dtoh(b, back, p + 13, 987));
    assert_memory_equal(back, src + 13, 987);
    TGT_OK(b, tgl_copy_dtod(b, q + 1, p + 500, 499));
    TGT_OK(b, tgl_copy_dtoh(b, back, q + 1, 499));
    assert_memory_equal(back, src + 500, 499);
    /* Non-overlapping ranges of one allocation may be copied. */
    TGT_OK(b, tgl_copy_dtod(b, p, p + 600, 400));
    TGT_OK(b, tgl_copy_dtoh(b, back, p, 400));
    assert_memory_equal(back, src + 600, 400);
    TGT_OK(b, tgl_synchronize(b));
    TGT_OK(b, tgl_free(b, p));
    TGT_OK(b, tgl_free(b, q));
}

static void test_size_zero(void **state)
{
    tgl_backend *b = backend_of(state);
    tgl_ptr p = 123;
    TGT_OK(b, tgl_alloc(b, 0, &p));
    assert_int_equal(p, 0);
    TGT_OK(b, tgl_free(b, 0));
    TGT_OK(b, tgl_copy_htod(b, 0, NULL, 0));
    TGT_OK(b, tgl_copy_dtoh(b, NULL, 0, 0));
    TGT_OK(b, tgl_copy_dtod(b, 0, 0, 0));
    TGT_OK(b, tgl_unary(b, TGL_UNARY_EXP, 0, 0, 0));
    TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, 0, 0, 0, 0));
}

/* Every invalid-pointer case returns TGL_ERR_INVALID_POINTER and leaves the buffers as they were. */
static void test_invalid_pointers(void **state)
{
    tgl_backend *b = backend_of(state);
    float data[64], junk[64];
    for (int i = 0; i < 64; i++)
        data[i] = (float)i, junk[i] = -1.0f;
    tgl_ptr p, dead;
    TGT_OK(b, tgl_alloc(b, sizeof data, &p));
    TGT_OK(b, tgl_copy_htod(b, p, data, sizeof data));
    TGT_OK(b, tgl_alloc(b, 64, &dead));
    TGT_OK(b, tgl_free(b, dead));

    TGT_EXPECT(b, tgl_free(b, dead), TGL_ERR_INVALID_POINTER);              /* double free */
    TGT_EXPECT(b, tgl_copy_htod(b, dead, junk, 4), TGL_ERR_INVALID_POINTER); /* use after free */
    TGT_EXPECT(b, tgl_copy_dtoh(b, junk, dead, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_NEG, dead, p, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_NEG, p, dead, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_free(b, p + 4), TGL_ERR_INVALID_POINTER);              /* interior pointer */
    TGT_EXPECT(b, tgl_copy_htod(b, 0, junk, 4), TGL_ERR_INVALID_POINTER);    /* null */
    TGT_EXPECT(b, tgl_copy_dtod(b, p, 0, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_binary(b, TGL_BINARY_ADD, p, 0, p, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_copy_htod(b, 0x1234, junk, 4), TGL_ERR_INVALID_POINTER); /* made up */
    TGT_EXPECT(b, tgl_free(b, 0x1234), TGL_ERR_INVALID_POINTER);
    /* Out of range: past the end, straddling the end, offset beyond the end. */
    TGT_EXPECT(b, tgl_copy_htod(b, p, junk, sizeof data + 1), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_copy_htod(b, p + 250, junk, 8), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_copy_dtoh(b, junk, p + 300, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_copy_dtod(b, p, p + 128, 200), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p + 4, 64), TGL_ERR_INVALID_POINTER);

    /* A pointer of another backend of the same kind is foreign here. */
    tgl_backend *other = tgt_open(((ctx *)*state)->kind);
    tgl_ptr q;
    TGT_OK(other, tgl_alloc(other, sizeof data, &q));
    TGT_EXPECT(b, tgl_copy_htod(b, q, junk, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_free(b, q), TGL_ERR_INVALID_POINTER);
    TGT_OK(other, tgl_free(other, q));
    tgl_close(other);

    for (int i = 0; i < 64; i++)
        assert_true(junk[i] == -1.0f); /* the failed downloads wrote nothing */
    expect_contents(b, p, data, sizeof data);
    TGT_OK(b, tgl_free(b, p));
}

static void test_invalid_arguments(void **state)
{
    tgl_backend *b = backend_of(state);
    float data[64], junk[64] = {0};
    for (int i = 0; i < 64; i++)
        data[i] = (float)i;
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, sizeof data, &p));
    TGT_OK(b, tgl_copy_htod(b, p, data, sizeof data));

    TGT_EXPECT(b, tgl_alloc(b, 16, NULL), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_alloc(b, (size_t)1 << 39, &(tgl_ptr){0}), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_copy_htod(b, p, NULL, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_copy_dtoh(b, NULL, p, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_copy_dtod(b, p + 4, p, 16), TGL_ERR_INVALID_ARGUMENT); /* overlap */
    TGT_EXPECT(b, tgl_unary(b, (tgl_unary_op)TGL_UNARY_COUNT, p, p, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary(b, (tgl_unary_op)-1, p, p, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_binary(b, (tgl_binary_op)99, p, p, p, 4), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p + 2, p + 128, 4), TGL_ERR_INVALID_ARGUMENT); /* misaligned */
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p + 8, 16), TGL_ERR_INVALID_ARGUMENT);     /* partial overlap */
    TGT_EXPECT(b, tgl_binary(b, TGL_BINARY_ADD, p, p + 64, p + 4, 8), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(b, tgl_unary(b, TGL_UNARY_EXP, p, p, SIZE_MAX / 2), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_alloc(NULL, 16, &(tgl_ptr){0}), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_synchronize(NULL), TGL_ERR_INVALID_ARGUMENT);
    /* Inputs may overlap each other; out may equal an input exactly. */
    TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, p, p + 4, p + 128, 8));
    TGT_OK(b, tgl_copy_dtoh(b, junk, p + 128, 8 * sizeof(float)));
    for (int i = 0; i < 8; i++)
        assert_true(junk[i] == data[i] + data[i + 1]);
    expect_contents(b, p, data, 128);
    TGT_OK(b, tgl_free(b, p));
}

/* A failed allocation leaves the backend usable and every earlier buffer intact. */
static void test_out_of_memory(void **state)
{
    tgl_backend *b = backend_of(state);
    unsigned char data[4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i ^ 0x5a);
    tgl_ptr keep, huge = 0;
    TGT_OK(b, tgl_alloc(b, sizeof data, &keep));
    TGT_OK(b, tgl_copy_htod(b, keep, data, sizeof data));
    size_t too_big = ((size_t)1 << 38) - 4096; /* 256 GiB: beyond this machine and the GPUs we test */
    tgl_status st = tgl_alloc(b, too_big, &huge);
    if (st == TGL_OK) {
        tgl_free(b, huge);
        skip(); /* a machine with more than 256 GiB to give */
    }
    assert_int_equal(st, TGL_ERR_OUT_OF_MEMORY);
    assert_int_equal(huge, 0);
    assert_non_null(strstr(tgl_last_error(b), "tgl_alloc"));
    expect_contents(b, keep, data, sizeof data);
    tgl_ptr after;
    TGT_OK(b, tgl_alloc(b, 64, &after));
    TGT_OK(b, tgl_copy_dtod(b, after, keep, 64));
    expect_contents(b, after, data, 64);
    TGT_OK(b, tgl_free(b, after));
    TGT_OK(b, tgl_free(b, keep));
}

/* TGL_MAX_MEMORY: allocating until the budget refuses gives TGL_ERR_OUT_OF_MEMORY; every earlier
 * buffer keeps its data; after a free the next allocation fits again. */
static void test_memory_budget(void **state)
{
    tgl_backend_kind kind = ((ctx *)*state)->kind;
    if (kind == TGL_BACKEND_GL)
        backend_of(state); /* skips under TGL_TEST_CPU_ONLY */
    tgt_setenv("TGL_MAX_MEMORY", "1000000");
    tgl_backend *b = tgt_open(kind);
    tgt_env_restore();
    enum { CHUNK = 96 * 1024, MOST = 1000000 / CHUNK };
    static unsigned char data[MOST + 1][CHUNK];
    tgl_ptr p[MOST + 1] = {0};
    size_t n = 0;
    tgl_status st;
    for (;;) {
        assert_true(n <= MOST);
        for (size_t i = 0; i < CHUNK; i++)
            data[n][i] = (unsigned char)(i * 7 + n);
        if ((st = tgl_alloc(b, CHUNK, &p[n])))
            break;
        TGT_OK(b, tgl_copy_htod(b, p[n], data[n], CHUNK));
        n++;
    }
    assert_int_equal(st, TGL_ERR_OUT_OF_MEMORY);
    assert_int_equal(n, MOST);
    assert_non_null(strstr(tgl_last_error(b), "TGL_MAX_MEMORY"));
    for (size_t k = 0; k < n; k++)
        expect_contents(b, p[k], data[k], CHUNK);
    TGT_OK(b, tgl_free(b, p[0]));
    TGT_OK(b, tgl_alloc(b, CHUNK, &p[0]));
    TGT_OK(b, tgl_copy_dtod(b, p[0], p[1], CHUNK));
    expect_contents(b, p[0], data[1], CHUNK);
    tgl_close(b);
}

/* tgl_memory_info and the GL pool: in_use and peak follow every alloc and free; 600 live
 * allocations of mixed sizes (where the device pools, many share GL buffers) each keep their
 * own contents and serve an op; an alloc/free loop holds no more memory after its first pass
 * (pooled: no GL buffer created); the freed bytes show as pooled where the device pools. */
static void test_memory_info_and_pool(void **state)
{
    ctx *c = *state;
    tgl_backend *b = backend_of(state);
    struct tgl_memory_info m;
    TGT_EXPECT(b, tgl_memory_info(b, NULL), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_memory_info(NULL, &m), TGL_ERR_INVALID_ARGUMENT);
    TGT_OK(b, tgl_memory_info(b, &m));
    assert_int_equal(m.in_use, 0);
    assert_true(m.device_total > 0 || c->kind == TGL_BACKEND_GL); /* llvmpipe does not tell */

    enum { LIVE = 600 };
    static tgl_ptr p[LIVE];
    static size_t bytes[LIVE];
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0x9001);
    uint64_t sum = 0;
    for (int i = 0; i < LIVE; i++) {
        bytes[i] = 4 * (1 + tgt_below(&r, i % 10 == 0 ? 300000 : 3000)); /* mostly pooled sizes */
        TGT_OK(b, tgl_alloc(b, bytes[i], &p[i]));
        sum += bytes[i];
        TGT_OK(b, tgl_fill(b, p[i], (float)i, bytes[i] / 4));
    }
    TGT_OK(b, tgl_memory_info(b, &m));
    assert_int_equal(m.in_use, sum);
    assert_int_equal(m.peak, sum);
    assert_true(m.reserved >= sum);
    /* Neighbours in one GL buffer did not write over each other; an op on three of them too. */
    for (int i = 0; i < LIVE; i++) {
        float first, last;
        TGT_OK(b, tgl_copy_dtoh(b, &first, p[i], 4));
        TGT_OK(b, tgl_copy_dtoh(b, &last, p[i] + bytes[i] - 4, 4));
        if (first != (float)i || last != (float)i)
            fail_msg("allocation %d (%zu bytes) holds %g ... %g", i, bytes[i], first, last);
    }
    size_t n = bytes[1] < bytes[2] ? bytes[1] / 4 : bytes[2] / 4;
    n = n < bytes[3] / 4 ? n : bytes[3] / 4;
    TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, p[1], p[2], p[3], n));
    float got;
    TGT_OK(b, tgl_copy_dtoh(b, &got, p[3] + (n - 1) * 4, 4));
    assert_true(got == 3.0f);

    for (int i = 0; i < LIVE; i += 2) {
        TGT_OK(b, tgl_free(b, p[i]));
        sum -= bytes[i];
    }
    TGT_OK(b, tgl_memory_info(b, &m));
    assert_int_equal(m.in_use, sum);
    assert_true(m.peak > m.in_use);
    int pools = c->kind == TGL_BACKEND_GL && tgl_gl_of(b)->limits.pool; /* llvmpipe carves, GPUs reuse */
    if (pools)
        assert_true(m.pooled > 0);

    /* A model loop: the same temporaries allocated and freed, pass after pass. */
    uint64_t reserved_after_first = 0;
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < LIVE; i += 2)
            TGT_OK(b, tgl_alloc(b, bytes[i], &p[i]));
        for (int i = 0; i < LIVE; i += 2)
            TGT_OK(b, tgl_free(b, p[i]));
        TGT_OK(b, tgl_memory_info(b, &m));
        if (pass == 0)
            reserved_after_first = m.reserved;
        else if (c->kind == TGL_BACKEND_GL) /* pooled: nothing new; else: as many as were freed */
            assert_int_equal(m.reserved, reserved_after_first);
    }
    for (int i = 1; i < LIVE; i += 2)
        TGT_OK(b, tgl_free(b, p[i]));
    TGT_OK(b, tgl_memory_info(b, &m));
    assert_int_equal(m.in_use, 0);
    if (pools)
        assert_true(m.pooled == m.reserved); /* all of it kept for reuse */
    else
        assert_int_equal(m.pooled, 0);
}

/* Buffer textures whose window ends at the very end of a GL buffer object and whose size has
 * bits 8-15 all zero: on GL those windows are bound 256 bytes wider (gl_dispatch.c,
 * texture_window_bytes), into every buffer object's tail room, which must be there (GL rejects
 * a range past the buffer). Adds read their inputs as textures where the renderer does (llvmpipe;
 * elsewhere the same results are checked through SSBOs): 16 allocations of 256 KiB fill one of
 * llvmpipe's 4 MiB pool blocks (windows of 0x40000 bytes), 262164 floats make a buffer of their
 * own whose whole-workgroup piece is 0x100000 bytes and whose 80-byte last piece ends at the
 * allocation's end, and 5 floats a window under 256 bytes. */
static void test_texture_windows_at_buffer_end(void **state)
{
    tgl_backend *b = backend_of(state);
    enum { CHUNKS = 16 };
    static const size_t counts[] = {65536, 262164, 5};
    for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++) {
        size_t n = counts[t], bytes = n * sizeof(float);
        int copies = n == 65536 ? CHUNKS : 1;
        float *x = malloc(bytes), *y = malloc(bytes), *got = malloc(bytes);
        assert_non_null(x);
        assert_non_null(y);
        assert_non_null(got);
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)(i % 1000) * 0.25f; /* sums exact in f32 */
            y[i] = (float)(i % 777) - 300.0f;
        }
        tgl_ptr in[CHUNKS], out;
        for (int c = 0; c < copies; c++) {
            TGT_OK(b, tgl_alloc(b, bytes, &in[c]));
            TGT_OK(b, tgl_copy_htod(b, in[c], c % 2 ? y : x, bytes));
        }
        TGT_OK(b, tgl_alloc(b, bytes, &out));
        for (int c = 0; c < copies; c++) {
            tgl_ptr other = copies > 1 ? in[(c + 1) % copies] : in[c];
            TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, in[c], other, out, n));
            TGT_OK(b, tgl_copy_dtoh(b, got, out, bytes));
            for (size_t i = 0; i < n; i++) {
                float want = copies > 1 ? x[i] + y[i] : x[i] + x[i];
                if (got[i] != want)
                    fail_msg("n %zu, allocation %d: element %zu is %g, want %g", n, c, i, got[i], want);
            }
        }
        for (int c = 0; c < copies; c++)
            TGT_OK(b, tgl_free(b, in[c]));
        TGT_OK(b, tgl_free(b, out));
        free(x);
        free(y);
        free(got);
    }
}

void tgl_gl_test_force_copy_kernel(tgl_backend *b, int on);

/* tgl_copy_dtod through both GL paths (the copy kernel GPUs use, glCopyBufferSubData llvmpipe
 * uses): word-aligned copies of many lengths and word offsets (vec4 body with a scalar tail,
 * scalar only), words that are not floats (NaN payloads, all-ones), a copy right after a
 * dispatch wrote its source, and unaligned copies, which always take glCopyBufferSubData; the
 * kernel walking forward and backward in turn. On the CPU backend the same copies run once. */
static void test_dtod_paths(void **state)
{
    ctx *c = *state;
    tgl_backend *b = backend_of(state);
    enum { WORDS = (1 << 18) + 3, ROOM = WORDS + 64 };
    uint32_t *src = malloc(ROOM * 4), *back = malloc(ROOM * 4);
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0xD70D);
    for (size_t i = 0; i < ROOM; i++)
        src[i] = i % 5 == 0 ? 0x7fc01234u : i % 7 == 0 ? 0xffffffffu : (uint32_t)tgt_next(&r);
    tgl_ptr p, q;
    TGT_OK(b, tgl_alloc(b, ROOM * 4, &p));
    TGT_OK(b, tgl_alloc(b, ROOM * 4, &q));
    static const size_t lens[] = {1, 3, 4, 5, 17, 1023, 4096, WORDS};
    for (int kernel = 0; kernel < (c->kind == TGL_BACKEND_GL ? 2 : 1); kernel++) {
        if (c->kind == TGL_BACKEND_GL) {
            tgl_gl_test_force_copy_kernel(b, kernel);
            /* every copy turns round (glsl/common/sweep.glsl): the kernel walks both ways */
            tgl_gl_of(b)->limits.sweep_bytes = 1;
        }
        TGT_OK(b, tgl_copy_htod(b, p, src, ROOM * 4));
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (size_t so = 0; so < 8; so += 3)
                for (size_t d = 0; d < 6; d += 1 + (li & 1)) {
                    size_t len = lens[li];
                    TGT_OK(b, tgl_copy_dtod(b, q + d * 4, p + so * 4, len * 4));
                    TGT_OK(b, tgl_copy_dtoh(b, back, q + d * 4, len * 4));
                    if (memcmp(back, src + so, len * 4))
                        fail_msg("%s: %zu words from word %zu to word %zu differ", kernel ? "kernel" : "glCopy",
                                 len, so, d);
                }
        /* The source written by a pending dispatch. */
        TGT_OK(b, tgl_fill(b, p + 8, 2.5f, 1000));
        TGT_OK(b, tgl_copy_dtod(b, q, p + 8, 4000));
        float f[1000];
        TGT_OK(b, tgl_copy_dtoh(b, f, q, sizeof f));
        for (int i = 0; i < 1000; i++)
            assert_true(f[i] == 2.5f);
        /* Unaligned: byte offsets and lengths. */
        TGT_OK(b, tgl_copy_htod(b, p, src, ROOM * 4));
        TGT_OK(b, tgl_copy_dtod(b, q + 1, p + 6, 4099));
        TGT_OK(b, tgl_copy_dtoh(b, back, q + 1, 4099));
        assert_memory_equal(back, (unsigned char *)src + 6, 4099);
    }
    TGT_OK(b, tgl_free(b, p));
    TGT_OK(b, tgl_free(b, q));
    free(src);
    free(back);
}

void tgl_gl_test_force_transfer_staging(tgl_backend *b, int on);
int tgl_gl_test_force_readback_mapped(tgl_backend *b, int on);

/* Uploads and downloads every way GL has (mapping the tensor's buffer, llvmpipe's; staging
 * buffers the GPU copies to and from, GPUs'; with staging, downloads of up to 4 KiB through the
 * persistently mapped buffer the copy kernel writes, where the device has glBufferStorage):
 * under, at and past the 1 MiB at which uploads stop using glBufferSubData, around the 4 KiB of
 * that buffer, and past one and two 8 MiB staging chunks, at byte offsets (word-aligned and
 * not); into and out of a buffer a pending dispatch writes. On the CPU backend once. */
static void test_transfer_paths(void **state)
{
    ctx *c = *state;
    tgl_backend *b = backend_of(state);
    enum { MIB = 1 << 20, ROOM = 20 * MIB + 64 };
    unsigned char *src = malloc(ROOM), *back = malloc(ROOM);
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0x57A9);
    for (size_t i = 0; i < ROOM; i++)
        src[i] = (unsigned char)tgt_next(&r);
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, ROOM, &p));
    static const size_t lens[] = {1, 4, 4092, 4096, 4100, MIB - 1, MIB, MIB + 5, 8 * MIB, 8 * MIB + 3, 20 * MIB + 7};
    static const size_t offs[] = {0, 5, 8, 10};
    /* GL: both paths, the host's copies on one thread and on three (parts of whole pages, the
     * last one shorter); then staged with the mapped readback buffer, where the device has one. */
    for (int path = 0; path < (c->kind == TGL_BACKEND_GL ? 5 : 1); path++) {
        int staged = path == 4 || (path & 1);
        unsigned threads = path & 2 ? 3u : 1u;
        const char *how = path == 4 ? "staged, small ones read back mapped" : staged ? "staged" : "mapped";
        if (c->kind == TGL_BACKEND_GL) {
            tgl_gl_test_force_transfer_staging(b, staged);
            tgl_gl_test_set_transfer_threads(b, threads);
            if (!tgl_gl_test_force_readback_mapped(b, path == 4))
                break; /* path 4 where the device has no persistent maps */
        }
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++) {
                size_t len = lens[li], off = offs[oi];
                memset(back, 0, len);
                TGT_OK(b, tgl_copy_htod(b, p + off, src + li, len));
                TGT_OK(b, tgl_copy_dtoh(b, back, p + off, len));
                if (memcmp(back, src + li, len))
                    fail_msg("%s, %u thread(s): %zu bytes at byte %zu came back changed (seed %llu)", how, threads,
                             len, off, (unsigned long long)tgt_seed());
            }
        /* A pending fill writes the buffer; the download must wait for it, the upload after it
         * must land over it. */
        TGT_OK(b, tgl_fill(b, p + 4096, -3.0f, 4));
        TGT_OK(b, tgl_copy_dtoh(b, back, p + 4096, 16)); /* small: the readback path's wait */
        for (size_t i = 0; i < 4; i++) {
            float x;
            memcpy(&x, back + 4 * i, sizeof x);
            if (x != -3.0f)
                fail_msg("%s: element %zu is %g after the small fill", how, i, x);
        }
        TGT_OK(b, tgl_fill(b, p, 1.5f, MIB)); /* the first 4 MiB */
        TGT_OK(b, tgl_copy_dtoh(b, back, p, 12 * MIB));
        for (size_t i = 0; i < MIB; i++) {
            float x;
            memcpy(&x, back + 4 * i, sizeof x);
            if (x != 1.5f)
                fail_msg("%s: element %zu is %g after the fill", how, i, x);
        }
        /* past it, the last upload: src + 10 at byte 10 */
        assert_memory_equal(back + 4 * MIB, src + 4 * MIB, 8 * MIB);
        TGT_OK(b, tgl_fill(b, p, 2.5f, 3 * MIB)); /* 12 MiB */
        TGT_OK(b, tgl_copy_htod(b, p, src, 9 * MIB));
        TGT_OK(b, tgl_copy_dtoh(b, back, p, 9 * MIB));
        assert_memory_equal(back, src, 9 * MIB);
    }
    TGT_OK(b, tgl_free(b, p));
    free(src);
    free(back);
}

/* The threaded host copy alone: every length around its part and page sizes, every thread
 * count (0 and more than it allows included), bytes past the end untouched. */
static void test_host_copy(void **state)
{
    (void)state;
    enum { MIB = 1 << 20, ROOM = 9 * MIB + 8192, GUARD = 64 };
    unsigned char *src = malloc(ROOM), *dst = malloc(ROOM + GUARD);
    assert_non_null(src);
    assert_non_null(dst);
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0xC0B7);
    for (size_t i = 0; i < ROOM; i++)
        src[i] = (unsigned char)tgt_next(&r);
    static const size_t lens[] = {0, 1, 4095, MIB - 1, MIB, 2 * MIB - 1, 2 * MIB, 2 * MIB + 3, 3 * MIB + 4097,
                                  8 * MIB + 1, 9 * MIB + 8192};
    static const unsigned threads[] = {0, 1, 2, 3, 4, 7, 8, 100};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
            size_t len = lens[li];
            memset(dst, 0xA5, ROOM + GUARD);
            tgl__host_copy(dst, src, len, threads[ti]);
            if (memcmp(dst, src, len))
                fail_msg("%zu bytes on %u threads came out changed (seed %llu)", len, threads[ti],
                         (unsigned long long)tgt_seed());
            for (size_t i = len; i < len + GUARD; i++)
                if (dst[i] != 0xA5)
                    fail_msg("%zu bytes on %u threads wrote byte %zu past the end", len, threads[ti], i - len);
        }
    free(src);
    free(dst);
}

/* 10,000 random rounds of alloc / free / htod / dtoh / dtod against a host shadow. */
#define LIVE 48
static void test_random_rounds(void **state)
{
    tgl_backend *b = backend_of(state);
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed() ^ 0xA110C);
    struct { tgl_ptr p; size_t bytes; unsigned char *shadow; } live[LIVE] = {{0}};
    unsigned char *tmp = malloc(65536);
    for (int round = 0; round < 10000; round++) {
        size_t i = tgt_below(&r, LIVE);
        unsigned action = (unsigned)tgt_below(&r, 5);
        if (!live[i].p || action == 0) { /* (re)allocate */
            if (live[i].p) {
                TGT_OK(b, tgl_free(b, live[i].p));
                free(live[i].shadow);
            }
            live[i].bytes = 1 + tgt_below(&r, 65536);
            live[i].shadow = malloc(live[i].bytes);
            for (size_t k = 0; k < live[i].bytes; k++)
                live[i].shadow[k] = (unsigned char)tgt_next(&r);
            TGT_OK(b, tgl_alloc(b, live[i].bytes, &live[i].p));
            TGT_OK(b, tgl_copy_htod(b, live[i].p, live[i].shadow, live[i].bytes));
            continue;
        }
        size_t off = tgt_below(&r, live[i].bytes);
        size_t len = 1 + tgt_below(&r, live[i].bytes - off);
        if (action == 1) { /* partial upload */
            for (size_t k = 0; k < len; k++)
                tmp[k] = (unsigned char)tgt_next(&r);
            TGT_OK(b, tgl_copy_htod(b, live[i].p + off, tmp, len));
            memcpy(live[i].shadow + off, tmp, len);
        } else if (action == 2) { /* partial download */
            TGT_OK(b, tgl_copy_dtoh(b, tmp, live[i].p + off, len));
            if (memcmp(tmp, live[i].shadow + off, len))
                fail_msg("round %d: download of [%zu, +%zu) differs (seed %llu)", round, off, len,
                         (unsigned long long)tgt_seed());
        } else if (action == 3) { /* device-to-device into another live allocation */
            size_t j = tgt_below(&r, LIVE);
            if (!live[j].p || j == i)
                continue;
            size_t n = len < live[j].bytes ? len : live[j].bytes;
            size_t doff = tgt_below(&r, live[j].bytes - n + 1);
            TGT_OK(b, tgl_copy_dtod(b, live[j].p + doff, live[i].p + off, n));
            memcpy(live[j].shadow + doff, live[i].shadow + off, n);
        } else { /* free and forget */
            TGT_OK(b, tgl_free(b, live[i].p));
            TGT_EXPECT(b, tgl_copy_dtoh(b, tmp, live[i].p, 1), TGL_ERR_INVALID_POINTER);
            free(live[i].shadow);
            live[i].p = 0;
        }
    }
    for (size_t i = 0; i < LIVE; i++) {
        if (!live[i].p)
            continue;
        expect_contents(b, live[i].p, live[i].shadow, live[i].bytes);
        TGT_OK(b, tgl_free(b, live[i].p));
        free(live[i].shadow);
    }
    free(tmp);
}

/* What tgl_ptr's encoding guarantees (src/core/handles.h): a freed pointer is refused however
 * many times its slot was reused since (the old 8-bit generation came round after 256), another
 * backend's pointers are refused even after many allocations on both (the old per-backend key
 * let some decode to a live slot), and an offset that carries into the allocation's id names
 * no live allocation (the old p + 2^38 was the next slot's pointer). The CPU backend runs the
 * long loops (the table is the same code for both kinds); GL a short version. */
static void test_pointer_identity(void **state)
{
    tgl_backend *b = backend_of(state);
    tgl_backend_kind kind = ((ctx *)*state)->kind;
    const int cycles = kind == TGL_BACKEND_CPU ? 200000 : 1000;
    enum { N_LIVE = 512 };
    tgl_ptr *live = malloc(N_LIVE * sizeof *live);
    for (int i = 0; i < N_LIVE; i++)
        TGT_OK(b, tgl_alloc(b, 64 + (size_t)(i % 7) * 1000, &live[i]));
    uint8_t junk[16];
    /* a stale pointer across many reuses of its slot */
    tgl_ptr stale, q;
    TGT_OK(b, tgl_alloc(b, 64, &stale));
    TGT_OK(b, tgl_free(b, stale));
    for (int i = 0; i < cycles; i++) {
        TGT_OK(b, tgl_alloc(b, 64, &q));
        if (q == stale)
            fail_msg("allocation %d after a free returned the freed pointer again", i);
        TGT_OK(b, tgl_free(b, q));
    }
    TGT_EXPECT(b, tgl_copy_dtoh(b, junk, stale, 4), TGL_ERR_INVALID_POINTER);
    TGT_EXPECT(b, tgl_free(b, stale), TGL_ERR_INVALID_POINTER);
    /* another backend's pointers, through its own many cycles */
    tgl_backend *other = tgt_open(kind);
    for (int i = 0; i < cycles; i++) {
        TGT_OK(other, tgl_alloc(other, 64 + (size_t)(i % 7) * 1000, &q));
        if (tgl_copy_dtoh(b, junk, q, 4) != TGL_ERR_INVALID_POINTER)
            fail_msg("cycle %d: another backend's pointer %#llx was accepted here", i, (unsigned long long)q);
        TGT_OK(other, tgl_free(other, q));
    }
    tgl_close(other);
    /* offsets that carry into (or borrow from) the id, by 1..3 units of every bit position */
    for (int i = 0; i < N_LIVE; i++) {
        size_t bytes = 64 + (size_t)(i % 7) * 1000;
        for (int bit = 0; bit < 62; bit++)
            for (uint64_t k = 1; k <= 3; k++) {
                uint64_t d = k << bit;
                if (d + 4 <= bytes)
                    continue;
                if (tgl_copy_dtoh(b, junk, live[i] + d, 4) != TGL_ERR_INVALID_POINTER ||
                    tgl_copy_dtoh(b, junk, live[i] - d, 4) != TGL_ERR_INVALID_POINTER)
                    fail_msg("allocation %d: a pointer %llu x 2^%d bytes away was accepted", i, (unsigned long long)k, bit);
            }
    }
    for (int i = 0; i < N_LIVE; i++)
        TGT_OK(b, tgl_free(b, live[i]));
    free(live);
}

/* Reads n floats at p. */
static void download(tgl_backend *b, tgl_ptr p, float *out, size_t n)
{
    TGT_OK(b, tgl_copy_dtoh(b, out, p, n * sizeof(float)));
}

/* Each got within 1e-4 of want, relative above 1 (sums of the same products in other orders). */
static void expect_close(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i]))))
            fail_msg("%s: element %zu is %.9g, with room for the working buffers %.9g", what, i, got[i], want[i]);
}

/* GL: the working buffers the backend keeps between calls (split-K partials, conv_im2col's
 * im2col and products) count against TGL_MAX_MEMORY beside the live allocations: an allocation
 * that needs their room takes it, and with no room left the GEMM runs unsplit and the
 * convolution without them, to the same results. */
static void test_budget_counts_kept_buffers(void **state)
{
    (void)state;
    if (tgt_cpu_only()) {
        printf("TGL_TEST_CPU_ONLY=1: the GL part is skipped\n");
        skip();
    }
    enum { BUDGET = 4 << 20, M = 32, N = 32, K = 4096, SPLITS = 8 };
    tgt_setenv("TGL_MAX_MEMORY", "4194304");
    /* a profile with both (tiled GEMM kernels split k; conv_im2col is llvmpipe's alone) */
    tgt_setenv("TGL_DEVICE_PROFILE", "generic-gpu,conv_im2col=1");
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    tgt_env_restore();
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed());
    const tgl_conv2d_desc d = {.batch = 2, .in_channels = 16, .in_h = 30, .in_w = 34, .out_channels = 32,
                               .kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
    const size_t n_in = 2 * 16 * 30 * 34, n_f = 32 * 16 * 9, n_out = 2 * 32 * 30 * 34;
    size_t n_host = M * K + K * N + 2 * M * N + n_in + n_f + 32 + 2 * n_out;
    float *h = malloc(n_host * sizeof(float));
    assert_non_null(h);
    float *a = h, *w = a + M * K, *c_room = w + K * N, *c_full = c_room + M * N, *in = c_full + M * N, *f = in + n_in,
          *bias = f + n_f, *o_room = bias + 32, *o_full = o_room + n_out;
    for (float *x = h; x < c_room; x++)
        *x = tgt_uniform(&r, -1.0f, 1.0f);
    for (float *x = in; x < o_room; x++)
        *x = tgt_uniform(&r, -1.0f, 1.0f);
    tgl_ptr pa = tgt_upload(b, a, M * K, 0), pw = tgt_upload(b, w, K * N, 0), pc, pin = tgt_upload(b, in, n_in, 0),
            pf = tgt_upload(b, f, n_f, 0), pbias = tgt_upload(b, bias, 32, 0), pout, fill;
    TGT_OK(b, tgl_alloc(b, M * N * sizeof(float), &pc));
    TGT_OK(b, tgl_alloc(b, n_out * sizeof(float), &pout));

    /* with room: split-K keeps its partials */
    tgl_gl_test_force_gemm_splits(b, SPLITS);
    TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, M, N, K, 1.0f, pa, K, pw, N, 0.0f, pc, N));
    download(b, pc, c_room, M * N);
    if (b->mem_scratch < (SPLITS - 1) * M * N * sizeof(float)) /* the kernels under TGL_LIMITS=es31-min */
        printf("the GEMM kernel here does not split k: the budget's check on its partials is not reached\n");
    TGT_OK(b, tgl_conv2d(b, &d, pin, pf, pbias, pout));
    download(b, pout, o_room, n_out);
    assert_true(b->mem_in_use + b->mem_scratch <= BUDGET);

    /* the rest of the budget in one allocation: the kept buffers give way */
    uint64_t rest = BUDGET - b->mem_in_use;
    TGT_OK(b, tgl_alloc(b, rest, &fill));
    assert_true(b->mem_in_use == BUDGET && b->mem_scratch == 0);
    TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, M, N, K, 1.0f, pa, K, pw, N, 0.0f, pc, N));
    TGT_OK(b, tgl_conv2d(b, &d, pin, pf, pbias, pout));
    assert_true(b->mem_scratch == 0);
    download(b, pc, c_full, M * N);
    download(b, pout, o_full, n_out);
    expect_close(c_full, c_room, M * N, "tgl_gemm under a full budget");
    expect_close(o_full, o_room, n_out, "tgl_conv2d under a full budget");
    tgl_gl_test_force_gemm_splits(b, 0);
    free(h);
    tgl_close(b);
}

/* Whether n floats have the same bits (NaN poison included). */
static int same_bits(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t x, y;
        memcpy(&x, &a[i], 4);
        memcpy(&y, &b[i], 4);
        if (x != y)
            return 0;
    }
    return 1;
}

/* One op of test_full_budget_ops: runs it into out (n floats) and returns its status. */
typedef tgl_status (*budget_op)(tgl_backend *b, const tgl_ptr *in, tgl_ptr out);

static tgl_status op_sum(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    const size_t shape[2] = {4, 65536};
    return tgl_reduce(b, TGL_REDUCE_SUM, in[0], out, shape, 2, 1);
}

static tgl_status op_argmax(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    const size_t shape[2] = {4, 65536};
    return tgl_argmax(b, in[0], out, shape, 2, 1);
}

static tgl_status op_decode(tgl_backend *b, const tgl_ptr *in, tgl_ptr out)
{
    /* q [1, 8, 1, 64] at in[0], k and v [1, 8, 512, 64] at in[0] and in[1] */
    return tgl_attention(b, in[0], in[0], in[1], out, 1, 8, 1, 512, 64, 0.125f, 0);
}

/* GL ops whose working buffers (reduction partials, decode chunks) find no room under
 * TGL_MAX_MEMORY: each either runs to the result it gives with room, or fails with
 * TGL_ERR_OUT_OF_MEMORY naming the budget and what the buffer is for, its output untouched; with
 * room again it runs. */
static void test_full_budget_ops(void **state)
{
    (void)state;
    if (tgt_cpu_only()) {
        printf("TGL_TEST_CPU_ONLY=1: the GL part is skipped\n");
        skip();
    }
    enum { BUDGET = 3 << 20, N_IN = 4 * 65536, N_OUT = 4096 };
    tgt_setenv("TGL_MAX_MEMORY", "3145728");
    tgl_backend *b = tgt_open(TGL_BACKEND_GL);
    tgt_env_restore();
    tgt_rng r;
    tgt_rng_init(&r, tgt_seed());
    float *x = malloc(2 * N_IN * sizeof(float)), want[N_OUT], got[N_OUT], poison[N_OUT];
    assert_non_null(x);
    for (size_t i = 0; i < 2 * N_IN; i++)
        x[i] = tgt_uniform(&r, -1.0f, 1.0f);
    tgt_poison(poison, N_OUT);
    tgl_ptr in[2] = {tgt_upload(b, x, N_IN, 0), tgt_upload(b, x + N_IN, N_IN, 0)}, out, fill;
    TGT_OK(b, tgl_alloc(b, N_OUT * sizeof(float), &out));
    static const struct {
        const char *name;
        budget_op run;
        size_t n;         /* floats of out it writes */
        const char *what; /* what its refusal says the working buffer is for */
    } ops[] = {{"tgl_reduce", op_sum, 4, "reduction's"},
               {"tgl_argmax", op_argmax, 4, "argmax"},
               {"tgl_attention (decode)", op_decode, 512, "attention's"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        TGT_OK(b, ops[i].run(b, in, out));
        download(b, out, want, ops[i].n);
        TGT_OK(b, tgl_copy_htod(b, out, poison, sizeof poison));
        TGT_OK(b, tgl_alloc(b, BUDGET - b->mem_in_use, &fill)); /* the kept buffers give way */
        tgl_status st = ops[i].run(b, in, out);
        download(b, out, got, N_OUT);
        if (st == TGL_ERR_OUT_OF_MEMORY) {
            if (!strstr(tgl_last_error(b), "TGL_MAX_MEMORY") || !strstr(tgl_last_error(b), ops[i].what))
                fail_msg("%s: %s", ops[i].name, tgl_last_error(b));
            printf("%s under a full budget: %s\n", ops[i].name, tgl_last_error(b));
            if (!same_bits(got, poison, N_OUT))
                fail_msg("%s failed under a full budget but wrote its output", ops[i].name);
        } else {
            TGT_OK(b, st);
            if (!same_bits(got, want, ops[i].n))
                fail_msg("%s under a full budget: another result", ops[i].name);
        }
        assert_true(b->mem_in_use + b->mem_scratch <= BUDGET);
        TGT_OK(b, tgl_free(b, fill));
        TGT_OK(b, ops[i].run(b, in, out));
        download(b, out, got, ops[i].n);
        if (!same_bits(got, want, ops[i].n))
            fail_msg("%s with room again: another result", ops[i].name);
    }
    free(x);
    tgl_close(b);
}

#define PER_BACKEND(f)                                                                    \
    cmocka_unit_test_prestate_setup_teardown(f, setup, teardown, &gl_ctx),               \
        cmocka_unit_test_prestate_setup_teardown(f, setup, teardown, &cpu_ctx)

int main(void)
{
    const struct CMUnitTest tests[] = {
        PER_BACKEND(test_roundtrip_and_offsets), PER_BACKEND(test_size_zero),
        PER_BACKEND(test_invalid_pointers),      PER_BACKEND(test_invalid_arguments),
        PER_BACKEND(test_out_of_memory),         PER_BACKEND(test_random_rounds),
        PER_BACKEND(test_dtod_paths),            PER_BACKEND(test_memory_info_and_pool),
        PER_BACKEND(test_memory_budget),         PER_BACKEND(test_texture_windows_at_buffer_end),
        PER_BACKEND(test_transfer_paths),         PER_BACKEND(test_pointer_identity),
        cmocka_unit_test(test_host_copy),         cmocka_unit_test(test_budget_counts_kept_buffers),
        cmocka_unit_test(test_full_budget_ops),
    };
    return cmocka_run_group_tests_name("memory (gl, cpu)", tests, NULL, NULL);
}
