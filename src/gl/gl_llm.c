/* GL drivers for tgl_rope and tgl_gather_rows (glsl/llm/). */
#include "gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F32 sizeof(float)

/* The host computes each pair's frequency and its phase at pos_offset in double and uploads
 * them to a table buffer, kept for the next call with the same theta, head_dim and pos_offset
 * (q and k of every layer at one decode step): an upload into the table while a queued rope
 * reads it waits for the device, which made back-to-back ropes on the H100 take twice as long.
 * Rows are processed in slabs whose windows fit the SSBO block limit. */

/* The table for (head_dim, pos_offset, theta): inv_freq[half], then phase[half]. */
static tgl_status rope_table(tgl_backend *b, size_t head_dim, size_t pos_offset, float theta, tgl_gl_buffer **out)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t half = head_dim / 2;
    if (gl->rope_table && gl->rope_dim == head_dim && gl->rope_pos == pos_offset && gl->rope_theta == theta) {
        *out = gl->rope_table;
        return TGL_OK;
    }
    gl->rope_dim = 0; /* until the new table is in place */
    tgl_status st = tgl_gl_grow(b, &gl->rope_table, 2 * half * F32, "tgl_rope's frequency table");
    if (st)
        return st;
    float *table = malloc(2 * half * F32);
    if (!table)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_rope: no host memory for %zu frequencies", half);
    for (size_t i = 0; i < half; i++) {
        double f = pow((double)theta, -2.0 * (double)i / (double)head_dim);
        table[i] = (float)f;
        table[half + i] = (float)fmod((double)pos_offset * f, 6.283185307179586);
    }
    st = tgl_gl_upload(b, (tgl__view){gl->rope_table, 0}, table, 2 * half * F32);
    free(table);
    if (st)
        return st;
    gl->rope_dim = head_dim;
    gl->rope_pos = pos_offset;
    gl->rope_theta = theta;
    *out = gl->rope_table;
    return TGL_OK;
}

/* rope.comp's flags: the layout, then one invocation per pair, or per pair index over the heads
 * (HEAD_LOOP, the input through a texture), in vec4s of pair indices. */
typedef struct rope_flags {
    uint32_t interleaved, loop, vec4;
} rope_flags;
static const tgl_gl_def rope_defs[] = {
    TGL_GL_FLAG(rope_flags, interleaved, "INTERLEAVED"), TGL_GL_FLAG(rope_flags, loop, "HEAD_LOOP"),
    TGL_GL_FLAG(rope_flags, loop, "TGL_TEX"), TGL_GL_FLAG(rope_flags, vec4, "TGL_VEC4"),
};

static tgl_gl_plan rope_plan(int interleaved, int loop, int vec4)
{
    rope_flags f = {(uint32_t)interleaved, (uint32_t)loop, (uint32_t)vec4};
    tgl_gl_plan p = {.op = "tgl_rope",
                     .why = loop ? "a pair index per invocation over the heads, through a texture (texel_inputs)"
                                 : "an invocation per pair"};
    tgl_gl_plan_kernel(&p, "llm/rope", TGL_GL_DEFS(rope_defs), &f);
    return p;
}

/* gather_rows.comp's flags: the pass (the gather or checking the ids), a row per invocation
 * (ROW_LOOP, the table through a texture), vec4 rows, pairs of vec4s stored as dvec4s. */
enum { GATHER, GATHER_CHECK };
typedef struct gather_flags {
    uint32_t pass, row_loop, vec4, wide;
} gather_flags;
static const char *const gather_passes[2] = {NULL, "CHECK_IDS"};
static const tgl_gl_def gather_defs[] = {
    TGL_GL_NAME(gather_flags, pass, gather_passes), TGL_GL_FLAG(gather_flags, row_loop, "ROW_LOOP"),
    TGL_GL_FLAG(gather_flags, row_loop, "TGL_TEX"), TGL_GL_FLAG(gather_flags, vec4, "TGL_VEC4"),
    TGL_GL_FLAG(gather_flags, wide, "TGL_WIDE"),
};

