/* The headless EGL context ladder.
 *
 * Displays: EGL_EXT_platform_device (device TGL_DEVICE) -> EGL_MESA_platform_surfaceless ->
 * the default display. APIs on each display: desktop GL 4.3 core, then OpenGL ES 3.1 (TGL_API
 * narrows this to one). The first pair that yields a current context with compute shaders wins;
 * every step that failed is named in the error, so "no GL context" says which rung broke. */
#include "gl_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <string.h>

/* A thread that ends with a context current leaves it bound, in Mesa's EGL, to the thread's
 * freed EGL state: eglMakeCurrent on any other thread then fails with EGL_BAD_ACCESS (only a new
 * thread whose state malloc happens to put at the same address gets it), and tgl_close there
 * cannot reach the context. So every thread that makes one of our contexts current gets a
 * thread-exit hook that calls eglReleaseThread. Its key is made before this library's first EGL
 * call, so unless the program used EGL before its first GL backend, it precedes Mesa's and
 * glvnd's keys, and glibc runs destructors in key order: ours releases the context while the
 * thread's EGL state still exists. */
static pthread_key_t exit_key;
static int exit_key_made;

static void release_at_thread_exit(void *marker)
{
    (void)marker;
    eglReleaseThread();
}

static void make_exit_key(void)
{
    exit_key_made = !pthread_key_create(&exit_key, release_at_thread_exit);
}

/* First in every entry point here that calls EGL. */
static void exit_key_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_exit_key);
}

/* This thread has one of our contexts current: release it when the thread ends. */
static void release_at_exit(void)
{
    if (exit_key_made && !pthread_getspecific(exit_key))
        pthread_setspecific(exit_key, &exit_key_made);
}

/* EGL_EXT_create_context_robustness's own token; EGL 1.5 has a different one for the same
 * request (EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY). */
#define TGL_EGL_RESET_STRATEGY_EXT 0x3138
#define TGL_EGL_LOSE_CONTEXT_ON_RESET_EXT 0x31BF

/* A display, once initialized, stays so for the life of the process. eglGetPlatformDisplay hands
 * the same display to every backend of the process, so eglTerminate would destroy the contexts of
 * backends still open; and terminating it when the last backend closes makes Mesa unload its
 * driver, so the next tgl_open loads it again (llvmpipe sets LLVM up again), and Mesa 22.3's
 * swrast_dri loses a 128-byte block at each unload (LeakSanitizer: 128 bytes per tgl_open +
 * tgl_close). Each backend's context is destroyed at tgl_close; the display's own state goes with
 * the process. eglInitialize on an initialized display only reports its version. */
static int display_acquire(EGLDisplay dpy, EGLint *major, EGLint *minor)
{
    return eglInitialize(dpy, major, minor) == EGL_TRUE;
}

/* The reasons collected while walking the ladder, for the final error message. */
typedef struct ladder_notes {
    char text[900];
    size_t len;
} ladder_notes;

