/* The ResNet-18 of examples/resnet.c (resnet_model.h says what each part does): batch norm
 * folded into the convolutions on loading; every layer one tensorgl call: a convolution with its
 * bias, relu and residual fused (tgl_conv2d_fused), max and adaptive average pooling, the
 * classifier as a GEMM, the top-5 by tgl_topk. */
#include "resnet_model.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BN_EPS 1e-5f

_Noreturn void resnet_die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "resnet: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static void check(tgl_backend *b, tgl_status st, const char *what)
{
    if (st) {
        fprintf(stderr, "resnet: %s: %s: %s\n", what, tgl_status_string(st), tgl_last_error(b));
        exit(1);
    }
}
#define CHECK(b, call) check((b), (call), #call)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- weights, on the host ----------------------------------------------------------------- */

/* ResNet-18's 20 convolutions in forward order: the stem, then per stage two basic blocks of two
 * 3x3 convolutions, the first block of stages 2-4 striding 2 with a 1x1 projection. */
size_t resnet_list_convs(resnet_conv_spec *s)
{
    size_t n = 0;
    s[n++] = (resnet_conv_spec){"conv1", "bn1", 3, 64, 7, 2, 3};
    static const size_t width[4] = {64, 128, 256, 512};
    size_t in_c = 64;
    for (int stage = 0; stage < 4; stage++)
        for (int blk = 0; blk < 2; blk++) {
            size_t stride = stage > 0 && blk == 0 ? 2 : 1, w = width[stage];
            resnet_conv_spec *c = &s[n++];
            *c = (resnet_conv_spec){"", "", in_c, w, 3, stride, 1};
            snprintf(c->conv, sizeof c->conv, "layer%d.%d.conv1", stage + 1, blk);
            snprintf(c->bn, sizeof c->bn, "layer%d.%d.bn1", stage + 1, blk);
            c = &s[n++];
            *c = (resnet_conv_spec){"", "", w, w, 3, 1, 1};
            snprintf(c->conv, sizeof c->conv, "layer%d.%d.conv2", stage + 1, blk);
            snprintf(c->bn, sizeof c->bn, "layer%d.%d.bn2", stage + 1, blk);
            if (stride == 2) {
                c = &s[n++];
                *c = (resnet_conv_spec){"", "", in_c, w, 1, 2, 0};
                snprintf(c->conv, sizeof c->conv, "layer%d.%d.downsample.0", stage + 1, blk);
                snprintf(c->bn, sizeof c->bn, "layer%d.%d.downsample.1", stage + 1, blk);
            }
            in_c = w;
        }
    return n;
}

static resnet_named *add(resnet_weights *w, const char *name, size_t ndim, const size_t *shape)
{
    resnet_named *t = &w->t[w->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim, t->count = 1;
    for (size_t d = 0; d < ndim; d++)
        t->shape[d] = shape[d], t->count *= shape[d];
    t->data = malloc(t->count * sizeof(float));
    if (!t->data)
        resnet_die("no memory for %s%s", name, "");
    return t;
}

static const resnet_named *find(const resnet_weights *w, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->t[i].name, name))
            return &w->t[i];
    resnet_die("the weights have no tensor %s%s", name, "");
    return NULL;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
float resnet_uniform(float lo, float hi)
{
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return lo + (hi - lo) * (float)((rng_state * 2685821657736338717ull) >> 40) / 16777216.0f;
}

static void fill(resnet_named *t, float lo, float hi)
{
    for (size_t i = 0; i < t->count; i++)
        t->data[i] = resnet_uniform(lo, hi);
}

