#version 430
// A driver check tgl_open runs on zink (src/gl/gl_driver_check.c): SLOT 0 and SLOT 1 are two
// programs whose uniform u_count bounds a loop, the kind of uniform zink compiles into a shader
// variant of its value on CPU Vulkan devices; each adds u_count to sums[SLOT]. Alternating the
// two with changing counts shows whether the driver runs the variant of the value set.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 1
#endif
#ifndef SLOT
#define SLOT 0
#endif

#include "common/local_size.glsl"
layout(std430, binding = 0) buffer Sums { uint sums[]; };
layout(location = LOC_CHECK_COUNT) uniform uint u_count;

void main()
{
    if (gl_LocalInvocationIndex != 0u)
        return;
    uint acc = 0u;
    for (uint c = 0u; c < u_count; c++)
        acc += 1u;
    sums[SLOT] += acc;
}
