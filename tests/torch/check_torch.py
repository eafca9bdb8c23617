#!/usr/bin/python3
"""tensorgl's ops against PyTorch (CPU), on random cases: `make check-torch`.

The op suites check the GL backend against the CPU backend; this checks both against PyTorch,
the semantics most ops promise (docs/ops.md), through the C API by ctypes: output shapes,
refusals where PyTorch refuses (and acceptances where it accepts), values, and indices with ties,
NaN, infinities and -0. Attention is checked against a float64 evaluation of tgl_attention_t's
documented rule (its causal mask is aligned to the last key, as tensorgl documents; PyTorch's
SDPA aligns it to the first). The element-wise ops' transcendental results are compared with
PyTorch's float64 ones rounded to the dtype (Debian's PyTorch 1.13 is itself off in some float32
tails).

    python3 tests/torch/check_torch.py [--lib build/libtensorgl.so.0] [--cases N] [--seed S]

Exit status 1 when anything disagrees, each disagreement printed with its case.
"""
import argparse
import ctypes as C
import math
import random
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

MAX_DIMS = 8
TORCH_MAJOR = int(torch.__version__.split('.')[0])
DTYPES = {np.float32: 0, np.float16: 1, np.int32: 3, np.bool_: 4}


class Tensor(C.Structure):
    _fields_ = [('data', C.c_uint64), ('dtype', C.c_int), ('ndim', C.c_size_t),
                ('shape', C.c_size_t * MAX_DIMS), ('strides', C.c_int64 * MAX_DIMS)]


class Options(C.Structure):
    _fields_ = [('kind', C.c_int), ('device', C.c_int), ('flags', C.c_uint)]


def sizes(names):
    return [(n, C.c_size_t) for n in names.split()]


# tgl_dtype codes 0..4 (f32, f16, bf16, i32, bool): PyTorch's dtype and the bytes of an element
TORCH_OF = {0: torch.float32, 1: torch.float16, 2: torch.bfloat16, 3: torch.int32, 4: torch.bool}
ITEM = {0: 4, 1: 2, 2: 2, 3: 4, 4: 1}


def code_tensor(p, code, shape, strides, offset=0):
    """A descriptor of dtype code over the view of the buffer at p (offset in elements)."""
    t = Tensor(data=p + offset * ITEM[code], dtype=code, ndim=len(shape))
    for d in range(len(shape)):
        t.shape[d], t.strides[d] = shape[d], strides[d]
    return t


def read_code(be, p, shape, code):
    """The elements at p as a torch tensor of dtype code (bf16 from its 16-bit patterns)."""
    if code == 2:
        bits = np.atleast_1d(be.get(p, shape, np.uint16)).astype(np.uint32) << 16
        return torch.from_numpy(bits.view(np.float32)).reshape(shape).to(torch.bfloat16)
    return torch.from_numpy(be.get(p, shape, {0: np.float32, 1: np.float16, 3: np.int32, 4: np.bool_}[code]))


class PoolDesc(C.Structure):
    _fields_ = sizes('batch channels in_h in_w kernel_h kernel_w stride_h stride_w pad_h pad_w '
                     'dilation_h dilation_w') + [('kind', C.c_int), ('ceil_mode', C.c_int),
                                                 ('count_include_pad', C.c_int)]


class InterpDesc(C.Structure):
    _fields_ = sizes('batch channels in_h in_w out_h out_w') + [
        ('mode', C.c_int), ('align_corners', C.c_int), ('scale_h', C.c_double), ('scale_w', C.c_double)]


class ConvDesc(C.Structure):
    _fields_ = sizes('batch in_channels in_h in_w out_channels kernel_h kernel_w stride_h stride_w '
                     'pad_h pad_w dilation_h dilation_w groups')


class RopeDesc(C.Structure):
    _fields_ = [('theta', C.c_float), ('mode', C.c_int), ('rotary_dim', C.c_size_t), ('pos_offset', C.c_size_t),
                ('scaling', C.c_int), ('factor', C.c_float), ('low_freq_factor', C.c_float),
                ('high_freq_factor', C.c_float), ('original_context', C.c_size_t), ('freq_factors', C.c_void_p)]


class AttentionDesc(C.Structure):
    _fields_ = [('scale', C.c_float), ('causal', C.c_int), ('seq_kv', C.c_size_t), ('window', C.c_size_t),
                ('softcap', C.c_float), ('alibi_max_bias', C.c_float), ('seq_lens', C.c_void_p)]


class Backend:
    """One tensorgl backend: buffers from numpy arrays and back, descriptors of contiguous arrays."""

    def __init__(self, lib, kind, name):
        self.lib, self.name, self.h, self.bufs = lib, name, C.c_void_p(), []
        status = lib.tgl_open(C.byref(Options(kind, 0, 0)), C.byref(self.h))
        if status:
            raise SystemExit(f'tgl_open({name}) failed: status {status}')

    def put(self, a):
        a = np.ascontiguousarray(a)
        p = C.c_uint64()
        if self.lib.tgl_alloc(self.h, C.c_size_t(max(a.nbytes, 4)), C.byref(p)):
            raise SystemExit(f'{self.name}: tgl_alloc failed')
        if a.nbytes and self.lib.tgl_copy_htod(self.h, p, a.ctypes.data_as(C.c_void_p), C.c_size_t(a.nbytes)):
            raise SystemExit(f'{self.name}: tgl_copy_htod failed')
        self.bufs.append(p.value)
        return p.value

    def get(self, p, shape, dtype):
        a = np.empty(shape, dtype)
        if a.nbytes and self.lib.tgl_copy_dtoh(self.h, a.ctypes.data_as(C.c_void_p), C.c_uint64(p),
                                               C.c_size_t(a.nbytes)):
            raise SystemExit(f'{self.name}: tgl_copy_dtoh failed')
        return a

    def tensor(self, p, shape, dtype):
        t = Tensor(data=p, dtype=DTYPES[dtype], ndim=len(shape))
        stride = 1
        for i in reversed(range(len(shape))):
            t.shape[i], t.strides[i] = shape[i], stride
            stride *= shape[i]
        return t

    def free_all(self):
        for p in self.bufs:
            self.lib.tgl_free(self.h, C.c_uint64(p))
        self.bufs = []


