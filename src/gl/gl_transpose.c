/* GL driver for tiled permutes (glsl/shape/transpose.comp): a permute that moves the input's
 * contiguous axis away from the output's last one (a transpose of the last two axes, and the
 * like), where the strided gather would read one element per output element a row apart. The
 * permute is first described without its axes of extent 1; then output axis P has input stride
 * 1, the last axis L some stride, and every other axis is "rest", one workgroup layer each. */
#include "gl_internal.h"

#define F32 sizeof(float)
#define MAX_REST (TGL_MAX_DIMS - 2)
#define TILE 32u  /* the shared-memory kernel's tile edge */
/* Below this many elements along P the gather wins on GPUs: its reads, u_a_l = P elements apart,
 * are nearly contiguous, while most of a tile's lanes along P would idle. H100, [n, P] -> [P, n]
 * of 16M floats (ms, gather / tiles): P 2: 0.080 / 0.53, 4: 0.116 / 0.286, 8: 0.203 / 0.160,
 * 16: 0.381 / 0.096, 32: 0.414 / 0.066. On llvmpipe blocks win from P = 4 on (gather / blocks:
 * P 4: 53-54 / 41-49 ms, 8: 78-79 / 36-43, 32: 102-103 / 13-15). */
#define TILES_MIN_P 8u
#define GROUP 8u  /* BLOCK4's workgroup: GROUP x GROUP blocks */

/* transpose.comp's flags: shared-memory tiles, or (llvmpipe) 4 x 4 blocks through a texture
 * (BLOCK4), stored as dvec4 pairs (TGL_WIDE). */
enum { VARIANT_TILES, VARIANT_BLOCK4, VARIANT_WIDE };
typedef struct transpose_flags {
    uint32_t block4, wide;
} transpose_flags;
static const tgl_gl_def transpose_defs[] = {
    TGL_GL_FLAG(transpose_flags, block4, "BLOCK4"),
    TGL_GL_FLAG(transpose_flags, block4, "TGL_TEX"),
    TGL_GL_FLAG(transpose_flags, wide, "TGL_WIDE"),
};

static tgl_gl_plan transpose_plan(int variant)
{
    static const char *const why[3] = {
        "the input's contiguous axis moves: 32 x 32 tiles through shared memory",
        "the input's contiguous axis moves: 4 x 4 blocks through a texture (transpose)",
        "the input's contiguous axis moves: 4 x 4 blocks, rows of eight stored as dvec4s (wide_stores)",
    };
    transpose_flags f = {variant != VARIANT_TILES, variant == VARIANT_WIDE};
    tgl_gl_plan p = {.op = "tgl_permute", .why = why[variant]};
    tgl_gl_plan_kernel(&p, "shape/transpose", TGL_GL_DEFS(transpose_defs), &f);
    return p;
}

/* The permute's (P, L) plane and rest axes, innermost rest axis first. */
typedef struct plane {
    size_t ext_p, ext_l, a_l, y_p;
    size_t nrest, rest_ext[MAX_REST], rest_a[MAX_REST], rest_y[MAX_REST], layers;
} plane;

/* 1 when s is a permute this kernel serves: after dropping axes of extent 1, the input's
 * contiguous axis is not the output's last. */
static int describe(const tgl__strided *s, plane *pl)
{
    size_t ext[TGL_MAX_DIMS], as[TGL_MAX_DIMS], ys[TGL_MAX_DIMS], n = 0, y_stride = 1;
    for (size_t d = s->ndim; d-- > 0;) { /* the output's row-major strides, kept axes only */
        if (s->shape[d] > 1) {
            ext[n] = s->shape[d];
            as[n] = s->a_stride[d];
            ys[n] = y_stride;
            n++;
        }
        y_stride *= s->shape[d];
    }
    /* ext[0] is now the output's last kept axis, ext[n - 1] its first. */
    size_t p = n;
    for (size_t d = 1; d < n; d++)
        if (as[d] == 1)
            p = d;
    if (n < 2 || p == n)
        return 0;
    *pl = (plane){.ext_p = ext[p], .ext_l = ext[0], .a_l = as[0], .y_p = ys[p], .layers = 1};
    for (size_t d = 1; d < n; d++)
        if (d != p) {
            pl->rest_ext[pl->nrest] = ext[d];
            pl->rest_a[pl->nrest] = as[d];
            pl->rest_y[pl->nrest] = ys[d];
            pl->layers *= ext[d];
            pl->nrest++;
        }
    return 1;
}

