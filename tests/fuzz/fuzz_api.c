/* libFuzzer harness: random call sequences, mostly with bad arguments, on the public API.
 *
 * The input is a program: each step takes an opcode byte and argument bytes and makes one
 * call (alloc, free, the three copies, and element-wise, fill, scale_add, map, reduce, argmax,
 * softmax, rmsnorm, gemm, permute, gather, cast, and the descriptor ops flip, roll, repeat,
 * pad, one_hot, masked_fill, gather, index_select, scatter, index_add, sort and topk over made-up
 * layouts, matvec_t and matvec_t_fused over made-up weights, pool2d,
 * adaptive pool2d, interpolate,
 * the scans, masked_select and nonzero) on up to 8 allocations, with pointers
 * that are sometimes null, made up, stale, misaligned, past the end or another backend's (a
 * third, CPU backend in the same process whose allocations are made and freed anew for every
 * input), sizes that overflow, strides and widths at the int64 limits and enums out of range.
 * Oracle:
 *  - a call that fails must change no byte of any live allocation (checked by reading every
 *    allocation back before and after) and must leave a message;
 *  - with TGL_FUZZ_GL=1 every call is made on a GL backend too: the statuses must match, and
 *    after each successful call every live allocation must agree with the CPU backend's
 *    (bit for bit for copies, within 1e-3 relative per element for math; values the CPU makes
 *    non-finite or huge are reset on both sides so one overflow does not end the comparison);
 *  - the other backend's allocations never change, and a copy through it to a pointer of the
 *    backend under test always fails (pointer confusion between backends of one process).
 * The CPU-only mode runs ~10^4 steps a second; the GL mode ~10^2 on llvmpipe. */
#include "tensorgl.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 8, MAX_BYTES = 4096, STEPS = 64 };

typedef struct side {
    tgl_backend *b;
    tgl_ptr p[SLOTS];
    size_t bytes[SLOTS];
    tgl_ptr stale[SLOTS]; /* the last freed pointer of each slot */
} side;

typedef struct input {
    const uint8_t *d;
    size_t left;
} input;

static uint8_t byte(input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->d++;
}

static size_t small(input *in, size_t limit)
{
    return (size_t)byte(in) % (limit + 1);
}

static side cpu, gl, alien;
static int use_gl;
static uint8_t before[2][SLOTS][MAX_BYTES], after[SLOTS][MAX_BYTES];

static void open_side(side *s, tgl_backend_kind kind)
{
    tgl_options o = {.kind = kind};
    if (tgl_open(&o, &s->b))
        abort();
}

/* A pointer argument: usually a slot plus an offset, sometimes something wrong. */
static tgl_ptr pick_ptr(input *in, const side *s)
{
    uint8_t k = byte(in), slot = byte(in) % SLOTS;
    size_t off = (size_t)byte(in) * 4;
    switch (k % 16) {
    case 0: return 0;
    case 1: return s->stale[slot] ? s->stale[slot] + off : 0;
    case 2: return ((uint64_t)byte(in) << 56) | off; /* made up */
    case 3: return s->p[slot] ? s->p[slot] + off + 1 : 0; /* misaligned */
    case 4: return s->p[slot] ? s->p[slot] + s->bytes[slot] : 0; /* at the end */
    case 5: return alien.p[slot] + off % (alien.bytes[slot] + 1); /* another backend's */
    default: return s->p[slot] ? s->p[slot] + (k % 3 ? 0 : off % (s->bytes[slot] + 1)) : 0;
    }
}

static size_t pick_count(input *in)
{
    uint8_t k = byte(in);
    if (k == 255)
        return SIZE_MAX / 2 + byte(in); /* overflows every byte count */
    if (k == 254)
        return 0;
    return (size_t)k * 4 + small(in, 3);
}

static void snapshot(side *s, uint8_t out[SLOTS][MAX_BYTES])
{
    for (int i = 0; i < SLOTS; i++)
        if (s->p[i] && tgl_copy_dtoh(s->b, out[i], s->p[i], s->bytes[i]))
            abort();
}

