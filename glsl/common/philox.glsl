// Philox4x32-10 (Salmon et al., SC'11), the counter-based generator of tgl_random and tgl_dropout:
// src/cpu/cpu_random.h is its twin, word for word. Ten rounds of two 32x32 -> 64-bit products
// (umulExtended), the key bumped by the Weyl constants between rounds.
#ifndef TGL_PHILOX_GLSL
#define TGL_PHILOX_GLSL
uvec4 tgl_philox4x32_10(uvec4 c, uvec2 k)
{
    for (int r = 0; r < 10; r++) {
        if (r > 0)
            k += uvec2(0x9E3779B9u, 0xBB67AE85u);
        uint hi0, lo0, hi1, lo1;
        umulExtended(0xD2511F53u, c.x, hi0, lo0);
        umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
        c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

#endif
