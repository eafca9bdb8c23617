/* The call table (calls.h): names, signatures, and the one switch that turns a tgl__call back
 * into the C call. */
#include "calls.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name, *sig;
    tgl__cmp_family family;
} table[TGL__FN_COUNT] = {
#define TGL__CALL_ROW(id, cname, sig, fam) [TGL__FN_##id] = {#cname, sig, TGL__CMP_##fam},
    TGL__CALLS(TGL__CALL_ROW)
#undef TGL__CALL_ROW
};

const char *tgl__fn_name(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT ? table[fn].name : "?";
}

const char *tgl__fn_signature(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT ? table[fn].sig : "";
}

tgl__cmp_family tgl__fn_family(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT ? table[fn].family : TGL__CMP_EXACT;
}

double tgl__cmp_threshold(tgl__cmp_family f)
{
    switch (f) {
    case TGL__CMP_ELEMENTWISE: return 1e-9;
    case TGL__CMP_ACCUMULATE: return 1e-7;
    case TGL__CMP_F16: return 1e-5;
    default: return 0.0;
    }
}

/* Argument accessors for the switch below. */
#define E(i) ((int)(int64_t)c->args[i].u)
#define Z(i) ((size_t)c->args[i].u)
#define F(i) tgl__arg_f32(&c->args[i])
#define P(i) ((tgl_ptr)c->args[i].u)
#define AP(i, type) ((type)c->args[i].ptr)

tgl_status tgl__call_invoke(tgl_backend *b, const tgl__call *c)
{
    switch (c->fn) {
    case TGL__FN_ALLOC: return tgl_alloc(b, Z(0), (tgl_ptr *)(uintptr_t)c->args[1].ptr);
    case TGL__FN_FREE: return tgl_free(b, P(0));
    case TGL__FN_COPY_HTOD: return tgl_copy_htod(b, P(0), c->args[1].ptr, Z(2));
    case TGL__FN_COPY_DTOH: return tgl_copy_dtoh(b, (void *)(uintptr_t)c->args[0].ptr, P(1), Z(2));
    case TGL__FN_COPY_DTOD: return tgl_copy_dtod(b, P(0), P(1), Z(2));
    case TGL__FN_SYNCHRONIZE: return tgl_synchronize(b);
    case TGL__FN_UNARY: return tgl_unary(b, (tgl_unary_op)E(0), P(1), P(2), Z(3));
    case TGL__FN_BINARY: return tgl_binary(b, (tgl_binary_op)E(0), P(1), P(2), P(3), Z(4));
    case TGL__FN_MAP: return tgl_map(b, AP(0, const char *), AP(1, const tgl_ptr *), Z(1), P(2), Z(3));
    case TGL__FN_BINARY_BROADCAST:
        return tgl_binary_broadcast(b, (tgl_binary_op)E(0), P(1), AP(2, const size_t *), Z(2), P(3),
                                    AP(4, const size_t *), Z(4), P(5));
    case TGL__FN_PERMUTE: return tgl_permute(b, P(0), P(1), AP(2, const size_t *), Z(2), AP(3, const size_t *));
    case TGL__FN_REDUCE:
        return tgl_reduce(b, (tgl_reduce_op)E(0), P(1), P(2), AP(3, const size_t *), Z(3), Z(4));
    case TGL__FN_ARGMAX: return tgl_argmax(b, P(0), P(1), AP(2, const size_t *), Z(2), Z(3));
    case TGL__FN_ARGMIN: return tgl_argmin(b, P(0), P(1), AP(2, const size_t *), Z(2), Z(3));
    case TGL__FN_FILL: return tgl_fill(b, P(0), F(1), Z(2));
    case TGL__FN_SCALE_ADD: return tgl_scale_add(b, F(0), P(1), F(2), P(3), Z(4));
    case TGL__FN_CAST_F32_F16: return tgl_cast_f32_f16(b, P(0), P(1), Z(2));
    case TGL__FN_CAST_F16_F32: return tgl_cast_f16_f32(b, P(0), P(1), Z(2));
    case TGL__FN_SOFTMAX: return tgl_softmax(b, P(0), P(1), Z(2), Z(3));
    case TGL__FN_LOG_SOFTMAX: return tgl_log_softmax(b, P(0), P(1), Z(2), Z(3));
    case TGL__FN_RMSNORM: return tgl_rmsnorm(b, P(0), P(1), P(2), Z(3), Z(4), F(5));
    case TGL__FN_LAYERNORM: return tgl_layernorm(b, P(0), P(1), P(2), P(3), Z(4), Z(5), F(6));
    case TGL__FN_GEMM:
        return tgl_gemm(b, (tgl_transpose)E(0), (tgl_transpose)E(1), Z(2), Z(3), Z(4), F(5), P(6), Z(7), P(8),
                        Z(9), F(10), P(11), Z(12));
    case TGL__FN_GEMM_BATCHED:
        return tgl_gemm_batched(b, (tgl_transpose)E(0), (tgl_transpose)E(1), Z(2), Z(3), Z(4), F(5), P(6), Z(7),
                                Z(8), P(9), Z(10), Z(11), F(12), P(13), Z(14), Z(15), Z(16));
    case TGL__FN_GEMM_F16:
        return tgl_gemm_f16(b, (tgl_transpose)E(0), (tgl_transpose)E(1), Z(2), Z(3), Z(4), F(5), P(6), Z(7),
                            P(8), Z(9), F(10), P(11), Z(12));
    case TGL__FN_MATVEC: return tgl_matvec(b, Z(0), Z(1), P(2), P(3), P(4));
    case TGL__FN_ROPE:
        return tgl_rope(b, P(0), P(1), Z(2), Z(3), Z(4), Z(5), Z(6), F(7), (tgl_rope_mode)E(8));
    case TGL__FN_GATHER_ROWS: return tgl_gather_rows(b, P(0), P(1), P(2), Z(3), Z(4), Z(5));
    case TGL__FN_ATTENTION:
        return tgl_attention(b, P(0), P(1), P(2), P(3), Z(4), Z(5), Z(6), Z(7), Z(8), F(9), E(10));
    case TGL__FN_ATTENTION_KV:
        return tgl_attention_kv(b, P(0), P(1), P(2), P(3), Z(4), Z(5), Z(6), Z(7), Z(8), Z(9), F(10), E(11));
    case TGL__FN_CONV2D: return tgl_conv2d(b, AP(0, const tgl_conv2d_desc *), P(1), P(2), P(3), P(4));
    default: return tgl__fail(b, TGL_ERR_INTERNAL, "call %d: not in the call table", (int)c->fn);
    }
}

