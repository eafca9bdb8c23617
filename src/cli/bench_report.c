/* `tensorgl bench` output: the table on stdout and the raw figures as JSON (bench_suite.h). */
#include "bench_suite.h"

#include <stdio.h>
#include <string.h>

double tgl_bench_rate(const bench_result *r, const char **unit)
{
    int by_flops = r->spec.flops > 0;
    if (unit)
        *unit = by_flops ? "GFLOP/s" : "GB/s";
    if (r->error || r->median <= 0)
        return 0;
    return (by_flops ? r->spec.flops : r->spec.bytes) / r->median / 1e9;
}

/* The median time of the same op and size on another backend, or 0. */
static double median_of(const bench_result *r, size_t n, const bench_result *like, const char *backend)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].op == like->op && r[i].size == like->size && !strcmp(r[i].backend, backend) && !r[i].error)
            return r[i].median;
    return 0;
}

static void print_ratio(double ref, const bench_result *r)
{
    if (ref > 0 && r->median > 0)
        printf(" %10.2fx", ref / r->median);
    else
        printf(" %11s", "-");
}

void tgl_bench_print_table(const bench_context *c, const bench_result *r, size_t n)
{
    printf("tensorgl bench %s, %s\n", c->version, c->date);
    if (c->renderer[0][0])
        printf("  gl:       %s\n", c->renderer[0]);
    if (c->renderer[1][0])
        printf("  cpu:      %s\n", c->renderer[1]);
    printf("  openblas: %s\n", c->blas ? "libopenblas.so.0 (all cores), reference for the gemm family"
                                       : "not installed (apt-get install libopenblas0)");
    printf("  host:     plain C loops on one thread (qsort for sort), reference for scatter_add (both kinds), sort, topk, "
           "cumsum, gather, random_normal\n");
    printf("times per call: median of the repeats (min-max); vs x: how many times faster than x\n\n");
    printf("%-24s %-6s %-30s %-8s %10s %21s %16s %11s %11s %11s\n", "op", "size", "shape", "backend", "median ms",
           "min-max ms", "rate", "vs cpu", "vs openblas", "vs host");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        printf("%-24s %-6s %-30s %-8s", x->op->name, tgl_bench_size_names[x->size], x->spec.shape, x->backend);
        if (x->error) {
            printf(" %s\n", x->error);
            continue;
        }
        const char *unit;
        double rate = tgl_bench_rate(x, &unit);
        char range[32];
        snprintf(range, sizeof range, "%.4g-%.4g", x->min * 1e3, x->max * 1e3);
        printf(" %10.4g %21s %8.2f %-7s", x->median * 1e3, range, rate, unit);
        print_ratio(strcmp(x->backend, "cpu") ? median_of(r, n, x, "cpu") : 0, x);
        print_ratio(strcmp(x->backend, "openblas") ? median_of(r, n, x, "openblas") : 0, x);
        print_ratio(strcmp(x->backend, "host") ? median_of(r, n, x, "host") : 0, x);
        printf("\n");
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The op's parameters as an object, named by bench_op.params. */
static void json_params(FILE *f, const bench_result *x)
{
    const char *names = x->op->params;
    const size_t *p = x->op->sizes[x->size];
    fputc('{', f);
    for (int i = 0; *names && i < BENCH_MAX_PARAMS; i++) {
        size_t len = strcspn(names, ",");
        fprintf(f, "%s\"%.*s\": %zu", i ? ", " : "", (int)len, names, p[i]);
        names += len + (names[len] == ',');
    }
    fputc('}', f);
}

int tgl_bench_write_json(const char *path, const bench_context *c, const bench_result *r, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"tool\": \"tensorgl bench\",\n  \"version\": ");
    json_string(f, c->version);
    fprintf(f, ",\n  \"date\": ");
    json_string(f, c->date);
    fprintf(f, ",\n  \"devices\": {\"gl\": ");
    json_string(f, c->renderer[0]);
    fprintf(f, ", \"cpu\": ");
    json_string(f, c->renderer[1]);
    fprintf(f, ", \"openblas\": %s},\n  \"results\": [", c->blas ? "true" : "false");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        const char *unit;
        double rate = tgl_bench_rate(x, &unit);
        fprintf(f, "%s\n    {\"op\": \"%s\", \"family\": \"%s\", \"size\": \"%s\", \"shape\": ", i ? "," : "",
                x->op->name, x->op->family, tgl_bench_size_names[x->size]);
        json_string(f, x->spec.shape);
        fprintf(f, ", \"params\": ");
        json_params(f, x);
        fprintf(f, ", \"backend\": \"%s\", \"flops\": %.17g, \"bytes\": %.17g, \"unit\": \"%s\"", x->backend,
                x->spec.flops, x->spec.bytes, unit);
        if (x->error) {
            fprintf(f, ", \"error\": ");
            json_string(f, x->error);
            fputc('}', f);
        } else {
            fprintf(f, ", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g, \"repeats\": %d, \"iters\": %d, "
                       "\"rate\": %.6g}",
                    x->median, x->min, x->max, x->repeats, x->iters, rate);
        }
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) ? -1 : 0;
}
