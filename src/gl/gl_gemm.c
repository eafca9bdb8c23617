/* GL driver of the GEMM family (glsl/gemm/gemm_reg.comp, gemm_tiled.comp).
 *
 * A product is cut into sub-products whose windows fit GL_MAX_SHADER_STORAGE_BLOCK_SIZE and
 * whose grids fit the workgroup-count limits (batches first, then the largest of m, n, k);
 * slices of k after the first accumulate into C with beta = 1. Products whose work would keep
 * one dispatch busy past TGL_MAX_DISPATCH_MS (estimated from the device's rate) are cut the
 * same way, by whole tiles of C, so no dispatch runs into a watchdog. Each sub-product picks its
 * variant from the operands' alignment: an operand whose rows, offset and strides are
 * multiples of 4 elements loads as vec4s. tgl_gemm_fused's epilogue (the EPILOGUE variants) runs
 * with the last slice of k only: earlier slices leave plain partial sums in C (a gate's in a
 * temporary: gate_in_slices). */
#include "gl_internal.h"

#include <string.h>

/* Which kernel and launch shape a product gets. */
typedef struct gemm_kernel {
    const tgl_gl_gemm_config *cfg;
    int textures;           /* A and B through buffer textures (k > 0; tiled: batch 1 too) */
    size_t tile_m, tile_n; /* C elements per workgroup */
    const char *why;
} gemm_kernel;

/* One sub-product: rows i0.., columns j0.., k from k0.., products t0.. of the batch. */
typedef struct gemm_part {
    size_t i0, mc, j0, nc, k0, kc, t0, bc;
} gemm_part;

enum { F_TRANS_A = 1, F_TRANS_B = 2, F_F16 = 4, F_A_VEC4 = 8, F_B_VEC4 = 16, F_C_VEC4 = 32, F_BETA_ZERO = 64,
       F_TEX = 128, F_EPILOGUE = 256, F_ALL = 511 };

/* Halves a chunk length, keeping multiples of 4 (so vec4 alignment survives the cut). */
static size_t halve(size_t x)
{
    size_t h = (x + 1) / 2;
    return h > 4 ? (h + 3) / 4 * 4 : (h ? h : 1);
}

/* Halves a chunk of C's rows or columns in whole tiles. */
static size_t halve_tiles(size_t x, size_t tile)
{
    size_t h = tgl_gl_ceil_div(tgl_gl_ceil_div(x, tile), 2) * tile;
    return h < x ? h : x;
}

/* Cuts the chunk until 2 m n k (per product, times the batch) fits `flops` (0: no bound):
 * batches first, then C's larger side in whole tiles, then k (not for a gate, whose factor in C
 * cannot also hold partial sums: it would take gate_in_slices' second pass). */
static void bound_time(const tgl__gemm *g, const gemm_kernel *kn, double flops, gemm_part *p)
{
    while (flops > 0 && 2.0 * (double)p->mc * (double)p->nc * (double)p->kc * (double)p->bc > flops) {
        if (p->bc > 1)
            p->bc = halve(p->bc);
        else if (p->mc >= p->nc && p->mc > kn->tile_m)
            p->mc = halve_tiles(p->mc, kn->tile_m);
        else if (p->nc > kn->tile_n)
            p->nc = halve_tiles(p->nc, kn->tile_n);
        else if (p->mc > kn->tile_m)
            p->mc = halve_tiles(p->mc, kn->tile_m);
        else if (p->kc > 256 && !g->gate)
            p->kc = halve(p->kc);
        else
            break;
    }
}

/* A slice of *k x *other elements whose window is longer than `max`, its rows `ld` apart and
 * counted by *k where outer_is_k, else by *other (C's rows pass as k): halves the rows while their
 * stride alone spans half the window (halving the rows' length would leave that span, and a
 * product of long rows came out in parts of a column or two), else the longer extent. A gate's
 * k stays whole while the other extent can still shrink. */
static void halve_slice(size_t *other, size_t *k, int outer_is_k, size_t ld, size_t max, int gate)
{
    size_t *outer = outer_is_k ? k : other;
    if (*outer > 1 && (*outer - 1) * ld >= max / 2 && !(gate && outer_is_k && *other > 1))
        *outer = halve(*outer);
    else if (*other > 1 && (*other >= *k || gate))
        *other = halve(*other);
    else
        *k = halve(*k);
}

