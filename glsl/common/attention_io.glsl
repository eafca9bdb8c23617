#include "common/unroll.glsl"
// Operands and uniforms of the attention kernels (attention/*.comp). Bindings: 0 q, 1 k,
// 2 v (read), 3 o (written), as [rows, u_d] with a (batch, head) block of u_seq_q query rows
// and of u_kv_cap key/value rows (the first u_seq_kv used). With VEC4, u_d and every window
// offset are multiples of 4 and rows load as vec4s; otherwise element by element. With TEX,
// q, k and v are read through buffer textures instead of SSBOs.
#ifdef TEX
// q, k and v through buffer textures over the same ranges (texture units 0-2; RGBA32F with
// VEC4, else R32F): llvmpipe gathers texels, while each SSBO load loops over its SIMD lanes.
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer q_tex;
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer k_tex;
layout(location = LOC_TEXTURE2, binding = 2) uniform highp samplerBuffer v_tex;
#elif defined(VEC4)
layout(std430, binding = 0) readonly buffer Q { vec4 q_mem[]; };
#if defined(KV_F16) && defined(K8) // (attention/decode) k eight halves a uvec4, v too with V8, else four a uvec2
layout(std430, binding = 1) readonly buffer K { uvec4 k_mem[]; };
#ifdef V8
layout(std430, binding = 2) readonly buffer V { uvec4 v_mem[]; };
#else
layout(std430, binding = 2) readonly buffer V { uvec2 v_mem[]; };
#endif
#elif defined(KV_F16) // k and v in binary16, four to a uvec2
layout(std430, binding = 1) readonly buffer K { uvec2 k_mem[]; };
layout(std430, binding = 2) readonly buffer V { uvec2 v_mem[]; };
#else
layout(std430, binding = 1) readonly buffer K { vec4 k_mem[]; };
layout(std430, binding = 2) readonly buffer V { vec4 v_mem[]; };
#endif
#else
layout(std430, binding = 0) readonly buffer Q { float q_mem[]; };
#ifdef KV_F16 // k and v in binary16, two to a uint
layout(std430, binding = 1) readonly buffer K { uint k_mem[]; };
layout(std430, binding = 2) readonly buffer V { uint v_mem[]; };
#else
layout(std430, binding = 1) readonly buffer K { float k_mem[]; };
layout(std430, binding = 2) readonly buffer V { float v_mem[]; };
#endif
#endif
#ifdef VEC4
layout(std430, binding = 3) writeonly buffer O { vec4 o_mem[]; };
#else
layout(std430, binding = 3) writeonly buffer O { float o_mem[]; };
#endif

layout(location = LOC_ATT_SEQ_Q) uniform uint u_seq_q;
layout(location = LOC_ATT_SEQ_KV) uniform uint u_seq_kv;
layout(location = LOC_ATT_KV_CAP) uniform uint u_kv_cap;
layout(location = LOC_ATT_D) uniform uint u_d;
layout(location = LOC_ATT_CAUSAL) uniform uint u_causal;
layout(location = LOC_ATT_Q_OFF) uniform uint u_q_off;
layout(location = LOC_ATT_K_OFF) uniform uint u_k_off;
layout(location = LOC_ATT_V_OFF) uniform uint u_v_off;
layout(location = LOC_ATT_O_OFF) uniform uint u_o_off;
layout(location = LOC_ATT_SCALE) uniform float u_scale;
// Grouped-query attention: u_group query heads share each key/value head, so the k and v of
// (batch, head) block bh of the dispatch are those of its kv block (bh + u_group_phase) /
// u_group, counted from the dispatch's first (u_group_phase: where the dispatch's first block
// falls in its group). 1 and 0 without grouping.
layout(location = LOC_ATT_GROUP) uniform uint u_group;
layout(location = LOC_ATT_GROUP_PHASE) uniform uint u_group_phase;

uint kv_block(uint bh)
{
    return (bh + u_group_phase) / u_group;
}

// SPLIT: the keys are cut into u_chunks chunks of u_chunk_keys (a multiple of the kernel's keys
// per step), each walked by its own invocation or workgroup, which writes its rows'
// unnormalised output and (m, l) for that chunk (m in natural-log units) to binding 4;
// attention/decode_combine.comp then merges each row's chunks. split_part_at gives where row
// `row` (of the dispatch's blocks, in [block, seq_q] order) keeps chunk `chunk`: DP / 4 vec4s of
// output, then (m, l, 0, 0). A chunk a row sees none of still writes m = -inf and l = 0.
#ifdef SPLIT
layout(std430, binding = 4) writeonly buffer Part { vec4 part[]; };
layout(location = LOC_ATT_CHUNKS) uniform uint u_chunks;
layout(location = LOC_ATT_CHUNK_KEYS) uniform uint u_chunk_keys;