/* A failed call must have left every live allocation of s as `was`. */
static void unchanged(side *s, uint8_t was[SLOTS][MAX_BYTES])
{
    if (!tgl_last_error(s->b)[0])
        abort(); /* a failure without a message */
    snapshot(s, after);
    for (int i = 0; i < SLOTS; i++)
        if (s->p[i] && memcmp(was[i], after[i], s->bytes[i]))
            abort(); /* a failed call changed a buffer */
}

/* A signed argument: small, or at the int64 limits. */
static int64_t some_int(input *in)
{
    uint8_t k = byte(in);
    return k == 0xFF ? INT64_MIN : k == 0xFE ? INT64_MAX : k == 0xFD ? -INT64_MAX : (int64_t)(int8_t)k / 8;
}

/* A descriptor of up to 4 dims over a pointer argument: any dtype code (some out of range),
 * extents up to 5, strides small or at the int64 limits. */
static tgl_tensor some_tensor(input *in, const side *s)
{
    tgl_tensor t = {.data = pick_ptr(in, s), .dtype = (tgl_dtype)(byte(in) % (TGL_DTYPE_COUNT + 1))};
    t.ndim = small(in, 4) + (byte(in) == 0x55 ? TGL_MAX_DIMS : 0);
    for (size_t d = 0; d < t.ndim && d < 4; d++) {
        t.shape[d] = small(in, 5);
        t.strides[d] = some_int(in);
    }
    return t;
}

/* The descriptor ops that move elements (tensorgl.h's flip .. masked_fill, gather, index_select,
 * scatter, index_add, sort, topk, masked_select, nonzero), and tgl_matvec_t's two forms. */
