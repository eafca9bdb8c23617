#include "handles.h"

#include <stdatomic.h>
#include <stdlib.h>

#define FIELD_BITS (64 - 1 - TGL__OFFSET_BITS)
#define FIELD_MASK ((((uint64_t)1) << FIELD_BITS) - 1)
#define OFFSET_MASK (TGL__MAX_ALLOC_BYTES - 1)
#define MARKER ((uint64_t)1 << 63)
#define NONE UINT32_MAX

/* Distinct keys for the tables of one process: an odd multiplier walks all 2^25 values before
 * repeating, so two live backends never share a key. */
static atomic_uint next_key_seed;

void tgl__handles_init(tgl__handles *h)
{
    *h = (tgl__handles){.free_head = NONE, .free_tail = NONE};
    unsigned seed = atomic_fetch_add(&next_key_seed, 1u) + 1u;
    h->key = (uint32_t)((seed * 0x9E3779B1u) & FIELD_MASK);
}

void tgl__handles_fini(tgl__handles *h)
{
    free(h->slots);
    *h = (tgl__handles){.free_head = NONE, .free_tail = NONE};
}

static uint64_t encode(const tgl__handles *h, uint32_t slot, uint8_t gen)
{
    uint64_t field = ((uint64_t)slot | ((uint64_t)gen << TGL__SLOT_BITS)) ^ h->key;
    return MARKER | (field << TGL__OFFSET_BITS);
}

/* Finds the slot p names, or why it names none. */
static tgl__handle_result decode(const tgl__handles *h, uint64_t p, uint32_t *slot_out)
{
    if (p == 0)
        return TGL__HANDLE_NULL;
    if (!(p & MARKER))
        return TGL__HANDLE_UNKNOWN;
    uint64_t field = ((p >> TGL__OFFSET_BITS) & FIELD_MASK) ^ h->key;
    uint32_t slot = (uint32_t)(field & TGL__MAX_SLOTS);
    uint8_t gen = (uint8_t)(field >> TGL__SLOT_BITS);
    if (slot >= h->count)
        return TGL__HANDLE_UNKNOWN;
    const tgl__slot *s = &h->slots[slot];
    if (s->gen != gen) {
        /* One generation behind a free slot is a pointer freed once; anything else is foreign. */
        return (uint8_t)(s->gen - 1) == gen ? TGL__HANDLE_FREED : TGL__HANDLE_UNKNOWN;
    }
    if (!s->buf)
        return TGL__HANDLE_FREED;
    *slot_out = slot;
    return TGL__HANDLE_OK;
}

tgl__handle_result tgl__handles_insert(tgl__handles *h, void *buf, uint64_t bytes, uint64_t *out)
{
    uint32_t slot;
    if (h->free_head != NONE) {
        slot = h->free_head;
        h->free_head = h->slots[slot].next_free;
        if (h->free_head == NONE)
            h->free_tail = NONE;
    } else {
        if (h->count >= TGL__MAX_SLOTS)
            return TGL__HANDLE_FULL;
        if (h->count == h->cap) {
            uint32_t cap = h->cap ? h->cap * 2 : 64;
            if (cap > TGL__MAX_SLOTS)
                cap = TGL__MAX_SLOTS;
            tgl__slot *grown = realloc(h->slots, (size_t)cap * sizeof *grown);
            if (!grown)
                return TGL__HANDLE_FULL;
            h->slots = grown;
            h->cap = cap;
        }
        slot = h->count++;
        h->slots[slot] = (tgl__slot){0};
    }
    tgl__slot *s = &h->slots[slot];
    s->buf = buf;
    s->bytes = bytes;
    s->next_free = NONE;
    h->live++;
    *out = encode(h, slot, s->gen);
    return TGL__HANDLE_OK;
}

tgl__handle_result tgl__handles_lookup(const tgl__handles *h, uint64_t p, uint64_t bytes,
                                       void **buf, uint64_t *offset, uint64_t *alloc_bytes)
{
    uint32_t slot;
    tgl__handle_result r = decode(h, p, &slot);
    if (r != TGL__HANDLE_OK)
        return r;
    const tgl__slot *s = &h->slots[slot];
    uint64_t off = p & OFFSET_MASK;
    if (off > s->bytes || bytes > s->bytes - off)
        return TGL__HANDLE_RANGE;
    *buf = s->buf;
    *offset = off;
    if (alloc_bytes)
        *alloc_bytes = s->bytes;
    return TGL__HANDLE_OK;
}

tgl__handle_result tgl__handles_remove(tgl__handles *h, uint64_t p, void **buf)
{
    uint32_t slot;
    tgl__handle_result r = decode(h, p, &slot);
    if (r != TGL__HANDLE_OK)
        return r;
    if (p & OFFSET_MASK)
        return TGL__HANDLE_NOT_BASE;
    tgl__slot *s = &h->slots[slot];
    *buf = s->buf;
    s->buf = NULL;
    s->gen++;
    s->next_free = NONE;
    if (h->free_tail == NONE)
        h->free_head = slot;
    else
        h->slots[h->free_tail].next_free = slot;
    h->free_tail = slot;
    h->live--;
    return TGL__HANDLE_OK;
}

void tgl__handles_each(const tgl__handles *h, void (*fn)(void *ctx, void *buf), void *ctx)
{
    for (uint32_t i = 0; i < h->count; i++)
        if (h->slots[i].buf)
            fn(ctx, h->slots[i].buf);
}

void tgl__handles_each_live(const tgl__handles *h, void (*fn)(void *ctx, uint64_t p, uint64_t bytes), void *ctx)
{
    for (uint32_t i = 0; i < h->count; i++)
        if (h->slots[i].buf)
            fn(ctx, encode(h, i, h->slots[i].gen), h->slots[i].bytes);
}

const char *tgl__handle_result_string(tgl__handle_result r)
{
    switch (r) {
    case TGL__HANDLE_OK: return "valid";
    case TGL__HANDLE_NULL: return "is null";
    case TGL__HANDLE_UNKNOWN: return "is not a pointer of this backend";
    case TGL__HANDLE_FREED: return "points into a freed allocation";
    case TGL__HANDLE_RANGE: return "range runs past the end of its allocation";
    case TGL__HANDLE_NOT_BASE: return "is not the base address of an allocation";
    case TGL__HANDLE_FULL: return "handle table is full";
    }
    return "invalid";
}
