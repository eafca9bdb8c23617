/* The trace writer: one file per traced backend, a header, then DATA records (buffer and host
 * contents, each distinct content once) and CALL records (docs/trace-format.md). A write error
 * stops the recording (logged, reported by tgl_trace_stop) and never the program's calls. */
#include "trace.h"
#include "hash.h"
#include "trace_format.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* One allocation the trace knows, by id (the order of the tgl_alloc calls). */
typedef struct trace_alloc {
    uint64_t base, bytes;
    int live;
} trace_alloc;

/* A distinct content already written, by hash. */
typedef struct data_slot {
    uint64_t h[2];
    uint64_t at, len; /* where the content lies in the file, and its bytes */
    uint32_t id;      /* TGL__TRACE_NONE: empty slot */
} data_slot;

/* Tests: every content hashes alike, so every snapshot after the first is a collision. */
static int weak_hash;
void tgl__test_trace_weak_hash(int on)
{
    weak_hash = on;
}

struct tgl__trace {
    FILE *f;
    char path[1100];
    int failed;
    uint32_t n_data;
    data_slot *data;
    size_t data_cap; /* power of two */
    trace_alloc *allocs;
    uint32_t n_allocs, allocs_cap;
    uint32_t *by_base; /* open addressing over allocs, keyed by base pointer; NONE = empty */
    size_t by_base_cap;
    uint8_t *scratch;
    size_t scratch_cap;
    /* Snapshot ids of the current call: per argument, and per element of its list argument
     * (tgl_map's inputs, tgl_cat's tensors; a call has at most one list). */
    uint32_t snap[TGL__CALL_MAX_ARGS];
    uint32_t *list_snap;
    size_t list_cap;
    uint32_t htod_data;
    uint64_t calls;
};

static atomic_uint trace_serial;

static void trace_fail(tgl_backend *b, const char *what)
{
    tgl__trace *t = b->trace;
    if (!t->failed)
        tgl__log(b, TGL__LOG_ERROR, "trace %s: %s failed (%s); recording stopped", t->path, what, strerror(errno));
    t->failed = 1;
}

static size_t hash_u64(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    return (size_t)(v ^ (v >> 33));
}

/* The allocation id whose base pointer is `base`, or NONE. */
static uint32_t alloc_find(const tgl__trace *t, uint64_t base)
{
    if (!t->by_base_cap)
        return TGL__TRACE_NONE;
    for (size_t i = hash_u64(base) & (t->by_base_cap - 1);; i = (i + 1) & (t->by_base_cap - 1)) {
        uint32_t id = t->by_base[i];
        if (id == TGL__TRACE_NONE || t->allocs[id].base == base)
            return id;
    }
}

static int by_base_insert(tgl__trace *t, uint32_t id)
{
    if ((size_t)(t->n_allocs + 1) * 2 > t->by_base_cap) {
        size_t cap = t->by_base_cap ? t->by_base_cap * 2 : 64;
        uint32_t *m = malloc(cap * sizeof *m);
        if (!m)
            return -1;
        memset(m, 0xff, cap * sizeof *m);
        free(t->by_base);
        t->by_base = m;
        t->by_base_cap = cap;
        for (uint32_t k = 0; k < t->n_allocs; k++) {
            if (k == id)
                continue;
            size_t i = hash_u64(t->allocs[k].base) & (cap - 1);
            while (m[i] != TGL__TRACE_NONE)
                i = (i + 1) & (cap - 1);
            m[i] = k;
        }
    }
    size_t i = hash_u64(t->allocs[id].base) & (t->by_base_cap - 1);
    while (t->by_base[i] != TGL__TRACE_NONE && t->allocs[t->by_base[i]].base != t->allocs[id].base)
        i = (i + 1) & (t->by_base_cap - 1);
    t->by_base[i] = id; /* a base reused after a full generation wrap now names the newer allocation */
    return 0;
}

