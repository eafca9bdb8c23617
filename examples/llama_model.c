/* The Llama-architecture decoder of examples/llama.c (llama_model.h says what each part does).
 * GGUF's llama tensors are stored for ggml's rope of adjacent pairs (its converter permutes
 * Hugging Face's q and k rows), so RoPE runs interleaved; every weight matrix stays in its file's
 * format on the device; the products are tgl_matvec_t (y = x Wᵀ, W stored [out, in] as GGUF and
 * PyTorch store it), the embedding lookup tgl_gather_rows_t. */
#include "llama_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

_Noreturn void llama_die(tgl_backend *b, const char *what, tgl_status st)
{
    fprintf(stderr, "llama: %s failed: %s: %s\n", what, tgl_status_string(st), tgl_last_error(b));
    exit(1);
}
#define CHECK(b, call) do { tgl_status st_ = (call); if (st_) llama_die(b, #call, st_); } while (0)
/* A call of the forward pass, counted in m->calls. */
#define CALL(m, call) do { (m)->calls++; CHECK((m)->b, call); } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "llama: out of host memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static const char *const layer_w_names[N_LAYER_W] = {"attn_q", "attn_k", "attn_v", "attn_output",
                                                     "ffn_gate", "ffn_up", "ffn_down"};

static tgl_dtype dtype_of(uint32_t ggml_type)
{
    switch (ggml_type) {
    case GGML_F32: return TGL_DTYPE_F32;
    case GGML_F16: return TGL_DTYPE_F16;
    case GGML_BF16: return TGL_DTYPE_BF16;
    case GGML_Q8_0: return TGL_DTYPE_Q8_0;
    case GGML_Q4_0: return TGL_DTYPE_Q4_0;
    default: return (tgl_dtype)-1;
    }
}

static tgl_ptr alloc_f32(tgl_backend *b, size_t n)
{
    tgl_ptr p;
    CHECK(b, tgl_alloc(b, n * sizeof(float), &p));
    return p;
}

/* A tensor of the file by name, of the expected extents (innermost first). */
static const gguf_tensor *need(const gguf_file *f, const char *name, uint32_t ndim, uint64_t ne0, uint64_t ne1)
{
    const gguf_tensor *t = gguf_find_tensor(f, name);
    if (!t) {
        fprintf(stderr, "llama: the file has no tensor '%s'\n", name);
        exit(1);
    }
    if (t->ndim != ndim || t->ne[0] != ne0 || (ndim > 1 && t->ne[1] != ne1)) {
        fprintf(stderr, "llama: tensor '%s' has %u dims {%llu, %llu}; expected {%llu, %llu}\n", name, t->ndim,
                (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], (unsigned long long)ne0,
                (unsigned long long)(ndim > 1 ? ne1 : 1));
        exit(1);
    }
    return t;
}

static llama_matrix load_matrix(tgl_backend *b, const gguf_file *f, const char *name, size_t rows, size_t cols)
{
    const gguf_tensor *t = need(f, name, 2, cols, rows);
    llama_matrix m = {0, dtype_of(t->type), rows, cols};
    if ((int)m.dtype < 0) {
        fprintf(stderr, "llama: tensor '%s' is %s; this example computes on f32, f16, bf16, q8_0 and q4_0\n", name,
                gguf_ggml_type_name(t->type));
        exit(1);
    }
    CHECK(b, tgl_alloc(b, (size_t)t->size, &m.data));
    CHECK(b, tgl_copy_htod(b, m.data, t->data, (size_t)t->size));
    return m;
}

/* The named matrices (each [rows[i], cols], count <= 3) stacked by rows into one on the device,
 * if they share a format; else nothing is loaded and data is 0. */
static llama_matrix load_stacked(tgl_backend *b, const gguf_file *f, const char *const *names, const size_t *rows,
                           size_t count, size_t cols)
{
    const gguf_tensor *t[3];
    llama_matrix m = {0, TGL_DTYPE_F32, 0, cols};
    uint64_t bytes = 0;
    if (count == 0 || count > 3)
        return (llama_matrix){0};
    for (size_t i = 0; i < count; i++) {
        t[i] = need(f, names[i], 2, cols, rows[i]);
        if (t[i]->type != t[0]->type)
            return (llama_matrix){0};
        bytes += t[i]->size;
        m.rows += rows[i];
    }
    m.dtype = dtype_of(t[0]->type);
    if ((int)m.dtype < 0)
        return (llama_matrix){0}; /* load_matrix names the format it refuses */
    CHECK(b, tgl_alloc(b, (size_t)bytes, &m.data));
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        CHECK(b, tgl_copy_htod(b, m.data + at, t[i]->data, (size_t)t[i]->size));
        at += (size_t)t[i]->size;
    }
    return m;
}

