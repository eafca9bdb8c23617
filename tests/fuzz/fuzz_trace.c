/* libFuzzer harness: the trace reader and replay (with --compare, on the CPU backend) on
 * arbitrary files. Every input must end in a clean status — replayed, a damaged-trace error
 * (TGL_ERR_IO), a divergence (TGL_ERR_INTERNAL) or out of memory within the 16 MiB the harness
 * allows — with ASan and UBSan watching every read. */
#include "core/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/tgl-fuzz-trace-%ld.tgltrace", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f))
        abort();
    tgl__replay_opts o = {.kind = TGL_BACKEND_CPU, .compare = 1, .max_bytes = 16u << 20};
    tgl_status st = tgl__replay(path, &o);
    if (st != TGL_OK && st != TGL_ERR_IO && st != TGL_ERR_INTERNAL && st != TGL_ERR_OUT_OF_MEMORY)
        abort();
    return 0;
}