__attribute__((format(printf, 2, 3))) static void note(ladder_notes *n, const char *fmt, ...)
{
    if (n->len + 3 >= sizeof n->text)
        return;
    if (n->len)
        n->len += (size_t)snprintf(n->text + n->len, sizeof n->text - n->len, "; ");
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(n->text + n->len, sizeof n->text - n->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        n->len += (size_t)w < sizeof n->text - n->len ? (size_t)w : sizeof n->text - n->len - 1;
}

static int client_ext(const char *name)
{
    return epoxy_has_egl_extension(EGL_NO_DISPLAY, name);
}

static void GLAPIENTRY debug_message(GLenum source, GLenum type, GLuint id, GLenum severity,
                                     GLsizei length, const GLchar *message, const void *user)
{
    (void)source, (void)type, (void)length;
    int level = severity == GL_DEBUG_SEVERITY_HIGH     ? TGL__LOG_ERROR
                : severity == GL_DEBUG_SEVERITY_MEDIUM ? TGL__LOG_WARN
                : severity == GL_DEBUG_SEVERITY_LOW    ? TGL__LOG_INFO
                                                       : TGL__LOG_DEBUG;
    tgl__log((tgl_backend *)user, level, "GL debug (id %u): %s", id, message);
}

/* Asks for one context; robust first where the display can do it, then plain. */
static EGLContext create_context(EGLDisplay dpy, int es, int debug, int *robust)
{
    EGLConfig config = EGL_NO_CONFIG_KHR;
    if (!epoxy_has_egl_extension(dpy, "EGL_KHR_no_config_context") &&
        !epoxy_has_egl_extension(dpy, "EGL_MESA_configless_context")) {
        const EGLint want[] = {EGL_RENDERABLE_TYPE, es ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT,
                               EGL_SURFACE_TYPE, EGL_DONT_CARE, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(dpy, want, &config, 1, &n) || n < 1)
            return EGL_NO_CONTEXT;
    }
    int egl15 = epoxy_egl_version(dpy) >= 15;
    int can_robust = egl15 || epoxy_has_egl_extension(dpy, "EGL_EXT_create_context_robustness");
    for (int try_robust = can_robust; try_robust >= 0; try_robust--) {
        EGLint a[16], i = 0;
        a[i++] = EGL_CONTEXT_MAJOR_VERSION;
        a[i++] = es ? 3 : 4;
        a[i++] = EGL_CONTEXT_MINOR_VERSION;
        a[i++] = es ? 1 : 3;
        if (!es) {
            a[i++] = EGL_CONTEXT_OPENGL_PROFILE_MASK;
            a[i++] = EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT;
        }
        if (debug) {
            a[i++] = EGL_CONTEXT_OPENGL_DEBUG;
            a[i++] = EGL_TRUE;
        }
        if (try_robust) {
            a[i++] = egl15 ? EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY : TGL_EGL_RESET_STRATEGY_EXT;
            a[i++] = egl15 ? EGL_LOSE_CONTEXT_ON_RESET : TGL_EGL_LOSE_CONTEXT_ON_RESET_EXT;
        }
        a[i] = EGL_NONE;
        EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, a);
        if (ctx != EGL_NO_CONTEXT) {
            *robust = try_robust;
            return ctx;
        }
    }
    return EGL_NO_CONTEXT;
}

/* With the context current: is it the API version we need, with compute shaders? */
static int context_usable(int es, ladder_notes *n, const char *step)
{
    int version = epoxy_gl_version();
    int desktop = epoxy_is_desktop_gl();
    if (desktop == es) {
        note(n, "%s: asked for %s, got %s", step, es ? "OpenGL ES" : "desktop GL",
             desktop ? "desktop GL" : "OpenGL ES");
        return 0;
    }
    if (version < (es ? 31 : 43)) {
        note(n, "%s: no GL >= 4.3 core / ES 3.1 context (got %s %d.%d)", step, es ? "ES" : "GL",
             version / 10, version % 10);
        return 0;
    }
    GLint invocations = 0;
    glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &invocations);
    if (glGetError() != GL_NO_ERROR || invocations <= 0) {
        note(n, "%s: no compute shaders", step);
        return 0;
    }
    return 1;
}

static void enable_debug_output(tgl_backend *b, tgl_egl *e)
{
    int has = e->es ? epoxy_gl_version() >= 32 || epoxy_has_gl_extension("GL_KHR_debug")
                    : epoxy_gl_version() >= 43 || epoxy_has_gl_extension("GL_KHR_debug");
    if (!has) {
        tgl__log(b, TGL__LOG_WARN, "TGL_DEBUG: the context has no KHR_debug; no driver messages");
        e->debug = 0;
        return;
    }
    glEnable(GL_DEBUG_OUTPUT);
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageCallback(debug_message, b);
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, NULL, GL_TRUE);
}

