/* The handle table: turns tgl_ptr values into backend buffers, and stale or foreign values
 * into TGL_ERR_INVALID_POINTER.
 *
 * A tgl_ptr is  [63] 1 | [62:57] k | [56:k] id | [k-1:0] byte offset,
 * k the allocation's size class: the bits its offsets take, with room for twice its size (so a
 * small overrun is a range error, not a carry into the id), at least TGL__MIN_CLASS. The id is
 * the class's allocation sequence number in this process (every backend draws from the same
 * counters) times an odd constant, plus a salt of the class, modulo 2^(57 - k). So:
 * - the id never repeats until 2^(57 - k) more allocations of that class have been made in the
 *   process (2^45 of up to 2 KiB, 2^(56 - b) of sizes of b bits, 2^17 of 256 GiB): a freed
 *   or another backend's pointer names no live allocation here before that;
 * - an offset that carries (or borrows) d into the id field decodes to the sequence number
 *   d * TGL__ID_SPREAD (modulo 2^(57 - k)) away, the golden ratio's multiples: far from any
 *   recent allocation's;
 * - an offset that carries into (or borrows from) the class field decodes under another class,
 *   whose salt puts it just as far from that class's recent allocations;
 * - a pointer is looked up by its base address, so one backend's table never holds another's.
 * The marker bit keeps every valid pointer non-zero. */
#ifndef TGL_CORE_HANDLES_H
#define TGL_CORE_HANDLES_H

#include <stddef.h>
#include <stdint.h>

#define TGL__OFFSET_BITS 38 /* the largest allocation: 2^38 bytes */
#define TGL__MAX_ALLOC_BYTES ((uint64_t)1 << TGL__OFFSET_BITS)
#define TGL__MIN_CLASS 12
#define TGL__MAX_CLASS (TGL__OFFSET_BITS + 2)
#define TGL__CLASS_SHIFT 57
#define TGL__ID_SPREAD 0x9E3779B97F4A7C15u /* odd: 2^64 / the golden ratio */
#define TGL__MAX_SLOTS ((uint32_t)1 << 17) /* live allocations per backend, at most */
#define TGL__FREED_MEMORY 1024             /* recent frees told apart in messages */

typedef struct tgl__slot {
    void *buf;      /* the backend's buffer; NULL when free */
    uint64_t bytes; /* size the user asked for */
    uint64_t base;  /* its tgl_ptr */
    uint32_t next_free;
} tgl__slot;

typedef struct tgl__handles {
    tgl__slot *slots;
    uint32_t count, cap;           /* slots in use by index, capacity */
    uint32_t free_head, free_tail; /* FIFO of freed slots, linked by next_free; UINT32_MAX = none */
    uint32_t live;
    uint32_t *index;               /* open addressing by base address: slot + 1, 0 empty */
    uint32_t index_cap;            /* a power of two, at least twice live */
    uint64_t freed[TGL__FREED_MEMORY]; /* the bases of the latest frees, a ring */
    uint32_t freed_next;
} tgl__handles;

typedef enum {
    TGL__HANDLE_OK = 0,
    TGL__HANDLE_NULL,      /* p == 0 */
    TGL__HANDLE_UNKNOWN,   /* never allocated here, from another backend, or freed long ago */
    TGL__HANDLE_FREED,     /* the allocation was freed (one of the latest frees here) */
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
/* The base address of the allocation p would name (its offset bits cleared, by the size class
 * it carries), or p itself where it carries no valid class. */
uint64_t tgl__ptr_base(uint64_t p);
const char *tgl__handle_result_string(tgl__handle_result r);

#endif