/* Registers a new allocation; returns its id or NONE when out of host memory. */
static uint32_t alloc_add(tgl__trace *t, uint64_t base, uint64_t bytes)
{
    if (t->n_allocs == t->allocs_cap) {
        uint32_t cap = t->allocs_cap ? t->allocs_cap * 2 : 64;
        trace_alloc *a = realloc(t->allocs, cap * sizeof *a);
        if (!a)
            return TGL__TRACE_NONE;
        t->allocs = a;
        t->allocs_cap = cap;
    }
    uint32_t id = t->n_allocs;
    t->allocs[id] = (trace_alloc){base, bytes, 1};
    if (by_base_insert(t, id))
        return TGL__TRACE_NONE;
    t->n_allocs++;
    return id;
}

static void write_record(tgl_backend *b, uint32_t type, const void *head, size_t head_len, const void *body,
                         size_t body_len)
{
    tgl__trace *t = b->trace;
    tgl__bytes h = {0};
    tgl__bytes_u32(&h, type);
    tgl__bytes_u32(&h, 0);
    tgl__bytes_u64(&h, (uint64_t)head_len + body_len);
    if (h.failed || fwrite(h.data, 1, h.len, t->f) != h.len || fwrite(head, 1, head_len, t->f) != head_len ||
        (body_len && fwrite(body, 1, body_len, t->f) != body_len))
        trace_fail(b, "write");
    tgl__bytes_free(&h);
}

/* Whether the n bytes at file offset `at` are `bytes` (read back: the hash only finds a
 * candidate; contents that collide must not share a record). The stream is left at its end. */
static int same_content(tgl__trace *t, uint64_t at, const void *bytes, size_t n)
{
    unsigned char buf[1 << 16];
    int same = fseeko(t->f, (off_t)at, SEEK_SET) == 0;
    for (size_t done = 0; same && done < n;) {
        size_t k = n - done < sizeof buf ? n - done : sizeof buf;
        same = fread(buf, 1, k, t->f) == k && !memcmp(buf, (const unsigned char *)bytes + done, k);
        done += k;
    }
    if (fseeko(t->f, 0, SEEK_END) != 0)
        same = 0;
    return same;
}

/* The data id of `n` bytes, writing a DATA record the first time this content is seen. */
static uint32_t put_data(tgl_backend *b, const void *bytes, size_t n)
{
    tgl__trace *t = b->trace;
    /* The hash is a dedup key, not a checksum the reader trusts: an edited snapshot replays as
     * edited (that is how a replay is told what to expect). */
    static const uint64_t start[2];
    uint64_t h[2] = {0, 0};
    tgl__hash128(bytes, n, start, h);
    if (weak_hash)
        h[0] = h[1] = 0;
    if ((size_t)(t->n_data + 1) * 2 > t->data_cap) {
        size_t cap = t->data_cap ? t->data_cap * 2 : 256;
        data_slot *d = malloc(cap * sizeof *d);
        if (!d) {
            trace_fail(b, "host allocation");
            return TGL__TRACE_NONE;
        }
        for (size_t i = 0; i < cap; i++)
            d[i].id = TGL__TRACE_NONE;
        for (size_t k = 0; k < t->data_cap; k++) {
            if (t->data[k].id == TGL__TRACE_NONE)
                continue;
            size_t i = (size_t)t->data[k].h[0] & (cap - 1);
            /* every slot's id was set by the loop above, which the analyzer does not follow */
            while (d[i].id != TGL__TRACE_NONE) // NOLINT(clang-analyzer-core.UndefinedBinaryOperatorResult)
                i = (i + 1) & (cap - 1);
            d[i] = t->data[k];
        }
        free(t->data);
        t->data = d;
        t->data_cap = cap;
    }
    size_t i = (size_t)h[0] & (t->data_cap - 1);
    /* (every slot's id is set when the table is made: see above) */
    for (; t->data[i].id != TGL__TRACE_NONE; i = (i + 1) & (t->data_cap - 1)) // NOLINT(clang-analyzer-core.UndefinedBinaryOperatorResult)
        if (t->data[i].h[0] == h[0] && t->data[i].h[1] == h[1] && t->data[i].len == n &&
            same_content(t, t->data[i].at, bytes, n))
            return t->data[i].id;
    uint8_t head[16];
    for (int k = 0; k < 8; k++) {
        head[k] = (uint8_t)(h[0] >> (8 * k));
        head[8 + k] = (uint8_t)(h[1] >> (8 * k));
    }
    off_t pos = ftello(t->f); /* the record's header (16 bytes) and hash (16) come first */
    write_record(b, TGL__REC_DATA, head, sizeof head, bytes, n);
    t->data[i] = (data_slot){{h[0], h[1]}, pos < 0 ? UINT64_MAX : (uint64_t)pos + 32, n, t->n_data};
    return t->n_data++;
}

