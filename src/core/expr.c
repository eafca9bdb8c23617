/* Recursive-descent parser for tgl_map expressions (grammar in expr.h). Every limit (length,
 * nodes, depth) is checked before it could be exceeded, so hostile text costs bounded work. */
#include "expr.h"
#include "internal.h"

#include "tensorgl.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *text, *p;
    tgl_expr *out;
    int depth;
    char *err;
    size_t err_size;
    int failed;
} parser;

__attribute__((format(printf, 2, 3))) static int fail(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return -1;
    ps->failed = 1;
    int n = snprintf(ps->err, ps->err_size, "position %zu: ", (size_t)(ps->p - ps->text));
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < ps->err_size)
        vsnprintf(ps->err + n, ps->err_size - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Character classes in ASCII whatever the process locale (ctype's isalpha follows it). */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The "C" locale, for reading numbers as the grammar writes them: strtof follows the calling
 * thread's locale, and in a decimal-comma one it stops at the '.' (1.5 read as 1). NULL where
 * the C library could not make it. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* Reads the whole of `text` (digits, '.', exponent: checked by the caller) as an f32 in the C
 * locale; 0 when it does not read whole. */
static int read_f32(const char *text, float *out)
{
    pthread_once(&c_locale_once, make_c_locale);
    if (!c_locale)
        return 0;
    locale_t old = uselocale(c_locale);
    char *end = NULL;
    *out = strtof(text, &end);
    uselocale(old);
    return end && end != text && *end == '\0';
}

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

/* What the parser sees at p, for messages. */
static const char *found(parser *ps, char *buf, size_t size)
{
    if (!*ps->p)
        return "the end";
    if (*ps->p >= ' ' && *ps->p <= '~')
        snprintf(buf, size, "'%c'", *ps->p);
    else
        snprintf(buf, size, "byte 0x%02x", (unsigned char)*ps->p);
    return buf;
}

static int add_node(parser *ps, tgl_expr_node n)
{
    if (ps->out->count >= TGL_EXPR_MAX_NODES)
        return fail(ps, "expression has more than %d operations and operands", TGL_EXPR_MAX_NODES);
    ps->out->node[ps->out->count] = n;
    return (int)ps->out->count++;
}

static int parse_expr(parser *ps);

static int expect(parser *ps, char c, const char *what)
{
    skip_space(ps);
    if (*ps->p != c) {
        char buf[16];
        return fail(ps, "expected %s, found %s", what, found(ps, buf, sizeof buf));
    }
    ps->p++;
    return 0;
}

static int parse_number(parser *ps)
{
    const char *s = ps->p;
    while (is_digit(*ps->p))
        ps->p++;
    if (*ps->p == '.')
        for (ps->p++; is_digit(*ps->p); ps->p++)
            ;
    if (ps->p == s + 1 && *s == '.')
        return fail(ps, "expected digits around '.'");
    if (*ps->p == 'e' || *ps->p == 'E') {
        const char *e = ps->p++;
        if (*ps->p == '+' || *ps->p == '-')
            ps->p++;
        if (!is_digit(*ps->p)) {
            ps->p = e;
            return fail(ps, "expected digits after the exponent");
        }
        while (is_digit(*ps->p))
            ps->p++;
    }
    char buf[64];
    size_t len = (size_t)(ps->p - s);
    if (len >= sizeof buf) {
        ps->p = s;
        return fail(ps, "number longer than %zu characters", sizeof buf - 1);
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    float v;
    if (!read_f32(buf, &v)) {
        ps->p = s;
        return fail(ps, "number %s could not be read", buf);
    }
    if (!isfinite(v)) {
        ps->p = s;
        return fail(ps, "number %s is out of f32 range", buf);
    }
    tgl_expr_node n = {.kind = TGL_EXPR_NUMBER, .value = v};
    if (!memchr(buf, '.', len) && !memchr(buf, 'e', len) && !memchr(buf, 'E', len)) {
        long long i = 0; /* digits only: accumulate, stopping past the i32 range */
        for (size_t k = 0; k < len && i <= INT32_MAX; k++)
            i = i * 10 + (buf[k] - '0');
        if (i <= INT32_MAX) {
            n.integer = 1;
            n.ivalue = (int32_t)i;
        }
    }
    return add_node(ps, n);
}

/* Looks a function name up: kind and op, and how many arguments it takes (0 = unknown). */
static int lookup(const char *name, size_t len, tgl_expr_kind *kind, int *op)
{
    for (int i = 0; i < TGL__UNARY_FLAT_KERNELS; i++)
        if (strlen(tgl_unary_name(i)) == len && !strncmp(name, tgl_unary_name(i), len))
            return *kind = TGL_EXPR_UNARY, *op = i, 1;
    for (int i = 0; i < TGL__BINARY_FLAT_KERNELS; i++)
        if (strlen(tgl_binary_name(i)) == len && !strncmp(name, tgl_binary_name(i), len))
            return *kind = TGL_EXPR_BINARY, *op = i, 2;
    if (len == 5 && !strncmp(name, "clamp", 5))
        return *kind = TGL_EXPR_CLAMP, *op = 0, 3;
    if (len == 6 && !strncmp(name, "select", 6))
        return *kind = TGL_EXPR_SELECT, *op = 0, 3;
    return 0;
}

/* One level of nesting more (a '(', a call or a unary minus), or the failure past the limit. */
static int deeper(parser *ps)
{
    if (++ps->depth > TGL_EXPR_MAX_DEPTH)
        return fail(ps, "expression nests deeper than %d", TGL_EXPR_MAX_DEPTH);
    return 0;
}

static int parse_name(parser *ps)
{
    const char *s = ps->p;
    while (is_alpha(*ps->p) || is_digit(*ps->p) || *ps->p == '_')
        ps->p++;
    size_t len = (size_t)(ps->p - s);
    skip_space(ps);
    if (*ps->p != '(') {
        if (len == 1 && *s >= 'a' && *s < 'a' + TGL_EXPR_MAX_INPUTS) {
            ps->out->inputs_used |= 1u << (*s - 'a');
            return add_node(ps, (tgl_expr_node){.kind = TGL_EXPR_INPUT, .op = *s - 'a'});
        }
        ps->p = s;
        return fail(ps, "unknown name '%.*s' (inputs are a..h; functions need '(')", (int)(len > 32 ? 32 : len), s);
    }
    tgl_expr_node n = {0};
    int arity = lookup(s, len, &n.kind, &n.op);
    if (!arity) {
        ps->p = s;
        return fail(ps, "unknown function '%.*s'", (int)(len > 32 ? 32 : len), s);
    }
    ps->p++; /* '(' */
    if (deeper(ps) < 0)
        return -1;
    for (int k = 0; k < arity; k++) {
        if (k && expect(ps, ',', arity == 2 ? "',' and a second argument" : "',' and another argument") < 0)
            return -1;
        int a = parse_expr(ps);
        if (a < 0)
            return -1;
        n.arg[k] = (uint16_t)a;
    }
    ps->depth--;
    char what[64];
    snprintf(what, sizeof what, "')' after %d argument%s of %.*s", arity, arity > 1 ? "s" : "", (int)len, s);
    if (expect(ps, ')', what) < 0)
        return -1;
    return add_node(ps, n);
}

static int parse_factor(parser *ps)
{
    skip_space(ps);
    int r;
    char c = *ps->p, buf[16];
    if (c == '-') {
        ps->p++;
        if (deeper(ps) < 0)
            return -1;
        int a = parse_factor(ps);
        ps->depth--;
        r = a < 0 ? -1 : add_node(ps, (tgl_expr_node){.kind = TGL_EXPR_UNARY, .op = TGL_UNARY_NEG, .arg = {(uint16_t)a}});
    } else if (c == '(') {
        ps->p++;
        if (deeper(ps) < 0)
            return -1;
        r = parse_expr(ps);
        ps->depth--;
        if (r >= 0 && expect(ps, ')', "')'") < 0)
            r = -1;
    } else if (is_digit(c) || c == '.') {
        r = parse_number(ps);
    } else if (is_alpha(c)) {
        r = parse_name(ps);
    } else {
        r = fail(ps, "expected a number, an input, a function or '(', found %s", found(ps, buf, sizeof buf));
    }
    return r;
}

static int parse_chain(parser *ps, int terms)
{
    int left = terms ? parse_factor(ps) : parse_chain(ps, 1);
    while (left >= 0) {
        skip_space(ps);
        char c = *ps->p;
        int op;
        if (terms && (c == '*' || c == '/'))
            op = c == '*' ? TGL_BINARY_MUL : TGL_BINARY_DIV;
        else if (!terms && (c == '+' || c == '-'))
            op = c == '+' ? TGL_BINARY_ADD : TGL_BINARY_SUB;
        else
            break;
        ps->p++;
        int right = terms ? parse_factor(ps) : parse_chain(ps, 1);
        if (right < 0)
            return -1;
        left = add_node(ps, (tgl_expr_node){.kind = TGL_EXPR_BINARY, .op = op,
                                            .arg = {(uint16_t)left, (uint16_t)right}});
    }
    return left;
}

/* The comparison operator at p (its length in *len), or -1. */
static int compare_at(const char *p, size_t *len)
{
    *len = 2;
    if (p[0] == '=' && p[1] == '=')
        return TGL_COMPARE_EQ;
    if (p[0] == '!' && p[1] == '=')
        return TGL_COMPARE_NE;
    if (p[0] == '<' || p[0] == '>') {
        int le = p[0] == '<';
        if (p[1] == '=')
            return le ? TGL_COMPARE_LE : TGL_COMPARE_GE;
        *len = 1;
        return le ? TGL_COMPARE_LT : TGL_COMPARE_GT;
    }
    return -1;
}

/* A sum, or two compared. The nesting the limit counts is the text's: each '(', function call
 * and unary minus is one level (deeper), so 32 parentheses are 32 levels. */
static int parse_expr(parser *ps)
{
    int left = parse_chain(ps, 0);
    if (left < 0)
        return -1;
    skip_space(ps);
    size_t len;
    int op = compare_at(ps->p, &len);
    if (op < 0) {
        if (*ps->p == '=' || *ps->p == '!')
            return fail(ps, "expected '==' or '!=' (comparisons are == != < <= > >=)");
        return left;
    }
    ps->p += len;
    int right = parse_chain(ps, 0);
    if (right < 0)
        return -1;
    skip_space(ps);
    if (compare_at(ps->p, &len) >= 0)
        return fail(ps, "comparisons do not chain: parenthesize one, e.g. (a < b) == c");
    return add_node(ps, (tgl_expr_node){.kind = TGL_EXPR_COMPARE, .op = op, .arg = {(uint16_t)left, (uint16_t)right}});
}

void tgl_expr_types(const tgl_expr *e, unsigned int_inputs, uint8_t *is_int)
{
    memset(is_int, 0, e->count); /* leaves read their unused argument slots too */
    for (size_t k = 0; k < e->count; k++) { /* children first: their types are known */
        const tgl_expr_node *n = &e->node[k];
        int a0 = is_int[n->arg[0]], a1 = is_int[n->arg[1]], a2 = is_int[n->arg[2]];
        int r = 0;
        switch (n->kind) {
        case TGL_EXPR_NUMBER: r = n->integer; break;
        case TGL_EXPR_INPUT: r = (int)(int_inputs >> n->op & 1u); break;
        case TGL_EXPR_UNARY:
            r = a0 && (n->op == TGL_UNARY_NEG || n->op == TGL_UNARY_ABS || n->op == TGL_UNARY_SQUARE ||
                       n->op == TGL_UNARY_RELU || n->op == TGL_UNARY_FLOOR || n->op == TGL_UNARY_CEIL);
            break;
        case TGL_EXPR_BINARY:
            r = a0 && a1 && n->op != TGL_BINARY_DIV && n->op != TGL_BINARY_POW;
            break;
        case TGL_EXPR_CLAMP: r = a0 && a1 && a2; break;
        case TGL_EXPR_SELECT: r = a1 && a2; break;
        case TGL_EXPR_COMPARE: r = 1; break;
        }
        is_int[k] = (uint8_t)r;
    }
}

int tgl_expr_parse(const char *text, tgl_expr *out, char *err, size_t err_size)
{
    parser ps = {text, text, out, 0, err, err_size, 0};
    out->count = 0;
    out->inputs_used = 0;
    size_t len = strnlen(text, TGL_EXPR_MAX_LEN + 1);
    if (len > TGL_EXPR_MAX_LEN) {
        snprintf(err, err_size, "expression longer than %d bytes", TGL_EXPR_MAX_LEN);
        return 0;
    }
    int root = parse_expr(&ps);
    if (root >= 0) {
        skip_space(&ps);
        if (*ps.p) {
            char buf[16];
            root = fail(&ps, "expected an operator or the end, found %s", found(&ps, buf, sizeof buf));
        }
    }
    if (root < 0)
        return 0;
    out->root = (uint16_t)root;
    return 1;
}
