/* `tensorgl bench`'s host references: the same work as the benchmark's call, as the plain C a
 * program without tensorgl would write (one thread, the C library's qsort), on host copies of the
 * case's buffers. Issue 53's indexing, scan, sort and random ops are measured against them on
 * llvmpipe (the "host" backend of the table). Buffers are as bench_ops.c's specs lay them out;
 * int32 ids and indices sit in the float arrays' bits. */
#include "bench_suite.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int32_t id_at(const float *buf, size_t i)
{
    int32_t v;
    memcpy(&v, &buf[i], sizeof v);
    return v;
}

static void put_id(float *buf, size_t i, int32_t v)
{
    memcpy(&buf[i], &v, sizeof v);
}

/* scatter_add: out[ids[i]] += src[i] (buffers: src, out, ids). */
static void host_scatter_add(const size_t *p, float *const *b)
{
    for (size_t i = 0; i < p[0]; i++)
        b[1][id_at(b[2], i)] += b[0][i];
}

/* sort: values and indices of one line, stable, ascending (buffers: in, values, indices). */
typedef struct keyed {
    float v;
    int32_t i;
} keyed;

static int by_value_then_index(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static void host_sort(const size_t *p, float *const *b)
{
    keyed *k = malloc(p[0] * sizeof *k);
    if (!k)
        return;
    for (size_t i = 0; i < p[0]; i++)
        k[i] = (keyed){b[0][i], (int32_t)i};
    qsort(k, p[0], sizeof *k, by_value_then_index);
    for (size_t i = 0; i < p[0]; i++) {
        b[1][i] = k[i].v;
        put_id(b[2], i, k[i].i);
    }
    free(k);
}

/* topk: the k largest of each row, largest first, the first of equals first (buffers: in
 * [rows, cols], values [rows, k], indices [rows, k]): a sorted list of the best k so far, each
 * element that beats its last inserted in place. */
static void host_topk(const size_t *p, float *const *b)
{
    size_t rows = p[0], cols = p[1], k = p[2];
    for (size_t r = 0; r < rows; r++) {
        const float *x = b[0] + r * cols;
        float *v = b[1] + r * k, *ix = b[2] + r * k;
        size_t have = 0;
        for (size_t c = 0; c < cols; c++) {
            if (have == k && !(x[c] > v[k - 1]))
                continue;
            size_t at = have < k ? have++ : k - 1;
            while (at > 0 && x[c] > v[at - 1]) {
                v[at] = v[at - 1];
                ix[at] = ix[at - 1];
                at--;
            }
            v[at] = x[c];
            put_id(ix, at, (int32_t)c);
        }
    }
}

/* cumsum: running sums of one line in f32 (buffers: in, out). */
static void host_cumsum(const size_t *p, float *const *b)
{
    float s = 0.0f;
    for (size_t i = 0; i < p[0]; i++)
        b[1][i] = s += b[0][i];
}

/* gather along axis 1: out[r, c] = x[r, ids[r, c]] (buffers: x, out, ids, all [rows, cols]). */
static void host_gather(const size_t *p, float *const *b)
{
    for (size_t r = 0; r < p[0]; r++)
        for (size_t c = 0; c < p[1]; c++)
            b[1][r * p[1] + c] = b[0][r * p[1] + id_at(b[2], r * p[1] + c)];
}

/* random_normal: n standard normals, Box-Muller over xorshift64* uniforms (buffer: out). */
static void host_random_normal(const size_t *p, float *const *b)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < p[0]; i += 2) {
        float u[2];
        for (int j = 0; j < 2; j++) {
            s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
            u[j] = (float)((s * 0x2545F4914F6CDD1Dull) >> 40) * (1.0f / 16777216.0f);
        }
        float radius = sqrtf(-2.0f * logf(1.0f - u[0])), angle = 6.2831853f * u[1];
        b[0][i] = radius * cosf(angle);
        if (i + 1 < p[0])
            b[0][i + 1] = radius * sinf(angle);
    }
}

static const struct {
    const char *op;
    bench_host_fn fn;
} loops[] = {
    {"scatter_add", host_scatter_add}, {"scatter_add_unordered", host_scatter_add},
    {"sort", host_sort},               {"topk", host_topk},
    {"cumsum", host_cumsum},           {"gather", host_gather}, {"random_normal", host_random_normal},
};

bench_host_fn tgl_bench_host_loop(const char *op)
{
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
        if (!strcmp(loops[i].op, op))
            return loops[i].fn;
    return NULL;
}
