/* Regular files only (files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int tgl__open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    int flags;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (flags = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        int e = S_ISREG(st.st_mode) ? errno : EINVAL;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

FILE *tgl__fopen_regular(const char *path)
{
    int fd = tgl__open_regular(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}
