/* GL driver of tgl_attention (glsl/attention/): the fused flash kernel for most shapes, and for
 * few query rows (decode) a split over chunks of keys followed by a merge, so one query row
 * still spreads over the device; on llvmpipe flash_reg, whose keys go in chunks merged the same
 * way past its loop limit or where they fill idle cores. (batch, head) blocks are processed in
 * slabs whose windows fit the SSBO block limit and whose grids fit the workgroup-count limits. */
#include "gl_internal.h"


#define F32 sizeof(float)
/* Invocations per flash workgroup: 256 where the device allows (H100, batch 8, 16 heads, seq
 * 2048, d 64, causal: 3.6 ms, against 4.3 with 128, 6.9 with 64 and 7.1 with 512), else 128
 * (the least GL ES 3.1 guarantees). */
static unsigned flash_threads(const tgl_gl_limits *l)
{
    return l->wg_invocations >= 256 && l->wg_size[0] >= 256 ? 256 : 128;
}
#define DECODE_THREADS 128u
/* Keys per decode workgroup (CH in decode.comp): DECODE_CHUNK, or half that where whole chunks
 * would not give the device two workgroups per multiprocessor (decode_chunk). H200, GQA decode
 * 32/8 heads of 4096 keys, d 128, alternated runs: batch 1 (128 workgroups of 256 keys) 40.4 /
 * 40.4 us at 256, 34.5 / 31.2 at 128 (f16 cache 37.8 -> 30.1 / 30.7), 67.7 at 512; batch 4 (512
 * workgroups) 77.8 at 256, 90.8 at 128. */
#define DECODE_CHUNK 256u
#define DECODE_CHUNK_SMALL 128u
#define DECODE_MAX_ROWS 4u  /* seq_q up to this takes the decode path */
#define MAX_HEAD_DIM 256u

/* Head dims an invocation holds (DT) and invocations per row (TPR) of the flash kernel; with
 * TPR > 1, shuffle: the row's partial dots are summed by subgroupShuffleXor instead of through
 * shared memory (one barrier and TPR x BKV shared loads fewer per block of keys, and the
 * shared memory left to the keys and values). */
typedef struct flash_shape {
    unsigned tpr, dt, bkv, threads, shuffle;
} flash_shape;

static flash_shape flash_shape_for(size_t d)
{
    if (d <= 16)
        return (flash_shape){1, 16, 0, 0, 0};
    if (d <= 32)
        return (flash_shape){1, 32, 0, 0, 0};
    if (d <= 64)
        return (flash_shape){1, 64, 0, 0, 0};
    return (flash_shape){d <= 128 ? 2 : 4, 64, 0, 0, 0};
}

static size_t flash_shared_bytes(flash_shape s)
{
    return 2u * s.bkv * s.tpr * s.dt * F32 + (s.tpr > 1 && !s.shuffle ? s.threads * s.bkv * F32 : 0);
}

/* The attention kernels' flags; each kernel's table takes the fields it has. */
typedef struct att_flags {
    uint32_t tpr, dt, rq, bkv, threads, dp, ch, shuffle, vec4, exact, split, kv_f16, mask, adjust, gq, k8, v8, merge;
} att_flags;
/* MASK (every kernel but decode_combine): tgl_attention_t's additive mask, read through a buffer
 * texture (common/attention_io.glsl). ADJUST: its window, capping or ALiBi (MASK implies it, so
 * a plan sets it only without a mask; att_scores). */
static const tgl_gl_def flash_defs[] = {
    TGL_GL_UINT(att_flags, tpr, "TPR"), TGL_GL_UINT(att_flags, dt, "DT"), TGL_GL_UINT(att_flags, bkv, "BKV"),
    TGL_GL_UINT(att_flags, threads, "THREADS"), TGL_GL_FLAG(att_flags, shuffle, "SUBGROUP_XOR"),
    TGL_GL_FLAG(att_flags, vec4, "VEC4"), TGL_GL_FLAG(att_flags, split, "SPLIT"), TGL_GL_FLAG(att_flags, mask, "MASK"), TGL_GL_FLAG(att_flags, adjust, "ADJUST"),
};
static const tgl_gl_def shuffle_defs[] = {
    TGL_GL_UINT(att_flags, tpr, "TPR"), TGL_GL_UINT(att_flags, dt, "DT"), TGL_GL_UINT(att_flags, rq, "RQ"),
    TGL_GL_UINT(att_flags, bkv, "BKV"), TGL_GL_UINT(att_flags, threads, "THREADS"),
    TGL_GL_FLAG(att_flags, vec4, "VEC4"), TGL_GL_FLAG(att_flags, split, "SPLIT"), TGL_GL_FLAG(att_flags, mask, "MASK"), TGL_GL_FLAG(att_flags, adjust, "ADJUST"),
};
/* KV_F16: k and v in binary16 (the decode kernels read an f16 cache as it is). GQ: query rows
 * per decode workgroup (decode_rows). K8 (with VEC4 and KV_F16): k's rows read 8 halves a load,
 * every row starting on 16 bytes; V8 (with K8): v's likewise (run_decode). */
static const tgl_gl_def decode_defs[] = {
    TGL_GL_UINT(att_flags, dp, "DP"), TGL_GL_UINT(att_flags, ch, "CH"), TGL_GL_FLAG(att_flags, vec4, "VEC4"),
    TGL_GL_FLAG(att_flags, kv_f16, "KV_F16"), TGL_GL_FLAG(att_flags, mask, "MASK"), TGL_GL_FLAG(att_flags, adjust, "ADJUST"), TGL_GL_UINT(att_flags, gq, "GQ"),
    TGL_GL_FLAG(att_flags, k8, "K8"), TGL_GL_FLAG(att_flags, v8, "V8"), TGL_GL_FLAG(att_flags, merge, "MERGE"),
};
/* EXACT: head_dim == dp with whole vec4s, so the loads need no test against head_dim. SPLIT: the
 * keys cut into chunks. */
static const tgl_gl_def reg_defs[] = {
    TGL_GL_UINT(att_flags, rq, "RQ"), TGL_GL_UINT(att_flags, bkv, "BKV"), TGL_GL_UINT(att_flags, dp, "DP"),
    TGL_GL_FLAG(att_flags, vec4, "VEC4"), TGL_GL_FLAG(att_flags, exact, "D_EXACT"),
    TGL_GL_FLAG(att_flags, split, "SPLIT"), TGL_GL_FLAG(att_flags, mask, "MASK"), TGL_GL_FLAG(att_flags, adjust, "ADJUST"),
};

/* How a call's scores are taken (the kernels' MASK and ADJUST): as they are, adjusted
 * (tgl_attention_t's window, softcap or ALiBi), or adjusted and masked. */
enum { SCORES_PLAIN, SCORES_ADJUST, SCORES_MASK, SCORES_KINDS };

static int att_scores(const tgl__attention *a)
{
    return a->mask.buf ? SCORES_MASK
           : a->window || a->softcap != 0.0f || tgl__attention_alibi(a).n != 0 ? SCORES_ADJUST
                                                                               : SCORES_PLAIN;
}