static tgl_status layout_call(tgl_backend *b, input *in, const side *s)
{
    tgl_tensor x = some_tensor(in, s), y = some_tensor(in, s);
    size_t n = small(in, 9), sizes[TGL_MAX_DIMS];
    int64_t ints[2 * TGL_MAX_DIMS];
    for (size_t k = 0; k < TGL_MAX_DIMS; k++)
        sizes[k] = small(in, 4);
    for (size_t k = 0; k < 2 * TGL_MAX_DIMS; k++)
        ints[k] = some_int(in);
    switch (byte(in) % 15) {
    case 0: return tgl_flip(b, &x, sizes, n % 5, &y);
    case 1: return tgl_roll(b, &x, ints, n, sizes, &y);
    case 2: return tgl_repeat(b, &x, sizes, n, &y);
    case 3: return tgl_pad(b, &x, ints, small(in, 9), (tgl_pad_mode)(byte(in) % (TGL_PAD_MODE_COUNT + 1)),
                           (double)(int8_t)byte(in), &y);
    case 4: return tgl_one_hot(b, &x, &y);
    case 5: { /* an index of made-up bits: most out of range, refused before anything is written */
        tgl_tensor index = some_tensor(in, s);
        return tgl_gather(b, &x, small(in, 5), &index, &y);
    }
    case 6: {
        tgl_tensor index = some_tensor(in, s);
        return tgl_index_select(b, &x, small(in, 5), &index, &y);
    }
    case 7: { /* a made-up pooling: sizes small or at the limits, kind and modes out of range */
        size_t f[12]; /* read in order: an initializer's expressions are not sequenced */
        for (int k = 0; k < 12; k++)
            f[k] = byte(in) == 0xFF ? SIZE_MAX : small(in, k < 4 ? 9 : 4);
        tgl_pool2d_desc d = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], TGL_POOL_MAX, 0, 0};
        d.kind = (tgl_pool_kind)(byte(in) % 3);
        d.ceil_mode = byte(in) % 2;
        d.count_include_pad = byte(in) % 2;
        int null_desc = byte(in) == 0x42;
        tgl_ptr src = pick_ptr(in, s), dst = pick_ptr(in, s);
        uint8_t form = byte(in);
        if (form % 4 == 0) /* the adaptive form over the same sizes */
            return tgl_adaptive_pool2d(b, d.kind, f[0], f[1], f[2], f[3], f[4], f[5], src, dst);
        if (form % 4 == 1) /* max with indices */
            return tgl_max_pool2d_indices(b, null_desc ? NULL : &d, src, dst, pick_ptr(in, s));
        return tgl_pool2d(b, null_desc ? NULL : &d, src, dst);
    }
    case 8: { /* a scan, cummax and cummin with made-up indices or none */
        tgl_tensor at = some_tensor(in, s);
        size_t axis = small(in, 5);
        switch (byte(in) % 5) {
        case 0: return tgl_cumsum(b, &x, axis, &y);
        case 1: return tgl_cumprod(b, &x, axis, &y);
        case 2: return tgl_cummax(b, &x, axis, &y, &at);
        case 3: return tgl_cummin(b, &x, axis, &y, &at);
        default: return tgl_cummax(b, &x, axis, &y, NULL);
        }
    }
    case 10: { /* a made-up resize: sizes small or at the limits, modes and scales out of range */
        size_t f[6];
        for (int k = 0; k < 6; k++)
            f[k] = byte(in) == 0xFF ? SIZE_MAX : small(in, k < 2 ? 4 : 9);
        static const double scales[] = {0.0, 0.5, 2.0, 1.7, -1.0, 1e-300, 1e300, 3.0};
        tgl_interpolate_desc d = {f[0], f[1], f[2], f[3], f[4], f[5], TGL_INTERP_NEAREST, 0, 0.0, 0.0};
        d.mode = (tgl_interp_mode)(byte(in) % (TGL_INTERP_MODE_COUNT + 1));
        d.align_corners = byte(in) % 3;
        d.scale_h = scales[byte(in) % 8];
        d.scale_w = scales[byte(in) % 8];
        tgl_ptr src = pick_ptr(in, s), dst = pick_ptr(in, s);
        return tgl_interpolate(b, byte(in) == 0x42 ? NULL : &d, src, dst);
    }
    case 11: { /* a made-up scatter: reduce out of range at times, indices of made-up bits */
        tgl_tensor index = some_tensor(in, s);
        size_t axis = small(in, 5);
        if (byte(in) % 3 == 0)
            return tgl_index_add(b, &x, axis, &index, &y);
        return tgl_scatter(b, &x, axis, &index, &y, (tgl_scatter_reduce)(byte(in) % (TGL_SCATTER_REDUCE_COUNT + 1)));
    }
    case 12: { /* a made-up sort or topk: outputs absent at times, k past the line at times */
        tgl_tensor at = some_tensor(in, s);
        int form = byte(in);
        const tgl_tensor *values = form & 1 ? &y : NULL, *indices = form & 2 ? &at : NULL;
        if (form & 4)
            return tgl_topk(b, &x, small(in, 5), small(in, 9), form & 8, values, indices);
        return tgl_sort(b, &x, small(in, 5), form & 8, values, indices);
    }
    case 13: { /* a made-up linear layer (x as x, y as y): any dtype as the weight, tgl_matvec_t or its
                * fused form with a bias at times, beta NaN or infinite at times, the activation and
                * gate out of range at times */
        tgl_tensor w = some_tensor(in, s), bias = some_tensor(in, s);
        int form = byte(in);
        if (form & 1)
            return tgl_matvec_t(b, &w, &x, &y);
        static const float betas[] = {0.0f, 1.0f, -0.5f, NAN, INFINITY};
        float beta = betas[byte(in) % 5], slope = byte(in) == 0x77 ? NAN : 0.1f;
        return tgl_matvec_t_fused(b, &w, &x, beta, form & 2 ? &bias : NULL,
                                  (tgl_activation)(byte(in) % (TGL_ACTIVATION_COUNT + 1)), slope, (form >> 2) % 3, &y);
    }
    case 9: { /* a made-up mask and count: packed outputs of any capacity */
        tgl_tensor mask = some_tensor(in, s), count = some_tensor(in, s);
        return byte(in) % 2 ? tgl_nonzero(b, &x, &y, &count) : tgl_masked_select(b, &x, &mask, &y, &count);
    }
    default: {
        tgl_tensor mask = some_tensor(in, s);
        return tgl_masked_fill(b, &x, &mask, (double)(int8_t)byte(in), &y);
    }
    }
}

/* One call on side s, its arguments read from a copy of the input (so both sides see the
 * same bytes). */