/* A norm's weights (f32, f16 or bf16 in the file) as f32 on the device. */
static tgl_ptr load_vector(tgl_backend *b, const gguf_file *f, const char *name, size_t n)
{
    const gguf_tensor *t = need(f, name, 1, n, 1);
    tgl_dtype dt = dtype_of(t->type);
    if (dt != TGL_DTYPE_F32 && dt != TGL_DTYPE_F16 && dt != TGL_DTYPE_BF16) {
        fprintf(stderr, "llama: tensor '%s' is %s; norms are f32, f16 or bf16\n", name, gguf_ggml_type_name(t->type));
        exit(1);
    }
    tgl_ptr raw, out = alloc_f32(b, n);
    CHECK(b, tgl_alloc(b, (size_t)t->size, &raw));
    CHECK(b, tgl_copy_htod(b, raw, t->data, (size_t)t->size));
    tgl_tensor src = tgl_tensor_contiguous(raw, dt, 1, &n), dst = tgl_tensor_contiguous(out, TGL_DTYPE_F32, 1, &n);
    CHECK(b, tgl_copy(b, &dst, &src));
    CHECK(b, tgl_free(b, raw));
    return out;
}

static size_t get_size(const gguf_file *f, const char *key, int required, size_t fallback)
{
    uint64_t v;
    if (gguf_get_uint(f, key, &v)) {
        if (required) {
            fprintf(stderr, "llama: the file has no integer '%s'\n", key);
            exit(1);
        }
        return fallback;
    }
    if (v == 0 || v > (1u << 30)) {
        fprintf(stderr, "llama: '%s' = %llu is out of range\n", key, (unsigned long long)v);
        exit(1);
    }
    return (size_t)v;
}

/* The configuration from the file's llama.* keys, checked against each other. */
llama_config llama_read_config(const gguf_file *f)
{
    char arch[64];
    if (gguf_get_string(f, "general.architecture", arch, sizeof arch) || strcmp(arch, "llama")) {
        fprintf(stderr, "llama: general.architecture is '%s'; this example runs 'llama'\n",
                gguf_find_kv(f, "general.architecture") ? arch : "(missing)");
        exit(1);
    }
    llama_config c;
    c.layers = get_size(f, "llama.block_count", 1, 0);
    c.dim = get_size(f, "llama.embedding_length", 1, 0);
    c.ffn = get_size(f, "llama.feed_forward_length", 1, 0);
    c.heads = get_size(f, "llama.attention.head_count", 1, 0);
    c.heads_kv = get_size(f, "llama.attention.head_count_kv", 0, c.heads);
    c.context = get_size(f, "llama.context_length", 0, 2048);
    c.head_dim = c.dim / c.heads;
    size_t rot = get_size(f, "llama.rope.dimension_count", 0, c.head_dim);
    size_t key_len = get_size(f, "llama.attention.key_length", 0, c.head_dim);
    if (c.dim % c.heads || c.heads % c.heads_kv || rot != c.head_dim || key_len != c.head_dim || c.head_dim % 2 ||
        c.layers > 64) {
        fprintf(stderr, "llama: unsupported shape: dim %zu, %zu heads, %zu kv heads, rotary %zu, key length %zu, "
                "%zu layers (heads must divide dim, kv heads divide heads, the whole even head rotate, <= 64 layers)\n",
                c.dim, c.heads, c.heads_kv, rot, key_len, c.layers);
        exit(1);
    }
    if (gguf_get_float(f, "llama.attention.layer_norm_rms_epsilon", &c.eps))
        c.eps = 1e-5;
    if (gguf_get_float(f, "llama.rope.freq_base", &c.theta))
        c.theta = 10000.0;
    /* RoPE scaling: linear is read (and Llama 3.1's per-frequency factors, a rope_freqs tensor,
     * by model_load); others (YaRN) are refused rather than run with the wrong angles. */
    char scaling[32] = "none";
    c.rope_linear = 0;
    if (gguf_find_kv(f, "llama.rope.scaling.type") &&
        gguf_get_string(f, "llama.rope.scaling.type", scaling, sizeof scaling)) {
        fprintf(stderr, "llama: llama.rope.scaling.type is not a string\n");
        exit(1);
    }
    if (!strcmp(scaling, "linear")) {
        if (gguf_get_float(f, "llama.rope.scaling.factor", &c.rope_linear) || !(c.rope_linear > 0) ||
            !isfinite(c.rope_linear)) {
            fprintf(stderr, "llama: linear RoPE scaling needs a finite llama.rope.scaling.factor > 0\n");
            exit(1);
        }
    } else if (strcmp(scaling, "none")) {
        fprintf(stderr, "llama: RoPE scaling '%s' is not run by this example (none and linear are)\n", scaling);
        exit(1);
    }
    if (!(c.eps > 0 && c.eps < 1) || !(c.theta > 1 && isfinite(c.theta))) {
        fprintf(stderr, "llama: rms epsilon %g or rope base %g out of range\n", c.eps, c.theta);
        exit(1);
    }
    const gguf_tensor *e = gguf_find_tensor(f, "token_embd.weight");
    if (!e || e->ndim != 2 || e->ne[1] > (1u << 24)) {
        fprintf(stderr, "llama: token_embd.weight missing or not [vocab, dim]\n");
        exit(1);
    }
    c.vocab = (size_t)e->ne[1];
    return c;
}