class Checker:
    def __init__(self, backends, cases, seed):
        self.backends, self.cases, self.failures, self.checked, self.skipped = backends, cases, 0, 0, 0
        self.rng = np.random.default_rng(seed)
        random.seed(seed)

    def fail(self, what, *detail):
        self.failures += 1
        if self.failures <= 40:
            print('DISAGREE', what, *detail)

    def call(self, be, name, case, status):
        if status:
            self.fail(name, be.name, case, 'status', status)
        return status == 0

    def agree(self, be, what, got, want, exact=False, tol=1e-5, case=()):
        self.checked += 1
        if got.shape != want.shape:
            self.fail(what, be.name, case, 'shape', got.shape, 'PyTorch', want.shape)
        elif exact:
            if not np.array_equal(got, want, equal_nan=got.dtype.kind == 'f'):
                self.fail(what, be.name, case, 'got', got.ravel()[:8], 'PyTorch', want.ravel()[:8])
        elif not np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True):
            self.fail(what, be.name, case, 'max error', float(np.nanmax(np.abs(got - want))))

    def values(self, shape, ties=False, specials=False):
        x = (self.rng.integers(-4, 4, shape) if ties else self.rng.standard_normal(shape)).astype(np.float32)
        flat = x.reshape(-1)
        if specials and flat.size > 3:
            for v in (np.nan, np.inf, -np.inf, -0.0):
                if random.random() < 0.5:
                    flat[self.rng.integers(0, flat.size)] = v
        return x

    # ---- vision ----

    def pool2d(self, lib):
        for _ in range(self.cases):
            kind = random.randrange(2)
            kh, kw = random.randint(1, 4), random.randint(1, 4)
            sh, sw = random.randint(1, 3), random.randint(1, 3)
            ph, pw = random.randint(0, kh // 2), random.randint(0, kw // 2)
            dh, dw = (random.randint(1, 2), random.randint(1, 2)) if kind == 0 else (1, 1)
            ih, iw = random.randint(1, 12), random.randint(1, 12)
            ceil, incl = random.random() < 0.5, random.random() < 0.5
            x = self.values((2, 3, ih, iw), ties=kind == 0, specials=random.random() < 0.3)
            case = ('max' if kind == 0 else 'avg', (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ih, iw), ceil, incl)
            try:
                tx = torch.from_numpy(x)
                if kind == 0:
                    want, want_idx = F.max_pool2d(tx, (kh, kw), (sh, sw), (ph, pw), (dh, dw), ceil_mode=ceil,
                                                  return_indices=True)
                else:
                    want = F.avg_pool2d(tx, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil, count_include_pad=incl)
            except RuntimeError:
                want = None
            d = PoolDesc(2, 3, ih, iw, kh, kw, sh, sw, ph, pw, dh, dw, kind, int(ceil), int(incl))
            oh, ow = C.c_size_t(), C.c_size_t()
            status = lib.tgl_pool2d_output_size(C.byref(d), C.byref(oh), C.byref(ow))
            if want is None or status:
                if (want is None) != (status != 0):
                    self.fail('pool2d_output_size', case, 'status', status, 'PyTorch',
                              'refuses' if want is None else tuple(want.shape))
                continue
            for be in self.backends:
                pi, po = be.put(x), be.put(np.zeros(want.shape, np.float32))
                if kind == 0:
                    px = be.put(np.zeros(want.shape, np.int32))
                    status = lib.tgl_max_pool2d_indices(be.h, C.byref(d), C.c_uint64(pi), C.c_uint64(po),
                                                        C.c_uint64(px))
                else:
                    status = lib.tgl_pool2d(be.h, C.byref(d), C.c_uint64(pi), C.c_uint64(po))
                if not self.call(be, 'pool2d', case, status):
                    continue
                self.agree(be, 'pool2d', be.get(po, want.shape, np.float32), want.numpy(), exact=kind == 0,
                           tol=1e-6, case=case)
                if kind == 0:
                    self.agree(be, 'max_pool2d_indices', be.get(px, want.shape, np.int32), want_idx.numpy().astype(np.int32),
                               exact=True, case=case)
        for _ in range(self.cases // 2):
            kind = random.randrange(2)
            ih, iw, oh, ow = (random.randint(1, 15) for _ in range(4))
            x = self.values((2, 3, ih, iw), specials=kind == 0 and random.random() < 0.3)
            want = (F.adaptive_max_pool2d if kind == 0 else F.adaptive_avg_pool2d)(torch.from_numpy(x), (oh, ow)).numpy()
            for be in self.backends:
                pi, po = be.put(x), be.put(np.zeros(want.shape, np.float32))
                status = lib.tgl_adaptive_pool2d(be.h, kind, *(C.c_size_t(v) for v in (2, 3, ih, iw, oh, ow)),
                                                 C.c_uint64(pi), C.c_uint64(po))
                if not self.call(be, 'adaptive_pool2d', (kind, ih, iw, oh, ow), status):
                    continue
                self.agree(be, 'adaptive_pool2d', be.get(po, want.shape, np.float32), want, tol=1e-6,
                           case=(kind, ih, iw, oh, ow))

    def interpolate(self, lib):
        modes = ['nearest', 'nearest-exact', 'bilinear', 'bicubic']
        for _ in range(self.cases):
            mode = random.randrange(4)
            corners = mode >= 2 and random.random() < 0.5
            ih, iw = random.randint(1, 13), random.randint(1, 13)
            if random.random() < 0.2:  # outputs past 128 sides: PyTorch's generic CPU kernels
                iw = random.randint(60, 140)
            kw = {'mode': modes[mode]}
            if mode >= 2:
                kw['align_corners'] = corners
            x = self.values((2, 3, ih, iw))
            if random.random() < 0.4:
                sh = random.choice([0.3, 0.5, 1.05, 1.5, 1.7, 2.0, 2.05, 3.0])
                sw = random.choice([0.5, 0.7, 1.05, 1.25, 2.0, 2.05, 2.5])
                oh, ow = int(math.floor(ih * sh)), int(math.floor(iw * sw))
                if oh < 1 or ow < 1:
                    continue
                if mode == 0 and TORCH_MAJOR < 2 and any(
                        o in (i, 2 * i) and o / i != s for i, o, s in ((ih, oh, sh), (iw, ow, sw))):
                    self.skipped += 1  # PyTorch 1.x copies or halves such an axis only in one-channel images
                    continue
                want = F.interpolate(torch.from_numpy(x), scale_factor=(sh, sw), recompute_scale_factor=False, **kw)
            else:
                sh = sw = 0.0
                oh, ow = random.randint(1, 17), random.randint(1, 17)
                want = F.interpolate(torch.from_numpy(x), size=(oh, ow), **kw)
            want = want.numpy()
            case = (modes[mode], corners, (ih, iw), (oh, ow), (sh, sw))
            for be in self.backends:
                d = InterpDesc(2, 3, ih, iw, oh, ow, mode, int(corners), sh, sw)
                pi, po = be.put(x), be.put(np.zeros(want.shape, np.float32))
                status = lib.tgl_interpolate(be.h, C.byref(d), C.c_uint64(pi), C.c_uint64(po))
                if not self.call(be, 'interpolate', case, status):
                    continue
                # nearest picks pixels: exact. The blends: PyTorch's versions and kernels round the
                # source index r in f32 once or twice, so a weight may move by an ulp of r (below
                # 2^-23 times the side) on each axis, against at most 6 max|x| per unit of r
                tol = 1e-5 + 12 * max(ih, iw) * 2.0 ** -23 * float(np.abs(x).max())
                self.agree(be, 'interpolate', be.get(po, want.shape, np.float32), want, exact=mode < 2, tol=tol,
                           case=case)

    def conv(self, lib):
        for _ in range(self.cases):
            g = random.choice([1, 1, 2, 3])
            ci, co = g * random.randint(1, 4), g * random.randint(1, 4)
            kh, kw, sh, sw = random.randint(1, 4), random.randint(1, 4), random.randint(1, 3), random.randint(1, 3)
            dh, dw, ph, pw = random.randint(1, 2), random.randint(1, 2), random.randint(0, 3), random.randint(0, 3)
            ih, iw, n = random.randint(1, 10), random.randint(1, 10), random.randint(1, 2)
            transpose = random.random() < 0.5
            x = self.values((n, ci, ih, iw))
            w = self.values((ci, co // g, kh, kw) if transpose else (co, ci // g, kh, kw))
            bias = self.values((co,))
            oph, opw = (random.randint(0, max(sh, dh) - 1), random.randint(0, max(sw, dw) - 1)) if transpose else (0, 0)
            tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
            try:
                if transpose:
                    want = F.conv_transpose2d(tx, tw, tb, (sh, sw), (ph, pw), (oph, opw), g, (dh, dw)).numpy()
                else:
                    want = F.conv2d(tx, tw, tb, (sh, sw), (ph, pw), (dh, dw), g).numpy()
                if want.size == 0:
                    want = None
            except RuntimeError:
                want = None
            d = ConvDesc(n, ci, ih, iw, co, kh, kw, sh, sw, ph, pw, dh, dw, g)
            case = ('transpose' if transpose else 'conv', (n, ci, ih, iw, co), (kh, kw), (sh, sw), (ph, pw), (dh, dw),
                    g, (oph, opw))
            oh, ow = C.c_size_t(), C.c_size_t()
            if transpose:
                status = lib.tgl_conv_transpose2d_output_size(C.byref(d), C.c_size_t(oph), C.c_size_t(opw),
                                                              C.byref(oh), C.byref(ow))
            else:
                status = lib.tgl_conv2d_output_size(C.byref(d), C.byref(oh), C.byref(ow))
            if want is None or status:
                if (want is None) != (status != 0):
                    self.fail('conv output size', case, 'status', status, 'PyTorch',
                              'refuses' if want is None else want.shape)
                continue
            for be in self.backends:
                px, pw_, pb = be.put(x), be.put(w), be.put(bias)
                po = be.put(np.zeros(want.shape, np.float32))
                if transpose:
                    status = lib.tgl_conv_transpose2d(be.h, C.byref(d), C.c_size_t(oph), C.c_size_t(opw),
                                                      *(C.c_uint64(p) for p in (px, pw_, pb, po)))
                else:
                    status = lib.tgl_conv2d(be.h, C.byref(d), *(C.c_uint64(p) for p in (px, pw_, pb, po)))
                if not self.call(be, 'conv', case, status):
                    continue
                self.agree(be, case[0], be.get(po, want.shape, np.float32), want, tol=1e-4, case=case)

    # ---- tensors along an axis ----

    def along_axis(self, lib):
        for _ in range(self.cases):
            nd = random.randint(1, 3)
            shape = [random.randint(1, 9) for _ in range(nd)]
            axis = random.randrange(nd)
            x = self.values(shape, ties=True, specials=True)
            tx = torch.from_numpy(x)
            case = (shape, axis)
            for desc in (0, 1):
                wv, wi = torch.sort(tx, dim=axis, descending=bool(desc), stable=True)
                self.pairs(lib.tgl_sort, 'sort', x, shape, axis, (C.c_int(desc),), wv.numpy(), wi.numpy(), case + (desc,))
            k = random.randint(0, shape[axis])
            for largest in (0, 1):
                wv, wi = torch.topk(tx, k, dim=axis, largest=bool(largest), sorted=True)
                # values only: the indices of ties are PyTorch's choice (tensorgl keeps the line's order)
                self.pairs(lib.tgl_topk, 'topk', x, shape, axis, (C.c_size_t(k), C.c_int(largest)), wv.numpy(), None,
                           case + (k, largest))
            for name, fn, tfn in (('cummax', lib.tgl_cummax, torch.cummax), ('cummin', lib.tgl_cummin, torch.cummin)):
                wv, wi = tfn(tx, dim=axis)
                self.pairs(fn, name, x, shape, axis, (), wv.numpy(), wi.numpy(), case)
            for name, fn, tfn in (('argmax', lib.tgl_argmax_t, torch.argmax), ('argmin', lib.tgl_argmin_t, torch.argmin)):
                want = tfn(tx, dim=axis).numpy().astype(np.int32)
                self.unary_axis(fn, name, x, shape, axis, (), want, np.int32, exact=True, case=case)
            for op, name, tfn in ((0, 'sum', torch.sum), (1, 'mean', torch.mean), (2, 'max', torch.amax),
                                  (3, 'min', torch.amin), (4, 'prod', torch.prod)):
                want = tfn(tx, dim=axis).numpy()
                self.unary_axis(lib.tgl_reduce_t, 'reduce ' + name, x, shape, axis, (op,), want, np.float32,
                                case=case, first=True)
            finite = self.values(shape, ties=True)
            for name, fn, tfn in (('softmax', lib.tgl_softmax_t, torch.softmax),
                                  ('log_softmax', lib.tgl_log_softmax_t, torch.log_softmax)):
                want = tfn(torch.from_numpy(finite), dim=axis).numpy()
                self.unary_axis(fn, name, finite, shape, axis, (), want, np.float32, case=case)
            for name, fn, tfn in (('cumsum', lib.tgl_cumsum, torch.cumsum), ('cumprod', lib.tgl_cumprod, torch.cumprod)):
                want = tfn(torch.from_numpy(finite), dim=axis).numpy()
                self.unary_axis(fn, name, finite, shape, axis, (), want, np.float32, case=case)

    def pairs(self, fn, name, x, shape, axis, extra, want_v, want_i, case):
        out_shape = list(want_v.shape)
        for be in self.backends:
            pi, pv, px = be.put(x), be.put(np.zeros(out_shape, np.float32)), be.put(np.zeros(out_shape, np.int32))
            ti = be.tensor(pi, shape, np.float32)
            tv, tx = be.tensor(pv, out_shape, np.float32), be.tensor(px, out_shape, np.int32)
            if name in ('sort', 'topk'):
                status = fn(be.h, C.byref(ti), C.c_size_t(axis), *extra, C.byref(tv), C.byref(tx))
            else:
                status = fn(be.h, C.byref(ti), C.c_size_t(axis), C.byref(tv), C.byref(tx))
            if not self.call(be, name, case, status):
                continue
            self.agree(be, name, be.get(pv, out_shape, np.float32), want_v, exact=True, case=case)
            if want_i is not None:
                self.agree(be, name + ' indices', be.get(px, out_shape, np.int32), want_i.astype(np.int32), exact=True,
                           case=case)

    def unary_axis(self, fn, name, x, shape, axis, extra, want, out_dtype, exact=False, case=(), first=False):
        out_shape = list(want.shape)
        for be in self.backends:
            pi, po = be.put(x), be.put(np.zeros(out_shape, out_dtype))
            ti, to = be.tensor(pi, shape, np.float32), be.tensor(po, out_shape, out_dtype)
            if first:  # tgl_reduce_t(b, op, in, axis, out)
                status = fn(be.h, *extra, C.byref(ti), C.c_size_t(axis), C.byref(to))
            else:
                status = fn(be.h, C.byref(ti), C.c_size_t(axis), C.byref(to))
            if not self.call(be, name, case, status):
                continue
            self.agree(be, name, be.get(po, out_shape, out_dtype), want, exact=exact, tol=1e-5, case=case)

    # ---- indexing and moving elements ----

    def indexing(self, lib):
        for _ in range(self.cases // 2):
            nd = random.randint(1, 3)
            shape = [random.randint(1, 7) for _ in range(nd)]
            axis = random.randrange(nd)
            x = self.values(shape, specials=True)
            tx = torch.from_numpy(x)
            ishape = [random.randint(1, shape[d]) if d != axis else random.randint(1, 9) for d in range(nd)]
            index = self.rng.integers(0, shape[axis], ishape).astype(np.int32)
            ti = torch.from_numpy(index.astype(np.int64))
            case = (shape, axis, ishape)
            want = torch.gather(tx, axis, ti).numpy()
            for be in self.backends:
                pi, px, po = be.put(x), be.put(index), be.put(np.zeros(ishape, np.float32))
                if self.call(be, 'gather', case, lib.tgl_gather(
                        be.h, C.byref(be.tensor(pi, shape, np.float32)), C.c_size_t(axis),
                        C.byref(be.tensor(px, ishape, np.int32)), C.byref(be.tensor(po, ishape, np.float32)))):
                    self.agree(be, 'gather', be.get(po, ishape, np.float32), want, exact=True, case=case)
            sel = self.rng.integers(0, shape[axis], random.randint(1, 9)).astype(np.int32)
            want = torch.index_select(tx, axis, torch.from_numpy(sel.astype(np.int64))).numpy()
            for be in self.backends:
                pi, px, po = be.put(x), be.put(sel), be.put(np.zeros(want.shape, np.float32))
                if self.call(be, 'index_select', case, lib.tgl_index_select(
                        be.h, C.byref(be.tensor(pi, shape, np.float32)), C.c_size_t(axis),
                        C.byref(be.tensor(px, [len(sel)], np.int32)),
                        C.byref(be.tensor(po, list(want.shape), np.float32)))):
                    self.agree(be, 'index_select', be.get(po, want.shape, np.float32), want, exact=True, case=case)
            # scatter: src of index's shape onto out (x); SET with distinct places along axis
            src = self.values(ishape)
            for reduce, name in ((0, 'set'), (1, 'sum'), (2, 'amax'), (3, 'amin')):
                idx = index
                if reduce == 0:
                    if ishape[axis] > shape[axis]:
                        continue
                    idx = np.take(np.argsort(self.rng.random(shape), axis=axis), range(ishape[axis]), axis=axis)
                    idx = idx[tuple(slice(0, e) for e in ishape)].astype(np.int32)
                out = self.values(shape)
                tout, tidx, tsrc = torch.from_numpy(out.copy()), torch.from_numpy(idx.astype(np.int64)), torch.from_numpy(src)
                want = (tout.scatter_(axis, tidx, tsrc) if reduce == 0 else
                        tout.scatter_reduce_(axis, tidx, tsrc, name, include_self=True)).numpy()
                for be in self.backends:
                    ps, px, po = be.put(src), be.put(idx), be.put(out)
                    if self.call(be, 'scatter ' + name, case, lib.tgl_scatter(
                            be.h, C.byref(be.tensor(ps, ishape, np.float32)), C.c_size_t(axis),
                            C.byref(be.tensor(px, ishape, np.int32)), C.byref(be.tensor(po, shape, np.float32)),
                            C.c_int(reduce))):
                        self.agree(be, 'scatter ' + name, be.get(po, shape, np.float32), want, exact=reduce != 1,
                                   tol=1e-5, case=case)
            # index_add
            add_shape = list(shape)
            add_shape[axis] = len(sel)
            src = self.values(add_shape)
            out = self.values(shape)
            want = torch.from_numpy(out.copy()).index_add_(axis, torch.from_numpy(sel.astype(np.int64)),
                                                           torch.from_numpy(src)).numpy()
            for be in self.backends:
                ps, px, po = be.put(src), be.put(sel), be.put(out)
                if self.call(be, 'index_add', case, lib.tgl_index_add(
                        be.h, C.byref(be.tensor(ps, add_shape, np.float32)), C.c_size_t(axis),
                        C.byref(be.tensor(px, [len(sel)], np.int32)), C.byref(be.tensor(po, shape, np.float32)))):
                    self.agree(be, 'index_add', be.get(po, shape, np.float32), want, tol=1e-5, case=case)
            # masked_select and nonzero
            mask = self.rng.random(shape) < 0.4
            want = torch.masked_select(tx, torch.from_numpy(mask)).numpy()
            sparse = np.where(mask, x, 0).astype(np.float32)
            want_nz = torch.nonzero(torch.from_numpy(sparse)).numpy().astype(np.int32)
            n = x.size
            for be in self.backends:
                pi, pm, po, pc = be.put(x), be.put(mask), be.put(np.zeros(n, np.float32)), be.put(np.zeros(1, np.int32))
                if self.call(be, 'masked_select', case, lib.tgl_masked_select(
                        be.h, C.byref(be.tensor(pi, shape, np.float32)), C.byref(be.tensor(pm, shape, np.bool_)),
                        C.byref(be.tensor(po, [n], np.float32)), C.byref(be.tensor(pc, [1], np.int32)))):
                    count = int(be.get(pc, 1, np.int32)[0])
                    self.agree(be, 'masked_select', be.get(po, n, np.float32)[:count], want, exact=True, case=case)
                pi, po, pc = be.put(sparse), be.put(np.zeros((n, nd), np.int32)), be.put(np.zeros(1, np.int32))
                if self.call(be, 'nonzero', case, lib.tgl_nonzero(
                        be.h, C.byref(be.tensor(pi, shape, np.float32)), C.byref(be.tensor(po, [n, nd], np.int32)),
                        C.byref(be.tensor(pc, [1], np.int32)))):
                    count = int(be.get(pc, 1, np.int32)[0])
                    self.agree(be, 'nonzero', be.get(po, (n, nd), np.int32)[:count], want_nz, exact=True, case=case)

    def moving(self, lib):
        modes = ['constant', 'reflect', 'replicate', 'circular']
        for _ in range(self.cases // 2):
            nd = random.randint(1, 4)
            shape = [random.randint(1, 6) for _ in range(nd)]
            x = self.values(shape, specials=True)
            tx = torch.from_numpy(x)
            case = (shape,)
            dims = random.sample(range(nd), random.randint(0, nd))
            self.shaped(lib.tgl_flip, 'flip', x, torch.flip(tx, dims).numpy(),
                        ((C.c_size_t * max(1, len(dims)))(*dims), C.c_size_t(len(dims))), case + (dims,))
            rdims = [random.randrange(nd) for _ in range(random.randint(1, 3))]
            shifts = [random.randint(-9, 9) for _ in rdims]
            self.shaped(lib.tgl_roll, 'roll', x, torch.roll(tx, shifts, rdims).numpy(),
                        ((C.c_int64 * len(shifts))(*shifts), C.c_size_t(len(shifts)),
                         (C.c_size_t * len(rdims))(*rdims)), case + (shifts, rdims))
            reps = [random.randint(0 if random.random() < 0.1 else 1, 3) for _ in range(nd + random.randint(0, 2))]
            self.shaped(lib.tgl_repeat, 'repeat', x, tx.repeat(*reps).numpy(),
                        ((C.c_size_t * len(reps))(*reps), C.c_size_t(len(reps))), case + (reps,))
            mode = random.randrange(4)
            # PyTorch pads the last 1, 2 or 3 dims for reflect, replicate and circular (batch and
            # channel dims before them); constant any number
            n_padded = random.randint(1, min(nd, 3)) if mode else random.randint(1, nd)
            if mode and nd < n_padded + 1:
                continue
            pads = []
            for d in range(n_padded):
                extent = shape[nd - 1 - d]
                top = extent - 1 if mode == 1 else extent if mode == 3 else 4
                pads += [random.randint(-2 if mode == 0 else 0, top), random.randint(-2 if mode == 0 else 0, top)]
            try:
                if mode and nd - n_padded > 2:
                    raise RuntimeError('PyTorch pads these modes with at most 2 leading dims')
                want = F.pad(tx, pads, modes[mode], 1.5 if mode == 0 else None).numpy()
            except (RuntimeError, NotImplementedError, IndexError, ValueError):
                continue  # a layout this PyTorch does not pad in that mode
            self.shaped(lib.tgl_pad, 'pad ' + modes[mode], x, want,
                        ((C.c_int64 * len(pads))(*pads), C.c_size_t(len(pads)), C.c_int(mode), C.c_double(1.5)),
                        case + (pads,))
            if nd >= 2:
                diag = random.randint(-4, 4)
                self.shaped(lib.tgl_triu, 'triu', x, torch.triu(tx, diag).numpy(), (C.c_int64(diag),), case + (diag,),
                            out_last=True)
                self.shaped(lib.tgl_tril, 'tril', x, torch.tril(tx, diag).numpy(), (C.c_int64(diag),), case + (diag,),
                            out_last=True)
            classes = random.randint(1, 6)
            labels = self.rng.integers(0, classes, shape).astype(np.int32)
            want = F.one_hot(torch.from_numpy(labels.astype(np.int64)), classes).numpy().astype(np.float32)
            for be in self.backends:
                pi, po = be.put(labels), be.put(np.zeros(want.shape, np.float32))
                if self.call(be, 'one_hot', case, lib.tgl_one_hot(
                        be.h, C.byref(be.tensor(pi, shape, np.int32)), C.byref(be.tensor(po, list(want.shape), np.float32)))):
                    self.agree(be, 'one_hot', be.get(po, want.shape, np.float32), want, exact=True, case=case)

    def shaped(self, fn, name, x, want, extra, case, out_last=False):
        """fn(b, &in, extra..., &out), or fn(b, &in, &out, extra...) where out_last (tgl_triu, tgl_tril)."""
        for be in self.backends:
            pi, po = be.put(x), be.put(np.zeros(want.shape, np.float32))
            ti, to = be.tensor(pi, list(x.shape), np.float32), be.tensor(po, list(want.shape), np.float32)
            args = (C.byref(ti), C.byref(to)) + tuple(extra) if out_last else (C.byref(ti),) + tuple(extra) + (C.byref(to),)
            if self.call(be, name, case, fn(be.h, *args)):
                self.agree(be, name, be.get(po, want.shape, np.float32), want, exact=True, case=case)

    # ---- strided views and dtypes ----

    def view(self, shape):
        """A random view over a fresh base: (base_len, offset, strides) in elements, with steps,
        a permutation, flips (negative strides) and broadcast dims (stride 0)."""
        nd = len(shape)
        steps = [random.choice([1, 1, 2, 3]) for _ in range(nd)]
        order = list(range(nd))
        random.shuffle(order)
        strides, span = [0] * nd, 1
        for d in reversed(order):  # the permuted layout, innermost last in `order`
            if shape[d] == 1 or random.random() < 0.1:
                strides[d] = 0 if random.random() < 0.5 else span
                continue
            strides[d] = span * steps[d]
            span = span * steps[d] * shape[d] + random.randint(0, 2)
        offset = 0
        for d in range(nd):
            if strides[d] and random.random() < 0.3:  # flipped: starts at its last element
                offset += strides[d] * (shape[d] - 1)
                strides[d] = -strides[d]
        last = offset + sum(max(0, st) * (e - 1) for st, e in zip(strides, shape))
        return last + 1 + random.randint(0, 2), offset, strides

    def strided(self, lib):
        kinds = [(np.float32, 0), (np.float16, 1), ('bf16', 2), (np.int32, 3), (np.bool_, 4)]

        def base_of(code, n):
            """Values every dtype holds exactly, as the base's numpy storage and as torch values."""
            v = self.rng.integers(-8, 8, n).astype(np.float32) * random.choice([1.0, 0.5, 0.25])
            if code == 3:
                v = v.astype(np.int32)
                return v, torch.from_numpy(v)
            if code == 4:
                v = v != 0
                return v, torch.from_numpy(v)
            if code == 2:
                bits = (v.view(np.uint32) >> 16).astype(np.uint16)
                return bits, torch.from_numpy(v).to(torch.bfloat16)
            v = v.astype(np.float16 if code == 1 else np.float32)
            return v, torch.from_numpy(v)

        def as_view(t, offset, shape, strides):
            """t (1-d torch) seen through the view, flips included, as a contiguous torch tensor."""
            pos = np.full(shape, offset, np.int64)
            for d, st in enumerate(strides):
                idx = np.arange(shape[d]).reshape([-1 if k == d else 1 for k in range(len(shape))])
                pos = pos + idx * st
            return t[torch.from_numpy(pos.reshape(-1))].reshape(shape)

        for _ in range(self.cases // 2):
            nd = random.randint(1, 4)
            shape = [random.randint(1, 5) for _ in range(nd)]
            src_code, dst_code = random.choice(kinds)[1], random.choice(kinds)[1]
            n, offset, strides = self.view(shape)
            base, tbase = base_of(src_code, n)
            src = as_view(tbase, offset, shape, strides)
            case = (shape, strides, offset, src_code, dst_code)
            # tgl_copy: the view cast into a contiguous dst (PyTorch's .to)
            want = src.to(TORCH_OF[dst_code])
            for be in self.backends:
                p = be.put(base)
                po = be.put(np.zeros(int(np.prod(shape)) * ITEM[dst_code] + 4, np.uint8))
                dst = be.tensor(po, shape, np.float32)
                dst.dtype = dst_code
                if self.call(be, 'copy', case, lib.tgl_copy(be.h, C.byref(dst), C.byref(code_tensor(p, src_code, shape, strides, offset)))):
                    got = read_code(be, po, shape, dst_code)
                    self.agree(be, 'copy (cast)', got.float().numpy(), want.float().numpy(), exact=True, case=case)
            if src_code == 4:
                continue
            # binary ADD and MAX of the view with a second view of another layout, same dtype;
            # unary NEG and ABS; the sum and cumsum along an axis (float sums in f32)
            n2, offset2, strides2 = self.view(shape)
            base2, tbase2 = base_of(src_code, n2)
            other = as_view(tbase2, offset2, shape, strides2)
            axis = random.randrange(nd)
            checks = [('binary add', lambda: torch.add(src, other), 'b', 0), ('binary max', lambda: torch.maximum(src, other), 'b', 4),
                      ('unary neg', lambda: torch.neg(src), 'u', 0), ('unary abs', lambda: torch.abs(src), 'u', 1),
                      ('reduce sum', lambda: torch.sum(src.float() if src_code < 3 else src, axis).to(src.dtype), 'r', 0),
                      ('cumsum', lambda: torch.cumsum(src.float() if src_code < 3 else src, axis).to(src.dtype), 'c', 0)]
            for name, ref, form, op in checks:
                want = ref()
                out_shape = list(want.shape)
                for be in self.backends:
                    p, p2 = be.put(base), be.put(base2)
                    po = be.put(np.zeros(max(1, int(np.prod(out_shape))) * ITEM[src_code] + 4, np.uint8))
                    out = be.tensor(po, out_shape, np.float32)
                    out.dtype = src_code
                    a, b2 = code_tensor(p, src_code, shape, strides, offset), code_tensor(p2, src_code, shape, strides2, offset2)
                    if form == 'b':
                        status = lib.tgl_binary_t(be.h, op, C.byref(a), C.byref(b2), C.byref(out))
                    elif form == 'u':
                        status = lib.tgl_unary_t(be.h, op, C.byref(a), C.byref(out))
                    elif form == 'r':
                        status = lib.tgl_reduce_t(be.h, op, C.byref(a), C.c_size_t(axis), C.byref(out))
                    else:
                        status = lib.tgl_cumsum(be.h, C.byref(a), C.c_size_t(axis), C.byref(out))
                    if self.call(be, name, case + (strides2, offset2, axis), status):
                        got = read_code(be, po, out_shape, src_code)
                        self.agree(be, name, got.float().numpy(), want.float().numpy(), exact=True,
                                   case=case + (strides2, offset2, axis))

    # ---- norms ----

    def norms(self, lib):
        """layer_norm and an RMS norm (x / sqrt(mean(x^2) + eps) * w, evaluated in float64, which
        this PyTorch may lack) over the last dim, in f32 and f16, with and without weights."""
        for _ in range(self.cases // 2):
            nd = random.randint(1, 3)
            shape = [random.randint(1, 6) for _ in range(nd - 1)] + [random.choice([1, 2, 7, 33, 64, 257])]
            cols = shape[-1]
            dtype = random.choice([np.float32, np.float16])
            x = (self.values(shape) * random.choice([1.0, 0.01, 30.0])).astype(dtype)
            gamma, beta = self.values((cols,)), self.values((cols,))
            eps = random.choice([1e-5, 1e-6, 0.1])
            weighted = random.random() < 0.7
            tx = torch.from_numpy(x.astype(np.float32))
            want_ln = F.layer_norm(tx.double(), (cols,), torch.from_numpy(gamma).double() if weighted else None,
                                   torch.from_numpy(beta).double() if weighted else None, eps)
            x64 = x.astype(np.float64)
            want_rms = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps) * (gamma if weighted else 1.0)
            case = (shape, dtype.__name__, eps, weighted)
            # f16 outputs round once: half an ulp of 2^-11, plus f32 arithmetic on the way
            tol = 2e-3 if dtype == np.float16 else 2e-5
            for name, want in (('layernorm', want_ln.numpy()), ('rmsnorm', want_rms)):
                want = want.astype(dtype).astype(np.float32)
                for be in self.backends:
                    pi, po = be.put(x), be.put(np.zeros(shape, dtype))
                    ti, to = be.tensor(pi, shape, dtype), be.tensor(po, shape, dtype)
                    tg = tb = None
                    if weighted:
                        tg = be.tensor(be.put(gamma), [cols], np.float32)
                        tb = be.tensor(be.put(beta), [cols], np.float32)
                    if name == 'layernorm':
                        status = lib.tgl_layernorm_t(be.h, C.byref(ti), C.byref(tg) if tg else None,
                                                     C.byref(tb) if tb else None, C.byref(to), C.c_float(eps))
                    else:
                        status = lib.tgl_rmsnorm_t(be.h, C.byref(ti), C.byref(tg) if tg else None, C.byref(to),
                                                   C.c_float(eps))
                    if self.call(be, name, case, status):
                        got = be.get(po, shape, dtype).astype(np.float32)
                        self.agree(be, name, got, want, tol=tol, case=case)

    # ---- rotary embeddings ----

    @staticmethod
    def inv_freq(theta, rd, scaling, factor, low, high, context):
        """Hugging Face's inv_freq, by its own code's steps in torch (rope_init_fn: default,
        linear, static NTK's base, llama3): float32 tensor arithmetic."""
        base = theta * factor ** (rd / (rd - 2)) if scaling == 2 else theta
        f = 1.0 / (base ** (torch.arange(0, rd, 2, dtype=torch.int64).float() / rd))
        if scaling == 1:
            f = f / factor
        elif scaling == 3:
            low_wavelen, high_wavelen = context / low, context / high
            wavelen = 2 * math.pi / f
            scaled = torch.where(wavelen > low_wavelen, f / factor, f)
            smooth = (context / wavelen - low) / (high - low)
            smoothed = (1 - smooth) * scaled / factor + smooth * scaled
            medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
            f = torch.where(medium, smoothed, scaled)
        return f.numpy()

    def rope(self, lib):
        for _ in range(self.cases // 2):
            batch, seq, heads = random.randint(1, 2), random.randint(1, 5), random.randint(1, 3)
            head_dim = random.choice([2, 8, 64, 80, 128])
            rd = random.choice([head_dim, head_dim, head_dim // 2 - (head_dim // 2) % 2 or 2])
            mode, scaling = random.randrange(2), random.randrange(4)
            if scaling == 2 and rd == 2:
                scaling = 0  # NTK's base takes rd / (rd - 2): refused for a rotary_dim of 2
            theta = random.choice([10000.0, 500000.0, 1e6])
            factor, low, high, context = random.choice([2.0, 8.0]), 1.0, 4.0, random.choice([512, 8192])
            use_pos = random.random() < 0.6
            pos = self.rng.integers(0, 2000, (batch, seq)).astype(np.int32)
            offset = random.randint(0, 1000)
            if not use_pos:
                pos = np.broadcast_to(np.arange(seq, dtype=np.int32) + offset, (batch, seq))
            x = self.values((batch, seq, heads, head_dim))
            f = self.inv_freq(theta, rd, scaling, factor, low, high, context).astype(np.float32)
            angle = (pos.astype(np.float32)[:, :, None] * f[None, None, :]).astype(np.float32).astype(np.float64)
            cos, sin = np.cos(angle)[:, :, None, :], np.sin(angle)[:, :, None, :]
            want = x.astype(np.float64).copy()
            half = rd // 2
            if mode == 0:
                a, b = np.arange(half), np.arange(half) + half
            else:
                a, b = np.arange(0, rd, 2), np.arange(1, rd, 2)
            x0, x1 = x[..., a].astype(np.float64), x[..., b].astype(np.float64)
            want[..., a] = x0 * cos - x1 * sin
            want[..., b] = x0 * sin + x1 * cos
            case = ((batch, seq, heads, head_dim), rd, ['neox', 'interleaved'][mode], scaling, theta, use_pos)
            for be in self.backends:
                shape = [batch, seq, heads, head_dim]
                pi, po = be.put(x), be.put(np.zeros_like(x))
                tp = be.tensor(be.put(pos), [batch, seq], np.int32) if use_pos else None
                d = RopeDesc(theta, mode, rd, 0 if use_pos else offset, scaling, factor, low, high, context, None)
                status = lib.tgl_rope_t(be.h, C.byref(be.tensor(pi, shape, np.float32)),
                                        C.byref(be.tensor(po, shape, np.float32)), C.byref(tp) if tp else None,
                                        C.byref(d))
                # PyTorch's float32 pow is within an ulp of the correctly rounded one tensorgl
                # takes, so a frequency may differ by an ulp (at most 1): the angle by pos ulps
                tol = 2e-5 + 2 * float(pos.max()) * 2.0 ** -23 * float(np.abs(x).max())
                if self.call(be, 'rope_t', case, status):
                    self.agree(be, 'rope_t', be.get(po, x.shape, np.float32), want.astype(np.float32), tol=tol,
                               case=case)

    # ---- attention ----

    @staticmethod
    def attention_reference(q, k, v, mask, causal, window, softcap, alibi):
        _, heads, seq_q, dim = q.shape
        seq_kv = k.shape[2]
        k = np.repeat(k, heads // k.shape[1], axis=1).astype(np.float64)
        v = np.repeat(v, heads // v.shape[1], axis=1).astype(np.float64)
        s = np.einsum('bhqd,bhkd->bhqk', q.astype(np.float64), k) / math.sqrt(dim)
        if softcap > 0:
            s = softcap * np.tanh(s / softcap)
        pos = np.arange(seq_q)[:, None] + seq_kv - seq_q
        key = np.arange(seq_kv)[None, :]
        if alibi > 0:
            n = 2 ** int(math.floor(math.log2(heads)))
            slopes = [2 ** (-alibi * (h + 1) / n) if h < n else 2 ** (-alibi * (2 * (h - n) + 1) / (2 * n))
                      for h in range(heads)]
            s = s - np.array(slopes)[None, :, None, None] * np.abs(pos - key)[None, None]
        if mask is not None:
            s = s + mask
        seen = np.ones((seq_q, seq_kv), bool)
        if causal:
            seen &= key <= pos
        if window:
            seen &= key > pos - window
        s = np.where(seen[None, None], s, -np.inf)
        top = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(top), top, 0))
        total = e.sum(-1, keepdims=True)
        p = np.where(total > 0, e / np.where(total > 0, total, 1), 0)  # a row that sees nothing: zeros
        return np.einsum('bhqk,bhkd->bhqd', p, v)

    def attention(self, lib):
        for _ in range(self.cases // 2):
            batch, heads_kv = random.randint(1, 2), random.choice([1, 2])
            heads, dim = heads_kv * random.choice([1, 2, 4]), random.choice([8, 16, 64, 80, 128])
            seq_q = random.randint(1, 9)
            seq_kv = seq_q + random.randint(0, 20)
            causal, window = random.random() < 0.5, random.choice([0, 0, 3, 7])
            softcap, alibi = random.choice([0.0, 0.0, 5.0]), random.choice([0.0, 0.0, 8.0])
            q = self.values((batch, heads, seq_q, dim))
            k, v = self.values((batch, heads_kv, seq_kv, dim)), self.values((batch, heads_kv, seq_kv, dim))
            mshape = (random.choice([1, batch]), random.choice([1, heads]), seq_q, seq_kv)
            mask = None
            if random.random() < 0.5:
                mask = self.values(mshape) * 2
                if random.random() < 0.5:
                    mask[..., 0] = -np.inf
            want = self.attention_reference(q, k, v, mask, causal, window, softcap, alibi)
            case = ((batch, heads, heads_kv, seq_q, seq_kv, dim), causal, window, softcap, alibi,
                    None if mask is None else mshape)
            for be in self.backends:
                pq, pk, pv, po = be.put(q), be.put(k), be.put(v), be.put(np.zeros_like(q))
                tm = None if mask is None else be.tensor(be.put(mask), list(mshape), np.float32)
                d = AttentionDesc(0.0, int(causal), seq_kv, window, softcap, alibi, None)
                status = lib.tgl_attention_t(be.h, C.byref(be.tensor(pq, list(q.shape), np.float32)),
                                             C.byref(be.tensor(pk, list(k.shape), np.float32)),
                                             C.byref(be.tensor(pv, list(v.shape), np.float32)),
                                             None if tm is None else C.byref(tm),
                                             C.byref(be.tensor(po, list(q.shape), np.float32)), C.byref(d))
                if not self.call(be, 'attention_t', case, status):
                    continue
                self.agree(be, 'attention_t', be.get(po, q.shape, np.float32), want.astype(np.float32), tol=1e-4,
                           case=case)


    # ---- linear layers ----

    def linear(self, lib):
        """tgl_gemm_fused (both transposes, alpha, beta, a bias, each activation, the SwiGLU gate)
        and tgl_matvec_t_fused with its weight in f32, f16, bf16, q8_0 and q4_0 (one or a few rows
        of x), against F.linear and PyTorch's activation functions in float64 on the weights as
        stored (block weights decoded by tgl_dequantize, which test_quant holds to ggml's bytes).
        Within 3e-5 of the sum of the magnitudes that meet in each output, times the largest
        slope of the activation."""
        acts = [lambda t, s: t, lambda t, s: F.relu(t), lambda t, s: F.relu6(t), lambda t, s: F.leaky_relu(t, s),
                lambda t, s: torch.sigmoid(t), lambda t, s: F.silu(t), lambda t, s: F.gelu(t, approximate='tanh'),
                lambda t, s: F.gelu(t), lambda t, s: F.hardswish(t), lambda t, s: torch.tanh(t)]
        f32 = lambda *shape: self.rng.standard_normal(shape).astype(np.float32)

        def close(be, what, got, want, mag, case):
            self.checked += 1
            err = np.abs(got.astype(np.float64) - want)
            bad = ~(err <= 3e-5 * 2 * mag + 1e-6)
            if bad.any():
                i = int(np.argmax(bad))
                self.fail(what, be.name, case, 'at', i, 'got', got.ravel()[i], 'PyTorch', want.ravel()[i],
                          'magnitude', mag.ravel()[i])

        for _ in range(self.cases // 4):
            m, n, k = random.choice([1, 2, 3, 5, 16, 17, 33]), random.choice([1, 4, 7, 31, 64, 65]), \
                random.choice([1, 3, 32, 63, 128, 257])
            ta, tb, gate = random.randint(0, 1), random.randint(0, 1), int(random.random() < 0.25)
            alpha, beta = random.choice([1.0, 0.5, -2.0]), 0.0 if gate else random.choice([0.0, 1.0, 0.25])
            act, slope, with_bias = random.randrange(10), random.choice([0.01, 0.2]), random.random() < 0.5
            a, bm, c, bias = f32(m, k), f32(k, n), f32(m, n), f32(n)
            a_st, b_st = (a.T.copy() if ta else a), (bm.T.copy() if tb else bm)
            A, B, Cin, Bias = (torch.from_numpy(v).double() for v in (a, bm, c, bias))
            r = alpha * (A @ B) + beta * Cin + (Bias if with_bias else 0)
            want = acts[act](r, slope) * (Cin if gate else 1)
            mag = (abs(alpha) * (A.abs() @ B.abs()) + abs(beta) * Cin.abs() + (Bias.abs() if with_bias else 0)) * \
                (Cin.abs() if gate else 1) * 1.5
            case = (m, n, k, ta, tb, alpha, beta, with_bias, act, slope, gate)
            for be in self.backends:
                pa, pb, pc = be.put(a_st), be.put(b_st), be.put(c)
                pbias = be.put(bias) if with_bias else 0
                status = lib.tgl_gemm_fused(be.h, ta, tb, C.c_size_t(m), C.c_size_t(n), C.c_size_t(k),
                                            C.c_float(alpha), C.c_uint64(pa), C.c_size_t(m if ta else k),
                                            C.c_uint64(pb), C.c_size_t(k if tb else n), C.c_float(beta),
                                            C.c_uint64(pc), C.c_size_t(n), C.c_uint64(pbias), act, C.c_float(slope),
                                            gate)
                if self.call(be, 'gemm_fused', case, status):
                    close(be, 'gemm_fused', be.get(pc, [m, n], np.float32), want.numpy(), mag.numpy(), case)

        # matvec_t_fused: W [rows, cols] in a weight format, x [j, cols], y [j, rows]
        cpu = next((be for be in self.backends if be.name == 'cpu'), self.backends[0])
        for _ in range(self.cases // 4):
            fmt = random.choice([0, 1, 2, 5, 6])
            rows = random.choice([1, 7, 32, 65, 100])
            cols = random.choice([32, 64, 96, 160, 256]) if fmt >= 5 else random.choice([1, 5, 32, 67, 130])
            j = random.choice([1, 1, 2, 4, 5])
            gate = int(random.random() < 0.25)
            beta = 0.0 if gate else random.choice([0.0, 1.0])
            act, slope, with_bias = random.randrange(10), 0.1, random.random() < 0.5
            w, x, y, bias = f32(rows, cols), f32(j, cols), f32(j, rows), f32(rows)
            if fmt == 1:
                stored = w.astype(np.float16)
                wd = stored.astype(np.float64)
            elif fmt == 2:
                t = torch.from_numpy(w).to(torch.bfloat16)
                stored, wd = t.view(torch.int16).numpy(), t.double().numpy()
            elif fmt >= 5:
                qbytes = rows * cols // 32 * (34 if fmt == 5 else 18)  # q8_0's and q4_0's blocks
                pw, pq, pd = cpu.put(w), cpu.put(np.zeros(qbytes, np.uint8)), cpu.put(np.zeros_like(w))
                tw, tq, td = cpu.tensor(pw, [rows, cols], np.float32), cpu.tensor(pq, [rows, cols], np.float32), \
                    cpu.tensor(pd, [rows, cols], np.float32)
                tq.dtype = fmt
                if not (self.call(cpu, 'quantize', fmt, lib.tgl_quantize(cpu.h, C.byref(tw), C.byref(tq))) and
                        self.call(cpu, 'dequantize', fmt, lib.tgl_dequantize(cpu.h, C.byref(tq), C.byref(td)))):
                    continue
                stored = cpu.get(pq, [qbytes], np.uint8)
                wd = cpu.get(pd, [rows, cols], np.float32).astype(np.float64)
            else:
                stored, wd = w, w.astype(np.float64)
            W, X, Y, Bias = torch.from_numpy(wd), torch.from_numpy(x).double(), torch.from_numpy(y).double(), \
                torch.from_numpy(bias).double()
            r = F.linear(X, W, Bias if with_bias else None) + beta * Y
            want = acts[act](r, slope) * (Y if gate else 1)
            mag = ((X.abs() @ W.abs().T) + abs(beta) * Y.abs() + (Bias.abs() if with_bias else 0)) * \
                (Y.abs() if gate else 1) * 1.5
            case = (fmt, rows, cols, j, beta, with_bias, act, gate)
            for be in self.backends:
                pw, px, py = be.put(stored), be.put(x), be.put(y)
                tw = Tensor(data=pw, dtype=fmt, ndim=2)
                tw.shape[0], tw.shape[1], tw.strides[0], tw.strides[1] = rows, cols, cols, 1
                tx = be.tensor(px, [j, cols], np.float32)
                ty = be.tensor(py, [j, rows], np.float32)
                tb = be.tensor(be.put(bias), [rows], np.float32) if with_bias else None
                status = lib.tgl_matvec_t_fused(be.h, C.byref(tw), C.byref(tx), C.c_float(beta),
                                                C.byref(tb) if tb is not None else None, act, C.c_float(slope), gate,
                                                C.byref(ty))
                if self.call(be, 'matvec_t_fused', case, status):
                    close(be, 'matvec_t_fused', be.get(py, [j, rows], np.float32), want.numpy(), mag.numpy(), case)

    # ---- element-wise math ----

    def math(self, lib):
        """tgl_unary_t, tgl_binary_t, tgl_compare, tgl_clamp and tgl_where over f32, f16, bf16, i32
        and bool on special values (NaN, infinities, -0, subnormals, halves, the dtype's extremes)
        and random ones. Exact ops bit for bit up to the sign of a zero and NaN's payload; DIV,
        POW, ATAN2 and the transcendental ones within docs/ops.md's 2e-5 relative + 2e-6 (plus a
        unit of f16/bf16 rounding) of float64 PyTorch rounded to the dtype (so that PyTorch's own
        float32 tails do not count). Where PyTorch itself has no defined result (a shift count
        outside 0..31) or differs by design (SIGN of
        NaN: NumPy's NaN, PyTorch's 0), those elements are left out; an i32 division by zero is
        held to tensorgl's documented a // 0 = 0 and a % 0 = a."""
        units = {0: 0.0, 1: 2.0 ** -10, 2: 2.0 ** -7}  # the float dtypes' rounding, relative
        exact_u = {0: torch.neg, 1: torch.abs, 7: torch.square, 12: torch.relu, 15: torch.floor, 16: torch.ceil,
                   21: torch.round, 22: torch.trunc, 23: torch.sign}
        approx_u = {2: torch.exp, 3: torch.log, 4: torch.sqrt, 5: torch.rsqrt, 6: torch.reciprocal,
                    8: torch.sin, 9: torch.cos, 10: torch.tanh, 11: torch.sigmoid,
                    13: lambda x: F.gelu(x, approximate='tanh'), 14: F.silu, 17: torch.erf, 18: F.gelu,
                    19: torch.log1p, 20: torch.expm1}
        tests_u = {25: torch.isnan, 26: torch.isinf, 27: torch.isfinite}
        exact_b = {0: torch.add, 1: torch.sub, 2: torch.mul, 4: torch.maximum, 5: torch.minimum, 8: torch.fmod,
                   9: torch.remainder}
        approx_b = {3: torch.div, 6: torch.pow, 7: torch.atan2}
        compares = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]

        def float_values(code, n):
            big = {0: 3.0e38, 1: 65504.0, 2: 3.0e38}[code]
            tiny = {0: 1e-45, 1: 6e-8, 2: 1e-40}[code]
            sp = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, big, -big,
                  tiny, -tiny, 1e-3, 100.0, -7.0, 1.0 / 3]
            v = self.rng.standard_normal(n) * self.rng.choice([1.0, 4.0, 30.0], n)
            wide = self.rng.random(n) < 0.2  # any exponent the dtype has (sin and cos of 1e30)
            hi_exp = {0: 127, 1: 15, 2: 127}[code]
            v[wide] = np.sign(v[wide]) * 2.0 ** self.rng.uniform(-20, hi_exp + 0.99, int(wide.sum()))
            pick = self.rng.random(n) < 0.35
            v[pick] = self.rng.choice(sp, int(pick.sum()))
            return torch.from_numpy(v.astype(np.float32)).to(TORCH_OF[code])

        def store(be, t, code):
            if code == 2:
                return be.put((t.float().numpy().view(np.uint32) >> 16).astype(np.uint16))
            return be.put(t.numpy())

        def run(name, fn, inputs, out_code, want, tol=None, unit=0.0, keep=None, case=()):
            """fn(be, descriptors of inputs..., out) on every backend; out compared with want."""
            n = want.numel()
            for be in self.backends:
                ds = [code_tensor(store(be, t, c), c, [n], [1]) for t, c in inputs]
                po = be.put(np.zeros(n * 4 + 4, np.uint8))
                out = code_tensor(po, out_code, [n], [1])
                if not self.call(be, name, case, fn(be, *[C.byref(d) for d in ds], C.byref(out))):
                    continue
                got = read_code(be, po, [n], out_code)
                g, w = got.double().numpy(), want.double().numpy()
                if keep is not None:
                    g, w = g[keep], w[keep]
                if tol is None:
                    self.agree(be, name, g, w, exact=True, case=case)
                    continue
                self.checked += 1
                same = (g == w) | (np.isnan(g) & np.isnan(w))
                with np.errstate(invalid='ignore', over='ignore'):
                    near = np.abs(g - w) <= (tol + unit) * np.abs(w) + 2e-6
                bad = ~(same | near)
                if bad.any():
                    i = int(np.argmax(bad))
                    at = int(np.flatnonzero(keep)[i]) if keep is not None else i
                    self.fail(name, be.name, case, 'inputs', [float(t[at]) for t, _ in inputs], 'got', g[i],
                              'PyTorch', w[i])

        for code, unit in units.items():
            n, tt = 97, TORCH_OF[code]
            x, y = float_values(code, n), float_values(code, n)
            for op, f in exact_u.items():
                keep = ~torch.isnan(x).numpy() if op == 23 else None
                run(f'unary {op} {tt}', lambda be, a, o, op=op: lib.tgl_unary_t(be.h, op, a, o), [(x, code)], code,
                    f(x.float()).to(tt), keep=keep, case=(op, code))
            for op, f in approx_u.items():
                want = f(x.double()).to(tt)
                run(f'unary {op} {tt}', lambda be, a, o, op=op: lib.tgl_unary_t(be.h, op, a, o), [(x, code)], code,
                    want, tol=2e-5, unit=unit, case=(op, code))
            for op, f in tests_u.items():
                run(f'unary {op} {tt}', lambda be, a, o, op=op: lib.tgl_unary_t(be.h, op, a, o), [(x, code)], 4,
                    f(x), case=(op, code))
            for op, f in exact_b.items():
                # (fmod and remainder in float64, exact there: Debian's PyTorch 1.13 gives
                # fmod(3e38, 0.5) = NaN in float32)
                want = (f(x.double(), y.double()) if op in (8, 9) else f(x.float(), y.float())).to(tt)
                run(f'binary {op} {tt}', lambda be, a, b, o, op=op: lib.tgl_binary_t(be.h, op, a, b, o),
                    [(x, code), (y, code)], code, want, case=(op, code))
            for op, f in approx_b.items():
                want = f(x.double(), y.double()).to(tt)
                run(f'binary {op} {tt}', lambda be, a, b, o, op=op: lib.tgl_binary_t(be.h, op, a, b, o),
                    [(x, code), (y, code)], code, want, tol=2e-5, unit=unit, case=(op, code))
            for op, f in enumerate(compares):
                run(f'compare {op} {tt}', lambda be, a, b, o, op=op: lib.tgl_compare(be.h, op, a, b, o),
                    [(x, code), (y, code)], 4, f(x, y), case=(op, code))
            z = float_values(code, n)
            want = torch.minimum(torch.maximum(x.float(), y.float()), z.float()).to(tt)
            run(f'clamp {tt}', lambda be, a, lo, hi, o: lib.tgl_clamp(be.h, a, lo, hi, o),
                [(x, code), (y, code), (z, code)], code, want, case=(code,))
            cond = torch.from_numpy(self.rng.random(n) < 0.5)
            run(f'where {tt}', lambda be, c, a, b, o: lib.tgl_where(be.h, c, a, b, o), [(cond, 4), (x, code), (y, code)],
                code, torch.where(cond, x, y), case=(code,))

        # i32: wrapping arithmetic, Python's floor division and remainder, shifts
        n = 97
        sp = [0, 1, -1, 2, -2, 7, -7, 31, 32, 2 ** 31 - 1, -2 ** 31, 65536, -65536]
        a = self.rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64)
        b = self.rng.integers(-40, 40, n, dtype=np.int64)
        for v in (a, b):
            pick = self.rng.random(n) < 0.4
            v[pick] = self.rng.choice(sp, int(pick.sum()))
        a, b = torch.from_numpy(a.astype(np.int32)), torch.from_numpy(b.astype(np.int32))
        wrap = lambda t: torch.from_numpy(t.numpy().astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32))
        for op, f in {0: lambda t: -t.long(), 1: lambda t: t.long().abs(), 7: lambda t: t.long() * t.long(),
                      23: torch.sign, 24: torch.bitwise_not}.items():
            run(f'unary {op} i32', lambda be, x, o, op=op: lib.tgl_unary_t(be.h, op, x, o), [(a, 3)], 3,
                wrap(f(a)), case=(op, 3))
        # i32 division in int64, wrapped: INT32_MIN // -1 is INT32_MIN (in int32 it traps in
        # PyTorch); by zero as documented (a // 0 = 0, a % 0 = a), which PyTorch refuses
        one = lambda y: torch.where(y == 0, 1, y).long()
        shift_ok = ((b >= 0) & (b < 32)).numpy()
        for op, f, keep in [(0, lambda x, y: x.long() + y.long(), None), (1, lambda x, y: x.long() - y.long(), None),
                            (2, lambda x, y: x.long() * y.long(), None), (4, torch.maximum, None),
                            (5, torch.minimum, None),
                            (10, lambda x, y: torch.where(y == 0, 0, torch.div(x.long(), one(y), rounding_mode='floor')),
                             None),
                            (9, lambda x, y: torch.where(y == 0, x.long(), torch.remainder(x.long(), one(y))), None),
                            (11, torch.bitwise_and, None), (12, torch.bitwise_or, None), (13, torch.bitwise_xor, None),
                            (14, lambda x, y: x.long() << y.long().clamp(0, 31), shift_ok),
                            (15, lambda x, y: x >> y.clamp(0, 31), shift_ok)]:
            run(f'binary {op} i32', lambda be, x, y, o, op=op: lib.tgl_binary_t(be.h, op, x, y, o), [(a, 3), (b, 3)],
                3, wrap(f(a, b)), keep=keep, case=(op, 3))
        for op, f in enumerate(compares):
            run(f'compare {op} i32', lambda be, x, y, o, op=op: lib.tgl_compare(be.h, op, x, y, o), [(a, 3), (b, 3)],
                4, f(a, b), case=(op, 3))
        p, q = torch.from_numpy(self.rng.random(n) < 0.5), torch.from_numpy(self.rng.random(n) < 0.5)
        run('unary not bool', lambda be, x, o: lib.tgl_unary_t(be.h, 24, x, o), [(p, 4)], 4, ~p)
        for op, f in {11: torch.logical_and, 12: torch.logical_or, 13: torch.logical_xor}.items():
            run(f'binary {op} bool', lambda be, x, y, o, op=op: lib.tgl_binary_t(be.h, op, x, y, o), [(p, 4), (q, 4)],
                4, f(p, q), case=(op, 4))


def main():
    warnings.filterwarnings('ignore', message='scatter_reduce')  # beta in PyTorch 1.13
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--lib', default='build/libtensorgl.so.0')
    ap.add_argument('--cases', type=int, default=200, help='random cases per op family')
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--backends', default='gl,cpu')
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    print(f'check_torch: PyTorch {torch.__version__}, seed {seed} (--seed {seed} repeats this run)')
    lib = C.CDLL(args.lib)
    kinds = {'gl': 1, 'cpu': 2}
    backends = [Backend(lib, kinds[n], n) for n in args.backends.split(',')]
    checker = Checker(backends, args.cases, seed)
    for family in (checker.pool2d, checker.interpolate, checker.conv, checker.along_axis, checker.indexing,
                   checker.moving, checker.strided, checker.norms, checker.rope,
                   checker.attention, checker.math, checker.linear):
        before = checker.failures
        family(lib)
        for be in backends:
            be.free_all()
        print(f'  {family.__name__}: {"ok" if checker.failures == before else f"{checker.failures - before} disagree"}')
    skipped = f' ({checker.skipped} cases this PyTorch computes otherwise left out)' if checker.skipped else ''
    print(f'check_torch: {checker.checked} results compared, {checker.failures} disagree{skipped}')
    return 1 if checker.failures else 0


if __name__ == '__main__':
    sys.exit(main())
