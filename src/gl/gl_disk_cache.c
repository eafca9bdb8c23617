/* Linked programs saved on disk (glGetProgramBinary) so a later process skips the compile.
 *
 * A file is named by a 128-bit hash of what the binary depends on: the identity (library
 * version, GL API, vendor, renderer and version string, which carries the driver version) and
 * the program's complete source (version line, defines, workgroup size, kernel text). Its
 * contents are never trusted: the header's magic, sizes, key and identity must match, a
 * checksum over the header, identity and payload must match, and the driver must accept the
 * binary (link status); a file
 * failing any of these is ignored, and the rebuilt program replaces it. Files are written to a
 * temporary name and renamed into place, so a concurrent reader sees the old file or the new
 * one, never half of one. Failing to read or write the cache never fails an op: the program is
 * compiled from source as without a cache. With TGL_DEBUG=1 each of these is logged. */
#include "gl_internal.h"
#include "../core/files.h"
#include "../core/hash.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "TGLPBIN2" /* 2: the checksum covers the header and identity too */
#define MAX_FILE_BYTES (64u << 20) /* larger than any program binary seen; a bigger file is damage */

typedef struct file_header {
    char magic[8];
    uint32_t identity_bytes;
    uint32_t format;     /* the GLenum glGetProgramBinary returned */
    uint64_t key[2];
    uint64_t binary_bytes;
    uint64_t binary_sum; /* of everything above it, the identity and the payload (entry_sum) */
} file_header;

/* The file's name: the hash of the identity, then of the source. */
static void key_of(const tgl_gl_disk_cache *c, const char *source, uint64_t key[2])
{
    static const uint64_t start[2];
    uint64_t id[2];
    tgl__hash128(c->identity, strlen(c->identity) + 1, start, id);
    tgl__hash128(source, strlen(source), id, key);
}

/* The entry's checksum: the header's fields before it (magic, sizes, format, key), the identity
 * and the payload, so what the entry claims is bound to its binary (a checksum of the payload
 * alone let two entries trade keys and run one kernel's binary for another's source). */
static uint64_t entry_sum(const file_header *h, const char *identity, const void *bin)
{
    static const uint64_t start[2];
    uint64_t a[2], b[2], c[2];
    tgl__hash128(h, offsetof(file_header, binary_sum), start, a);
    tgl__hash128(identity, h->identity_bytes, a, b);
    tgl__hash128(bin, (size_t)h->binary_bytes, b, c);
    return c[0];
}

static int path_of(const tgl_gl_disk_cache *c, const uint64_t key[2], char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%016llx%016llx.bin", c->dir, (unsigned long long)key[0],
                     (unsigned long long)key[1]);
    return n > 0 && (size_t)n < size;
}

int tgl_gl_make_dirs(const char *dir)
{
    char path[sizeof ((tgl_gl_disk_cache *)0)->dir];
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    tgl__strlcpy(path, dir, sizeof path);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

void tgl_gl_disk_cache_init(tgl_backend *b, tgl_gl_disk_cache *c)
{
    memset(c, 0, sizeof *c);
    if (!b->config.cache_dir[0])
        return;
    GLint formats = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    while (glGetError() != GL_NO_ERROR) {
    }
    if (formats <= 0) {
        if (b->config.flags & TGL_FLAG_DEBUG)
            tgl__log(b, TGL__LOG_DEBUG, "program cache off: the driver offers no program binary format");
        return;
    }
    tgl__strlcpy(c->dir, b->config.cache_dir, sizeof c->dir);
    tgl_gl_identity(b, c->identity, sizeof c->identity);
    c->enabled = 1;
}

void tgl_gl_identity(tgl_backend *b, char *out, size_t size)
{
    tgl_gl *gl = tgl_gl_of(b);
    snprintf(out, size, "tensorgl %d.%d.%d\n%s\n%s\n%s\n%s", TGL_VERSION_MAJOR, TGL_VERSION_MINOR,
             TGL_VERSION_PATCH, gl->egl.es ? "OpenGL ES" : "OpenGL", gl->vendor, gl->renderer, gl->gl_version);
}

/* Reads the whole file into a malloc'd buffer; NULL when absent, unreadable or implausible. */
static unsigned char *read_file(const char *path, size_t *size)
{
    int fd = tgl__open_regular(path); /* a FIFO here would block the first op forever */
    if (fd < 0)
        return NULL;
    struct stat st;
    unsigned char *data = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof(file_header) &&
        st.st_size <= (off_t)MAX_FILE_BYTES && (data = malloc((size_t)st.st_size))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got != (size_t)st.st_size) {
            free(data);
            data = NULL;
        }
        *size = got;
    }
    close(fd);
    return data;
}

