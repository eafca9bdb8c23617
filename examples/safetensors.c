/* safetensors files: see safetensors.h. */
#include "safetensors.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

static const struct {
    const char *name;
    st_dtype dtype;
    size_t size;
} dtypes[] = {{"F32", ST_F32, 4},     {"F16", ST_F16, 2},      {"BF16", ST_BF16, 2},     {"F64", ST_F64, 8},
               {"BOOL", ST_OTHER, 1},  {"U8", ST_OTHER, 1},      {"I8", ST_OTHER, 1},      {"F8_E5M2", ST_OTHER, 1},
               {"F8_E4M3", ST_OTHER, 1}, {"I16", ST_OTHER, 2},   {"U16", ST_OTHER, 2},     {"I32", ST_OTHER, 4},
               {"U32", ST_OTHER, 4},   {"I64", ST_OTHER, 8},     {"U64", ST_OTHER, 8}}; /* the format's */

static int cmp_begin(const void *a, const void *b)
{
    const st_tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

/* A JSON integer in [0, limit], or -1. */
static int64_t json_size(struct json_object *v, int64_t limit)
{
    if (!v || !json_object_is_type(v, json_type_int))
        return -1;
    int64_t x = json_object_get_int64(v);
    return x >= 0 && x <= limit ? x : -1;
}

static int parse_entry(const char *name, struct json_object *v, size_t data_size, st_tensor *t, char *err,
                       size_t size)
{
    if (strlen(name) >= ST_MAX_NAME)
        return fail(err, size, "a tensor name longer than %d bytes", ST_MAX_NAME - 1);
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, strlen(name) + 1);
    struct json_object *dt, *shape, *offsets;
    if (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, "dtype", &dt) ||
        !json_object_object_get_ex(v, "shape", &shape) || !json_object_object_get_ex(v, "data_offsets", &offsets))
        return fail(err, size, "%s: not an object with dtype, shape and data_offsets", name);
    const char *dts = json_object_is_type(dt, json_type_string) ? json_object_get_string(dt) : NULL;
    size_t es = 0;
    for (size_t i = 0; dts && i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dts, dtypes[i].name))
            t->dtype = dtypes[i].dtype, es = dtypes[i].size;
    if (!es)
        return fail(err, size, "%s: dtype %s is not one of the format's", name, dts ? dts : "(not a string)");
    if (!json_object_is_type(shape, json_type_array) || json_object_array_length(shape) > ST_MAX_DIMS)
        return fail(err, size, "%s: shape is not an array of at most %d sizes", name, ST_MAX_DIMS);
    t->ndim = json_object_array_length(shape);
    uint64_t count = 1;
    for (size_t d = 0; d < t->ndim; d++) {
        int64_t s = json_size(json_object_array_get_idx(shape, d), (int64_t)data_size);
        if (s < 0)
            return fail(err, size, "%s: shape[%zu] is not a size within the data", name, d);
        t->shape[d] = (size_t)s;
        if (s && count > data_size / (uint64_t)s) /* more elements than bytes: cannot fit */
            return fail(err, size, "%s: %zu dims whose product passes the data's %zu bytes", name, t->ndim, data_size);
        count *= (uint64_t)s;
    }
    if (!json_object_is_type(offsets, json_type_array) || json_object_array_length(offsets) != 2)
        return fail(err, size, "%s: data_offsets is not [begin, end]", name);
    int64_t b = json_size(json_object_array_get_idx(offsets, 0), (int64_t)data_size);
    int64_t e = json_size(json_object_array_get_idx(offsets, 1), (int64_t)data_size);
    if (b < 0 || e < 0 || b > e)
        return fail(err, size, "%s: data_offsets [begin, end] not within the %zu bytes of data", name, data_size);
    if ((uint64_t)(e - b) != count * es)
        return fail(err, size, "%s: %lld bytes for %llu elements of %zu bytes", name, (long long)(e - b),
                    (unsigned long long)count, es);
    t->count = (size_t)count;
    t->begin = (size_t)b, t->end = (size_t)e;
    return 0;
}