/* Reads the whole allocation p points into and returns its data id (NONE when p names no live
 * allocation the trace knows, or the read fails). */
static uint32_t snapshot(tgl_backend *b, tgl_ptr p)
{
    tgl__trace *t = b->trace;
    if (!p)
        return TGL__TRACE_NONE;
    uint32_t id = alloc_find(t, tgl__ptr_base(p));
    if (id == TGL__TRACE_NONE || !t->allocs[id].live)
        return TGL__TRACE_NONE;
    size_t n = (size_t)t->allocs[id].bytes;
    if (n > t->scratch_cap) {
        uint8_t *s = realloc(t->scratch, n);
        if (!s) {
            trace_fail(b, "host allocation for a snapshot");
            return TGL__TRACE_NONE;
        }
        t->scratch = s;
        t->scratch_cap = n;
    }
    if (tgl_copy_dtoh(b, t->scratch, t->allocs[id].base, n) != TGL_OK)
        return TGL__TRACE_NONE;
    return put_data(b, t->scratch, n);
}

/* Room in list_snap for n snapshot ids (0 and the trace stopped when there is no host memory). */
static int list_room(tgl_backend *b, size_t n)
{
    tgl__trace *t = b->trace;
    if (n <= t->list_cap)
        return 1;
    uint32_t *s = n <= SIZE_MAX / sizeof *s ? realloc(t->list_snap, n * sizeof *s) : NULL;
    if (!s) {
        trace_fail(b, "host allocation for a list's snapshots");
        return 0;
    }
    t->list_snap = s;
    t->list_cap = n;
    return 1;
}

/* The allocations a tensor list reads, one snapshot per allocation however many of its tensors
 * lie in it (tgl_cat's inputs are often slices of one buffer). */
static void snapshot_tensors(tgl_backend *b, const tgl_tensor *x, size_t n)
{
    tgl__trace *t = b->trace;
    for (size_t k = 0; k < n; k++) {
        size_t j = 0;
        while (j < k && tgl__ptr_base(x[j].data) != tgl__ptr_base(x[k].data))
            j++;
        t->list_snap[k] = j < k ? t->list_snap[j] : snapshot(b, x[k].data);
    }
}

