/* Cutting an expression into stages for a device whose kernels bind few storage blocks (ES 3.1
 * guarantees 4: three inputs and the output). A stage computes one subtree into a temporary;
 * later stages read it as an input. Every node still computes in its own type from the same
 * operands, and a temporary holds a node's value in that type (f32 or i32), so the result is the
 * one a single kernel gives. */
#include "expr.h"

#include <string.h>

#define LEAF_TEMP 8 /* leaf ids: inputs 0..7, then stage s as LEAF_TEMP + s */

/* A node's distinct leaves, or the first cap + 1 of them (enough to know it does not fit). */
typedef struct leaf_set {
    int n;
    uint16_t id[TGL_EXPR_MAX_INPUTS + 1];
} leaf_set;

typedef struct splitter {
    const tgl_expr *e;
    int cap;
    int16_t stage_of[TGL_EXPR_MAX_NODES]; /* node -> the stage that computes it, or -1 */
    int n_stages;
    leaf_set set[TGL_EXPR_MAX_NODES];
} splitter;

static int arity(const tgl_expr_node *n)
{
    switch (n->kind) {
    case TGL_EXPR_NUMBER:
    case TGL_EXPR_INPUT: return 0;
    case TGL_EXPR_UNARY: return 1;
    case TGL_EXPR_BINARY:
    case TGL_EXPR_COMPARE: return 2;
    case TGL_EXPR_CLAMP:
    case TGL_EXPR_SELECT: return 3;
    }
    return 0;
}

static void add_leaf(leaf_set *s, uint16_t id, int cap)
{
    for (int i = 0; i < s->n; i++)
        if (s->id[i] == id)
            return;
    if (s->n <= cap)
        s->id[s->n++] = id;
}

/* Fills set[] for node k's subtree, a computed node standing for its stage's temporary. */
static void leaves(splitter *sp, uint16_t k, int top)
{
    const tgl_expr_node *n = &sp->e->node[k];
    leaf_set *s = &sp->set[k];
    s->n = 0;
    if (!top && sp->stage_of[k] >= 0) {
        add_leaf(s, (uint16_t)(LEAF_TEMP + sp->stage_of[k]), sp->cap);
        return;
    }
    if (n->kind == TGL_EXPR_INPUT)
        add_leaf(s, (uint16_t)n->op, sp->cap);
    for (int a = 0; a < arity(n); a++) {
        leaves(sp, n->arg[a], 0);
        const leaf_set *c = &sp->set[n->arg[a]];
        for (int i = 0; i < c->n; i++)
            add_leaf(s, c->id[i], sp->cap);
    }
}

/* Marks, under node k, the children of every lowest node that does not fit (its children all
 * do): each child that is an operation over two or more leaves becomes a stage. The node then
 * reads at most its arity (3 <= cap) leaves. Returns whether it marked any. */
static int cut(splitter *sp, uint16_t k, int top)
{
    const tgl_expr_node *n = &sp->e->node[k];
    if ((!top && sp->stage_of[k] >= 0) || sp->set[k].n <= sp->cap)
        return 0;
    int marked = 0, lowest = 1;
    for (int a = 0; a < arity(n); a++)
        if (sp->set[n->arg[a]].n > sp->cap && !(sp->stage_of[n->arg[a]] >= 0))
            lowest = 0;
    if (!lowest) {
        for (int a = 0; a < arity(n); a++)
            marked |= cut(sp, n->arg[a], 0);
        return marked;
    }
    for (int a = 0; a < arity(n); a++) {
        uint16_t c = n->arg[a];
        if (sp->stage_of[c] < 0 && arity(&sp->e->node[c]) > 0 && sp->set[c].n >= 2) {
            sp->stage_of[c] = (int16_t)sp->n_stages++;
            marked = 1;
        }
    }
    return marked;
}

/* Lists the stages under node k depth first, so each comes after the stages it reads; reader[s]
 * is the node of the stage that reads stage s (the nearest computed node above it, else the root). */
