#version 430
// tgl_sort and tgl_topk of a long line (gl_sort.c; tgl__sort in src/core/internal.h): a
// least-significant-digit radix sort of the line's (key, position) pairs, held as an array of
// keys (bases u_keys, u_keys_out) and one of positions (u_pos, u_pos_out), one digit of 4 bits
// a pass ((key >> u_shift) & 15). Each pass is stable, so the order is the network's in
// sort.comp: key, then position (the stable sort's). The host runs one line (u_line0) as a group
// of its own, whose box starts at the line: its offsets are the bases themselves.
//   RLOAD: an invocation per element p of the line: its key (sort_line.glsl's; complemented for
//     descending sorts) and p into the first arrays.
//   RCOUNT: a workgroup per tile of TILE pairs: how many of the tile's keys have each digit, into
//     word u_counts + digit * u_tiles + tile of the keys' buffer (after the keys). The host then
//     makes those counts their inclusive prefix sums in that order (tgl_cumsum's scan).
//   RSCATTER: a workgroup per tile: each pair to its place in the next arrays: after every pair
//     of a smaller digit and those of its digit in earlier tiles (the prefix sum less the tile's
//     own count), and those of its digit before it in the tile (prefix sums over the tile's
//     invocations, each holding ITEMS consecutive pairs, then over its own). STAGED (the
//     profile's radix_staged: GPUs): the pairs go first to their places in the tile, in digit
//     order, in shared memory, keys then positions through one array, and from there in order to
//     the next arrays, so that neighbouring invocations write neighbouring words (a digit's run
//     of a tile is one stretch of its output), where an invocation's own ITEMS pairs land far
//     apart. WIDE (the profile's radix_bits 8: GPUs): digits of 8 bits, half the passes; RCOUNT
//     counts a tile's keys per digit with shared-memory atomics, and RSCATTER puts the tile in
//     digit order in shared memory in two stable steps of 4 bits (the tile sorted by the digit's
//     low half, then by its high half), each placed as STAGED places 4-bit digits, and writes
//     each run of a digit from its first slot on.
//   RSTORE: an invocation per output p (the first u_k): in's element at the pair's position into
//     values, the position into indices (sort_line.glsl's store_result).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 128
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"
#include "common/convert.glsl"

// Standalone (the file as written, without the host's defines): the scatter pass.
#if !defined(RLOAD) && !defined(RCOUNT) && !defined(RSCATTER) && !defined(RSTORE)
#define RSCATTER
#endif
#ifndef ITEMS // pairs per invocation in a tile (the profile's radix_items: 8 to 32)
#define ITEMS 8
#endif
#define DIGITS 16u // of 4 bits: a tile's counts by invocation, a WIDE digit's halves
#ifdef WIDE
#define DIGIT_MASK 255u
#else
#define DIGIT_MASK 15u
#endif
#define TILE (uint(TGL_WG_SIZE) * uint(ITEMS))

#if defined(RLOAD) || defined(RSTORE)
layout(std430, binding = 0) readonly buffer In { uint x[]; };
#define X_WORD(w) x[w]
#endif
#ifdef RLOAD
layout(std430, binding = 1) writeonly buffer KeysOut { uint ko[]; };
layout(std430, binding = 2) writeonly buffer PosOut { uint po[]; };
#elif defined(RSTORE)
layout(std430, binding = 1) readonly buffer Pos { uint pi[]; };
layout(std430, binding = 2) buffer Values { uint yv[]; };
layout(std430, binding = 3) buffer Indices { uint yi[]; };
#define SORT_LINE_STORE
#elif defined(RCOUNT)
layout(std430, binding = 0) buffer Keys { uint ki[]; };
#else
layout(std430, binding = 0) readonly buffer Keys { uint ki[]; };
layout(std430, binding = 1) readonly buffer Pos { uint pi[]; };
layout(std430, binding = 2) writeonly buffer KeysOut { uint ko[]; };
layout(std430, binding = 3) writeonly buffer PosOut { uint po[]; };
#endif
#include "tensor/sort_line.glsl"
layout(location = LOC_SRT_SHIFT) uniform uint u_shift;
layout(location = LOC_SRT_TILES) uniform uint u_tiles;
layout(location = LOC_SRT_KEYS) uniform uint u_keys;
layout(location = LOC_SRT_POS) uniform uint u_pos;
layout(location = LOC_SRT_KEYS_OUT) uniform uint u_keys_out;
layout(location = LOC_SRT_POS_OUT) uniform uint u_pos_out;
layout(location = LOC_SRT_COUNTS) uniform uint u_counts;