/* Chunk lengths such that every window and grid dimension fits. An operand's window is cut as
 * halve_slice says: by rows where their stride is what makes it long, else along its longer
 * side, except that a gate's k is cut only once m or n is down to one row (then gate_in_slices
 * runs it). */
static void plan(const tgl_gl_limits *l, const tgl__gemm *g, const gemm_kernel *kn, gemm_part *p)
{
    size_t max = tgl_gl_max_window_elems(l, g->f16 ? 2 : sizeof(float));
    if (kn->textures && l->texture_buffer_texels < max)
        max = (size_t)l->texture_buffer_texels; /* one texel per element in the scalar formats */
    p->mc = g->m, p->nc = g->n, p->kc = g->k, p->bc = g->batch;
    for (;;) {
        if (p->bc > l->wg_count[2])
            p->bc = l->wg_count[2];
        else if (tgl_gl_ceil_div(p->nc, kn->tile_n) > l->wg_count[kn->cfg->rows_x ? 1 : 0])
            p->nc = (size_t)l->wg_count[kn->cfg->rows_x ? 1 : 0] * kn->tile_n;
        else if (tgl_gl_ceil_div(p->mc, kn->tile_m) > l->wg_count[kn->cfg->rows_x ? 0 : 1])
            p->mc = (size_t)l->wg_count[kn->cfg->rows_x ? 0 : 1] * kn->tile_m;
        else if (tgl__gemm_span_a(g, p->mc, p->kc, p->bc) > max)
            p->bc > 1 ? (void)(p->bc = halve(p->bc)) : halve_slice(&p->mc, &p->kc, g->trans_a, g->lda, max, g->gate);
        else if (tgl__gemm_span_b(g, p->kc, p->nc, p->bc) > max)
            p->bc > 1 ? (void)(p->bc = halve(p->bc)) : halve_slice(&p->nc, &p->kc, !g->trans_b, g->ldb, max, g->gate);
        else if (tgl__matrix_span(p->mc, p->nc, g->ldc, g->stride_c, p->bc) > max)
            p->bc > 1 ? (void)(p->bc = halve(p->bc)) : halve_slice(&p->nc, &p->mc, 1, g->ldc, max, 0);
        else
            return;
    }
}

/* Grids of the renderer's large tile shorter than GEMM_MEDIUM_GRID workgroups take its medium
 * tile, and shorter than GEMM_SMALL_GRID its small one. On the H100 (132 multiprocessors,
 * TFLOP/s; large 128 x 256, medium 128 x 128, small 64 x 128): 4096^3 (512 large
 * workgroups) 43.9 large against 41.3 medium; 2048^3 (128) 39.4 large, 40.0 medium; 64 x 256^3
 * batched (128) 24.9 large, 32.2 medium; 1024^3 (32) 10.1 large, 17.6 medium, 29.6 small. */
#define GEMM_MEDIUM_GRID 256
#define GEMM_SMALL_GRID 64

/* Elements of C the tiles of a configuration cover (edge tiles whole). */
static size_t covered(const tgl__gemm *g, const tgl_gl_gemm_config *cfg)
{
    return tgl_gl_ceil_div(g->m, cfg->bm) * cfg->bm * tgl_gl_ceil_div(g->n, cfg->bn) * cfg->bn;
}

/* The product's kernel configuration, pure in its shape and the profile (the F_* bits follow
 * each sub-product's alignment in run_part). */
