/* GGUF reader and writer (gguf.h). Reading goes through a cursor that refuses any read past the
 * end, and every size is computed with overflow checks, so no length in the file can make the
 * reader touch a byte that is not there or allocate more than the file could describe. */
#include "gguf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t elems, bytes;
} ggml_types[] = {
    [GGML_F32] = {"f32", 1, 4},        [GGML_F16] = {"f16", 1, 2},      [GGML_Q4_0] = {"q4_0", 32, 18},
    [GGML_Q4_1] = {"q4_1", 32, 20},    [GGML_Q5_0] = {"q5_0", 32, 22},  [GGML_Q5_1] = {"q5_1", 32, 24},
    [GGML_Q8_0] = {"q8_0", 32, 34},    [GGML_Q8_1] = {"q8_1", 32, 36},  [GGML_Q2_K] = {"q2_k", 256, 84},
    [GGML_Q3_K] = {"q3_k", 256, 110},  [GGML_Q4_K] = {"q4_k", 256, 144}, [GGML_Q5_K] = {"q5_k", 256, 176},
    [GGML_Q6_K] = {"q6_k", 256, 210},  [GGML_Q8_K] = {"q8_k", 256, 292}, [GGML_I8] = {"i8", 1, 1},
    [GGML_I16] = {"i16", 1, 2},        [GGML_I32] = {"i32", 1, 4},      [GGML_I64] = {"i64", 1, 8},
    [GGML_F64] = {"f64", 1, 8},        [GGML_BF16] = {"bf16", 1, 2},
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

size_t gguf_block_elems(uint32_t t)
{
    return t < N_GGML_TYPES ? ggml_types[t].elems : 0;
}

size_t gguf_block_bytes(uint32_t t)
{
    return t < N_GGML_TYPES ? ggml_types[t].bytes : 0;
}

const char *gguf_ggml_type_name(uint32_t t)
{
    return t < N_GGML_TYPES && ggml_types[t].name ? ggml_types[t].name : "unknown";
}

/* Bytes of one scalar value type; 0 for STRING and ARRAY (variable) and unknown types. */
static size_t scalar_size(uint32_t t)
{
    static const size_t sizes[GGUF_TYPE_COUNT] = {
        [GGUF_U8] = 1, [GGUF_I8] = 1, [GGUF_U16] = 2, [GGUF_I16] = 2, [GGUF_U32] = 4, [GGUF_I32] = 4,
        [GGUF_F32] = 4, [GGUF_BOOL] = 1, [GGUF_U64] = 8, [GGUF_I64] = 8, [GGUF_F64] = 8};
    return t < GGUF_TYPE_COUNT ? sizes[t] : 0;
}

uint64_t gguf_tensor_bytes(uint32_t type, uint32_t ndim, const uint64_t *ne)
{
    size_t be = gguf_block_elems(type), bb = gguf_block_bytes(type);
    if (!be || ndim == 0 || ndim > GGUF_MAX_DIMS || ne[0] % be)
        return 0;
    uint64_t n = ne[0] / be * bb;
    for (uint32_t d = 1; d < ndim; d++) {
        if (ne[d] && n > UINT64_MAX / ne[d])
            return 0;
        n *= ne[d];
    }
    return n;
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct cursor {
    const unsigned char *buf;
    size_t size, at;
    char *err;
    size_t err_size;
} cursor;

static void fail_message(cursor *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->err_size)
        vsnprintf(c->err, c->err_size, fmt, ap);
    va_end(ap);
}
/* The message, then -1 (a macro: analyzers do not follow a variadic function's return). */
#define fail(c, ...) (fail_message((c), __VA_ARGS__), -1)

static int take(cursor *c, size_t n, const unsigned char **p, const char *what)
{
    *p = NULL;
    if (n > c->size - c->at) {
        return fail(c, "%s at byte %zu: needs %zu bytes, the file has %zu left", what, c->at, n, c->size - c->at);
    }
    *p = c->buf + c->at;
    c->at += n;
    return 0;
}

static uint64_t le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int read_uint(cursor *c, size_t n, uint64_t *v, const char *what)
{
    const unsigned char *p = NULL;
    if (take(c, n, &p, what))
        return -1;
    *v = le(p, n);
    return 0;
}

static int read_string(cursor *c, const char **s, size_t *len, const char *what)
{
    uint64_t n;
    const unsigned char *p = NULL;
    if (read_uint(c, 8, &n, what))
        return -1;
    if (n > c->size - c->at)
        return fail(c, "%s at byte %zu: a string of %llu bytes, the file has %zu left", what, c->at - 8,
                    (unsigned long long)n, c->size - c->at);
    if (take(c, (size_t)n, &p, what))
        return -1;
    *s = (const char *)p;
    *len = (size_t)n;
    return 0;
}

/* A name (key or tensor name) copied NUL-terminated; refused when it does not fit or holds a NUL. */
static int read_name(cursor *c, char *out, const char *what)
{
    const char *s;
    size_t len;
    if (read_string(c, &s, &len, what))
        return -1;
    if (len >= GGUF_MAX_NAME)
        return fail(c, "%s: %zu bytes long, at most %d here", what, len, GGUF_MAX_NAME - 1);
    if (memchr(s, '\0', len))
        return fail(c, "%s: holds a NUL byte", what);
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

static double as_float(uint32_t type, uint64_t bits)
{
    if (type == GGUF_F32) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static int read_value(cursor *c, gguf_kv *kv)
{
    uint64_t t;
    if (read_uint(c, 4, &t, kv->key))
        return -1;
    if (t >= GGUF_TYPE_COUNT)
        return fail(c, "key '%s': value type %llu is not one of GGUF's", kv->key, (unsigned long long)t);
    kv->type = (gguf_type)t;
    if (t == GGUF_STRING)
        return read_string(c, &kv->str, &kv->str_len, kv->key);
    if (t != GGUF_ARRAY) {
        uint64_t bits;
        size_t n = scalar_size((uint32_t)t);
        if (read_uint(c, n, &bits, kv->key))
            return -1;
        if (t == GGUF_F32 || t == GGUF_F64)
            kv->v.f = as_float((uint32_t)t, bits);
        else if (t == GGUF_I8 || t == GGUF_I16 || t == GGUF_I32 || t == GGUF_I64)
            kv->v.i = n == 8 ? (int64_t)bits : (int64_t)(bits ^ (1ull << (8 * n - 1))) - (int64_t)(1ull << (8 * n - 1));
        else if (t == GGUF_BOOL) {
            if (bits > 1)
                return fail(c, "key '%s': a bool of value %llu", kv->key, (unsigned long long)bits);
            kv->v.u = bits;
        } else
            kv->v.u = bits;
        return 0;
    }
    uint64_t et, count;
    if (read_uint(c, 4, &et, kv->key) || read_uint(c, 8, &count, kv->key))
        return -1;
    if (et >= GGUF_TYPE_COUNT || et == GGUF_ARRAY)
        return fail(c, "key '%s': an array of element type %llu (%s)", kv->key, (unsigned long long)et,
                    et == GGUF_ARRAY ? "arrays of arrays are not GGUF" : "not one of GGUF's");
    kv->elem_type = (gguf_type)et;
    kv->count = count;
    kv->array_at = c->at;
    if (et == GGUF_STRING) {
        /* Each element at least its 8-byte length: the count is bounded before the walk. */
        if (count > (c->size - c->at) / 8)
            return fail(c, "key '%s': %llu strings cannot fit in the %zu bytes left", kv->key,
                        (unsigned long long)count, c->size - c->at);
        for (uint64_t i = 0; i < count; i++) {
            const char *s;
            size_t len;
            if (read_string(c, &s, &len, kv->key))
                return -1;
        }
        return 0;
    }
    size_t es = scalar_size((uint32_t)et);
    if (count > (c->size - c->at) / es)
        return fail(c, "key '%s': %llu elements of %zu bytes, the file has %zu bytes left", kv->key,
                    (unsigned long long)count, es, c->size - c->at);
    c->at += (size_t)count * es;
    return 0;
}

void gguf_free(gguf_file *f)
{
    free(f->bytes);
    free(f->kvs);
    free(f->tensors);
    memset(f, 0, sizeof *f);
}

static int parse(cursor *c, gguf_file *f)
{
    const unsigned char *magic = NULL;
    uint64_t version, n_tensors, n_kv;
    if (take(c, 4, &magic, "magic"))
        return -1;
    if (memcmp(magic, "GGUF", 4))
        return fail(c, "not a GGUF file (the first 4 bytes are not \"GGUF\")");
    if (read_uint(c, 4, &version, "version"))
        return -1;
    if (version != 2 && version != 3)
        return fail(c, "GGUF version %llu: only versions 2 and 3 are read", (unsigned long long)version);
    f->version = (uint32_t)version;
    if (read_uint(c, 8, &n_tensors, "tensor count") || read_uint(c, 8, &n_kv, "key-value count"))
        return -1;
    /* A pair takes at least 8 + 4 bytes plus a scalar, a tensor info at least 8 + 4 + 4 + 8:
     * counts past what the file could hold are refused before anything is allocated. */
    if (n_kv > (c->size - c->at) / 13)
        return fail(c, "%llu key-value pairs cannot fit in a %zu-byte file", (unsigned long long)n_kv, c->size);
    if (n_tensors > (c->size - c->at) / 24)
        return fail(c, "%llu tensors cannot fit in a %zu-byte file", (unsigned long long)n_tensors, c->size);
    f->kvs = calloc(n_kv ? (size_t)n_kv : 1, sizeof *f->kvs);
    f->tensors = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof *f->tensors);
    if (!f->kvs || !f->tensors)
        return fail(c, "out of host memory");
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; i < n_kv; i++) {
        gguf_kv *kv = &f->kvs[i];
        if (read_name(c, kv->key, "a key"))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(f->kvs[j].key, kv->key))
                return fail(c, "key '%s' appears twice", kv->key);
        if (read_value(c, kv))
            return -1;
        f->n_kv = i + 1;
        if (!strcmp(kv->key, "general.alignment")) {
            if (kv->type != GGUF_U32 || kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)))
                return fail(c, "general.alignment: must be a u32 power of two");
            f->alignment = (uint32_t)kv->v.u;
        }
    }
    for (size_t i = 0; i < n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        uint64_t ndim, type;
        if (read_name(c, t->name, "a tensor name"))
            return -1;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(f->tensors[j].name, t->name))
                return fail(c, "tensor '%s' appears twice", t->name);
        if (read_uint(c, 4, &ndim, t->name))
            return -1;
        if (ndim == 0 || ndim > GGUF_MAX_DIMS)
            return fail(c, "tensor '%s': %llu dims (1 to %d)", t->name, (unsigned long long)ndim, GGUF_MAX_DIMS);
        t->ndim = (uint32_t)ndim;
        for (uint32_t d = 0; d < t->ndim; d++) {
            if (read_uint(c, 8, &t->ne[d], t->name))
                return -1;
            if (t->ne[d] == 0 || t->ne[d] > INT64_MAX)
                return fail(c, "tensor '%s': extent %llu of dim %u", t->name, (unsigned long long)t->ne[d], d);
        }
        for (uint32_t d = t->ndim; d < GGUF_MAX_DIMS; d++)
            t->ne[d] = 1;
        if (read_uint(c, 4, &type, t->name) || read_uint(c, 8, &t->offset, t->name))
            return -1;
        if (!gguf_block_elems((uint32_t)type))
            return fail(c, "tensor '%s': ggml type %llu is not one this reader knows", t->name,
                        (unsigned long long)type);
        t->type = (uint32_t)type;
        if (t->ne[0] % gguf_block_elems(t->type))
            return fail(c, "tensor '%s': %s rows of %llu elements are not whole blocks of %zu", t->name,
                        gguf_ggml_type_name(t->type), (unsigned long long)t->ne[0], gguf_block_elems(t->type));
        t->size = gguf_tensor_bytes(t->type, t->ndim, t->ne);
        if (!t->size)
            return fail(c, "tensor '%s': its byte size overflows", t->name);
        if (t->offset % f->alignment)
            return fail(c, "tensor '%s': offset %llu is not a multiple of the alignment %u", t->name,
                        (unsigned long long)t->offset, f->alignment);
        f->n_tensors = i + 1;
    }
    size_t data_at = c->at + (f->alignment - c->at % f->alignment) % f->alignment;
    if (data_at < c->at || data_at > c->size) {
        if (f->n_tensors)
            return fail(c, "the data section (at byte %zu) lies past the file's end (%zu bytes)", data_at, c->size);
        data_at = c->size;
    }
    size_t data_size = c->size - data_at;
    for (size_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        if (t->offset > data_size || t->size > data_size - t->offset)
            return fail(c, "tensor '%s': bytes %llu..%llu of the data, which holds %zu", t->name,
                        (unsigned long long)t->offset, (unsigned long long)t->offset + t->size, data_size);
        t->data = c->buf + data_at + t->offset;
    }
    return 0;
}

