// Compile-time repetition for kernels whose per-invocation arrays must stay in registers:
// TGL_REP<F>_<n>(M, a, b) expands to M(a, b, 0) M(a, b, 1) ... M(a, b, n - 1). An array that is
// indexed by a loop variable anywhere in a kernel lives in memory, so such kernels cannot rely
// on the compiler unrolling their loops: Mesa 22.3's GLSL compiler unrolled attention/flash_reg's
// nests of loops, Mesa 25.0's (NIR, with a limit on the unrolled size) leaves the larger ones
// rolled, and the kernel ran 4x slower there. The three families R, K and C let the repetitions
// nest (a macro is not expanded again inside its own expansion), each n in 1, 2, 4, 8, 16.
#define TGL_REPR_1(M, a, b) M(a, b, 0)
#define TGL_REPR_2(M, a, b) TGL_REPR_1(M, a, b) M(a, b, 1)
#define TGL_REPR_4(M, a, b) TGL_REPR_2(M, a, b) M(a, b, 2) M(a, b, 3)
#define TGL_REPR_8(M, a, b) TGL_REPR_4(M, a, b) M(a, b, 4) M(a, b, 5) M(a, b, 6) M(a, b, 7)
#define TGL_REPR_16(M, a, b)                                                                       \
    TGL_REPR_8(M, a, b) M(a, b, 8) M(a, b, 9) M(a, b, 10) M(a, b, 11) M(a, b, 12) M(a, b, 13)       \
    M(a, b, 14) M(a, b, 15)
#define TGL_REPK_1(M, a, b) M(a, b, 0)
#define TGL_REPK_2(M, a, b) TGL_REPK_1(M, a, b) M(a, b, 1)
#define TGL_REPK_4(M, a, b) TGL_REPK_2(M, a, b) M(a, b, 2) M(a, b, 3)
#define TGL_REPK_8(M, a, b) TGL_REPK_4(M, a, b) M(a, b, 4) M(a, b, 5) M(a, b, 6) M(a, b, 7)
#define TGL_REPK_16(M, a, b)                                                                       \
    TGL_REPK_8(M, a, b) M(a, b, 8) M(a, b, 9) M(a, b, 10) M(a, b, 11) M(a, b, 12) M(a, b, 13)       \
    M(a, b, 14) M(a, b, 15)
#define TGL_REPC_1(M, a, b) M(a, b, 0)
#define TGL_REPC_2(M, a, b) TGL_REPC_1(M, a, b) M(a, b, 1)
#define TGL_REPC_4(M, a, b) TGL_REPC_2(M, a, b) M(a, b, 2) M(a, b, 3)
#define TGL_REPC_8(M, a, b) TGL_REPC_4(M, a, b) M(a, b, 4) M(a, b, 5) M(a, b, 6) M(a, b, 7)
#define TGL_REPC_16(M, a, b)                                                                       \
    TGL_REPC_8(M, a, b) M(a, b, 8) M(a, b, 9) M(a, b, 10) M(a, b, 11) M(a, b, 12) M(a, b, 13)       \
    M(a, b, 14) M(a, b, 15)
