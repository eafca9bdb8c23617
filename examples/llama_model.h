/* The Llama-architecture decoder of examples/llama.c as a module: a model loaded from a GGUF
 * file onto a backend, its forward pass and greedy decoding, and a writer of random models.
 * `tensorgl bench models` times the same code. Errors print a message and exit(1): these are
 * programs' helpers, not library code. */
#ifndef TGL_EXAMPLES_LLAMA_MODEL_H
#define TGL_EXAMPLES_LLAMA_MODEL_H

#include "gguf.h"

#include <tensorgl.h>

#include <stddef.h>
#include <stdint.h>

#define LLAMA_MAX_LAYERS 64

typedef struct llama_config {
    size_t layers, dim, ffn, heads, heads_kv, head_dim, vocab, context;
    double eps, theta, rope_linear; /* rope_linear: the linear scaling factor, 0 for none */
} llama_config;

/* The weights of one layer: their GGUF names are blk.L.<layer_w_names[i]>.weight. */
enum { W_Q, W_K, W_V, W_O, W_GATE, W_UP, W_DOWN, N_LAYER_W };

typedef struct llama_matrix {
    tgl_ptr data;
    tgl_dtype dtype;
    size_t rows, cols; /* [out, in] */
} llama_matrix;

/* The weights, the KV cache and the activations of one model, on a backend. */
typedef struct llama_model {
    tgl_backend *b;
    llama_config c;
    llama_matrix embed, head, w[LLAMA_MAX_LAYERS][N_LAYER_W]; /* head: output.weight, or the embedding when tied */
    /* A layer's q, k and v weights stacked into one [q_dim + 2 kv_dim, dim] matrix, and its gate
     * and up weights into one [2 ffn, dim], where each set shares a format (one product per set
     * and step instead of three and two; the separate w[][] then hold nothing); data 0 if not. */
    llama_matrix qkv[LLAMA_MAX_LAYERS], gate_up[LLAMA_MAX_LAYERS];
    tgl_ptr attn_norm[LLAMA_MAX_LAYERS], ffn_norm[LLAMA_MAX_LAYERS], out_norm;
    tgl_ptr kv_cache[LLAMA_MAX_LAYERS];   /* [2, heads_kv, context, head_dim]: keys, then values */
    tgl_dtype kv_dtype;                   /* the cache's: f32, or f16 (half the memory) */
    tgl_ptr x, h, qkv_out, qh, oh, o, gate_up_out, gate, logits, token, ids; /* activations for n_max tokens */
    float *rope_freqs;                    /* head_dim / 2 per-frequency RoPE factors (rope_freqs.weight), or NULL */
    size_t n_max;
    size_t calls; /* tensorgl calls the forward passes have made (the per-token overhead users feel) */
} llama_model;

typedef struct llama_result {
    int32_t *tokens; /* steps tokens (malloc'd) */
    double prefill_ms, decode_ms;
    size_t decode_calls; /* tensorgl calls of one decode step */
} llama_result;

/* Prints "llama: WHAT failed: STATUS: last error" and exits 1. */
_Noreturn void llama_die(tgl_backend *b, const char *what, tgl_status st);

/* The configuration from the file's llama.* keys, checked against each other. */
llama_config llama_read_config(const gguf_file *f);
/* Uploads the file's weights onto b (each matrix in its file format), for prompts of at most
 * n_max tokens, with a KV cache of kv_dtype (f32 or f16). */
void llama_load(llama_model *m, tgl_backend *b, const gguf_file *f, size_t n_max, tgl_dtype kv_dtype);
void llama_free(llama_model *m);
/* Prefill of the prompt, then steps - 1 more tokens one at a time: steps tokens in all, timed. */
void llama_generate(llama_model *m, const int32_t *prompt, size_t n_prompt, size_t steps, llama_result *r);
/* llama_load, an untimed warm-up (kernels compile on first use), llama_generate, llama_free;
 * checks the prompt against the vocabulary and the context. */
void llama_run(tgl_backend *b, const gguf_file *f, const int32_t *prompt, size_t n_prompt, size_t steps,
               tgl_dtype kv_dtype, llama_result *r);

/* GGML's type for "f32", "f16", "bf16", "q8_0" or "q4_0"; LLAMA_NO_TYPE for another name. */
#define LLAMA_NO_TYPE UINT32_MAX
uint32_t llama_ggml_type(const char *name);
/* The sizes of a random model from "LAYERS,DIM,HEADS,KV_HEADS,FFN,VOCAB,CONTEXT" (exits 2 on a
 * malformed or unsupported one). */
void llama_parse_shape(const char *s, llama_config *c);
/* Writes a random model of c's sizes with its matrices in `type` as a GGUF file at path, or,
 * with path NULL, at a new temporary file whose name goes into tmp (the caller removes it; tmp
 * stays "" otherwise): tied (no output.weight), rope_freqs (Llama 3.1's per-frequency factors),
 * mixed (attn_v and ffn_up in f16, as quantized files often keep some tensors at higher
 * precision). Returns the path written. */
#define LLAMA_TMP_NAME 64
const char *llama_save_random(const char *path, char tmp[LLAMA_TMP_NAME], uint32_t type, const llama_config *c,
                              int tied, int rope_freqs, int mixed);

#endif