static tgl_gl_plan att_plan(const char *kernel, const tgl_gl_def *defs, size_t n, const att_flags *f, uint32_t wg,
                            const char *why)
{
    tgl_gl_plan p = {.op = "tgl_attention", .wg = wg, .why = why};
    tgl_gl_plan_kernel(&p, kernel, defs, n, f);
    return p;
}

static tgl_gl_plan flash_kernel_plan(flash_shape s, int vec4, int split, int scores)
{
    att_flags f = {.tpr = s.tpr, .dt = s.dt, .bkv = s.bkv, .threads = s.threads, .shuffle = s.shuffle,
                   .vec4 = (uint32_t)vec4, .split = (uint32_t)split, .mask = scores == SCORES_MASK,
                   .adjust = scores == SCORES_ADJUST};
    return att_plan("attention/flash", TGL_GL_DEFS(flash_defs), &f, s.threads,
                    split ? "flash: online softmax over blocks of keys, the keys cut into chunks to fill the device "
                            "(attention_fill)"
                          : "flash: online softmax over blocks of keys (flash_block_keys)");
}

/* Padded head dims of the decode kernels: the smallest of 16, 32, 64, 128, 256 holding d. */
static unsigned decode_dp(size_t d)
{
    unsigned dp = 16;
    while (dp < d)
        dp *= 2;
    return dp;
}

static tgl_gl_plan decode_plan(const char *kernel, unsigned dp, unsigned ch, int vec4, int kv_f16, int k8, int v8,
                               int scores, unsigned gq, int merge, uint32_t wg, const char *why)
{
    uint32_t k8_kept = (uint32_t)(k8 && vec4 && kv_f16);
    att_flags f = {.dp = dp, .ch = ch, .vec4 = (uint32_t)vec4, .kv_f16 = (uint32_t)kv_f16,
                   .mask = scores == SCORES_MASK, .adjust = scores == SCORES_ADJUST, .gq = gq,
                   .k8 = k8_kept, .v8 = (uint32_t)(v8 && k8_kept), .merge = (uint32_t)merge};
    return att_plan(kernel, TGL_GL_DEFS(decode_defs), &f, wg, why);
}

/* The windows of (batch, head) blocks bh0 .. bh0 + n - 1: bindings 0 q, 1 k, 2 v, 3 o, their
 * offsets inside the windows in elements, and whether everything is vec4-aligned. */
typedef struct slab {
    tgl_gl_binding bind[4];
    size_t pad[4];
    int vec4;
    size_t group_phase; /* where bh0 falls in its group of query heads (u_group_phase) */
    size_t bh0;
} slab;

/* Bytes per k and v element. */
static size_t kv_size(const tgl__attention *a)
{
    return a->kv_f16 ? 2 : F32;
}

/* Query heads per key/value head. */
static size_t kv_group(const tgl__attention *a)
{
    return a->heads / a->heads_kv;
}

static slab bind_slab(const tgl__attention *a, size_t bh0, size_t n, size_t align)
{
    slab s;
    size_t g = kv_group(a), kv0 = bh0 / g, n_kv = (bh0 + n - 1) / g - kv0 + 1; /* the kv blocks read */
    size_t d = a->head_dim, nq = n * a->seq_q * d, nkv = ((n_kv - 1) * a->kv_cap + a->seq_kv) * d, es = kv_size(a);
    size_t q_at = bh0 * a->seq_q * d * F32, kv_at = kv0 * a->kv_cap * d * es;
    s.group_phase = bh0 % g;
    s.bh0 = bh0;
    s.bind[0] = tgl_gl_window_aligned((tgl__view){a->q.buf, a->q.offset + q_at}, nq * F32, 0, align, &s.pad[0]);
    s.bind[3] = tgl_gl_window_aligned((tgl__view){a->o.buf, a->o.offset + q_at}, nq * F32, 1, align, &s.pad[3]);
    if (a->seq_kv) {
        s.bind[1] = tgl_gl_window_aligned((tgl__view){a->k.buf, a->k.offset + kv_at}, nkv * es, 0, align,
                                          &s.pad[1]);
        s.bind[2] = tgl_gl_window_aligned((tgl__view){a->v.buf, a->v.offset + kv_at}, nkv * es, 0, align,
                                          &s.pad[2]);
    } else { /* never read: q's window fills the bindings */
        s.bind[1] = s.bind[2] = s.bind[0];
        s.pad[1] = s.pad[2] = s.pad[0] / F32 * es; /* counted in k's elements below */
    }
    s.vec4 = d % 4 == 0;
    for (int i = 0; i < 4; i++) {
        s.pad[i] /= i == 1 || i == 2 ? es : F32;
        s.vec4 &= s.pad[i] % 4 == 0;
    }
    return s;
}

/* The uniforms of common/attention_io.glsl every attention kernel has. */
static void set_uniforms(tgl_backend *b, GLuint prog, const tgl__attention *a, const slab *s)
{
    const tgl_gl_uniform u[] = {
        {LOC_ATT_SEQ_Q, a->seq_q},    {LOC_ATT_SEQ_KV, a->seq_kv}, {LOC_ATT_KV_CAP, a->kv_cap},
        {LOC_ATT_D, a->head_dim},     {LOC_ATT_CAUSAL, (size_t)a->causal},
        {LOC_ATT_Q_OFF, s->pad[0]},   {LOC_ATT_K_OFF, s->pad[1]}, {LOC_ATT_V_OFF, s->pad[2]},
        {LOC_ATT_O_OFF, s->pad[3]},   {LOC_ATT_GROUP, kv_group(a)}, {LOC_ATT_GROUP_PHASE, s->group_phase},
    };
    tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
    tgl_gl_uniform_f(b, prog, LOC_ATT_SCALE, a->scale);
    /* tgl_attention_t's window, capping and ALiBi (0: off) */
    const tgl__alibi al = tgl__attention_alibi(a);
    const tgl_gl_uniform ext[] = {{LOC_ATT_WINDOW, a->window}, {LOC_ATT_HEADS, a->heads}, {LOC_ATT_BH0, s->bh0}};
    tgl_gl_uniforms_ui(b, prog, ext, sizeof ext / sizeof ext[0]);
    tgl_gl_uniform_f(b, prog, LOC_ATT_SOFTCAP, a->softcap);
    const GLfloat alibi[3] = {(GLfloat)al.e0, (GLfloat)al.e1, (GLfloat)al.n};
    tgl_gl_uniform_fv(b, prog, LOC_ATT_ALIBI, 3, alibi);
}

/* attention/flash_shuffle for 32 < head_dim <= 64 where subgroups shuffle: two rows per
 * invocation, each over two invocations, 32 keys per block (H100, 8 x 16 x 2048 x 64: 4.60 ms,
 * causal 2.62, against flash.comp's 5.89 and 3.28; 16 keys: 4.77 and 2.69; docs/performance.md). */
#define SHUFFLE_TPR 2u
#define SHUFFLE_DT 32u
#define SHUFFLE_RQ 2u
#define SHUFFLE_BKV 32u