static gemm_kernel choose_kernel(const tgl_gl_limits *l, const tgl__gemm *g)
{
    const tgl_gl_gemm_config *cfg = g->f16 ? &l->gemm_f16 : &l->gemm;
    const char *why = g->f16 ? "the profile's f16 configuration (gemm_f16)" : "the profile's large tile (gemm)";
    if (cfg->tiled) {
        size_t grid = tgl_gl_ceil_div(g->m, cfg->bm) * tgl_gl_ceil_div(g->n, cfg->bn) * g->batch;
        if (grid < GEMM_SMALL_GRID && l->gemm_small.tiled) {
            cfg = &l->gemm_small, why = "a grid of fewer than 64 large tiles: the small tile (gemm_small)";
            /* one matrix whose small tiles would leave over half of a wave's multiprocessors idle */
            if (l->gemm_tiny.tiled && g->batch == 1 &&
                tgl_gl_ceil_div(g->m, cfg->bm) * tgl_gl_ceil_div(g->n, cfg->bn) * 2 < l->compute_units)
                cfg = &l->gemm_tiny,
                why = "small tiles under half a wave of compute_units: the tiny tile (gemm_tiny)";
        } else if (grid < GEMM_MEDIUM_GRID && l->gemm_medium.tiled)
            cfg = &l->gemm_medium, why = "a grid of fewer than 256 large tiles: the medium tile (gemm_medium)";
        /* The small tile also takes products the chosen one would cover a quarter more of than
         * it does (n = 64 in 256-wide tiles: four times the work). */
        if (l->gemm_small.tiled && covered(g, cfg) * 4 > covered(g, &l->gemm_small) * 5)
            cfg = &l->gemm_small, why = "the larger tiles would compute a quarter more than C: the small tile";
    }
    /* A tile mostly outside a thin product wastes the device: those go to the register kernel. */
    if (cfg->tiled && (g->m < 32 || g->n < 32))
        cfg = tgl_gl_gemm_table_entry(0), why = "m or n under 32: the register kernel";
    /* The register kernel's invocations past n return at once, so a product under a quarter as wide as
     * its block of columns leaves most of the lanes along x idle: the profile's thin block. */
    if (!cfg->tiled && !cfg->rows_x && !l->gemm_thin.tiled && g->n * 4 < (size_t)cfg->tn * cfg->wg_x &&
        memcmp(cfg, &l->gemm_thin, sizeof *cfg))
        cfg = &l->gemm_thin, why = "n under a quarter of the register kernel's block of columns: the thin block "
                                   "(gemm_thin)";
    /* Textures only where A and B of one product each fit a buffer texture whole: plan() cuts a
     * product to the texture's length, and ES 3.1 promises only 65536 texels (conv2d's im2col
     * GEMM of 36 x 42025 columns under TGL_LIMITS=es31-min came out about a million
     * one-workgroup dispatches); SSBO windows are hundreds of times longer. */
    size_t es = g->f16 ? 2 : sizeof(float);
    int textures = cfg->textures && g->k > 0 && tgl_gl_texture_fits(l, tgl__gemm_span_a(g, g->m, g->k, 1), es) &&
                   tgl_gl_texture_fits(l, tgl__gemm_span_b(g, g->k, g->n, 1), es);
    /* Tiles read through textures only for products of one matrix (gains: gl_limits.c): on the
     * H100 a batched 64 x 256^3 lost with them, 32.1-32.5 -> 27.8-30.9 TFLOP/s. */
    if (cfg->tiled)
        return (gemm_kernel){cfg, textures && g->batch == 1, cfg->bm, cfg->bn, why};
    if (cfg->rows_x) /* the workgroup's x across C's rows */
        return (gemm_kernel){cfg, textures, (size_t)cfg->tm * cfg->wg_x, (size_t)cfg->tn * cfg->wg_y, why};
    return (gemm_kernel){cfg, textures, (size_t)cfg->tm * cfg->wg_y, (size_t)cfg->tn * cfg->wg_x, why};
}

/* Invocations per workgroup of a configuration's kernel. */
static uint32_t group_size(const tgl_gl_gemm_config *cfg)
{
    return cfg->tiled ? (cfg->bm / cfg->tm) * (cfg->bn / cfg->tn) : cfg->wg_x * cfg->wg_y;
}

/* The GEMM kernels' flags: the configuration's tiles (gemm_tiled.comp: BM..THREADS, NV_UNROLL,
 * DOUBLE_SLAB; gemm_reg.comp: WG_X, WG_Y, TM, TN), then the product's F_* bits. */
typedef struct gemm_flags {
    uint32_t bm, bn, bk, tm, tn, threads, unroll, double_slab, wg_x, wg_y, rows_x;
    uint32_t trans_a, trans_b, f16, a_vec4, b_vec4, c_vec4, beta_zero, tex, epilogue;
} gemm_flags;
#define GEMM_BITS(T)                                                                                  \
    TGL_GL_FLAG(T, trans_a, "TRANS_A"), TGL_GL_FLAG(T, trans_b, "TRANS_B"), TGL_GL_FLAG(T, f16, "F16"), \
        TGL_GL_FLAG(T, a_vec4, "A_VEC4"), TGL_GL_FLAG(T, b_vec4, "B_VEC4"), TGL_GL_FLAG(T, c_vec4, "C_VEC4"), \
        TGL_GL_FLAG(T, beta_zero, "BETA_ZERO"), TGL_GL_FLAG(T, tex, "TEX"), TGL_GL_FLAG(T, epilogue, "EPILOGUE")