static tgl_gl_plan gather_plan(int pass, int row_loop, int vec4, int wide)
{
    gather_flags f = {(uint32_t)pass, (uint32_t)row_loop, (uint32_t)vec4, (uint32_t)wide};
    tgl_gl_plan p = {.op = "tgl_gather_rows",
                     .why = pass == GATHER_CHECK ? "checks every id before anything is written"
                            : row_loop ? "a row per invocation through a texture (texel_inputs)"
                                       : "a workgroup row per id"};
    tgl_gl_plan_kernel(&p, "llm/gather_rows", TGL_GL_DEFS(gather_defs), &f);
    return p;
}

tgl_status tgl_gl_rope(tgl_backend *b, tgl__view in, tgl__view out, size_t rows, size_t seq, size_t heads,
                       size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t half = head_dim / 2, row_elems = heads * head_dim;
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (rows == 0 || row_elems == 0) /* (the API returns before an empty call gets here) */
        return TGL_OK;
    /* llvmpipe (element-wise inputs through textures) loops over the heads in one invocation;
     * gallivm leaves a loop after 65535 trips (limits.loop_limit). */
    size_t tex_align = tgl_gl_window_align(l, 1);
    size_t tex_elems = l->texture_buffer_texels > tex_align / F32 ? l->texture_buffer_texels - tex_align / F32 : 0;
    int loop = l->texel_inputs && (!l->loop_limit || heads < l->loop_limit) && row_elems <= tex_elems;
    size_t align = loop ? tex_align : l->ssbo_align;
    if (loop && tex_elems < max_elems) /* the texture view's texel limit */
        max_elems = tex_elems;
    if (row_elems > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_rope: one token's %zu floats exceed the SSBO block limit",
                         row_elems);
    size_t per = max_elems / row_elems, per_row = loop ? half : row_elems / 2;
    size_t grid_rows = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size / per_row);
    if (per > grid_rows)
        per = grid_rows ? grid_rows : 1;

    tgl_gl_buffer *freq = NULL;
    tgl_status st = rope_table(b, head_dim, pos_offset, theta, &freq);
    if (st)
        return st;
    for (size_t r0 = 0; r0 < rows; r0 += per) {
        size_t nr = rows - r0 < per ? rows - r0 : per, pad_x, pad_y;
        size_t off = r0 * row_elems * F32, pairs = nr * per_row;
        tgl_gl_binding bind[3] = {
            tgl_gl_window_aligned((tgl__view){in.buf, in.offset + off}, nr * row_elems * F32, 0, align, &pad_x),
            tgl_gl_window(b, (tgl__view){out.buf, out.offset + off}, nr * row_elems * F32, 1, &pad_y),
            {.buf = freq, .bytes = 2 * half * F32},
        };
        /* vec4s of pair indices where a head holds whole ones and both windows start aligned */
        int vec4 = loop && half % 4 == 0 && pad_x % 16 == 0 && pad_y % 16 == 0;
        if (loop)
            bind[0].texture_format = vec4 ? GL_RGBA32F : GL_R32F;
        if (vec4) /* invocations: four pair indices each */
            pairs /= 4;
        GLuint prog;
        tgl_gl_plan plan = rope_plan(mode == TGL_ROPE_INTERLEAVED, loop, vec4);
        plan.groups = (pairs + l->workgroup_size - 1) / l->workgroup_size;
        st = tgl_gl_plan_program(b, &plan, &prog);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_HEAD_DIM, (GLuint)head_dim);
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_HEADS, (GLuint)heads);
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_SEQ, (GLuint)seq);
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_PAIRS, (GLuint)pairs);
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_X_OFF, (GLuint)(pad_x / F32));
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_Y_OFF, (GLuint)(pad_y / F32));
        tgl_gl_uniform_ui(b, prog, LOC_ROPE_ROW0, (GLuint)(r0 % seq));
        if ((st = tgl_gl_dispatch(b, prog, bind, 3, plan.groups)))
            return st;
    }
    return TGL_OK;
}

/* ---- tgl_rope_t ---- */

