/* `tensorgl bench models`: whole models end to end, the forward passes of the examples
 * (examples/llama_model.c, examples/resnet_model.c, the code build/llama and build/resnet run):
 *  - llama: a Llama-architecture decoder from a GGUF file, or a random one of --shape in
 *    --format (default: GPT-2-small's size, 12 layers of 768, vocabulary 50257, f32): prefill of
 *    --prompt tokens (its pass gives the first token), then --steps - 1 single-token passes;
 *    prefill ms, decode tokens/s (those passes' tokens over their time) and the tensorgl calls
 *    of one decode step (the per-token overhead);
 *  - resnet: ResNet-18 from a safetensors file or random weights, on --input's images or
 *    pseudo-random ones: images/s over --runs passes of --batch images after a warm-up pass.
 * Each model's kernels are built by an untimed warm-up first. --json writes the figures, the
 * tokens and top-5 classes, the prompt and the shapes (json-c), so that bench/gpu_reference.py
 * --models can run the same models in PyTorch on the files kept by --save-gguf / --resnet. */
#include "commands.h"
#include "llama_model.h"
#include "resnet_model.h"
#include "tensorgl.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PROMPT 4096

typedef struct opts {
    int llama, resnet;              /* which models run */
    const char *format, *gguf, *save_gguf, *weights, *input, *json;
    llama_config shape;             /* the random model's sizes */
    size_t prompt, steps, batch, size;
    int runs, kv_f16, cpu;
} opts;

static int bad(const char *what, const char *value)
{
    fprintf(stderr, "tensorgl bench models: bad %s '%s'\n", what, value);
    tgl_cmd_bench_usage(stderr);
    return 2;
}

static int parse_count(const char *v, size_t lo, size_t hi, size_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < (long long)lo || x > (long long)hi)
        return 0;
    *out = (size_t)x;
    return 1;
}

/* 0: parsed; else the exit code. */
static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.llama = 1, .resnet = 1, .format = "f32", .prompt = 128, .steps = 64, .batch = 32, .size = 224,
                .runs = 3};
    o->shape = (llama_config){.layers = 12, .dim = 768, .ffn = 2048, .heads = 12, .heads_kv = 12, .head_dim = 64,
                              .vocab = 50257, .context = 1024, .eps = 1e-5, .theta = 10000.0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        size_t n;
        if (!strcmp(a, "--kv-f16")) {
            o->kv_f16 = 1;
            continue;
        }
        i++;
        if (!strcmp(a, "--models")) {
            o->llama = strstr(v, "llama") != NULL, o->resnet = strstr(v, "resnet") != NULL;
            if (strcmp(v, "llama") && strcmp(v, "resnet") && strcmp(v, "llama,resnet") && strcmp(v, "resnet,llama"))
                return bad("--models (llama, resnet or both)", v);
        } else if (!strcmp(a, "--backend")) {
            if (strcmp(v, "gl") && strcmp(v, "cpu"))
                return bad("--backend (gl or cpu)", v);
            o->cpu = !strcmp(v, "cpu");
        } else if (!strcmp(a, "--format")) {
            o->format = v;
            if (llama_ggml_type(v) == LLAMA_NO_TYPE)
                return bad("--format (f32, f16, bf16, q8_0 or q4_0)", v);
        } else if (!strcmp(a, "--shape"))
            llama_parse_shape(v, &o->shape); /* exits with its rules on a bad shape */
        else if (!strcmp(a, "--gguf"))
            o->gguf = v;
        else if (!strcmp(a, "--save-gguf"))
            o->save_gguf = v;
        else if (!strcmp(a, "--resnet"))
            o->weights = v;
        else if (!strcmp(a, "--input"))
            o->input = v;
        else if (!strcmp(a, "--json"))
            o->json = v;
        else if (!strcmp(a, "--prompt")) {
            if (!parse_count(v, 1, MAX_PROMPT, &o->prompt))
                return bad("--prompt (1 to 4096 tokens)", v);
        } else if (!strcmp(a, "--steps")) {
            if (!parse_count(v, 2, 1 << 20, &o->steps))
                return bad("--steps (2 to 1048576: the prompt's pass, then at least one decode step)", v);
        } else if (!strcmp(a, "--batch")) {
            if (!parse_count(v, 1, 1024, &o->batch))
                return bad("--batch (1 to 1024)", v);
        } else if (!strcmp(a, "--size")) {
            if (!parse_count(v, 32, 4096, &o->size))
                return bad("--size (32 to 4096)", v);
        } else if (!strcmp(a, "--runs")) {
            if (!parse_count(v, 1, 1000, &n))
                return bad("--runs (1 to 1000)", v);
            o->runs = (int)n;
        }
    }
    if (o->gguf && o->save_gguf)
        return bad("--save-gguf with --gguf (only a random model is saved)", o->save_gguf);
    return 0;
}