/* He-uniform convolutions, batch norms near the identity, a small classifier. */
void resnet_random_weights(resnet_weights *w, const resnet_conv_spec *convs, size_t n_convs)
{
    for (size_t i = 0; i < n_convs; i++) {
        const resnet_conv_spec *c = &convs[i];
        char name[96];
        snprintf(name, sizeof name, "%.63s.weight", c->conv);
        float a = sqrtf(6.0f / (float)(c->in_c * c->k * c->k));
        fill(add(w, name, 4, (size_t[]){c->out_c, c->in_c, c->k, c->k}), -a, a);
        static const char *const parts[4] = {"weight", "bias", "running_mean", "running_var"};
        static const float lo[4] = {0.5f, -0.1f, -0.1f, 0.5f}, hi[4] = {1.0f, 0.1f, 0.1f, 1.5f};
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "%.63s.%s", c->bn, parts[k]);
            fill(add(w, name, 1, (size_t[]){c->out_c}), lo[k], hi[k]);
        }
    }
    float a = 1.0f / sqrtf(512.0f);
    fill(add(w, "fc.weight", 2, (size_t[]){RESNET_CLASSES, 512}), -a, a);
    fill(add(w, "fc.bias", 1, (size_t[]){RESNET_CLASSES}), -a, a);
}

/* Reads the tensors the model needs from a safetensors file, checking each one's shape. */
void resnet_load_weights(resnet_weights *w, const char *path, const resnet_conv_spec *convs, size_t n_convs)
{
    st_file f;
    char err[512];
    if (st_load(path, &f, err, sizeof err))
        resnet_die("%s%s", err, "");
    resnet_weights want = {.n = 0};
    resnet_random_weights(&want, convs, n_convs); /* the names and shapes; the values are replaced */
    for (size_t i = 0; i < want.n; i++) {
        resnet_named *t = &want.t[i];
        const st_tensor *s = st_find(&f, t->name);
        if (!s)
            resnet_die("%s has no tensor %s", path, t->name);
        int same = s->ndim == t->ndim;
        for (size_t d = 0; same && d < t->ndim; d++)
            same = s->shape[d] == t->shape[d];
        if (!same)
            resnet_die("%s: %s has another shape than ResNet-18's", path, t->name);
        if (st_read_f32(&f, s, t->data))
            resnet_die("%s: %s is not a float tensor", path, t->name);
        w->t[w->n++] = *t;
    }
    st_free(&f);
}

void resnet_save_weights(const resnet_weights *w, const char *path)
{
    st_entry e[128];
    for (size_t i = 0; i < w->n; i++) {
        e[i] = (st_entry){.name = w->t[i].name, .ndim = w->t[i].ndim, .data = w->t[i].data};
        memcpy(e[i].shape, w->t[i].shape, sizeof w->t[i].shape);
    }
    char err[512];
    if (st_save(path, e, w->n, err, sizeof err))
        resnet_die("%s%s", err, "");
}

void resnet_input(const char *path, size_t batch, size_t size, float *input)
{
    if (!path) {
        for (size_t i = 0; i < batch * 3 * size * size; i++)
            input[i] = resnet_uniform(-2.0f, 2.0f);
        return;
    }
    st_file f;
    char err[512];
    if (st_load(path, &f, err, sizeof err))
        resnet_die("%s%s", err, "");
    const st_tensor *t = st_find(&f, "input");
    if (!t || t->ndim != 4 || t->shape[0] != batch || t->shape[1] != 3 || t->shape[2] != size || t->shape[3] != size)
        resnet_die("%s: no tensor \"input\" of [batch, 3, size, size] (%s)", path, "see --batch and --size");
    else if (st_read_f32(&f, t, input))
        resnet_die("%s: \"input\" is not a float tensor%s", path, "");
    st_free(&f);
}

/* ---- the network on a backend ------------------------------------------------------------- */

typedef struct layer {
    tgl_conv2d_desc d;
    tgl_ptr filter, bias; /* the batch norm folded in */
} layer;

typedef struct net {
    tgl_backend *b;
    layer conv[RESNET_CONVS];
    size_t n_conv, batch, size;
    tgl_ptr fc_w, fc_b, buf[4], pooled, logits, top_v, top_i;
} net;

static tgl_ptr upload(tgl_backend *b, const float *x, size_t n)
{
    tgl_ptr p;
    CHECK(b, tgl_alloc(b, n * sizeof(float), &p));
    CHECK(b, tgl_copy_htod(b, p, x, n * sizeof(float)));
    return p;
}