/* rope_t.comp's flags: positions from a buffer, the interleaved layout. */
typedef struct rope_t_flags {
    uint32_t positions, interleaved;
} rope_t_flags;
static const tgl_gl_def rope_t_defs[] = {
    TGL_GL_FLAG(rope_t_flags, positions, "POSITIONS"),
    TGL_GL_FLAG(rope_t_flags, interleaved, "INTERLEAVED"),
};

static tgl_gl_plan rope_t_plan(int positions, int interleaved)
{
    rope_t_flags f = {(uint32_t)positions, (uint32_t)interleaved};
    tgl_gl_plan p = {.op = "tgl_rope_t",
                     .why = positions ? "an invocation per pair slot, positions from a buffer"
                                      : "an invocation per pair slot, positions from the offset"};
    tgl_gl_plan_kernel(&p, "llm/rope_t", TGL_GL_DEFS(rope_t_defs), &f);
    return p;
}

/* The window over what dims 0..nd-1 of v reach from index (i0, i1, 0, ...) over n[0..nd-1],
 * and the offset of that first element in it (elements). */
typedef struct rope_window {
    tgl_gl_binding bind;
    GLuint off;
    size_t elems;
} rope_window;

static rope_window rope_win(const tgl__tensor_view *v, size_t esize, size_t i0, size_t i1, const size_t *n, int nd,
                            int writes, size_t align)
{
    rope_window w;
    int64_t first = (int64_t)v->base + (int64_t)i0 * v->strides[0] + (int64_t)i1 * v->strides[1], lo = 0, hi = 0;
    for (int d = 0; d < nd; d++) {
        int64_t e = (int64_t)(n[d] - 1) * v->strides[d];
        if (e < 0)
            lo += e;
        else
            hi += e;
    }
    w.elems = (size_t)(hi - lo + 1);
    tgl__view at = v->view;
    at.offset += (size_t)(first + lo) * esize;
    size_t pad;
    w.bind = tgl_gl_window_aligned(at, w.elems * esize, writes, align, &pad);
    w.off = (GLuint)(pad / esize + (size_t)(-lo));
    return w;
}

/* The frequencies in the device table, uploaded only when they differ from the last call's. */
static tgl_status rope_t_table(tgl_backend *b, const float *freq, size_t n)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (gl->rope_t_table && gl->rope_t_count == n && !memcmp(gl->rope_t_host, freq, n * F32))
        return TGL_OK;
    gl->rope_t_count = 0; /* until the new table is in place */
    float *host = realloc(gl->rope_t_host, n * F32);
    if (!host)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_rope_t: no host memory for %zu frequencies", n);
    gl->rope_t_host = host;
    tgl_status st = tgl_gl_grow(b, &gl->rope_t_table, n * F32, "tgl_rope_t's frequency table");
    if (!st)
        st = tgl_gl_upload(b, (tgl__view){gl->rope_t_table, 0}, freq, n * F32);
    if (st)
        return st;
    memcpy(host, freq, n * F32);
    gl->rope_t_count = n;
    return TGL_OK;
}

/* One dispatch where x's, y's and the positions' windows fit the SSBO block limit; else a
 * batch entry at a time, in runs of tokens halved until they fit. */
tgl_status tgl_gl_rope_t(tgl_backend *b, const tgl__rope_t *r)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_elems = tgl_gl_max_window_elems(l, F32), half = r->head_dim / 2;
    size_t rh = r->rotary_dim / 2;
    tgl_status st = rope_t_table(b, r->freq, rh ? rh : 1);
    if (st)
        return st;
    const size_t inner[2] = {r->heads, r->head_dim};
    /* what nb batch entries of ns tokens need */
#define FITS(nb, ns)                                                                                             \
    (rope_win(&r->x, F32, 0, 0, (size_t[]){nb, ns, inner[0], inner[1]}, 4, 0, l->ssbo_align).elems <= max_elems && \
     rope_win(&r->y, F32, 0, 0, (size_t[]){nb, ns, inner[0], inner[1]}, 4, 1, l->ssbo_align).elems <= max_elems && \
     (uint64_t)(nb) * (ns) * r->heads * half <= UINT32_MAX)
    size_t nb = r->batch, ns = r->seq;
    if (!FITS(nb, ns)) {
        nb = 1;
        while (ns > 1 && !FITS(1, ns))
            ns = (ns + 1) / 2;
        if (!FITS(1, ns))
            return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                             "tgl_rope_t: one token's %zu heads of %zu floats exceed the SSBO block limit", r->heads,
                             r->head_dim);
    }
