/* A standalone GL program, without tensorgl, for the question docs/internals.md ("Barriers
 * and ordering") leaves open: is a small glBufferSubData into a buffer object of its own
 * ordered with the GL commands after it when other contexts load the GPU? GL says it is (an
 * API write, executed in order with the commands around it).
 *
 * Each round, on one of BUFS buffer objects of LEN floats (GL_DYNAMIC_DRAW, as tensorgl's
 * buffers on GPUs):
 *   1. a compute dispatch writes every element with the round's first value;
 *   2. (--wait) a fence, waited for on the host, as tensorgl waits before an upload into a
 *      buffer that queued work writes;
 *   3. glBufferSubData writes a random range with the round's second value;
 *   4. the buffer is read back through a GL copy: glCopyBufferSubData into a staging buffer,
 *      then glGetBufferSubData of the staging buffer (--map: glMapBufferRange of it, as
 *      tensorgl reads; --dispatch: a second dispatch copies the buffer first, so a shader
 *      reads the update).
 * Then every element must hold the value of the last write to it. A miss is counted as "update
 * lost" (the range holds step 1's value) or "other" (anything else).
 * --copy-first: step 1 writes the buffer with glCopyBufferSubData from another buffer (which a
 * dispatch filled) instead of by a dispatch: an API copy queued into the buffer the update then
 * writes, as tensorgl's device copies are.
 * --flush / --barrier: glFlush / glMemoryBarrier(GL_ALL_BARRIER_BITS) between step 1 and the
 * update.
 * --realloc: after step 1 the buffer object is deleted and a new one made in its place
 * (glBufferData with no data, as tensorgl frees and allocates without its pool), so step 1's
 * write still queued belongs to a deleted buffer; only the updated range is then defined and
 * checked.
 *
 * Usage: upload_order [--wait] [--dispatch] [--map] [--realloc] [--copy-first] [--flush]
 *                     [--barrier] [--bytes N] [--rounds N]
 * Run several copies at once to load the GPU: `make repro`, then for example
 *   for i in 1 2 3 4 5 6 7 8; do build/upload_order --wait & done; wait
 * Exit status: 0 when every round read back what was written, 1 on a miss, 2 when GL could
 * not be set up. */
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BUFS = 6 };

static const char *const fill_src = "#version 430\n"
                                    "layout(local_size_x = 256) in;\n"
                                    "layout(std430, binding = 0) buffer Out { float o[]; };\n"
                                    "layout(std430, binding = 1) readonly buffer In { float x[]; };\n"
                                    "layout(location = 0) uniform float value;\n"
                                    "layout(location = 1) uniform uint n;\n"
                                    "layout(location = 2) uniform uint copy;\n"
                                    "void main() {\n"
                                    "    uint i = gl_GlobalInvocationID.x;\n"
                                    "    if (i < n) o[i] = copy != 0u ? x[i] : value;\n"
                                    "}\n";

static int setup_gl(void)
{
    PFNEGLQUERYDEVICESEXTPROC query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    EGLDeviceEXT dev;
    EGLint count = 0;
    EGLDisplay dpy = EGL_NO_DISPLAY;
    if (query_devices && query_devices(1, &dev, &count) && count > 0)
        dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, dev, NULL);
    if (dpy == EGL_NO_DISPLAY)
        dpy = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL) || !eglBindAPI(EGL_OPENGL_API)) {
        fprintf(stderr, "upload_order: no EGL display (0x%x)\n", (unsigned)eglGetError());
        return 0;
    }
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3,
                            EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
    if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        fprintf(stderr, "upload_order: no GL 4.3 core context (0x%x)\n", (unsigned)eglGetError());
        return 0;
    }
    return 1;
}

static GLuint build_program(void)
{
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER), prog = glCreateProgram();
    GLint ok = 0;
    glShaderSource(sh, 1, &fill_src, NULL);
    glCompileShader(sh);
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok)
        return 0;
    glAttachShader(prog, sh);
    glLinkProgram(prog);
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    glDeleteShader(sh);
    return ok ? prog : 0;
}

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void dispatch(GLuint out, GLuint in, float value, GLuint n, GLuint copy)
{
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, out);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, in);
    glUniform1f(0, value);
    glUniform1ui(1, n);
    glUniform1ui(2, copy);
    glDispatchCompute((n + 255) / 256, 1, 1);
    glMemoryBarrier(GL_ALL_BARRIER_BITS);
}

