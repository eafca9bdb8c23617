/* Fused element-wise expressions (tgl_map): the parsed tree shared by the backends.
 *
 * Grammar (whitespace anywhere between tokens):
 *   expr    := sum (CMP sum)?            (a comparison: 1 where it holds, else 0; no chains)
 *   CMP     := '==' | '!=' | '<' | '<=' | '>' | '>='
 *   sum     := term (('+' | '-') term)*
 *   term    := factor (('*' | '/') factor)*
 *   factor  := '-' factor | primary
 *   primary := NUMBER | INPUT | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 *   INPUT   := 'a' .. 'h'  (the inputs, in order)
 *   NAME    := a tgl_unary_op name (1 argument), a tgl_binary_op name (2), clamp (3: x, lo,
 *              hi = min(max(x, lo), hi)) or select (3: c, x, y = c != 0 ? x : y)
 *   NUMBER  := decimal digits with an optional fraction and exponent (finite in f32); one
 *              without either that fits in an i32 is an integer literal
 * The text is only ever parsed: backends see the tree. tgl_expr_types gives each node the type
 * tgl_map_t computes it in (tgl_map computes every node in f32). */
#ifndef TGL_CORE_EXPR_H
#define TGL_CORE_EXPR_H

#include <stddef.h>
#include <stdint.h>

#define TGL_EXPR_MAX_LEN 4096
#define TGL_EXPR_MAX_NODES 256
#define TGL_EXPR_MAX_DEPTH 32
#define TGL_EXPR_MAX_INPUTS 8

typedef enum {
    TGL_EXPR_NUMBER,  /* value */
    TGL_EXPR_INPUT,   /* op = input index */
    TGL_EXPR_UNARY,   /* op = tgl_unary_op, arg[0] */
    TGL_EXPR_BINARY,  /* op = tgl_binary_op, arg[0], arg[1] */
    TGL_EXPR_CLAMP,   /* arg[0..2] */
    TGL_EXPR_SELECT,  /* arg[0..2] */
    TGL_EXPR_COMPARE  /* op = tgl_compare_op, arg[0], arg[1] */
} tgl_expr_kind;

typedef struct tgl_expr_node {
    tgl_expr_kind kind;
    int op;
    float value;     /* NUMBER: as an f32 */
    int32_t ivalue;  /* NUMBER: as an i32, where `integer` */
    uint8_t integer; /* NUMBER: written without fraction or exponent, and fits in an i32 */
    uint16_t arg[3];
} tgl_expr_node;

typedef struct tgl_expr {
    tgl_expr_node node[TGL_EXPR_MAX_NODES];
    size_t count;
    uint16_t root;
    unsigned inputs_used; /* bit k: input k appears */
} tgl_expr;

/* Parses text; on failure writes "position P: ..." into err and returns 0. */
int tgl_expr_parse(const char *text, tgl_expr *out, char *err, size_t err_size);

/* tgl_map_t's types: is_int[k] = 1 where node k computes in i32, 0 where in f32, given which
 * inputs are integers (bit k: input k is i32 or bool). A node is i32 when all it combines is:
 * integer literals and inputs, through + - * max min clamp select (its two values) and the
 * unary neg, abs, square, relu, floor, ceil; a comparison is always i32 (0 or 1); / and every
 * other function compute in f32, an i32 argument converted to the nearest f32 first. */
void tgl_expr_types(const tgl_expr *e, unsigned int_inputs, uint8_t *is_int);

/* Stages for a device whose kernels read at most `cap` inputs (tgl_device_info's
 * max_storage_blocks - 1; cap >= 3): stage s computes node root[s] of the tree, reading the
 * call's inputs and the temporaries of earlier stages, into temporary slot[s]; the last stage
 * computes the root into the call's out. n_slots temporaries are live at once at most (a stage's
 * slot is reused once the stage that reads it has run). */
typedef struct tgl_expr_plan {
    int n_stages, n_slots;
    uint16_t root[TGL_EXPR_MAX_NODES];
    uint8_t slot[TGL_EXPR_MAX_NODES];
    int16_t stage_at[TGL_EXPR_MAX_NODES]; /* node -> the stage computing it, or -1 */
} tgl_expr_plan;

/* Plans e's stages; returns 0 where cap is outside 3..8 (nothing planned). A tree that already
 * reads at most cap inputs is one stage. */
int tgl_expr_split(const tgl_expr *e, int cap, tgl_expr_plan *p);

/* Stage s as its own tree in *out, whose input k reads src[k]: the call's input src[k] where
 * >= 0, temporary slot -1 - src[k] where < 0 (n_src of them, at most cap). Returns 0 on a bad s. */
int tgl_expr_stage(const tgl_expr *e, const tgl_expr_plan *p, int s, tgl_expr *out, int *src, int *n_src);

#endif
