// BINARY(a, b) for the op define (OP_ADD ... OP_POW) of tgl_binary_op; needs common/math.glsl.
#if defined(OP_ADD)
#define BINARY(a, b) ((a) + (b))
#elif defined(OP_SUB)
#define BINARY(a, b) ((a) - (b))
#elif defined(OP_MUL)
#define BINARY(a, b) ((a) * (b))
#elif defined(OP_DIV)
#define BINARY(a, b) tgl_quot(a, b)
#elif defined(OP_MAX)
#define BINARY(a, b) tgl_max(a, b)
#elif defined(OP_MIN)
#define BINARY(a, b) tgl_min(a, b)
#elif defined(OP_POW)
#define BINARY(a, b) tgl_pow(a, b)
#else
#define BINARY(a, b) (a) // no op chosen: only for standalone validation of this file
#endif