void llama_load(llama_model *m, tgl_backend *b, const gguf_file *f, size_t n_max, tgl_dtype kv_dtype)
{
    memset(m, 0, sizeof *m);
    m->b = b;
    m->kv_dtype = kv_dtype;
    m->c = llama_read_config(f);
    const llama_config *c = &m->c;
    char name[GGUF_MAX_NAME];
    const size_t q_dim = c->heads * c->head_dim, kv_dim = c->heads_kv * c->head_dim;
    const size_t rows[N_LAYER_W] = {q_dim, kv_dim, kv_dim, c->dim, c->ffn, c->ffn, c->dim};
    const size_t cols[N_LAYER_W] = {c->dim, c->dim, c->dim, q_dim, c->dim, c->dim, c->ffn};
    m->embed = load_matrix(b, f, "token_embd.weight", c->vocab, c->dim);
    m->head = gguf_find_tensor(f, "output.weight") ? load_matrix(b, f, "output.weight", c->vocab, c->dim) : m->embed;
    m->out_norm = load_vector(b, f, "output_norm.weight", c->dim);
    if (gguf_find_tensor(f, "rope_freqs.weight")) { /* f32 [head_dim / 2]; tgl_rope_t checks the values */
        const gguf_tensor *t = need(f, "rope_freqs.weight", 1, c->head_dim / 2, 1);
        if (t->type != GGML_F32) {
            fprintf(stderr, "llama: rope_freqs.weight is %s; f32 is expected\n", gguf_ggml_type_name(t->type));
            exit(1);
        }
        m->rope_freqs = xmalloc(c->head_dim / 2 * sizeof(float));
        memcpy(m->rope_freqs, t->data, c->head_dim / 2 * sizeof(float));
    }
    for (size_t l = 0; l < c->layers; l++) {
        char names[N_LAYER_W][GGUF_MAX_NAME];
        const char *pick[N_LAYER_W];
        for (int w = 0; w < N_LAYER_W; w++) {
            snprintf(names[w], sizeof names[w], "blk.%zu.%s.weight", l, layer_w_names[w]);
            pick[w] = names[w];
        }
        m->qkv[l] = load_stacked(b, f, pick + W_Q, rows + W_Q, 3, c->dim);
        m->gate_up[l] = load_stacked(b, f, pick + W_GATE, rows + W_GATE, 2, c->dim);
        for (int w = 0; w < N_LAYER_W; w++) {
            int stacked = (w <= W_V && m->qkv[l].data) || ((w == W_GATE || w == W_UP) && m->gate_up[l].data);
            if (!stacked)
                m->w[l][w] = load_matrix(b, f, names[w], rows[w], cols[w]);
        }
        snprintf(name, sizeof name, "blk.%zu.attn_norm.weight", l);
        m->attn_norm[l] = load_vector(b, f, name, c->dim);
        snprintf(name, sizeof name, "blk.%zu.ffn_norm.weight", l);
        m->ffn_norm[l] = load_vector(b, f, name, c->dim);
        CHECK(b, tgl_alloc(b, 2 * kv_dim * c->context * tgl_dtype_size(kv_dtype), &m->kv_cache[l]));
    }
    m->n_max = n_max;
    m->x = alloc_f32(b, n_max * c->dim);
    m->h = alloc_f32(b, n_max * (c->dim > q_dim ? c->dim : q_dim));
    m->qkv_out = alloc_f32(b, n_max * (q_dim + 2 * kv_dim));
    m->qh = alloc_f32(b, n_max * q_dim);
    m->oh = alloc_f32(b, n_max * q_dim);
    m->o = alloc_f32(b, n_max * q_dim);
    m->gate_up_out = alloc_f32(b, n_max * 2 * c->ffn);
    m->gate = alloc_f32(b, n_max * c->ffn);
    m->logits = alloc_f32(b, c->vocab);
    CHECK(b, tgl_alloc(b, sizeof(int32_t), &m->token));
    CHECK(b, tgl_alloc(b, n_max * sizeof(int32_t), &m->ids));
}

