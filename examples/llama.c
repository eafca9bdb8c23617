/* tensorgl llama: a Llama-architecture decoder (RMSNorm, grouped-query attention with a KV cache,
 * RoPE with linear scaling or per-frequency factors, SwiGLU, a tied or untied head) that loads its
 * weights from a GGUF file, in f32, f16, bf16,
 * q8_0 or q4_0 as they are stored there, and greedily decodes from a prompt of token ids
 * (tokenizing is not its job), printing the tokens and tokens/s.
 *
 *   llama --model FILE.gguf [--prompt 1,2,3] [--steps 64] [--backend gl|cpu|both] [--kv-f16]
 *   llama --random q4_0 [--save FILE.gguf] [--tied] [--rope-freqs] [--mixed] ...   a small random
 *       model (saved as GGUF with --save; --tied: no output.weight; --rope-freqs: Llama 3.1's
 *       rope_freqs factors; --mixed: attn_v and ffn_up in f16, as quantized files often keep
 *       some tensors at higher precision)
 *
 * --kv-f16 keeps the KV cache in f16 (half its memory; tgl_attention_t reads it as it is).
 * --backend both runs the GL backend and the CPU reference on the same weights and exits 1 unless
 * they decode the same tokens. Every weight matrix stays in its file's format on the device; the
 * products are tgl_matvec_t (y = x Wᵀ, W stored [out, in] as GGUF and PyTorch store it), the
 * embedding lookup tgl_gather_rows_t.
 * Build: make (build/llama). */
#include "llama_model.h"

#include <tensorgl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROMPT 4096
#define PATH_MAX_SHOWN 512
#define CHECK(b, call) do { tgl_status st_ = (call); if (st_) llama_die(b, #call, st_); } while (0)

/* ---- the command line ---------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: llama --model FILE.gguf | --random f32|f16|bf16|q8_0|q4_0 [--save FILE.gguf] [--tied]\n"
            "             [--rope-freqs] [--mixed] [--shape LAYERS,DIM,HEADS,KV_HEADS,FFN,VOCAB,CONTEXT]\n"
            "             [--prompt ID,ID,...] [--steps N] [--backend gl|cpu|both] [--kv-f16]\n");
    exit(2);
}

static size_t parse_prompt(const char *s, int32_t *out)
{
    size_t n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > INT32_MAX || n == MAX_PROMPT || (*end && *end != ',')) {
            fprintf(stderr, "llama: --prompt takes non-negative token ids separated by commas\n");
            exit(2);
        }
        out[n++] = (int32_t)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *random_type = NULL, *save_path = NULL, *backend = "gl";
    static int32_t prompt[MAX_PROMPT];
    size_t n_prompt = parse_prompt("1,15,27,3,8", prompt), steps = 64;
    int tied = 0, rope_freqs = 0, mixed = 0;
    /* The random model: small, every size a multiple of 32, so every format can hold it. */
    llama_config rc = {.layers = 4, .dim = 256, .ffn = 704, .heads = 8, .heads_kv = 2, .head_dim = 32, .vocab = 1024,
                 .context = 256, .eps = 1e-5, .theta = 10000.0, .rope_linear = 0};
    const char *shape = NULL;
    tgl_dtype kv_dtype = TGL_DTYPE_F32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--kv-f16")) {
            kv_dtype = TGL_DTYPE_F16;
            continue;
        }
        if (!strcmp(a, "--tied") || !strcmp(a, "--rope-freqs") || !strcmp(a, "--mixed")) {
            *(a[2] == 't' ? &tied : a[2] == 'r' ? &rope_freqs : &mixed) = 1;
            continue;
        }
        if (!v)
            usage();
        if (!strcmp(a, "--model"))
            model_path = v;
        else if (!strcmp(a, "--random"))
            random_type = v;
        else if (!strcmp(a, "--save"))
            save_path = v;
        else if (!strcmp(a, "--shape"))
            llama_parse_shape(shape = v, &rc);
        else if (!strcmp(a, "--backend"))
            backend = v;
        else if (!strcmp(a, "--prompt"))
            n_prompt = parse_prompt(v, prompt);
        else if (!strcmp(a, "--steps")) {
            char *end;
            long s = strtol(v, &end, 10);
            if (*end || s < 1 || s > 1 << 20)
                usage();
            steps = (size_t)s;
        } else
            usage();
        i++;
    }
    if (!!model_path == !!random_type || ((save_path || tied || rope_freqs || mixed || shape) && !random_type) ||
        n_prompt == 0 || (strcmp(backend, "gl") && strcmp(backend, "cpu") && strcmp(backend, "both")))
        usage();
    char tmp[LLAMA_TMP_NAME] = "";
    if (random_type) {
        uint32_t type = llama_ggml_type(random_type);
        if (type == LLAMA_NO_TYPE) {
            fprintf(stderr, "llama: the weight formats are f32, f16, bf16, q8_0 and q4_0, not '%s'\n", random_type);
            return 1;
        }
        model_path = llama_save_random(save_path, tmp, type, &rc, tied, rope_freqs, mixed);
    }
    gguf_file f;
    char err[512];
    int bad = gguf_load(model_path, &f, err, sizeof err);
    if (tmp[0])
        remove(tmp);
    if (bad) {
        fprintf(stderr, "llama: %s\n", err);
        return 1;
    }
    llama_config c = llama_read_config(&f);
    char what[PATH_MAX_SHOWN];
    if (tmp[0])
        snprintf(what, sizeof what, "a random %s model", random_type);
    else
        snprintf(what, sizeof what, "%s", model_path);
    printf("tensorgl llama: %s: %zu layers, dim %zu, %zu heads (%zu kv) of %zu, ffn %zu, vocab %zu; %zu prompt "
           "tokens, %zu steps\n", what, c.layers, c.dim, c.heads, c.heads_kv, c.head_dim, c.ffn, c.vocab,
           n_prompt, steps);
    int both = !strcmp(backend, "both"), n_runs = both ? 2 : 1, agree = 1;
    llama_result r[2];
    for (int k = 0; k < n_runs; k++) {
        int cpu_run = !strcmp(backend, "cpu") || (both && k == 1);
        tgl_options o = {.kind = cpu_run ? TGL_BACKEND_CPU : TGL_BACKEND_GL};
        tgl_backend *b;
        CHECK(NULL, tgl_open(&o, &b));
        struct tgl_device_info info;
        CHECK(b, tgl_device_info(b, &info));
        llama_run(b, &f, prompt, n_prompt, steps, kv_dtype, &r[k]);
        printf("%s (%s): prefill %.1f ms, %zu tokens in %.1f ms: %.1f tokens/s\n  tokens:", info.backend,
               info.renderer, r[k].prefill_ms, steps, r[k].decode_ms,
               r[k].decode_ms > 0 ? 1e3 * (double)steps / r[k].decode_ms : 0.0);
        for (size_t s = 0; s < steps; s++)
            printf(" %d", r[k].tokens[s]);
        printf("\n");
        tgl_close(b);
    }
    if (both) {
        size_t same = 0;
        while (same < steps && r[0].tokens[same] == r[1].tokens[same])
            same++;
        agree = same == steps;
        printf("gl vs cpu: %s (%zu of %zu tokens the same before they part)\n", agree ? "SAME TOKENS" : "DIFFERENT",
               same, steps);
    }
    for (int k = 0; k < n_runs; k++)
        free(r[k].tokens);
    gguf_free(&f);
    return agree ? 0 : 1;
}
