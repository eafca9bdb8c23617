/* The traced and profiled public calls as data: the ids, names and signatures the registry
 * (op_registry.h) generates, the captured form of a call, and what the hook, the trace writer,
 * the trace reader, replay and the profiler do with one. */
#ifndef TGL_CORE_CALLS_H
#define TGL_CORE_CALLS_H

#include "internal.h"
#include "op_registry.h"

/* How a replay compares what a call wrote with what the trace recorded. */
typedef enum {
    TGL__CMP_EXACT,       /* copies, fills, casts, gathers, permutes, indices: bit for bit */
    TGL__CMP_ELEMENTWISE, /* one rounding per element plus libm differences: NMSE <= 1e-9 */
    TGL__CMP_ACCUMULATE,  /* sums over many terms (reductions, norms, gemm, attention): 1e-7 */
    TGL__CMP_F16          /* f16 results: 1e-5 */
} tgl__cmp_family;

typedef enum {
#define TGL__CALL_ID(id, cname, family, slot, dtypes, cmp, cost, warm) TGL__FN_##id,
    TGL__OPS(TGL__CALL_ID)
#undef TGL__CALL_ID
    TGL__FN_COUNT
} tgl__fn;

#define TGL__CALL_MAX_ARGS 20
#define TGL__CONV2D_FIELDS 14 /* size_t members of tgl_conv2d_desc */
#define TGL__POOL2D_FIELDS 15 /* tgl_pool2d_desc: 12 size_t, kind, ceil_mode, count_include_pad */
#define TGL__INTERP_FIELDS 10 /* tgl_interpolate_desc: 6 size_t, mode, align_corners, 2 doubles */
#define TGL__ROPE_FIELDS 9 /* tgl_rope_desc: theta, mode, rotary_dim, pos_offset, scaling, 3 floats, original_context
                           (freq_factors follow as a counted list) */
#define TGL__ATTN_FIELDS 6 /* tgl_attention_desc: scale, causal, seq_kv, window, softcap, alibi_max_bias (seq_lens
                           follow as a counted list) */
#define TGL__MAX_INTS (2 * TGL_MAX_DIMS) /* values a J argument's record holds (tgl_pad's widths) */

/* One argument in native form: what the C call takes. Arrays, strings, descriptors and host
 * buffers point at the caller's memory (tracing) or at the reader's copy (replay). */
typedef struct tgl__arg {
    uint64_t u;      /* e (as int64), z, f (float bits), d (double bits), device pointers, counts of S, J, L, U */
    const void *ptr; /* S, q, J, L, U, s, c, t, T, D, H, A */
} tgl__arg;

typedef struct tgl__call {
    tgl__fn fn;
    tgl__arg args[TGL__CALL_MAX_ARGS];
} tgl__call;

static inline float tgl__arg_f32(const tgl__arg *a)
{
    union { uint32_t u; float f; } v = {.u = (uint32_t)a->u};
    return v.f;
}

static inline uint64_t tgl__f32_bits(float f)
{
    union { float f; uint32_t u; } v = {.f = f};
    return v.u;
}

static inline double tgl__arg_f64(const tgl__arg *a)
{
    union { uint64_t u; double d; } v = {.u = a->u};
    return v.d;
}

static inline uint64_t tgl__f64_bits(double d)
{
    union { double d; uint64_t u; } v = {.d = d};
    return v.u;
}

/* Storing an argument of each kind into a tgl__arg, and reading it back (hook, replay). */
#define TGL__PUT_z(a, v) ((a)->u = (uint64_t)(v))
#define TGL__PUT_u TGL__PUT_z
#define TGL__PUT_f(a, v) ((a)->u = tgl__f32_bits(v))
#define TGL__PUT_d(a, v) ((a)->u = tgl__f64_bits(v))
#define TGL__PUT_p(a, v) ((a)->u = (uint64_t)(v))
#define TGL__PUT_i TGL__PUT_p
#define TGL__PUT_o TGL__PUT_p
#define TGL__PUT_O TGL__PUT_p
#define TGL__PUT_I TGL__PUT_p
#define TGL__PUT_b TGL__PUT_p
#define TGL__PUT_x TGL__PUT_p
#define TGL__PUT_X TGL__PUT_p
#define TGL__PUT_q(a, v) ((a)->ptr = (v))
#define TGL__PUT_s TGL__PUT_q
#define TGL__PUT_c TGL__PUT_q
#define TGL__PUT_P TGL__PUT_q
#define TGL__PUT_R TGL__PUT_q
#define TGL__PUT_Y TGL__PUT_q
#define TGL__PUT_N TGL__PUT_q
#define TGL__PUT_t TGL__PUT_q
#define TGL__PUT_T TGL__PUT_q
#define TGL__PUT_M TGL__PUT_q
#define TGL__PUT_D TGL__PUT_q
#define TGL__PUT_H TGL__PUT_q
#define TGL__PUT_A TGL__PUT_q
#define TGL__GET_z(a) ((size_t)(a)->u)
#define TGL__GET_u(a) ((a)->u)
#define TGL__GET_f(a) tgl__arg_f32(a)
#define TGL__GET_d(a) tgl__arg_f64(a)
#define TGL__GET_p(a) ((tgl_ptr)(a)->u)
#define TGL__GET_i TGL__GET_p
#define TGL__GET_o TGL__GET_p
#define TGL__GET_O TGL__GET_p
#define TGL__GET_I TGL__GET_p
#define TGL__GET_b TGL__GET_p
#define TGL__GET_x TGL__GET_p
#define TGL__GET_X TGL__GET_p
#define TGL__GET_q(a) ((const size_t *)(a)->ptr)
#define TGL__GET_s(a) ((const char *)(a)->ptr)
#define TGL__GET_c(a) ((const tgl_conv2d_desc *)(a)->ptr)
#define TGL__GET_P(a) ((const tgl_pool2d_desc *)(a)->ptr)
#define TGL__GET_R(a) ((const tgl_interpolate_desc *)(a)->ptr)
#define TGL__GET_Y(a) ((const tgl_rope_desc *)(a)->ptr)
#define TGL__GET_N(a) ((const tgl_attention_desc *)(a)->ptr)
#define TGL__GET_t(a) ((const tgl_tensor *)(a)->ptr)
#define TGL__GET_T TGL__GET_t
#define TGL__GET_M TGL__GET_t
#define TGL__GET_D(a) ((a)->ptr)
#define TGL__GET_H(a) ((void *)(uintptr_t)(a)->ptr)   /* the caller's own buffer: writable */
#define TGL__GET_A(a) ((tgl_ptr *)(uintptr_t)(a)->ptr)