static json_object *int_array(const int32_t *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_int(v[i]));
    return a;
}

/* The llama run on b: the file (or a random model written to --save-gguf or a temporary file),
 * the prompt, the figures; its JSON object into *out. */
static int bench_llama(const opts *o, tgl_backend *b, json_object **out)
{
    char tmp[LLAMA_TMP_NAME] = "";
    const char *path = o->gguf ? o->gguf : llama_save_random(o->save_gguf, tmp, llama_ggml_type(o->format), &o->shape,
                                                             0, 0, 0);
    gguf_file f;
    char err[512];
    int failed = gguf_load(path, &f, err, sizeof err);
    if (tmp[0])
        remove(tmp);
    if (failed) {
        fprintf(stderr, "tensorgl bench models: %s\n", err);
        return 1;
    }
    llama_config c = llama_read_config(&f);
    static int32_t prompt[MAX_PROMPT];
    for (size_t i = 0; i < o->prompt; i++) /* spread over the vocabulary, the same in every run */
        prompt[i] = (int32_t)((1 + 7919 * i) % c.vocab);
    llama_result r;
    llama_run(b, &f, prompt, o->prompt, o->steps, o->kv_f16 ? TGL_DTYPE_F16 : TGL_DTYPE_F32, &r);
    gguf_free(&f);
    const double decoded = (double)(o->steps - 1); /* the prompt's pass gave the first token */
    double tps = r.decode_ms > 0 ? 1e3 * decoded / r.decode_ms : 0;
    char what[160];
    snprintf(what, sizeof what, "%s, %zu layers of %zu, %zu/%zu heads, ffn %zu, vocab %zu",
             o->gguf ? o->gguf : o->format, c.layers, c.dim, c.heads, c.heads_kv, c.ffn, c.vocab);
    printf("llama (%s)\n  prefill of %zu tokens %10.2f ms   decode %zu tokens %10.2f ms: %8.2f tokens/s, "
           "%.3f ms a token, %zu tensorgl calls a token\n", what, o->prompt, r.prefill_ms, o->steps - 1, r.decode_ms,
           tps, r.decode_ms / decoded, r.decode_calls);
    printf("  tokens:");
    for (size_t i = 0; i < o->steps; i++)
        printf(" %d", r.tokens[i]);
    printf("\n");
    json_object *j = json_object_new_object();
    json_object_object_add(j, "model", json_object_new_string("llama"));
    json_object_object_add(j, "file", o->gguf || o->save_gguf ? json_object_new_string(path) : NULL);
    json_object_object_add(j, "format", json_object_new_string(o->gguf ? "file" : o->format));
    json_object_object_add(j, "shape", json_object_new_string(what));
    json_object_object_add(j, "kv_cache", json_object_new_string(o->kv_f16 ? "f16" : "f32"));
    json_object_object_add(j, "prompt", int_array(prompt, o->prompt));
    json_object_object_add(j, "steps", json_object_new_int64((int64_t)o->steps));
    json_object_object_add(j, "prefill_ms", json_object_new_double(r.prefill_ms));
    json_object_object_add(j, "decode_ms", json_object_new_double(r.decode_ms));
    json_object_object_add(j, "tokens_per_s", json_object_new_double(tps));
    json_object_object_add(j, "decode_calls", json_object_new_int64((int64_t)r.decode_calls));
    json_object_object_add(j, "tokens", int_array(r.tokens, o->steps));
    free(r.tokens);
    *out = j;
    return 0;
}

