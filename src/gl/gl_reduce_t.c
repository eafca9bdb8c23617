/* GL driver for the line ops: tgl_reduce_t, tgl_argmax_t and tgl_argmin_t (glsl/tensor/reduce.comp),
 * the row-wise _t ops (glsl/tensor/rows.comp, always a workgroup per line) and the scans
 * (glsl/tensor/scan.comp, a workgroup per chunk of a line). One pure function
 * picks the reduction's variant from the shape and the device profile: a workgroup per out
 * element (GROUP) where lines are long, an invocation per out element otherwise. Operands are bound from their lowest element; out's
 * index space whose windows pass the SSBO block limit is halved, dim by dim, into boxes whose
 * windows fit (a line is never cut: one past the limit is TGL_ERR_UNSUPPORTED). */
#include "gl_internal.h"
#include "../core/validate.h"

typedef struct rdt_flags {
    uint32_t in, out, group;
} rdt_flags;
static const tgl_gl_def rdt_defs[] = {
    TGL_GL_UINT(rdt_flags, in, "IN_DTYPE"),
    TGL_GL_UINT(rdt_flags, out, "OUT_DTYPE"),
    TGL_GL_FLAG(rdt_flags, group, "GROUP"),
};

typedef struct rows_flags {
    uint32_t in, out, w;
} rows_flags;
static const tgl_gl_def rows_defs[] = {
    TGL_GL_UINT(rows_flags, in, "IN_DTYPE"),
    TGL_GL_UINT(rows_flags, out, "OUT_DTYPE"),
    TGL_GL_UINT(rows_flags, w, "W_DTYPE"),
};

typedef struct scan_flags {
    uint32_t in, out, op, items, staged, subgroup, quads, one_pass, read;
} scan_flags;
static const tgl_gl_def scan_defs[] = {
    TGL_GL_UINT(scan_flags, in, "IN_DTYPE"),
    TGL_GL_UINT(scan_flags, out, "OUT_DTYPE"),
    TGL_GL_UINT(scan_flags, op, "SCAN_OP"),
    TGL_GL_UINT(scan_flags, items, "SCAN_K"),
    TGL_GL_FLAG(scan_flags, staged, "SCAN_STAGED"),
    TGL_GL_UINT(scan_flags, subgroup, "SCAN_SG"),
    TGL_GL_FLAG(scan_flags, quads, "SCAN_QUADS"),
    TGL_GL_COUNT(scan_flags, one_pass, "SCAN_ONE_PASS"), /* tiles a chunk holds; 0: two passes */
    TGL_GL_READ(scan_flags, read),
};

/* Lines at least this many reduce_workgroup_size long take a workgroup each; shorter ones too
 * when there are too few out elements to give the device an invocation per line. */
#define GROUP_LINES_PER_LANE 4u
#define FEW_OUTPUTS 4096u

static int use_group(const tgl_gl_limits *l, size_t n_out, size_t len)
{
    return len >= (size_t)GROUP_LINES_PER_LANE * l->reduce_workgroup_size || (len >= 64 && n_out < FEW_OUTPUTS);
}

static tgl_gl_plan rdt_plan(const tgl_gl_limits *l, const char *op, tgl_dtype in, tgl_dtype out, int group)
{
    rdt_flags f = {(uint32_t)in, (uint32_t)out, (uint32_t)group};
    tgl_gl_plan p = {.op = op};
    tgl_gl_plan_kernel(&p, "tensor/reduce", TGL_GL_DEFS(rdt_defs), &f);
    if (group && l)
        p.wg = l->reduce_workgroup_size;
    p.why = group ? "long lines (or few of them): a workgroup per out element, then a tree"
                  : "an invocation per out element, walking its line";
    return p;
}

/* The row-wise ops: a workgroup per line; w is the 1-D operands' dtype (in's where there are none). */
static tgl_gl_plan rows_plan(const tgl_gl_limits *l, const char *op, tgl_dtype in, tgl_dtype out, tgl_dtype w)
{
    rows_flags f = {(uint32_t)in, (uint32_t)out, (uint32_t)w};
    tgl_gl_plan p = {.op = op};
    tgl_gl_plan_kernel(&p, "tensor/rows", TGL_GL_DEFS(rows_defs), &f);
    if (l)
        p.wg = l->reduce_workgroup_size;
    p.why = "a workgroup per line: its reductions in a tree, then the line written";
    return p;
}