int gguf_parse(const unsigned char *buf, size_t size, gguf_file *f, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    cursor c = {buf, size, 0, err, err_size};
    if (err_size)
        err[0] = '\0';
    f->size = size;
    if (parse(&c, f)) {
        free(f->kvs);
        free(f->tensors);
        memset(f, 0, sizeof *f);
        return -1;
    }
    return 0;
}

int gguf_load(const char *path, gguf_file *f, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_size, "%s: cannot open", path);
        return -1;
    }
    long end = -1;
    if (!fseek(fp, 0, SEEK_END))
        end = ftell(fp);
    unsigned char *bytes = end >= 0 && !fseek(fp, 0, SEEK_SET) ? calloc(end ? (size_t)end : 1, 1) : NULL;
    if (!bytes || fread(bytes, 1, (size_t)end, fp) != (size_t)end) {
        snprintf(err, err_size, "%s: %s", path, bytes ? "read failed" : "cannot size or hold the file");
        free(bytes);
        fclose(fp);
        return -1;
    }
    fclose(fp);
    char why[512];
    if (gguf_parse(bytes, (size_t)end, f, why, sizeof why)) {
        snprintf(err, err_size, "%s: %s", path, why);
        free(bytes);
        return -1;
    }
    f->bytes = bytes;
    return 0;
}