/* The ResNet-18 run; its JSON object into *out. */
static int bench_resnet(const opts *o, tgl_backend_kind kind, json_object **out)
{
    resnet_conv_spec convs[RESNET_CONVS];
    size_t n_convs = resnet_list_convs(convs);
    static resnet_weights w;
    memset(&w, 0, sizeof w);
    if (o->weights)
        resnet_load_weights(&w, o->weights, convs, n_convs);
    else
        resnet_random_weights(&w, convs, n_convs);
    float *input = malloc(o->batch * 3 * o->size * o->size * sizeof(float));
    int32_t *top = malloc(o->batch * 5 * sizeof(int32_t));
    float *logits = malloc(o->batch * RESNET_CLASSES * sizeof(float));
    int rc = !input || !top || !logits;
    if (rc)
        fprintf(stderr, "tensorgl bench models: out of host memory for %zu images\n", o->batch);
    else {
        resnet_input(o->input, o->batch, o->size, input); /* exits naming a bad file */
        char device[512];
        double ips = resnet_run(kind, &w, convs, n_convs, input, o->batch, o->size, o->runs, top, logits, device,
                                sizeof device);
        printf("resnet-18 (%s weights, batch %zu at %zux%zu, %d runs)\n  %8.2f images/s, %.2f ms a batch\n",
               o->weights ? o->weights : "random", o->batch, o->size, o->size, o->runs, ips,
               ips > 0 ? 1e3 * (double)o->batch / ips : 0);
        for (size_t n = 0; n < o->batch && n < 4; n++)
            printf("  image %zu top-5: %d %d %d %d %d\n", n, top[n * 5], top[n * 5 + 1], top[n * 5 + 2], top[n * 5 + 3],
                   top[n * 5 + 4]);
        json_object *j = json_object_new_object();
        json_object_object_add(j, "model", json_object_new_string("resnet18"));
        json_object_object_add(j, "weights", o->weights ? json_object_new_string(o->weights) : NULL);
        json_object_object_add(j, "input", o->input ? json_object_new_string(o->input) : NULL);
        json_object_object_add(j, "batch", json_object_new_int64((int64_t)o->batch));
        json_object_object_add(j, "size", json_object_new_int64((int64_t)o->size));
        json_object_object_add(j, "runs", json_object_new_int(o->runs));
        json_object_object_add(j, "images_per_s", json_object_new_double(ips));
        json_object_object_add(j, "top5", int_array(top, o->batch * 5));
        *out = j;
    }
    free(input), free(top), free(logits);
    for (size_t i = 0; i < w.n; i++)
        free(w.t[i].data);
    return rc;
}

int tgl_cmd_bench_models(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    tgl_backend_kind kind = o.cpu ? TGL_BACKEND_CPU : TGL_BACKEND_GL;
    tgl_options to = {.kind = kind};
    tgl_backend *b;
    if (tgl_open(&to, &b)) {
        fprintf(stderr, "tensorgl bench models: no device: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    if (tgl_device_info(b, &info)) {
        tgl_close(b);
        return 1;
    }
    char device[400];
    snprintf(device, sizeof device, "%s (%s, %s)", info.backend, info.renderer, info.version);
    printf("tensorgl bench models: %s\n", device);
    json_object *root = json_object_new_object(), *models = json_object_new_array();
    char version[32], date[32];
    snprintf(version, sizeof version, "%d.%d.%d", TGL_VERSION_MAJOR, TGL_VERSION_MINOR, TGL_VERSION_PATCH);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    json_object_object_add(root, "tool", json_object_new_string("tensorgl bench models"));
    json_object_object_add(root, "version", json_object_new_string(version));
    json_object_object_add(root, "date", json_object_new_string(date));
    json_object_object_add(root, "device", json_object_new_string(device));
    json_object_object_add(root, "models", models);
    json_object *m = NULL;
    if (o.llama && !(rc = bench_llama(&o, b, &m)))
        json_object_array_add(models, m);
    tgl_close(b); /* resnet_run opens its own backend */
    if (!rc && o.resnet && !(rc = bench_resnet(&o, kind, &m)))
        json_object_array_add(models, m);
    const int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE;
    if (!rc && o.json && json_object_to_file_ext(o.json, root, flags)) {
        fprintf(stderr, "tensorgl bench models: cannot write %s: %s\n", o.json, json_util_get_last_err());
        rc = 1;
    }
    json_object_put(root);
    return rc;
}
