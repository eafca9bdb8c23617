#version 430
// The scans (tgl_cumsum, tgl_cumprod, tgl_cummax, tgl_cummin; SCAN_OP 0..3) along lines of u_len
// elements, u_step apart in in and u_out_step in out (u_idx_step in the i32 indices of cummax
// and cummin, where u_has_idx), over an index space of u_ndim dims (each operand's strides over
// it in u_*_stride). A workgroup per segment: segment s is chunk s % u_chunks (u_chunk elements)
// of line s / u_chunks of this box. Pass 0 (lines cut into several chunks) writes each chunk's
// combination to tot[s]; pass 1 scans each chunk, starting from the combination of the line's
// earlier chunks' totals. Inside a chunk, tiles of TGL_WG_SIZE * SCAN_K elements staged through
// shared memory: each invocation combines SCAN_K consecutive elements, the workgroup scans those
// partials in shared memory (Hillis-Steele; SCAN_SG: through subgroup shuffles), then each
// invocation walks its elements again from its prefix. So an
// element reaches an f32 output through at most SCAN_K + tiles + log2(wg) roundings in its
// chunk's total, chunks / wg + log2(wg) in the carry and tiles + SCAN_K + 1 in pass 1
// (docs/ops.md).
// Values: f32 bits for the float sums and products (IN_DTYPE 0 f32, 1 f16, 2 bf16; `precise`),
// uints for i32 (3) and bool (4, counted) sums and products (two's complement wrap); cummax and
// cummin carry (element bits, index) pairs compared through an integer key of the value, so no
// driver's float compare or flush decides: the larger (smaller) value wins, NaN above everything,
// the larger index on ties - an order that does not depend on how the pairs are grouped. An out
// element below 4 bytes is written by atomicAnd then atomicOr on its word. Each invocation reads
// only elements it writes itself, so out may be in.
// SCAN_QUADS (never staged; 32-bit in and out, lines of a multiple of 4 elements with step 1,
// every line starting on a 16-byte boundary of in's and out's windows: the host checks) reads
// and writes 4 elements a load and a store, in the same order of combines as the element walks,
// so the results are the same bits (a 16M cumsum on llvmpipe 89 -> 33 ms, on the H200 157 -> 82
// us; docs/ops.md).
// SCAN_ONE_PASS n (with SCAN_QUADS; chunks of at most n tiles, n a power of two; out sharing no byte
// with in) does both passes in one dispatch: a workgroup takes its segment from a ticket counter
// (so every earlier segment's workgroup has started), holds its chunk in registers, publishes
// the chunk's total tagged with the call's u_epoch (and, as a super-block's last chunk, the
// super-block's), gathers the totals of the line's earlier super-blocks and of its super-block's
// earlier chunks (line_carry: polled a bounded number of times, those that did not come computed
// by the workgroup itself) and scans from their combination: 128 MB moved for a 16M cumsum
// instead of 192. The last workgroup to finish sets the counters back to 0 for the next call.
#extension GL_GOOGLE_include_directive : enable
#ifndef SCAN_SG
#define SCAN_SG 0 // the subgroup size where the scan shuffles (0: shared memory)
#endif
#if SCAN_SG > 0
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/convert.glsl"
#include "common/precise.glsl"
#include "common/local_size.glsl"
#include "common/unroll.glsl"

#ifndef IN_DTYPE
#define IN_DTYPE 0
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#ifndef SCAN_OP
#define SCAN_OP 0
#endif
#ifndef SCAN_K
#define SCAN_K 8 // the profile's scan_items
#endif
#define PAIRS (SCAN_OP >= 2)
#define INTS (IN_DTYPE >= 3)

#if defined(SCAN_QUADS) && (defined(SCAN_STAGED) || IN_DTYPE == 1 || IN_DTYPE == 2 || IN_DTYPE == 4 || \
                            OUT_DTYPE == 1 || OUT_DTYPE == 2)
