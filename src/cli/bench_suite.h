/* The standard benchmark set behind `tensorgl bench` (the table): every op family at a small, a
 * medium and a large size, described as data so that the runner (cmd_bench_suite.c), the
 * report (bench_report.c) and the PyTorch reference script (bench/gpu_reference.py, which reads
 * the JSON's parameters) all see the same cases. */
#ifndef TGL_CLI_BENCH_SUITE_H
#define TGL_CLI_BENCH_SUITE_H
#include "bench_blas.h"
#include "tensorgl.h"

#include <stddef.h>

enum { BENCH_SMALL, BENCH_MEDIUM, BENCH_LARGE, BENCH_SIZES };
enum { BENCH_MAX_PARAMS = 8, BENCH_MAX_BUFS = 5 };

/* How a buffer is filled before timing: uniform f32 in [-1, 1], the same as f16, int32 row ids
 * in [0, range), or those floats quantized to q8_0 / q4_0 (count elements, a multiple of 32;
 * the host copy keeps the floats, which is what OpenBLAS multiplies). */
typedef enum { BENCH_F32, BENCH_F16, BENCH_IDS, BENCH_Q8_0, BENCH_Q4_0 } bench_fill;

typedef struct bench_buf {
    size_t count; /* elements */
    bench_fill fill;
    size_t range; /* BENCH_IDS only */
} bench_buf;

/* What one case needs and does, derived from the op's parameters. */
typedef struct bench_spec {
    char shape[64];     /* human-readable, e.g. "1024x1024x1024" */
    bench_buf bufs[BENCH_MAX_BUFS];
    int n_bufs;
    double flops;       /* the work, when the rate is GFLOP/s ... */
    double bytes;       /* ... else the bytes the op must move, for GB/s */
} bench_spec;

typedef struct bench_op {
    const char *name;   /* what --ops selects, and the JSON's "op" */
    const char *family; /* the chart groups ops by family */
    const char *params; /* names of p[0..], comma-separated, for the JSON */
    size_t sizes[BENCH_SIZES][BENCH_MAX_PARAMS];
    void (*spec)(const size_t *p, bench_spec *s);
    tgl_status (*issue)(tgl_backend *b, const size_t *p, const tgl_ptr *buf);
    /* The same work through OpenBLAS on host copies of the buffers, or NULL where OpenBLAS has
     * no counterpart. Returns 0 when the needed entry point is missing. */
    int (*blas)(const tgl_blas *o, const size_t *p, float *const *buf);
    /* Instead of issue, for the transfers: host holds host arrays of the buffers' sizes. */
    tgl_status (*transfer)(tgl_backend *b, const size_t *p, const tgl_ptr *buf, float *const *host);
} bench_op;

/* The same work as a plain C loop on host copies of the buffers (bench_host.c), for the ops
 * that have one (issue 53's: scatter_add, sort, topk, cumsum, gather, random_normal), else NULL. */
typedef void (*bench_host_fn)(const size_t *p, float *const *buf);
bench_host_fn tgl_bench_host_loop(const char *op);

extern const bench_op tgl_bench_ops[];
extern const size_t tgl_bench_op_count;
extern const char *const tgl_bench_size_names[BENCH_SIZES];

/* One measured row of the table. */
typedef struct bench_result {
    const bench_op *op;
    int size;
    bench_spec spec;
    const char *backend; /* "gl", "cpu", "openblas" or "host" */
    double median, min, max; /* seconds per call */
    int repeats, iters;
    const char *error;   /* non-NULL: the backend could not run it (e.g. unsupported) */
} bench_result;

typedef struct bench_context {
    char renderer[2][512]; /* gl, cpu: what each backend ran on ("" when not run) */
    char version[64];
    char date[32];
    int blas;              /* OpenBLAS was loaded */
} bench_context;

/* The rate of a result in its unit (GFLOP/s or GB/s) and that unit. */
double tgl_bench_rate(const bench_result *r, const char **unit);
/* The table on stdout: every result, with the ratio to the CPU backend, OpenBLAS and the host loops. */
void tgl_bench_print_table(const bench_context *c, const bench_result *r, size_t n);
/* The raw figures as JSON; 0 on success, -1 with errno when the file cannot be written. */
int tgl_bench_write_json(const char *path, const bench_context *c, const bench_result *r, size_t n);

/* Copies n floats of h to dst on b: as they are, or as binary16 when f16 (through a float
 * buffer and tgl_cast_f32_f16, synchronized before the buffer is freed). */
tgl_status tgl_bench_upload(tgl_backend *b, tgl_ptr dst, const float *h, size_t n, int f16);

/* Runs every op of the set once at `size` on b (buffers made, filled, freed), as a program's
 * first use of each kernel does, timing each into seconds[tgl_bench_op_count]; returns how many
 * failed, with the failures on stderr. */
int tgl_bench_first_use(tgl_backend *b, int size, double *seconds);

/* Runs every op of the set once at `size` on b and on ref from the same inputs and compares
 * every buffer (bit-identical, or NMSE within tol), a line per op on out; returns how many
 * failed or disagreed (tensorgl doctor). */
int tgl_bench_check(tgl_backend *b, tgl_backend *ref, int size, double tol, FILE *out);

#endif