static tgl_gl_plan shuffle_plan(unsigned threads, int vec4, int split, int scores)
{
    att_flags f = {.tpr = SHUFFLE_TPR, .dt = SHUFFLE_DT, .rq = SHUFFLE_RQ, .bkv = SHUFFLE_BKV, .threads = threads,
                   .vec4 = (uint32_t)vec4, .split = (uint32_t)split, .mask = scores == SCORES_MASK,
                   .adjust = scores == SCORES_ADJUST};
    return att_plan("attention/flash_shuffle", TGL_GL_DEFS(shuffle_defs), &f, threads,
                    "32 < head_dim <= 64 where subgroups shuffle (subgroup_shuffle): two rows per invocation");
}

static int shuffles_rows(const tgl_gl_limits *l, unsigned tpr)
{
    return l->subgroup_shuffle >= tpr && l->subgroup_shuffle % tpr == 0;
}

/* Second pass of a split over keys: attention/decode_combine merges each of the `rows` query
 * rows' chunks (binding 4, unnormalised output then (m, l) per chunk) into o (binding 3). */
static tgl_status combine_chunks(tgl_backend *b, tgl_gl_binding bind[5], size_t rows, size_t chunks,
                                 const tgl__attention *a, size_t o_pad)
{
    tgl_gl_plan plan = decode_plan("attention/decode_combine", decode_dp(a->head_dim), DECODE_CHUNK, 0, 0, 0, 0, 0, 1, 0, 64,
                                   "the second pass of a split over keys: merges the chunks");
    plan.groups = rows;
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    tgl_gl_uniform_ui(b, prog, LOC_ATT_ROWS, (GLuint)rows);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_D, (GLuint)a->head_dim);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_O_OFF, (GLuint)o_pad);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_DECODE_CHUNKS, (GLuint)chunks);
    bind[3].writes = 1;
    bind[4].writes = 0;
    return tgl_gl_dispatch(b, prog, bind, 5, rows);
}

/* The part of the mask that blocks bh0 .. bh0 + n - 1 read, [*lo, *hi) in elements from the
 * call's mask. Block (item t, head h) starts at t mask_b + h mask_h and reads (seq_q - 1) mask_i
 * + seq_kv from there; the lowest start is the first block's or, where the slab reaches the next
 * item, that item's head 0; the highest the last block's or, where the slab starts in an
 * earlier item, the item before the last's last head. */
static void mask_range(const tgl__attention *a, size_t bh0, size_t n, size_t *lo, size_t *hi)
{
    size_t last = bh0 + n - 1, it0 = bh0 / a->heads, it1 = last / a->heads;
    size_t start_lo = it0 * a->mask_b + bh0 % a->heads * a->mask_h, start_hi = it1 * a->mask_b + last % a->heads * a->mask_h;
    if (it1 > it0) {
        size_t next = (it0 + 1) * a->mask_b, before = (it1 - 1) * a->mask_b + (a->heads - 1) * a->mask_h;
        start_lo = next < start_lo ? next : start_lo;
        start_hi = before > start_hi ? before : start_hi;
    }
    *lo = start_lo;
    *hi = start_hi + (a->seq_q - 1) * a->mask_i + a->seq_kv;
}

static size_t mask_span(const tgl__attention *a, size_t bh0, size_t n)
{
    size_t lo, hi;
    mask_range(a, bh0, n, &lo, &hi);
    return hi - lo;
}

/* With a mask, binding 5 (texture unit 5, R32F) over the part blocks bh0 .. bh0 + n - 1 read and
 * its uniforms; binding 4 stands in (read-only, unused) where a pass has none. Returns the pass's
 * binding count: nbind, or 6 with a mask. The kernel indexes from the slab's first item (u_mask[0]
 * + item' mask_b + head mask_h + ...), so u_mask[0] is the window's offset less the part of that
 * item before the window (it wraps below zero in 32 bits, as the kernel's sum does back). */
static int bind_mask(tgl_backend *b, const tgl__attention *a, size_t bh0, size_t n, GLuint prog, tgl_gl_binding bind[6],
                     int nbind)
{
    if (!a->mask.buf)
        return nbind;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t pad, lo, hi;
    mask_range(a, bh0, n, &lo, &hi);
    if (nbind < 5) {
        bind[4] = bind[0];
        bind[4].writes = 0;
        bind[4].texture_format = 0;
    }
    bind[5] = tgl_gl_window_aligned((tgl__view){a->mask.buf, a->mask.offset + lo * F32}, (hi - lo) * F32, 0,
                                    tgl_gl_window_align(l, 1), &pad);
    bind[5].texture_format = GL_R32F;
    size_t item0 = bh0 / a->heads * a->mask_b;
    const GLuint u[4] = {(GLuint)(pad / F32 + item0 - lo), (GLuint)a->mask_b, (GLuint)a->mask_h, (GLuint)a->mask_i};
    tgl_gl_uniform_uiv(b, prog, LOC_ATT_MASK, 4, u);
    return 6;
}

/* The bindings of a pass over slab s: q, k, v and o, and with a split over keys (chunks > 1)
 * binding 4 the scratch buffer of the chunks' partial results (a record of decode_dp(head_dim)
 * + 4 floats per row and chunk), o then bound read-only: combine_chunks writes it. */
static tgl_status pass_bindings(tgl_backend *b, const tgl__attention *a, const slab *s, size_t n, size_t chunks,
                                tgl_gl_binding bind[6])
{
    for (int i = 0; i < 4; i++)
        bind[i] = s->bind[i];
    bind[4] = (tgl_gl_binding){0};
    if (chunks <= 1)
        return TGL_OK;
    size_t bytes = n * a->seq_q * chunks * (decode_dp(a->head_dim) + 4) * F32;
    tgl_gl_buffer *scratch;
    tgl_status st = tgl_gl_scratch(b, bytes, "attention's key-chunk partials", &scratch);
    if (st)
        return st;
    bind[4] = (tgl_gl_binding){.buf = scratch, .bytes = bytes, .writes = 1};
    bind[3].writes = 0;
    return TGL_OK;
}

/* What run_flash runs: flash_shuffle (32 < head_dim <= 64 where subgroups shuffle) or
 * flash.comp in shape fs, and the query rows a workgroup covers. */
typedef struct flash_plan {
    int shuffle_kernel;
    flash_shape fs; /* fs.threads and fs.bkv (keys per block) hold for either kernel */
    unsigned bq;
} flash_plan;

static flash_plan plan_flash(const tgl_gl_limits *l, size_t head_dim, int no_subgroups)
{
    flash_plan p = {0};
    unsigned threads = flash_threads(l);
    if (!no_subgroups && head_dim > 32 && head_dim <= SHUFFLE_TPR * SHUFFLE_DT && shuffles_rows(l, SHUFFLE_TPR)) {
        p.shuffle_kernel = 1;
        p.fs.threads = threads;
        p.bq = threads / SHUFFLE_TPR * SHUFFLE_RQ;
        p.fs.bkv = SHUFFLE_BKV;
        return p;
    }
    p.fs = flash_shape_for(head_dim);
    p.fs.threads = threads;
    /* A row's TPR invocations are neighbours (tid / TPR), so with TPR a power of two dividing the
     * subgroup size they share one subgroup. */
    p.fs.shuffle = p.fs.tpr > 1 && !no_subgroups && shuffles_rows(l, p.fs.tpr);
    for (p.fs.bkv = l->flash_block_keys; p.fs.bkv > 8 && flash_shared_bytes(p.fs) > l->shared_memory; p.fs.bkv /= 2)
        ;
    p.bq = threads / p.fs.tpr;
    return p;
}

