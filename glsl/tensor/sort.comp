#version 430
// tgl_sort and tgl_topk (tgl__sort in src/core/internal.h; src/cpu/cpu_sort.c gives the same
// order): a group of lines, each of u_len elements padded to P = 2^u_log_p, is a run of (key,
// position) pairs in the temporary buffer, line after line (u_temp_base: the group's first, in
// pairs). A bitonic network over each line sorts the pairs by key then position, a total order,
// so the result is the stable sort's; padding pairs (all ones) sort after every real one.
//   LOAD: an invocation per pair slot: the key of in's element (DTYPE) at its position, or
//     padding past u_len. Descending sorts complement the key.
//   LOCAL: a workgroup per block of BLOCK slots in shared memory: with u_size 0 every
//     stage of sizes up to the block's (or P), else the stages of size u_size with strides below
//     the block.
//   GLOBAL: an invocation per pair of slots: one stage (u_size, u_stride) of the network.
//   GLOBAL3: an invocation per eight slots, u_stride / 4 apart: the three stages of strides
//     u_stride, u_stride / 2 and u_stride / 4 (the eight are closed under them), in registers.
//   STORE: an invocation per output element (the first u_k of each line): in's element at the
//     pair's position into values (DTYPE; bool as 0 or 1), the position into indices (i32),
//     where u_has says (bit 0 values, bit 1 indices).
//   TOPK (tgl_topk of a line longer than a block, u_k below u_minima / 2; no temporary buffer):
//     a workgroup per line, selecting before it sorts. The line's elements fall into u_minima
//     sets (a power of two, at most CAP; set j: the elements j, j + u_minima, ...); the u_k-th
//     smallest of their minima bounds the u_k-th smallest key t from above (those u_k minima
//     are elements), so the keys <= t, the candidates, hold the answer: about 1.4 to 2.8 u_k of
//     them on random data, u_minima being 2 to 4 u_k. QUADS (4-byte elements one step apart):
//     sets of quads of words instead, read four at a time. Up to CAP candidates (random data: about u_k) are gathered in shared memory in
//     one pass over the line, sorted there by the same order and the first u_k written as STORE
//     does. More (ties, or data arranged against the bound) take the exact u_k-th key by
//     bisection on the key's bits (a count a step, 32 at most), then every key below it and the
//     first of the keys equal to it in line order, u_k in all. TGL_TEX: in read as R32UI texels
//     (llvmpipe).
// A line's direction comes from the slot's place in its line, p & size (P: all ascending at
// the last size). In LOAD and STORE the coordinates of line u_line0 + l are taken from the
// group's box (origin u_lo, strides two's complement), as the other descriptor kernels do.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"
#include "common/convert.glsl"

// Standalone (the file as written, without the host's defines): the global stage.
#if !defined(LOAD) && !defined(LOCAL) && !defined(GLOBAL) && !defined(GLOBAL3) && !defined(STORE)
#define GLOBAL
#endif
#ifndef BLOCK // the local stages' pairs in shared memory (the host's SORT_BLOCK; TOPK's TOPK_CAP)
#define BLOCK 2048
#endif

// TOPK's QUADS (4-byte elements one step apart): the line's hot passes take four words a read,
// X_QUAD(q) words 4q to 4q + 3 (TGL_TEX: one RGBA32UI texel).
#if defined(TOPK) && defined(TGL_TEX) && defined(QUADS)
#include "common/texel.glsl"
TGL_UTEXTURE(LOC_TEXTURE0, 0, x_tex, rgba32ui);
#define X_QUAD(q) TGL_UREAD(x_tex, q)
#define X_WORD(w) TGL_UREAD(x_tex, (w) >> 2)[(w) & 3u]
#elif defined(TOPK) && defined(TGL_TEX)
#include "common/texel.glsl"
TGL_UTEXTURE(LOC_TEXTURE0, 0, x_tex, r32ui);
#define X_WORD(w) TGL_UREAD(x_tex, w).x
#elif defined(LOAD) || defined(STORE) || defined(TOPK)
layout(std430, binding = 0) readonly buffer In { uint x[]; };
#define X_WORD(w) x[w]
#define X_QUAD(q) uvec4(x[4u * (q)], x[4u * (q) + 1u], x[4u * (q) + 2u], x[4u * (q) + 3u])
#endif
#if defined(LOAD) || defined(STORE)
layout(std430, binding = 1) buffer Temp { uvec2 tw[]; };
#elif !defined(TOPK)
layout(std430, binding = 0) buffer Temp { uvec2 tw[]; };
#endif
#if defined(STORE) || defined(TOPK)
layout(std430, binding = 2) buffer Values { uint yv[]; };
layout(std430, binding = 3) buffer Indices { uint yi[]; };
#endif
#if defined(STORE) || defined(TOPK)
#define SORT_LINE_STORE
#endif
#include "tensor/sort_line.glsl"