#undef FITS
    GLuint prog;
    tgl_gl_plan plan = rope_t_plan(r->has_pos, r->mode == TGL_ROPE_INTERLEAVED);
    for (size_t b0 = 0; b0 < r->batch; b0 += nb) {
        for (size_t s0 = 0; s0 < r->seq; s0 += ns) {
            size_t cb = r->batch - b0 < nb ? r->batch - b0 : nb, cs = r->seq - s0 < ns ? r->seq - s0 : ns;
            const size_t n4[4] = {cb, cs, r->heads, r->head_dim}, n2[2] = {cb, cs};
            rope_window wx = rope_win(&r->x, F32, b0, s0, n4, 4, 0, l->ssbo_align);
            rope_window wy = rope_win(&r->y, F32, b0, s0, n4, 4, 1, l->ssbo_align);
            tgl_gl_binding bind[4] = {wx.bind, wy.bind,
                                      {.buf = tgl_gl_of(b)->rope_t_table, .bytes = (rh ? rh : 1) * F32}};
            GLuint pos_off = 0;
            if (r->has_pos) {
                rope_window wp = rope_win(&r->pos, sizeof(int32_t), b0, s0, n2, 2, 0, l->ssbo_align);
                bind[3] = wp.bind;
                pos_off = wp.off;
            }
            size_t items = cb * cs * r->heads * half;
            plan.groups = (items + l->workgroup_size - 1) / l->workgroup_size;
            if ((st = tgl_gl_plan_program(b, &plan, &prog)))
                return st;
            GLuint strides[8] = {0};
            tgl_gl_stride_bits(strides, r->x.strides, 3);
            tgl_gl_stride_bits(strides + 3, r->y.strides, 3);
            if (r->has_pos)
                tgl_gl_stride_bits(strides + 6, r->pos.strides, 2);
            const tgl_gl_uniform u[] = {
                {LOC_ROPE_T_ITEMS, items}, {LOC_ROPE_T_HALF, half},      {LOC_ROPE_T_RHALF, rh},
                {LOC_ROPE_T_HEADS, r->heads}, {LOC_ROPE_T_SEQ, cs},      {LOC_ROPE_T_X_OFF, wx.off},
                {LOC_ROPE_T_Y_OFF, wy.off}, {LOC_ROPE_T_POS_OFF, pos_off}, {LOC_ROPE_T_POS_BASE, r->pos_offset + s0},
            };
            tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof u[0]);
            tgl_gl_uniform_uiv(b, prog, LOC_ROPE_T_STRIDES, 8, strides);
            if ((st = tgl_gl_dispatch(b, prog, bind, r->has_pos ? 4 : 3, plan.groups)))
                return st;
        }
    }
    return TGL_OK;
}

