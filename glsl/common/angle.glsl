#ifndef TGL_ANGLE_GLSL
#define TGL_ANGLE_GLSL
// Rotary angles reduced into [-pi, pi] before sin/cos, whose accuracy drivers promise only near
// that range. 2 pi = C1 + C2 + C3 (to 7e-15); C1 has 8 significant bits and C2 12, so k * C1
// and k * C2 are exact for k < 2^12..2^16, i.e. angles up to ~2.5e4; beyond that the
// reduction's error stays below the rounding the f32 angle already carries (|angle| * 2^-24).
// The subtractions are kept apart (precise), as the Cody-Waite reduction needs.
#include "common/precise.glsl"

const float TGL_TWO_PI_C1 = 6.28125;
const float TGL_TWO_PI_C2 = 1.9350051879882812e-3;
const float TGL_TWO_PI_C3 = 3.019916050561733e-7;

float tgl_reduce_angle(float a)
{
    float k = floor(a * 0.15915494309189535 + 0.5);
    TGL_PRECISE float r = a - k * TGL_TWO_PI_C1;
    r = r - k * TGL_TWO_PI_C2;
    r = r - k * TGL_TWO_PI_C3;
    return r;
}

vec4 tgl_reduce_angle(vec4 a)
{
    vec4 k = floor(a * 0.15915494309189535 + 0.5);
    TGL_PRECISE vec4 r = a - k * TGL_TWO_PI_C1;
    r = r - k * TGL_TWO_PI_C2;
    r = r - k * TGL_TWO_PI_C3;
    return r;
}
#endif