int st_parse(const unsigned char *buf, size_t size, st_file *f, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    if (size < 8)
        return fail(err, err_size, "%zu bytes: shorter than the 8-byte header length", size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | buf[i];
    if (n > ST_MAX_HEADER || n > size - 8)
        return fail(err, err_size, "a header of %llu bytes in a file of %zu", (unsigned long long)n, size);
    struct json_tokener *tok = json_tokener_new();
    if (!tok)
        return fail(err, err_size, "no memory for the JSON parser");
    struct json_object *root = json_tokener_parse_ex(tok, (const char *)buf + 8, (int)n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t parsed = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!root || jerr != json_tokener_success) {
        json_object_put(root);
        return fail(err, err_size, "the header is not JSON: %s",
                    jerr == json_tokener_continue ? "it ends early" : json_tokener_error_desc(jerr));
    }
    for (size_t i = parsed; i < n; i++) /* the format pads the header with spaces */
        if (buf[8 + i] != ' ') {
            json_object_put(root);
            return fail(err, err_size, "bytes after the header's JSON (at %zu)", i);
        }
    if (!json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return fail(err, err_size, "the header is not a JSON object");
    }
    f->data = buf + 8 + n;
    f->data_size = size - 8 - (size_t)n;
    size_t most = (size_t)json_object_object_length(root);
    f->tensors = calloc(most ? most : 1, sizeof *f->tensors);
    int rc = f->tensors ? 0 : fail(err, err_size, "no memory for %zu tensors", most);
    json_object_object_foreach(root, key, val) {
        if (rc)
            break;
        if (!strcmp(key, "__metadata__")) {
            if (!json_object_is_type(val, json_type_object))
                rc = fail(err, err_size, "__metadata__ is not an object");
            continue;
        }
        rc = parse_entry(key, val, f->data_size, &f->tensors[f->count], err, err_size);
        if (!rc)
            f->count++;
    }
    json_object_put(root);
    if (!rc && f->count) { /* the reference implementation's rule: no overlap, no gap, to the end */
        qsort(f->tensors, f->count, sizeof *f->tensors, cmp_begin);
        size_t at = 0;
        for (size_t i = 0; !rc && i < f->count; i++) {
            if (f->tensors[i].begin != at)
                rc = fail(err, err_size, "%s: begins at byte %zu of the data, not %zu (overlap or gap)",
                          f->tensors[i].name, f->tensors[i].begin, at);
            at = f->tensors[i].end;
        }
        if (!rc && at != f->data_size)
            rc = fail(err, err_size, "the tensors end at byte %zu of %zu bytes of data", at, f->data_size);
    }
    if (rc) {
        free(f->tensors);
        memset(f, 0, sizeof *f);
    }
    return rc;
}

int st_load(const char *path, st_file *f, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return fail(err, err_size, "%s: cannot open", path);
    unsigned char *bytes = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            size_t grown = cap ? cap * 2 : (size_t)1 << 20;
            unsigned char *p = realloc(bytes, grown);
            if (!p) {
                free(bytes);
                fclose(fp);
                return fail(err, err_size, "%s: no memory for %zu bytes", path, grown);
            }
            bytes = p, cap = grown;
        }
        size_t got = fread(bytes + size, 1, cap - size, fp);
        size += got;
        if (got == 0)
            break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(bytes);
        return fail(err, err_size, "%s: read error", path);
    }
    if (st_parse(bytes, size, f, err, err_size)) {
        free(bytes);
        return -1;
    }
    f->bytes = bytes;
    return 0;
}

void st_free(st_file *f)
{
    free(f->tensors);
    free(f->bytes);
    memset(f, 0, sizeof *f);
}