void tgl__trace_before(tgl_backend *b, const tgl__call *c)
{
    tgl__trace *t = b->trace;
    if (t->failed)
        return;
    const char *sig = tgl__fn_signature(c->fn);
    for (size_t i = 0; sig[i]; i++) {
        const tgl__arg *a = &c->args[i];
        t->snap[i] = TGL__TRACE_NONE;
        if (sig[i] == 'i' || sig[i] == 'x' || sig[i] == 'X')
            t->snap[i] = snapshot(b, a->u);
        if ((sig[i] == 't' || sig[i] == 'M') && a->ptr)
            t->snap[i] = snapshot(b, ((const tgl_tensor *)a->ptr)->data);
        if (sig[i] == 'L' && a->ptr && a->u <= TGL_EXPR_MAX_INPUTS && list_room(b, (size_t)a->u))
            for (size_t k = 0; k < a->u; k++)
                t->list_snap[k] = snapshot(b, ((const tgl_ptr *)a->ptr)[k]);
        if (sig[i] == 'U' && a->ptr && list_room(b, (size_t)a->u))
            snapshot_tensors(b, a->ptr, (size_t)a->u);
    }
    t->htod_data = TGL__TRACE_NONE;
    if (c->fn == TGL__FN_COPY_HTOD && c->args[1].ptr) {
        /* Only a copy the call will make is read here: an invalid destination fails the call
         * before it reads the host memory, and must not make the trace read it either. */
        tgl_ptr dst = c->args[0].u;
        size_t bytes = (size_t)c->args[2].u;
        uint32_t id = dst ? alloc_find(t, tgl__ptr_base(dst)) : TGL__TRACE_NONE;
        uint64_t off = dst - tgl__ptr_base(dst);
        if (id != TGL__TRACE_NONE && t->allocs[id].live && bytes && off <= t->allocs[id].bytes &&
            bytes <= t->allocs[id].bytes - off)
            t->htod_data = put_data(b, c->args[1].ptr, bytes);
    }
}

static void put_ptr(const tgl__trace *t, tgl__bytes *o, tgl_ptr p)
{
    uint64_t off = p - tgl__ptr_base(p);
    /* (an offset past the largest allocation, in a large one's slack, is recorded as it is) */
    uint32_t id = p && off < TGL__MAX_ALLOC_BYTES ? alloc_find(t, tgl__ptr_base(p)) : TGL__TRACE_NONE;
    if (!p) {
        tgl__bytes_u8(o, TGL__PTR_NULL);
    } else if (id != TGL__TRACE_NONE) {
        tgl__bytes_u8(o, TGL__PTR_ALLOC);
        tgl__bytes_u32(o, id);
        tgl__bytes_u64(o, off);
    } else {
        tgl__bytes_u8(o, TGL__PTR_RAW);
        tgl__bytes_u64(o, p);
    }
}

/* Encodes a size array: present flag, count, then the values when there are at most
 * TGL_MAX_DIMS (more is an error the call reports before reading the array). */
static void put_sizes(tgl__bytes *o, const size_t *v, size_t n)
{
    tgl__bytes_u8(o, v != NULL);
    tgl__bytes_u64(o, n);
    if (v && n <= TGL_MAX_DIMS)
        for (size_t k = 0; k < n; k++)
            tgl__bytes_u64(o, v[k]);
}

static void put_ints(tgl__bytes *o, const int64_t *v, size_t n)
{
    tgl__bytes_u8(o, v != NULL);
    tgl__bytes_u64(o, n);
    if (v && n <= TGL__MAX_INTS)
        for (size_t k = 0; k < n; k++)
            tgl__bytes_u64(o, (uint64_t)v[k]);
}

/* A descriptor: presence, data pointer (with its allocation's snapshot when read), dtype, ndim,
 * then shape and strides when ndim is at most TGL_MAX_DIMS (more is an error the call reports). */
static void put_tensor(const tgl__trace *t, tgl__bytes *o, const tgl_tensor *d, int read, uint32_t snap)
{
    /* NOLINTBEGIN(clang-analyzer-core.CallAndMessage): the analyzer cannot see that the
     * signature letter fixes what an argument points to; it pairs a 't' with adopt_live's alloc
     * call, whose second argument is a tgl_ptr */
    tgl__bytes_u8(o, d != NULL);
    put_ptr(t, o, d ? d->data : 0);
    if (read)
        tgl__bytes_u32(o, snap);
    tgl__bytes_u32(o, d ? (uint32_t)d->dtype : 0);
    tgl__bytes_u64(o, d ? d->ndim : 0);
    for (size_t k = 0; d && d->ndim <= TGL_MAX_DIMS && k < d->ndim; k++) {
        tgl__bytes_u64(o, d->shape[k]);
        tgl__bytes_u64(o, (uint64_t)d->strides[k]);
    }
    /* NOLINTEND(clang-analyzer-core.CallAndMessage) */
}

