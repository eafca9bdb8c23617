/* tensorgl demo: one pre-norm transformer block (Llama style), run the way an inference loop
 * runs it: a prefill of 128 tokens, then 32 decode steps that append to a KV cache.
 *
 *   x += Wo · attention(rope(Wq · rmsnorm(x)), rope(Wk · rmsnorm(x)), Wv · rmsnorm(x))   (causal)
 *   x += Wd · (silu(Wg · rmsnorm(x)) * (Wu · rmsnorm(x)))                              (SwiGLU)
 *
 * on random weights, on the default backend (GL where a context can be made) and on the CPU
 * reference backend; it checks that both agree and prints the device and the time per op.
 * Build: cc demo.c -ltensorgl -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DIM = 512, HEADS = 8, HEAD_DIM = DIM / HEADS, FFN = 1376, PREFILL = 128, DECODE = 32,
       CAP = PREFILL + DECODE };
#define EPS 1e-5f
#define THETA 10000.0f

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void die(tgl_backend *b, const char *what, tgl_status st)
{
    fprintf(stderr, "demo: %s failed: %s: %s\n", what, tgl_status_string(st), tgl_last_error(b));
    exit(1);
}
#define CHECK(b, call) do { tgl_status st_ = (call); if (st_) die(b, #call, st_); } while (0)

/* The op kinds timed separately. The residual adds and SwiGLU's silu(gate) * up are the
 * products' epilogues (tgl_gemm's beta, tgl_gemm_fused's gate), so they time as products. */
enum { T_RMSNORM, T_LINEAR, T_ROPE, T_LAYOUT, T_ATTENTION, T_KINDS };
static const char *const kind_names[T_KINDS] = {"rmsnorm", "linear + epilogues", "rope",
                                                 "permute + cache", "attention"};

enum { W_Q, W_K, W_V, W_O, W_GATE, W_UP, W_DOWN, N_WEIGHTS };
static const size_t w_rows[N_WEIGHTS] = {DIM, DIM, DIM, DIM, FFN, FFN, DIM};  /* out features */
static const size_t w_cols[N_WEIGHTS] = {DIM, DIM, DIM, DIM, DIM, DIM, FFN};  /* in features */

typedef struct block {
    tgl_backend *b;
    tgl_ptr w[N_WEIGHTS], norm1, norm2;       /* linear weights stored [out, in], like PyTorch */
    tgl_ptr k_cache, v_cache;                 /* [HEADS, CAP, HEAD_DIM] */
    tgl_ptr x, h, q, k, v, qh, oh, o, up;     /* activations for up to PREFILL tokens */
    int timed;                                /* synchronize after each op and charge its time */
    double ms[T_KINDS];
} block;

/* Runs one op; when timed, waits for it and charges the time to `kind`. */
#define OP(blk, kind, call)                                                  \
    do {                                                                     \
        double t0_ = now_ms();                                               \
        CHECK((blk)->b, call);                                               \
        if ((blk)->timed) {                                                  \
            CHECK((blk)->b, tgl_synchronize((blk)->b));                      \
            (blk)->ms[kind] += now_ms() - t0_;                               \
        }                                                                    \
    } while (0)

/* y[t, :] = W x[t, :] (+ y[t, :] where beta is 1) for t tokens: one tgl_gemm, which runs a
 * decode step's single row on its matrix-vector kernel. */
static void linear(block *m, int w, size_t t, tgl_ptr x, tgl_ptr y, float beta)
{
    size_t out = w_rows[w], in = w_cols[w];
    OP(m, T_LINEAR, tgl_gemm(m->b, TGL_NO_TRANS, TGL_TRANS, t, out, in, 1.0f, x, in, m->w[w], in, beta, y, out));
}