/* Each row's arguments as a struct, tgl__args_<ID> (the cost models read them). */
#define TGL__ARGS_STRUCT(id, cname, family, slot, dtypes, cmp, cost, warm)                  \
    typedef struct tgl__args_##id {                                                   \
        char none_; /* a struct needs a member; synchronize has no argument */       \
        TGL__ARGS_##id(TGL__FIELD_A, TGL__FIELD_E, TGL__FIELD_N)                      \
    } tgl__args_##id;
TGL__OPS(TGL__ARGS_STRUCT)
#undef TGL__ARGS_STRUCT

#define TGL__UNPACK_A(k, name) s->name = TGL__GET_##k(a); a++;
#define TGL__UNPACK_E(t, name) s->name = (t)(int64_t)a->u; a++;
#define TGL__UNPACK_N(k, p, count) s->p = (TGL__T_##k)a->ptr; s->count = (size_t)a->u; a++;
/* tgl__unpack_<ID>(call, struct): a captured call's arguments into the row's struct. */
#define TGL__UNPACK_FN(id, cname, family, slot, dtypes, cmp, cost, warm)                            \
    static inline void tgl__unpack_##id(const tgl__call *c, tgl__args_##id *s)                \
    {                                                                                         \
        const tgl__arg *a = c->args;                                                          \
        s->none_ = 0;                                                                         \
        TGL__ARGS_##id(TGL__UNPACK_A, TGL__UNPACK_E, TGL__UNPACK_N)(void) a;                  \
    }
TGL__OPS(TGL__UNPACK_FN)
#undef TGL__UNPACK_FN

/* Checks out and the inputs (in order, named) of the row's descriptor element-wise op into e,
 * whose op and nin the caller set (api_tensor_ewise.c); *empty is set when out has no element
 * (nothing past the shapes checked then). */
tgl_status tgl__check_tew(tgl_backend *b, tgl__fn row, const tgl_tensor *out, const char *out_name,
                          const tgl_tensor *const *in, const char *const *names, tgl__tew *e, int *empty);
/* Every element of a non-empty out and of each input inside its allocation, out reaching none
 * twice and sharing no byte with an input (named in_name, or in_name[k] when listed): what an
 * op that writes out in pieces checks before it writes any. */
tgl_status tgl__check_apart(tgl_backend *b, const char *fn, const tgl_tensor *inputs, size_t n_inputs,
                            const char *in_name, int listed, const tgl_tensor *out);
/* value as one element of dtype dt (low bits), by tgl_fill_t's rules. */
uint32_t tgl__fill_bits(tgl_dtype dt, double value);
/* Runs a checked e on b's backend (fn names the op where the backend lacks the slot). */
tgl_status tgl__run_tew(tgl_backend *b, const tgl__tew *e, const char *fn);
const char *tgl__fn_name(tgl__fn fn);
const char *tgl__fn_signature(tgl__fn fn);
tgl__cmp_family tgl__fn_family(tgl__fn fn);
/* The op family (tgl_op) of fn's row, or TGL__NO_OP for calls that are not ops. */
int tgl__fn_op(tgl__fn fn);
/* The element types fn's row takes (a TGL__DT mask): tgl_supports answers from it, and a
 * descriptor op refuses any other (tgl__tensor_shape). */
unsigned tgl__fn_dtypes(tgl__fn fn);
/* 1 when tgl_warmup calls fn (its row says WARM). */
int tgl__fn_warmed(tgl__fn fn);
/* The NMSE a replay accepts for a family (0 for exact). */
double tgl__cmp_threshold(tgl__cmp_family f);

/* Makes the call `c` describes on b and returns its status. */
tgl_status tgl__call_invoke(tgl_backend *b, const tgl__call *c);

/* Writes "name(arg, arg, ...)" into buf (device pointers as given, arrays in brackets). */
void tgl__call_format(const tgl__call *c, char *buf, size_t size);

/* Estimated work of a call for the profiler: floating-point operations and bytes moved
 * (op_cost.c, the rows' cost models). */
void tgl__call_cost(const tgl__call *c, double *flops, double *bytes);

#endif