/* How many of d->freq_factors a call of tgl_rope_t reads: rotary_dim / 2, or head_dim / 2 (the
 * last dim of its first tensor argument, in) where rotary_dim is 0; none without factors or
 * where in is not 4-D (the call fails before it reads them). */
static size_t rope_factor_count(const tgl__call *c, const tgl_rope_desc *d)
{
    if (!d || !d->freq_factors)
        return 0;
    if (d->rotary_dim)
        return d->rotary_dim / 2;
    const tgl_tensor *in = tgl__fn_signature(c->fn)[0] == 't' ? c->args[0].ptr : NULL;
    return in && in->ndim == 4 ? in->shape[3] / 2 : 0;
}

/* How many of d->seq_lens a call of tgl_attention_t reads: its first tensor argument's (q's)
 * batch, none without lengths or where q is not 4-D (the call fails before it reads them). */
static size_t attention_len_count(const tgl__call *c, const tgl_attention_desc *d)
{
    if (!d || !d->seq_lens)
        return 0;
    const tgl_tensor *q = tgl__fn_signature(c->fn)[0] == 't' ? c->args[0].ptr : NULL;
    return q && q->ndim == 4 ? q->shape[0] : 0;
}

static void encode_args(const tgl__trace *t, tgl__bytes *o, const tgl__call *c, uint32_t alloc_id)
{
    const char *sig = tgl__fn_signature(c->fn);
    size_t last_count = 0;
    for (size_t i = 0; sig[i]; i++) {
        const tgl__arg *a = &c->args[i];
        tgl__bytes_u8(o, (uint8_t)sig[i]);
        switch (sig[i]) {
        case 'e': case 'z': case 'u': case 'd': tgl__bytes_u64(o, a->u); break;
        case 'f': tgl__bytes_u32(o, (uint32_t)a->u); break;
        case 'S': put_sizes(o, a->ptr, (size_t)a->u); last_count = (size_t)a->u; break;
        case 'q': put_sizes(o, a->ptr, last_count); break;
        case 'J': put_ints(o, a->ptr, (size_t)a->u); last_count = (size_t)a->u; break;
        case 'L':
            tgl__bytes_u8(o, a->ptr != NULL);
            tgl__bytes_u64(o, a->u);
            if (a->ptr && a->u <= TGL_EXPR_MAX_INPUTS)
                for (size_t k = 0; k < a->u; k++) {
                    put_ptr(t, o, ((const tgl_ptr *)a->ptr)[k]);
                    tgl__bytes_u32(o, t->list_snap[k]);
                }
            break;
        case 's': {
            size_t n = a->ptr ? strnlen(a->ptr, TGL__TRACE_EXPR_MAX) : 0;
            tgl__bytes_u8(o, a->ptr != NULL);
            tgl__bytes_u32(o, (uint32_t)n);
            tgl__bytes_put(o, a->ptr, n);
            break;
        }
        case 'c': {
            const tgl_conv2d_desc *d = a->ptr;
            const size_t f[TGL__CONV2D_FIELDS] = {
                d ? d->batch : 0, d ? d->in_channels : 0, d ? d->in_h : 0, d ? d->in_w : 0,
                d ? d->out_channels : 0, d ? d->kernel_h : 0, d ? d->kernel_w : 0, d ? d->stride_h : 0,
                d ? d->stride_w : 0, d ? d->pad_h : 0, d ? d->pad_w : 0, d ? d->dilation_h : 0,
                d ? d->dilation_w : 0, d ? d->groups : 0};
            tgl__bytes_u8(o, d != NULL);
            for (size_t k = 0; k < TGL__CONV2D_FIELDS; k++)
                tgl__bytes_u64(o, f[k]); // NOLINT(clang-analyzer-core.CallAndMessage): f's initializer fills all 14
            break;
        }
        case 'P': { /* the enum and ints as u64 (two's complement) */
            const tgl_pool2d_desc *d = a->ptr;
            const uint64_t f[TGL__POOL2D_FIELDS] = {
                d ? d->batch : 0, d ? d->channels : 0, d ? d->in_h : 0, d ? d->in_w : 0, d ? d->kernel_h : 0,
                d ? d->kernel_w : 0, d ? d->stride_h : 0, d ? d->stride_w : 0, d ? d->pad_h : 0, d ? d->pad_w : 0,
                d ? d->dilation_h : 0, d ? d->dilation_w : 0, d ? (uint64_t)(int64_t)d->kind : 0,
                d ? (uint64_t)(int64_t)d->ceil_mode : 0, d ? (uint64_t)(int64_t)d->count_include_pad : 0};
            tgl__bytes_u8(o, d != NULL);
            for (size_t k = 0; k < TGL__POOL2D_FIELDS; k++)
                tgl__bytes_u64(o, f[k]);
            break;
        }
        case 'Y': { /* the enums as u64 (two's complement), the floats as their f32 bits */
            const tgl_rope_desc *d = a->ptr;
            uint32_t fb[4] = {0, 0, 0, 0};
            if (d) {
                memcpy(&fb[0], &d->theta, sizeof fb[0]);
                memcpy(&fb[1], &d->factor, sizeof fb[1]);
                memcpy(&fb[2], &d->low_freq_factor, sizeof fb[2]);
                memcpy(&fb[3], &d->high_freq_factor, sizeof fb[3]);
            }
            const uint64_t f[TGL__ROPE_FIELDS] = {
                fb[0], d ? (uint64_t)(int64_t)d->mode : 0, d ? d->rotary_dim : 0, d ? d->pos_offset : 0,
                d ? (uint64_t)(int64_t)d->scaling : 0, fb[1], fb[2], fb[3], d ? d->original_context : 0};
            tgl__bytes_u8(o, d != NULL);
            for (size_t k = 0; k < TGL__ROPE_FIELDS; k++)
                tgl__bytes_u64(o, f[k]);
            size_t n = rope_factor_count(c, d);
            tgl__bytes_u64(o, n);
            for (size_t k = 0; k < n; k++) {
                uint32_t bits;
                memcpy(&bits, &d->freq_factors[k], sizeof bits);
                tgl__bytes_u32(o, bits);
            }
            break;
        }
        case 'N': { /* causal as u64 (two's complement), the floats as their f32 bits */
            const tgl_attention_desc *d = a->ptr;
            uint32_t fb[3] = {0, 0, 0};
            if (d) {
                memcpy(&fb[0], &d->scale, sizeof fb[0]);
                memcpy(&fb[1], &d->softcap, sizeof fb[1]);
                memcpy(&fb[2], &d->alibi_max_bias, sizeof fb[2]);
            }
            const uint64_t f[TGL__ATTN_FIELDS] = {fb[0], d ? (uint64_t)(int64_t)d->causal : 0, d ? d->seq_kv : 0,
                                                  d ? d->window : 0, fb[1], fb[2]};
            tgl__bytes_u8(o, d != NULL);
            for (size_t k = 0; k < TGL__ATTN_FIELDS; k++)
                tgl__bytes_u64(o, f[k]);
            size_t n = attention_len_count(c, d);
            tgl__bytes_u64(o, n);
            for (size_t k = 0; k < n; k++)
                tgl__bytes_u64(o, d->seq_lens[k]);
            break;
        }
        case 'R': { /* the enum and int as u64 (two's complement), the scales as f64 bits */
            const tgl_interpolate_desc *d = a->ptr;
            uint64_t sh = 0, sw = 0;
            if (d) {
                memcpy(&sh, &d->scale_h, sizeof sh);
                memcpy(&sw, &d->scale_w, sizeof sw);
            }
            const uint64_t f[TGL__INTERP_FIELDS] = {
                d ? d->batch : 0, d ? d->channels : 0, d ? d->in_h : 0, d ? d->in_w : 0, d ? d->out_h : 0,
                d ? d->out_w : 0, d ? (uint64_t)(int64_t)d->mode : 0, d ? (uint64_t)(int64_t)d->align_corners : 0, sh, sw};
            tgl__bytes_u8(o, d != NULL);
            for (size_t k = 0; k < TGL__INTERP_FIELDS; k++)
                tgl__bytes_u64(o, f[k]);
            break;
        }
        case 'U':
            /* presence, count, then each tensor as a read 't' */
            tgl__bytes_u8(o, a->ptr != NULL);
            tgl__bytes_u64(o, a->u);
            for (size_t k = 0; a->ptr && k < a->u; k++)
                put_tensor(t, o, (const tgl_tensor *)a->ptr + k, 1, t->list_snap[k]);
            break;
        case 't': case 'T': case 'M':
            put_tensor(t, o, a->ptr, sig[i] != 'T', t->snap[i]);
            break;
        case 'D': tgl__bytes_u8(o, a->ptr != NULL); tgl__bytes_u32(o, t->htod_data); break;
        case 'H': tgl__bytes_u8(o, a->ptr != NULL); break;
        case 'A': tgl__bytes_u8(o, a->ptr != NULL); tgl__bytes_u32(o, alloc_id); break;
        default: /* device pointers; those read carry their allocation's snapshot */
            put_ptr(t, o, a->u);
            if (sig[i] == 'i' || sig[i] == 'x' || sig[i] == 'X')
                tgl__bytes_u32(o, t->snap[i]);
            break;
        }
    }
}

