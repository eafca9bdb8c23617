/* tgl_supports: which op families a backend runs, for which element types, answered from the
 * registry (op_registry.h): an op family runs on a dtype where one of its rows takes that dtype
 * and the backend's vtable has the row's slot (an op a backend lacks returns
 * TGL_ERR_UNSUPPORTED from the call, and NONE here), so the two cannot disagree. */
#include "calls.h"

static const char *const op_names[TGL_OP_COUNT] = {
#define OP_NAME(id, name) [TGL_OP_##id] = #name,
    TGL_OP_LIST(OP_NAME)
#undef OP_NAME
};

TGL_API const char *tgl_op_name(tgl_op op)
{
    return (unsigned)op < TGL_OP_COUNT ? op_names[op] : NULL;
}

static const char *const dtype_names[TGL_DTYPE_COUNT] = {
    [TGL_DTYPE_F32] = "f32", [TGL_DTYPE_F16] = "f16",   [TGL_DTYPE_BF16] = "bf16", [TGL_DTYPE_I32] = "i32",
    [TGL_DTYPE_BOOL] = "bool", [TGL_DTYPE_Q8_0] = "q8_0", [TGL_DTYPE_Q4_0] = "q4_0",
};

TGL_API const char *tgl_dtype_name(tgl_dtype dtype)
{
    return (unsigned)dtype < TGL_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

/* 1 when the vtable has the entry point the row's calls reach. */
static int implemented(const tgl__vtable *vt, tgl__fn fn)
{
    switch (fn) {
#define SLOT(id, cname, family, slot, dtypes, cmp, cost, warm) \
    case TGL__FN_##id: return vt->slot != NULL;
        TGL__OPS(SLOT)
#undef SLOT
    default: return 0;
    }
}

TGL_API tgl_support tgl_supports(tgl_backend *b, tgl_op op, tgl_dtype dtype)
{
    if (!b || (unsigned)op >= TGL_OP_COUNT || (unsigned)dtype >= TGL_DTYPE_COUNT)
        return TGL_SUPPORT_NONE;
    for (int fn = 0; fn < TGL__FN_COUNT; fn++) {
        if (tgl__fn_op((tgl__fn)fn) != (int)op || !(tgl__fn_dtypes((tgl__fn)fn) & (1u << dtype)) ||
            !implemented(b->vt, (tgl__fn)fn))
            continue;
        /* Half types and the block formats are stored as such and computed in f32 (or wider);
         * f32, i32 and bool in their own type. */
        return dtype == TGL_DTYPE_F16 || dtype == TGL_DTYPE_BF16 || dtype == TGL_DTYPE_Q8_0 || dtype == TGL_DTYPE_Q4_0
                   ? TGL_SUPPORT_CONVERTED
                   : TGL_SUPPORT_NATIVE;
    }
    return TGL_SUPPORT_NONE;
}
