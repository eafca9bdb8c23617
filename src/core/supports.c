/* tgl_supports: which op families a backend runs, for which element types. The answer comes
 * from the backend's own vtable (an op it lacks returns TGL_ERR_UNSUPPORTED from the call, and
 * NONE here), so the two cannot disagree. */
#include "internal.h"

static const char *const op_names[TGL_OP_COUNT] = {
    "unary", "binary", "binary_broadcast", "permute", "fill", "scale_add", "map",
    "cast", "reduce", "arg_reduce", "softmax", "log_softmax", "rmsnorm", "layernorm",
    "rope", "gather_rows", "gemm", "matvec", "attention", "conv2d",
};

TGL_API const char *tgl_op_name(tgl_op op)
{
    return (unsigned)op < TGL_OP_COUNT ? op_names[op] : NULL;
}

TGL_API const char *tgl_dtype_name(tgl_dtype dtype)
{
    return dtype == TGL_DTYPE_F32 ? "f32" : dtype == TGL_DTYPE_F16 ? "f16" : NULL;
}

/* 1 when the vtable has the entry point op needs. */
static int implemented(const tgl__vtable *vt, tgl_op op)
{
    switch (op) {
    case TGL_OP_UNARY: return vt->unary != NULL;
    case TGL_OP_BINARY: return vt->binary != NULL;
    case TGL_OP_BINARY_BROADCAST:
    case TGL_OP_PERMUTE: return vt->strided != NULL;
    case TGL_OP_FILL: return vt->fill != NULL;
    case TGL_OP_SCALE_ADD: return vt->scale_add != NULL;
    case TGL_OP_MAP: return vt->map != NULL;
    case TGL_OP_CAST: return vt->cast != NULL;
    case TGL_OP_REDUCE: return vt->reduce != NULL;
    case TGL_OP_ARG_REDUCE: return vt->arg_reduce != NULL;
    case TGL_OP_SOFTMAX:
    case TGL_OP_LOG_SOFTMAX:
    case TGL_OP_RMSNORM:
    case TGL_OP_LAYERNORM: return vt->rows != NULL;
    case TGL_OP_ROPE: return vt->rope != NULL;
    case TGL_OP_GATHER_ROWS: return vt->gather_rows != NULL;
    case TGL_OP_GEMM: return vt->gemm != NULL;
    case TGL_OP_MATVEC: return vt->matvec != NULL;
    case TGL_OP_ATTENTION: return vt->attention != NULL;
    case TGL_OP_CONV2D: return vt->conv2d != NULL;
    case TGL_OP_COUNT: break;
    }
    return 0;
}

TGL_API tgl_support tgl_supports(tgl_backend *b, tgl_op op, tgl_dtype dtype)
{
    if (!b || (unsigned)op >= TGL_OP_COUNT || (unsigned)dtype >= TGL_DTYPE_COUNT || !implemented(b->vt, op))
        return TGL_SUPPORT_NONE;
    if (dtype == TGL_DTYPE_F32)
        return TGL_SUPPORT_NATIVE;
    /* f16: stored as IEEE binary16, computed in f32 (GL: unpackHalf2x16; CPU: in double). */
    return op == TGL_OP_GEMM || op == TGL_OP_CAST ? TGL_SUPPORT_CONVERTED : TGL_SUPPORT_NONE;
}
