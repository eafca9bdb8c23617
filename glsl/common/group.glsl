// Workgroup-wide sum and max of one value per invocation, through shared memory. Call from
// uniform control flow; TGL_WG_SIZE is a power of two. The leading barrier lets a call follow
// another one that is still being read.
shared float tgl_s_group[TGL_WG_SIZE];

#define TGL_DEFINE_GROUP_REDUCE(NAME, COMBINE)                                                \
    float NAME(float v)                                                                       \
    {                                                                                         \
        uint tid = gl_LocalInvocationIndex;                                                   \
        barrier();                                                                            \
        tgl_s_group[tid] = v;                                                                 \
        memoryBarrierShared();                                                                \
        barrier();                                                                            \
        for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) {               \
            if (tid < stride)                                                                 \
                tgl_s_group[tid] = COMBINE(tgl_s_group[tid], tgl_s_group[tid + stride]);      \
            memoryBarrierShared();                                                            \
            barrier();                                                                        \
        }                                                                                     \
        return tgl_s_group[0];                                                                \
    }
#define TGL_ADD(a, b) ((a) + (b))
TGL_DEFINE_GROUP_REDUCE(tgl_group_sum, TGL_ADD)
TGL_DEFINE_GROUP_REDUCE(tgl_group_max, max)

#ifdef TGL_GROUP_VEC4
// The same over four values per invocation at once (one set of barriers for all four).
shared vec4 tgl_s_group4[TGL_WG_SIZE];

#define TGL_DEFINE_GROUP_REDUCE4(NAME, COMBINE)                                               \
    vec4 NAME(vec4 v)                                                                         \
    {                                                                                         \
        uint tid = gl_LocalInvocationIndex;                                                   \
        barrier();                                                                            \
        tgl_s_group4[tid] = v;                                                                \
        memoryBarrierShared();                                                                \
        barrier();                                                                            \
        for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) {               \
            if (tid < stride)                                                                 \
                tgl_s_group4[tid] = COMBINE(tgl_s_group4[tid], tgl_s_group4[tid + stride]);   \
            memoryBarrierShared();                                                            \
            barrier();                                                                        \
        }                                                                                     \
        return tgl_s_group4[0];                                                               \
    }
TGL_DEFINE_GROUP_REDUCE4(tgl_group_sum4, TGL_ADD)
TGL_DEFINE_GROUP_REDUCE4(tgl_group_max4, max)
#endif