static const tgl_gl_def tiled_defs[] = {
    TGL_GL_UINT(gemm_flags, bm, "BM"), TGL_GL_UINT(gemm_flags, bn, "BN"), TGL_GL_UINT(gemm_flags, bk, "BK"),
    TGL_GL_UINT(gemm_flags, tm, "TM"), TGL_GL_UINT(gemm_flags, tn, "TN"), TGL_GL_UINT(gemm_flags, threads, "THREADS"),
    TGL_GL_FLAG(gemm_flags, unroll, "NV_UNROLL"), TGL_GL_FLAG(gemm_flags, double_slab, "DOUBLE_SLAB"),
    GEMM_BITS(gemm_flags),
};
static const tgl_gl_def reg_defs[] = {
    TGL_GL_UINT(gemm_flags, wg_x, "WG_X"), TGL_GL_UINT(gemm_flags, wg_y, "WG_Y"), TGL_GL_UINT(gemm_flags, tm, "TM"),
    TGL_GL_UINT(gemm_flags, tn, "TN"), TGL_GL_FLAG(gemm_flags, rows_x, "ROWS_X"), GEMM_BITS(gemm_flags),
};

/* Whether cfg is one of the built-in configurations (the variant list holds those; one from
 * TGL_GEMM or a tune file is the user's). */
static int built_in(const tgl_gl_gemm_config *cfg)
{
    const tgl_gl_gemm_config *e;
    for (size_t i = 0; (e = tgl_gl_gemm_table_entry(i)); i++)
        if (!memcmp(e, cfg, sizeof *cfg))
            return 1;
    return 0;
}

/* The plan of configuration cfg with the product's F_* bits f: the one place GEMM defines are
 * written. */
static tgl_gl_plan gemm_plan(const tgl_gl_gemm_config *cfg, unsigned f)
{
    gemm_flags g = {cfg->bm, cfg->bn, cfg->bk, cfg->tm, cfg->tn, group_size(cfg), cfg->unroll, cfg->double_slab,
                    cfg->wg_x, cfg->wg_y, (uint32_t)cfg->rows_x,
                    !!(f & F_TRANS_A), !!(f & F_TRANS_B), !!(f & F_F16), !!(f & F_A_VEC4), !!(f & F_B_VEC4),
                    !!(f & F_C_VEC4), !!(f & F_BETA_ZERO), !!(f & F_TEX), !!(f & F_EPILOGUE)};
    tgl_gl_plan p = {.op = f & F_F16 ? "tgl_gemm_f16" : f & F_EPILOGUE ? "tgl_gemm_fused" : "tgl_gemm",
                     .wg = group_size(cfg)};
    if (cfg->tiled)
        tgl_gl_plan_kernel(&p, "gemm/gemm_tiled", TGL_GL_DEFS(tiled_defs), &g);
    else
        tgl_gl_plan_kernel(&p, "gemm/gemm_reg", TGL_GL_DEFS(reg_defs), &g);
    p.user_config = !built_in(cfg);
    return p;
}

static int is4(size_t x)
{
    return x % 4 == 0;
}

