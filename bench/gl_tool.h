/* For the standalone GL developer tools in bench/ (compile_time.c, fp_peak.c): a clock, reading
 * a file, and a headless desktop GL 4.3 context made current. Header-only, so each tool
 * stays one `cc` line (scripts/compile-time.sh, scripts/fp-peak.sh); not part of the library. */
#ifndef TGL_BENCH_GL_TOOL_H
#define TGL_BENCH_GL_TOOL_H

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double tool_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The whole file as a NUL-terminated string (malloc'd), or NULL. */
static inline char *tool_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
    if (n >= 0 && !fseek(f, 0, SEEK_SET) && (text = malloc((size_t)n + 1))) {
        if (fread(text, 1, (size_t)n, f) != (size_t)n) {
            free(text);
            text = NULL;
        } else {
            text[n] = '\0';
        }
    }
    fclose(f);
    return text;
}

/* A desktop GL 4.3 core context on the surfaceless platform (Mesa; NVIDIA's EGL has it too),
 * made current. 0 when there is none. */
static inline int tool_make_current(void)
{
    EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL) || !eglBindAPI(EGL_OPENGL_API))
        return 0;
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3,
                            EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
    return ctx != EGL_NO_CONTEXT && eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
}

#endif