// a before b in the order: key, then position
bool before(uvec2 a, uvec2 b)
{
    return a.x < b.x || (a.x == b.x && a.y < b.y);
}

#ifdef TOPK
#define CAP BLOCK // the candidates shared memory holds (the host's TOPK_CAP), at least a workgroup
#include "common/group.glsl"
shared uvec2 s_pair[CAP];
shared uint s_u[TGL_WG_SIZE];
shared uint s_count;
TGL_DEFINE_GROUP_REDUCE(uint, s_u, group_usum, TGL_ADD)

// An element's key (its bits v) in the ascending order the line is taken in (descending:
// complemented).
uint key_of(uint v)
{
    uint k = sort_key(v);
    return u_desc != 0u ? ~k : k;
}

// Element p's key.
uint key_at(uint o, uint p)
{
    return key_of(LOAD_DATA(o + p * u_in_step));
}

// How many of the line's keys are <= t (uniform control flow).
uint count_le(uint o, uint t)
{
    uint c = 0u;
    for (uint p = gl_LocalInvocationID.x; p < u_len; p += uint(TGL_WG_SIZE))
        c += key_at(o, p) <= t ? 1u : 0u;
    return group_usum(c);
}

// Sorts s_pair[0, n) by before() (n a power of two, at most CAP; uniform control flow).
void sort_shared(uint n)
{
    for (uint size = 2u; size <= n; size <<= 1)
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            for (uint t = gl_LocalInvocationID.x; t < n / 2u; t += uint(TGL_WG_SIZE)) {
                uint i = ((t & ~(stride - 1u)) << 1) | (t & (stride - 1u)), j = i + stride;
                bool asc = (i & size) == 0u;
                uvec2 a = s_pair[i], b = s_pair[j];
                if (asc ? before(b, a) : before(a, b)) {
                    s_pair[i] = b;
                    s_pair[j] = a;
                }
            }
            memoryBarrierShared();
            barrier();
        }
}

// The exclusive prefix sum of one value per invocation in invocation order, *total the sum
// (uniform control flow).
uint group_exclusive(uint v, out uint total)
{
    uint lane = gl_LocalInvocationID.x;
    barrier();
    s_u[lane] = v;
    memoryBarrierShared();
    barrier();
    for (uint off = 1u; off < uint(TGL_WG_SIZE); off <<= 1) {
        uint before_ = lane >= off ? s_u[lane - off] : 0u;
        barrier();
        s_u[lane] += before_;
        memoryBarrierShared();
        barrier();
    }
    total = s_u[uint(TGL_WG_SIZE) - 1u];
    return s_u[lane] - v;
}