/* Keys per chunk for the flash kernels, 0 for none. A grid (row blocks x (batch, head) blocks)
 * of fewer workgroups than the device has multiprocessors (limits.attention_fill) leaves some
 * idle, and under a causal mask its last row blocks, which see the most keys, set its time.
 * Cutting the keys into chunks (workgroup z, merged by decode_combine) gives more, shorter
 * workgroups. H100, `tensorgl bench attention` with forced chunk lengths, ms
 * non-causal / causal: 1x16x1024 d 64 (64 workgroups) unsplit 0.273 / 0.276, 2 chunks 0.191 /
 * 0.178, 3 chunks 0.247 / 0.150, 4 chunks 0.212 / 0.214; 2x16x512 (64): 0.146 / 0.149, 2
 * chunks 0.110 / 0.109, 3: 0.147 / 0.111; 1x8x2048 (64): 0.525 / 0.526, 3 chunks 0.407 / 0.269,
 * 4: 0.357 / 0.354; 1x16x2048 (128): 0.598 / 0.605, 3 chunks 0.662 / 0.507; 1x32x512 d 128
 * (128) and grids of 256 lost with every split. So a non-causal grid is cut into as many
 * chunks as keep it within one workgroup per multiprocessor (at least two: only grids of at most
 * half the device are cut), and a causal triangle (whose diagonal makes a row block's chunks
 * uneven) of at most one workgroup per multiprocessor into 3. Chunks keep at least
 * FLASH_MIN_CHUNK keys and are a multiple of the kernel's block.
 * `forced` (a test hook) sets the chunk length. */
#define FLASH_MIN_CHUNK 128u
static size_t flash_chunk_keys(const tgl__attention *a, const tgl_gl_limits *l, const flash_plan *p, size_t forced)
{
    size_t keys;
    if (!a->seq_kv)
        return 0;
    if (forced) {
        keys = tgl_gl_ceil_div(forced, p->fs.bkv) * p->fs.bkv;
    } else {
        size_t wgs = tgl_gl_ceil_div(a->seq_q, p->bq) * a->batch * a->heads;
        /* Causal with a key sequence not much longer than the queries: a triangle of work. */
        int triangle = a->causal && a->seq_kv < 2 * a->seq_q;
        size_t chunks = !l->attention_fill ? 1 : triangle ? (wgs <= l->attention_fill ? 3 : 1) : l->attention_fill / wgs;
        size_t most = a->seq_kv / FLASH_MIN_CHUNK;
        if (chunks > most)
            chunks = most;
        if (chunks < 2)
            return 0;
        keys = tgl_gl_ceil_div(tgl_gl_ceil_div(a->seq_kv, chunks), p->fs.bkv) * p->fs.bkv;
    }
    return keys; /* tgl_gl_attention takes a length of all the keys or more as no split */
}

/* flash_shuffle or flash.comp over blocks bh0 .. bh0 + n - 1; chunk_keys > 0 cuts the keys into
 * chunks of that many (a multiple of the plan's keys per block), merged by combine_chunks. */
static tgl_status run_flash(tgl_backend *b, const tgl__attention *a, size_t bh0, size_t n, const flash_plan *p,
                            size_t chunk_keys)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    slab s = bind_slab(a, bh0, n, l->ssbo_align);
    size_t chunks = chunk_keys ? tgl_gl_ceil_div(a->seq_kv, chunk_keys) : 1;
    tgl_gl_binding bind[6];
    tgl_status st = pass_bindings(b, a, &s, n, chunks, bind);
    if (st)
        return st;
    int scores = att_scores(a);
    tgl_gl_plan plan = p->shuffle_kernel ? shuffle_plan(p->fs.threads, s.vec4, chunk_keys != 0, scores)
                                         : flash_kernel_plan(p->fs, s.vec4, chunk_keys != 0, scores);
    uint32_t blocks = (uint32_t)tgl_gl_ceil_div(a->seq_q, p->bq);
    plan.groups = (uint64_t)blocks * n * chunks;
    GLuint prog;
    if ((st = tgl_gl_plan_program(b, &plan, &prog)))
        return st;
    set_uniforms(b, prog, a, &s);
    if (!chunk_keys)
        return tgl_gl_dispatch_grid(b, prog, bind, bind_mask(b, a, bh0, n, prog, bind, 4), blocks, (uint32_t)n, 1);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_CHUNKS, (GLuint)chunks);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_CHUNK_KEYS, (GLuint)chunk_keys);
    if ((st = tgl_gl_dispatch_grid(b, prog, bind, bind_mask(b, a, bh0, n, prog, bind, 5), blocks, (uint32_t)n,
                                   (uint32_t)chunks)))
        return st;
    return combine_chunks(b, bind, n * a->seq_q, chunks, a, s.pad[3]);
}

/* Query rows per invocation of flash_reg and keys per step, measured on llvmpipe (LLVM 15, 2
 * cores; `tensorgl bench attention`, batch 1, 8 heads, seq 512): every k and v fetch
 * serves RQ rows, so more rows run faster until the unrolled kernel grows past what LLVM
 * compiles quickly. d 64: 8 rows 8.5 ms (1 s to compile), 16 rows 7.0-7.8 ms (4.6 s), 32 rows
 * 6.7-6.9 ms (32 s to compile: not taken). d 128: 8 rows 15.5 ms (4 s), 16 rows 14.7 (14 s).
 * d 256 (seq 256): 8 rows 11.1 ms with 16 keys per step (4 keys: 1 row 37 ms, 4 rows 23.6, 8
 * rows 22.7). Fewer than 16 query rows take 8, so small calls do not compile the big variant;
 * decode-sized calls take 1 (repeated rows would only waste work). Keys per step: 4 (8 and 16
 * no faster at 16 rows, and slower to compile); 16 for one row (decode: 1x32 heads, cache 4096,
 * d 128: 12.1 ms against 17.5 with 4), and at d 256, where the loops over the head dimension
 * stay rolled and their trips count against llvmpipe's loop limit at every step (see
 * tgl_gl_attention). The compile times above predate the kernel's written-out loops and rolled
 * row stores: with them RQ 16 at d 64 builds in 6-7 s cold on Mesa 22.3 and 25.0, all 52
 * desktop variants in about 2 minutes (`scripts/compile-time.sh`). */
#define REG_THREADS 32
#define REG_CHUNK_KEYS 4096u /* a multiple of every keys-per-step reg_keys gives */
#define REG_FILL 256u
#define REG_MIN_CHUNK 512u
static unsigned reg_keys(unsigned rq, unsigned dp)
{
    return rq == 1 || dp >= 256 ? 16 : 4;
}

static unsigned reg_rows(size_t seq_q, unsigned dp)
{
    return seq_q < 4 ? 1 : seq_q >= 16 && dp <= 64 ? 16 : 8;
}

