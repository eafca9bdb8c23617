/* libFuzzer harness: the GGUF reader of examples/llama.c (examples/gguf.c) over arbitrary bytes.
 * A file it accepts has every tensor's bytes and every string value read in full, so a range it
 * let through past the buffer is an ASan report. */
#include "gguf.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    gguf_file f;
    char err[256];
    if (gguf_parse(data, size, &f, err, sizeof err))
        return 0;
    volatile unsigned sum = 0;
    for (size_t i = 0; i < f.n_tensors; i++)
        for (uint64_t k = 0; k < f.tensors[i].size; k++)
            sum += f.tensors[i].data[k];
    for (size_t i = 0; i < f.n_kv; i++) {
        char s[64];
        if (f.kvs[i].type == GGUF_STRING)
            (void)gguf_get_string(&f, f.kvs[i].key, s, sizeof s);
        for (size_t k = 0; k < f.kvs[i].str_len; k++)
            sum += (unsigned char)f.kvs[i].str[k];
    }
    (void)sum;
    gguf_free(&f);
    return 0;
}