static void write_call(tgl_backend *b, const tgl__call *c, tgl_status st, uint32_t alloc_id)
{
    tgl__trace *t = b->trace;
    tgl__bytes o = {0};
    tgl__bytes_u32(&o, (uint32_t)c->fn);
    tgl__bytes_u32(&o, (uint32_t)(int32_t)st);
    tgl__bytes_u32(&o, (uint32_t)strlen(tgl__fn_signature(c->fn)));
    encode_args(t, &o, c, alloc_id);
    if (o.failed)
        trace_fail(b, "host allocation for a record");
    else
        write_record(b, TGL__REC_CALL, o.data, o.len, NULL, 0);
    tgl__bytes_free(&o);
    t->calls++;
}

void tgl__trace_after(tgl_backend *b, const tgl__call *c, tgl_status st)
{
    tgl__trace *t = b->trace;
    if (t->failed)
        return;
    uint32_t alloc_id = TGL__TRACE_NONE;
    if (c->fn == TGL__FN_ALLOC && st == TGL_OK && c->args[1].ptr && *(const tgl_ptr *)c->args[1].ptr) {
        tgl_ptr p = *(const tgl_ptr *)c->args[1].ptr;
        tgl__zero_alloc(b, p, (size_t)c->args[0].u);
        if ((alloc_id = alloc_add(t, p, c->args[0].u)) == TGL__TRACE_NONE)
            trace_fail(b, "host allocation for the allocation table");
    }
    write_call(b, c, st, alloc_id);
    if (c->fn == TGL__FN_FREE && st == TGL_OK && c->args[0].u) {
        uint32_t id = alloc_find(t, c->args[0].u);
        if (id != TGL__TRACE_NONE)
            t->allocs[id].live = 0;
    }
}