#error "SCAN_QUADS: unstaged, 32-bit in and out only"
#endif
#if defined(SCAN_ONE_PASS) && !defined(SCAN_QUADS)
#error "SCAN_ONE_PASS: with SCAN_QUADS only"
#endif
#ifdef SCAN_QUADS
#ifdef TGL_TEX // in as RGBA32UI texels (llvmpipe gathers them)
#include "common/texel.glsl"
TGL_UTEXTURE(LOC_TEXTURE0, 0, x_tex, rgba32ui);
#define X_QUAD(q) TGL_UREAD(x_tex, q)
#else
layout(std430, binding = 0) readonly buffer In { uvec4 x4[]; };
#define X_QUAD(q) x4[q]
#endif
layout(std430, binding = 1) buffer Out { uvec4 y4[]; };
#else
#ifdef TGL_TEX // in as R32UI texels (llvmpipe gathers them; each SSBO load is a loop over the lanes)
#include "common/texel.glsl"
TGL_UTEXTURE(LOC_TEXTURE0, 0, x_tex, r32ui);
#define X_WORD(w) TGL_UREAD(x_tex, w).x
#else
layout(std430, binding = 0) readonly buffer In { uint x[]; };
#define X_WORD(w) x[w]
#endif
layout(std430, binding = 1) buffer Out { uint y[]; };
#endif
layout(std430, binding = 2) buffer Idx { uint ix[]; };
#ifdef SCAN_ONE_PASS
// The ticket and finish counters (zero between calls), then per segment of the box 8 words:
// its chunk's total and super-block's (LB_CHUNK, LB_SUPER). Coherent: read while others write.
layout(std430, binding = 3) coherent volatile buffer Lookback { uint lb_ticket; uint lb_done; uint lb_pad[2]; uint lb[]; };
layout(location = LOC_SCAN_EPOCH) uniform uint u_epoch;
// Tiles a chunk holds at most: registers for them whatever the chunk's length, so the host asks
// for the fewest that hold this call's chunks.
#define ONE_PASS_TILES SCAN_ONE_PASS
#else
layout(std430, binding = 3) buffer Totals { uvec2 tot[]; };
#endif
layout(location = LOC_RDT_N) uniform uint u_n;         // segments of this dispatch
layout(location = LOC_RDT_START) uniform uint u_start; // the first one's index in the box
layout(location = LOC_RDT_NDIM) uniform uint u_ndim;
layout(location = LOC_RDT_LEN) uniform uint u_len;
layout(location = LOC_RDT_STEP) uniform uint u_step;
layout(location = LOC_RDT_IN_BASE) uniform uint u_in_base;
layout(location = LOC_RDT_OUT_BASE) uniform uint u_out_base;
layout(location = LOC_RDT_OUT_STEP) uniform uint u_out_step;
layout(location = LOC_SCAN_IDX_BASE) uniform uint u_idx_base;
layout(location = LOC_SCAN_IDX_STEP) uniform uint u_idx_step;
layout(location = LOC_SCAN_CHUNK) uniform uint u_chunk;
layout(location = LOC_SCAN_CHUNKS) uniform uint u_chunks;
layout(location = LOC_SCAN_PASS) uniform uint u_pass;
layout(location = LOC_SCAN_HAS_IDX) uniform uint u_has_idx;
layout(location = LOC_RDT_SHAPE) uniform uint u_shape[8];
layout(location = LOC_RDT_IN_STRIDE) uniform uint u_in_stride[8];
layout(location = LOC_RDT_OUT_STRIDE) uniform uint u_out_stride[8];
layout(location = LOC_SCAN_IDX_STRIDE) uniform uint u_idx_stride[8];

shared uvec2 s_scan[TGL_WG_SIZE];
#ifdef SCAN_STAGED
// SCAN_STAGED: a tile's elements' bits (then its outputs, then its indices) pass through shared
// memory so that the device reads and writes them coalesced (element q * wg + lane by invocation
// lane) while each invocation scans SCAN_K consecutive ones; a word of padding per 32 keeps
// those reads off one bank. Without it each invocation reads and writes its own elements.
#define TILE (TGL_WG_SIZE * SCAN_K)
shared uint s_tile[TILE + TILE / 32];
#define PADDED(i) ((i) + ((i) >> 5))
#endif

// The identity of the combine: 0, 1, or (the lowest / highest value of in's dtype, index 0),
// which every element's pair equals or beats.
uvec2 identity()
{
#if SCAN_OP == 0
    return uvec2(0u);
#elif SCAN_OP == 1
    return uvec2(INTS ? 1u : 0x3F800000u, 0u);
#else
    const bool lowest = SCAN_OP == 2;
#if IN_DTYPE == 0
    return uvec2(lowest ? 0xFF800000u : 0x7F800000u, 0u);
#elif IN_DTYPE == 1
    return uvec2(lowest ? 0xFC00u : 0x7C00u, 0u);
#elif IN_DTYPE == 2
    return uvec2(lowest ? 0xFF80u : 0x7F80u, 0u);
#else
    return uvec2(lowest ? 0x80000000u : 0x7FFFFFFFu, 0u);
#endif
#endif
}

