/* The ResNet-18 of examples/resnet.c as a module: torchvision's weights on the host (random,
 * or read from a safetensors file), and the forward pass on a backend, timed. `tensorgl bench
 * models` times the same code. Errors print a message and exit(1): these are programs' helpers,
 * not library code. */
#ifndef TGL_EXAMPLES_RESNET_MODEL_H
#define TGL_EXAMPLES_RESNET_MODEL_H

#include <tensorgl.h>

#include <stddef.h>
#include <stdint.h>

#define RESNET_CLASSES 1000
#define RESNET_CONVS 20

/* A convolution and the batch norm after it (torchvision's names: prefix.weight for the conv,
 * bn.weight/bias/running_mean/running_var for the norm), folded on loading. */
typedef struct resnet_conv_spec {
    char conv[64], bn[64];
    size_t in_c, out_c, k, stride, pad;
} resnet_conv_spec;

/* The model's host tensors by torchvision's names, random or from a file. */
typedef struct resnet_named {
    char name[80];
    size_t ndim, shape[4], count;
    float *data;
} resnet_named;

typedef struct resnet_weights {
    resnet_named t[128];
    size_t n;
} resnet_weights;

/* Prints "resnet: " and fmt with a and b, and exits 1. */
_Noreturn void resnet_die(const char *fmt, const char *a, const char *b);
/* A uniform pseudo-random float in [lo, hi) (one fixed stream per process). */
float resnet_uniform(float lo, float hi);

/* ResNet-18's RESNET_CONVS convolutions into s, in forward order; returns how many. */
size_t resnet_list_convs(resnet_conv_spec *s);
/* He-uniform convolutions, batch norms near the identity, a small classifier. */
void resnet_random_weights(resnet_weights *w, const resnet_conv_spec *convs, size_t n_convs);
/* Reads the tensors the model needs from a safetensors file, checking each one's shape. */
void resnet_load_weights(resnet_weights *w, const char *path, const resnet_conv_spec *convs, size_t n_convs);
void resnet_save_weights(const resnet_weights *w, const char *path);
/* The images [batch, 3, size, size] into input: the tensor "input" of a safetensors file (a
 * float type; exits on another shape), or with path NULL a pseudo-random batch in [-2, 2). */
void resnet_input(const char *path, size_t batch, size_t size, float *input);

/* Runs the model on a new backend of `kind` over input ([batch, 3, size, size] f32): one
 * warm-up pass, then `runs` timed ones; each image's top-5 classes into top [batch, 5] and the
 * logits into logits [batch, RESNET_CLASSES], the device's name into device. Returns images per
 * second. */
double resnet_run(tgl_backend_kind kind, const resnet_weights *w, const resnet_conv_spec *convs, size_t n_convs,
                  const float *input, size_t batch, size_t size, int runs, int32_t *top, float *logits, char *device,
                  size_t dsize);

#endif