/* Appends printf output to buf at *len, truncating quietly. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

static void append_sizes(char *buf, size_t size, size_t *len, const size_t *v, size_t n)
{
    if (!v) {
        append(buf, size, len, "NULL");
        return;
    }
    append(buf, size, len, "[");
    for (size_t i = 0; i < n && i < TGL_MAX_DIMS; i++)
        append(buf, size, len, "%s%zu", i ? "," : "", v[i]);
    append(buf, size, len, n > TGL_MAX_DIMS ? ",...]" : "]");
}

void tgl__call_format(const tgl__call *c, char *buf, size_t size)
{
    const char *sig = tgl__fn_signature(c->fn);
    size_t len = 0, last_count = 0;
    buf[0] = '\0';
    append(buf, size, &len, "%s(", tgl__fn_name(c->fn));
    for (size_t i = 0; sig[i]; i++) {
        const tgl__arg *a = &c->args[i];
        if (i)
            append(buf, size, &len, ", ");
        switch (sig[i]) {
        case 'e': {
            /* The op enums by name, as the program wrote them. */
            const char *name = NULL;
            if (i == 0 && (c->fn == TGL__FN_UNARY))
                name = tgl_unary_name((tgl_unary_op)a->u);
            else if (i == 0 && (c->fn == TGL__FN_BINARY || c->fn == TGL__FN_BINARY_BROADCAST))
                name = tgl_binary_name((tgl_binary_op)a->u);
            else if (i == 0 && c->fn == TGL__FN_REDUCE)
                name = tgl_reduce_name((tgl_reduce_op)a->u);
            if (name)
                append(buf, size, &len, "%s", name);
            else
                append(buf, size, &len, "%lld", (long long)(int64_t)a->u);
            break;
        }
        case 'z': append(buf, size, &len, "%llu", (unsigned long long)a->u); break;
        case 'f': append(buf, size, &len, "%.9g", (double)tgl__arg_f32(a)); break;
        case 'S':
            append_sizes(buf, size, &len, a->ptr, (size_t)a->u);
            last_count = (size_t)a->u;
            break;
        case 'q': append_sizes(buf, size, &len, a->ptr, last_count); break;
        case 'L': append(buf, size, &len, "%llu inputs", (unsigned long long)a->u); break;
        case 's': append(buf, size, &len, a->ptr ? "\"%.60s\"" : "NULL", (const char *)a->ptr); break;
        case 'c': {
            const tgl_conv2d_desc *d = a->ptr;
            if (d)
                append(buf, size, &len, "{batch %zu, %zu->%zu ch, %zux%zu, kernel %zux%zu}", d->batch,
                       d->in_channels, d->out_channels, d->in_h, d->in_w, d->kernel_h, d->kernel_w);
            else
                append(buf, size, &len, "NULL");
            break;
        }
        case 'D': case 'H': case 'A': append(buf, size, &len, a->ptr ? "host" : "NULL"); break;
        default: append(buf, size, &len, "0x%llx", (unsigned long long)a->u); break; /* device pointers */
        }
    }
    append(buf, size, &len, ")");
}