/* Allocations made before the recording started enter it as an alloc and an upload of what
 * they hold now. */
static void adopt_live(void *ctx, uint64_t p, uint64_t bytes)
{
    tgl_backend *b = ctx;
    tgl__trace *t = b->trace;
    if (t->failed)
        return;
    uint32_t id = alloc_add(t, p, bytes);
    if (id == TGL__TRACE_NONE) {
        trace_fail(b, "host allocation for the allocation table");
        return;
    }
    tgl_ptr out = p;
    tgl__call alloc = {.fn = TGL__FN_ALLOC, .args = {{.u = bytes}, {.ptr = &out}}};
    write_call(b, &alloc, TGL_OK, id);
    t->htod_data = snapshot(b, p);
    tgl__call load = {.fn = TGL__FN_COPY_HTOD, .args = {{.u = p}, {.ptr = t->scratch}, {.u = bytes}}};
    write_call(b, &load, t->htod_data == TGL__TRACE_NONE ? TGL_ERR_IO : TGL_OK, TGL__TRACE_NONE);
}

static void trace_free(tgl__trace *t)
{
    if (t->f)
        fclose(t->f);
    free(t->data);
    free(t->allocs);
    free(t->by_base);
    free(t->scratch);
    free(t->list_snap);
    free(t);
}