void llama_free(llama_model *m)
{
    tgl_backend *b = m->b;
    int tied = m->head.data == m->embed.data;
    CHECK(b, tgl_free(b, m->embed.data));
    if (!tied)
        CHECK(b, tgl_free(b, m->head.data));
    CHECK(b, tgl_free(b, m->out_norm));
    for (size_t l = 0; l < m->c.layers; l++) {
        for (int w = 0; w < N_LAYER_W; w++) /* 0 (a stacked part) frees nothing */
            CHECK(b, tgl_free(b, m->w[l][w].data));
        tgl_ptr per_layer[] = {m->attn_norm[l], m->ffn_norm[l], m->kv_cache[l], m->qkv[l].data, m->gate_up[l].data};
        for (size_t i = 0; i < sizeof per_layer / sizeof per_layer[0]; i++)
            CHECK(b, tgl_free(b, per_layer[i]));
    }
    tgl_ptr acts[] = {m->x, m->h, m->qkv_out, m->qh, m->oh, m->o, m->gate_up_out, m->gate, m->logits, m->token, m->ids};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        CHECK(b, tgl_free(b, acts[i]));
    free(m->rope_freqs);
}

/* y[n, rows] = x[n, cols] Wᵀ (+ y with add: a residual in the same pass), y's rows y_rs floats
 * apart. */
static void linear_rows(llama_model *m, const llama_matrix *w, size_t n, tgl_ptr x, tgl_ptr y, size_t y_rs, int add)
{
    tgl_tensor wt = tgl_tensor_contiguous(w->data, w->dtype, 2, (size_t[]){w->rows, w->cols});
    tgl_tensor xt = tgl_tensor_contiguous(x, TGL_DTYPE_F32, 2, (size_t[]){n, w->cols});
    tgl_tensor yt = tgl_tensor_contiguous(y, TGL_DTYPE_F32, 2, (size_t[]){n, w->rows});
    yt.strides[0] = (int64_t)y_rs;
    if (add)
        CALL(m, tgl_matvec_t_fused(m->b, &wt, &xt, 1.0f, NULL, TGL_ACTIVATION_NONE, 0.0f, 0, &yt));
    else
        CALL(m, tgl_matvec_t(m->b, &wt, &xt, &yt));
}

static void linear(llama_model *m, const llama_matrix *w, size_t n, tgl_ptr x, tgl_ptr y)
{
    linear_rows(m, w, n, x, y, w->rows, 0);
}

/* y += x Wᵀ: the residual stream's update, one call. */
static void linear_add(llama_model *m, const llama_matrix *w, size_t n, tgl_ptr x, tgl_ptr y)
{
    linear_rows(m, w, n, x, y, w->rows, 1);
}

/* Products of a stacked set of weights (stacked.data non-zero) or of its parts, into y [n, the
 * rows of all]: the parts' outputs side by side in each row. */
static void linear_set(llama_model *m, const llama_matrix *stacked, const llama_matrix *parts, size_t count,
                       size_t n, tgl_ptr x, tgl_ptr y)
{
    if (stacked->data) {
        linear(m, stacked, n, x, y);
        return;
    }
    size_t total = 0, at = 0;
    for (size_t i = 0; i < count; i++)
        total += parts[i].rows;
    for (size_t i = 0; i < count; i++) {
        linear_rows(m, &parts[i], n, x, y + at * sizeof(float), total, 0);
        at += parts[i].rows;
    }
}

/* The [n, heads, d] part of an activation whose rows are rs floats apart, as the [heads, n, d]
 * view of it (strides only). */
static tgl_tensor heads_view(tgl_ptr p, size_t n, size_t heads, size_t d, size_t rs)
{
    tgl_tensor t = tgl_tensor_contiguous(p, TGL_DTYPE_F32, 3, (size_t[]){heads, n, d});
    t.strides[0] = (int64_t)d;
    t.strides[1] = (int64_t)rs;
    return t;
}

/* The embedding rows of the n tokens into m->x: one lookup, decoded to f32 on the device. tokens
 * NULL: the one token the last step's argmax left in m->token (no upload). */