static tgl_status call(side *s, input in, uint8_t op)
{
    tgl_backend *b = s->b;
    int slot = byte(&in) % SLOTS;
    switch (op % 18) {
    case 0: {
        size_t bytes = (size_t)(byte(&in) % 16 + 1) * 256;
        if (s->p[slot])
            return tgl_alloc(b, bytes, NULL); /* NULL out: rejected */
        tgl_status st = tgl_alloc(b, bytes, &s->p[slot]);
        s->bytes[slot] = st == TGL_OK ? bytes : 0;
        if (st == TGL_OK) {
            uint8_t fill[MAX_BYTES];
            for (size_t i = 0; i < bytes; i += 4) { /* small finite floats */
                float v = (float)((int)((i * 2654435761u) >> 24) - 128) / 32.0f;
                memcpy(fill + i, &v, 4);
            }
            st = tgl_copy_htod(b, s->p[slot], fill, bytes);
        }
        return st;
    }
    case 1: {
        tgl_ptr p = pick_ptr(&in, s);
        tgl_status st = tgl_free(b, p);
        for (int i = 0; st == TGL_OK && p && i < SLOTS; i++)
            if (s->p[i] == p) {
                s->stale[i] = p;
                s->p[i] = 0;
                s->bytes[i] = 0;
            }
        return st;
    }
    case 2: {
        uint8_t host[MAX_BYTES];
        for (size_t i = 0; i < sizeof host; i += 4) {
            float v = (float)(int8_t)byte(&in) / 16.0f;
            memcpy(host + i, &v, 4);
        }
        size_t n = small(&in, MAX_BYTES / 4) * 4;
        return tgl_copy_htod(b, pick_ptr(&in, s), byte(&in) == 7 ? NULL : host, n);
    }
    case 3: {
        uint8_t host[MAX_BYTES];
        return tgl_copy_dtoh(b, host, pick_ptr(&in, s), small(&in, MAX_BYTES));
    }
    case 4: {
        tgl_ptr d = pick_ptr(&in, s), src = pick_ptr(&in, s);
        return tgl_copy_dtod(b, d, src, small(&in, MAX_BYTES));
    }
    case 5: {
        int u = byte(&in) % (TGL_UNARY_COUNT + 2);
        tgl_ptr x = pick_ptr(&in, s), y = byte(&in) & 1 ? x : pick_ptr(&in, s);
        return tgl_unary(b, (tgl_unary_op)u, x, y, pick_count(&in));
    }
    case 6: {
        int o = byte(&in) % (TGL_BINARY_COUNT + 1);
        tgl_ptr x = pick_ptr(&in, s), y = pick_ptr(&in, s), z = byte(&in) & 1 ? x : pick_ptr(&in, s);
        return tgl_binary(b, (tgl_binary_op)o, x, y, z, pick_count(&in));
    }
    case 7: return tgl_fill(b, pick_ptr(&in, s), (float)(int8_t)byte(&in), pick_count(&in));
    case 8: {
        tgl_ptr x = pick_ptr(&in, s), y = pick_ptr(&in, s);
        return tgl_scale_add(b, 0.5f, x, (float)(byte(&in) % 3), y, pick_count(&in));
    }
    case 9: {
        static const char *const exprs[] = {"a*b + c", "sqrt(abs(a)) - b", "select(a, b, c)", "clamp(a, -1, 1)",
                                            "a +", "pow(a, 2) / (b*b + 1)", "z(a)", "gelu(a) * silu(b)"};
        tgl_ptr list[3] = {pick_ptr(&in, s), pick_ptr(&in, s), pick_ptr(&in, s)};
        const char *e = exprs[byte(&in) % 8];
        return tgl_map(b, e, list, small(&in, 3), pick_ptr(&in, s), pick_count(&in));
    }
    case 10: case 11: {
        size_t shape[TGL_MAX_DIMS] = {small(&in, 9), small(&in, 9), small(&in, 9), small(&in, 2)};
        size_t ndim = small(&in, 4), axis = small(&in, 3);
        tgl_ptr x = pick_ptr(&in, s), y = pick_ptr(&in, s);
        if (op % 18 == 10)
            return tgl_reduce(b, (tgl_reduce_op)(byte(&in) % (TGL_REDUCE_COUNT + 1)), x, y,
                              byte(&in) == 3 ? NULL : shape, ndim, axis);
        return tgl_argmax(b, x, y, shape, ndim, axis);
    }
    case 12: {
        tgl_ptr x = pick_ptr(&in, s), y = byte(&in) & 1 ? x : pick_ptr(&in, s);
        return tgl_softmax(b, x, y, small(&in, 16), small(&in, 40));
    }
    case 13: {
        tgl_ptr x = pick_ptr(&in, s), w = byte(&in) & 1 ? 0 : pick_ptr(&in, s), y = pick_ptr(&in, s);
        float eps = byte(&in) == 9 ? -1.0f : 1e-5f;
        return tgl_rmsnorm(b, x, w, y, small(&in, 8), small(&in, 40), eps);
    }
    case 14: {
        size_t m = small(&in, 12), n = small(&in, 12), k = small(&in, 12);
        int ta = byte(&in) % 3, tb = byte(&in) % 2;
        tgl_ptr x = pick_ptr(&in, s), y = pick_ptr(&in, s), z = pick_ptr(&in, s);
        size_t lda = (ta ? m : k) + small(&in, 2), ldb = (tb ? k : n) + small(&in, 2), ldc = n + small(&in, 2);
        return tgl_gemm(b, (tgl_transpose)ta, (tgl_transpose)tb, m, n, k, 1.0f, x, lda, y, ldb,
                        (float)(byte(&in) % 2), z, ldc);
    }
    case 15: {
        size_t shape[3] = {small(&in, 6) + 1, small(&in, 6) + 1, small(&in, 6)};
        size_t perm[3] = {small(&in, 2), small(&in, 2), small(&in, 3)};
        tgl_ptr x = pick_ptr(&in, s), y = pick_ptr(&in, s);
        return tgl_permute(b, x, y, shape, 1 + small(&in, 2), perm);
    }
    case 16: return layout_call(b, &in, s);
    default: {
        tgl_ptr table = pick_ptr(&in, s), ids = pick_ptr(&in, s), y = pick_ptr(&in, s);
        if (byte(&in) & 1)
            return tgl_cast_f32_f16(b, table, y, pick_count(&in));
        /* ids are whatever bytes the slot holds: mostly out of range, which must fail cleanly */
        return tgl_gather_rows(b, table, ids, y, small(&in, 8), small(&in, 8), small(&in, 4));
    }
    }
}