static tgl_gl_plan reg_plan(unsigned rq, unsigned dp, int vec4, int exact, int split, int scores)
{
    att_flags f = {.rq = rq, .bkv = reg_keys(rq, dp), .dp = dp, .vec4 = (uint32_t)vec4,
                   .exact = (uint32_t)(vec4 && exact), .split = (uint32_t)split, .mask = scores == SCORES_MASK,
                   .adjust = scores == SCORES_ADJUST};
    return att_plan("attention/flash_reg", TGL_GL_DEFS(reg_defs), &f, REG_THREADS,
                    split ? "registers only, RQ query rows per invocation (attention_reg), keys in chunks"
                          : "registers only, RQ query rows per invocation (attention_reg)");
}

/* Keys one invocation may walk under llvmpipe's loop limit (see tgl_gl_attention). */
static size_t walk_keys(size_t head_dim)
{
    return head_dim > 128 ? 7680 : 16383;
}

/* Keys per chunk for flash_reg, 0 for none: past llvmpipe's loop limit (see tgl_gl_attention),
 * and where few invocations would leave cores idle (decode: one row per (batch, head)), chunks
 * of at least REG_MIN_CHUNK keys towards REG_FILL invocations, taken when they at least double
 * the workgroups. llvmpipe, 2 cores, `tensorgl bench attention --decode 1,32,4096,128`: 12.8-12.9
 * ms in one workgroup, 6.8-7.7 in 8 chunks of 512 keys (fills of 512 and 1024 invocations and
 * chunks of 256 keys were no faster); 1 x 8 heads x 1024 keys in 2 chunks, still one workgroup:
 * 0.31 -> 0.39 ms, hence the doubling rule. */
static size_t reg_chunk_keys(const tgl__attention *a, const tgl_gl_limits *l)
{
    size_t keys = a->seq_kv;
    if (!keys)
        return 0;
    int forced = l->loop_limit && keys > walk_keys(a->head_dim);
    if (forced)
        keys = REG_CHUNK_KEYS;
    size_t inv = a->batch * a->heads * tgl_gl_ceil_div(a->seq_q, reg_rows(a->seq_q, decode_dp(a->head_dim)));
    size_t chunks = tgl_gl_ceil_div(a->seq_kv, keys);
    while (inv * chunks < REG_FILL && keys >= 2 * REG_MIN_CHUNK) {
        keys = (keys / 2 + 15) / 16 * 16;
        chunks = tgl_gl_ceil_div(a->seq_kv, keys);
    }
    if (!forced && tgl_gl_ceil_div(inv * chunks, REG_THREADS) < 2 * tgl_gl_ceil_div(inv, REG_THREADS))
        return 0;
    return keys; /* tgl_gl_attention takes a length of all the keys or more as no split */
}

/* A chunk length (a multiple of step) whose chunks' partial results for one (batch, head) block
 * (seq_q rows of decode_dp + 4 floats each) fit max floats (a block's window): keys, or longer chunks where
 * those do not fit, 0 (no split) where two would not. A chunk forced by llvmpipe's loop limit
 * stays as it is past that bound (tgl_gl_attention then refuses the block). The planners size
 * chunks for speed, not for this; a long block under a small SSBO limit (the test hook, 128 KiB:
 * 63 queries in 4 chunks of 72 dims is 33264 floats) is where they meet it. */
static size_t fitting_chunk_keys(const tgl__attention *a, const tgl_gl_limits *l, size_t max, size_t keys,
                                 size_t step)
{
    size_t per_chunk = a->seq_q * (decode_dp(a->head_dim) + 4), fit = max / per_chunk;
    if (tgl_gl_ceil_div(a->seq_kv, keys) <= fit)
        return keys;
    int walk_bound = l->loop_limit && a->seq_kv > walk_keys(a->head_dim); /* chunks cannot grow past it */
    size_t longer = fit < 2 ? a->seq_kv : tgl_gl_ceil_div(tgl_gl_ceil_div(a->seq_kv, fit), step) * step;
    if (walk_bound && longer > walk_keys(a->head_dim))
        return keys;
    return longer >= a->seq_kv ? 0 : longer;
}

/* Query rows a decode workgroup takes (GQ in attention/decode.comp): with grouped-query
 * attention the heads of a group share one k and v block, so 4 or 2 of them (whichever divides
 * the group) read each key and value row once, not 4 or 2 times; 1 without grouping, and where
 * the slab's blocks do not begin and end on whole sets of them. */
static unsigned decode_rows(const tgl__attention *a, const slab *s, size_t n)
{
    size_t g = kv_group(a);
    for (unsigned gq = 4; gq > 1; gq /= 2)
        if (g % gq == 0 && n % gq == 0 && s->group_phase % gq == 0)
            return gq;
    return 1;
}

/* Query rows per decode workgroup the call's slabs can take: 4 or 2 heads of a group where the
 * group is whole sets of them (decode_rows asks each slab). */
static size_t decode_group_rows(const tgl__attention *a)
{
    return kv_group(a) % 4 == 0 ? 4 : kv_group(a) % 2 == 0 ? 2 : 1;
}

/* Whether chunks of DECODE_CHUNK keys would give the device fewer than two decode workgroups
 * per multiprocessor (the profile's compute_units), counted over the whole call. */
static int decode_grid_small(const tgl__attention *a, const tgl_gl_limits *l)
{
    size_t groups = tgl_gl_ceil_div(a->seq_kv, DECODE_CHUNK) * a->batch * a->heads * a->seq_q / decode_group_rows(a);
    return groups < 2 * (size_t)l->compute_units;
}

/* The call's decode chunk (keys per workgroup): DECODE_CHUNK, or DECODE_CHUNK_SMALL where the
 * grid is small (decode_grid_small). */
static size_t decode_chunk(const tgl__attention *a, const tgl_gl_limits *l)
{
    return decode_grid_small(a, l) ? DECODE_CHUNK_SMALL : DECODE_CHUNK;
}

/* Whether the decode pass merges its chunks itself (MERGE) where it can: on a small grid, whose
 * call is bound by latency and so by the second pass's dispatch (H100, GQA decode 1 x 32/8 heads
 * x 4096 keys x 128, f16 cache: 22.1 -> 19.1 us), not on a grid that fills the device, where the
 * MERGE variant's workgroups cost more than that dispatch (batch 4: 49.5 -> 55.9 us; 51.9 with
 * the merge never taken). A test hook's path may force either. */
static int decode_merges(tgl_backend *b, const tgl__attention *a)
{
    int path = tgl_gl_of(b)->test.attention_path;
    if (path == TGL_GL_ATTENTION_DECODE_MERGE || path == TGL_GL_ATTENTION_DECODE_COMBINE)
        return path == TGL_GL_ATTENTION_DECODE_MERGE;
    return decode_grid_small(a, &tgl_gl_of(b)->limits);
}

/* The MERGE words of a decode dispatch (`bytes`: one per row group) in binding *bind: zero
 * between calls (each row group's last workgroup sets its word back), so zeroed whenever the
 * buffer is made. */
static tgl_status decode_counts(tgl_backend *b, size_t bytes, tgl_gl_binding *bind)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_status st = tgl_gl_grow_zeroed(b, &gl->decode_counts, bytes, "decode attention's chunk counts");
    if (st)
        return st;
    *bind = (tgl_gl_binding){.buf = gl->decode_counts, .bytes = bytes, .writes = 1};
    return TGL_OK;
}

