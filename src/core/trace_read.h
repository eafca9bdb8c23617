/* The trace reader: a trace file is untrusted input. Every length, count, id and offset is
 * checked against the file and the call table before use; a damaged or hostile file gives
 * TGL_ERR_IO with a message naming the file, the record and what is wrong, never a crash, a
 * hang or an allocation larger than the file. */
#ifndef TGL_CORE_TRACE_READ_H
#define TGL_CORE_TRACE_READ_H

#include "calls.h"
#include "trace_format.h"

/* A device pointer argument as recorded. */
typedef struct tgl__rptr {
    uint8_t tag;     /* TGL__PTR_* */
    uint32_t alloc;  /* TGL__PTR_ALLOC: the allocation's id */
    uint64_t offset; /* TGL__PTR_ALLOC: byte offset */
    uint32_t data;   /* read arguments: the allocation's snapshot, or TGL__TRACE_NONE */
} tgl__rptr;

/* One CALL record, decoded; the arrays live here. */
typedef struct tgl__rcall {
    tgl__fn fn;
    tgl_status status;
    uint64_t u[TGL__CALL_MAX_ARGS];       /* e, z, f bits, counts of S/q/L, string lengths */
    uint8_t present[TGL__CALL_MAX_ARGS];  /* S, q, J, L, s, c, t, T, D, H, A: non-NULL in the call */
    uint8_t stored[TGL__CALL_MAX_ARGS];   /* S, q, J, L: the values are in the record */
    tgl__rptr p[TGL__CALL_MAX_ARGS];      /* device pointers */
    size_t sizes[TGL__CALL_MAX_ARGS][TGL_MAX_DIMS];
    int64_t ints[TGL__MAX_INTS];          /* J (a call has at most one) */
    tgl__rptr list[TGL_EXPR_MAX_INPUTS];
    char str[TGL__TRACE_EXPR_MAX + 1];
    tgl_conv2d_desc desc;
    tgl_pool2d_desc pool;
    tgl_interpolate_desc resize;
    tgl_rope_desc rope;
    tgl_attention_desc attn;
    tgl_tensor tensor[TGL__CALL_MAX_ARGS]; /* t, T: the descriptor, data 0 (p[] holds the pointer) */
    /* U (a call has at most one list): its descriptors (data 0) and their pointers, grown to
     * the largest list read so far; tgl__rcall_release frees them */
    tgl_tensor *tlist;
    tgl__rptr *tlist_p;
    size_t tlist_cap;
    float *factors; /* Y: the rope descriptor's freq_factors, grown likewise */
    size_t factors_cap;
    size_t *lens; /* N: the attention descriptor's seq_lens, grown likewise */
    size_t lens_cap;
    uint32_t id[TGL__CALL_MAX_ARGS];      /* D: data id; A: the new allocation's id */
} tgl__rcall;

typedef struct tgl__trace_reader {
    FILE *f;
    char path[1024];
    char info[TGL__TRACE_INFO_MAX + 1];
    uint64_t size, pos;
    uint64_t record;   /* 1-based number of the record last read */
    uint64_t record_at;/* its byte offset */
    uint64_t *data_at, *data_len; /* per data id: file offset and length of the contents */
    uint32_t n_data, data_cap;
    uint8_t *payload;
    size_t payload_cap;
} tgl__trace_reader;

/* Opens path and checks the header. */
tgl_status tgl__reader_open(tgl__trace_reader *r, const char *path);
void tgl__reader_close(tgl__trace_reader *r);
/* Reads up to the next CALL record (indexing DATA records on the way) into *c.
 * Returns TGL_OK with *done = 0, TGL_OK with *done = 1 at a clean end, or TGL_ERR_IO. */
tgl_status tgl__reader_next(tgl__trace_reader *r, tgl__rcall *c, int *done);
/* Frees what a tgl__rcall grew (not the struct itself); a zeroed struct holds nothing. */
void tgl__rcall_release(tgl__rcall *c);
/* Reads data `id` (which must hold exactly `expect` bytes) into a new malloc'd buffer. */
tgl_status tgl__reader_data(tgl__trace_reader *r, uint32_t id, uint64_t expect, void **out);

#endif