#ifndef SCAN_QUADS
// Element e's bits (the low bits for 1- and 2-byte dtypes).
uint load_bits(uint e)
{
#if IN_DTYPE == 0 || IN_DTYPE == 3
    return X_WORD(e);
#elif IN_DTYPE == 4
    return (X_WORD(e >> 2) >> (8u * (e & 3u))) & 0xFFu;
#else
    return (X_WORD(e >> 1) >> (16u * (e & 1u))) & 0xFFFFu;
#endif
}
#endif

// Element k of a line, its bits loaded, as the combine's operand.
uvec2 operand(uint bits, uint k)
{
#if PAIRS
    return uvec2(bits, k);
#elif IN_DTYPE == 4
    return uvec2(bits != 0u ? 1u : 0u, 0u);
#elif INTS
    return uvec2(bits, 0u);
#else
    return uvec2(tgl_to_f32(bits, uint(IN_DTYPE)), 0u);
#endif
}

#if PAIRS
// A value's place in the order as a uint: i32 with its sign bit flipped; a float's f32 bits
// turned so that unsigned order is numeric order, -0 taken as +0. NaN is handled before.
uint order_key(uint v)
{
#if IN_DTYPE == 3
    return v ^ 0x80000000u;
#else
    uint f = tgl_to_f32(v, uint(IN_DTYPE));
    f = f == 0x80000000u ? 0u : f;
    return (f & 0x80000000u) != 0u ? ~f : f | 0x80000000u;
#endif
}

bool is_nan_bits(uint v)
{
#if IN_DTYPE == 3
    return false;
#else
    return tgl_f32_is_nan(tgl_to_f32(v, uint(IN_DTYPE)));
#endif
}
#endif

// a combined with b (a the earlier part of the line for the sums and products).
uvec2 combine(uvec2 a, uvec2 b)
{
#if SCAN_OP == 0 && INTS
    return uvec2(a.x + b.x, 0u);
#elif SCAN_OP == 1 && INTS
    return uvec2(a.x * b.x, 0u);
#elif SCAN_OP == 0
    TGL_PRECISE float s = uintBitsToFloat(a.x) + uintBitsToFloat(b.x);
    return uvec2(floatBitsToUint(s), 0u);
#elif SCAN_OP == 1
    TGL_PRECISE float p = uintBitsToFloat(a.x) * uintBitsToFloat(b.x);
    return uvec2(floatBitsToUint(p), 0u);
#else
    bool na = is_nan_bits(a.x), nb = is_nan_bits(b.x), b_wins;
    if (na || nb) {
        b_wins = nb && (!na || b.y > a.y);
    } else {
        uint ka = order_key(a.x), kb = order_key(b.x);
        b_wins = (SCAN_OP == 2 ? kb > ka : kb < ka) || (ka == kb && b.y > a.y);
    }
    return b_wins ? b : a;
#endif
}

// The combination of one value per invocation (uniform control flow).
uvec2 group_combine(uvec2 v)
{
    uint lane = gl_LocalInvocationID.x;
    barrier();
    s_scan[lane] = v;
    memoryBarrierShared();
    barrier();
    for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) {
        if (lane < stride)
            s_scan[lane] = combine(s_scan[lane], s_scan[lane + stride]);
        memoryBarrierShared();
        barrier();
    }
    return s_scan[0];
}