/* Per element: equal bits, both NaN, or within 1e-3 relative (1e-5 absolute). */
static int agree(const uint8_t *x, const uint8_t *y, size_t n)
{
    if (!memcmp(x, y, n))
        return 1;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        float a, c;
        memcpy(&a, x + i, 4);
        memcpy(&c, y + i, 4);
        if (!memcmp(x + i, y + i, 4) || (isnan(a) && isnan(c)))
            continue; /* equal bits (equal infinities included), or NaN on both sides */
        if (!(fabsf(a - c) <= 1e-3f * fabsf(c) + 1e-5f))
            return 0;
    }
    return 1;
}

/* Resets, on both sides, allocations where the CPU holds values that GL need not match: too
 * large, non-finite or subnormal (GL and the CPU may overflow a step apart). */
static void tame(void)
{
    static const float zero[MAX_BYTES / 4];
    for (int i = 0; i < SLOTS; i++) {
        if (!cpu.p[i])
            continue;
        int wild = 0;
        for (size_t k = 0; k + 4 <= cpu.bytes[i] && !wild; k += 4) {
            float v;
            memcpy(&v, before[0][i] + k, 4);
            /* Huge values (GLSL's sin/cos/exp make no accuracy promise far out) and subnormals
             * (GPUs may flush them to zero: rsqrt of one is inf on GL, 3e21 on the CPU). */
            wild = !(fabsf(v) < 1e4f) || (v != 0.0f && fabsf(v) < FLT_MIN);
        }
        if (wild && (tgl_copy_htod(cpu.b, cpu.p[i], zero, cpu.bytes[i]) ||
                     tgl_copy_htod(gl.b, gl.p[i], zero, gl.bytes[i])))
            abort();
    }
}

/* The other backend's allocations: made anew for every input (so their pointers move on), each
 * filled with its own pattern. */
