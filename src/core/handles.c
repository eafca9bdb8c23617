#include "handles.h"

#include <stdatomic.h>
#include <stdlib.h>

#define MARKER ((uint64_t)1 << 63)
#define NONE UINT32_MAX

/* Each size class's allocations so far, in the whole process: every backend draws its ids from
 * these, so no two live allocations of one process share a base address. */
static _Atomic uint64_t class_seq[TGL__MAX_CLASS + 1];

static int bit_length(uint64_t x)
{
    int n = 0;
    for (; x; x >>= 1)
        n++;
    return n;
}

static int size_class(uint64_t bytes)
{
    int k = bit_length(bytes) + 1;
    return k < TGL__MIN_CLASS ? TGL__MIN_CLASS : k;
}

static uint64_t low_mask(int bits)
{
    return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1) << bits) - 1;
}

/* TGL__ID_SPREAD's inverse modulo 2^64 (Newton's iteration doubles the correct low bits each
 * step: 3, 6, 12, 24, 48, 96). id = seq * inverse + salt, so seq = (id - salt) * TGL__ID_SPREAD. */
static uint64_t spread_inverse(void)
{
    const uint64_t g = TGL__ID_SPREAD;
    uint64_t x = g;
    for (int i = 0; i < 5; i++)
        x *= 2 - g * x;
    return x;
}

/* Each class's ids start at its own pseudo-random point (splitmix64's finalizer of k). Without it,
 * an offset that carries c into the class field turns class k's id of sequence number 2^c s
 * into exactly class k + c's id of s, so p + 2^57 could be another live allocation's valid
 * pointer; with it, that lands (salt_k >> c) - salt_(k+c) ids away, far from recent ones. */
static uint64_t class_salt(int k)
{
    uint64_t z = (uint64_t)k * TGL__ID_SPREAD;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

uint64_t tgl__ptr_base(uint64_t p)
{
    int k = (int)((p >> TGL__CLASS_SHIFT) & 63);
    if (!(p & MARKER) || k < TGL__MIN_CLASS || k > TGL__MAX_CLASS)
        return p;
    return p & ~low_mask(k);
}

static uint32_t hash_slot(const tgl__handles *h, uint64_t base)
{
    uint64_t x = base * 0xD6E8FEB86659FD93u;
    return (uint32_t)(x >> 32) & (h->index_cap - 1);
}

/* The slot whose allocation starts at base, or NONE. */
static uint32_t find(const tgl__handles *h, uint64_t base)
{
    if (!h->index_cap)
        return NONE;
    for (uint32_t i = hash_slot(h, base);; i = (i + 1) & (h->index_cap - 1)) {
        uint32_t e = h->index[i];
        if (!e)
            return NONE;
        if (h->slots[e - 1].base == base)
            return e - 1;
    }
}

static void index_put(tgl__handles *h, uint32_t slot)
{
    uint32_t i = hash_slot(h, h->slots[slot].base);
    while (h->index[i])
        i = (i + 1) & (h->index_cap - 1);
    h->index[i] = slot + 1;
}

/* Linear probing's deletion: later entries of the run move back into the hole when their home
 * position does not lie cyclically in (hole, their position]. */
static void index_remove(tgl__handles *h, uint64_t base)
{
    uint32_t mask = h->index_cap - 1, i = hash_slot(h, base);
    while (h->slots[h->index[i] - 1].base != base)
        i = (i + 1) & mask;
    uint32_t hole = i;
    for (uint32_t j = (hole + 1) & mask; h->index[j]; j = (j + 1) & mask) {
        uint32_t home = hash_slot(h, h->slots[h->index[j] - 1].base);
        int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            h->index[hole] = h->index[j];
            hole = j;
        }
    }
    h->index[hole] = 0;
}