int main(int argc, char **argv)
{
    int wait = 0, via_dispatch = 0, map = 0, realloc_each = 0, copy_first = 0, flush = 0, barrier = 0;
    long bytes = 16384, rounds = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--wait"))
            wait = 1;
        else if (!strcmp(argv[i], "--dispatch"))
            via_dispatch = 1;
        else if (!strcmp(argv[i], "--map"))
            map = 1;
        else if (!strcmp(argv[i], "--realloc"))
            realloc_each = 1;
        else if (!strcmp(argv[i], "--copy-first"))
            copy_first = 1;
        else if (!strcmp(argv[i], "--flush"))
            flush = 1;
        else if (!strcmp(argv[i], "--barrier"))
            barrier = 1;
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
            bytes = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: upload_order [--wait] [--dispatch] [--map] [--realloc] [--copy-first] [--flush] "
                            "[--barrier] [--bytes N] [--rounds N]\n");
            return 2;
        }
    }
    if (bytes < 8 || bytes > (1L << 26) || rounds < 1) {
        fprintf(stderr, "upload_order: --bytes takes 8 to 2^26, --rounds at least 1\n");
        return 2;
    }
    if (!setup_gl())
        return 2;
    GLuint prog = build_program();
    if (!prog) {
        fprintf(stderr, "upload_order: the compute shader did not build\n");
        return 2;
    }
    glUseProgram(prog);
    GLuint n = (GLuint)(bytes / 4), bufs[BUFS], staging, copy_out;
    glGenBuffers(BUFS, bufs);
    glGenBuffers(1, &staging);
    glGenBuffers(1, &copy_out);
    for (int i = 0; i < BUFS; i++) {
        glBindBuffer(GL_COPY_WRITE_BUFFER, bufs[i]);
        glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)n * 4, NULL, GL_DYNAMIC_COPY);
    }
    glBindBuffer(GL_COPY_WRITE_BUFFER, staging);
    glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)n * 4, NULL, GL_STREAM_READ);
    glBindBuffer(GL_COPY_WRITE_BUFFER, copy_out);
    glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)n * 4, NULL, GL_DYNAMIC_DRAW);
    float *host = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    if (!host || !got)
        return 2;
    uint64_t rng = (uint64_t)getpid();
    long lost = 0, other = 0, bad_rounds = 0;
    for (long r = 0; r < rounds; r++) {
        GLuint *slot = &bufs[next(&rng) % BUFS], b = *slot;
        float first = (float)(r % 1000000) + 0.25f, second = -(float)(r % 1000000) - 0.5f;
        GLuint off = (GLuint)(next(&rng) % n), len = 1 + (GLuint)(next(&rng) % (n - off));
        if (copy_first) {
            dispatch(copy_out, copy_out, first, n, 0);
            glBindBuffer(GL_COPY_READ_BUFFER, copy_out);
            glBindBuffer(GL_COPY_WRITE_BUFFER, b);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)n * 4);
        } else {
            dispatch(b, b, first, n, 0);
        }
        if (realloc_each) {
            glDeleteBuffers(1, slot);
            glGenBuffers(1, slot);
            b = *slot;
            glBindBuffer(GL_COPY_WRITE_BUFFER, b);
            glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)n * 4, NULL, GL_DYNAMIC_COPY);
        }
        if (flush)
            glFlush();
        if (barrier)
            glMemoryBarrier(GL_ALL_BARRIER_BITS);
        if (wait) {
            GLsync f = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            glClientWaitSync(f, GL_SYNC_FLUSH_COMMANDS_BIT, 10000000000ull);
            glDeleteSync(f);
        }
        for (GLuint i = 0; i < len; i++)
            host[i] = second;
        glBindBuffer(GL_COPY_WRITE_BUFFER, b);
        glBufferSubData(GL_COPY_WRITE_BUFFER, (GLintptr)off * 4, (GLsizeiptr)len * 4, host);
        GLuint read_from = b;
        if (via_dispatch) {
            dispatch(copy_out, b, 0, n, 1);
            read_from = copy_out;
        }
        glBindBuffer(GL_COPY_READ_BUFFER, read_from);
        glBindBuffer(GL_COPY_WRITE_BUFFER, staging);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)n * 4);
        if (map) {
            const void *m = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)n * 4, GL_MAP_READ_BIT);
            if (m)
                memcpy(got, m, (size_t)n * 4);
            glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        } else {
            glGetBufferSubData(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)n * 4, got);
        }
        GLenum err = glGetError();
        if (err != GL_NO_ERROR) {
            fprintf(stderr, "upload_order: GL error 0x%x in round %ld\n", (unsigned)err, r);
            return 2;
        }
        long miss = 0;
        for (GLuint i = 0; i < n; i++) {
            int updated = i >= off && i - off < len;
            if (realloc_each && !updated)
                continue;
            float want = updated ? second : first;
            if (got[i] != want) {
                miss++;
                if (want == second && got[i] == first)
                    lost++;
                else
                    other++;
            }
        }
        bad_rounds += miss != 0;
    }
    printf("upload_order: %ld rounds of %ld bytes%s%s%s%s%s%s%s: %ld rounds missed (%ld elements with the update lost, "
           "%ld other)\n",
           rounds, bytes, copy_first ? ", written first by a GL copy" : "",
           flush ? ", glFlush before the update" : "", barrier ? ", all barriers before the update" : "", wait ? ", host wait before each update" : "", via_dispatch ? ", read by a dispatch" : "",
           map ? ", staging mapped" : "", realloc_each ? ", a new buffer each round" : "", bad_rounds, lost, other);
    free(host);
    free(got);
    return bad_rounds ? 1 : 0;
}