/* Tries the APIs on an initialized display; on success e holds a current context. */
static int try_apis(tgl_backend *b, tgl_egl *e, EGLDisplay dpy, const char *step, ladder_notes *n)
{
    if (!epoxy_has_egl_extension(dpy, "EGL_KHR_surfaceless_context")) {
        note(n, "%s: no EGL_KHR_surfaceless_context", step);
        return 0;
    }
    int debug = (b->config.flags & TGL_FLAG_DEBUG) != 0;
    for (int es = 0; es <= 1; es++) {
        if ((es && b->config.api == TGL__API_GL) || (!es && b->config.api == TGL__API_GLES))
            continue;
        char api_step[128];
        snprintf(api_step, sizeof api_step, "%s, %s", step, es ? "ES 3.1" : "GL 4.3 core");
        if (!eglBindAPI(es ? EGL_OPENGL_ES_API : EGL_OPENGL_API)) {
            note(n, "%s: eglBindAPI failed (0x%x)", api_step, eglGetError());
            continue;
        }
        int robust = 0;
        EGLContext ctx = create_context(dpy, es, debug, &robust);
        if (ctx == EGL_NO_CONTEXT) {
            note(n, "%s: no GL >= 4.3 core / ES 3.1 context (eglCreateContext 0x%x)", api_step,
                 eglGetError());
            continue;
        }
        if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            note(n, "%s: eglMakeCurrent failed (0x%x)", api_step, eglGetError());
            eglDestroyContext(dpy, ctx);
            continue;
        }
        if (!context_usable(es, n, api_step)) {
            eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            eglDestroyContext(dpy, ctx);
            continue;
        }
        release_at_exit();
        e->dpy = dpy;
        e->ctx = ctx;
        e->es = es;
        e->robust = robust;
        e->debug = debug;
        tgl__strlcpy(e->path, step, sizeof e->path);
        if (debug)
            enable_debug_output(b, e);
        /* The automatic fallback says why it is not on desktop GL. */
        if (es && b->config.api != TGL__API_GLES)
            tgl__log(b, TGL__LOG_WARN, "desktop GL 4.3 core is not available (%s); running on OpenGL ES 3.1",
                     n->len ? n->text : "no reason given");
        return 1;
    }
    return 0;
}

static int try_display(tgl_backend *b, tgl_egl *e, EGLDisplay dpy, const char *step, ladder_notes *n)
{
    if (dpy == EGL_NO_DISPLAY) {
        note(n, "%s: no display (0x%x)", step, eglGetError());
        return 0;
    }
    EGLint major = 0, minor = 0;
    if (!display_acquire(dpy, &major, &minor)) {
        note(n, "%s: no display (eglInitialize 0x%x)", step, eglGetError());
        return 0;
    }
    if (try_apis(b, e, dpy, step, n)) {
        const char *vendor = eglQueryString(dpy, EGL_VENDOR);
        snprintf(e->version, sizeof e->version, "EGL %d.%d (%s)", major, minor, vendor ? vendor : "?");
        return 1;
    }
    return 0;
}

#ifndef EGL_DRM_RENDER_NODE_FILE_EXT
#define EGL_DRM_RENDER_NODE_FILE_EXT 0x3377 /* EGL_EXT_device_drm_render_node */
#endif

/* 1 when the space-separated list holds the word. */
static int has_word(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return 1;
    return 0;
}

/* Fills d from the device's own strings and from a short-lived context on it (desktop GL 4.3
 * core, else ES 3.1). The calling thread's current context and API are put back afterwards. */