#ifdef WIDE
shared uint s_digit[DIGIT_MASK + 1u];
#endif

#if defined(RSCATTER) || (defined(RCOUNT) && !defined(WIDE))
// Per digit, per invocation, how many of its pairs have the digit ([digit][invocation]); then
// the exclusive prefix sums of those counts in that order. Entry i is at SC(i), a word skipped
// every 16: an invocation's 16 consecutive entries fall in 16 banks of their own, and the 32
// invocations of an NVIDIA warp in different ones (unpadded, 16 invocations shared a bank: a
// 16M sort's counting passes 4x slower on the H200).
#define SC(i) ((i) + ((i) >> 4))
shared uint s_count[SC(DIGITS * uint(TGL_WG_SIZE))];
shared uint s_part[TGL_WG_SIZE];
#ifdef RSCATTER
shared uint s_base[DIGITS]; // per digit, the prefix sum of the counts through this tile
#endif
#if defined(WIDE) && defined(RSCATTER)
// The tile's keys and positions by slot (a word skipped every 32: an invocation's ITEMS
// consecutive slots and 32 invocations' neighbouring ones fall in banks of their own), and per
// digit where its run of the tile's slots goes (RSCATTER) or how many keys have it (RCOUNT).
#define ST(i) ((i) + ((i) >> 5))
shared uint s_k[ST(TILE)], s_p[ST(TILE)];
#elif defined(STAGED)
shared uint s_stage[TILE]; // the tile's keys, then its positions, in the order they leave
#endif

// An invocation's counts (up to ITEMS each) packed a byte a digit: digit d at byte d & 3 of
// word d >> 2.
uint packed_count(uvec4 c, uint d)
{
    return (c[d >> 2] >> (8u * (d & 3u))) & 0xFFu;
}

// s_count made its exclusive prefix sums (each invocation sums DIGITS consecutive entries,
// then the invocations' sums are scanned); returns the tile's pairs (uniform control flow).
uint tile_prefix_sums()
{
    uint lane = gl_LocalInvocationID.x, first = lane * DIGITS, sum = 0u;
    for (uint e = 0u; e < DIGITS; e++)
        sum += s_count[SC(first + e)];
    s_part[lane] = sum;
    memoryBarrierShared();
    barrier();
    for (uint off = 1u; off < uint(TGL_WG_SIZE); off <<= 1) {
        uint add = lane >= off ? s_part[lane - off] : 0u;
        barrier();
        s_part[lane] += add;
        memoryBarrierShared();
        barrier();
    }
    uint run = s_part[lane] - sum;
    for (uint e = 0u; e < DIGITS; e++) {
        uint c = s_count[SC(first + e)];
        s_count[SC(first + e)] = run;
        run += c;
    }
    memoryBarrierShared();
    barrier();
    return s_part[uint(TGL_WG_SIZE) - 1u];
}

// How many of the tile's pairs have digit d (after tile_prefix_sums; total the tile's pairs).
uint tile_digit_count(uint d, uint total)
{
    uint next = d + 1u < DIGITS ? s_count[SC((d + 1u) * uint(TGL_WG_SIZE))] : total;
    return next - s_count[SC(d * uint(TGL_WG_SIZE))];
}
#endif

#if defined(WIDE) && defined(RSCATTER)
// The slots of this invocation's first `valid` keys in the tile ordered by (key >> sh) & 15,
// stably (by invocation, then item); returns the tile's valid keys (uniform control flow).
uint nibble_slots(uint key[ITEMS], uint sh, uint valid, out uint slot[ITEMS])
{
    uint lane = gl_LocalInvocationID.x;
    uvec4 c = uvec4(0u);
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint d = (key[j] >> sh) & 15u;
        c[d >> 2] += j < valid ? 1u << (8u * (d & 3u)) : 0u;
    }
    for (uint d = 0u; d < DIGITS; d++)
        s_count[SC(d * uint(TGL_WG_SIZE) + lane)] = packed_count(c, d);
    memoryBarrierShared();
    barrier();
    uint total = tile_prefix_sums();
    c = uvec4(0u);
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint d = (key[j] >> sh) & 15u;
        slot[j] = s_count[SC(d * uint(TGL_WG_SIZE) + lane)] + packed_count(c, d);
        c[d >> 2] += 1u << (8u * (d & 3u));
    }
    return total;
}
#endif