static tgl_status run_decode(tgl_backend *b, const tgl__attention *a, size_t bh0, size_t n, size_t ch)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t chunks = a->seq_kv ? tgl_gl_ceil_div(a->seq_kv, ch) : 1, rows = n * a->seq_q;
    unsigned dp = decode_dp(a->head_dim);
    size_t part_bytes = rows * chunks * (dp + 4) * F32;
    tgl_gl_buffer *scratch;
    tgl_status st = tgl_gl_scratch(b, part_bytes, "decode attention's chunk partials", &scratch);
    if (st)
        return st;
    slab s = bind_slab(a, bh0, n, l->ssbo_align);
    tgl_gl_binding bind[7] = {s.bind[0], s.bind[1], s.bind[2], s.bind[3],
                              {.buf = scratch, .bytes = part_bytes, .writes = 1}};
    /* Chunks per dispatch: all of them, or (one block whose keys are longer than a window:
     * decode_key_windows) as many as a window of k or v holds past its alignment pad. */
    size_t per_pass = chunks, chunk_elems = ch * a->head_dim, es = kv_size(a);
    if (n == 1 && a->seq_kv * a->head_dim > tgl_gl_max_window_elems(l, es)) {
        per_pass = tgl_gl_max_window_elems(l, es) / chunk_elems;
        if (!per_pass)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_attention: %u keys of %zu dims exceed the device's SSBO "
                             "block (%llu bytes)", (unsigned)ch, a->head_dim, (unsigned long long)l->max_ssbo_block);
    }
    unsigned gq = decode_rows(a, &s, n);
    /* K8 (decode_plan keeps it for an f16 k read as vec4s): head_dim dp (a multiple of 8: every
     * row whole uvec4s) and k's windows (here, and each pass's below: k's offset on 16 bytes)
     * starting on 16 bytes; V8 (with K8) v's likewise */
    int k8 = a->head_dim == dp && s.pad[1] % 8 == 0 && a->k.offset % 16 == 0;
    int v8 = k8 && s.pad[2] % 8 == 0 && a->v.offset % 16 == 0;
    /* MERGE (decode_merges) where one dispatch covers every chunk, s_p holds their weights
     * (chunks <= ch), the context is desktop GL (the variant binds six storage buffers, past ES
     * 3.1's four: tgl_gl_es_excluded), binding 6 exists (q, k, v, o, the partials, the mask's
     * texture and the counts) and TGL_MAX_MEMORY has room for the counts (else the combine pass) */
    size_t count_bytes = rows / gq * sizeof(uint32_t);
    int merge = decode_merges(b, a) && per_pass == chunks && chunks <= ch && !tgl_gl_of(b)->egl.es &&
                l->storage_blocks >= 7 &&
                tgl__within_budget(b, tgl_gl_grow_extra(tgl_gl_of(b)->decode_counts, count_bytes));
    tgl_gl_plan plan = decode_plan("attention/decode", dp, (unsigned)ch, s.vec4, a->kv_f16, k8, v8, att_scores(a), gq,
                                   merge, DECODE_THREADS,
                                   gq > 1 ? "at most 4 query rows: chunks of keys in parallel, the heads of a group "
                                            "together"
                                          : "at most 4 query rows, or keys past the loop limit: chunks of keys in "
                                            "parallel");
    plan.groups = chunks * rows / gq;
    GLuint prog;
    if ((st = tgl_gl_plan_program(b, &plan, &prog)))
        return st;
    set_uniforms(b, prog, a, &s);
    int nbind = bind_mask(b, a, bh0, n, prog, bind, 5);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_DECODE_CHUNKS, (GLuint)chunks);
    /* o is written only by the merge (this pass's or combine_chunks'): bound read-only
     * otherwise, so no false hazard is recorded. */
    bind[3].writes = merge;
    if (merge) {
        if (nbind < 6) { /* binding 5 unused: a placeholder */
            bind[5] = bind[0];
            bind[5].writes = 0;
        }
        if ((st = decode_counts(b, count_bytes, &bind[6])))
            return st;
        nbind = 7;
    }
    size_t kv_at = bh0 / kv_group(a) * a->kv_cap * a->head_dim * es;
    for (size_t c0 = 0; !st && c0 < chunks; c0 += per_pass) {
        size_t nc = chunks - c0 < per_pass ? chunks - c0 : per_pass;
        if (per_pass < chunks) { /* this pass's keys only, vec4-aligned as the slab's (pad % 4 kept) */
            size_t key0 = c0 * ch, keys = a->seq_kv - key0 < nc * ch ? a->seq_kv - key0 : nc * ch;
            size_t at = kv_at + key0 * a->head_dim * es, bytes = keys * a->head_dim * es, pad_k, pad_v;
            bind[1] = tgl_gl_window_aligned((tgl__view){a->k.buf, a->k.offset + at}, bytes, 0, l->ssbo_align, &pad_k);
            bind[2] = tgl_gl_window_aligned((tgl__view){a->v.buf, a->v.offset + at}, bytes, 0, l->ssbo_align, &pad_v);
            tgl_gl_uniform_ui(b, prog, LOC_ATT_K_OFF, (GLuint)(pad_k / es));
            tgl_gl_uniform_ui(b, prog, LOC_ATT_V_OFF, (GLuint)(pad_v / es));
        }
        tgl_gl_uniform_ui(b, prog, LOC_ATT_DECODE_CHUNK0, (GLuint)c0);
        st = tgl_gl_dispatch_grid(b, prog, bind, nbind, (uint32_t)nc, (uint32_t)(rows / gq), 1);
    }
    if (st || merge)
        return st;
    return combine_chunks(b, bind, rows, chunks, a, s.pad[3]);
}

/* flash_reg over blocks bh0 .. bh0 + n - 1; chunk_keys > 0 cuts the keys into chunks of that
 * many, merged by combine_chunks. */
static tgl_status run_reg(tgl_backend *b, const tgl__attention *a, size_t bh0, size_t n, size_t chunk_keys)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t align = tgl_gl_window_align(l, 1);
    slab s = bind_slab(a, bh0, n, align);
    for (int i = 0; i < 3; i++)
        s.bind[i].texture_format = i > 0 && a->kv_f16 ? (s.vec4 ? GL_RGBA16F : GL_R16F) : s.vec4 ? GL_RGBA32F : GL_R32F;
    unsigned dp = decode_dp(a->head_dim), rq = reg_rows(a->seq_q, dp);
    size_t chunks = chunk_keys ? tgl_gl_ceil_div(a->seq_kv, chunk_keys) : 1;
    tgl_gl_binding bind[6];
    tgl_status st = pass_bindings(b, a, &s, n, chunks, bind);
    if (st)
        return st;
    tgl_gl_plan plan = reg_plan(rq, dp, s.vec4, a->head_dim == dp, chunk_keys != 0, att_scores(a));
    size_t invocations = n * tgl_gl_ceil_div(a->seq_q, rq) * chunks;
    plan.groups = tgl_gl_ceil_div(invocations, REG_THREADS);
    GLuint prog;
    if ((st = tgl_gl_plan_program(b, &plan, &prog)))
        return st;
    set_uniforms(b, prog, a, &s);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_BLOCKS, (GLuint)n);
    if (!chunk_keys)
        return tgl_gl_dispatch(b, prog, bind, bind_mask(b, a, bh0, n, prog, bind, 4),
                               tgl_gl_ceil_div(invocations, REG_THREADS));
    tgl_gl_uniform_ui(b, prog, LOC_ATT_CHUNKS, (GLuint)chunks);
    tgl_gl_uniform_ui(b, prog, LOC_ATT_CHUNK_KEYS, (GLuint)chunk_keys);
    if ((st = tgl_gl_dispatch(b, prog, bind, bind_mask(b, a, bh0, n, prog, bind, 5),
                              tgl_gl_ceil_div(invocations, REG_THREADS))))
        return st;
    return combine_chunks(b, bind, n * a->seq_q, chunks, a, s.pad[3]);
}