/* One sub-product with C = alpha AB + beta C, or (epilogue) with g's epilogue as well. */
static tgl_status run_part(tgl_backend *b, const tgl__gemm *g, const gemm_kernel *kn, const gemm_part *p,
                           float beta, int epilogue)
{
    size_t es = g->f16 ? 2 : sizeof(float);
    size_t a_el = p->t0 * g->stride_a + (g->trans_a ? p->k0 * g->lda + p->i0 : p->i0 * g->lda + p->k0);
    size_t b_el = p->t0 * g->stride_b + (g->trans_b ? p->j0 * g->ldb + p->k0 : p->k0 * g->ldb + p->j0);
    size_t c_el = p->t0 * g->stride_c + p->i0 * g->ldc + p->j0;
    size_t pad_a = 0, pad_b = 0, pad_c = 0;
    tgl_gl_binding bind[4];
    bind[2] = tgl_gl_window(b, (tgl__view){g->c.buf, g->c.offset + c_el * es},
                            tgl__matrix_span(p->mc, p->nc, g->ldc, g->stride_c, p->bc) * es, 1, &pad_c);
    if (p->kc) {
        const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
        size_t align = tgl_gl_window_align(l, kn->textures);
        bind[0] = tgl_gl_window_aligned((tgl__view){g->a.buf, g->a.offset + a_el * es},
                                        tgl__gemm_span_a(g, p->mc, p->kc, p->bc) * es, 0, align, &pad_a);
        bind[1] = tgl_gl_window_aligned((tgl__view){g->b.buf, g->b.offset + b_el * es},
                                        tgl__gemm_span_b(g, p->kc, p->nc, p->bc) * es, 0, align, &pad_b);
    } else {
        /* k == 0: A and B are never read; any live buffer fills their bindings. */
        bind[0] = bind[1] = bind[2];
        bind[0].writes = bind[1].writes = 0;
    }
    pad_a /= es, pad_b /= es, pad_c /= es;
    int one = p->bc == 1;
    /* The epilogue reads beta at run time: its variants do not double for BETA_ZERO. */
    unsigned f = (g->trans_a ? F_TRANS_A : 0) | (g->trans_b ? F_TRANS_B : 0) | (g->f16 ? F_F16 : 0) |
                 (epilogue ? F_EPILOGUE : beta == 0.0f ? F_BETA_ZERO : 0);
    if (p->kc && is4(g->trans_a ? p->mc : p->kc) && is4(g->lda) && is4(pad_a) && (one || is4(g->stride_a)))
        f |= F_A_VEC4;
    if (p->kc && is4(g->trans_b ? p->kc : p->nc) && is4(g->ldb) && is4(pad_b) && (one || is4(g->stride_b)))
        f |= F_B_VEC4;
    if (is4(p->nc) && is4(g->ldc) && is4(pad_c) && (one || is4(g->stride_c)))
        f |= F_C_VEC4;
    if (kn->textures) {
        static const GLenum formats[2][2] = {{GL_R32F, GL_RGBA32F}, {GL_R16F, GL_RGBA16F}};
        f |= F_TEX;
        bind[0].texture_format = formats[g->f16][!!(f & F_A_VEC4)];
        bind[1].texture_format = formats[g->f16][!!(f & F_B_VEC4)];
    }

    tgl_gl_plan plan = gemm_plan(kn->cfg, f);
    plan.groups = tgl_gl_ceil_div(p->nc, kn->tile_n) * tgl_gl_ceil_div(p->mc, kn->tile_m) * p->bc;
    plan.why = kn->why;
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    const tgl_gl_uniform u[] = {
        {LOC_GEMM_M, p->mc},        {LOC_GEMM_N, p->nc},        {LOC_GEMM_K, p->kc},
        {LOC_GEMM_LDA, g->lda},     {LOC_GEMM_LDB, g->ldb},     {LOC_GEMM_LDC, g->ldc},
        {LOC_GEMM_A_OFF, pad_a},    {LOC_GEMM_B_OFF, pad_b},    {LOC_GEMM_C_OFF, pad_c},
        {LOC_GEMM_STRIDE_A, g->stride_a}, {LOC_GEMM_STRIDE_B, g->stride_b}, {LOC_GEMM_STRIDE_C, g->stride_c},
    };
    tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
    tgl_gl_uniform_f(b, prog, LOC_GEMM_ALPHA, g->alpha);
    tgl_gl_uniform_f(b, prog, LOC_GEMM_BETA, beta);
    if (epilogue)
        bind[3] = tgl_gl_epilogue(b, prog, g, p->j0, p->nc, bind[2]);
    uint32_t cols = (uint32_t)tgl_gl_ceil_div(p->nc, kn->tile_n), rows = (uint32_t)tgl_gl_ceil_div(p->mc, kn->tile_m);
    int rows_x = kn->cfg->rows_x;
    return tgl_gl_dispatch_grid(b, prog, bind, epilogue ? 4 : 3, rows_x ? rows : cols, rows_x ? cols : rows,
                                (uint32_t)p->bc);
}