void main()
{
#if defined(WIDE) && defined(RCOUNT)
    if (tgl_group_index() >= u_n)
        return; // a whole workgroup: uniform
    uint tile = u_start + tgl_group_index(), lane = gl_LocalInvocationID.x;
    for (uint e = lane; e <= DIGIT_MASK; e += uint(TGL_WG_SIZE))
        s_digit[e] = 0u;
    memoryBarrierShared();
    barrier();
    // One atomic per distinct digit of an invocation's ITEMS keys, by the first key with it
    // (keys of one digit are common: the top digit of floats of one range is a few values, and
    // one address's atomics in a subgroup wait on each other).
    uint first = tile * TILE + lane * uint(ITEMS), last = u_len - 1u, d[ITEMS];
    for (uint j = 0u; j < uint(ITEMS); j++)
        d[j] = (ki[u_keys + min(first + j, last)] >> u_shift) & DIGIT_MASK;
    uint valid = first <= last ? min(uint(ITEMS), last - first + 1u) : 0u;
    for (uint j = 0u; j < uint(ITEMS); j++) {
        bool leads = j < valid;
        uint n = 1u;
        for (uint m = 0u; m < uint(ITEMS); m++) {
            leads = leads && (m >= j || d[m] != d[j]);
            n += m > j && m < valid && d[m] == d[j] ? 1u : 0u;
        }
        if (leads)
            atomicAdd(s_digit[d[j]], n);
    }
    memoryBarrierShared();
    barrier();
    for (uint e = lane; e <= DIGIT_MASK; e += uint(TGL_WG_SIZE))
        ki[u_counts + e * u_tiles + tile] = s_digit[e];
#elif defined(WIDE) // RSCATTER
    if (tgl_group_index() >= u_n)
        return; // a whole workgroup: uniform
    uint tile = u_start + tgl_group_index(), lane = gl_LocalInvocationID.x;
    uint first = tile * TILE + lane * uint(ITEMS), last = u_len - 1u, key[ITEMS], pos[ITEMS], slot[ITEMS];
    for (uint j = 0u; j < uint(ITEMS); j++) {
        key[j] = ki[u_keys + min(first + j, last)];
        pos[j] = pi[u_pos + min(first + j, last)];
    }
    // each digit's output start for this tile: the pairs of smaller digits and of this digit in
    // earlier tiles (the counts' inclusive prefix sums in digit-major order, at the entry before)
    for (uint e = lane; e <= DIGIT_MASK; e += uint(TGL_WG_SIZE)) {
        uint at = e * u_tiles + tile;
        s_digit[e] = at > 0u ? ki[u_counts + at - 1u] : 0u;
    }
    uint valid = first <= last ? min(uint(ITEMS), last - first + 1u) : 0u;
    uint total = nibble_slots(key, u_shift, valid, slot);
    for (uint j = 0u; j < uint(ITEMS); j++)
        if (j < valid) {
            s_k[ST(slot[j])] = key[j];
            s_p[ST(slot[j])] = pos[j];
        }
    memoryBarrierShared();
    barrier();
    // the high half: this invocation's ITEMS consecutive slots of the low half's order
    uint mine = lane * uint(ITEMS);
    for (uint j = 0u; j < uint(ITEMS); j++) {
        key[j] = s_k[ST(min(mine + j, TILE - 1u))];
        pos[j] = s_p[ST(min(mine + j, TILE - 1u))];
    }
    valid = total > mine ? min(uint(ITEMS), total - mine) : 0u;
    nibble_slots(key, u_shift + 4u, valid, slot); // its barriers end every read of s_k and s_p
    for (uint j = 0u; j < uint(ITEMS); j++)
        if (j < valid) {
            s_k[ST(slot[j])] = key[j];
            s_p[ST(slot[j])] = pos[j];
        }
    memoryBarrierShared();
    barrier();
    // the slot that starts a digit's run makes the digit's start the run's offset
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint i = j * uint(TGL_WG_SIZE) + lane;
        if (i < total) {
            uint d = (s_k[ST(i)] >> u_shift) & DIGIT_MASK;
            // (slot 0's neighbour read from slot 0 itself: llvmpipe may load under a false branch)
            if (i == 0u || ((s_k[ST(max(i, 1u) - 1u)] >> u_shift) & DIGIT_MASK) != d)
                s_digit[d] -= i;
        }
    }
    memoryBarrierShared();
    barrier();
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint i = j * uint(TGL_WG_SIZE) + lane;
        if (i < total) {
            uint k = s_k[ST(i)], to = s_digit[(k >> u_shift) & DIGIT_MASK] + i;
            ko[u_keys_out + to] = k;
            po[u_pos_out + to] = s_p[ST(i)];
        }
    }
