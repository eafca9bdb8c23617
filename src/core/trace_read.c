/* Reading trace files: bounds-checked decoding of the header and of each record. */
#include "trace_read.h"
#include "files.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BAD(r, ...) bad_record(r, __VA_ARGS__)

static tgl_status bad_record(const tgl__trace_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tgl_status bad_record(const tgl__trace_reader *r, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): va_start is above
    va_end(ap);
    if (r->record)
        return tgl__fail(NULL, TGL_ERR_IO, "trace %s: record %llu (at byte %llu): %s", r->path,
                         (unsigned long long)r->record, (unsigned long long)r->record_at, what);
    return tgl__fail(NULL, TGL_ERR_IO, "trace %s: header: %s", r->path, what);
}

/* Reads exactly n bytes at the current position. */
static int read_exact(tgl__trace_reader *r, void *dst, size_t n)
{
    return fread(dst, 1, n, r->f) == n;
}

tgl_status tgl__reader_open(tgl__trace_reader *r, const char *path)
{
    *r = (tgl__trace_reader){0};
    tgl__strlcpy(r->path, path, sizeof r->path);
    if (!(r->f = tgl__fopen_regular(path))) /* a FIFO would block the reader forever */
        return tgl__fail(NULL, TGL_ERR_IO, "trace %s: %s", path,
                         errno == EINVAL ? "not a regular file" : strerror(errno));
    if (fseek(r->f, 0, SEEK_END) != 0 || ftell(r->f) < 0)
        return tgl__fail(NULL, TGL_ERR_IO, "trace %s: not a seekable file", path);
    r->size = (uint64_t)ftell(r->f);
    rewind(r->f);
    uint8_t head[16];
    if (r->size < sizeof head || !read_exact(r, head, sizeof head))
        return BAD(r, "file of %llu bytes is shorter than the 16-byte header", (unsigned long long)r->size);
    if (memcmp(head, TGL__TRACE_MAGIC, 8) != 0)
        return BAD(r, "not a tensorgl trace (magic bytes differ)");
    uint32_t version = tgl__le32(head + 8), info_len = tgl__le32(head + 12);
    if (version != TGL__TRACE_VERSION)
        return BAD(r, "format version %u; this build reads version %u", version, TGL__TRACE_VERSION);
    if (info_len > TGL__TRACE_INFO_MAX || info_len > r->size - sizeof head)
        return BAD(r, "description of %u bytes (at most %u, and within the file)", info_len, TGL__TRACE_INFO_MAX);
    if (!read_exact(r, r->info, info_len))
        return BAD(r, "cannot read the description");
    r->info[info_len] = '\0';
    r->pos = sizeof head + info_len;
    return TGL_OK;
}

void tgl__reader_close(tgl__trace_reader *r)
{
    if (r->f)
        fclose(r->f);
    free(r->data_at);
    free(r->data_len);
    free(r->payload);
    *r = (tgl__trace_reader){0};
}