#if SCAN_SG > 0
// The scan of one value per invocation through subgroup shuffles (SCAN_SG invocations a
// subgroup, neighbours in the workgroup, wg / SCAN_SG of them at most SCAN_SG):
// Hillis-Steele in each subgroup, then the first subgroup scans the subgroups' totals - two
// barriers where the shared-memory scan takes 2 log2(wg). Gives the invocation's exclusive
// prefix; *total the workgroup's combination (uniform control flow).
uvec2 group_exclusive(uvec2 v, out uvec2 total)
{
    const uint sg = uint(SCAN_SG), groups = uint(TGL_WG_SIZE) / sg;
    uint lane = gl_LocalInvocationID.x, sl = lane % sg, w = lane / sg;
    for (uint off = 1u; off < sg; off <<= 1) {
        uvec2 o = subgroupShuffle(v, sl >= off ? sl - off : sl);
        if (sl >= off)
            v = combine(o, v);
    }
    uvec2 before = subgroupShuffle(v, sl > 0u ? sl - 1u : 0u); // this subgroup's exclusive prefix
    if (sl == 0u)
        before = identity();
    barrier(); // the last readers of s_scan are done
    if (sl == sg - 1u)
        s_scan[w] = v;
    memoryBarrierShared();
    barrier();
    if (w == 0u) { // one subgroup, all active
        uvec2 t = sl < groups ? s_scan[sl] : identity();
        for (uint off = 1u; off < sg; off <<= 1) {
            uvec2 o = subgroupShuffle(t, sl >= off ? sl - off : sl);
            if (sl >= off)
                t = combine(o, t);
        }
        if (sl < groups)
            s_scan[sl] = t;
    }
    memoryBarrierShared();
    barrier();
    total = s_scan[groups - 1u];
    return w > 0u ? combine(s_scan[w - 1u], before) : before;
}
#endif

// The exclusive scan of one partial per invocation over a tile; *total the tile's combination
// (uniform control flow, with a barrier() since the last tile's readers of s_scan).
uvec2 tile_exclusive(uvec2 part, out uvec2 total)
{
#if SCAN_SG > 0
    return group_exclusive(part, total);
#else
    uint lane = gl_LocalInvocationID.x;
    s_scan[lane] = part;
    memoryBarrierShared();
    barrier();
    for (uint off = 1u; off < uint(TGL_WG_SIZE); off <<= 1) {
        uvec2 before = lane >= off ? s_scan[lane - off] : identity();
        barrier();
        if (lane >= off)
            s_scan[lane] = combine(before, s_scan[lane]);
        memoryBarrierShared();
        barrier();
    }
    total = s_scan[uint(TGL_WG_SIZE) - 1u];
    return lane > 0u ? s_scan[lane - 1u] : identity();
#endif
}

// Element offsets of line i (in elements, in each window): in's, out's and the indices' starts.
void locate(uint i, out uint oi, out uint oo, out uint ox)
{
    uint rest = i;
    oi = u_in_base;
    oo = u_out_base;
    ox = u_idx_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint c = rest % u_shape[k];
        rest /= u_shape[k];
        oi += c * u_in_stride[k];
        oo += c * u_out_stride[k];
        ox += c * u_idx_stride[k];
    }
    if (u_ndim > 0u) {
        oi += rest * u_in_stride[0];
        oo += rest * u_out_stride[0];
        ox += rest * u_idx_stride[0];
    }
}

// The bits out gets for a scanned value.
uint out_bits(uint v)
{
#if PAIRS || INTS
    return v; // in's own bits (cummax, cummin) or an i32
#else
    return tgl_convert(v, 0u, uint(OUT_DTYPE));
#endif
}

#ifdef SCAN_QUADS
// a combined with the quad w of elements k..k+3 in turn.
uvec2 combine_quad(uvec2 a, uvec4 w, uint k)
{
    a = combine(a, operand(w.x, k));
    a = combine(a, operand(w.y, k + 1u));
    a = combine(a, operand(w.z, k + 2u));
    return combine(a, operand(w.w, k + 3u));
}
#else
void store_out(uint at, uint v)
{
    uint bits = out_bits(v);
#if OUT_DTYPE == 0 || OUT_DTYPE == 3
    y[at] = bits;
#else
    uint w = at >> 1, shift = 16u * (at & 1u);
    atomicAnd(y[w], ~(0xFFFFu << shift));
    atomicOr(y[w], bits << shift);
#endif
}
#endif

#ifdef SCAN_ONE_PASS
shared uint s_ticket;
// A round's lanes whose value did not come: line_carry's, and chunks_combined's (which line_carry
// calls while it walks its own).
shared uint s_missing[(TGL_WG_SIZE + 31) / 32];
shared uint s_missing_chunks[(TGL_WG_SIZE + 31) / 32];