static void describe_device(EGLDeviceEXT dev, int index, struct tgl_device_entry *d)
{
    memset(d, 0, sizeof *d);
    d->index = index;
    const char *ext = eglQueryDeviceStringEXT(dev, EGL_EXTENSIONS);
    d->software = ext && has_word(ext, "EGL_MESA_device_software");
    const char *node = NULL;
    if (ext && has_word(ext, "EGL_EXT_device_drm_render_node"))
        node = eglQueryDeviceStringEXT(dev, EGL_DRM_RENDER_NODE_FILE_EXT);
    if (!node && ext && has_word(ext, "EGL_EXT_device_drm"))
        node = eglQueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT);
    tgl__strlcpy(d->drm_node, node ? node : "", sizeof d->drm_node);

    EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, dev, NULL);
    EGLint major = 0, minor = 0;
    if (dpy == EGL_NO_DISPLAY || !display_acquire(dpy, &major, &minor)) {
        snprintf(d->problem, sizeof d->problem, "no display (0x%x)", eglGetError());
        return;
    }
    const char *vendor = eglQueryString(dpy, EGL_VENDOR);
    tgl__strlcpy(d->driver, vendor ? vendor : "", sizeof d->driver);
    EGLDisplay old_dpy = eglGetCurrentDisplay();
    EGLContext old_ctx = eglGetCurrentContext();
    EGLSurface old_draw = eglGetCurrentSurface(EGL_DRAW), old_read = eglGetCurrentSurface(EGL_READ);
    EGLenum old_api = eglQueryAPI();
    ladder_notes n = {{0}, 0}; /* why the last attempt failed */
    int surfaceless = epoxy_has_egl_extension(dpy, "EGL_KHR_surfaceless_context");
    if (!surfaceless)
        note(&n, "no EGL_KHR_surfaceless_context");
    /* Desktop GL 4.3 core first, then ES 3.1, as the ladder tries them. */
    for (int es = 0; surfaceless && es <= 1 && !d->api[0]; es++) {
        int robust = 0;
        EGLContext ctx = eglBindAPI(es ? EGL_OPENGL_ES_API : EGL_OPENGL_API)
                             ? create_context(dpy, es, 0, &robust) : EGL_NO_CONTEXT;
        if (ctx == EGL_NO_CONTEXT)
            continue;
        if (eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            const char *renderer = (const char *)glGetString(GL_RENDERER);
            const char *version = (const char *)glGetString(GL_VERSION);
            tgl__strlcpy(d->name, renderer ? renderer : "", sizeof d->name);
            ladder_notes why = {{0}, 0};
            if (context_usable(es, &why, es ? "ES 3.1" : "GL 4.3 core")) {
                tgl__strlcpy(d->api, es ? "OpenGL ES" : "OpenGL", sizeof d->api);
                tgl__strlcpy(d->version, version ? version : "", sizeof d->version);
            } else {
                n = why;
            }
            eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
        eglDestroyContext(dpy, ctx);
    }
    if (!d->api[0])
        tgl__strlcpy(d->problem, n.len ? n.text : "no GL 4.3 core or ES 3.1 context", sizeof d->problem);
    if (old_api != EGL_NONE)
        eglBindAPI(old_api);
    if (old_ctx != EGL_NO_CONTEXT)
        eglMakeCurrent(old_dpy, old_draw, old_read, old_ctx);
}

/* The EGL devices, or -1 with *why set when EGL cannot list them. */
static int query_devices(EGLDeviceEXT *devices, int capacity, const char **why)
{
    EGLint count = 0;
    if (!epoxy_has_egl()) {
        *why = "no EGL: libEGL.so.1 could not be loaded";
        return -1;
    }
    if (!client_ext("EGL_EXT_platform_device") ||
        !(client_ext("EGL_EXT_device_enumeration") || client_ext("EGL_EXT_device_base"))) {
        *why = "EGL offers no device enumeration (EGL_EXT_device_enumeration, EGL_EXT_platform_device)";
        return -1;
    }
    if (!eglQueryDevicesEXT(capacity, devices, &count) || count < 0) {
        *why = "eglQueryDevicesEXT failed";
        return -1;
    }
    return count;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

tgl_status tgl_gl_list_devices(struct tgl_device_entry *out, int capacity, int *count)
{
    exit_key_init();
    EGLDeviceEXT devices[64];
    const char *why = NULL;
    int n = query_devices(devices, 64, &why);
    if (n < 0)
        return tgl__fail(NULL, TGL_ERR_NO_DEVICE, "tgl_list_devices: %s", why);
    *count = n;
    for (int i = 0; i < n && i < capacity; i++)
        describe_device(devices[i], i, &out[i]);
    return TGL_OK;
}

/* Step 1. Returns -1 when an explicitly chosen device cannot be had (no fallback then). */
static int try_device_platform(tgl_backend *b, tgl_egl *e, ladder_notes *n)
{
    const char *step = "EGL_EXT_platform_device";
    int want = b->config.device;
    const char *name = b->config.device_name;
    int must = tgl__device_demanded(&b->config);
    EGLDeviceEXT devices[64];
    const char *why = NULL;
    int count = query_devices(devices, 64, &why);
    if (count <= 0) {
        note(n, "%s: %s", step, count < 0 ? why : "no EGL devices");
        return must ? -1 : 0;
    }
    if (name[0]) {
        /* TGL_DEVICE=text: the first device whose name, driver or DRM node contains it. */
        want = -1;
        for (int i = 0; i < count && want < 0; i++) {
            struct tgl_device_entry d;
            describe_device(devices[i], i, &d);
            if (contains_nocase(d.name, name) || contains_nocase(d.driver, name) || contains_nocase(d.drm_node, name))
                want = i;
            else
                note(n, "device %d (%s, %s%s%s) does not match", i, d.name[0] ? d.name : "no context",
                     d.driver, d.drm_node[0] ? ", " : "", d.drm_node);
        }
        if (want < 0) {
            note(n, "%s: no device matches TGL_DEVICE=%s", step, name);
            return -1;
        }
    } else if (want >= count) {
        note(n, "%s: TGL_DEVICE=%d but only %d EGL device%s", step, want, (int)count,
             count == 1 ? "" : "s");
        return must ? -1 : 0;
    }
    char label[64];
    snprintf(label, sizeof label, "EGL_EXT_platform_device #%d of %d", want, (int)count);
    EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[want], NULL);
    if (try_display(b, e, dpy, label, n))
        return 1;
    return must ? -1 : 0;
}

