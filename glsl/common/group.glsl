// Workgroup-wide sum and max of one value per invocation, through shared memory. Call from
// uniform control flow; TGL_WG_SIZE is a power of two. The leading barrier lets a call follow
// another one that is still being read.
shared float tgl_s_group[TGL_WG_SIZE];

// One reduction over TYPE values staged in the shared array ARRAY.
#define TGL_DEFINE_GROUP_REDUCE(TYPE, ARRAY, NAME, COMBINE)                                   \
    TYPE NAME(TYPE v)                                                                         \
    {                                                                                         \
        uint tid = gl_LocalInvocationIndex;                                                   \
        barrier();                                                                            \
        ARRAY[tid] = v;                                                                       \
        memoryBarrierShared();                                                                \
        barrier();                                                                            \
        for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) {               \
            if (tid < stride)                                                                 \
                ARRAY[tid] = COMBINE(ARRAY[tid], ARRAY[tid + stride]);                        \
            memoryBarrierShared();                                                            \
            barrier();                                                                        \
        }                                                                                     \
        return ARRAY[0];                                                                      \
    }
#define TGL_ADD(a, b) ((a) + (b))
TGL_DEFINE_GROUP_REDUCE(float, tgl_s_group, tgl_group_sum, TGL_ADD)
TGL_DEFINE_GROUP_REDUCE(float, tgl_s_group, tgl_group_max, max)

#ifdef TGL_GROUP_VEC4
// The same over four values per invocation at once (one set of barriers for all four).
shared vec4 tgl_s_group4[TGL_WG_SIZE];
TGL_DEFINE_GROUP_REDUCE(vec4, tgl_s_group4, tgl_group_sum4, TGL_ADD)
TGL_DEFINE_GROUP_REDUCE(vec4, tgl_s_group4, tgl_group_max4, max)
#endif