uint split_part_at(uint row, uint chunk)
{
    return (row * u_chunks + chunk) * uint(DP / 4 + 1);
}
#endif

// Keys query row i of its (batch, head) block sees: [attention_first_key(i), attention_keys(i))
// (bottom-right aligned causal mask, sliding window; see tgl_attention and tgl_attention_t). A
// key j is seen iff attention_sees(j, first, end): one unsigned compare, j < first wrapping
// past end - first.
uint attention_keys(uint i)
{
    if (u_causal == 0u)
        return u_seq_kv;
    uint end = i + 1u + u_seq_kv; // i + (seq_kv - seq_q) + 1 without going negative
    return end <= u_seq_q ? 0u : min(end - u_seq_q, u_seq_kv);
}

// ADJUST (MASK implies it): tgl_attention_t's window, capping, ALiBi and mask are compiled in.
// Without it the functions below are constants (no window, nothing to adjust), so a plain call's
// kernel is as if those settings did not exist: their run-time tests alone had flash_shuffle
// spill its registers on an H200 (causal 1 x 16 x 1024, d 64: 0.135 -> 5.5 ms).
#if defined(MASK) && !defined(ADJUST)
#define ADJUST
#endif
// tgl_attention_t's settings, all 0 (off) for the other entry points: u_window (keys j > p -
// window, p = i + seq_kv - seq_q), u_softcap (scores s -> softcap tanh(s / softcap), natural
// units) and u_alibi (e0, e1, n: head h's slope 2^(e0 (h + 1)) below n, else 2^(e1 (2 (h - n) +
// 1)); n 0 without ALiBi), the heads of the call and u_bh0, the call's block of the dispatch's
// first (batch, head) block, for the head of each block.
layout(location = LOC_ATT_WINDOW) uniform uint u_window;
layout(location = LOC_ATT_SOFTCAP) uniform float u_softcap;
layout(location = LOC_ATT_ALIBI) uniform float u_alibi[3];
layout(location = LOC_ATT_HEADS) uniform uint u_heads;
layout(location = LOC_ATT_BH0) uniform uint u_bh0;

uint attention_first_key(uint i)
{
#ifdef ADJUST
    uint t = i + 1u + u_seq_kv; // p + 1 + seq_q
    return u_window != 0u && t > u_seq_q + u_window ? t - u_seq_q - u_window : 0u;
#else
    return 0u;
#endif
}

bool attention_sees(uint j, uint first, uint end)
{
#ifdef ADJUST
    return j - first < end - first;
#else
    // No window, so first is 0: the plain compare, which the kernels made before windows. With
    // the wrapping form NVIDIA's compiler stopped unrolling flash_shuffle (see its pragma).
    return j < end;
#endif
}

#ifdef MASK
// tgl_attention_t's additive mask, through a buffer texture (R32F) on texture unit 5: element
// (b, h, i, j) at u_mask[0] + b u_mask[1] + h u_mask[2] + i u_mask[3] + j, b counted from the
// batch item of the dispatch's first block (u_bh0 / u_heads).
layout(location = LOC_TEXTURE5, binding = 5) uniform highp samplerBuffer mask_tex;
layout(location = LOC_ATT_MASK) uniform uint u_mask[4];

float attention_mask(uint bh, uint i, uint j)
{
    uint ab = u_bh0 + bh, item = ab / u_heads - u_bh0 / u_heads, h = ab - ab / u_heads * u_heads;
    return texelFetch(mask_tex, int(u_mask[0] + item * u_mask[1] + h * u_mask[2] + i * u_mask[3] + j)).x;
}
#endif

// Whether scores need attention_adjust (uniform).
bool attention_adjusts()
{
#if defined(MASK)
    return true;
#elif defined(ADJUST)
    return u_softcap != 0.0 || u_alibi[2] != 0.0;
#else
    return false;
#endif
}

// ALiBi's slope for dispatch block bh, 0 without ALiBi.
float attention_slope(uint bh)
{
#ifdef ADJUST
    float h = float((u_bh0 + bh) % u_heads), n = u_alibi[2];
    return n == 0.0 ? 0.0 : h < n ? exp2(u_alibi[0] * (h + 1.0)) : exp2(u_alibi[1] * (2.0 * (h - n) + 1.0));
#else
    return 0.0;
#endif
}

