/* A reader and writer of safetensors files (the format of Hugging Face's safetensors: an 8-byte
 * little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
 * then the data), for examples/resnet.c. The JSON is parsed by json-c; every length, offset,
 * shape and dtype is checked before anything is read, so a damaged or hostile file is refused
 * with a message, never read past (tests/test_safetensors.c, tests/fuzz/fuzz_safetensors.c). */
#ifndef TGL_EXAMPLES_SAFETENSORS_H
#define TGL_EXAMPLES_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8
#define ST_MAX_NAME 256
#define ST_MAX_HEADER ((uint64_t)100 << 20) /* the reference implementation's bound */

/* Every dtype of the format is parsed (its sizes checked); st_read_f32 reads the float ones. */
typedef enum { ST_F32, ST_F16, ST_BF16, ST_F64, ST_OTHER } st_dtype;

typedef struct st_tensor {
    char name[ST_MAX_NAME];
    st_dtype dtype;
    size_t ndim, shape[ST_MAX_DIMS], count; /* count: elements */
    size_t begin, end;                      /* bytes, from the data's start */
} st_tensor;

typedef struct st_file {
    unsigned char *bytes; /* the whole file (st_load) or NULL (st_parse: the caller's) */
    const unsigned char *data;
    size_t data_size;
    st_tensor *tensors;
    size_t count;
} st_file;

/* Parses a file's bytes (kept by the caller while f is used). Returns 0, or -1 with the reason
 * in err. */
int st_parse(const unsigned char *buf, size_t size, st_file *f, char *err, size_t err_size);
/* Reads and parses the file at path. */
int st_load(const char *path, st_file *f, char *err, size_t err_size);
void st_free(st_file *f);

/* The tensor of that name, or NULL. */
const st_tensor *st_find(const st_file *f, const char *name);
/* Its elements as f32 into out (t->count floats); -1 for a dtype that is not F32, F16, BF16 or
 * F64 (out untouched). */
int st_read_f32(const st_file *f, const st_tensor *t, float *out);

/* Writes f32 tensors (names, shapes, data) as a safetensors file. Returns 0, or -1 with err. */
typedef struct st_entry {
    const char *name;
    size_t ndim, shape[ST_MAX_DIMS];
    const float *data;
} st_entry;
int st_save(const char *path, const st_entry *entries, size_t n, char *err, size_t err_size);

#endif
