/* tgt_activate (testing.h): a fused epilogue's activation as the unfused op that computes it. */
#include "testing.h"

#include <stdio.h>

void tgt_activate(tgl_backend *b, tgl_activation act, float slope, tgl_ptr y, size_t n)
{
    static const tgl_unary_op unary[TGL_ACTIVATION_COUNT] = {
        [TGL_ACTIVATION_RELU] = TGL_UNARY_RELU,         [TGL_ACTIVATION_SIGMOID] = TGL_UNARY_SIGMOID,
        [TGL_ACTIVATION_SILU] = TGL_UNARY_SILU,         [TGL_ACTIVATION_GELU] = TGL_UNARY_GELU,
        [TGL_ACTIVATION_GELU_ERF] = TGL_UNARY_GELU_ERF, [TGL_ACTIVATION_TANH] = TGL_UNARY_TANH,
    };
    char expr[96] = "";
    if (act == TGL_ACTIVATION_RELU6)
        snprintf(expr, sizeof expr, "clamp(a, 0, 6)");
    else if (act == TGL_ACTIVATION_LEAKY_RELU)
        snprintf(expr, sizeof expr, "select(a < 0, %.9g * a, a)", (double)slope);
    else if (act == TGL_ACTIVATION_HARDSWISH)
        snprintf(expr, sizeof expr, "a * clamp(a + 3, 0, 6) / 6");
    if (expr[0])
        TGT_OK(b, tgl_map(b, expr, &y, 1, y, n));
    else if (act != TGL_ACTIVATION_NONE)
        TGT_OK(b, tgl_unary(b, unary[act], y, y, n));
}