// The total of the chunk [lo, hi) of a line whose elements start at oi in in, by the same steps
// (so the same bits) as one_pass's: each invocation's partial of its quads in a tile, the tile's
// combination, the tiles' combinations in order (uniform control flow).
uvec2 chunk_total(uint lo, uint hi, uint oi)
{
    const uint tile = uint(TGL_WG_SIZE) * uint(SCAN_K), quads = uint(SCAN_K) / 4u;
    uint lane = gl_LocalInvocationID.x, tiles = (hi - lo + tile - 1u) / tile;
    uvec2 total = identity();
    TGL_UNROLL for (uint t = 0u; t < uint(ONE_PASS_TILES); t++) {
        if (t < tiles) {
            uint a0 = lo + t * tile + lane * uint(SCAN_K);
            uvec2 part = identity(), tile_total;
            TGL_UNROLL for (uint q = 0u; q < quads; q++) {
                uint k = a0 + 4u * q;
                if (k < hi)
                    part = combine_quad(part, X_QUAD((oi + k) >> 2), k);
            }
            barrier(); // the last tile's readers of s_scan are done
            tile_exclusive(part, tile_total);
            total = combine(total, tile_total);
        }
    }
    return total;
}

// The totals a workgroup publishes, 8 words a segment s at lb[8s]: its chunk's total (2 words),
// the epoch it was published in, a pad; then, where the chunk is the last of a super-block of
// SUPER chunks of its line, the super-block's total and its epoch likewise. A chunk's carry
// combines the totals of its line's earlier super-blocks and of its own super-block's earlier
// chunks (at most chunks / SUPER + SUPER - 1 words to read, where one level read every earlier
// chunk's: 8191 for a 16M line of one-tile chunks), each total combined in a grouping fixed by
// the line's shape, so the bits do not depend on which workgroup computed what.
#define SUPER 64u
#define LB_CHUNK(s) (8u * (s))
#define LB_SUPER(s) (8u * (s) + 4u)

// Polls for the total at lb[at] (and its epoch at lb[at + 2]) at most SPIN_BUDGET times over
// the invocation's life; true and *v where it came.
#define SPIN_BUDGET 1024u
uint spins = 0u;
bool await_total(uint at, out uvec2 v)
{
    bool have = false;
    while (!have && spins < SPIN_BUDGET) {
        have = lb[at + 2u] == u_epoch; // a plain load: atomics on the few hot words serialize
        spins++;
    }
    v = identity();
    if (have) {
        memoryBarrierBuffer();
        v = uvec2(lb[at], lb[at + 1u]);
    }
    return have;
}

// The combination of the totals of chunks first .. first + count - 1 of the line whose chunk 0
// is segment s0 (its elements from oi in in), lane l combining chunks first + l, first + l + W,
// ... in order, then a tree (uniform control flow). Each invocation waits for its totals at most
// SPIN_BUDGET polls in all; the workgroup computes those that did not come itself (chunk_total:
// the same bits), so it never depends on another workgroup's progress (llvmpipe cuts loops at
// 65535 iterations; other GPUs need not keep a started workgroup running while a later one spins).
uvec2 chunks_combined(uint s0, uint first, uint count, uint oi)
{
    uint lane = gl_LocalInvocationID.x;
    uvec2 p = identity();
    for (uint r = 0u; r * uint(TGL_WG_SIZE) < count; r++) { // uniform
        uint j = r * uint(TGL_WG_SIZE) + lane;
        if (lane < uint(s_missing_chunks.length()))
            s_missing_chunks[lane] = 0u;
        memoryBarrierShared();
        barrier();
        uvec2 v = identity();
        if (j < count && !await_total(LB_CHUNK(s0 + first + j), v))
            atomicOr(s_missing_chunks[lane >> 5], 1u << (lane & 31u));
        memoryBarrierShared();
        barrier();
        for (uint w = 0u; w < uint(s_missing_chunks.length()); w++) {
            uint bits = s_missing_chunks[w]; // the same in every invocation: uniform
            while (bits != 0u) {
                uint l = w * 32u + uint(findLSB(bits)), m = first + r * uint(TGL_WG_SIZE) + l;
                bits &= bits - 1u;
                uvec2 t = chunk_total(m * u_chunk, min(u_len, m * u_chunk + u_chunk), oi);
                if (lane == l)
                    v = t;
            }
        }
        if (j < count)
            p = combine(p, v);
        barrier(); // every invocation has read s_missing_chunks
    }
    return group_combine(p);
}

// Super-block h's total (chunks h * SUPER onwards of the line whose chunk 0 is segment s0): what
// its last chunk publishes, and what a chunk computes where that did not come (the same bits).
uvec2 super_total(uint s0, uint h, uint oi)
{
    return chunks_combined(s0, h * SUPER, SUPER, oi);
}

