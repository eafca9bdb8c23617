/* The handle table: turns tgl_ptr values into backend buffers, and stale or foreign values
 * into TGL_ERR_INVALID_POINTER.
 *
 * A tgl_ptr is  [63] 1 | [62:38] (slot | generation << 17) ^ key | [37:0] byte offset.
 * The marker bit keeps every valid pointer non-zero; the generation changes on every free so a
 * stale pointer stops matching; the per-table key makes a pointer from another backend decode
 * to a slot or generation that does not match. Freed slots are reused first-in first-out, so
 * a slot's generation wraps only after 256 reuses of that slot. */
#ifndef TGL_CORE_HANDLES_H
#define TGL_CORE_HANDLES_H

#include <stddef.h>
#include <stdint.h>

#define TGL__OFFSET_BITS 38
#define TGL__MAX_ALLOC_BYTES ((uint64_t)1 << TGL__OFFSET_BITS)
#define TGL__SLOT_BITS 17
#define TGL__MAX_SLOTS (((uint32_t)1 << TGL__SLOT_BITS) - 1)

typedef struct tgl__slot {
    void *buf;       /* the backend's buffer; NULL when free */
    uint64_t bytes;  /* size the user asked for */
    uint8_t gen;
    uint32_t next_free;
} tgl__slot;

typedef struct tgl__handles {
    tgl__slot *slots;
    uint32_t count, cap;       /* slots in use by index, capacity */
    uint32_t free_head, free_tail; /* FIFO of freed slots, linked by next_free; UINT32_MAX = none */
    uint32_t live;
    uint32_t key;
} tgl__handles;

typedef enum {
    TGL__HANDLE_OK = 0,
    TGL__HANDLE_NULL,      /* p == 0 */
    TGL__HANDLE_UNKNOWN,   /* never allocated here, or from another backend */
    TGL__HANDLE_FREED,     /* the allocation was freed */
    TGL__HANDLE_RANGE,     /* offset + bytes past the allocation's end */
    TGL__HANDLE_NOT_BASE,  /* tgl_free of an interior pointer */
    TGL__HANDLE_FULL       /* no slot left */
} tgl__handle_result;

void tgl__handles_init(tgl__handles *h);
void tgl__handles_fini(tgl__handles *h);
tgl__handle_result tgl__handles_insert(tgl__handles *h, void *buf, uint64_t bytes, uint64_t *out);
/* Resolves p and checks that [offset, offset + bytes) lies inside the allocation. */
tgl__handle_result tgl__handles_lookup(const tgl__handles *h, uint64_t p, uint64_t bytes,
                                       void **buf, uint64_t *offset, uint64_t *alloc_bytes);
tgl__handle_result tgl__handles_remove(tgl__handles *h, uint64_t p, void **buf);
/* Calls fn for every live buffer (used by tgl_close). */
void tgl__handles_each(const tgl__handles *h, void (*fn)(void *ctx, void *buf), void *ctx);
/* Calls fn with every live allocation's base pointer and size, in slot order (tracing). */
void tgl__handles_each_live(const tgl__handles *h, void (*fn)(void *ctx, uint64_t p, uint64_t bytes), void *ctx);
const char *tgl__handle_result_string(tgl__handle_result r);

#endif
