/* Argument checks shared by the public entry points. Each returns TGL_OK or records a message
 * naming the argument (through tgl__fail) and returns the status. */
#ifndef TGL_CORE_VALIDATE_H
#define TGL_CORE_VALIDATE_H

#include "internal.h"

/* Every call on a backend starts here: NULL backend, sticky device loss, activation. */
tgl_status tgl__enter(tgl_backend *b);
/* The same without activation, for calls whose backend side activates only when it needs the
 * device (tgl_alloc: a pooled block needs no GL call, and each activation costs an EGL call). */
tgl_status tgl__enter_host(tgl_backend *b);
/* Marks the backend lost when a backend call reports it. */
tgl_status tgl__leave(tgl_backend *b, tgl_status st);
/* A fused epilogue's activation (a tgl_activation) and its slope (finite): tgl_conv2d_fused and
 * tgl_gemm_fused. */
tgl_status tgl__check_activation(tgl_backend *b, tgl_activation act, float slope);
/* tgl_gemm_fused's epilogue in g (also tgl_matvec_t_fused's): the activation and slope, gate 0 or
 * 1, and beta 0 with a gate, whose factor is the output (`factor` names it in the message). */
tgl_status tgl__check_gemm_epilogue(tgl_backend *b, const tgl__gemm *g, const char *factor);

/* A device range of `bytes` starting at p. */
tgl_status tgl__resolve(tgl_backend *b, const char *arg, tgl_ptr p, size_t bytes, tgl__view *v);
/* n elements of elem_size bytes at p, aligned to elem_size. */
tgl_status tgl__resolve_array(tgl_backend *b, const char *arg, tgl_ptr p, size_t n, size_t elem_size,
                              tgl__view *v);
/* v as an i32: an integer in int32's range, or the call fails naming it. */
tgl_status tgl__i32_arg(tgl_backend *b, const char *name, double v, int32_t *out);
/* n * m without overflow (for element counts). */
tgl_status tgl__mul(tgl_backend *b, const char *what, size_t n, size_t m, size_t *out);
/* *out = a * c * h * w, the floats of an NCHW tensor, with their bytes checked too: an overflow
 * is TGL_ERR_INVALID_ARGUMENT naming arg (tgl_conv2d, tgl_pool2d). */
tgl_status tgl__count4(tgl_backend *b, const char *arg, size_t a, size_t c, size_t h, size_t w, size_t *out);

/* Two ranges of one allocation that share bytes. */
int tgl__overlaps(tgl__view x, size_t xbytes, tgl__view y, size_t ybytes);
/* out may equal in exactly (same start, same size) but must not otherwise overlap it. */
tgl_status tgl__check_alias(tgl_backend *b, const char *in_arg, tgl__view in, size_t in_bytes,
                            tgl__view out, size_t out_bytes);
/* out must not overlap in at all. */
/* A convolution's operands (tgl_conv2d, tgl_conv_transpose2d): input [batch, in_channels, in_h,
 * in_w], filter [f0, f1, kernel_h, kernel_w], bias [out_channels] (optional: v[2] zero without
 * it) and output [batch, out_channels, out_h, out_w], resolved into v (input, filter, bias,
 * output), output sharing no byte with the others; *n_out gets output's element count. */
tgl_status tgl__resolve_conv(tgl_backend *b, const tgl_conv2d_desc *d, size_t f0, size_t f1, size_t out_h,
                             size_t out_w, tgl_ptr input, tgl_ptr filter, tgl_ptr bias, tgl_ptr output, tgl__view v[4],
                             size_t *n_out);
tgl_status tgl__check_disjoint(tgl_backend *b, const char *in_arg, tgl__view in, size_t in_bytes,
                               tgl__view out, size_t out_bytes);
/* Descriptor operands (tensor.c). The dtype is in range and one of `dtypes` (a TGL__DT mask:
 * another is TGL_ERR_UNSUPPORTED, naming fn), ndim at most TGL_MAX_DIMS, the element count
 * (*n) without overflow. */
tgl_status tgl__tensor_shape(tgl_backend *b, const char *fn, const char *arg, const tgl_tensor *t, unsigned dtypes,
                             size_t *n);
/* t's strides seen in the index space of `shape` (ndim dims): NumPy broadcasting, dims aligned
 * from the right, a dim of 1 or a missing one repeating (stride 0). */
tgl_status tgl__broadcast_to(tgl_backend *b, const char *arg, const tgl_tensor *t, size_t ndim, const size_t *shape,
                             int64_t *strides);
/* The elements at data through `strides` over a non-empty `shape`: every one inside one
 * allocation (TGL_ERR_INVALID_POINTER otherwise), data aligned to the element size. */
tgl_status tgl__resolve_tensor(tgl_backend *b, const char *arg, tgl_ptr data, tgl_dtype dtype, size_t ndim,
                               const size_t *shape, const int64_t *strides, tgl__tensor_view *v);
/* strides are row-major dense over shape (dims of one take any stride), in int64 range
 * (tensor.c); shapes whose product passes it, possible where a dim is 0, are not. */
int tgl__row_major(size_t ndim, const size_t *shape, const int64_t *strides);
/* A 0-d tensor as one element of one dim (stride 0); others as they are (tensor.c). */
tgl_tensor tgl__one_dim(const tgl_tensor *t);
/* An output reaches no element twice (a conservative test: see tensor.c). */
tgl_status tgl__check_unique(tgl_backend *b, const char *arg, size_t ndim, const size_t *shape, const int64_t *strides);
/* a and b are the same elements in the same order (one data, dtype and strides): in place. */
int tgl__same_tensor(const tgl_tensor *a, const tgl_tensor *b);
/* Runs a flat op's unary or binary op (`sub`, one the flat kernels lack) on the descriptor
 * kernels: nin validated f32 arrays of n elements in, out (equal to an input or apart from it). */
tgl_status tgl__flat_tew(tgl_backend *b, tgl__tew_op op, int sub, const tgl__view *in, size_t nin, tgl__view out,
                         size_t n, const char *fn);
/* A device buffer of `bytes` that a call uses inside itself (no handle, never traced), counted
 * against TGL_MAX_MEMORY and in the memory figures while it lives; fn names the call in errors. */
tgl_status tgl__temp_create(tgl_backend *b, const char *fn, size_t bytes, void **buf);
void tgl__temp_destroy(tgl_backend *b, void *buf, size_t bytes);
/* The device check of an i32 index view (index's shape and strides, non-empty) against
 * [0, extent) along `axis` of the tensor `whose` (api_gather.c): *check, a TGL__TEW_CHECK_INDEX
 * for vtable->gather or ->scatter; an extent of 0 fails here. tgl__index_fail reports the bad
 * index those found at bad_pos. */
tgl_status tgl__index_check(tgl_backend *b, const tgl_tensor *index, size_t extent, size_t axis, const char *whose,
                            tgl__tew *check);
tgl_status tgl__index_fail(tgl_backend *b, const tgl__tew *check, uint64_t bad_pos, int32_t bad_value, size_t axis,
                           const char *whose);
/* The backend lacks the op. */
tgl_status tgl__unsupported(tgl_backend *b, const char *fn);

#endif
