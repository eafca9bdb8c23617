/* A reader and writer of GGUF files (ggml's container, versions 2 and 3), for examples/llama.c.
 *
 * A file is: "GGUF", a u32 version, u64 tensor and key-value counts, the key-value pairs (a
 * string key, a u32 value type, the value; arrays hold one element type and a u64 count), the
 * tensor infos (a name, u32 dims, u64 extents innermost first, a u32 ggml type, a u64 offset
 * into the data), then the data, aligned to general.alignment (32 unless set). Strings are a u64
 * length and that many bytes; everything is little-endian.
 *
 * Every count, length, offset and extent is checked against the bytes that are there before
 * anything is read, so a damaged or hostile file is refused with a message, never read past
 * (tests/test_gguf.c, tests/fuzz/fuzz_gguf.c). */
#ifndef TGL_EXAMPLES_GGUF_H
#define TGL_EXAMPLES_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAX_DIMS 4          /* ggml's GGML_MAX_DIMS */
#define GGUF_MAX_NAME 256        /* tensor names and keys, NUL included */
#define GGUF_DEFAULT_ALIGNMENT 32

/* Value types of the key-value pairs. */
typedef enum {
    GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING,
    GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64, GGUF_TYPE_COUNT
} gguf_type;

/* The ggml tensor types the reader knows the sizes of (others are refused); llama.c computes
 * on F32, F16, BF16, Q8_0 and Q4_0. */
enum {
    GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q4_1 = 3, GGML_Q5_0 = 6, GGML_Q5_1 = 7,
    GGML_Q8_0 = 8, GGML_Q8_1 = 9, GGML_Q2_K = 10, GGML_Q3_K = 11, GGML_Q4_K = 12, GGML_Q5_K = 13,
    GGML_Q6_K = 14, GGML_Q8_K = 15, GGML_I8 = 24, GGML_I16 = 25, GGML_I32 = 26, GGML_I64 = 27,
    GGML_F64 = 28, GGML_BF16 = 30
};
/* Elements per block and bytes per block of a ggml type; 0 for one not known here. */
size_t gguf_block_elems(uint32_t ggml_type);
size_t gguf_block_bytes(uint32_t ggml_type);
const char *gguf_ggml_type_name(uint32_t ggml_type);

typedef struct gguf_kv {
    char key[GGUF_MAX_NAME];
    gguf_type type;
    union {
        uint64_t u; /* U8 .. U64 and BOOL */
        int64_t i;  /* I8 .. I64 */
        double f;   /* F32, F64 */
    } v;
    const char *str;       /* STRING: the bytes (not NUL-terminated) */
    size_t str_len;
    gguf_type elem_type;   /* ARRAY: its elements' type (never ARRAY) */
    uint64_t count;        /* ARRAY: elements */
    size_t array_at;       /* ARRAY: offset of its first element in the file */
} gguf_kv;

typedef struct gguf_tensor {
    char name[GGUF_MAX_NAME];
    uint32_t ndim;
    uint64_t ne[GGUF_MAX_DIMS]; /* extents, ne[0] innermost (a [out, in] weight has ne = {in, out}) */
    uint32_t type;              /* ggml type */
    uint64_t offset;            /* bytes from the data's start */
    uint64_t size;              /* bytes */
    const unsigned char *data;
} gguf_tensor;

typedef struct gguf_file {
    unsigned char *bytes; /* the whole file (gguf_load) or NULL (gguf_parse: the caller's) */
    size_t size;
    uint32_t version, alignment;
    gguf_kv *kvs;
    size_t n_kv;
    gguf_tensor *tensors;
    size_t n_tensors;
} gguf_file;

/* Parses a file's bytes (kept by the caller while f is used). Returns 0, or -1 with the reason
 * in err. */
int gguf_parse(const unsigned char *buf, size_t size, gguf_file *f, char *err, size_t err_size);
/* Reads and parses the file at path. */
int gguf_load(const char *path, gguf_file *f, char *err, size_t err_size);
void gguf_free(gguf_file *f);

const gguf_kv *gguf_find_kv(const gguf_file *f, const char *key);
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);
/* A key's value as an unsigned integer (any integer type, non-negative), a float (F32, F64 or
 * an integer) or a string (copied, NUL-terminated, truncated to out_size). 0, or -1 when the key
 * is missing or of another kind (out untouched). */
int gguf_get_uint(const gguf_file *f, const char *key, uint64_t *out);
int gguf_get_float(const gguf_file *f, const char *key, double *out);
int gguf_get_string(const gguf_file *f, const char *key, char *out, size_t out_size);

/* Writing: key-value pairs of the scalar and string kinds, and tensors whose bytes the caller
 * has in ggml's layout. */
typedef struct gguf_write_kv {
    const char *key;
    gguf_type type; /* U32, I32, F32, U64, BOOL or STRING */
    uint64_t u;
    int64_t i;
    double f;
    const char *str;
} gguf_write_kv;
typedef struct gguf_write_tensor {
    const char *name;
    uint32_t ndim;
    uint64_t ne[GGUF_MAX_DIMS];
    uint32_t type;
    const void *data; /* the tensor's bytes: gguf_tensor_bytes of its type and extents */
} gguf_write_tensor;
/* Bytes of a tensor of that type and extents; 0 for an unknown type, an innermost extent that is
 * not whole blocks, or overflow. */
uint64_t gguf_tensor_bytes(uint32_t ggml_type, uint32_t ndim, const uint64_t *ne);
int gguf_save(const char *path, const gguf_write_kv *kvs, size_t n_kv, const gguf_write_tensor *tensors,
              size_t n_tensors, char *err, size_t err_size);

#endif