static void list_stages(const splitter *sp, uint16_t k, int top, uint16_t enclosing, tgl_expr_plan *p,
                        uint16_t *reader)
{
    const tgl_expr_node *n = &sp->e->node[k];
    int computed = !top && sp->stage_of[k] >= 0;
    for (int a = 0; a < arity(n); a++)
        list_stages(sp, n->arg[a], 0, computed ? k : enclosing, p, reader);
    if (computed) {
        reader[p->n_stages] = enclosing;
        p->stage_at[k] = (int16_t)p->n_stages;
        p->root[p->n_stages++] = k;
    }
}

int tgl_expr_split(const tgl_expr *e, int cap, tgl_expr_plan *p)
{
    splitter *sp = &(splitter){0};
    memset(p, 0, sizeof *p);
    if (cap < 3 || cap > TGL_EXPR_MAX_INPUTS || !e->count || e->root >= e->count)
        return 0;
    sp->e = e;
    sp->cap = cap;
    for (size_t k = 0; k < TGL_EXPR_MAX_NODES; k++)
        sp->stage_of[k] = p->stage_at[k] = -1;
    for (;;) {
        leaves(sp, e->root, 1);
        if (sp->set[e->root].n <= cap)
            break;
        if (!cut(sp, e->root, 1))
            return 0; /* not with cap >= 3: a lowest node that does not fit has a child to cut */
    }
    uint16_t reader[TGL_EXPR_MAX_NODES];
    list_stages(sp, e->root, 1, e->root, p, reader);
    /* Slots as the stages run: a stage's own first (it must not write what it reads), then those
     * of the stages it read are free. */
    uint8_t busy[TGL_EXPR_MAX_NODES] = {0};
    for (int s = 0; s < p->n_stages; s++) {
        int slot = 0;
        while (busy[slot])
            slot++;
        busy[slot] = 1;
        p->slot[s] = (uint8_t)slot;
        if (slot + 1 > p->n_slots)
            p->n_slots = slot + 1;
        for (int r = 0; r < s; r++)
            if (reader[r] == p->root[s])
                busy[p->slot[r]] = 0;
    }
    p->root[p->n_stages++] = e->root; /* the last: the root, into the call's out */
    return 1;
}

/* Copies node k's subtree into out (children first, as the parser orders nodes); a node another
 * stage computed becomes an input leaf. Returns the new node's index, or -1 past the bounds. */
static int copy_tree(const tgl_expr *e, const tgl_expr_plan *p, uint16_t k, int top, tgl_expr *out, int *src,
                     int *n_src)
{
    const tgl_expr_node *n = &e->node[k];
    tgl_expr_node c = *n;
    int is_leaf = 1, leaf = 0; /* the source a leaf reads: >= 0 an input, < 0 a slot */
    if (!top && p->stage_at[k] >= 0)
        leaf = -1 - (int)p->slot[p->stage_at[k]];
    else if (n->kind == TGL_EXPR_INPUT)
        leaf = n->op;
    else
        is_leaf = 0;
    if (is_leaf) {
        int i = 0;
        while (i < *n_src && src[i] != leaf)
            i++;
        if (i == *n_src) {
            if (*n_src >= TGL_EXPR_MAX_INPUTS)
                return -1;
            src[(*n_src)++] = leaf;
        }
        c = (tgl_expr_node){.kind = TGL_EXPR_INPUT, .op = i};
        out->inputs_used |= 1u << i;
    } else {
        for (int a = 0; a < arity(n); a++) {
            int child = copy_tree(e, p, n->arg[a], 0, out, src, n_src);
            if (child < 0)
                return -1;
            c.arg[a] = (uint16_t)child;
        }
    }
    if (out->count >= TGL_EXPR_MAX_NODES)
        return -1;
    out->node[out->count] = c;
    return (int)out->count++;
}

int tgl_expr_stage(const tgl_expr *e, const tgl_expr_plan *p, int s, tgl_expr *out, int *src, int *n_src)
{
    out->count = 0;
    out->inputs_used = 0;
    *n_src = 0;
    if (s < 0 || s >= p->n_stages)
        return 0;
    int root = copy_tree(e, p, p->root[s], 1, out, src, n_src);
    if (root < 0)
        return 0;
    out->root = (uint16_t)root;
    return 1;
}