// The combination of the totals of chunks 0 .. c - 1 of the line whose chunk 0 is segment s0:
// the line's g = c / SUPER earlier super-blocks' totals, then the chunks of c's own super-block
// before it, as one sequence (lane l taking items l, l + W, ..., then a tree: pass 1's grouping
// where c < SUPER). A super-block's total that did not come is computed (super_total). The
// same rounds as chunks_combined's, written twice because GLSL has no recursion: this one's
// fallback calls that one.
uvec2 line_carry(uint s0, uint c, uint oi)
{
    uint lane = gl_LocalInvocationID.x, g = c / SUPER, items = g + (c - g * SUPER);
    uvec2 p = identity();
    for (uint r = 0u; r * uint(TGL_WG_SIZE) < items; r++) { // uniform
        uint j = r * uint(TGL_WG_SIZE) + lane;
        if (lane < uint(s_missing.length()))
            s_missing[lane] = 0u;
        memoryBarrierShared();
        barrier();
        uvec2 v = identity();
        if (j < items) {
            uint at = j < g ? LB_SUPER(s0 + j * SUPER + SUPER - 1u) : LB_CHUNK(s0 + g * SUPER + (j - g));
            if (!await_total(at, v))
                atomicOr(s_missing[lane >> 5], 1u << (lane & 31u));
        }
        memoryBarrierShared();
        barrier();
        for (uint w = 0u; w < uint(s_missing.length()); w++) {
            uint bits = s_missing[w]; // the same in every invocation: uniform
            while (bits != 0u) {
                uint l = w * 32u + uint(findLSB(bits)), m = r * uint(TGL_WG_SIZE) + l;
                bits &= bits - 1u;
                uvec2 t;
                if (m < g) { // uniform
                    t = super_total(s0, m, oi);
                } else {
                    uint k = g * SUPER + (m - g);
                    t = chunk_total(k * u_chunk, min(u_len, k * u_chunk + u_chunk), oi);
                }
                if (lane == l)
                    v = t;
            }
        }
        if (j < items)
            p = combine(p, v);
        barrier(); // every invocation has read s_missing
    }
    return group_combine(p);
}

// Segment s (chunk c of its line, whose elements start at oi in in, oo in out, ox in the
// indices) in one pass: its tiles read once into registers and scanned, its total published,
// the line's earlier chunks' totals combined into the carry (line_carry), the outputs written.
void one_pass(uint s, uint c, uint oi, uint oo, uint ox)
{
    const uint tile = uint(TGL_WG_SIZE) * uint(SCAN_K), quads = uint(SCAN_K) / 4u;
    uint lane = gl_LocalInvocationID.x;
    uint lo = c * u_chunk, hi = min(u_len, lo + u_chunk), tiles = (hi - lo + tile - 1u) / tile;
    uvec4 d[ONE_PASS_TILES * (SCAN_K / 4)];
    uvec2 before[ONE_PASS_TILES], excl[ONE_PASS_TILES]; // the chunk's earlier tiles; this invocation's prefix in its tile
    uvec2 total = identity();
    TGL_UNROLL for (uint t = 0u; t < uint(ONE_PASS_TILES); t++) { // chunk_total's steps, d kept
        if (t < tiles) { // uniform
            uint a0 = lo + t * tile + lane * uint(SCAN_K);
            uvec2 part = identity(), tile_total;
            TGL_UNROLL for (uint q = 0u; q < quads; q++) {
                uint k = a0 + 4u * q;
                d[t * quads + q] = k < hi ? X_QUAD((oi + k) >> 2) : uvec4(0u);
                if (k < hi)
                    part = combine_quad(part, d[t * quads + q], k);
            }
            barrier(); // the last tile's readers of s_scan are done
            excl[t] = tile_exclusive(part, tile_total);
            before[t] = total;
            total = combine(total, tile_total);
        }
    }
    if (lane == 0u && c + 1u < u_chunks) { // a later chunk of the line reads it
        lb[LB_CHUNK(s)] = total.x;
        lb[LB_CHUNK(s) + 1u] = total.y;
        memoryBarrierBuffer();
        atomicExchange(lb[LB_CHUNK(s) + 2u], u_epoch);
    }
    if (c % SUPER == SUPER - 1u && c + 1u < u_chunks) { // the last of a super-block a later one reads (uniform)
        uvec2 block = super_total(s - c, c / SUPER, oi);
        if (lane == 0u) {
            lb[LB_SUPER(s)] = block.x;
            lb[LB_SUPER(s) + 1u] = block.y;
            memoryBarrierBuffer();
            atomicExchange(lb[LB_SUPER(s) + 2u], u_epoch);
        }
    }
    uvec2 carry = c > 0u ? line_carry(s - c, c, oi) : identity(); // (c uniform)
    TGL_UNROLL for (uint t = 0u; t < uint(ONE_PASS_TILES); t++) {
        if (t < tiles) {
            uint a0 = lo + t * tile + lane * uint(SCAN_K);
            uvec2 run = combine(combine(carry, before[t]), excl[t]);
            TGL_UNROLL for (uint q = 0u; q < quads; q++) {
                uint k = a0 + 4u * q;
                if (k < hi) {
                    uvec4 w = d[t * quads + q];
                    uvec2 r0 = combine(run, operand(w.x, k)), r1 = combine(r0, operand(w.y, k + 1u));
                    uvec2 r2 = combine(r1, operand(w.z, k + 2u)), r3 = combine(r2, operand(w.w, k + 3u));
                    y4[(oo + k) >> 2] = uvec4(out_bits(r0.x), out_bits(r1.x), out_bits(r2.x), out_bits(r3.x));
#if PAIRS
                    if (u_has_idx != 0u) {
                        ix[ox + k * u_idx_step] = r0.y;
                        ix[ox + (k + 1u) * u_idx_step] = r1.y;
                        ix[ox + (k + 2u) * u_idx_step] = r2.y;
                        ix[ox + (k + 3u) * u_idx_step] = r3.y;
                    }
#endif
                    run = r3;
                }
            }
        }
    }
    if (lane == 0u && atomicAdd(lb_done, 1u) + 1u == u_n) { // every workgroup has its ticket
        atomicExchange(lb_ticket, 0u);
        atomicExchange(lb_done, 0u);
    }
}
#endif