/* The subgroup size the scans' tiles shuffle through: the device's, where its subgroups tile the
 * workgroup and one subgroup can scan their totals; 0 (a scan in shared memory) otherwise. */
static uint32_t scan_subgroup(const tgl_gl_limits *l)
{
    uint32_t sg = l->subgroup_shuffle, wg = l->reduce_workgroup_size;
    return sg >= 2 && wg >= sg && wg % sg == 0 && wg / sg <= sg ? sg : 0;
}

/* The scans: a workgroup per chunk of a line (tensor/scan.comp), `items` consecutive elements
 * per invocation in each tile, staged through shared memory or not (the profile's scan_items and
 * scan_staged), scanned across the workgroup through subgroups of `subgroup` (0: shared memory),
 * in read as `read`, with `quads` (scan_quads) 4 elements a load and a store, in one pass where
 * `one_pass` (scan_one_pass: the tiles a chunk holds, 0 for two passes); op a TGL__RDT scan. */
static tgl_gl_plan scan_plan(const tgl_gl_limits *l, const char *op, unsigned scan, tgl_dtype in, tgl_dtype out,
                             uint32_t items, int staged, uint32_t subgroup, int quads, uint32_t one_pass, tgl_gl_read read)
{
    scan_flags f = {(uint32_t)in, (uint32_t)out, (uint32_t)(scan - TGL__RDT_CUMSUM), items, (uint32_t)staged,
                    subgroup, (uint32_t)quads, one_pass, (uint32_t)read};
    tgl_gl_plan p = {.op = op};
    tgl_gl_plan_kernel(&p, "tensor/scan", TGL_GL_DEFS(scan_defs), &f);
    if (l)
        p.wg = l->reduce_workgroup_size;
#define SCAN_WHY "a workgroup per chunk of a line: chunk totals, then each chunk scanned from its carry"
    p.why = one_pass ? "a workgroup per chunk of a line, in one pass: each chunk's total published, the earlier "
                       "ones' awaited, 4 elements a load"
            : quads  ? SCAN_WHY ", 4 elements a load"
                     : SCAN_WHY;
#undef SCAN_WHY
    return p;
}

/* The chunk (elements) of the scans' lines: as few tiles (of wg x scan_items elements) as give
 * the device SCAN_GROUPS_PER_UNIT workgroups per compute unit over all `lines` - a workgroup's
 * tiles run one after another - but at most `most` tiles unless the line would take more than
 * `max_chunks`. Two passes take up to SCAN_CHUNK_TILES (which bounds the rounding steps of an f32
 * sum, scan.comp) and SCAN_MAX_CHUNKS (each chunk's carry reads every earlier chunk's total). */
#define SCAN_GROUPS_PER_UNIT 8u
#define SCAN_CHUNK_TILES 8u
#define SCAN_MAX_CHUNKS 1024u
static size_t scan_chunk(const tgl_gl_limits *l, size_t len, size_t lines, size_t most, size_t max_chunks)
{
    size_t tile = (size_t)l->reduce_workgroup_size * l->scan_items, tiles = tgl_gl_ceil_div(len, tile);
    size_t want = tgl_gl_ceil_div((size_t)l->compute_units * SCAN_GROUPS_PER_UNIT, lines ? lines : 1); /* a line */
    size_t per_chunk = want ? tgl_gl_ceil_div(tiles, want) : tiles;
    if (per_chunk > most)
        per_chunk = most;
    if (per_chunk < tgl_gl_ceil_div(tiles, max_chunks))
        per_chunk = tgl_gl_ceil_div(tiles, max_chunks);
    return (per_chunk ? per_chunk : 1) * tile;
}

/* The window over out's box [lo, lo + ext) of an operand v (strides over out's dims), its line
 * of len elements `step` apart included (len 0 or 1: none). */
