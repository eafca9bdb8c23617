/* libFuzzer harness: the safetensors reader of examples/resnet.c (examples/safetensors.c) over
 * arbitrary bytes. A file it accepts has every tensor read in full, so a range it let through
 * past the data is an ASan report. */
#include "safetensors.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    st_file f;
    char err[256];
    if (st_parse(data, size, &f, err, sizeof err))
        return 0;
    for (size_t i = 0; i < f.count; i++) {
        float *out = malloc(f.tensors[i].count ? f.tensors[i].count * sizeof(float) : 1);
        if (out)
            (void)st_read_f32(&f, &f.tensors[i], out);
        free(out);
    }
    st_free(&f);
    return 0;
}