static void build(net *m, tgl_backend *b, const resnet_weights *w, const resnet_conv_spec *convs, size_t n_convs,
                  size_t batch, size_t size)
{
    memset(m, 0, sizeof *m);
    m->b = b, m->n_conv = n_convs, m->batch = batch, m->size = size;
    for (size_t i = 0; i < n_convs; i++) {
        const resnet_conv_spec *c = &convs[i];
        char name[96];
        snprintf(name, sizeof name, "%.63s.weight", c->conv);
        const resnet_named *wt = find(w, name);
        float *f = malloc(wt->count * sizeof(float)), *bias = calloc(c->out_c, sizeof(float));
        memcpy(f, wt->data, wt->count * sizeof(float));
        const resnet_named *bn[4];
        static const char *const parts[4] = {"weight", "bias", "running_mean", "running_var"};
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "%.63s.%s", c->bn, parts[k]);
            bn[k] = find(w, name);
        }
        tgl_status st = tgl_fold_batchnorm(c->out_c, c->in_c * c->k * c->k, f, bias, bn[0]->data, bn[1]->data,
                                           bn[2]->data, bn[3]->data, BN_EPS);
        check(NULL, st, c->bn);
        m->conv[i].filter = upload(b, f, wt->count);
        m->conv[i].bias = upload(b, bias, c->out_c);
        m->conv[i].d = (tgl_conv2d_desc){.batch = batch, .in_channels = c->in_c, .out_channels = c->out_c,
                                         .kernel_h = c->k, .kernel_w = c->k, .stride_h = c->stride,
                                         .stride_w = c->stride, .pad_h = c->pad, .pad_w = c->pad};
        free(f), free(bias);
    }
    const resnet_named *fw = find(w, "fc.weight"), *fb = find(w, "fc.bias");
    m->fc_w = upload(b, fw->data, fw->count);
    m->fc_b = upload(b, fb->data, fb->count);
    size_t most = batch * 64 * (size / 2) * (size / 2); /* the stem's output is the largest */
    for (int i = 0; i < 4; i++)
        CHECK(b, tgl_alloc(b, most * sizeof(float), &m->buf[i]));
    CHECK(b, tgl_alloc(b, batch * 512 * sizeof(float), &m->pooled));
    CHECK(b, tgl_alloc(b, batch * RESNET_CLASSES * sizeof(float), &m->logits));
    CHECK(b, tgl_alloc(b, batch * 5 * sizeof(float), &m->top_v));
    CHECK(b, tgl_alloc(b, batch * 5 * sizeof(int32_t), &m->top_i));
}

static void release(net *m)
{
    tgl_close(m->b); /* frees every allocation */
    memset(m, 0, sizeof *m);
}

/* A convolution of layer i from (x, h x w) into out, with relu and an optional residual (added
 * before the relu, as torchvision's BasicBlock does); returns the output's side. */
static size_t conv(net *m, size_t i, tgl_ptr x, size_t h, size_t w, tgl_ptr out, int relu, tgl_ptr residual,
                   size_t *ow)
{
    layer *l = &m->conv[i];
    l->d.in_h = h, l->d.in_w = w;
    size_t oh;
    CHECK(m->b, tgl_conv2d_output_size(&l->d, &oh, ow));
    CHECK(m->b, tgl_conv2d_fused(m->b, &l->d, x, l->filter, l->bias, relu ? TGL_ACTIVATION_RELU : TGL_ACTIVATION_NONE,
                                 0.0f, residual, 1, out));
    return oh;
}