static void embed(llama_model *m, const int32_t *tokens, size_t n)
{
    const llama_matrix *e = &m->embed;
    if (tokens)
        CALL(m, tgl_copy_htod(m->b, m->ids, tokens, n * sizeof *tokens));
    tgl_tensor table = tgl_tensor_contiguous(e->data, e->dtype, 2, (size_t[]){e->rows, e->cols});
    tgl_tensor ids = tgl_tensor_contiguous(tokens ? m->ids : m->token, TGL_DTYPE_I32, 1, &n);
    tgl_tensor x = tgl_tensor_contiguous(m->x, TGL_DTYPE_F32, 2, (size_t[]){n, e->cols});
    CALL(m, tgl_gather_rows_t(m->b, &table, &ids, &x));
}

/* One forward pass over n tokens at positions pos .. pos + n - 1 (tokens NULL: the token in
 * m->token, n 1); the greedy next token. */
static int32_t forward(llama_model *m, const int32_t *tokens, size_t n, size_t pos)
{
    tgl_backend *b = m->b;
    const llama_config *c = &m->c;
    const size_t hd = c->head_dim, f = sizeof(float), q_dim = c->heads * hd, kv_dim = c->heads_kv * hd;
    const size_t qkv_rs = q_dim + 2 * kv_dim; /* a token's row of qkv_out: [q | k | v] */
    const size_t es = tgl_dtype_size(m->kv_dtype); /* the cache's element size */
    embed(m, tokens, n);
    for (size_t l = 0; l < c->layers; l++) {
        CALL(m, tgl_rmsnorm(b, m->x, m->attn_norm[l], m->h, n, c->dim, (float)c->eps));
        linear_set(m, &m->qkv[l], &m->w[l][W_Q], 3, n, m->h, m->qkv_out);
        /* GGUF's llama tensors are stored for ggml's rope of adjacent pairs (its converter
         * permutes Hugging Face's q and k rows), so the interleaved layout. q's and k's heads
         * are neighbours in each row: one call turns both. */
        tgl_rope_desc rd = {.theta = (float)c->theta, .mode = TGL_ROPE_INTERLEAVED, .pos_offset = pos,
                            .scaling = c->rope_linear ? TGL_ROPE_SCALE_LINEAR : TGL_ROPE_SCALE_NONE,
                            .factor = (float)c->rope_linear, .freq_factors = m->rope_freqs};
        tgl_tensor tqk = tgl_tensor_contiguous(m->qkv_out, TGL_DTYPE_F32, 4,
                                               (size_t[]){1, n, c->heads + c->heads_kv, hd});
        tqk.strides[0] = (int64_t)(n * qkv_rs);
        tqk.strides[1] = (int64_t)qkv_rs;
        CALL(m, tgl_rope_t(b, &tqk, &tqk, NULL, &rd));
        /* The new keys and values into the cache at pos: one strided copy of [2, heads_kv, n, hd]
         * (k and v are neighbours in each row of qkv_out, as the two caches are in kv_cache),
         * rounded to f16 on the way with --kv-f16. */
        const size_t cache_kv = kv_dim * c->context; /* the keys' part of kv_cache */
        tgl_tensor kvc = tgl_tensor_contiguous(m->kv_cache[l] + pos * hd * es, m->kv_dtype, 4,
                                               (size_t[]){2, c->heads_kv, n, hd});
        kvc.strides[0] = (int64_t)cache_kv;
        kvc.strides[1] = (int64_t)(c->context * hd);
        tgl_tensor kvs = kvc;
        kvs.dtype = TGL_DTYPE_F32;
        kvs.data = m->qkv_out + q_dim * f;
        kvs.strides[0] = (int64_t)kv_dim;
        kvs.strides[1] = (int64_t)hd;
        kvs.strides[2] = (int64_t)qkv_rs;
        CALL(m, tgl_copy(b, &kvc, &kvs));
        tgl_ptr qh = m->qkv_out, oh = m->oh;
        if (n > 1) { /* [n, heads, hd] -> [heads, n, hd]; a single token's q is both */
            tgl_tensor qs = heads_view(m->qkv_out, n, c->heads, hd, qkv_rs);
            tgl_tensor qd = tgl_tensor_contiguous(m->qh, TGL_DTYPE_F32, 3, (size_t[]){c->heads, n, hd});
            CALL(m, tgl_copy(b, &qd, &qs));
            qh = m->qh;
        }
        tgl_tensor tq = tgl_tensor_contiguous(qh, TGL_DTYPE_F32, 4, (size_t[]){1, c->heads, n, hd}), to = tq;
        to.data = oh;
        tgl_tensor tk =
            tgl_tensor_contiguous(m->kv_cache[l], m->kv_dtype, 4, (size_t[]){1, c->heads_kv, c->context, hd});
        tgl_tensor tv = tk;
        tv.data = m->kv_cache[l] + cache_kv * es;
        tgl_attention_desc ad = {.scale = 1.0f / sqrtf((float)hd), .causal = 1, .seq_kv = pos + n};
        CALL(m, tgl_attention_t(b, &tq, &tk, &tv, NULL, &to, &ad));
        tgl_ptr o = oh;
        if (n > 1) {
            tgl_tensor os = tgl_tensor_contiguous(oh, TGL_DTYPE_F32, 3, (size_t[]){c->heads, n, hd});
            tgl_tensor od = heads_view(m->o, n, c->heads, hd, q_dim);
            CALL(m, tgl_copy(b, &od, &os));
            o = m->o;
        }
        linear_add(m, &m->w[l][W_O], n, o, m->x);
        CALL(m, tgl_rmsnorm(b, m->x, m->ffn_norm[l], m->h, n, c->dim, (float)c->eps));
        linear_set(m, &m->gate_up[l], &m->w[l][W_GATE], 2, n, m->h, m->gate_up_out);
        tgl_tensor gu[2], act = tgl_tensor_contiguous(m->gate, TGL_DTYPE_F32, 2, (size_t[]){n, c->ffn});
        for (int i = 0; i < 2; i++) { /* gate and up: the two halves of each row */
            gu[i] = act;
            gu[i].data = m->gate_up_out + (size_t)i * c->ffn * f;
            gu[i].strides[0] = (int64_t)(2 * c->ffn);
        }
        CALL(m, tgl_map_t(b, "silu(a) * b", gu, 2, &act));
        linear_add(m, &m->w[l][W_DOWN], n, m->gate, m->x);
    }
    tgl_ptr last = m->x + (n - 1) * c->dim * f;
    CALL(m, tgl_rmsnorm(b, last, m->out_norm, m->h, 1, c->dim, (float)c->eps));
    linear(m, &m->head, 1, m->h, m->logits);
    CALL(m, tgl_argmax(b, m->logits, m->token, (size_t[]){c->vocab}, 1, 0));
    int32_t next;
    CALL(m, tgl_copy_dtoh(b, &next, m->token, sizeof next));
    return next;
}