// Score s of block bh's query row i and key j in units of `unit` (1: natural, log2(e): base 2)
// capped, biased and masked: softcap tanh(s / softcap) - slope |p - j| + mask. tanh's argument
// is clamped to +-9, where it is 1 in f32 already: some drivers' tanh gives NaN for large
// arguments (exp overflow). A -inf mask hides the key (its weight exp(-inf) is 0).
float attention_adjust(float s, float slope, uint bh, uint i, uint j, float unit)
{
    if (u_softcap != 0.0) {
        float cap = u_softcap * unit;
        s = cap * tanh(clamp(s / cap, -9.0, 9.0));
    }
    float p = float(i) + float(u_seq_kv) - float(u_seq_q);
    s -= slope * unit * abs(p - float(j));
#ifdef MASK
    s += attention_mask(bh, i, j) * unit;
#endif
    return s;
}

// Elements dim .. dim+3 of the row starting at element `row` (dim a multiple of 4); 0 past u_d.
// READ(i) is vec4 i (VEC4) or element i of the operand.
#if defined(VEC4) && defined(D_EXACT)
#define TGL_ATTN_LOAD4(NAME, READ)                                                 \
    vec4 NAME(uint row, uint dim) { return READ((row + dim) >> 2u); }
#elif defined(VEC4)
#define TGL_ATTN_LOAD4(NAME, READ)                                                 \
    vec4 NAME(uint row, uint dim) { return dim < u_d ? READ((row + dim) >> 2u) : vec4(0.0); }
#else
// Element by element without a branch per element: indices past u_d clamp to the row's last
// element and the select zeroes them. (A branch each made the unrolled attention/flash_reg
// variants of Mesa 25.0 take 11-16 s to link, d 64.)
#define TGL_ATTN_LOAD4(NAME, READ)                                                 \
    vec4 NAME(uint row, uint dim)                                                  \
    {                                                                              \
        uvec4 e = uvec4(dim) + uvec4(0u, 1u, 2u, 3u);                              \
        uvec4 at = uvec4(row) + min(e, uvec4(u_d - 1u));                           \
        vec4 r = vec4(READ(at.x), READ(at.y), READ(at.z), READ(at.w));             \
        return mix(vec4(0.0), r, lessThan(e, uvec4(u_d)));                         \
    }
#endif
#if defined(TEX) && defined(VEC4)
#define Q_READ(i) texelFetch(q_tex, int(i))
#define K_READ(i) texelFetch(k_tex, int(i))
#define V_READ(i) texelFetch(v_tex, int(i))
#elif defined(TEX)
#define Q_READ(i) texelFetch(q_tex, int(i)).x
#define K_READ(i) texelFetch(k_tex, int(i)).x
#define V_READ(i) texelFetch(v_tex, int(i)).x
#elif defined(KV_F16) && defined(VEC4)
#define Q_READ(i) q_mem[i]
#ifdef K8 // vec4 i is the low or high half of uvec4 i / 2
#define K_READ(i) k8_half(k_mem[(i) >> 1u], (i) & 1u)
vec4 k8_half(uvec4 w, uint high)
{
    uvec2 h = high != 0u ? w.zw : w.xy;
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
}
#else
#define K_READ(i) vec4(unpackHalf2x16(k_mem[i].x), unpackHalf2x16(k_mem[i].y))
#endif
#ifdef V8
#define V_READ(i) k8_half(v_mem[(i) >> 1u], (i) & 1u)
#else
#define V_READ(i) vec4(unpackHalf2x16(v_mem[i].x), unpackHalf2x16(v_mem[i].y))
#endif
#elif defined(KV_F16)
#define Q_READ(i) q_mem[i]
#define K_READ(i) unpackHalf2x16(k_mem[(i) >> 1u])[(i) & 1u]
#define V_READ(i) unpackHalf2x16(v_mem[(i) >> 1u])[(i) & 1u]
#else
#define Q_READ(i) q_mem[i]
#define K_READ(i) k_mem[i]
#define V_READ(i) v_mem[i]
#endif
TGL_ATTN_LOAD4(q_load4, Q_READ)
TGL_ATTN_LOAD4(k_load4, K_READ)
TGL_ATTN_LOAD4(v_load4, V_READ)

// Writes elements dim .. dim+3 of the output row (those below u_d).
void o_store4(uint row, uint dim, vec4 x)
{
#ifdef VEC4
    if (dim < u_d)
        o_mem[(row + dim) >> 2u] = x;
#else
    TGL_UNROLL for (uint c = 0u; c < 4u; c++)
        if (dim + c < u_d)
            o_mem[row + dim + c] = x[c];
#endif
}
