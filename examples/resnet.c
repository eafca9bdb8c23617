/* tensorgl ResNet-18: torchvision's resnet18 forward pass (inference: batch norm folded into the
 * convolutions) on tensorgl's ops, from a safetensors file with torchvision's names
 * (conv1.weight, bn1.running_mean, layer1.0.conv1.weight, ..., fc.bias) or, without one, from
 * random weights. Prints images/s and each image's top-5 classes on the GL backend and on the
 * CPU backend, and whether both agree.
 *
 *   resnet [--weights FILE] [--save FILE] [--batch N] [--size S] [--runs R] [--backend gl|cpu|both]
 *
 * --save writes the weights in use (random ones too) as a safetensors file; --size is the input's
 * side (224 for ImageNet); the input is a fixed pseudo-random image batch, or --input FILE's
 * tensor "input" ([N, 3, S, S] f32). Every layer is one tensorgl call: a convolution with its
 * bias, relu and residual fused (tgl_conv2d_fused), max and adaptive average pooling, the
 * classifier as a GEMM, the top-5 by tgl_topk.
 * Build: make (build/resnet); cc resnet.c resnet_model.c safetensors.c -ltensorgl -ljson-c -lm */
#include "resnet_model.h"

#include <tensorgl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *weights_path = NULL, *save_path = NULL, *input_path = NULL, *backend = "both";
    size_t batch = 1, size = 224;
    int runs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            puts("usage: resnet [--weights FILE] [--save FILE] [--input FILE] [--batch N] [--size S] [--runs R] "
                 "[--backend gl|cpu|both]");
            return 0;
        }
        if (!v)
            resnet_die("%s needs a value%s", a, "");
        i++;
        if (!strcmp(a, "--weights"))
            weights_path = v;
        else if (!strcmp(a, "--save"))
            save_path = v;
        else if (!strcmp(a, "--input"))
            input_path = v;
        else if (!strcmp(a, "--backend") && (!strcmp(v, "gl") || !strcmp(v, "cpu") || !strcmp(v, "both")))
            backend = v;
        else if (!strcmp(a, "--batch") && atol(v) > 0 && atol(v) <= 1024)
            batch = (size_t)atol(v);
        else if (!strcmp(a, "--size") && atol(v) >= 32 && atol(v) <= 4096)
            size = (size_t)atol(v);
        else if (!strcmp(a, "--runs") && atoi(v) > 0 && atoi(v) <= 1000)
            runs = atoi(v);
        else
            resnet_die("bad option %s %s (see --help)", a, v);
    }
    resnet_conv_spec convs[RESNET_CONVS];
    size_t n_convs = resnet_list_convs(convs);
    static resnet_weights w;
    if (weights_path)
        resnet_load_weights(&w, weights_path, convs, n_convs);
    else
        resnet_random_weights(&w, convs, n_convs);
    if (save_path)
        resnet_save_weights(&w, save_path);
    float *input = malloc(batch * 3 * size * size * sizeof(float));
    resnet_input(input_path, batch, size, input);
    printf("ResNet-18, %s weights, batch %zu at %zux%zu\n", weights_path ? weights_path : "random", batch, size, size);
    int32_t *top[2] = {malloc(batch * 5 * sizeof(int32_t)), malloc(batch * 5 * sizeof(int32_t))};
    float *logits[2] = {malloc(batch * RESNET_CLASSES * sizeof(float)), malloc(batch * RESNET_CLASSES * sizeof(float))};
    static const tgl_backend_kind kinds[2] = {TGL_BACKEND_GL, TGL_BACKEND_CPU};
    int ran[2] = {strcmp(backend, "cpu") != 0, strcmp(backend, "gl") != 0};
    for (int k = 0; k < 2; k++) {
        if (!ran[k])
            continue;
        char device[512];
        double ips = resnet_run(kinds[k], &w, convs, n_convs, input, batch, size, runs, top[k], logits[k], device,
                         sizeof device);
        printf("%-60s %8.2f images/s\n", device, ips);
        for (size_t n = 0; n < batch && n < 4; n++) {
            printf("  image %zu top-5:", n);
            for (int j = 0; j < 5; j++)
                printf(" %d (%.4f)", top[k][n * 5 + j],
                       (double)logits[k][n * RESNET_CLASSES + (size_t)top[k][n * 5 + j]]);
            putchar('\n');
        }
    }
    int status = 0;
    if (ran[0] && ran[1]) {
        double err = 0, ref = 0;
        for (size_t i = 0; i < batch * RESNET_CLASSES; i++) {
            double d = (double)logits[0][i] - logits[1][i];
            err += d * d, ref += (double)logits[1][i] * logits[1][i];
        }
        int same = !memcmp(top[0], top[1], batch * 5 * sizeof(int32_t));
        printf("GL and CPU: %s top-5 for every image; logits NMSE %.3g\n", same ? "the same" : "DIFFERENT",
               ref > 0 ? err / ref : err);
        status = same ? 0 : 1;
    }
    for (int k = 0; k < 2; k++)
        free(top[k]), free(logits[k]);
    for (size_t i = 0; i < w.n; i++)
        free(w.t[i].data);
    free(input);
    return status;
}