/* A bounds-checked cursor over one record's payload. */
typedef struct cursor {
    const uint8_t *p;
    size_t left;
    int short_read;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
    if (c->short_read || n > c->left) {
        c->short_read = 1;
        return NULL;
    }
    const uint8_t *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

static uint8_t get8(cursor *c)
{
    const uint8_t *p = take(c, 1);
    return p ? *p : 0;
}

static uint32_t get32(cursor *c)
{
    const uint8_t *p = take(c, 4);
    return p ? tgl__le32(p) : 0;
}

static uint64_t get64(cursor *c)
{
    const uint8_t *p = take(c, 8);
    return p ? tgl__le64(p) : 0;
}

static tgl_status get_data_id(tgl__trace_reader *r, cursor *c, size_t arg, uint32_t *out)
{
    *out = get32(c);
    if (*out != TGL__TRACE_NONE && *out >= r->n_data)
        return BAD(r, "argument %zu refers to data %u, but only %u data records precede it", arg + 1, *out,
                   r->n_data);
    return TGL_OK;
}

static tgl_status get_ptr(tgl__trace_reader *r, cursor *c, size_t arg, int with_data, tgl__rptr *p)
{
    *p = (tgl__rptr){.tag = get8(c), .data = TGL__TRACE_NONE};
    switch (p->tag) {
    case TGL__PTR_NULL: break;
    case TGL__PTR_ALLOC:
        p->alloc = get32(c);
        p->offset = get64(c);
        if (p->offset >= TGL__MAX_ALLOC_BYTES)
            return BAD(r, "argument %zu: offset %llu is beyond any allocation", arg + 1,
                       (unsigned long long)p->offset);
        break;
    case TGL__PTR_RAW: get64(c); break; /* a pointer no allocation matched: replays as an invalid one */
    default: return BAD(r, "argument %zu: pointer kind %u is not 0, 1 or 2", arg + 1, p->tag);
    }
    return with_data ? get_data_id(r, c, arg, &p->data) : TGL_OK;
}

static tgl_status get_sizes(tgl__trace_reader *r, cursor *c, tgl__rcall *rc, size_t i)
{
    rc->present[i] = get8(c);
    rc->u[i] = get64(c);
    if (rc->present[i] > 1)
        return BAD(r, "argument %zu: presence flag %u", i + 1, rc->present[i]);
    rc->stored[i] = rc->present[i] && rc->u[i] <= TGL_MAX_DIMS;
    for (size_t k = 0; rc->stored[i] && k < rc->u[i]; k++)
        rc->sizes[i][k] = (size_t)get64(c);
    return TGL_OK;
}

/* A J argument: as sizes, up to TGL__MAX_INTS values, two's complement. */
static tgl_status get_ints(tgl__trace_reader *r, cursor *c, tgl__rcall *rc, size_t i)
{
    rc->present[i] = get8(c);
    rc->u[i] = get64(c);
    if (rc->present[i] > 1)
        return BAD(r, "argument %zu: presence flag %u", i + 1, rc->present[i]);
    rc->stored[i] = rc->present[i] && rc->u[i] <= TGL__MAX_INTS;
    for (size_t k = 0; rc->stored[i] && k < rc->u[i]; k++)
        rc->ints[k] = (int64_t)get64(c);
    return TGL_OK;
}

/* A descriptor after its presence byte: pointer (and snapshot when read), dtype, ndim, then
 * shape and strides. */
static tgl_status get_tensor(tgl__trace_reader *r, cursor *c, size_t arg, int read, tgl_tensor *t, tgl__rptr *p)
{
    tgl_status st = get_ptr(r, c, arg, read, p);
    *t = (tgl_tensor){.dtype = (tgl_dtype)(int32_t)get32(c)};
    uint64_t ndim = get64(c);
    /* more dims than the format stores: replayed as recorded, refused by the call */
    t->ndim = ndim > TGL_MAX_DIMS ? TGL_MAX_DIMS + 1 : (size_t)ndim;
    for (size_t k = 0; ndim <= TGL_MAX_DIMS && k < ndim; k++) {
        t->shape[k] = (size_t)get64(c);
        t->strides[k] = (int64_t)get64(c);
    }
    return st;
}

/* Bytes a listed descriptor takes at least: presence, a null pointer's tag, its snapshot id,
 * dtype and ndim. */
#define LISTED_TENSOR_MIN_BYTES 18u

/* A tensor list: presence, count, then each descriptor as a read 't'. The count is checked
 * against the bytes left in the record before anything is allocated for it. */
static tgl_status get_tensor_list(tgl__trace_reader *r, cursor *c, tgl__rcall *rc, size_t i)
{
    rc->present[i] = get8(c);
    rc->u[i] = get64(c);
    size_t n = rc->present[i] ? (size_t)rc->u[i] : 0;
    if (rc->present[i] && rc->u[i] > c->left / LISTED_TENSOR_MIN_BYTES)
        return BAD(r, "argument %zu: a list of %llu tensors in a record with %zu bytes left", i + 1,
                   (unsigned long long)rc->u[i], c->left);
    if (n > rc->tlist_cap) {
        tgl_tensor *t = realloc(rc->tlist, n * sizeof *t);
        if (t)
            rc->tlist = t;
        tgl__rptr *p = realloc(rc->tlist_p, n * sizeof *p);
        if (p)
            rc->tlist_p = p;
        if (!t || !p)
            return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace %s: no host memory for a list of %zu tensors",
                             r->path, n);
        rc->tlist_cap = n;
    }
    for (size_t k = 0; k < n; k++) {
        uint8_t present = get8(c);
        if (!c->short_read && present != 1)
            return BAD(r, "argument %zu: tensor %zu of the list has presence flag %u", i + 1, k, present);
        tgl_status st = get_tensor(r, c, i, 1, &rc->tlist[k], &rc->tlist_p[k]);
        if (st)
            return st;
    }
    return TGL_OK;
}