static tgl__tensor_view sub_view(const tgl__tensor_view *v, size_t ndim, const size_t *lo, const size_t *ext,
                                 int64_t step, size_t len)
{
    tgl__tensor_view s = *v;
    int64_t origin = (int64_t)v->base, back = 0, ahead = 0;
    for (size_t d = 0; d <= ndim; d++) {
        int64_t reach = d < ndim ? v->strides[d] * (int64_t)(ext[d] - 1) : step * (int64_t)(len ? len - 1 : 0);
        if (d < ndim)
            origin += (int64_t)lo[d] * v->strides[d];
        *(reach < 0 ? &back : &ahead) += reach < 0 ? -reach : reach;
    }
    s.view.offset = v->view.offset + (size_t)(origin - back) * tgl_dtype_size(v->dtype);
    s.base = (size_t)back;
    s.span = (size_t)(back + ahead + 1);
    return s;
}

typedef struct rdt_run {
    tgl_backend *b;
    const tgl__rdt *r;
    GLuint prog;
    int group;
    size_t max_bytes;
    int params_fit; /* the row-wise ops' 1-D operands within the window (bound whole) */
    size_t scan_chunk; /* the scans: scan_chunk's elements, decided once for every box */
    tgl_gl_read scan_read; /* ... how in is read (scan_read) */
    int scan_quads;        /* ... and whether 4 elements at a time (scan_quads) */
    uint32_t scan_one_pass; /* ... in one pass, chunks of at most this many tiles (scan_one_pass; 0: two) */
} rdt_run;

/* How a scan reads in: as R32UI texels where the device reads inputs so (llvmpipe) and every
 * window of in (at most the block limit, and the texture's alignment pad) fits the texel limit. */
static tgl_gl_read scan_read(const tgl_gl_limits *l, const tgl__rdt *r)
{
    uint64_t most = (uint64_t)tgl_gl_max_window_elems(l, 4) * 4 + l->texture_align;
    int fits = most / 4 <= l->texture_buffer_texels && l->texture_align <= l->ssbo_align + 16; /* (the block's slack) */
    return tgl__rdt_is_scan(r->op) && l->texel_inputs && fits ? tgl_gl_input_read(l, 1) : TGL_GL_READ_SSBO;
}

/* Whether a scan reads and writes 4 elements at a time (scan.comp's SCAN_QUADS, never staged:
 * on the H200 a 16M cumsum took 157 us staged, 82 us so): tiles of a multiple of 4 per
 * invocation, 32-bit in and out, lines of a multiple of 4 elements with step 1 that all start on
 * 16 bytes (element 0 there in in and out, every other dim's stride a multiple of 4), in windows
 * whose starts are 16-byte aligned (the SSBO alignment a multiple of 16, so the texture one's
 * larger power of two too), so that every box's lines start on a quad of its windows. */
static int scan_quads(const tgl_gl_limits *l, const tgl__rdt *r)
{
    if (l->scan_items % 4 || !r->len || r->len % 4 || r->in_step != 1 || r->out_step != 1 ||
        tgl_dtype_size(r->in.dtype) != 4 || tgl_dtype_size(r->out.dtype) != 4 || l->ssbo_align % 16)
        return 0;
    const tgl__tensor_view *v[2] = {&r->in, &r->out};
    for (int i = 0; i < 2; i++) {
        if ((v[i]->view.offset + v[i]->base * 4) % 16)
            return 0;
        for (size_t d = 0; d < r->ndim; d++)
            if (r->shape[d] > 1 && v[i]->strides[d] % 4)
                return 0;
    }
    return 1;
}

/* Whether a scan takes one pass (scan.comp's SCAN_ONE_PASS), its chunk (*chunk) and the tiles its
 * kernel holds: lines 4 elements a load (scan_quads) of 2 to SCAN_ONE_PASS_CHUNKS chunks of at
 * most the profile's scan_one_pass tiles, out sharing no byte with in (a workgroup may read an
 * earlier chunk's elements while that chunk's own workgroup writes). The kernel holds a chunk in
 * registers, as many as its tile count asks whatever the chunk's length, so the count is the
 * smallest power of two of tiles that holds the chunk. 0: two passes. A chunk's carry reads at
 * most chunks / 64 + 63 totals (scan.comp's super-blocks), yet on the H100 lines of more chunks
 * still lost to two passes (1 x 4M: 1024 chunks of 2 tiles 33.5 us against 29.7; 1 x 16M: 8192
 * of 1 tile 115 against 100), where 512 won (1 x 2M: 512 chunks of 2 tiles 20.3 against 22.8). */