void topk_line(uint l)
{
    const uint wg = uint(TGL_WG_SIZE);
    uint lane = gl_LocalInvocationID.x;
    uvec3 o = line_offsets(l);
#ifdef QUADS
    // the quads of words the line touches, q0 the first: element p is word p + o.x of them,
    // quad (p + o.x) / 4; the host asks for at least u_minima + 2 quads, so each set holds a
    // quad inside the line
    uint q0 = o.x >> 2, nq = ((o.x + u_len + 3u) >> 2) - q0;
#endif
    // the smallest key of each set (none is empty), in set order on ties
    for (uint j = lane; j < u_minima; j += wg) {
        uint m = 0xFFFFFFFFu;
#ifdef QUADS // set j: the quads j, j + u_minima, ...
        for (uint qi = j; qi < nq; qi += u_minima) {
            uvec4 w = X_QUAD(q0 + qi);
            for (uint c = 0u; c < 4u; c++) // (a word outside the line: 4 (q0 + qi) + c - o.x wraps past u_len)
                m = min(m, 4u * (q0 + qi) + c - o.x < u_len ? key_of(w[c]) : 0xFFFFFFFFu);
        }
#else // set j: the elements j, j + u_minima, ...
        for (uint p = j; p < u_len; p += u_minima)
            m = min(m, key_at(o.x, p));
#endif
        s_pair[j] = uvec2(m, j);
    }
    memoryBarrierShared();
    barrier();
    sort_shared(u_minima);
    uint t = s_pair[u_k - 1u].x, lowest = s_pair[0].x;
    barrier(); // every invocation has read t
    if (lane == 0u)
        s_count = 0u;
    memoryBarrierShared();
    barrier();
#ifdef QUADS
    for (uint qi = lane; qi < nq; qi += wg) { // the candidates, as many as there is room for
        uvec4 w = X_QUAD(q0 + qi), k, p = uvec4(4u * (q0 + qi) - o.x) + uvec4(0u, 1u, 2u, 3u);
        bvec4 take;
        for (uint c = 0u; c < 4u; c++) {
            k[c] = key_of(w[c]);
            take[c] = p[c] < u_len && k[c] <= t;
        }
        uint n4 = uint(take.x) + uint(take.y) + uint(take.z) + uint(take.w);
        if (n4 > 0u) { // one atomic a quad: llvmpipe runs it for every lane under a mask
            uint at = atomicAdd(s_count, n4);
            for (uint c = 0u; c < 4u; c++)
                if (take[c]) {
                    if (at < uint(CAP))
                        s_pair[at] = uvec2(k[c], p[c]);
                    at++;
                }
        }
    }
#else
    for (uint p = lane; p < u_len; p += wg) { // the candidates, as many as there is room for
        uint k = key_at(o.x, p);
        if (k <= t) {
            uint at = atomicAdd(s_count, 1u);
            if (at < uint(CAP))
                s_pair[at] = uvec2(k, p);
        }
    }
#endif
    memoryBarrierShared();
    barrier();
    uint n = s_count;
    if (n > uint(CAP)) { // uniform: the exact path
        uint lo = lowest, hi = t; // the smallest key with at least u_k keys <= it: the u_k-th
        while (lo < hi) {
            uint mid = lo + (hi - lo) / 2u;
            if (count_le(o.x, mid) >= u_k)
                hi = mid;
            else
                lo = mid + 1u;
        }
        t = hi;
        barrier(); // every invocation has read s_count
        if (lane == 0u)
            s_count = 0u;
        memoryBarrierShared();
        barrier();
        for (uint p = lane; p < u_len; p += wg) { // every key below t: fewer than u_k
            uint k = key_at(o.x, p);
            if (k < t)
                s_pair[atomicAdd(s_count, 1u)] = uvec2(k, p);
        }
        memoryBarrierShared();
        barrier();
        n = s_count;
        for (uint p0 = 0u; p0 < u_len && n < u_k; p0 += wg) { // then the keys equal to t in line order
            uint p = p0 + lane, total;
            bool eq = p < u_len && key_at(o.x, p) == t;
            uint at = n + group_exclusive(eq ? 1u : 0u, total);
            if (eq && at < u_k)
                s_pair[at] = uvec2(t, p);
            n = min(n + total, u_k);
        }
        memoryBarrierShared();
        barrier();
    }
    uint size = 1u;
    while (size < n)
        size <<= 1;
    for (uint q = n + lane; q < size; q += wg)
        s_pair[q] = uvec2(0xFFFFFFFFu); // after every real pair
    memoryBarrierShared();
    barrier();
    sort_shared(size);
    for (uint q = lane; q < u_k; q += wg)
        store_result(o, q, s_pair[q].y);
}
#endif

#ifdef GLOBAL3
// e[a], e[b] in the direction asc
#define EXCHANGE(a, b)                                   \
    if (asc ? before(e[b], e[a]) : before(e[a], e[b])) { \
        uvec2 t_ = e[a];                                 \
        e[a] = e[b];                                     \
        e[b] = t_;                                       \
    }
#endif

#ifdef LOCAL
shared uvec2 sh[BLOCK];