static tgl_status run_on(tgl_backend *b, const tgl__gemm *g, gemm_kernel kn);

/* A gate whose k does not fit one window (an operand of k rows past the SSBO block limit):
 * C's old contents cannot also hold partial sums, so act(alpha AB + bias) goes into a dense
 * temporary of m x n floats first (slices of k adding up there, the epilogue with the last), and
 * C is multiplied by it in a second pass (the strided element-wise kernel). */
static tgl_status gate_in_slices(tgl_backend *b, const tgl__gemm *g, gemm_kernel kn)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t mn = g->m * g->n;
    tgl_status st = tgl_gl_grow(b, &gl->split_partials, mn * sizeof(float), "a product's slice partials");
    if (st)
        return st;
    tgl__gemm t = *g;
    t.gate = 0;
    t.beta = 0.0f;
    t.c = (tgl__view){gl->split_partials, 0};
    t.ldc = g->n;
    if ((st = run_on(b, &t, kn)))
        return st;
    tgl__tew e = {.op = TGL__TEW_BINARY, .sub = TGL_BINARY_MUL, .nin = 2, .ndim = 2, .n = mn,
                  .shape = {g->m, g->n}};
    e.out = (tgl__tensor_view){.view = g->c, .dtype = TGL_DTYPE_F32, .span = (g->m - 1) * g->ldc + g->n,
                               .strides = {(int64_t)g->ldc, 1}};
    e.in[0] = (tgl__tensor_view){.view = t.c, .dtype = TGL_DTYPE_F32, .span = mn, .strides = {(int64_t)g->n, 1}};
    e.in[1] = e.out;
    return tgl_gl_tensor_ewise(b, &e);
}

/* One product (or batch) as it comes, on kernel kn (choose_kernel's for g): cut into
 * sub-products that fit the limits. */
static tgl_status run_on(tgl_backend *b, const tgl__gemm *g, gemm_kernel kn)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    gemm_part chunk;
    plan(l, g, &kn, &chunk);
    bound_time(g, &kn, tgl_gl_dispatch_flops(b), &chunk);
    if (g->gate && chunk.kc < g->k)
        return gate_in_slices(b, g, kn);
    for (size_t t0 = 0; t0 < g->batch; t0 += chunk.bc)
        for (size_t i0 = 0; i0 < g->m; i0 += chunk.mc)
            for (size_t j0 = 0; j0 < g->n; j0 += chunk.nc)
                for (size_t k0 = 0; k0 < g->k || k0 == 0; k0 += chunk.kc ? chunk.kc : 1) {
                    gemm_part p = {i0, g->m - i0 < chunk.mc ? g->m - i0 : chunk.mc,
                                   j0, g->n - j0 < chunk.nc ? g->n - j0 : chunk.nc,
                                   k0, g->k - k0 < chunk.kc ? g->k - k0 : chunk.kc,
                                   t0, g->batch - t0 < chunk.bc ? g->batch - t0 : chunk.bc};
                    /* Later slices of k add to what the first wrote; the last applies the
                     * epilogue (a gate's k is one slice: plan keeps it whole or refuses). */
                    int last = k0 + p.kc >= g->k;
                    tgl_status st = run_part(b, g, &kn, &p, k0 == 0 ? g->beta : 1.0f,
                                             last && tgl__gemm_has_epilogue(g));
                    if (st)
                        return st;
                }
    return TGL_OK;
}

static tgl_status run_product(tgl_backend *b, const tgl__gemm *g)
{
    return run_on(b, g, choose_kernel(&tgl_gl_of(b)->limits, g));
}

/* Split-K: a product of one f32 matrix whose tiled grid leaves multiprocessors idle (in its
 * only or last wave) runs each workgroup over all of k. Such products (with beta == 0, C's rows
 * contiguous, so the sum can land in C as it is, and no gate) cut k into ranges of at least SPLIT_MIN_K,
 * towards SPLIT_TARGET workgroups in all and at most SPLIT_MAX ranges; the ranges run as one
 * batched product into partial outputs that the column-sum kernel (gl_reduce.c) then adds up
 * into C, as conv2d's split-K does. A grid splits when it is shorter than SPLIT_BELOW waves and
 * its last wave (a workgroup per multiprocessor: the profile's compute_units) is less than three
 * quarters full; the target is SPLIT_TARGET waves. H100 (132 multiprocessors), TFLOP/s whole -> split (docs/performance.md, GEMM): 128 x
 * 4096 x 4096 (64 workgroups) 16.2 -> 27.7, 256 x 1024 x 1024 (32) 7.6 -> 17.7, 128 x 11008 x
 * 4096 (172) 25.4 -> 33.6; but one full wave lost: 1024^3 (128) 30.0 -> 25.1 towards 264
 * workgroups, 30.2 towards 528; 512 x 4096 x 4096 (128) 38.4 -> 35.3; 2048^3 (256) 41.9 -> 35.3.
 * Towards 264 instead of 528: 24.1 at 128 x 4096 x 4096. */