tgl_status tgl_gl_transpose(tgl_backend *b, tgl__view a, tgl__view out, const tgl__strided *s, int *done)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    plane pl;
    *done = 0;
    if (l->transpose == TGL_GL_TRANSPOSE_OFF || !describe(s, &pl))
        return TGL_OK;
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (s->n_a > max_elems || s->n_out > max_elems || s->n_out > (size_t)UINT32_MAX)
        return TGL_OK; /* the strided gather's boxes take it */
    int block4 = l->transpose == TGL_GL_TRANSPOSE_BLOCK4;
    if (!block4 && pl.ext_p < TILES_MIN_P)
        return TGL_OK;
    size_t pad_a, pad_y;
    tgl_gl_binding bind[3];
    if (block4) {
        if (!l->texel_inputs || s->n_a / 4 + 1 > l->texture_buffer_texels || pl.ext_p % 4 || pl.ext_l % 4)
            return TGL_OK;
        bind[0] = tgl_gl_window_aligned(a, s->n_a * F32, 0, tgl_gl_window_align(l, 1), &pad_a);
        bind[0].texture_format = GL_RGBA32F;
    } else {
        bind[0] = tgl_gl_window(b, a, s->n_a * F32, 0, &pad_a);
    }
    bind[1] = bind[0]; /* binding 1 unused */
    bind[2] = tgl_gl_window(b, out, s->n_out * F32, 1, &pad_y);
    if (block4 && (pad_a % 16 || pad_y % 16))
        return TGL_OK; /* BLOCK4 moves whole vec4s */
    int variant = VARIANT_TILES;
    if (block4) /* rows of eight at a 32-byte-aligned output store dvec4s (common/wide_store.glsl) */
        variant = l->wide_stores && pl.ext_l % 8 == 0 && pad_y % 32 == 0 ? VARIANT_WIDE : VARIANT_BLOCK4;
    uint64_t gx = block4 ? tgl_gl_ceil_div(pl.ext_p / 4, GROUP) : tgl_gl_ceil_div(pl.ext_l, TILE);
    uint64_t gy = block4 ? tgl_gl_ceil_div(pl.ext_l / (variant == VARIANT_WIDE ? 8 : 4), GROUP)
                         : tgl_gl_ceil_div(pl.ext_p, TILE);
    if (gx > l->wg_count[0] || gy > l->wg_count[1])
        return TGL_OK;
    GLuint prog;
    tgl_gl_plan plan = transpose_plan(variant);
    plan.groups = gx * gy * pl.layers;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    tgl_gl_uniform_ui(b, prog, LOC_TR_EXT_P, (GLuint)pl.ext_p);
    tgl_gl_uniform_ui(b, prog, LOC_TR_EXT_L, (GLuint)pl.ext_l);
    tgl_gl_uniform_ui(b, prog, LOC_TR_A_L, (GLuint)pl.a_l);
    tgl_gl_uniform_ui(b, prog, LOC_TR_Y_P, (GLuint)pl.y_p);
    tgl_gl_uniform_ui(b, prog, LOC_TR_A_OFF, (GLuint)(pad_a / F32));
    tgl_gl_uniform_ui(b, prog, LOC_TR_Y_OFF, (GLuint)(pad_y / F32));
    tgl_gl_uniform_ui(b, prog, LOC_TR_NREST, (GLuint)pl.nrest);
    tgl_gl_uniform_dims(b, prog, LOC_TR_REST_EXT, pl.rest_ext, pl.nrest);
    tgl_gl_uniform_dims(b, prog, LOC_TR_REST_A, pl.rest_a, pl.nrest);
    tgl_gl_uniform_dims(b, prog, LOC_TR_REST_Y, pl.rest_y, pl.nrest);
    *done = 1;
    for (size_t z = 0; z < pl.layers; z += l->wg_count[2]) {
        size_t gz = pl.layers - z < l->wg_count[2] ? pl.layers - z : l->wg_count[2];
        tgl_gl_uniform_ui(b, prog, LOC_TR_Z_START, (GLuint)z);
        if ((st = tgl_gl_dispatch_grid(b, prog, bind, 3, (uint32_t)gx, (uint32_t)gy, (uint32_t)gz)))
            return st;
    }
    return TGL_OK;
}

void tgl_gl_transpose_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int v = VARIANT_TILES; v <= VARIANT_WIDE; v++) {
        tgl_gl_plan p = transpose_plan(v);
        fn(ctx, p.kernel, p.defines);
    }
}
