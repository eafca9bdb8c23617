/* libFuzzer harness: arbitrary bytes as a program cache entry (src/gl/gl_disk_cache.c), loaded
 * on a GL backend (llvmpipe) through the cache's own reader. Half the inputs are wrapped first in
 * a header that passes every check of ours (magic, sizes, key, identity, checksum: the
 * tgl_gl_test_cache_entry hook), so their bytes reach the driver as a program binary of the
 * format their first four bytes name. Oracle: never a crash, hang or sanitizer report; the
 * reader returns 0 (ignored) or 1 with a linked program, and leaves no GL error behind. */
#include "tensorgl.h"
#include "gl/gl_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tgl_backend *b;
static char path[4200];
static const char source[] = "fuzz_cache: the source whose entry every input replaces";

static void start(void)
{
    char dir[] = "/tmp/tgl-fuzz-cache-XXXXXX";
    if (!mkdtemp(dir) || setenv("TGL_CACHE_DIR", dir, 1))
        abort();
    tgl_options o = {.kind = TGL_BACKEND_GL};
    if (tgl_open(&o, &b) || tgl_synchronize(b)) /* the context current on this thread */
        abort();
    if (!tgl_gl_test_cache_path(b, source, path, sizeof path))
        abort(); /* the driver offers no binary format: nothing to fuzz */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char sealed[1 << 17];
    if (!b)
        start();
    if (size < 5)
        return 0;
    const unsigned char *bytes = data + 1;
    size_t n = size - 1;
    if (data[0] & 1) { /* past our checks: the driver gets the rest */
        uint32_t format;
        memcpy(&format, data + 1, 4);
        n = tgl_gl_test_cache_entry(b, source, format, data + 5, size - 5, sealed, sizeof sealed);
        if (!n)
            return 0;
        bytes = sealed;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, bytes, n) != (ssize_t)n || close(fd))
        abort();
    GLuint program = 0;
    int loaded = tgl_gl_disk_cache_load(b, source, &program);
    if (loaded != 0 && loaded != 1)
        abort();
    if (loaded) {
        GLint linked = 0;
        glGetProgramiv(program, GL_LINK_STATUS, &linked);
        if (!linked)
            abort(); /* an accepted entry must be a linked program */
        glDeleteProgram(program);
    }
    if (glGetError() != GL_NO_ERROR)
        abort();
    return 0;
}