/* A rope descriptor's freq_factors: a u64 count (0: NULL), then the floats as f32 bits. */
static tgl_status get_rope_factors(tgl__trace_reader *r, cursor *c, tgl__rcall *rc, size_t i)
{
    uint64_t n = get64(c);
    if (n == 0 || c->short_read)
        return TGL_OK;
    if (!rc->present[i] || n > c->left / sizeof(uint32_t))
        return BAD(r, "argument %zu: %llu frequency factors in a record with %zu bytes left%s", i + 1,
                   (unsigned long long)n, c->left, rc->present[i] ? "" : " and no descriptor");
    if (n > rc->factors_cap) {
        float *f = realloc(rc->factors, (size_t)n * sizeof *f);
        if (!f)
            return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace %s: no host memory for %llu frequency factors",
                             r->path, (unsigned long long)n);
        rc->factors = f;
        rc->factors_cap = (size_t)n;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t bits = get32(c);
        memcpy(&rc->factors[k], &bits, sizeof bits);
    }
    rc->rope.freq_factors = rc->factors;
    return TGL_OK;
}

/* An attention descriptor's seq_lens: a u64 count (0: NULL), then the values as u64. */
static tgl_status get_attention_lens(tgl__trace_reader *r, cursor *c, tgl__rcall *rc, size_t i)
{
    uint64_t n = get64(c);
    if (n == 0 || c->short_read)
        return TGL_OK;
    if (!rc->present[i] || n > c->left / sizeof(uint64_t))
        return BAD(r, "argument %zu: %llu key lengths in a record with %zu bytes left%s", i + 1,
                   (unsigned long long)n, c->left, rc->present[i] ? "" : " and no descriptor");
    if (n > rc->lens_cap) {
        size_t *l = realloc(rc->lens, (size_t)n * sizeof *l);
        if (!l)
            return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace %s: no host memory for %llu key lengths", r->path,
                             (unsigned long long)n);
        rc->lens = l;
        rc->lens_cap = (size_t)n;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t v = get64(c);
        rc->lens[k] = v <= SIZE_MAX ? (size_t)v : SIZE_MAX;
    }
    rc->attn.seq_lens = rc->lens;
    return TGL_OK;
}

void tgl__rcall_release(tgl__rcall *c)
{
    free(c->tlist);
    free(c->tlist_p);
    free(c->factors);
    free(c->lens);
    c->tlist = NULL;
    c->tlist_p = NULL;
    c->tlist_cap = 0;
    c->factors = NULL;
    c->factors_cap = 0;
    c->lens = NULL;
    c->lens_cap = 0;
}