const gguf_kv *gguf_find_kv(const gguf_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_kv; i++)
        if (!strcmp(f->kvs[i].key, key))
            return &f->kvs[i];
    return NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

int gguf_get_uint(const gguf_file *f, const char *key, uint64_t *out)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv)
        return -1;
    switch (kv->type) {
    case GGUF_U8: case GGUF_U16: case GGUF_U32: case GGUF_U64:
        *out = kv->v.u;
        return 0;
    case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64:
        if (kv->v.i < 0)
            return -1;
        *out = (uint64_t)kv->v.i;
        return 0;
    default:
        return -1;
    }
}

int gguf_get_float(const gguf_file *f, const char *key, double *out)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    uint64_t u;
    if (!kv)
        return -1;
    if (kv->type == GGUF_F32 || kv->type == GGUF_F64)
        *out = kv->v.f;
    else if (!gguf_get_uint(f, key, &u))
        *out = (double)u;
    else
        return -1;
    return 0;
}

int gguf_get_string(const gguf_file *f, const char *key, char *out, size_t out_size)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    if (!kv || kv->type != GGUF_STRING || !out_size)
        return -1;
    size_t n = kv->str_len < out_size - 1 ? kv->str_len : out_size - 1;
    memcpy(out, kv->str, n);
    out[n] = '\0';
    return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int put(FILE *fp, uint64_t v, size_t n)
{
    unsigned char b[8] = {0};
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return fwrite(b, 1, n, fp) == n ? 0 : -1;
}