#define SPLIT_BELOW 2
#define SPLIT_TARGET 4
#define SPLIT_MAX 16
#define SPLIT_MIN_K 256

/* How many ranges of k (1: none) for g on its kernel kn; `forced` (tests): 0 by shape, else
 * that many. */
static size_t gemm_splits(const tgl_gl_limits *l, const tgl__gemm *g, const gemm_kernel *kn, int forced)
{
    if (!kn->cfg->tiled || g->f16 || g->batch != 1 || g->beta != 0.0f || g->ldc != g->n || g->k < 2 ||
        g->m == 0 || g->n == 0 || g->gate)
        return 1;
    size_t want = forced > 0 ? (size_t)forced : 1;
    if (forced <= 0) {
        size_t grid = tgl_gl_ceil_div(g->m, kn->tile_m) * tgl_gl_ceil_div(g->n, kn->tile_n);
        size_t wave = l->compute_units;
        if (grid >= SPLIT_BELOW * wave || ((grid - 1) % wave + 1) * 4 >= wave * 3) /* grid > 0 */
            return 1;
        want = tgl_gl_ceil_div(SPLIT_TARGET * wave, grid);
        if (want > g->k / SPLIT_MIN_K)
            want = g->k / SPLIT_MIN_K;
        if (want > SPLIT_MAX)
            want = SPLIT_MAX;
    }
    size_t max = tgl_gl_max_window_elems(l, sizeof(float)); /* the partials are one window */
    if (want > max / (g->m * g->n))
        want = max / (g->m * g->n);
    return want > 1 ? want : 1;
}

/* A linear layer's product over few rows of x (x W^T, W stored [n, k]: trans_b; a decode step's
 * layers) on the matvec kernel (gl_quant.c), which reads W once per 4 rows of x at the device's
 * bandwidth where the GEMM kernels would leave their tiles' rows mostly empty. H200, 1 x 3072 x
 * 768 (tensorgl bench linear): 63.3 us on the GEMM kernels, PyTorch 10.1 us. Operands whose
 * rows would not fit one window stay with the GEMM kernels, which cut them. */
static int run_thin(tgl_backend *b, const tgl__gemm *g, tgl_status *st)
{
    size_t max = tgl_gl_max_window_elems(&tgl_gl_of(b)->limits, sizeof(float));
    size_t span_x = tgl__matrix_span(g->m, g->k, g->lda, 0, 1), span_y = tgl__matrix_span(g->m, g->n, g->ldc, 0, 1);
    if (g->f16 || g->batch != 1 || g->trans_a || !g->trans_b || g->m > TGL__THIN_ROWS || g->k == 0 ||
        g->k > max / 2 || span_x > max || span_y > max)
        return 0;
    int plain = g->alpha == 1.0f && g->beta == 0.0f && !tgl__gemm_has_epilogue(g);
    tgl__matvec_t mv = {.rows = g->n, .cols = g->k, .n = g->m, .epilogue = plain ? NULL : g};
    mv.w = (tgl__tensor_view){.view = g->b, .dtype = TGL_DTYPE_F32, .span = (g->n - 1) * g->ldb + g->k,
                              .strides = {(int64_t)g->ldb, 1}};
    mv.x = (tgl__tensor_view){.view = g->a, .dtype = TGL_DTYPE_F32, .span = span_x, .strides = {(int64_t)g->lda, 1}};
    mv.y = (tgl__tensor_view){.view = g->c, .dtype = TGL_DTYPE_F32, .span = span_y, .strides = {(int64_t)g->ldc, 1}};
    *st = tgl_gl_matvec_t(b, &mv);
    return 1;
}

