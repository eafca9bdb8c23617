#ifndef TGL_INDEX_GLSL
#define TGL_INDEX_GLSL
// Linear invocation index over a 2-D grid of 1-D workgroups: the host splits large
// dispatches over gl_NumWorkGroups.y when x would pass GL_MAX_COMPUTE_WORK_GROUP_COUNT.
// Invocations in the whole grid: the stride of kernels that take TGL_ITEMS elements each.
uint tgl_grid_invocations()
{
    return gl_NumWorkGroups.x * gl_NumWorkGroups.y * uint(TGL_WG_SIZE);
}

uint tgl_global_index()
{
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    return group * uint(TGL_WG_SIZE) + gl_LocalInvocationIndex;
}

// The linear workgroup index over the 2-D grid (kernels where a workgroup owns one line).
uint tgl_group_index()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
#endif