tgl_status tgl_gl_gather_rows(tgl_backend *b, tgl__view table, tgl__view ids, tgl__view out, size_t table_rows,
                              size_t cols, size_t n_ids, size_t *bad_pos, int32_t *bad_id)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (cols > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_gather_rows: a row of %zu floats exceeds the SSBO block limit",
                         cols);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t per_ids = max_elems / cols < grid / cols ? max_elems / cols : grid / cols;
    /* The gather's grid has one row of workgroups per id. */
    size_t per_gather = per_ids < l->wg_count[1] ? per_ids : l->wg_count[1];
    /* Tables past the block limit are bound as windows of whole rows; each gather dispatch
     * writes the ids that fall in its window. */
    size_t win_rows = max_elems / cols < table_rows ? max_elems / cols : table_rows;
    /* llvmpipe walks each row in one invocation (ROW_LOOP: the table through a buffer texture,
     * within gallivm's loop limit, windows within the texel limit). */
    size_t tex_align = tgl_gl_window_align(l, 1);
    size_t tex_rows =
        l->texture_buffer_texels > tex_align / F32 ? (l->texture_buffer_texels - tex_align / F32) / cols : 0;
    int row_loop = l->texel_inputs && (!l->loop_limit || cols < l->loop_limit) && tex_rows > 0;
    size_t t_align = row_loop ? tex_align : l->ssbo_align;
    if (row_loop && tex_rows < win_rows)
        win_rows = tex_rows;

    GLuint check, gather[2] = {0, 0}; /* gather[1]: ROW_LOOP storing dvec4 pairs */
    const uint32_t none = 0xFFFFFFFFu;
    size_t pad_t;
    (void)tgl_gl_window_aligned(table, win_rows * cols * F32, 0, t_align, &pad_t); /* the first window's pad */
    /* vec4 rows where the row length and both windows' starts are whole vec4s (every table
     * window then starts as the first does, modulo 16 bytes). */
    int vec4 = cols % 4 == 0 && pad_t % 16 == 0 && (out.offset % l->ssbo_align) % 16 == 0;
    size_t unit = vec4 ? 4 : 1;
    /* ... and pairs of vec4s stored as dvec4s (common/wide_store.glsl) where rows are whole
     * pairs and a dispatch's output starts 32-byte aligned. */
    int wide = row_loop && vec4 && l->wide_stores && cols % 8 == 0;
    tgl_gl_plan plans[3] = {gather_plan(GATHER_CHECK, 0, 0, 0), gather_plan(GATHER, row_loop, vec4, 0),
                            gather_plan(GATHER, row_loop, vec4, 1)};
    plans[0].groups = tgl_gl_ceil_div(n_ids, l->workgroup_size);
    plans[1].groups = plans[2].groups = row_loop ? tgl_gl_ceil_div(n_ids, l->workgroup_size)
                                                 : tgl_gl_ceil_div(cols / unit, l->workgroup_size) * n_ids;
    tgl_gl_binding status; /* the check's fresh status word (tgl_gl_status_slot) */
    tgl_status st;
    if ((st = tgl_gl_plan_program(b, &plans[0], &check)) || (st = tgl_gl_plan_program(b, &plans[1], &gather[0])) ||
        (wide && (st = tgl_gl_plan_program(b, &plans[2], &gather[1]))) || (st = tgl_gl_status_slot(b, &status)))
        return st;
    tgl_gl_uniform_ui(b, check, LOC_GATHER_TABLE_ROWS, (GLuint)table_rows);
    for (int w = 0; w <= wide; w++) {
        tgl_gl_uniform_ui(b, gather[w], LOC_GATHER_TABLE_ROWS, (GLuint)table_rows);
        tgl_gl_uniform_ui(b, gather[w], LOC_GATHER_COLS, (GLuint)(cols / unit));
    }
    /* Pass 1 checks every id; pass 2 gathers, window by window, where none was bad. */
    for (size_t k0 = 0; k0 < n_ids; k0 += per_ids) {
        size_t nk = n_ids - k0 < per_ids ? n_ids - k0 : per_ids, pad_i;
        tgl_gl_binding bind[2] = {
            tgl_gl_window(b, (tgl__view){ids.buf, ids.offset + k0 * 4}, nk * 4, 0, &pad_i),
            {.buf = status.buf, .offset = status.offset, .bytes = 16, .writes = 1},
        };
        tgl_gl_uniform_ui(b, check, LOC_GATHER_COUNT, (GLuint)nk);
        tgl_gl_uniform_ui(b, check, LOC_GATHER_IDS_OFF, (GLuint)(pad_i / 4));
        tgl_gl_uniform_ui(b, check, LOC_GATHER_FIRST, (GLuint)k0);
        if ((st = tgl_gl_dispatch(b, check, bind, 2, (nk + l->workgroup_size - 1) / l->workgroup_size)))
            return st;
    }
    /* Pass 2 is queued right behind the checks and reads the status word itself (a bad id
     * anywhere: nothing written), so the host waits once, after both, as tgl_gather does. (On
     * the H200 this measured the same as a wait between them, 58-64 us a call: the status
     * read's round trip is most of it.) */
    for (size_t r0 = 0; r0 < table_rows; r0 += win_rows) {
        size_t nr = table_rows - r0 < win_rows ? table_rows - r0 : win_rows;
        tgl_gl_binding tbind = tgl_gl_window_aligned((tgl__view){table.buf, table.offset + r0 * cols * F32},
                                                     nr * cols * F32, 0, t_align, &pad_t);
        if (row_loop)
            tbind.texture_format = vec4 ? GL_RGBA32F : GL_R32F;
        for (int w = 0; w <= wide; w++) {
            tgl_gl_uniform_ui(b, gather[w], LOC_GATHER_T_OFF, (GLuint)(pad_t / F32 / unit));
            tgl_gl_uniform_ui(b, gather[w], LOC_GATHER_ROW0, (GLuint)r0);
            tgl_gl_uniform_ui(b, gather[w], LOC_GATHER_WIN_ROWS, (GLuint)nr);
        }
        for (size_t k0 = 0; k0 < n_ids; k0 += per_gather) {
            size_t nk = n_ids - k0 < per_gather ? n_ids - k0 : per_gather, pad_i, pad_y;
            size_t y_off = out.offset + k0 * cols * F32;
            int w = wide && y_off % 32 == 0;
            tgl_gl_binding bind[4] = {
                tgl_gl_window(b, (tgl__view){ids.buf, ids.offset + k0 * 4}, nk * 4, 0, &pad_i),
                status,
                tbind,
                /* the wide variant's window starts 32-byte aligned: its offset in vec4s is even */
                tgl_gl_window_aligned((tgl__view){out.buf, y_off}, nk * cols * F32, 1,
                                      w && l->ssbo_align < 32 ? 32 : l->ssbo_align, &pad_y),
            };
            GLuint prog = gather[w];
            tgl_gl_uniform_ui(b, prog, LOC_GATHER_IDS_OFF, (GLuint)(pad_i / 4));
            tgl_gl_uniform_ui(b, prog, LOC_GATHER_Y_OFF, (GLuint)(pad_y / F32 / unit));
            tgl_gl_uniform_ui(b, prog, LOC_GATHER_FIRST, (GLuint)k0);
            if (row_loop) {
                tgl_gl_uniform_ui(b, prog, LOC_GATHER_COUNT, (GLuint)nk);
                st = tgl_gl_dispatch(b, prog, bind, 4, tgl_gl_ceil_div(nk, l->workgroup_size));
            } else {
                uint32_t gx = (uint32_t)tgl_gl_ceil_div(cols / unit, l->workgroup_size);
                st = tgl_gl_dispatch_grid(b, prog, bind, 4, gx, (uint32_t)nk, 1);
            }
            if (st)
                return st;
        }
    }
    uint32_t first_bad;
    if ((st = tgl_gl_download(b, &first_bad, (tgl__view){status.buf, status.offset}, sizeof first_bad)))
        return st;
    if (first_bad != none) {
        *bad_pos = first_bad;
        st = tgl_gl_download(b, bad_id, (tgl__view){ids.buf, ids.offset + (size_t)first_bad * 4}, 4);
        return st ? st : TGL_ERR_INVALID_ARGUMENT;
    }
    return TGL_OK;
}

void tgl_gl_llm_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int m = 0; m < 6; m++) /* each layout: per pair, per pair index, in vec4s */
        tgl_gl_list_plan(fn, ctx, rope_plan(m / 3, m % 3 > 0, m % 3 == 2));
    for (int m = 0; m < 4; m++) /* positions or not, each layout */
        tgl_gl_list_plan(fn, ctx, rope_t_plan(m >> 1, m & 1));
    tgl_gl_list_plan(fn, ctx, gather_plan(GATHER_CHECK, 0, 0, 0));
    for (int v = 0; v < 4; v++)
        tgl_gl_list_plan(fn, ctx, gather_plan(GATHER, v >> 1, v & 1, 0));
    tgl_gl_list_plan(fn, ctx, gather_plan(GATHER, 1, 1, 1)); /* wide: with ROW_LOOP and vec4 */
}