tgl_status tgl_egl_create(tgl_backend *b, tgl_egl *e)
{
    exit_key_init();
    ladder_notes n = {{0}, 0};
    memset(e, 0, sizeof *e);
    if (!epoxy_has_egl())
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "no EGL: libEGL.so.1 could not be loaded");

    int r = try_device_platform(b, e, &n);
    if (r > 0)
        return TGL_OK;
    if (r < 0)
        return tgl__fail(b, TGL_ERR_NO_DEVICE, "no usable GL context on the device TGL_DEVICE (or opts->device) "
                         "names: %s (`tensorgl devices` lists them)", n.text);

    if (client_ext("EGL_MESA_platform_surfaceless") && client_ext("EGL_EXT_platform_base")) {
        EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        if (try_display(b, e, dpy, "EGL_MESA_platform_surfaceless", &n))
            return TGL_OK;
    } else {
        note(&n, "EGL_MESA_platform_surfaceless: not offered");
    }
    if (try_display(b, e, eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display", &n))
        return TGL_OK;
    return tgl__fail(b, TGL_ERR_NO_DEVICE, "no usable GL context: %s", n.text);
}

void tgl_egl_destroy(tgl_egl *e)
{
    if (e->ctx != EGL_NO_CONTEXT && e->ctx) {
        if (eglGetCurrentContext() == e->ctx) {
            eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            eglReleaseThread(); /* frees this thread's EGL state along with the context */
        }
        eglDestroyContext(e->dpy, e->ctx);
    }
    memset(e, 0, sizeof *e);
}

tgl_status tgl_egl_make_current(tgl_backend *b, tgl_egl *e)
{
    if (eglGetCurrentContext() == e->ctx)
        return TGL_OK;
    if (eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, e->ctx)) {
        release_at_exit();
        return TGL_OK;
    }
    EGLint err = eglGetError();
    if (err == EGL_CONTEXT_LOST)
        return tgl__fail(b, TGL_ERR_DEVICE_LOST, "eglMakeCurrent: context lost");
    return tgl__fail(b, TGL_ERR_INTERNAL,
                     "eglMakeCurrent failed (0x%x): is this backend still current on another thread? (that thread "
                     "must end or call tgl_detach first)", err);
}

tgl_status tgl_egl_release(tgl_backend *b, tgl_egl *e)
{
    if (eglGetCurrentContext() != e->ctx)
        return TGL_OK;
    if (eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT))
        return TGL_OK;
    return tgl__fail(b, TGL_ERR_INTERNAL, "eglMakeCurrent(EGL_NO_CONTEXT) failed (0x%x)", eglGetError());
}

int tgl_egl_display_exists(void)
{
    exit_key_init();
    if (!epoxy_has_egl())
        return 0;
    EGLDisplay candidates[2] = {EGL_NO_DISPLAY, eglGetDisplay(EGL_DEFAULT_DISPLAY)};
    if (client_ext("EGL_MESA_platform_surfaceless") && client_ext("EGL_EXT_platform_base"))
        candidates[0] = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (client_ext("EGL_EXT_platform_device") && client_ext("EGL_EXT_device_enumeration")) {
        EGLDeviceEXT dev;
        EGLint count = 0;
        if (eglQueryDevicesEXT(1, &dev, &count) && count > 0 && candidates[0] == EGL_NO_DISPLAY)
            candidates[0] = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, dev, NULL);
    }
    for (int i = 0; i < 2; i++) {
        EGLint major, minor;
        if (candidates[i] != EGL_NO_DISPLAY && display_acquire(candidates[i], &major, &minor))
            return 1;
    }
    return 0;
}