static int put_string(FILE *fp, const char *s)
{
    size_t n = strlen(s);
    return put(fp, n, 8) || fwrite(s, 1, n, fp) != n ? -1 : 0;
}

static int put_kv(FILE *fp, const gguf_write_kv *kv)
{
    if (put_string(fp, kv->key) || put(fp, kv->type, 4))
        return -1;
    switch (kv->type) {
    case GGUF_U32:
        return put(fp, kv->u, 4);
    case GGUF_U64:
        return put(fp, kv->u, 8);
    case GGUF_BOOL:
        return put(fp, kv->u != 0, 1);
    case GGUF_I32:
        return put(fp, (uint64_t)kv->i, 4);
    case GGUF_F32: {
        float x = (float)kv->f;
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        return put(fp, u, 4);
    }
    case GGUF_STRING:
        return put_string(fp, kv->str ? kv->str : "");
    default:
        return -1;
    }
}

int gguf_save(const char *path, const gguf_write_kv *kvs, size_t n_kv, const gguf_write_tensor *tensors,
              size_t n_tensors, char *err, size_t err_size)
{
    uint64_t offset = 0;
    for (size_t i = 0; i < n_tensors; i++)
        if (!gguf_tensor_bytes(tensors[i].type, tensors[i].ndim, tensors[i].ne)) {
            snprintf(err, err_size, "tensor '%s': no byte size for type %u and these extents", tensors[i].name,
                     tensors[i].type);
            return -1;
        }
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        snprintf(err, err_size, "%s: cannot create", path);
        return -1;
    }
    int bad = fwrite("GGUF", 1, 4, fp) != 4 || put(fp, 3, 4) || put(fp, n_tensors, 8) || put(fp, n_kv, 8);
    for (size_t i = 0; !bad && i < n_kv; i++)
        bad = put_kv(fp, &kvs[i]);
    for (size_t i = 0; !bad && i < n_tensors; i++) {
        const gguf_write_tensor *t = &tensors[i];
        bad = put_string(fp, t->name) || put(fp, t->ndim, 4);
        for (uint32_t d = 0; !bad && d < t->ndim; d++)
            bad = put(fp, t->ne[d], 8);
        bad = bad || put(fp, t->type, 4) || put(fp, offset, 8);
        uint64_t n = gguf_tensor_bytes(t->type, t->ndim, t->ne);
        offset += (n + GGUF_DEFAULT_ALIGNMENT - 1) / GGUF_DEFAULT_ALIGNMENT * GGUF_DEFAULT_ALIGNMENT;
    }
    static const unsigned char zeros[GGUF_DEFAULT_ALIGNMENT];
    long at = bad ? 0 : ftell(fp);
    bad = bad || at < 0 || fwrite(zeros, 1, (size_t)(GGUF_DEFAULT_ALIGNMENT - at % GGUF_DEFAULT_ALIGNMENT) %
                                                GGUF_DEFAULT_ALIGNMENT, fp) !=
                               (size_t)(GGUF_DEFAULT_ALIGNMENT - at % GGUF_DEFAULT_ALIGNMENT) % GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; !bad && i < n_tensors; i++) {
        uint64_t n = gguf_tensor_bytes(tensors[i].type, tensors[i].ndim, tensors[i].ne);
        size_t pad = (size_t)((GGUF_DEFAULT_ALIGNMENT - n % GGUF_DEFAULT_ALIGNMENT) % GGUF_DEFAULT_ALIGNMENT);
        bad = fwrite(tensors[i].data, 1, (size_t)n, fp) != n || fwrite(zeros, 1, pad, fp) != pad;
    }
    if (fclose(fp) || bad) {
        snprintf(err, err_size, "%s: write failed", path);
        return -1;
    }
    return 0;
}
