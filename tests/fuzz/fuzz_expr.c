/* libFuzzer harness: the tgl_map expression parser on arbitrary bytes. A string that parses
 * must give a well-formed tree (every child index inside the tree, inputs_used matching the
 * input nodes) that the CPU backend evaluates; one that does not must give a message, and
 * tgl_map must reject it with TGL_ERR_INVALID_ARGUMENT before touching its output. */
#include "core/expr.h"
#include "tensorgl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static tgl_backend *cpu;
static tgl_ptr inputs[TGL_EXPR_MAX_INPUTS], out;

static void setup(void)
{
    tgl_options o = {.kind = TGL_BACKEND_CPU};
    if (tgl_open(&o, &cpu))
        abort();
    const float x[4] = {0.5f, -1.25f, 3.0f, 0.0f};
    for (int k = 0; k < TGL_EXPR_MAX_INPUTS; k++)
        if (tgl_alloc(cpu, sizeof x, &inputs[k]) || tgl_copy_htod(cpu, inputs[k], x, sizeof x))
            abort();
    if (tgl_alloc(cpu, sizeof x, &out))
        abort();
}

static void check_tree(const tgl_expr *e)
{
    if (e->count == 0 || e->count > TGL_EXPR_MAX_NODES || e->root >= e->count)
        abort();
    unsigned used = 0;
    for (size_t i = 0; i < e->count; i++) {
        const tgl_expr_node *n = &e->node[i];
        int args = n->kind == TGL_EXPR_UNARY ? 1 : n->kind == TGL_EXPR_BINARY ? 2
                 : n->kind == TGL_EXPR_CLAMP || n->kind == TGL_EXPR_SELECT ? 3 : 0;
        for (int k = 0; k < args; k++)
            if (n->arg[k] >= e->count)
                abort();
        if (n->kind == TGL_EXPR_INPUT) {
            if (n->op < 0 || n->op >= TGL_EXPR_MAX_INPUTS)
                abort();
            used |= 1u << n->op;
        }
    }
    if (used != e->inputs_used)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cpu)
        setup();
    static char text[TGL_EXPR_MAX_LEN + 64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    static tgl_expr e;
    char err[256] = "";
    int ok = tgl_expr_parse(text, &e, err, sizeof err);
    tgl_status st = tgl_map(cpu, text, inputs, TGL_EXPR_MAX_INPUTS, out, 4);
    if (ok) {
        check_tree(&e);
        if (st != TGL_OK)
            abort();
    } else if (!err[0] || st != TGL_ERR_INVALID_ARGUMENT) {
        abort();
    }
    return 0;
}