tgl_status tgl_gl_gemm(tgl_backend *b, const tgl__gemm *g)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_status st;
    if (run_thin(b, g, &st))
        return st;
    gemm_kernel kn = choose_kernel(&gl->limits, g);
    size_t splits = gemm_splits(&gl->limits, g, &kn, gl->test.gemm_splits);
    if (splits <= 1) /* also every k < 2 */
        return run_on(b, g, kn);
    /* Ranges of kc (a multiple of 4, so vec4 loads stay aligned), the last one shorter. */
    size_t kc = (tgl_gl_ceil_div(g->k, splits) + 3) / 4 * 4, full = g->k / kc, rest = g->k - full * kc;
    size_t parts = full + (rest > 0), mn = g->m * g->n;
    if (parts <= 1)
        return run_on(b, g, kn);
    /* With an epilogue the last range is no partial: the others are summed into C, then it runs
     * into C with beta 1 and the epilogue (a gate never splits: gemm_splits). */
    int epilogue = tgl__gemm_has_epilogue(g);
    size_t batched = epilogue && !rest ? full - 1 : full, partials = parts - (size_t)epilogue;
    if (!tgl__within_budget(b, tgl_gl_grow_extra(gl->split_partials, partials * mn * sizeof(float))))
        return run_on(b, g, kn); /* partials TGL_MAX_MEMORY has no room for: no split */
    if ((st = tgl_gl_grow(b, &gl->split_partials, partials * mn * sizeof(float), "a product's split-K partials")))
        return st;
    /* The whole ranges as one batch of products, range t at A's column (or row) t kc and B's
     * row (or column) t kc, into partial t; beta is 0, so the partials are never read. */
    tgl__gemm ranges = *g;
    ranges.bias = (tgl__view){0};
    ranges.act = TGL_ACTIVATION_NONE;
    ranges.k = kc;
    ranges.batch = batched;
    ranges.stride_a = g->trans_a ? kc * g->lda : kc;
    ranges.stride_b = g->trans_b ? kc : kc * g->ldb;
    ranges.c = (tgl__view){gl->split_partials, 0};
    ranges.ldc = g->n;
    ranges.stride_c = mn;
    if (batched && (st = run_product(b, &ranges)))
        return st;
    /* The range after the batch: a partial of its own, or C's with the epilogue. */
    size_t k0 = batched * kc;
    tgl__gemm last = epilogue ? *g : ranges;
    last.k = g->k - k0;
    last.batch = 1;
    last.stride_a = last.stride_b = last.stride_c = 0;
    last.a.offset = g->a.offset + (g->trans_a ? k0 * g->lda : k0) * sizeof(float);
    last.b.offset = g->b.offset + (g->trans_b ? k0 : k0 * g->ldb) * sizeof(float);
    if (!epilogue) {
        if (rest) {
            last.c.offset = full * mn * sizeof(float);
            if ((st = run_product(b, &last)))
                return st;
        }
        return tgl_gl_reduce(b, TGL_REDUCE_SUM, (tgl__view){gl->split_partials, 0}, g->c, 1, parts, mn);
    }
    if ((st = tgl_gl_reduce(b, TGL_REDUCE_SUM, (tgl__view){gl->split_partials, 0}, g->c, 1, partials, mn)))
        return st;
    last.beta = 1.0f;
    return run_product(b, &last);
}

void tgl_gl_test_force_gemm_splits(tgl_backend *b, int splits)
{
    tgl_gl_of(b)->test.gemm_splits = splits;
}

void tgl_gl_gemm_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    const tgl_gl_gemm_config *cfg;
    for (size_t i = 0; (cfg = tgl_gl_gemm_table_entry(i)); i++) {
        int seen = 0; /* renderers sharing a configuration share its variants */
        for (size_t j = 0; j < i; j++)
            seen |= !memcmp(tgl_gl_gemm_table_entry(j), cfg, sizeof *cfg);
        for (unsigned f = 0; !seen && f <= F_ALL; f++) {
            if (((f & F_TEX) && !cfg->textures) || ((f & F_EPILOGUE) && (f & (F_F16 | F_BETA_ZERO))))
                continue;
            tgl_gl_plan p = gemm_plan(cfg, f);
            fn(ctx, p.kernel, p.defines);
        }
    }
}
