/* Opening files the library reads on its own (program cache entries, SPIR-V modules, tune files,
 * traces) without trusting what lies at the path. */
#ifndef TGL_CORE_FILES_H
#define TGL_CORE_FILES_H

#include <stdio.h>

/* Opens path for reading only if it is a regular file: the open does not block (a FIFO at the
 * path would wait for a writer forever; a device could do anything), then the file type is
 * checked. Returns a descriptor (blocking again, close-on-exec), or -1 with errno set (EINVAL
 * for something that is not a regular file). */
int tgl__open_regular(const char *path);
/* The same as a stdio stream ("rb"); NULL with errno set. */
FILE *tgl__fopen_regular(const char *path);

#endif
