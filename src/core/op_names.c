#include "internal.h"

static const char *const unary_names[TGL_UNARY_COUNT] = {
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "square", "sin",
    "cos", "tanh", "sigmoid", "relu", "gelu", "silu", "floor", "ceil", "erf",
    "gelu_erf", "log1p", "expm1", "round", "trunc", "sign", "not", "isnan",
    "isinf", "isfinite",
};
static const char *const binary_names[TGL_BINARY_COUNT] = {
    "add", "sub", "mul", "div", "max", "min", "pow", "atan2",
    "fmod", "remainder", "floor_div", "and", "or", "xor", "shl", "shr",
};

static const char *const reduce_names[TGL_REDUCE_COUNT] = {"sum", "mean", "max", "min", "prod", "any", "all"};

TGL_API const char *tgl_reduce_name(tgl_reduce_op op)
{
    return (unsigned)op < TGL_REDUCE_COUNT ? reduce_names[op] : NULL;
}

TGL_API const char *tgl_unary_name(tgl_unary_op op)
{
    return (unsigned)op < TGL_UNARY_COUNT ? unary_names[op] : NULL;
}

TGL_API const char *tgl_binary_name(tgl_binary_op op)
{
    return (unsigned)op < TGL_BINARY_COUNT ? binary_names[op] : NULL;
}