void main()
{
    uint s = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    if (s >= u_n)
        return; // a whole workgroup: uniform
#ifdef SCAN_ONE_PASS
    if (gl_LocalInvocationID.x == 0u)
        s_ticket = atomicAdd(lb_ticket, 1u); // segments in the order workgroups start
    memoryBarrierShared();
    barrier();
    s = s_ticket;
#endif
    s += u_start;
    uint line = s / u_chunks, c = s - line * u_chunks;
    uint oi, oo, ox;
    locate(line, oi, oo, ox);
    uint lane = gl_LocalInvocationID.x;
    const uint tile = uint(TGL_WG_SIZE) * uint(SCAN_K);
#ifdef SCAN_ONE_PASS
    one_pass(s, c, oi, oo, ox);
#else
    uint lo = c * u_chunk, hi = min(u_len, lo + u_chunk);
    if (u_pass == 0u) {
        uvec2 acc = identity();
        for (uint t0 = lo; t0 < hi; t0 += tile) { // any grouping does: coalesced, SCAN_K wg apart
            uvec2 part = identity();
#ifdef SCAN_QUADS
            for (uint q = 0u; q < uint(SCAN_K) / 4u; q++) {
                uint k = t0 + 4u * (q * uint(TGL_WG_SIZE) + lane);
                if (k < hi)
                    part = combine_quad(part, X_QUAD((oi + k) >> 2), k);
            }
#else
            for (uint q = 0u; q < uint(SCAN_K); q++) {
                uint k = t0 + q * uint(TGL_WG_SIZE) + lane;
                if (k < hi)
                    part = combine(part, operand(load_bits(oi + k * u_step), k));
            }
#endif
            acc = combine(acc, part);
        }
        acc = group_combine(acc);
        if (lane == 0u)
            tot[s] = acc;
        return;
    }
    uvec2 carry = identity();
    if (c > 0u) { // the line's earlier chunks: sums in any grouping, pairs in any order
        uvec2 p = identity();
        for (uint j = lane; j < c; j += uint(TGL_WG_SIZE))
            p = combine(p, tot[line * u_chunks + j]);
        carry = group_combine(p);
    }
    for (uint t0 = lo; t0 < hi; t0 += tile) {
        uint a0 = t0 + lane * uint(SCAN_K);
        barrier(); // the last tile's readers of s_tile and s_scan are done
#ifdef SCAN_STAGED
        for (uint q = 0u; q < uint(SCAN_K); q++) {
            uint j = q * uint(TGL_WG_SIZE) + lane, k = t0 + j;
            s_tile[PADDED(j)] = k < hi ? load_bits(oi + k * u_step) : 0u;
        }
        memoryBarrierShared();
        barrier();
#endif
        uvec2 part = identity();
#ifdef SCAN_STAGED
        uvec2 v[SCAN_K];
#endif
#ifdef SCAN_QUADS
        // the quads held for the walk below (constant indices after unrolling: registers), not
        // read again
        uvec4 held[SCAN_K / 4];
        TGL_UNROLL for (uint q = 0u; q < uint(SCAN_K) / 4u; q++) {
            held[q] = a0 + 4u * q < hi ? X_QUAD((oi + a0 + 4u * q) >> 2) : uvec4(0u);
            if (a0 + 4u * q < hi)
                part = combine_quad(part, held[q], a0 + 4u * q);
        }
#else
        for (uint q = 0u; q < uint(SCAN_K); q++) {
            uint k = a0 + q;
#ifdef SCAN_STAGED
            uint bits = k < hi ? s_tile[PADDED(lane * uint(SCAN_K) + q)] : 0u;
            v[q] = k < hi ? operand(bits, k) : identity();
            part = combine(part, v[q]);
#else // (read again below: llvmpipe kept v[] in memory, a loop over the lanes a step)
            uint bits = k < hi ? load_bits(oi + k * u_step) : 0u;
            part = combine(part, k < hi ? operand(bits, k) : identity());
#endif
        }
#endif
        uvec2 tile_total;
        uvec2 run = combine(carry, tile_exclusive(part, tile_total));
#ifdef SCAN_QUADS
        TGL_UNROLL for (uint q = 0u; q < uint(SCAN_K) / 4u; q++) {
            uint k = a0 + 4u * q;
            if (k < hi) {
                uvec4 w = held[q];
                uvec2 r0 = combine(run, operand(w.x, k)), r1 = combine(r0, operand(w.y, k + 1u));
                uvec2 r2 = combine(r1, operand(w.z, k + 2u)), r3 = combine(r2, operand(w.w, k + 3u));
                y4[(oo + k) >> 2] = uvec4(out_bits(r0.x), out_bits(r1.x), out_bits(r2.x), out_bits(r3.x));
#if PAIRS
                if (u_has_idx != 0u) {
                    ix[ox + k * u_idx_step] = r0.y;
                    ix[ox + (k + 1u) * u_idx_step] = r1.y;
                    ix[ox + (k + 2u) * u_idx_step] = r2.y;
                    ix[ox + (k + 3u) * u_idx_step] = r3.y;
                }
#endif
                run = r3;
            }
        }
#else
        for (uint q = 0u; q < uint(SCAN_K); q++) {
#ifdef SCAN_STAGED
            run = combine(run, v[q]);
            v[q] = run;
            s_tile[PADDED(lane * uint(SCAN_K) + q)] = run.x; // its own slots: no barrier
#else
            uint k = a0 + q;
            if (k < hi) {
                run = combine(run, operand(load_bits(oi + k * u_step), k));
                store_out(oo + k * u_out_step, run.x);
#if PAIRS
                if (u_has_idx != 0u)
                    ix[ox + k * u_idx_step] = run.y;
#endif
            }
#endif
        }
#endif
        carry = combine(carry, tile_total);
#ifdef SCAN_STAGED
        memoryBarrierShared();
        barrier();
        for (uint q = 0u; q < uint(SCAN_K); q++) {
            uint j = q * uint(TGL_WG_SIZE) + lane, k = t0 + j;
            if (k < hi)
                store_out(oo + k * u_out_step, s_tile[PADDED(j)]);
        }
#if PAIRS
        if (u_has_idx != 0u) { // uniform: the indices staged the same way
            barrier();
            for (uint q = 0u; q < uint(SCAN_K); q++)
                s_tile[PADDED(lane * uint(SCAN_K) + q)] = v[q].y;
            memoryBarrierShared();
            barrier();
            for (uint q = 0u; q < uint(SCAN_K); q++) {
                uint j = q * uint(TGL_WG_SIZE) + lane, k = t0 + j;
                if (k < hi)
                    ix[ox + k * u_idx_step] = s_tile[PADDED(j)];
            }
        }
#endif
#endif
    }
#endif
}