tgl_status tgl__trace_begin(tgl_backend *b, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return tgl__fail(b, TGL_ERR_IO, "trace directory %s: %s", dir, strerror(errno));
    tgl__trace *t = calloc(1, sizeof *t);
    if (!t)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_trace_start: no host memory");
    int n = snprintf(t->path, sizeof t->path, "%s/%ld-%u-%s%s", dir, (long)getpid(),
                     atomic_fetch_add(&trace_serial, 1u), b->vt->name, TGL__TRACE_SUFFIX);
    if (n < 0 || (size_t)n >= sizeof t->path) {
        free(t);
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dir: path too long");
    }
    if (!(t->f = fopen(t->path, "w+bx"))) { /* read too: a hash match is checked byte for byte */
        tgl_status st = tgl__fail(b, TGL_ERR_IO, "trace file %s: %s", t->path, strerror(errno));
        free(t);
        return st;
    }
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    char text[TGL__TRACE_INFO_MAX];
    int len = snprintf(text, sizeof text, "tensorgl %d.%d.%d\nbackend %s\nrenderer %s\nversion %s\n",
                       TGL_VERSION_MAJOR, TGL_VERSION_MINOR, TGL_VERSION_PATCH, info.backend, info.renderer,
                       info.version);
    tgl__bytes h = {0};
    tgl__bytes_put(&h, TGL__TRACE_MAGIC, 8);
    tgl__bytes_u32(&h, TGL__TRACE_VERSION);
    tgl__bytes_u32(&h, (uint32_t)len);
    tgl__bytes_put(&h, text, (size_t)len);
    int bad = h.failed || fwrite(h.data, 1, h.len, t->f) != h.len;
    tgl__bytes_free(&h);
    if (bad) {
        tgl_status st = tgl__fail(b, TGL_ERR_IO, "trace file %s: cannot write the header", t->path);
        trace_free(t);
        return st;
    }
    b->trace = t;
    b->hook_busy = 1;
    tgl__handles_each_live(&b->handles, adopt_live, b);
    b->hook_busy = 0;
    tgl__log(b, TGL__LOG_INFO, "tracing to %s", t->path);
    return TGL_OK;
}

tgl_status tgl__trace_end(tgl_backend *b)
{
    tgl__trace *t = b->trace;
    b->trace = NULL;
    int failed = t->failed || fclose(t->f) != 0;
    t->f = NULL;
    /* The size too: a traced run keeps every distinct buffer content, which adds up fast. */
    struct stat st_file;
    double mib = stat(t->path, &st_file) == 0 ? (double)st_file.st_size / (1024.0 * 1024.0) : 0.0;
    tgl__log(b, TGL__LOG_INFO, "trace %s: %llu calls, %u distinct contents, %.1f MiB", t->path,
             (unsigned long long)t->calls, t->n_data, mib);
    tgl_status st = failed ? tgl__fail(b, TGL_ERR_IO, "trace %s is incomplete: a write failed", t->path) : TGL_OK;
    trace_free(t);
    return st;
}
