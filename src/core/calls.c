/* The registry's calls as data (op_registry.h): names, signatures, the prototype checks, and
 * the replay invoker that turns a tgl__call back into the C call. */
#include "calls.h"

#include <stdio.h>
#include <string.h>

/* A row that disagrees with the public prototype it names fails the build here. */
#define CHECK_PROTOTYPE(id, cname, family, slot, dtypes, cmp, cost, warm)                               \
    _Static_assert(_Generic(&(cname), TGL__FN_TYPE(id): 1, default: 0),                          \
                   #cname ": the prototype in tensorgl.h and its row in op_registry.h disagree"); \
    _Static_assert(sizeof("" TGL__ARGS_##id(TGL__SIG_A, TGL__SIG_E, TGL__SIG_N)) - 1 <=           \
                       TGL__CALL_MAX_ARGS,                                                        \
                   #cname ": more arguments than a tgl__call holds");
TGL__OPS(CHECK_PROTOTYPE)
#undef CHECK_PROTOTYPE

static const struct {
    const char *name, *sig;
    tgl__cmp_family family;
    int op;   /* tgl_op, or TGL__NO_OP */
    int warm; /* tgl_warmup calls it */
    unsigned dtypes; /* TGL__DT mask */
} table[TGL__FN_COUNT] = {
#define ROW(id, cname, family, slot, dtypes, cmp, cost, warm)                                           \
    [TGL__FN_##id] = {#cname, "" TGL__ARGS_##id(TGL__SIG_A, TGL__SIG_E, TGL__SIG_N), TGL__CMP_##cmp, family, \
                       TGL__##warm, dtypes},
    TGL__OPS(ROW)
#undef ROW
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

int tgl__fn_op(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT ? table[fn].op : TGL__NO_OP;
}

unsigned tgl__fn_dtypes(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT ? table[fn].dtypes : 0u;
}

int tgl__fn_warmed(tgl__fn fn)
{
    return (unsigned)fn < TGL__FN_COUNT && table[fn].warm;
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

#define FWD_A(k, name) , s.name
#define FWD_E(t, name) , s.name
#define FWD_N(k, p, count) , s.p, s.count

tgl_status tgl__call_invoke(tgl_backend *b, const tgl__call *c)
{
    switch (c->fn) {
#define INVOKE(id, cname, family, slot, dtypes, cmp, cost, warm)                                        \
    case TGL__FN_##id: {                                                                          \
        tgl__args_##id s;                                                                         \
        tgl__unpack_##id(c, &s);                                                                  \
        return cname(b TGL__ARGS_##id(FWD_A, FWD_E, FWD_N));                                      \
    }
        TGL__OPS(INVOKE)
#undef INVOKE
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

static void append_ints(char *buf, size_t size, size_t *len, const int64_t *v, size_t n)
{
    if (!v) {
        append(buf, size, len, "NULL");
        return;
    }
    append(buf, size, len, "[");
    for (size_t i = 0; i < n && i < TGL__MAX_INTS; i++)
        append(buf, size, len, "%s%lld", i ? "," : "", (long long)v[i]);
    append(buf, size, len, n > TGL__MAX_INTS ? ",...]" : "]");
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
            else if (i == 0 && c->fn == TGL__FN_COMPARE)
                name = tgl_compare_name((tgl_compare_op)a->u);
            if (name)
                append(buf, size, &len, "%s", name);
            else
                append(buf, size, &len, "%lld", (long long)(int64_t)a->u);
            break;
        }
        case 'z': case 'u': append(buf, size, &len, "%llu", (unsigned long long)a->u); break;
        case 'f': append(buf, size, &len, "%.9g", (double)tgl__arg_f32(a)); break;
        case 'd': append(buf, size, &len, "%.17g", tgl__arg_f64(a)); break;
        case 'S':
            append_sizes(buf, size, &len, a->ptr, (size_t)a->u);
            last_count = (size_t)a->u;
            break;
        case 'q': append_sizes(buf, size, &len, a->ptr, last_count); break;
        case 'J':
            append_ints(buf, size, &len, a->ptr, (size_t)a->u);
            last_count = (size_t)a->u;
            break;
        case 'L': append(buf, size, &len, "%llu inputs", (unsigned long long)a->u); break;
        case 'U': append(buf, size, &len, "%llu tensors", (unsigned long long)a->u); break;
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
        case 'P': {
            const tgl_pool2d_desc *d = a->ptr;
            if (d)
                append(buf, size, &len, "{%s, batch %zu, %zu ch, %zux%zu, kernel %zux%zu}",
                       d->kind == TGL_POOL_MAX ? "max" : d->kind == TGL_POOL_AVG ? "avg" : "?", d->batch, d->channels,
                       d->in_h, d->in_w, d->kernel_h, d->kernel_w);
            else
                append(buf, size, &len, "NULL");
            break;
        }
        case 'R': {
            static const char *const modes[TGL_INTERP_MODE_COUNT] = {"nearest", "nearest-exact", "bilinear", "bicubic"};
            const tgl_interpolate_desc *d = a->ptr;
            if (d)
                append(buf, size, &len, "{%s, batch %zu, %zu ch, %zux%zu -> %zux%zu}",
                       (unsigned)d->mode < TGL_INTERP_MODE_COUNT ? modes[d->mode] : "?", d->batch, d->channels, d->in_h,
                       d->in_w, d->out_h, d->out_w);
            else
                append(buf, size, &len, "NULL");
            break;
        }
        case 'N': {
            const tgl_attention_desc *d = a->ptr;
            if (d)
                append(buf, size, &len, "{scale %g, %s, seq_kv %zu, window %zu, softcap %g, alibi %g%s", (double)d->scale,
                       d->causal ? "causal" : "full", d->seq_kv, d->window, (double)d->softcap,
                       (double)d->alibi_max_bias, d->seq_lens ? ", seq_lens}" : "}");
            else
                append(buf, size, &len, "NULL");
            break;
        }
        case 'Y': {
            const tgl_rope_desc *d = a->ptr;
            if (d)
                append(buf, size, &len, "{theta %g, %s, rotary %zu, from %zu, scaling %d x %g%s", (double)d->theta,
                       d->mode == TGL_ROPE_NEOX ? "neox" : d->mode == TGL_ROPE_INTERLEAVED ? "interleaved" : "?",
                       d->rotary_dim, d->pos_offset, (int)d->scaling, (double)d->factor,
                       d->freq_factors ? ", freq_factors}" : "}");
            else
                append(buf, size, &len, "NULL");
            break;
        }
        case 't': case 'T': case 'M': {
            const tgl_tensor *t = a->ptr;
            if (!t) {
                append(buf, size, &len, "NULL");
                break;
            }
            const char *dt = tgl_dtype_name(t->dtype);
            append(buf, size, &len, "{%s ", dt ? dt : "?");
            append_sizes(buf, size, &len, t->shape, t->ndim);
            append(buf, size, &len, " strides [");
            for (size_t k = 0; k < t->ndim && k < TGL_MAX_DIMS; k++)
                append(buf, size, &len, "%s%lld", k ? "," : "", (long long)t->strides[k]);
            append(buf, size, &len, "] at 0x%llx}", (unsigned long long)t->data);
            break;
        }
        case 'D': case 'H': case 'A': append(buf, size, &len, a->ptr ? "host" : "NULL"); break;
        default: append(buf, size, &len, "0x%llx", (unsigned long long)a->u); break; /* device pointers */
        }
    }
    append(buf, size, &len, ")");
}