void llama_generate(llama_model *m, const int32_t *prompt, size_t n_prompt, size_t steps, llama_result *r)
{
    r->tokens = xmalloc(steps * sizeof *r->tokens);
    double t0 = now_ms();
    int32_t next = forward(m, prompt, n_prompt, 0);
    double t1 = now_ms();
    size_t calls0 = m->calls;
    for (size_t s = 0; s < steps; s++) {
        r->tokens[s] = next;
        if (s + 1 < steps)
            next = forward(m, NULL, 1, n_prompt + s); /* r->tokens[s], still in m->token */
    }
    r->prefill_ms = t1 - t0;
    r->decode_ms = now_ms() - t1;
    r->decode_calls = steps > 1 ? (m->calls - calls0) / (steps - 1) : 0;
}

/* ---- a random model, written as GGUF ------------------------------------------------------ */

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static float uniform(float lo, float hi)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return lo + (hi - lo) * (float)(rng >> 40) / (float)(1u << 24);
}

uint32_t llama_ggml_type(const char *s)
{
    static const struct { const char *name; uint32_t type; } names[] = {
        {"f32", GGML_F32}, {"f16", GGML_F16}, {"bf16", GGML_BF16}, {"q8_0", GGML_Q8_0}, {"q4_0", GGML_Q4_0}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name))
            return names[i].type;
    return LLAMA_NO_TYPE;
}

/* Random weights (uniform, variance 1 / fan-in) stored as `type`, converted by the CPU backend's
 * tgl_quantize / tgl_copy; the norms in f32, as ggml's converters store them. */