void stage(uint first, uint size, uint stride)
{
    uint p_mask = (1u << u_log_p) - 1u;
    for (uint t = gl_LocalInvocationID.x; t < uint(BLOCK / 2); t += uint(TGL_WG_SIZE)) {
        uint i = ((t & ~(stride - 1u)) << 1) | (t & (stride - 1u)), j = i + stride;
        bool asc = (((first + i) & p_mask) & size) == 0u;
        uvec2 a = sh[i], b = sh[j];
        if (asc ? before(b, a) : before(a, b)) {
            sh[i] = b;
            sh[j] = a;
        }
    }
    barrier();
}
#endif

void main()
{
#ifdef TOPK
    uint l = tgl_group_index();
    if (l >= u_n)
        return; // a whole workgroup: uniform
    topk_line(u_start + l);
#elif defined(LOCAL)
    uint first = (u_start + tgl_group_index()) * uint(BLOCK); // the block's first slot
    for (uint e = gl_LocalInvocationID.x; e < uint(BLOCK); e += uint(TGL_WG_SIZE))
        sh[e] = first + e < u_n ? tw[u_temp_base + first + e] : uvec2(0xFFFFFFFFu);
    barrier();
    uint p = 1u << u_log_p, top = min(p, uint(BLOCK));
    if (u_size == 0u) {
        for (uint size = 2u; size <= top; size <<= 1)
            for (uint stride = size >> 1; stride > 0u; stride >>= 1)
                stage(first, size, stride);
    } else {
        for (uint stride = min(u_size, uint(BLOCK)) >> 1; stride > 0u; stride >>= 1)
            stage(first, u_size, stride);
    }
    for (uint e = gl_LocalInvocationID.x; e < uint(BLOCK); e += uint(TGL_WG_SIZE))
        if (first + e < u_n)
            tw[u_temp_base + first + e] = sh[e];
#else
    uint g = tgl_global_index();
    if (g >= u_n)
        return;
    g += u_start;
#if defined(GLOBAL)
    uint q = g & ((1u << (u_log_p - 1u)) - 1u), line = g >> (u_log_p - 1u);
    uint i = ((q & ~(u_stride - 1u)) << 1) | (q & (u_stride - 1u)), j = i + u_stride;
    bool asc = (i & u_size) == 0u; // (i < P: every line ascending at the last size)
    uint base = u_temp_base + (line << u_log_p);
    uvec2 a = tw[base + i], b = tw[base + j];
    if (asc ? before(b, a) : before(a, b)) {
        tw[base + i] = b;
        tw[base + j] = a;
    }
#elif defined(GLOBAL3)
    uint q = g & ((1u << (u_log_p - 3u)) - 1u), line = g >> (u_log_p - 3u);
    uint low = u_stride >> 2; // the eight slots' spacing
    uint i = ((q & ~(low - 1u)) << 3) | (q & (low - 1u));
    bool asc = (i & u_size) == 0u;
    uint base = u_temp_base + (line << u_log_p) + i;
    uvec2 e[8];
    for (uint j = 0u; j < 8u; j++)
        e[j] = tw[base + j * low];
    EXCHANGE(0, 4) EXCHANGE(1, 5) EXCHANGE(2, 6) EXCHANGE(3, 7)
    EXCHANGE(0, 2) EXCHANGE(1, 3) EXCHANGE(4, 6) EXCHANGE(5, 7)
    EXCHANGE(0, 1) EXCHANGE(2, 3) EXCHANGE(4, 5) EXCHANGE(6, 7)
    for (uint j = 0u; j < 8u; j++)
        tw[base + j * low] = e[j];
#elif defined(LOAD)
    uint l = g >> u_log_p, p = g & ((1u << u_log_p) - 1u);
    uvec2 r = uvec2(0xFFFFFFFFu);
    if (p < u_len) {
        uint key = sort_key(LOAD_DATA(line_offsets(l).x + p * u_in_step));
        r = uvec2(u_desc != 0u ? ~key : key, p);
    }
    tw[u_temp_base + g] = r;
#else // STORE
    uint l = g / u_k, p = g - l * u_k;
    store_result(line_offsets(l), p, tw[u_temp_base + (l << u_log_p) + p].y);
#endif
#endif
}
