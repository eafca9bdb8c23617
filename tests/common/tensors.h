/* Helpers for the tests of the descriptor ops (tensors.c). */
#ifndef TGT_TENSORS_H
#define TGT_TENSORS_H

#include "testing.h"

/* A random layout of `shape` (ndim dims) for dtype dt: dims permuted in memory, some reversed,
 * gaps between them. data is a byte offset (element-aligned) into an allocation of *bytes. */
tgl_tensor tgt_random_layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes);

/* A row-major dense layout of `shape` for dtype dt, data 0-5 elements into an allocation of
 * *bytes that runs 0-5 elements past its end: the element-wise kernels' aligned (four elements
 * per access) and unaligned dense paths, with tails of every length. */
tgl_tensor tgt_dense_layout(tgt_rng *r, tgl_dtype dt, size_t ndim, const size_t *shape, size_t *bytes);

/* Fills bytes of p with elements of dtype dt drawn from a small pool of its edge values (NaN,
 * signed zeros, infinities, subnormals, integer limits, bool bytes other than 1). */
void tgt_pool_fill(tgt_rng *r, tgl_dtype dt, uint8_t *p, size_t bytes);

/* Shapes for nin inputs broadcasting to `shape` (ndim dims): each input drops leading dims or
 * turns dims into 1 at random, one input keeping what all others dropped. */
void tgt_broadcast_shapes(tgt_rng *r, size_t nin, size_t ndim, const size_t *shape, size_t *in_ndim,
                          size_t (*in_shape)[TGL_MAX_DIMS]);
/* An extent that stresses an index space: 1, primes, 2^k +- 1, past a workgroup; at most `most`
 * (of 129 and 257, the lists' largest). */
size_t tgt_awkward_extent(tgt_rng *r, size_t most);

#endif