static tgl_status decode_call(tgl__trace_reader *r, cursor *c, tgl__rcall *rc)
{
    memset(rc, 0, offsetof(tgl__rcall, sizes));
    uint32_t fn = get32(c);
    int32_t status = (int32_t)get32(c);
    uint32_t nargs = get32(c);
    if (fn >= TGL__FN_COUNT)
        return BAD(r, "call number %u is not a traced function (0..%d)", fn, TGL__FN_COUNT - 1);
    rc->fn = (tgl__fn)fn;
    const char *sig = tgl__fn_signature(rc->fn);
    if (status > 0 || status < TGL_ERR_INTERNAL)
        return BAD(r, "%s: status %d is not a tgl_status", tgl__fn_name(rc->fn), status);
    rc->status = (tgl_status)status;
    if (nargs != strlen(sig))
        return BAD(r, "%s takes %zu arguments, the record has %u", tgl__fn_name(rc->fn), strlen(sig), nargs);
    for (size_t i = 0; i < nargs; i++) {
        uint8_t kind = get8(c);
        tgl_status st = TGL_OK;
        if (!c->short_read && kind != (uint8_t)sig[i])
            return BAD(r, "%s argument %zu: kind '%c' where the signature has '%c'", tgl__fn_name(rc->fn), i + 1,
                       kind >= 32 && kind < 127 ? kind : '?', sig[i]);
        switch (sig[i]) {
        case 'e': case 'z': case 'u': case 'd': rc->u[i] = get64(c); break;
        case 'f': rc->u[i] = get32(c); break;
        case 'S': case 'q': st = get_sizes(r, c, rc, i); break;
        case 'J': st = get_ints(r, c, rc, i); break;
        case 'L':
            rc->present[i] = get8(c);
            rc->u[i] = get64(c);
            rc->stored[i] = rc->present[i] && rc->u[i] <= TGL_EXPR_MAX_INPUTS;
            for (size_t k = 0; !st && rc->stored[i] && k < rc->u[i]; k++)
                st = get_ptr(r, c, i, 1, &rc->list[k]);
            break;
        case 's': {
            rc->present[i] = get8(c);
            uint32_t len = get32(c);
            if (len > TGL__TRACE_EXPR_MAX)
                return BAD(r, "argument %zu: string of %u bytes (at most %u)", i + 1, len, TGL__TRACE_EXPR_MAX);
            const uint8_t *s = take(c, len);
            if (s && memchr(s, 0, len))
                return BAD(r, "argument %zu: string holds a NUL byte", i + 1);
            if (s)
                memcpy(rc->str, s, len);
            rc->str[len] = '\0';
            rc->u[i] = len;
            break;
        }
        case 'c': {
            rc->present[i] = get8(c);
            size_t f[TGL__CONV2D_FIELDS];
            for (size_t k = 0; k < TGL__CONV2D_FIELDS; k++)
                f[k] = (size_t)get64(c);
            rc->desc = (tgl_conv2d_desc){f[0], f[1], f[2], f[3], f[4], f[5], f[6],
                                         f[7], f[8], f[9], f[10], f[11], f[12], f[13]};
            break;
        }
        case 'P': { /* kind, ceil_mode, count_include_pad: ints stored as u64, any value (the call checks) */
            rc->present[i] = get8(c);
            uint64_t f[TGL__POOL2D_FIELDS];
            for (size_t k = 0; k < TGL__POOL2D_FIELDS; k++)
                f[k] = get64(c);
            rc->pool = (tgl_pool2d_desc){(size_t)f[0], (size_t)f[1], (size_t)f[2], (size_t)f[3], (size_t)f[4],
                                         (size_t)f[5], (size_t)f[6], (size_t)f[7], (size_t)f[8], (size_t)f[9],
                                         (size_t)f[10], (size_t)f[11], (tgl_pool_kind)(int)(int64_t)f[12],
                                         (int)(int64_t)f[13], (int)(int64_t)f[14]};
            break;
        }
        case 'R': { /* mode, align_corners: ints stored as u64; the scales as f64 bits (the call checks) */
            rc->present[i] = get8(c);
            uint64_t f[TGL__INTERP_FIELDS];
            for (size_t k = 0; k < TGL__INTERP_FIELDS; k++)
                f[k] = get64(c);
            double sh, sw;
            memcpy(&sh, &f[8], sizeof sh);
            memcpy(&sw, &f[9], sizeof sw);
            rc->resize = (tgl_interpolate_desc){(size_t)f[0], (size_t)f[1], (size_t)f[2], (size_t)f[3], (size_t)f[4],
                                                (size_t)f[5], (tgl_interp_mode)(int)(int64_t)f[6], (int)(int64_t)f[7],
                                                sh, sw};
            break;
        }
        case 'Y': { /* the enums as u64, any value (the call checks); the floats as f32 bits */
            rc->present[i] = get8(c);
            uint64_t f[TGL__ROPE_FIELDS];
            for (size_t k = 0; k < TGL__ROPE_FIELDS; k++)
                f[k] = get64(c);
            float fl[4];
            const uint32_t bits[4] = {(uint32_t)f[0], (uint32_t)f[5], (uint32_t)f[6], (uint32_t)f[7]};
            memcpy(fl, bits, sizeof fl);
            rc->rope = (tgl_rope_desc){fl[0], (tgl_rope_mode)(int)(int64_t)f[1], (size_t)f[2], (size_t)f[3],
                                       (tgl_rope_scaling)(int)(int64_t)f[4], fl[1], fl[2], fl[3], (size_t)f[8],
                                       NULL};
            st = get_rope_factors(r, c, rc, i);
            break;
        }
        case 'N': { /* causal as u64, any value (the call checks); the floats as f32 bits */
            rc->present[i] = get8(c);
            uint64_t f[TGL__ATTN_FIELDS];
            for (size_t k = 0; k < TGL__ATTN_FIELDS; k++)
                f[k] = get64(c);
            float fl[3];
            const uint32_t bits[3] = {(uint32_t)f[0], (uint32_t)f[4], (uint32_t)f[5]};
            memcpy(fl, bits, sizeof fl);
            rc->attn = (tgl_attention_desc){fl[0], (int)(int64_t)f[1], (size_t)f[2], (size_t)f[3], fl[1], fl[2], NULL};
            st = get_attention_lens(r, c, rc, i);
            break;
        }
        case 't': case 'T': case 'M':
            rc->present[i] = get8(c);
            st = get_tensor(r, c, i, sig[i] != 'T', &rc->tensor[i], &rc->p[i]);
            break;
        case 'U': st = get_tensor_list(r, c, rc, i); break;
        case 'D': rc->present[i] = get8(c); st = get_data_id(r, c, i, &rc->id[i]); break;
        case 'H': rc->present[i] = get8(c); break;
        case 'A': rc->present[i] = get8(c); rc->id[i] = get32(c); break;
        default: st = get_ptr(r, c, i, sig[i] == 'i' || sig[i] == 'x' || sig[i] == 'X', &rc->p[i]); break;
        }
        if (st)
            return st;
        if (rc->present[i] > 1)
            return BAD(r, "argument %zu: presence flag %u", i + 1, rc->present[i]);
    }
    if (c->short_read)
        return BAD(r, "%s: the record ends inside its arguments", tgl__fn_name(rc->fn));
    if (c->left)
        return BAD(r, "%s: %zu bytes after the last argument", tgl__fn_name(rc->fn), c->left);
    return TGL_OK;
}