/* Room in the index for one more live allocation (at most half full). */
static int index_reserve(tgl__handles *h)
{
    if ((uint64_t)(h->live + 1) * 2 <= h->index_cap)
        return 1;
    uint32_t cap = h->index_cap ? h->index_cap * 2 : 128;
    uint32_t *grown = calloc(cap, sizeof *grown);
    if (!grown)
        return 0;
    free(h->index);
    h->index = grown;
    h->index_cap = cap;
    for (uint32_t s = 0; s < h->count; s++)
        if (h->slots[s].buf)
            index_put(h, s);
    return 1;
}

void tgl__handles_init(tgl__handles *h)
{
    *h = (tgl__handles){.free_head = NONE, .free_tail = NONE};
}

void tgl__handles_fini(tgl__handles *h)
{
    free(h->slots);
    free(h->index);
    *h = (tgl__handles){.free_head = NONE, .free_tail = NONE};
}

/* Finds the slot p names, or why it names none. */
static tgl__handle_result decode(const tgl__handles *h, uint64_t p, uint32_t *slot_out)
{
    if (p == 0)
        return TGL__HANDLE_NULL;
    if (!(p & MARKER))
        return TGL__HANDLE_UNKNOWN;
    uint64_t base = tgl__ptr_base(p);
    uint32_t slot = find(h, base);
    if (slot == NONE) {
        for (uint32_t i = 0; i < TGL__FREED_MEMORY; i++)
            if (h->freed[i] == base)
                return TGL__HANDLE_FREED;
        return TGL__HANDLE_UNKNOWN;
    }
    *slot_out = slot;
    return TGL__HANDLE_OK;
}

tgl__handle_result tgl__handles_insert(tgl__handles *h, void *buf, uint64_t bytes, uint64_t *out)
{
    if (bytes > TGL__MAX_ALLOC_BYTES || h->live >= TGL__MAX_SLOTS || !index_reserve(h))
        return TGL__HANDLE_FULL;
    uint32_t slot;
    if (h->free_head != NONE) {
        slot = h->free_head;
        h->free_head = h->slots[slot].next_free;
        if (h->free_head == NONE)
            h->free_tail = NONE;
    } else {
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
    }
    int k = size_class(bytes);
    uint64_t base;
    do { /* an id in use here again (2^(57 - k) allocations of its class later): the next one */
        uint64_t seq = atomic_fetch_add(&class_seq[k], 1);
        uint64_t id = (seq * spread_inverse() + class_salt(k)) & low_mask(TGL__CLASS_SHIFT - k);
        base = MARKER | ((uint64_t)k << TGL__CLASS_SHIFT) | (id << k);
    } while (find(h, base) != NONE);
    h->slots[slot] = (tgl__slot){.buf = buf, .bytes = bytes, .base = base, .next_free = NONE};
    h->live++;
    index_put(h, slot);
    *out = base;
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
    uint64_t off = p - s->base;
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
    tgl__slot *s = &h->slots[slot];
    if (p != s->base)
        return TGL__HANDLE_NOT_BASE;
    *buf = s->buf;
    index_remove(h, s->base);
    h->freed[h->freed_next] = s->base;
    h->freed_next = (h->freed_next + 1) % TGL__FREED_MEMORY;
    s->buf = NULL;
    s->base = 0;
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
            fn(ctx, h->slots[i].base, h->slots[i].bytes);
}

const char *tgl__handle_result_string(tgl__handle_result r)
{
    switch (r) {
    case TGL__HANDLE_OK: return "valid";
    case TGL__HANDLE_NULL: return "is null";
    case TGL__HANDLE_UNKNOWN: return "names no live allocation of this backend (another backend's, made up, or freed)";
    case TGL__HANDLE_FREED: return "points into a freed allocation";
    case TGL__HANDLE_RANGE: return "range runs past the end of its allocation";
    case TGL__HANDLE_NOT_BASE: return "is not the base address of an allocation";
    case TGL__HANDLE_FULL: return "handle table is full";
    }
    return "invalid";
}