static uint8_t alien_byte(int slot, size_t k)
{
    return (uint8_t)(slot * 37 + k * 11 + 5);
}

static void alien_make(void)
{
    static uint8_t fill[MAX_BYTES];
    for (int i = 0; i < SLOTS; i++) {
        alien.bytes[i] = 64 * (size_t)(i + 1);
        for (size_t k = 0; k < alien.bytes[i]; k++)
            fill[k] = alien_byte(i, k);
        if (tgl_alloc(alien.b, alien.bytes[i], &alien.p[i]) ||
            tgl_copy_htod(alien.b, alien.p[i], fill, alien.bytes[i]))
            abort();
    }
}

/* Nothing made on the backends under test reached the other backend's memory, and it refuses
 * their pointers. */
static void alien_check(input *in)
{
    static uint8_t got[MAX_BYTES];
    for (int i = 0; i < SLOTS; i++) {
        if (tgl_copy_dtoh(alien.b, got, alien.p[i], alien.bytes[i]))
            abort();
        for (size_t k = 0; k < alien.bytes[i]; k++)
            if (got[k] != alien_byte(i, k))
                abort(); /* a call on another backend wrote here */
    }
    int slot = byte(in) % SLOTS;
    size_t off = (size_t)byte(in) * 4;
    const side *s = byte(in) & 1 && use_gl ? &gl : &cpu;
    if (s->p[slot] && tgl_copy_htod(alien.b, s->p[slot] + off % (s->bytes[slot] + 1), got, 4) !=
                          TGL_ERR_INVALID_POINTER)
        abort(); /* another backend's pointer was accepted */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cpu.b) {
        const char *g = getenv("TGL_FUZZ_GL");
        use_gl = g && *g == '1';
        open_side(&cpu, TGL_BACKEND_CPU);
        if (use_gl)
            open_side(&gl, TGL_BACKEND_GL);
        open_side(&alien, TGL_BACKEND_CPU);
    }
    alien_make();
    input in = {data, size};
    for (int step = 0; step < STEPS && in.left; step++) {
        uint8_t op = byte(&in);
        input args = in;
        snapshot(&cpu, before[0]);
        if (use_gl)
            snapshot(&gl, before[1]);
        tgl_status st = call(&cpu, args, op);
        if (use_gl && call(&gl, args, op) != st)
            abort(); /* the backends disagree on whether the call is valid */
        if (st != TGL_OK) {
            unchanged(&cpu, before[0]);
            if (use_gl)
                unchanged(&gl, before[1]);
        } else if (use_gl) {
            snapshot(&cpu, before[0]);
            snapshot(&gl, before[1]);
            for (int i = 0; i < SLOTS; i++)
                if (cpu.p[i] && !agree(before[1][i], before[0][i], cpu.bytes[i])) {
                    size_t k = 0;
                    while (k + 4 <= cpu.bytes[i] && agree(before[1][i] + k, before[0][i] + k, 4))
                        k += 4;
                    float g = 0, c = 0;
                    memcpy(&g, before[1][i] + k, 4);
                    memcpy(&c, before[0][i] + k, 4);
                    fprintf(stderr, "fuzz_api: step %d (call kind %d, op byte %u): allocation %d element %zu: "
                            "gl %.9g, cpu %.9g\n", step, op % 18, args.left ? (unsigned)args.d[1] : 0u, i, k / 4, (double)g,
                            (double)c);
                    abort(); /* GL's result differs from the CPU oracle's */
                }
            tame();
        }
        /* Skip the bytes this step's arguments used (a fixed stride keeps steps aligned). */
        for (int k = 0; k < 24; k++)
            byte(&in);
        input probe = args;
        alien_check(&probe);
    }
    /* Every input starts from empty backends. */
    for (int i = 0; i < SLOTS; i++) {
        if (tgl_free(alien.b, alien.p[i]))
            abort();
        alien.p[i] = 0;
        tgl_free(cpu.b, cpu.p[i]);
        cpu.p[i] = cpu.stale[i] = 0;
        cpu.bytes[i] = 0;
        if (use_gl) {
            tgl_free(gl.b, gl.p[i]);
            gl.p[i] = gl.stale[i] = 0;
            gl.bytes[i] = 0;
        }
    }
    return 0;
}