static void *random_weights(tgl_backend *cpu, uint32_t type, size_t rows, size_t cols, uint64_t *bytes)
{
    size_t n = rows * cols;
    float *w = xmalloc(n * sizeof *w), a = sqrtf(3.0f / (float)cols);
    for (size_t i = 0; i < n; i++)
        w[i] = uniform(-a, a);
    tgl_dtype dt = dtype_of(type);
    tgl_tensor out = tgl_tensor_contiguous(0, dt, 2, (size_t[]){rows, cols});
    *bytes = tgl_tensor_bytes(&out);
    tgl_ptr src, dst;
    CHECK(cpu, tgl_alloc(cpu, n * sizeof(float), &src));
    CHECK(cpu, tgl_alloc(cpu, (size_t)*bytes, &dst));
    CHECK(cpu, tgl_copy_htod(cpu, src, w, n * sizeof(float)));
    tgl_tensor in = tgl_tensor_contiguous(src, TGL_DTYPE_F32, 2, (size_t[]){rows, cols});
    out.data = dst;
    if (dt == TGL_DTYPE_Q8_0 || dt == TGL_DTYPE_Q4_0)
        CHECK(cpu, tgl_quantize(cpu, &in, &out));
    else
        CHECK(cpu, tgl_copy(cpu, &out, &in));
    void *host = xmalloc((size_t)*bytes);
    CHECK(cpu, tgl_copy_dtoh(cpu, host, dst, (size_t)*bytes));
    CHECK(cpu, tgl_free(cpu, src));
    CHECK(cpu, tgl_free(cpu, dst));
    free(w);
    return host;
}

/* With rope_freqs: Llama 3.1's per-frequency factors as llama.cpp's converter writes them (the
 * rope_freqs tensor, factor 8, low and high frequency factors 1 and 4), for an original context
 * of 64 tokens, so that the small model's frequencies fall in all three bands. */
static float *llama3_factors(const llama_config *c)
{
    const double factor = 8, low = 1, high = 4, original = 64;
    float *ff = xmalloc(c->head_dim / 2 * sizeof *ff);
    for (size_t i = 0; i < c->head_dim / 2; i++) {
        double wavelength = 2 * 3.14159265358979323846 * pow(c->theta, 2.0 * (double)i / (double)c->head_dim);
        double smooth = (original / wavelength - low) / (high - low);
        ff[i] = wavelength < original / high  ? 1.0f
                : wavelength > original / low ? (float)factor
                                              : (float)(1.0 / ((1 - smooth) / factor + smooth));
    }
    return ff;
}

const char *llama_save_random(const char *path, char tmp[LLAMA_TMP_NAME], uint32_t type, const llama_config *c,
                              int tied, int rope_freqs, int mixed)
{
    tmp[0] = '\0';
    if (!path) {
        snprintf(tmp, LLAMA_TMP_NAME, "/tmp/tensorgl-llama-XXXXXX");
        int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "llama: cannot make a temporary file\n");
            exit(1);
        }
        close(fd);
        path = tmp;
    }
    tgl_backend *cpu;
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    CHECK(NULL, tgl_open(&o, &cpu));
    enum { MAX_T = 4 + 9 * 64 };
    static gguf_write_tensor ts[MAX_T];
    static char names[MAX_T][GGUF_MAX_NAME];
    void *owned[MAX_T];
    size_t n = 0;
    const size_t q_dim = c->heads * c->head_dim, kv_dim = c->heads_kv * c->head_dim;
    const size_t rows[N_LAYER_W] = {q_dim, kv_dim, kv_dim, c->dim, c->ffn, c->ffn, c->dim};
    const size_t cols[N_LAYER_W] = {c->dim, c->dim, c->dim, q_dim, c->dim, c->dim, c->ffn};
    uint64_t bytes;
#define ADD_MATRIX(nm, r, cl, ty)                                                               \
    do {                                                                                        \
        snprintf(names[n], GGUF_MAX_NAME, "%s", nm);                                            \
        owned[n] = random_weights(cpu, ty, r, cl, &bytes);                                      \
        ts[n] = (gguf_write_tensor){names[n], 2, {cl, r, 1, 1}, ty, owned[n]};                  \
        n++;                                                                                    \
    } while (0)