/* The forward pass of the images at m->buf[0]; the top-5 classes into m->top_i. */
static void forward(net *m, tgl_ptr images)
{
    size_t side = m->size, h, w, oh, ow;
    tgl_ptr *buf = m->buf;
    oh = conv(m, 0, images, side, side, buf[1], 1, 0, &ow); /* stem: 7x7 stride 2 */
    tgl_pool2d_desc pd = {.batch = m->batch, .channels = 64, .in_h = oh, .in_w = ow, .kernel_h = 3, .kernel_w = 3,
                          .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
    CHECK(m->b, tgl_pool2d_output_size(&pd, &h, &w));
    CHECK(m->b, tgl_pool2d(m->b, &pd, buf[1], buf[0]));
    /* x in buf[0]; each block: h1 = relu(conv1(x)) into buf[1]; identity x or the projection
     * into buf[2]; relu(conv2(h1) + identity) into buf[3], which becomes x */
    size_t i = 1, c = 64;
    for (int blocks = 0; blocks < 8; blocks++) {
        int project = m->conv[i].d.stride_h == 2;
        size_t h1, w1;
        h1 = conv(m, i, buf[0], h, w, buf[1], 1, 0, &w1);
        tgl_ptr identity = buf[0];
        if (project) {
            size_t ph, pw;
            ph = conv(m, i + 2, buf[0], h, w, buf[2], 0, 0, &pw);
            (void)ph, (void)pw;
            identity = buf[2];
        }
        size_t h2, w2;
        h2 = conv(m, i + 1, buf[1], h1, w1, buf[3], 1, identity, &w2);
        c = m->conv[i + 1].d.out_channels;
        tgl_ptr t = buf[0];
        buf[0] = buf[3], buf[3] = t;
        h = h2, w = w2, i += project ? 3 : 2;
    }
    CHECK(m->b, tgl_adaptive_pool2d(m->b, TGL_POOL_AVG, m->batch, c, h, w, 1, 1, buf[0], m->pooled));
    /* logits = pooled fc.weight^T + fc.bias: each row the bias first, then the GEMM adds to it */
    for (size_t n = 0; n < m->batch; n++)
        CHECK(m->b, tgl_copy_dtod(m->b, m->logits + n * RESNET_CLASSES * sizeof(float), m->fc_b,
                                  RESNET_CLASSES * sizeof(float)));
    CHECK(m->b, tgl_gemm(m->b, TGL_NO_TRANS, TGL_TRANS, m->batch, RESNET_CLASSES, 512, 1.0f, m->pooled, 512, m->fc_w,
                         512, 1.0f, m->logits, RESNET_CLASSES));
    const size_t ls[2] = {m->batch, RESNET_CLASSES}, ts[2] = {m->batch, 5};
    tgl_tensor logits = tgl_tensor_contiguous(m->logits, TGL_DTYPE_F32, 2, ls);
    tgl_tensor values = tgl_tensor_contiguous(m->top_v, TGL_DTYPE_F32, 2, ts);
    tgl_tensor ids = tgl_tensor_contiguous(m->top_i, TGL_DTYPE_I32, 2, ts);
    CHECK(m->b, tgl_topk(m->b, &logits, 1, 5, 1, &values, &ids));
}

double resnet_run(tgl_backend_kind kind, const resnet_weights *w, const resnet_conv_spec *convs, size_t n_convs,
                  const float *input, size_t batch, size_t size, int runs, int32_t *top, float *logits, char *device,
                  size_t dsize)
{
    tgl_options o = {.kind = kind};
    tgl_backend *b;
    CHECK(NULL, tgl_open(&o, &b));
    struct tgl_device_info info;
    CHECK(b, tgl_device_info(b, &info));
    snprintf(device, dsize, "%s (%s)", tgl_backend_name(b), info.renderer[0] ? info.renderer : "CPU reference");
    net m;
    build(&m, b, w, convs, n_convs, batch, size);
    tgl_ptr images = upload(b, input, batch * 3 * size * size);
    forward(&m, images); /* builds the kernels */
    CHECK(b, tgl_synchronize(b));
    double t0 = now_s();
    for (int r = 0; r < runs; r++)
        forward(&m, images);
    CHECK(b, tgl_synchronize(b));
    double seconds = now_s() - t0;
    CHECK(b, tgl_copy_dtoh(b, top, m.top_i, batch * 5 * sizeof(int32_t)));
    CHECK(b, tgl_copy_dtoh(b, logits, m.logits, batch * RESNET_CLASSES * sizeof(float)));
    release(&m);
    return (double)batch * runs / seconds;
}