const st_tensor *st_find(const st_file *f, const char *name)
{
    for (size_t i = 0; i < f->count; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

static float half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = h >> 10 & 31, m = h & 1023, bits;
    if (e == 31)
        bits = sign | 0x7f800000u | m << 13;
    else if (e)
        bits = sign | (e + 112) << 23 | m << 13;
    else if (!m)
        bits = sign;
    else { /* subnormal: normalize */
        e = 113;
        while (!(m & 1024))
            m <<= 1, e--;
        bits = sign | e << 23 | (m & 1023) << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int st_read_f32(const st_file *f, const st_tensor *t, float *out)
{
    const unsigned char *p = f->data + t->begin;
    if (t->dtype == ST_OTHER)
        return -1;
    for (size_t i = 0; i < t->count; i++) {
        if (t->dtype == ST_F64) {
            uint64_t bits = 0;
            for (int k = 7; k >= 0; k--)
                bits = bits << 8 | p[8 * i + (size_t)k];
            double v;
            memcpy(&v, &bits, 8);
            out[i] = (float)v;
        } else if (t->dtype == ST_F32) {
            uint32_t bits = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                            (uint32_t)p[4 * i + 3] << 24;
            memcpy(&out[i], &bits, 4);
        } else {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            if (t->dtype == ST_F16) {
                out[i] = half_to_f32(h);
            } else {
                uint32_t bits = (uint32_t)h << 16;
                memcpy(&out[i], &bits, 4);
            }
        }
    }
    return 0;
}

int st_save(const char *path, const st_entry *entries, size_t n, char *err, size_t err_size)
{
    struct json_object *root = json_object_new_object();
    size_t at = 0;
    for (size_t i = 0; root && i < n; i++) {
        size_t count = 1;
        struct json_object *t = json_object_new_object(), *shape = json_object_new_array(),
                           *offsets = json_object_new_array();
        for (size_t d = 0; d < entries[i].ndim; d++) {
            json_object_array_add(shape, json_object_new_int64((int64_t)entries[i].shape[d]));
            count *= entries[i].shape[d];
        }
        json_object_array_add(offsets, json_object_new_int64((int64_t)at));
        json_object_array_add(offsets, json_object_new_int64((int64_t)(at + 4 * count)));
        json_object_object_add(t, "dtype", json_object_new_string("F32"));
        json_object_object_add(t, "shape", shape);
        json_object_object_add(t, "data_offsets", offsets);
        json_object_object_add(root, entries[i].name, t);
        at += 4 * count;
    }
    if (!root)
        return fail(err, err_size, "no memory for the header");
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    size_t len = strlen(text), padded = (len + 7) / 8 * 8; /* the data 8-byte aligned */
    FILE *fp = fopen(path, "wb");
    int rc = fp ? 0 : fail(err, err_size, "%s: cannot create", path);
    unsigned char head[8];
    for (int i = 0; i < 8; i++)
        head[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    if (!rc && (fwrite(head, 1, 8, fp) != 8 || fwrite(text, 1, len, fp) != len))
        rc = fail(err, err_size, "%s: write error", path);
    for (size_t i = len; !rc && i < padded; i++)
        if (fputc(' ', fp) == EOF)
            rc = fail(err, err_size, "%s: write error", path);
    for (size_t i = 0; !rc && i < n; i++) { /* little-endian f32, as the format stores it */
        size_t count = 1;
        for (size_t d = 0; d < entries[i].ndim; d++)
            count *= entries[i].shape[d];
        for (size_t j = 0; !rc && j < count; j++) {
            uint32_t bits;
            memcpy(&bits, &entries[i].data[j], 4);
            unsigned char le[4] = {(unsigned char)bits, (unsigned char)(bits >> 8), (unsigned char)(bits >> 16),
                                   (unsigned char)(bits >> 24)};
            if (fwrite(le, 1, 4, fp) != 4)
                rc = fail(err, err_size, "%s: write error", path);
        }
    }
    if (fp && fclose(fp) && !rc)
        rc = fail(err, err_size, "%s: write error", path);
    json_object_put(root);
    return rc;
}