#define ADD_NORM(nm)                                                                            \
    do {                                                                                        \
        snprintf(names[n], GGUF_MAX_NAME, "%s", nm);                                            \
        float *v_ = xmalloc(c->dim * sizeof *v_);                                               \
        for (size_t i_ = 0; i_ < c->dim; i_++)                                                  \
            v_[i_] = uniform(0.5f, 1.5f);                                                       \
        owned[n] = v_;                                                                          \
        ts[n] = (gguf_write_tensor){names[n], 1, {c->dim, 1, 1, 1}, GGML_F32, v_};              \
        n++;                                                                                    \
    } while (0)
    char name[GGUF_MAX_NAME];
    ADD_MATRIX("token_embd.weight", c->vocab, c->dim, type);
    if (!tied)
        ADD_MATRIX("output.weight", c->vocab, c->dim, type);
    ADD_NORM("output_norm.weight");
    if (rope_freqs) {
        snprintf(names[n], GGUF_MAX_NAME, "rope_freqs.weight");
        owned[n] = llama3_factors(c);
        ts[n] = (gguf_write_tensor){names[n], 1, {c->head_dim / 2, 1, 1, 1}, GGML_F32, owned[n]};
        n++;
    }
    for (size_t l = 0; l < c->layers; l++) {
        for (int w = 0; w < N_LAYER_W; w++) {
            snprintf(name, sizeof name, "blk.%zu.%s.weight", l, layer_w_names[w]);
            ADD_MATRIX(name, rows[w], cols[w], mixed && (w == W_V || w == W_UP) ? (uint32_t)GGML_F16 : type);
        }
        snprintf(name, sizeof name, "blk.%zu.attn_norm.weight", l);
        ADD_NORM(name);
        snprintf(name, sizeof name, "blk.%zu.ffn_norm.weight", l);
        ADD_NORM(name);
    }
    const gguf_write_kv kvs[] = {
        {.key = "general.architecture", .type = GGUF_STRING, .str = "llama"},
        {.key = "general.name", .type = GGUF_STRING, .str = "tensorgl random llama"},
        {.key = "llama.block_count", .type = GGUF_U32, .u = c->layers},
        {.key = "llama.embedding_length", .type = GGUF_U32, .u = c->dim},
        {.key = "llama.feed_forward_length", .type = GGUF_U32, .u = c->ffn},
        {.key = "llama.attention.head_count", .type = GGUF_U32, .u = c->heads},
        {.key = "llama.attention.head_count_kv", .type = GGUF_U32, .u = c->heads_kv},
        {.key = "llama.context_length", .type = GGUF_U32, .u = c->context},
        {.key = "llama.rope.dimension_count", .type = GGUF_U32, .u = c->head_dim},
        {.key = "llama.attention.layer_norm_rms_epsilon", .type = GGUF_F32, .f = c->eps},
        {.key = "llama.rope.freq_base", .type = GGUF_F32, .f = c->theta},
    };
    char err[512];
    int bad = gguf_save(path, kvs, sizeof kvs / sizeof kvs[0], ts, n, err, sizeof err);
    for (size_t i = 0; i < n; i++)
        free(owned[i]);
    tgl_close(cpu);
    if (bad) {
        fprintf(stderr, "llama: %s\n", err);
        exit(1);
    }
    return path;
}

void llama_parse_shape(const char *s, llama_config *c)
{
    size_t v[7], n = 0;
    while (*s && n < 7) {
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        if (end == s || errno || x < 1 || x > 1 << 20 || (*end && *end != ','))
            break;
        v[n++] = (size_t)x;
        s = *end ? end + 1 : end;
    }
    if (n != 7 || *s || v[1] % 32 || v[4] % 32 || v[1] % v[2] || v[2] % v[3] || (v[1] / v[2]) % 2 || v[0] > 64) {
        fprintf(stderr, "llama: --shape takes LAYERS,DIM,HEADS,KV_HEADS,FFN,VOCAB,CONTEXT: at most 64 layers, "
                "dim and ffn multiples of 32, heads dividing dim into even head sizes, kv heads dividing heads\n");
        exit(2);
    }
    c->layers = v[0], c->dim = v[1], c->heads = v[2], c->heads_kv = v[3], c->ffn = v[4], c->vocab = v[5];
    c->context = v[6];
    c->head_dim = c->dim / c->heads;
}

void llama_run(tgl_backend *b, const gguf_file *f, const int32_t *prompt, size_t n_prompt, size_t steps,
               tgl_dtype kv_dtype, llama_result *r)
{
    llama_model m;
    llama_load(&m, b, f, n_prompt, kv_dtype);
    if (n_prompt + steps > m.c.context) {
        fprintf(stderr, "llama: %zu prompt tokens + %zu steps exceed the context of %zu\n", n_prompt, steps,
                m.c.context);
        exit(1);
    }
    for (size_t i = 0; i < n_prompt; i++)
        if ((size_t)prompt[i] >= m.c.vocab) {
            fprintf(stderr, "llama: prompt token %d is past the vocabulary of %zu\n", prompt[i], m.c.vocab);
            exit(1);
        }
    /* An untimed pass first: kernels compile on first use (or load from the program cache). */
    llama_result warm;
    llama_generate(&m, prompt, n_prompt, steps < 3 ? steps : 3, &warm);
    free(warm.tokens);
    llama_generate(&m, prompt, n_prompt, steps, r);
    llama_free(&m);
}
