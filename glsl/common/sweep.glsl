#ifndef TGL_SWEEP_GLSL
#define TGL_SWEEP_GLSL
// The direction in which a streaming kernel walks its range (of elements, rows, lines or
// chunks). The host alternates it from one op over limits.sweep_bytes to the next
// (tgl_gl_sweep_direction), so each op starts on the addresses the op before it touched last:
// what is still in the GPU's caches, the translation caches among them. Only the order of the
// items changes, never how one is computed, so results are the same bits either way. Walked
// the same way every time, a chain of ops over more memory than those caches hold misses on
// every page: the H100 added 64M floats (768 MB) at 1.97 TB/s always forward, 2.72
// alternating (docs/performance.md). Location 15 is TGL_GL_SWEEP_LOCATION in gl_internal.h.
layout(location = LOC_SWEEP) uniform uint u_backward;

// The index that item i of a range of n takes in this dispatch's direction.
uint tgl_sweep(uint i, uint n)
{
    return u_backward != 0u ? n - 1u - i : i;
}
#endif