int tgl_gl_disk_cache_load(tgl_backend *b, const char *source, GLuint *out)
{
    tgl_gl_disk_cache *c = &tgl_gl_of(b)->disk;
    uint64_t key[2];
    char path[sizeof c->dir + 48];
    if (!c->enabled)
        return 0;
    key_of(c, source, key);
    if (!path_of(c, key, path, sizeof path))
        return 0;
    size_t size = 0;
    unsigned char *data = read_file(path, &size);
    if (!data)
        return 0; /* absent: the common cold case, not a rejection */

    file_header h;
    memcpy(&h, data, sizeof h);
    size_t id_len = strlen(c->identity);
    /* Sizes first (the identity's length is checked before it positions anything), then the
     * contents. */
    int ok = !memcmp(h.magic, MAGIC, 8) && h.identity_bytes == id_len && h.key[0] == key[0] &&
             h.key[1] == key[1] && size - sizeof h >= id_len && h.binary_bytes == size - sizeof h - id_len &&
             h.binary_bytes > 0 && h.binary_bytes <= INT32_MAX;
    const unsigned char *bin = data + sizeof h + id_len;
    ok = ok && !memcmp(data + sizeof h, c->identity, id_len) && entry_sum(&h, c->identity, bin) == h.binary_sum;
    GLuint program = 0;
    if (ok) {
        program = glCreateProgram();
        glProgramBinary(program, (GLenum)h.format, bin, (GLsizei)h.binary_bytes);
        GLint linked = 0;
        glGetProgramiv(program, GL_LINK_STATUS, &linked);
        /* A driver that refuses the binary reports GL_INVALID_ENUM or an unlinked program. */
        while (glGetError() != GL_NO_ERROR)
            linked = 0;
        ok = program && linked;
    }
    free(data);
    if (!ok) {
        if (program)
            glDeleteProgram(program);
        c->rejected++;
        if (b->config.flags & TGL_FLAG_DEBUG)
            tgl__log(b, TGL__LOG_DEBUG, "program cache: ignoring %s (damaged, stale or refused by the driver)",
                     path);
        return 0;
    }
    c->hits++;
    *out = program;
    return 1;
}

static int write_all(int fd, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The header of source's entry holding n bytes of format `format`. */
static file_header make_header(const tgl_gl_disk_cache *c, const char *source, GLenum format, const void *bin,
                               size_t n)
{
    file_header h;
    memset(&h, 0, sizeof h); /* padding too: the checksum reads the header's bytes */
    h.identity_bytes = (uint32_t)strlen(c->identity);
    h.format = format;
    h.binary_bytes = (uint64_t)n;
    memcpy(h.magic, MAGIC, 8);
    key_of(c, source, h.key);
    h.binary_sum = entry_sum(&h, c->identity, bin);
    return h;
}

void tgl_gl_disk_cache_store(tgl_backend *b, const char *source, GLuint program)
{
    tgl_gl_disk_cache *c = &tgl_gl_of(b)->disk;
    if (!c->enabled)
        return;
    GLint len = 0;
    glGetProgramiv(program, GL_PROGRAM_BINARY_LENGTH, &len);
    unsigned char *bin = len > 0 && (size_t)len <= MAX_FILE_BYTES ? malloc((size_t)len) : NULL;
    GLsizei got = 0;
    GLenum format = 0;
    if (bin)
        glGetProgramBinary(program, len, &got, &format, bin);
    int gl_failed = 0;
    while (glGetError() != GL_NO_ERROR)
        gl_failed = 1;
    if (!bin || gl_failed || got <= 0) {
        free(bin);
        return;
    }
    file_header h = make_header(c, source, format, bin, (size_t)got);

    char path[sizeof c->dir + 48], tmp[sizeof path + 32];
    static unsigned counter; /* distinct temporary names within the process */
    int fd = -1, err = 0, ok = path_of(c, h.key, path, sizeof path) && !tgl_gl_make_dirs(c->dir);
    if (!ok)
        err = errno;
    if (ok) {
        snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), counter++);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = fd >= 0 && !write_all(fd, &h, sizeof h) && !write_all(fd, c->identity, h.identity_bytes) &&
             !write_all(fd, bin, (size_t)got);
        if (fd >= 0 && close(fd))
            ok = 0;
        if (ok && rename(tmp, path))
            ok = 0;
        err = errno;
        if (!ok && fd >= 0)
            unlink(tmp);
    }
    free(bin);
    if (ok) {
        c->stores++;
    } else if (!c->write_failed && (b->config.flags & TGL_FLAG_DEBUG)) { /* once per backend */
        c->write_failed = 1;
        tgl__log(b, TGL__LOG_DEBUG, "program cache: cannot write under %s: %s", c->dir, strerror(err));
    }
}

void tgl_gl_test_cache_stats(tgl_backend *b, unsigned long stats[3])
{
    const tgl_gl_disk_cache *c = &tgl_gl_of(b)->disk;
    stats[0] = c->hits;
    stats[1] = c->stores;
    stats[2] = c->rejected;
}

int tgl_gl_test_cache_path(tgl_backend *b, const char *source, char *out, size_t size)
{
    const tgl_gl_disk_cache *c = &tgl_gl_of(b)->disk;
    uint64_t key[2];
    key_of(c, source, key);
    return c->enabled && path_of(c, key, out, size);
}

size_t tgl_gl_test_cache_entry(tgl_backend *b, const char *source, uint32_t format, const void *payload, size_t n,
                               unsigned char *out, size_t cap)
{
    const tgl_gl_disk_cache *c = &tgl_gl_of(b)->disk;
    file_header h = make_header(c, source, (GLenum)format, payload, n);
    size_t total = sizeof h + h.identity_bytes + n;
    if (total > cap)
        return 0;
    memcpy(out, &h, sizeof h);
    memcpy(out + sizeof h, c->identity, h.identity_bytes);
    if (n)
        memcpy(out + sizeof h + h.identity_bytes, payload, n);
    return total;
}