/* One forward pass over t tokens at positions pos .. pos + t - 1 of m->x, in place. */
static void forward(block *m, size_t t, size_t pos)
{
    tgl_backend *b = m->b;
    const size_t f = sizeof(float), tok_heads[3] = {t, HEADS, HEAD_DIM}, to_heads[3] = {1, 0, 2};
    const size_t heads_tok[3] = {HEADS, t, HEAD_DIM};

    OP(m, T_RMSNORM, tgl_rmsnorm(b, m->x, m->norm1, m->h, t, DIM, EPS));
    linear(m, W_Q, t, m->h, m->q, 0.0f);
    linear(m, W_K, t, m->h, m->k, 0.0f);
    linear(m, W_V, t, m->h, m->v, 0.0f);
    OP(m, T_ROPE, tgl_rope(b, m->q, m->q, 1, t, HEADS, HEAD_DIM, pos, THETA, TGL_ROPE_NEOX));
    OP(m, T_ROPE, tgl_rope(b, m->k, m->k, 1, t, HEADS, HEAD_DIM, pos, THETA, TGL_ROPE_NEOX));
    /* [t, heads, head_dim] -> [heads, t, head_dim]; new keys and values go to the cache, each
     * with one strided copy from the projection's [t, heads, head_dim] into the cache's
     * [heads, CAP, head_dim] at pos. */
    OP(m, T_LAYOUT, tgl_permute(b, m->q, m->qh, tok_heads, 3, to_heads));
    const tgl_ptr proj[2] = {m->k, m->v}, cache[2] = {m->k_cache, m->v_cache};
    for (int i = 0; i < 2; i++) {
        tgl_tensor src = tgl_tensor_contiguous(proj[i], TGL_DTYPE_F32, 3, heads_tok);
        src.strides[0] = HEAD_DIM, src.strides[1] = HEADS * HEAD_DIM; /* element (h, s, d) at s H D + h D + d */
        tgl_tensor dst = tgl_tensor_contiguous(cache[i] + pos * HEAD_DIM * f, TGL_DTYPE_F32, 3, heads_tok);
        dst.strides[0] = CAP * HEAD_DIM;
        OP(m, T_LAYOUT, tgl_copy(b, &dst, &src));
    }
    OP(m, T_ATTENTION, tgl_attention_kv(b, m->qh, m->k_cache, m->v_cache, m->oh, 1, HEADS, t, pos + t, CAP,
                                        HEAD_DIM, 1.0f / sqrtf((float)HEAD_DIM), 1));
    OP(m, T_LAYOUT, tgl_permute(b, m->oh, m->o, heads_tok, 3, to_heads));
    linear(m, W_O, t, m->o, m->x, 1.0f); /* x += Wo o */

    OP(m, T_RMSNORM, tgl_rmsnorm(b, m->x, m->norm2, m->h, t, DIM, EPS));
    linear(m, W_UP, t, m->h, m->up, 0.0f);
    /* up = silu(Wg h) * up: the gate's product with SwiGLU as its epilogue */
    OP(m, T_LINEAR, tgl_gemm_fused(b, TGL_NO_TRANS, TGL_TRANS, t, FFN, DIM, 1.0f, m->h, DIM, m->w[W_GATE], DIM, 0.0f,
                                   m->up, FFN, 0, TGL_ACTIVATION_SILU, 0.0f, 1));
    linear(m, W_DOWN, t, m->up, m->x, 1.0f); /* x += Wd up */
}

/* Host data: weights, norm weights, the prefill tokens and one token per decode step. */
typedef struct host_data {
    float *w[N_WEIGHTS], *norm[2], *prefill, *steps;
} host_data;

static unsigned long long rng_state;
static float uniform(float lo, float hi)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)(rng_state >> 40) / (float)(1u << 24);
}

static float *random_array(size_t n, float lo, float hi)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "demo: out of host memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = uniform(lo, hi);
    return p;
}

static tgl_ptr upload(tgl_backend *b, const float *src, size_t n)
{
    tgl_ptr p;
    CHECK(b, tgl_alloc(b, n * sizeof(float), &p));
    if (src)
        CHECK(b, tgl_copy_htod(b, p, src, n * sizeof(float)));
    return p;
}

