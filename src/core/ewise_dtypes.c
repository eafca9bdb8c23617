/* Which dtypes each unary and binary op takes in tgl_unary_t and tgl_binary_t: float ops take
 * the float dtypes (computed in f32), the integer ops i32, the logical ops bool. */
#include "internal.h"
#include "op_registry.h"

#define FLOATS TGL__DT_FLOATS
#define I32 TGL__DT(I32)
#define BOOL TGL__DT(BOOL)

unsigned tgl__unary_dtypes(tgl_unary_op op)
{
    switch (op) {
    case TGL_UNARY_NEG: case TGL_UNARY_ABS: case TGL_UNARY_SQUARE: case TGL_UNARY_SIGN:
        return FLOATS | I32;
    case TGL_UNARY_NOT: return I32 | BOOL;
    case TGL_UNARY_EXP: case TGL_UNARY_LOG: case TGL_UNARY_SQRT: case TGL_UNARY_RSQRT: case TGL_UNARY_RECIP:
    case TGL_UNARY_SIN: case TGL_UNARY_COS: case TGL_UNARY_TANH: case TGL_UNARY_SIGMOID: case TGL_UNARY_RELU:
    case TGL_UNARY_GELU: case TGL_UNARY_SILU: case TGL_UNARY_FLOOR: case TGL_UNARY_CEIL: case TGL_UNARY_ERF:
    case TGL_UNARY_GELU_ERF: case TGL_UNARY_LOG1P: case TGL_UNARY_EXPM1: case TGL_UNARY_ROUND:
    case TGL_UNARY_TRUNC: case TGL_UNARY_ISNAN: case TGL_UNARY_ISINF: case TGL_UNARY_ISFINITE:
        return FLOATS;
    }
    return 0;
}

int tgl__unary_bool_out(tgl_unary_op op)
{
    return op == TGL_UNARY_ISNAN || op == TGL_UNARY_ISINF || op == TGL_UNARY_ISFINITE;
}

unsigned tgl__binary_dtypes(tgl_binary_op op)
{
    switch (op) {
    case TGL_BINARY_ADD: case TGL_BINARY_SUB: case TGL_BINARY_MUL: case TGL_BINARY_MAX: case TGL_BINARY_MIN:
    case TGL_BINARY_REMAINDER:
        return FLOATS | I32;
    case TGL_BINARY_DIV: case TGL_BINARY_POW: case TGL_BINARY_ATAN2: case TGL_BINARY_FMOD: return FLOATS;
    case TGL_BINARY_FLOOR_DIV: case TGL_BINARY_SHL: case TGL_BINARY_SHR: return I32;
    case TGL_BINARY_AND: case TGL_BINARY_OR: case TGL_BINARY_XOR: return I32 | BOOL;
    }
    return 0;
}