/* The flash kernels read f32 k and v: an f16 cache's keys and values that a call uses are
 * widened into gl->attention_kv first (one pass over them, where the products that follow read
 * each key seq_q times), and *wide is the call over that copy, [blocks, seq_kv, head_dim]
 * (kv_cap seq_kv). Each of k and v is one strided copy (tgl_copy's kernel), however much
 * capacity the cache leaves unused. */
static tgl_status widen_kv(tgl_backend *b, const tgl__attention *a, tgl__attention *wide)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t d = a->head_dim, blocks = a->batch * a->heads_kv, n = blocks * a->seq_kv * d, align = gl->limits.ssbo_align;
    size_t v_at = tgl_gl_ceil_div(n * F32, align) * align;
    tgl_status st = tgl_gl_grow(b, &gl->attention_kv, 2 * v_at, "attention's f32 copy of an f16 k and v");
    *wide = *a;
    wide->kv_f16 = 0;
    wide->kv_cap = a->seq_kv;
    wide->k = (tgl__view){gl->attention_kv, 0};
    wide->v = (tgl__view){gl->attention_kv, v_at};
    const tgl__view from[2] = {a->k, a->v}, to[2] = {wide->k, wide->v};
    for (int i = 0; !st && i < 2; i++) {
        tgl__tew e = {.op = TGL__TEW_COPY, .nin = 1, .ndim = 3, .n = n, .shape = {blocks, a->seq_kv, d}};
        e.out = (tgl__tensor_view){.view = to[i], .dtype = TGL_DTYPE_F32, .span = n,
                                   .strides = {(int64_t)(a->seq_kv * d), (int64_t)d, 1}};
        e.in[0] = (tgl__tensor_view){.view = from[i], .dtype = TGL_DTYPE_F16,
                                     .span = ((blocks - 1) * a->kv_cap + a->seq_kv) * d,
                                     .strides = {(int64_t)(a->kv_cap * d), (int64_t)d, 1}};
        st = tgl_gl_tensor_ewise(b, &e);
    }
    return st;
}

tgl_status tgl_gl_attention(tgl_backend *b, const tgl__attention *call)
{
    const tgl__attention *a = call;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    tgl__attention wide, unmasked;
    /* The kernels read a mask through a buffer texture (their four storage blocks are taken). */
    if (a->mask.buf && !l->texture_buffer_texels)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_attention_t: a mask needs buffer textures, which this device "
                         "lacks (ES 3.1 without OES/EXT_texture_buffer)");
    if (a->mask.buf && !a->seq_kv) { /* no key to mask: the plain kernels (zeros) */
        unmasked = *a;
        unmasked.mask = (tgl__view){0};
        a = &unmasked;
    }
    if (a->head_dim > MAX_HEAD_DIM)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_attention: head_dim %zu exceeds the GL kernels' %u",
                         a->head_dim, MAX_HEAD_DIM);
    /* Devices whose profile says so (llvmpipe) take flash_reg. */
    int path = tgl_gl_of(b)->test.attention_path;
    if (path == TGL_GL_ATTENTION_DECODE_MERGE || path == TGL_GL_ATTENTION_DECODE_COMBINE)
        path = TGL_GL_ATTENTION_DECODE; /* the merge forced too: decode_merges */
    if (path < 0 || path > TGL_GL_ATTENTION_DECODE_COMBINE)
        path = l->attention_reg && l->texture_buffer_texels ? TGL_GL_ATTENTION_REG
               : a->seq_q <= DECODE_MAX_ROWS                ? TGL_GL_ATTENTION_DECODE
                                                            : TGL_GL_ATTENTION_FLASH;
    /* flash_reg reads a (batch, head) block's q, k and v as buffer textures: without them, or
     * where a block is longer than one may be (65536 texels under TGL_LIMITS), the SSBO kernels. */
    if (path == TGL_GL_ATTENTION_REG && (!l->texture_buffer_texels || a->seq_q * a->head_dim > l->texture_buffer_texels ||
                                         a->kv_cap * a->head_dim > l->texture_buffer_texels))
        path = a->seq_q <= DECODE_MAX_ROWS ? TGL_GL_ATTENTION_DECODE : TGL_GL_ATTENTION_FLASH;
    /* llvmpipe ends an invocation's loops after l->loop_limit iterations in all, and flash_reg
     * walks a row's keys in one invocation: right up to seq_kv 16383 at head dims up to 128
     * (checked at 16000 for 1, 33, 64, 80 and 128); past 128 its loops over the head dimension
     * stay rolled and count at every step: at 256 measured right at 7950 keys and wrong at 8000
     * (and at 8191, which an earlier check let through). Longer key sequences
     * are cut into chunks of REG_CHUNK_KEYS, merged by a second pass (reg_chunk_keys). flash.comp
     * (llvmpipe's ES contexts, which have no buffer textures here) walks them by blocks: with
     * the bound lifted it went wrong at 1M keys of head_dim 16 (right at 500000 of 64), so past
     * the same bound it gives way to the decode kernels, whose invocations walk 256 keys each. */
    if (path != TGL_GL_ATTENTION_REG && l->loop_limit && a->seq_kv > walk_keys(a->head_dim))
        path = TGL_GL_ATTENTION_DECODE;
    /* One (batch, head) block's k or v longer than an SSBO window (16 MiB under GL 4.3's
     * minimum: a million keys of 4 dims): the decode kernels, a block at a time, walk its keys a
     * window at a time (run_decode) and merge the chunks as always. */
    size_t max = tgl_gl_max_window_elems(l, F32), d = a->head_dim, bh = a->batch * a->heads;
    int key_windows = a->seq_kv && a->kv_cap * d > max;
    if (key_windows)
        path = TGL_GL_ATTENTION_DECODE;
    int reg = path == TGL_GL_ATTENTION_REG, decode = path == TGL_GL_ATTENTION_DECODE;
    /* flash_reg reads an f16 cache through half-float textures and the decode kernels as it is
     * (KV_F16); the flash kernels from an f32 copy. */
    if (a->kv_f16 && a->seq_kv && !reg && !decode) {
        tgl_status st = widen_kv(b, a, &wide);
        if (st)
            return st;
        a = &wide;
    }
    flash_plan plan = plan_flash(l, a->head_dim, path == TGL_GL_ATTENTION_FLASH_NO_SUBGROUPS);
    size_t chunk_keys = tgl_gl_of(b)->test.attention_chunk_keys;
    if (reg && !chunk_keys)
        chunk_keys = reg_chunk_keys(a, l);
    else if (!reg && !decode)
        chunk_keys = flash_chunk_keys(a, l, &plan, chunk_keys);
    if (decode || chunk_keys >= a->seq_kv) /* one chunk: no split (a forced length may be past the keys) */
        chunk_keys = 0;
    if (reg && l->texture_buffer_texels < max) /* flash_reg's blocks are buffer textures */
        max = (size_t)l->texture_buffer_texels;
    if (chunk_keys)
        chunk_keys = fitting_chunk_keys(a, l, max, chunk_keys, reg ? 16 : plan.fs.bkv);
    /* (batch, head) blocks per slab: the windows and the grid must fit. */
    size_t per_q = a->seq_q * d, per_kv = key_windows ? 0 : a->kv_cap * d;
    size_t ch = decode ? decode_chunk(a, l) : 0, chunk = decode ? ch : chunk_keys;
    size_t chunks = a->seq_kv && chunk ? tgl_gl_ceil_div(a->seq_kv, chunk) : 1;
    size_t per_part = decode || chunk_keys ? a->seq_q * chunks * (decode_dp(d) + 4) : 0;
    size_t per = per_q > per_kv ? per_q : per_kv;
    if (per_part > per)
        per = per_part;
    size_t n = key_windows ? per <= max : per ? max / per : bh;
    size_t grid = decode ? l->wg_count[1] / a->seq_q : l->wg_count[1];
    if (n > grid)
        n = grid;
    /* decode: slabs of whole sets of a group's heads, which then share workgroups (decode_rows) */
    size_t gq = decode_group_rows(a);
    if (decode && n > gq)
        n -= n % gq;
    /* Dispatches of bounded time (TGL_MAX_DISPATCH_MS): 4 seq_q seq_kv head_dim per block. */
    double flops = tgl_gl_dispatch_flops(b), per_bh = 4.0 * (double)a->seq_q * (double)a->seq_kv * (double)d;
    if (flops > 0 && per_bh > 0 && (double)n * per_bh > flops)
        n = flops / per_bh >= 1.0 ? (size_t)(flops / per_bh) : 1;
    if (n == 0 || (decode ? chunks > l->wg_count[0] : tgl_gl_ceil_div(a->seq_q, 32) > l->wg_count[0]) ||
        (!reg && chunks > l->wg_count[2]))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_attention: one (batch, head) block (%zu queries, %zu keys of "
                         "%zu dims) exceeds the device's SSBO block or workgroup-count limits", a->seq_q,
                         a->kv_cap, d);
    for (size_t bh0 = 0, nc; bh0 < bh; bh0 += nc) {
        nc = bh - bh0 < n ? bh - bh0 : n;
        /* ... and a slab's part of the mask one buffer texture */
        while (a->mask.buf && nc > 1 && mask_span(a, bh0, nc) > l->texture_buffer_texels)
            nc = (nc + 1) / 2;
        if (a->mask.buf && mask_span(a, bh0, nc) > l->texture_buffer_texels)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_attention_t: one (batch, head) block's mask (%zu floats from "
                             "its first to its last) exceeds the device's buffer texture size (%llu texels)",
                             mask_span(a, bh0, 1), (unsigned long long)l->texture_buffer_texels);
        tgl_status st = reg      ? run_reg(b, a, bh0, nc, chunk_keys)
                         : decode ? run_decode(b, a, bh0, nc, ch)
                                  : run_flash(b, a, bh0, nc, &plan, chunk_keys);
        if (st)
            return st;
    }
    return TGL_OK;
}