static void block_init(block *m, tgl_backend *b, const host_data *hd)
{
    memset(m, 0, sizeof *m);
    m->b = b;
    for (int i = 0; i < N_WEIGHTS; i++)
        m->w[i] = upload(b, hd->w[i], w_rows[i] * w_cols[i]);
    m->norm1 = upload(b, hd->norm[0], DIM);
    m->norm2 = upload(b, hd->norm[1], DIM);
    m->k_cache = upload(b, NULL, (size_t)HEADS * CAP * HEAD_DIM);
    m->v_cache = upload(b, NULL, (size_t)HEADS * CAP * HEAD_DIM);
    tgl_ptr *acts[] = {&m->x, &m->h, &m->q, &m->k, &m->v, &m->qh, &m->oh, &m->o};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        *acts[i] = upload(b, NULL, (size_t)PREFILL * DIM);
    m->up = upload(b, NULL, (size_t)PREFILL * FFN);
}

static void block_free(block *m)
{
    tgl_ptr *all[] = {&m->norm1, &m->norm2, &m->k_cache, &m->v_cache, &m->x, &m->h, &m->q, &m->k, &m->v,
                      &m->qh, &m->oh, &m->o, &m->up};
    for (int i = 0; i < N_WEIGHTS; i++)
        CHECK(m->b, tgl_free(m->b, m->w[i]));
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK(m->b, tgl_free(m->b, *all[i]));
}

/* What one run produced and how long it took. */
typedef struct run {
    float *prefill_out;  /* [PREFILL, DIM] */
    float *decode_out;   /* [DECODE, DIM]: the block's output for each decoded token */
    double prefill_ms[T_KINDS], decode_ms[T_KINDS], first_ms, prefill_total, decode_total;
} run;

/* The prefill then the decode steps. pass 0: the first (kernels compile), 1: wall times without
 * waits between ops, 2: each op waited for and its time recorded. */
static void run_once(block *m, const host_data *hd, run *r, int pass)
{
    tgl_backend *b = m->b;
    m->timed = pass == 2;
    memset(m->ms, 0, sizeof m->ms);
    double t0 = now_ms();
    CHECK(b, tgl_copy_htod(b, m->x, hd->prefill, (size_t)PREFILL * DIM * sizeof(float)));
    forward(m, PREFILL, 0);
    CHECK(b, tgl_copy_dtoh(b, r->prefill_out, m->x, (size_t)PREFILL * DIM * sizeof(float)));
    double t1 = now_ms();
    memcpy(r->prefill_ms, m->ms, sizeof m->ms);
    memset(m->ms, 0, sizeof m->ms);
    for (size_t s = 0; s < DECODE; s++) {
        CHECK(b, tgl_copy_htod(b, m->x, hd->steps + s * DIM, DIM * sizeof(float)));
        forward(m, 1, PREFILL + s);
        CHECK(b, tgl_copy_dtoh(b, r->decode_out + s * DIM, m->x, DIM * sizeof(float)));
    }
    double t2 = now_ms();
    memcpy(r->decode_ms, m->ms, sizeof m->ms);
    if (pass == 0)
        r->first_ms = t2 - t0;
    if (pass == 1)
        r->prefill_total = t1 - t0, r->decode_total = t2 - t1;
}

static void run_backend(tgl_backend *b, const host_data *hd, run *r)
{
    block m;
    block_init(&m, b, hd);
    r->prefill_out = malloc((size_t)PREFILL * DIM * sizeof(float));
    r->decode_out = malloc((size_t)DECODE * DIM * sizeof(float));
    if (!r->prefill_out || !r->decode_out) {
        fprintf(stderr, "demo: out of host memory\n");
        exit(1);
    }
    for (int pass = 0; pass < 3; pass++)
        run_once(&m, hd, r, pass);
    block_free(&m);
}

/* NMSE of got against want, and the count of non-finite values where want is finite. */
static double compare(const float *got, const float *want, size_t n, size_t *bad)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i]) && isfinite(want[i]))
            ++*bad;
        double d = (double)got[i] - want[i];
        num += d * d;
        den += (double)want[i] * want[i];
    }
    return den > 0 ? num / den : num;
}