#define SCAN_ONE_PASS_CHUNKS 512u
static uint32_t scan_one_pass(const tgl_gl_limits *l, const tgl__rdt *r, int quads, size_t *chunk)
{
    size_t tile = (size_t)l->reduce_workgroup_size * l->scan_items;
    if (!l->scan_one_pass || !quads || tgl__overlaps(r->in.view, r->in.span * 4, r->out.view, r->out.span * 4))
        return 0;
    size_t c = scan_chunk(l, r->len, r->n_out, l->scan_one_pass, SCAN_ONE_PASS_CHUNKS); /* never more chunks */
    if (r->len <= c)
        return 0;
    uint32_t tiles = 1;
    while (tiles * tile < c)
        tiles *= 2;
    if (tiles > l->scan_one_pass)
        return 0;
    *chunk = c;
    return tiles;
}

/* The one-pass scans' words for `segs` segments in *bind, and the epoch this call tags its
 * totals with: two counters each call leaves at zero (and a pad), then 8 words a segment (its
 * chunk's total and super-block's, each with the epoch it was published in). Zeroed whenever the
 * buffer is made, and made anew when the epoch wraps, so no word left from an earlier call holds
 * this call's epoch. */
static tgl_status scan_lookback(tgl_backend *b, size_t segs, tgl_gl_binding *bind, GLuint *epoch)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t bytes = 16 + 32 * segs;
    if (++gl->scan_epoch == 0) {
        tgl_gl_drop(b, &gl->scan_lookback);
        gl->scan_epoch = 1;
    }
    tgl_status st = tgl_gl_grow_zeroed(b, &gl->scan_lookback, bytes, "a one-pass scan's chunk totals");
    if (st)
        return st;
    *bind = (tgl_gl_binding){.buf = gl->scan_lookback, .bytes = bytes, .writes = 1};
    *epoch = gl->scan_epoch;
    return TGL_OK;
}

/* The scans' passes over a box of n lines: chunk totals into the scratch buffer where a line
 * has more than one chunk, then every chunk scanned; or both in one pass (scan_one_pass). */
