// Helpers for kernels whose workgroup reduces one line: the linear workgroup index over the
// 2-D grid, and `precise` where the API has it (it stops compilers from reassociating the
// compensated sums; ES 3.1 lacks the keyword).
#ifdef TGL_ES
#define TGL_PRECISE
#else
#define TGL_PRECISE precise
#endif

uint tgl_group_index()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