static void print_times(const char *phase, const char *dev_name, const double *dev, const double *cpu, double dev_total,
                        double cpu_total)
{
    printf("\n%-22s %12s %12s\n", phase, dev_name, "cpu");
    double sum_d = 0, sum_c = 0;
    for (int k = 0; k < T_KINDS; k++) {
        printf("%-22s %9.2f ms %9.2f ms\n", kind_names[k], dev[k], cpu[k]);
        sum_d += dev[k];
        sum_c += cpu[k];
    }
    if (sum_d <= sum_c)
        printf("%-22s %9.2f ms %9.2f ms   (%s is %.1fx as fast as the cpu reference)\n", "sum of ops", sum_d,
               sum_c, dev_name, sum_c / sum_d);
    else
        printf("%-22s %9.2f ms %9.2f ms   (%s takes %.1fx as long as the cpu reference)\n", "sum of ops", sum_d, sum_c,
               dev_name, sum_d / sum_c);
    printf("%-22s %9.2f ms %9.2f ms   (a pass without per-op waits, transfers included)\n", "wall", dev_total,
           cpu_total);
}

int main(void)
{
    tgl_backend *dev, *cpu;
    CHECK(NULL, tgl_open(NULL, &dev));
    tgl_options cpu_opts = {.kind = TGL_BACKEND_CPU};
    CHECK(NULL, tgl_open(&cpu_opts, &cpu));
    struct tgl_device_info info;
    CHECK(dev, tgl_device_info(dev, &info));
    printf("tensorgl demo: one transformer block (dim %d, %d heads of %d, SwiGLU %d), prefill %d tokens, "
           "%d decode steps with a KV cache\n", DIM, HEADS, HEAD_DIM, FFN, PREFILL, DECODE);
    printf("default backend: %s — %s %s, %s (%s)\n", info.backend, info.api, info.version, info.renderer,
           info.egl_path);
    if (info.fallback_reason[0])
        printf("  (GL unavailable: %s)\n", info.fallback_reason);

    host_data hd;
    rng_state = 0x2545F4914F6CDD1Dull ^ (unsigned long long)time(NULL);
    for (int i = 0; i < N_WEIGHTS; i++) { /* uniform with variance 1 / fan_in, as initializers do */
        float a = sqrtf(3.0f / (float)w_cols[i]);
        hd.w[i] = random_array(w_rows[i] * w_cols[i], -a, a);
    }
    hd.norm[0] = random_array(DIM, 0.5f, 1.5f);
    hd.norm[1] = random_array(DIM, 0.5f, 1.5f);
    hd.prefill = random_array((size_t)PREFILL * DIM, -1.0f, 1.0f);
    hd.steps = random_array((size_t)DECODE * DIM, -1.0f, 1.0f);

    run a, c;
    run_backend(dev, &hd, &a);
    run_backend(cpu, &hd, &c);

    size_t bad = 0;
    double e_prefill = compare(a.prefill_out, c.prefill_out, (size_t)PREFILL * DIM, &bad);
    double e_decode = compare(a.decode_out, c.decode_out, (size_t)DECODE * DIM, &bad);
    print_times("prefill (128 tokens)", info.backend, a.prefill_ms, c.prefill_ms, a.prefill_total, c.prefill_total);
    print_times("decode (32 steps)", info.backend, a.decode_ms, c.decode_ms, a.decode_total, c.decode_total);
    printf("\nfirst pass, kernels compiled on first use: %s %.1f ms, cpu %.1f ms\n", info.backend, a.first_ms,
           c.first_ms);
    int agree = e_prefill <= 1e-9 && e_decode <= 1e-9 && bad == 0;
    printf("\nresult: %s vs cpu NMSE %.3g (prefill), %.3g (decode), %zu non-finite where the cpu has a number "
           "-> %s\n", info.backend, e_prefill, e_decode, bad, agree ? "AGREE" : "DISAGREE");

    for (int i = 0; i < N_WEIGHTS; i++)
        free(hd.w[i]);
    free(hd.norm[0]);
    free(hd.norm[1]);
    free(hd.prefill);
    free(hd.steps);
    free(a.prefill_out);
    free(a.decode_out);
    free(c.prefill_out);
    free(c.decode_out);
    tgl_close(dev);
    tgl_close(cpu);
    return agree ? 0 : 1;
}