static tgl_status dispatch_scan(rdt_run *x, const tgl__tensor_view *in, const tgl__tensor_view *out,
                                const tgl__tensor_view *idx, const size_t *shape, size_t n)
{
    tgl_backend *b = x->b;
    const tgl__rdt *r = x->r;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    GLuint prog = x->prog;
    size_t chunk = x->scan_chunk, chunks = tgl_gl_ceil_div(r->len, chunk), segs = n * chunks;
    if (segs > UINT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a scan: %zu chunks of lines in one window (GL takes up to 2^32 - 1)",
                         segs);
    size_t pad_in, pad_out, pad_idx = 0;
    tgl_gl_binding bind[4];
    bind[0] = tgl_gl_window_aligned(in->view, in->span * tgl_dtype_size(in->dtype), 0,
                                    tgl_gl_window_align(l, x->scan_read != TGL_GL_READ_SSBO), &pad_in);
    tgl_gl_bind_read(&bind[0], x->scan_read, x->scan_quads ? GL_RGBA32UI : GL_R32UI);
    bind[1] = tgl_gl_window(b, out->view, out->span * tgl_dtype_size(out->dtype), 1, &pad_out);
    /* no indices: out's window stands in (never written through binding 2) */
    bind[2] = r->has_idx ? tgl_gl_window(b, idx->view, idx->span * 4, 2, &pad_idx) : bind[1];
    bind[3] = bind[1]; /* the totals where there are chunks, out's window (never read) otherwise */
    bind[3].writes = 0;
    if (x->scan_one_pass) {
        GLuint epoch;
        tgl_status st = scan_lookback(b, segs, &bind[3], &epoch);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, prog, LOC_SCAN_EPOCH, epoch);
    } else if (chunks > 1) {
        tgl_gl_buffer *scratch;
        tgl_status st = tgl_gl_scratch(b, segs * 8, "a reduction's segment partials", &scratch);
        if (st)
            return st;
        bind[3] = (tgl_gl_binding){.buf = scratch, .bytes = segs * 8, .writes = 1};
    }
    GLuint in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0}, idx_strides[TGL_MAX_DIMS] = {0};
    tgl_gl_stride_bits(in_strides, in->strides, r->ndim);
    tgl_gl_stride_bits(out_strides, out->strides, r->ndim);
    tgl_gl_stride_bits(idx_strides, idx->strides, r->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_NDIM, (GLuint)r->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_LEN, (GLuint)r->len);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_STEP, (GLuint)(uint64_t)r->in_step);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OUT_STEP, (GLuint)(uint64_t)r->out_step);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_IN_BASE, (GLuint)(pad_in / tgl_dtype_size(in->dtype) + in->base));
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OUT_BASE, (GLuint)(pad_out / tgl_dtype_size(out->dtype) + out->base));
    tgl_gl_uniform_ui(b, prog, LOC_SCAN_IDX_BASE, r->has_idx ? (GLuint)(pad_idx / 4 + idx->base) : 0u);
    tgl_gl_uniform_ui(b, prog, LOC_SCAN_IDX_STEP, (GLuint)(uint64_t)r->idx_step);
    tgl_gl_uniform_ui(b, prog, LOC_SCAN_HAS_IDX, r->has_idx ? 1u : 0u);
    tgl_gl_uniform_ui(b, prog, LOC_SCAN_CHUNK, (GLuint)chunk);
    tgl_gl_uniform_ui(b, prog, LOC_SCAN_CHUNKS, (GLuint)chunks);
    if (r->ndim) {
        tgl_gl_uniform_dims(b, prog, LOC_RDT_SHAPE, shape, r->ndim);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_IN_STRIDE, (GLsizei)r->ndim, in_strides);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_OUT_STRIDE, (GLsizei)r->ndim, out_strides);
        tgl_gl_uniform_uiv(b, prog, LOC_SCAN_IDX_STRIDE, (GLsizei)r->ndim, idx_strides);
    }
    size_t grid = (size_t)l->wg_count[0] * l->wg_count[1];
    tgl_status st = TGL_OK;
    for (unsigned pass = chunks > 1 && !x->scan_one_pass ? 0u : 1u; !st && pass < 2u; pass++) {
        tgl_gl_uniform_ui(b, prog, LOC_SCAN_PASS, pass);
        for (size_t i = 0; !st && i < segs; i += grid) {
            size_t count = segs - i < grid ? segs - i : grid;
            tgl_gl_uniform_ui(b, prog, LOC_RDT_N, (GLuint)count);
            tgl_gl_uniform_ui(b, prog, LOC_RDT_START, (GLuint)i);
            st = tgl_gl_dispatch(b, prog, bind, 4, count);
        }
    }
    return st;
}

