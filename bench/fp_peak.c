/* Measures the f32 multiply-add rate a GL driver reaches in a compute shader, the ceiling that
 * compute-bound kernels (GEMM, attention, conv2d) are judged against in docs/performance.md.
 * Each invocation runs CHAINS independent vec4 chains of `a = a * y + x` for ITERS x DEPTH steps
 * (2 flops per component per step), for several chain counts: too few leave the multiply-add
 * latency exposed; on llvmpipe (each component of a vec4 one SIMD register over the lanes) many
 * chains spill, which costs less than exposed latency. The chains are written out one statement
 * each, because an array indexed by a loop variable lives in memory on llvmpipe. The workgroup
 * count doubles until a dispatch takes 20 ms; the figure is the best of 5 dispatches, each
 * closed by glFinish.
 * A developer's tool, not part of the library: scripts/fp-peak.sh builds and runs it.
 * Usage: fp_peak [CHAINS...]   (default 4 8 16 24 32) */
#include "gl_tool.h"

#include <math.h>

#define ITERS 1024 /* within llvmpipe's 65535 loop iterations per invocation */
/* Multiply-adds per chain per loop iteration. llvmpipe blends every value a loop carries with
 * the loop's mask once per iteration, so with one the blends take a third of the issue slots
 * (llvmpipe, 2 cores at 2.1 GHz, 2026-11-26: 76 GFLOP/s at best); with 4, 132 of the 134 that
 * separate 256-bit multiplies and adds on two pipes each allow (8 per chain: 113). */
#define DEPTH 4
#define WG 64
#define MAX_GROUPS (1u << 22)
#define GRID_X 32768u /* groups per row of the grid, within every driver's x limit */
#define OUT_VEC4S 1024u /* invocations store their sum here, modulo this: the store keeps the work */

/* The kernel with `chains` written-out chains, into src (size bytes); 0 if it does not fit. */
static int kernel_source(char *src, size_t size, int chains)
{
    int n = snprintf(src, size,
                     "#version 430\n"
                     "layout(local_size_x = %d) in;\n"
                     "layout(std430, binding = 0) writeonly buffer O { vec4 o[]; };\n"
                     "layout(location = 0) uniform vec4 u_x;\n"
                     "layout(location = 1) uniform vec4 u_y;\n"
                     "layout(location = 2) uniform int u_iters;\n"
                     "void main()\n{\n"
                     "    uint id = gl_GlobalInvocationID.x +\n"
                     "              gl_GlobalInvocationID.y * gl_NumWorkGroups.x * %du;\n"
                     "    vec4 seed = u_x * float(id & 255u);\n",
                     WG, WG);
    for (int c = 0; c < chains && n > 0 && (size_t)n < size; c++)
        n += snprintf(src + n, size - (size_t)n, "    vec4 a%d = seed + float(%d);\n", c, c);
    if (n > 0 && (size_t)n < size)
        n += snprintf(src + n, size - (size_t)n, "    for (int i = 0; i < u_iters; i++) {\n");
    for (int d = 0; d < DEPTH; d++)
        for (int c = 0; c < chains && n > 0 && (size_t)n < size; c++)
            n += snprintf(src + n, size - (size_t)n, "        a%d = a%d * u_y + u_x;\n", c, c);
    if (n > 0 && (size_t)n < size)
        n += snprintf(src + n, size - (size_t)n, "    }\n    vec4 sum = a0;\n");
    for (int c = 1; c < chains && n > 0 && (size_t)n < size; c++)
        n += snprintf(src + n, size - (size_t)n, "    sum += a%d;\n", c);
    if (n > 0 && (size_t)n < size)
        n += snprintf(src + n, size - (size_t)n, "    o[id %% %uu] = sum;\n}\n", OUT_VEC4S);
    return n > 0 && (size_t)n < size;
}

static GLuint build(const char *src)
{
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER), prog = glCreateProgram();
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    glAttachShader(prog, sh);
    glLinkProgram(prog);
    GLint linked = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &linked);
    if (!linked) {
        char log[2048] = "";
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        fprintf(stderr, "fp_peak: the kernel did not build: %s\n", log);
        glDeleteProgram(prog);
        prog = 0;
    }
    glDeleteShader(sh);
    return prog;
}

/* Seconds for one dispatch of `groups` workgroups (a power of two), finished. */
static double run(GLuint groups)
{
    GLuint gx = groups < GRID_X ? groups : GRID_X;
    double t0 = tool_seconds();
    glDispatchCompute(gx, groups / gx, 1);
    glFinish();
    return tool_seconds() - t0;
}

/* GFLOP/s of the kernel with `chains` chains, or a negative value on failure. */
static double measure(int chains, GLuint *groups_out, double *ms_out)
{
    char src[65536];
    if (!kernel_source(src, sizeof src, chains))
        return -1;
    GLuint prog = build(src);
    if (!prog)
        return -1;
    glUseProgram(prog);
    glUniform4f(0, 1e-3f, 1e-3f, 1e-3f, 1e-3f);
    glUniform4f(1, 0.999f, 0.999f, 0.999f, 0.999f);
    glUniform1i(2, ITERS);
    run(1); /* llvmpipe builds the code at the first dispatch */
    GLuint groups = 8;
    while (groups < MAX_GROUPS && run(groups) < 0.02)
        groups *= 2;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = run(groups);
        best = t < best ? t : best;
    }
    float out[4] = {0};
    glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof out, out);
    GLenum err = glGetError();
    glDeleteProgram(prog);
    if (err != GL_NO_ERROR || !isfinite(out[0])) {
        fprintf(stderr, "fp_peak: %d chains: GL error 0x%x, result %g\n", chains, err, (double)out[0]);
        return -1;
    }
    *groups_out = groups;
    *ms_out = best * 1e3;
    return (double)groups * WG * ITERS * DEPTH * chains * 8.0 / best / 1e9;
}

int main(int argc, char **argv)
{
    static const int defaults[] = {4, 8, 16, 24, 32};
    int chains[32], n = 0;
    for (int i = 1; i < argc; i++) {
        int count = atoi(argv[i]);
        if (n == 32 || count < 1 || count > 64) {
            fprintf(stderr, "usage: %s [CHAINS...]   (up to 32 counts, each 1..64; default 4 8 16 24 32)\n",
                    argv[0]);
            return 2;
        }
        chains[n++] = count;
    }
    if (!n)
        for (; n < (int)(sizeof defaults / sizeof defaults[0]); n++)
            chains[n] = defaults[n];
    if (!tool_make_current()) {
        fprintf(stderr, "fp_peak: no surfaceless EGL context with desktop GL 4.3\n");
        return 1;
    }
    printf("%s, %s\n", (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION));
    GLuint buf;
    glGenBuffers(1, &buf);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
    glBufferData(GL_SHADER_STORAGE_BUFFER, OUT_VEC4S * 16, NULL, GL_DYNAMIC_COPY);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
    double best = 0;
    int best_chains = 0;
    for (int i = 0; i < n; i++) {
        GLuint groups = 0;
        double ms = 0, gflops = measure(chains[i], &groups, &ms);
        if (gflops < 0)
            return 1;
        printf("%3d vec4 chains  %8u workgroups of %d  %9.3f ms  %10.1f GFLOP/s\n", chains[i], groups, WG, ms,
               gflops);
        fflush(stdout);
        if (gflops > best)
            best = gflops, best_chains = chains[i];
    }
    printf("best: %.1f GFLOP/s (%d vec4 chains; 2 flops per multiply-add)\n", best, best_chains);
    return 0;
}