void tgl_gl_test_force_attention(tgl_backend *b, int path)
{
    tgl_gl_of(b)->test.attention_path = path;
}

void tgl_gl_test_attention_chunk_keys(tgl_backend *b, size_t keys)
{
    tgl_gl_of(b)->test.attention_chunk_keys = keys;
}

void tgl_gl_attention_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const size_t dims[] = {16, 32, 64, 128, 256};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (int vec4 = 0; vec4 < 2; vec4++) {
            flash_shape fs = flash_shape_for(dims[i]);
            for (fs.shuffle = 0; fs.shuffle <= (fs.tpr > 1 ? 1u : 0u); fs.shuffle++)
                for (fs.threads = 128; fs.threads <= 256; fs.threads *= 2)
                    for (fs.bkv = 8; fs.bkv <= 32; fs.bkv *= 2)
                        for (int split = 0; split < 2; split++)
                            for (int scores = 0; scores < SCORES_KINDS; scores++)
                                tgl_gl_list_plan(fn, ctx, flash_kernel_plan(fs, vec4, split, scores));
            if (dims[i] == SHUFFLE_TPR * SHUFFLE_DT)
                for (unsigned threads = 128; threads <= 256; threads *= 2)
                    for (int split = 0; split < 2; split++)
                        for (int scores = 0; scores < SCORES_KINDS; scores++)
                            tgl_gl_list_plan(fn, ctx, shuffle_plan(threads, vec4, split, scores));
            for (unsigned ch = DECODE_CHUNK_SMALL; ch <= DECODE_CHUNK; ch *= 2)
                for (int kv_f16 = 0; kv_f16 < 2; kv_f16++)
                    for (int scores = 0; scores < SCORES_KINDS; scores++)
                        for (unsigned gq = 1; gq <= 4; gq *= 2)
                            /* K8 only with both; V8 only with K8 */
                            for (int k8 = 0; k8 < (vec4 && kv_f16 ? 2 : 1); k8++)
                                for (int v8 = 0; v8 <= k8; v8++)
                                    for (int merge = 0; merge < 2; merge++)
                                        tgl_gl_list_plan(fn, ctx,
                                                         decode_plan("attention/decode", decode_dp(dims[i]), ch, vec4,
                                                                     kv_f16, k8, v8, scores, gq, merge, DECODE_THREADS,
                                                                     NULL));
            unsigned dp = decode_dp(dims[i]), last_rq = 0;
            for (size_t seq_q = 1; seq_q <= 16; seq_q *= 4) { /* each number of rows reg_rows picks */
                unsigned rq = reg_rows(seq_q, dp);
                if (rq == last_rq)
                    continue;
                last_rq = rq;
                /* (D_EXACT only with vec4: a head_dim of whole vec4s short of dp, 80 say, has not) */
                for (int exact = 0; exact <= vec4; exact++)
                    for (int split = 0; split < 2; split++)
                        for (int scores = 0; scores < SCORES_KINDS; scores++)
                            tgl_gl_list_plan(fn, ctx, reg_plan(rq, dp, vec4, exact, split, scores));
            }
            if (!vec4)
                tgl_gl_list_plan(fn, ctx, decode_plan("attention/decode_combine", decode_dp(dims[i]), DECODE_CHUNK, 0,
                                                      0, 0, 0, 0, 1, 0, 64,
                                                      NULL));
        }
}