static tgl_status dispatch_box(rdt_run *x, const tgl__tensor_view *in, const tgl__tensor_view *out,
                               const tgl__tensor_view *idx, const size_t *shape, size_t n)
{
    if (tgl__rdt_is_scan(x->r->op))
        return dispatch_scan(x, in, out, idx, shape, n);
    tgl_backend *b = x->b;
    const tgl__rdt *r = x->r;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t pad_in = 0, pad_out, pad_w = 0, pad_b = 0;
    tgl_gl_binding bind[4];
    const int rows = tgl__rdt_is_rows(r->op);
    /* an empty line reads nothing: out's window stands in for in's */
    bind[0] = r->len ? tgl_gl_window(b, in->view, in->span * tgl_dtype_size(in->dtype), 0, &pad_in)
                     : tgl_gl_window(b, out->view, out->span * tgl_dtype_size(out->dtype), 0, &pad_in);
    bind[1] = tgl_gl_window(b, out->view, out->span * tgl_dtype_size(out->dtype), 1, &pad_out);
    if (rows) { /* absent 1-D operands: in's window stands in */
        const tgl__tensor_view *w = r->has_w ? &r->w : in, *bb = r->has_bias ? &r->bias : in;
        bind[2] = tgl_gl_window(b, w->view, w->span * tgl_dtype_size(w->dtype), 2, &pad_w);
        bind[3] = tgl_gl_window(b, bb->view, bb->span * tgl_dtype_size(bb->dtype), 3, &pad_b);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_OUT_STEP, (GLuint)(uint64_t)r->out_step);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_W_BASE,
                          r->has_w ? (GLuint)(pad_w / tgl_dtype_size(w->dtype) + w->base) : 0u);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_W_STEP, r->has_w ? (GLuint)(uint64_t)r->w.strides[0] : 0u);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_B_BASE,
                          r->has_bias ? (GLuint)(pad_b / tgl_dtype_size(bb->dtype) + bb->base) : 0u);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_B_STEP, r->has_bias ? (GLuint)(uint64_t)r->bias.strides[0] : 0u);
        tgl_gl_uniform_f(b, x->prog, LOC_RDT_EPS, r->eps);
        tgl_gl_uniform_ui(b, x->prog, LOC_RDT_PARAMS, (r->has_w ? 1u : 0u) | (r->has_bias ? 2u : 0u));
    }
    GLuint prog = x->prog;
    GLuint in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0};
    tgl_gl_stride_bits(in_strides, in->strides, r->ndim);
    tgl_gl_stride_bits(out_strides, out->strides, r->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_NDIM, (GLuint)r->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OP, (GLuint)r->op);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_LEN, (GLuint)r->len);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_STEP, (GLuint)(uint64_t)r->in_step);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_IN_BASE, r->len ? (GLuint)(pad_in / tgl_dtype_size(in->dtype) + in->base) : 0u);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OUT_BASE, (GLuint)(pad_out / tgl_dtype_size(out->dtype) + out->base));
    if (r->ndim) {
        tgl_gl_uniform_dims(b, prog, LOC_RDT_SHAPE, shape, r->ndim);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_IN_STRIDE, (GLsizei)r->ndim, in_strides);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_OUT_STRIDE, (GLsizei)r->ndim, out_strides);
    }
    /* out elements per dispatch: GROUP a workgroup each, else an invocation each */
    uint32_t wg = x->group ? l->reduce_workgroup_size : l->workgroup_size;
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * (x->group ? 1u : wg));
    tgl_status st = TGL_OK;
    for (size_t i = 0; !st && i < n; i += grid) {
        size_t count = n - i < grid ? n - i : grid;
        tgl_gl_uniform_ui(b, prog, LOC_RDT_N, (GLuint)count);
        tgl_gl_uniform_ui(b, prog, LOC_RDT_START, (GLuint)i);
        st = tgl_gl_dispatch(b, prog, bind, rows ? 4 : 2, x->group ? count : tgl_gl_ceil_div(count, wg));
    }
    return st;
}

/* Runs out's box [lo, lo + ext), halving it along the dim that spreads it furthest while a
 * window or its element count is past the limits. */