#elif defined(RCOUNT) || defined(RSCATTER)
    if (tgl_group_index() >= u_n)
        return; // a whole workgroup: uniform
    uint tile = u_start + tgl_group_index(), lane = gl_LocalInvocationID.x;
    uint first = tile * TILE + lane * uint(ITEMS); // this invocation's pairs: ITEMS from here
    // the pairs' keys are read twice (before the tile's sums and after) rather than held across
    // its barriers: llvmpipe keeps what lives across a barrier in each coroutine's frame, which
    // it allocates per workgroup (at ITEMS 32, held keys took the frames past malloc's mmap
    // threshold: a map and unmap per workgroup, a 1M sort 4x slower)
    // (the loads ahead of the counting, none under a branch: a tile's past the line reads the
    // line's last key and counts nothing)
    uint last = u_len - 1u, key[ITEMS];
    for (uint j = 0u; j < uint(ITEMS); j++)
        key[j] = ki[u_keys + min(first + j, last)];
    uvec4 c = uvec4(0u);
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint d = (key[j] >> u_shift) & 15u;
        c[d >> 2] += first + j <= last ? 1u << (8u * (d & 3u)) : 0u;
    }
#ifdef RSCATTER
    if (lane < DIGITS)
        s_base[lane] = ki[u_counts + lane * u_tiles + tile];
#endif
    for (uint d = 0u; d < DIGITS; d++)
        s_count[SC(d * uint(TGL_WG_SIZE) + lane)] = packed_count(c, d);
    memoryBarrierShared();
    barrier();
    uint total = tile_prefix_sums();
#ifdef RCOUNT
    if (lane < DIGITS)
        ki[u_counts + lane * u_tiles + tile] = tile_digit_count(lane, total);
#else
    uint pos[ITEMS];
    for (uint j = 0u; j < uint(ITEMS); j++) {
        key[j] = ki[u_keys + min(first + j, last)];
        pos[j] = pi[u_pos + min(first + j, last)];
    }
    c = uvec4(0u);
#ifdef STAGED
    // Slot i of the tile in digit order (its pairs of smaller digits, then digit d's by
    // invocation and item) goes to s_base[d] + i once s_base holds the digit's output start
    // less its first slot (wrapping arithmetic: the sum is the place).
    if (lane < DIGITS)
        s_base[lane] -= tile_digit_count(lane, total) + s_count[SC(lane * uint(TGL_WG_SIZE))];
    uint slot[ITEMS], to[ITEMS];
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint d = (key[j] >> u_shift) & 15u;
        slot[j] = s_count[SC(d * uint(TGL_WG_SIZE) + lane)] + packed_count(c, d);
        c[d >> 2] += 1u << (8u * (d & 3u));
        if (first + j <= last)
            s_stage[slot[j]] = key[j];
    }
    memoryBarrierShared();
    barrier();
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint i = j * uint(TGL_WG_SIZE) + lane, k = s_stage[min(i, TILE - 1u)];
        to[j] = s_base[(k >> u_shift) & 15u] + i;
        if (i < total)
            ko[u_keys_out + to[j]] = k;
    }
    barrier(); // every key read before the positions overwrite them
    for (uint j = 0u; j < uint(ITEMS); j++)
        if (first + j <= last)
            s_stage[slot[j]] = pos[j];
    memoryBarrierShared();
    barrier();
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint i = j * uint(TGL_WG_SIZE) + lane;
        if (i < total)
            po[u_pos_out + to[j]] = s_stage[i];
    }
#else
    for (uint j = 0u; j < uint(ITEMS); j++) {
        uint d = (key[j] >> u_shift) & 15u, at = d * uint(TGL_WG_SIZE);
        // the pairs before: smaller digits and this digit's in earlier tiles, then this digit's
        // in earlier invocations of the tile, then in this invocation
        uint to = s_base[d] - tile_digit_count(d, total) + (s_count[SC(at + lane)] - s_count[SC(at)]) +
                  packed_count(c, d);
        c[d >> 2] += 1u << (8u * (d & 3u));
        if (first + j <= last) {
            ko[u_keys_out + to] = key[j];
            po[u_pos_out + to] = pos[j];
        }
    }
#endif
#endif
#else
    uint g = tgl_global_index();
    if (g >= u_n)
        return;
    g += u_start;
#ifdef RLOAD
    uint key = sort_key(LOAD_DATA(u_in_base + g * u_in_step));
    ko[u_keys_out + g] = u_desc != 0u ? ~key : key;
    po[u_pos_out + g] = g;
#else // RSTORE
    store_result(uvec3(u_in_base, u_v_base, u_i_base), g, pi[u_pos + g]);
#endif
#endif
}