static tgl_status index_data(tgl__trace_reader *r, uint64_t len)
{
    if (len < 16)
        return BAD(r, "data record of %llu bytes is shorter than its 16-byte hash", (unsigned long long)len);
    if (r->n_data == TGL__TRACE_NONE - 1)
        return BAD(r, "more data records than a trace may hold");
    if (r->n_data == r->data_cap) {
        uint32_t cap = r->data_cap ? r->data_cap * 2 : 256;
        uint64_t *at = realloc(r->data_at, cap * sizeof *at);
        if (at)
            r->data_at = at;
        uint64_t *ln = at ? realloc(r->data_len, cap * sizeof *ln) : NULL;
        if (!ln)
            return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace reader: no host memory for the data index");
        r->data_len = ln;
        r->data_cap = cap;
    }
    r->data_at[r->n_data] = r->pos + 16 + 16;
    r->data_len[r->n_data] = len - 16;
    r->n_data++;
    return TGL_OK;
}

tgl_status tgl__reader_next(tgl__trace_reader *r, tgl__rcall *rc, int *done)
{
    *done = 0;
    for (;;) {
        if (r->pos == r->size) {
            *done = 1;
            return TGL_OK;
        }
        r->record++;
        r->record_at = r->pos;
        uint8_t head[16];
        if (r->size - r->pos < sizeof head || fseek(r->f, (long)r->pos, SEEK_SET) != 0 ||
            !read_exact(r, head, sizeof head))
            return BAD(r, "truncated: %llu bytes left, a record header takes 16",
                       (unsigned long long)(r->size - r->pos));
        uint32_t type = tgl__le32(head), reserved = tgl__le32(head + 4);
        uint64_t len = tgl__le64(head + 8);
        if (reserved)
            return BAD(r, "reserved field is %u, not 0", reserved);
        if (len > r->size - r->pos - sizeof head)
            return BAD(r, "truncated: the record claims %llu bytes, the file holds %llu more",
                       (unsigned long long)len, (unsigned long long)(r->size - r->pos - sizeof head));
        tgl_status st;
        if (type == TGL__REC_DATA) {
            if ((st = index_data(r, len)))
                return st;
        } else if (type == TGL__REC_CALL) {
            if (len > TGL__TRACE_CALL_MAX)
                return BAD(r, "call record of %llu bytes (at most %u)", (unsigned long long)len, TGL__TRACE_CALL_MAX);
            if (len > r->payload_cap) { /* grown to the largest call record seen (<= 1 MiB) */
                uint8_t *p = realloc(r->payload, (size_t)len);
                if (!p)
                    return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace reader: no host memory");
                r->payload = p;
                r->payload_cap = (size_t)len;
            }
            if (len && !read_exact(r, r->payload, (size_t)len))
                return BAD(r, "cannot read the call record");
            cursor c = {r->payload, (size_t)len, 0};
            if ((st = decode_call(r, &c, rc)))
                return st;
            r->pos += sizeof head + len;
            return TGL_OK;
        } else {
            return BAD(r, "record type %u is neither data (1) nor call (2)", type);
        }
        r->pos += sizeof head + len;
    }
}

tgl_status tgl__reader_data(tgl__trace_reader *r, uint32_t id, uint64_t expect, void **out)
{
    *out = NULL;
    if (id >= r->n_data)
        return BAD(r, "data %u does not exist", id);
    if (r->data_len[id] != expect)
        return BAD(r, "data %u holds %llu bytes where %llu are needed", id, (unsigned long long)r->data_len[id],
                   (unsigned long long)expect);
    void *buf = malloc(expect ? (size_t)expect : 1);
    if (!buf)
        return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "trace reader: no host memory for %llu bytes of data %u",
                         (unsigned long long)expect, id);
    if (fseek(r->f, (long)r->data_at[id], SEEK_SET) != 0 || !read_exact(r, buf, (size_t)expect)) {
        free(buf);
        return BAD(r, "cannot read data %u", id);
    }
    *out = buf;
    return TGL_OK;
}