static tgl_status run_box(rdt_run *x, size_t *lo, size_t *ext)
{
    const tgl__rdt *r = x->r;
    size_t n = 1;
    for (size_t d = 0; d < r->ndim; d++)
        n *= ext[d];
    /* the row-wise ops' out holds a line per index too */
    tgl__tensor_view out = sub_view(&r->out, r->ndim, lo, ext, r->out_step, tgl__rdt_is_rows(r->op) ? r->len : 0);
    tgl__tensor_view in = r->len ? sub_view(&r->in, r->ndim, lo, ext, r->in_step, r->len) : out;
    tgl__tensor_view idx = r->has_idx ? sub_view(&r->idx, r->ndim, lo, ext, r->idx_step, r->len) : out;
    size_t in_bytes = in.span * tgl_dtype_size(in.dtype), out_bytes = out.span * tgl_dtype_size(out.dtype);
    size_t idx_bytes = r->has_idx ? idx.span * 4 : 0;
    if (in_bytes <= x->max_bytes && out_bytes <= x->max_bytes && idx_bytes <= x->max_bytes && n <= UINT32_MAX &&
        x->params_fit)
        return dispatch_box(x, &in, &out, &idx, ext, n);
    size_t best = r->ndim;
    uint64_t reach = 0;
    for (size_t d = 0; d < r->ndim; d++) {
        uint64_t si = (uint64_t)(r->in.strides[d] < 0 ? -r->in.strides[d] : r->in.strides[d]);
        uint64_t so = (uint64_t)(r->out.strides[d] < 0 ? -r->out.strides[d] : r->out.strides[d]);
        uint64_t sx = (uint64_t)(r->idx.strides[d] < 0 ? -r->idx.strides[d] : r->idx.strides[d]);
        so = so > sx ? so : sx;
        uint64_t reach_d = (ext[d] - 1) * ((si > so ? si : so) | 1u);
        if (ext[d] > 1 && (best == r->ndim || reach_d > reach)) {
            best = d;
            reach = reach_d;
        }
    }
    if (best == r->ndim || !x->params_fit)
        return tgl__fail(x->b, TGL_ERR_UNSUPPORTED,
                         "tgl_reduce_t: one line of %zu elements, %lld apart, spans more than the device's buffer "
                         "window (%zu bytes)",
                         r->len, (long long)r->in_step, x->max_bytes);
    size_t keep_lo = lo[best], keep_ext = ext[best], half = keep_ext / 2;
    ext[best] = half;
    tgl_status st = run_box(x, lo, ext);
    lo[best] = keep_lo + half;
    ext[best] = keep_ext - half;
    if (!st)
        st = run_box(x, lo, ext);
    lo[best] = keep_lo;
    ext[best] = keep_ext;
    return st;
}

tgl_status tgl_gl_reduce_t(tgl_backend *b, const tgl__rdt *r)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (r->len > UINT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_reduce_t: a line of %zu elements (GL takes up to 2^32 - 1)",
                         r->len);
    const int rows = tgl__rdt_is_rows(r->op);
    rdt_run x = {.b = b, .r = r, .group = rows || use_group(l, r->n_out, r->len),
                 .max_bytes = tgl_gl_max_window_elems(l, 4) * 4, .params_fit = 1};
    if (r->has_w && r->w.span * tgl_dtype_size(r->w.dtype) > x.max_bytes)
        x.params_fit = 0;
    if (r->has_bias && r->bias.span * tgl_dtype_size(r->bias.dtype) > x.max_bytes)
        x.params_fit = 0;
    static const char *const rows_ops[8] = {"tgl_softmax_t", "tgl_log_softmax_t", "tgl_rmsnorm_t", "tgl_layernorm_t",
                                            "tgl_cumsum",    "tgl_cumprod",       "tgl_cummax",    "tgl_cummin"};
    const char *op = r->op == TGL__RDT_ARGMAX   ? "tgl_argmax_t"
                     : r->op == TGL__RDT_ARGMIN ? "tgl_argmin_t"
                     : rows                     ? rows_ops[r->op - TGL__RDT_SOFTMAX]
                                                : "tgl_reduce_t";
    tgl_dtype wdt = r->has_w ? r->w.dtype : r->has_bias ? r->bias.dtype : r->in.dtype;
    x.scan_read = scan_read(l, r);
    x.scan_quads = tgl__rdt_is_scan(r->op) && scan_quads(l, r);
    if (tgl__rdt_is_scan(r->op)) {
        x.scan_one_pass = scan_one_pass(l, r, x.scan_quads, &x.scan_chunk);
        if (!x.scan_one_pass)
            x.scan_chunk = scan_chunk(l, r->len, r->n_out, SCAN_CHUNK_TILES, SCAN_MAX_CHUNKS);
    }
    tgl_gl_plan plan = tgl__rdt_is_scan(r->op) ? scan_plan(l, op, r->op, r->in.dtype, r->out.dtype, l->scan_items,
                                                           l->scan_staged && !x.scan_quads, scan_subgroup(l), x.scan_quads,
                                                           x.scan_one_pass, x.scan_read)
                       : rows                  ? rows_plan(l, op, r->in.dtype, r->out.dtype, wdt)
                            : rdt_plan(l, op, r->len ? r->in.dtype : r->out.dtype, r->out.dtype, x.group);
    plan.items = 1;
    plan.groups = x.group ? r->n_out : tgl_gl_ceil_div(r->n_out, l->workgroup_size);
    if (tgl__rdt_is_scan(r->op)) /* a workgroup per chunk of each line */
        plan.groups = r->n_out * tgl_gl_ceil_div(r->len, x.scan_chunk);
    tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog);
    if (st)
        return st;
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < r->ndim; d++)
        ext[d] = r->shape[d];
    return run_box(&x, lo, ext);
}