void tgl__call_cost(const tgl__call *c, double *flops, double *bytes)
{
    double f = 0, by = 0;
    switch (c->fn) {
    case TGL__FN_COPY_HTOD: case TGL__FN_COPY_DTOH: by = (double)Z(2); break;
    case TGL__FN_COPY_DTOD: by = 2.0 * (double)Z(2); break;
    case TGL__FN_UNARY: f = (double)Z(3); by = 8.0 * (double)Z(3); break;
    case TGL__FN_BINARY: f = (double)Z(4); by = 12.0 * (double)Z(4); break;
    case TGL__FN_MAP: f = (double)Z(3); by = 4.0 * (double)(Z(1) + 1) * (double)Z(3); break;
    case TGL__FN_FILL: by = 4.0 * (double)Z(2); break;
    case TGL__FN_SCALE_ADD: f = 3.0 * (double)Z(4); by = 12.0 * (double)Z(4); break;
    case TGL__FN_CAST_F32_F16: case TGL__FN_CAST_F16_F32: by = 6.0 * (double)Z(2); break;
    case TGL__FN_SOFTMAX: case TGL__FN_LOG_SOFTMAX: {
        double n = (double)Z(2) * (double)Z(3);
        f = 4.0 * n;
        by = 8.0 * n;
        break;
    }
    case TGL__FN_RMSNORM: case TGL__FN_LAYERNORM: {
        double n = (double)Z(c->fn == TGL__FN_RMSNORM ? 3 : 4) * (double)Z(c->fn == TGL__FN_RMSNORM ? 4 : 5);
        f = 4.0 * n;
        by = 8.0 * n;
        break;
    }
    case TGL__FN_GEMM: case TGL__FN_GEMM_F16: case TGL__FN_GEMM_BATCHED: {
        double batch = c->fn == TGL__FN_GEMM_BATCHED ? (double)Z(16) : 1.0;
        double m = (double)Z(2), n = (double)Z(3), k = (double)Z(4), es = c->fn == TGL__FN_GEMM_F16 ? 2.0 : 4.0;
        f = 2.0 * m * n * k * batch;
        by = es * (m * k + k * n + m * n) * batch;
        break;
    }
    case TGL__FN_MATVEC:
        f = 2.0 * (double)Z(0) * (double)Z(1);
        by = 4.0 * ((double)Z(0) * (double)Z(1) + (double)Z(0) + (double)Z(1));
        break;
    case TGL__FN_ROPE: {
        double n = (double)Z(2) * (double)Z(3) * (double)Z(4) * (double)Z(5);
        f = 3.0 * n;
        by = 8.0 * n;
        break;
    }
    case TGL__FN_GATHER_ROWS: by = 8.0 * (double)Z(4) * (double)Z(5) + 4.0 * (double)Z(5); break;
    case TGL__FN_ATTENTION: case TGL__FN_ATTENTION_KV: {
        int kv = c->fn == TGL__FN_ATTENTION_KV;
        double bh = (double)Z(4) * (double)Z(5), sq = (double)Z(6), sk = (double)Z(7);
        double d = (double)Z(kv ? 9 : 8);
        f = 4.0 * bh * sq * sk * d; /* q k^T and p v; causal masks are not discounted */
        by = 4.0 * bh * d * (2.0 * sq + 2.0 * sk);
        break;
    }
    case TGL__FN_CONV2D: {
        const tgl_conv2d_desc *d = AP(0, const tgl_conv2d_desc *);
        size_t oh, ow;
        if (d && tgl_conv2d_output_size(d, &oh, &ow) == TGL_OK) {
            double g = d->groups ? (double)d->groups : 1.0;
            f = 2.0 * (double)d->batch * (double)d->out_channels * (double)oh * (double)ow *
                ((double)d->in_channels / g) * (double)d->kernel_h * (double)d->kernel_w;
            by = 4.0 * ((double)d->batch * (double)d->in_channels * (double)d->in_h * (double)d->in_w +
                        (double)d->batch * (double)d->out_channels * (double)oh * (double)ow);
        }
        break;
    }
    case TGL__FN_REDUCE: case TGL__FN_ARGMAX: case TGL__FN_ARGMIN: case TGL__FN_BINARY_BROADCAST:
    case TGL__FN_PERMUTE: {
        /* Element count of the (first) shape argument. */
        int si = c->fn == TGL__FN_REDUCE ? 3 : 2;
        const size_t *shape = AP(si, const size_t *);
        double n = shape ? 1.0 : 0.0;
        for (size_t i = 0; shape && i < Z(si) && i < TGL_MAX_DIMS; i++)
            n *= (double)shape[i];
        f = c->fn == TGL__FN_PERMUTE ? 0.0 : n;
        by = (c->fn == TGL__FN_PERMUTE || c->fn == TGL__FN_BINARY_BROADCAST ? 8.0 : 4.0) * n;
        break;
    }
    default: break;
    }
    *flops = f;
    *bytes = by;
}