void tgl_gl_reduce_t_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const tgl_dtype data[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    for (size_t i = 0; i < sizeof data / sizeof *data; i++)
        for (int group = 0; group < 2; group++) {
            if (data[i] != TGL_DTYPE_BOOL) /* the arithmetic ops: out of in's dtype */
                tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_reduce_t", data[i], data[i], group));
            tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_reduce_t", data[i], TGL_DTYPE_BOOL, group)); /* any, all */
            if (data[i] != TGL_DTYPE_I32 && data[i] != TGL_DTYPE_BOOL) /* argmax, argmin of floats */
                tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_argmax_t", data[i], TGL_DTYPE_I32, group));
        }
    /* the scans, as the profiles have them: GPUs 8 staged (NVIDIA's 32-wide subgroups shuffling),
     * llvmpipe 32 not, and each unstaged with 4 elements a load where both dtypes are 32-bit
     * (NVIDIA's also in one pass);
     * others compile from GLSL */
    for (uint32_t v = 0; v < 6 * TGL_GL_READS; v++)
        for (unsigned op = TGL__RDT_CUMSUM; op <= TGL__RDT_CUMMIN; op++) {
            uint32_t items = v % 3 == 2 ? 32 : 8, sg = v % 3 == 1 ? 32 : 0;
            tgl_gl_read read = (tgl_gl_read)(v / 6);
            int quads = v % 6 >= 3, staged = items == 8 && !quads;
            int arith = op == TGL__RDT_CUMSUM || op == TGL__RDT_CUMPROD;
            const char *name = arith ? "tgl_cumsum" : "tgl_cummax";
            /* the sums and products: floats into every float, i32 into i32; cummax and cummin: in's
             * dtype kept */
            for (size_t i = 0; i < 4; i++)
                for (size_t o = 0; o < 4; o++) {
                    int kept = data[o] == data[i], wide = tgl_dtype_size(data[i]) == 4;
                    int ok = arith ? (i < 3 && o < 3) || (i == 3 && o == 3) : kept;
                    if (ok && (!quads || (wide && kept)))
                        tgl_gl_list_plan(fn, ctx, scan_plan(NULL, name, op, data[i], data[o], items, staged, sg, quads, 0, read));
                    if (ok && quads && wide && kept && sg && read == TGL_GL_READ_SSBO) /* NVIDIA's one pass */
                        for (uint32_t tiles = 1; tiles <= SCAN_CHUNK_TILES; tiles *= 2)
                            tgl_gl_list_plan(fn, ctx, scan_plan(NULL, name, op, data[i], data[o], items, staged, sg, quads, tiles, read));
                }
            if (arith && !quads) /* bool counted into i32 */
                tgl_gl_list_plan(fn, ctx, scan_plan(NULL, name, op, TGL_DTYPE_BOOL, TGL_DTYPE_I32, items, staged, sg, 0, 0, read));
        }
    for (size_t i = 0; i < 3; i++) /* the row-wise ops: every float in, out and 1-D operand dtype */
        for (size_t o = 0; o < 3; o++)
            for (size_t w = 0; w < 3; w++)
                tgl_gl_list_plan(fn, ctx, rows_plan(NULL, "tgl_rmsnorm_t", data[i], data[o], data[w]));
}
