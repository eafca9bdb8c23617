"""PyTorch reference figures for `tensorgl bench ops` and `tensorgl bench gemm`, for the NVIDIA
machine (run in the same session), each the best of a few repetitions of back-to-back calls,
timed with CUDA events.
  ops:  add of N floats (3 arrays counted), sum of N floats, and row softmax, in f32
  gemm: sgemm per size with TF32 off (cuBLAS FP32), f16 gemm at the largest size, batched
        gemm, and matvec (GB/s of W), the shapes of `tensorgl bench gemm`

  attention: scaled_dot_product_attention in f32 (non-causal, causal, one decode query), the
        shapes of `tensorgl bench attention`
  conv2d: torch.nn.functional.conv2d in f32 with TF32 off (dense and depthwise), the shape of
        `tensorgl bench conv2d`

usage: python3 bench/torch_reference.py [ops] [--add N] [--sum N] [--softmax ROWSxCOLS] [--iters N]
       python3 bench/torch_reference.py gemm [--sizes N|MxNxK,...] [--batched BxN] [--matvec ROWSxCOLS]
       python3 bench/torch_reference.py attention [--shape B,H,S,D] [--causal B,H,S,D] [--decode B,H,KV,D]
       python3 bench/torch_reference.py conv2d [--shape N,C,H,W,O,K,PAD]
"""
import argparse

import torch


def best_ms(fn, iters, reps=5):
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / iters)
    return best


def gemm_suite(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--batched", default="64x256")
    p.add_argument("--matvec", default="8192x8192")
    a = p.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS FP32, as tensorgl computes
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, TF32 off")

    def row(name, size, ms, flop):
        print(f"{name:<13} {size:<16} {flop / ms / 1e6:12.2f} GFLOP/s {ms:10.3f} ms")

    # N (N^3) or MxNxK, as `tensorgl bench gemm --sizes`
    sizes = [tuple(int(d) for d in v.split("x")) if "x" in v else (int(v),) * 3 for v in a.sizes.split(",")]

    def label(m, n, k):
        return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"

    for m, n, k in sizes:
        x, y = torch.rand(m, k, device=dev), torch.rand(k, n, device=dev)
        o = torch.empty(m, n, device=dev)
        iters = max(1, min(100, int(2e12 / (2 * m * n * k))))
        row("sgemm", label(m, n, k), best_ms(lambda: torch.mm(x, y, out=o), iters), 2 * m * n * k)
    m, n, k = sizes[-1]
    xh, yh = torch.rand(m, k, device=dev).half(), torch.rand(k, n, device=dev).half()
    oh = torch.empty(m, n, device=dev, dtype=torch.half)
    row("gemm_f16", label(m, n, k), best_ms(lambda: torch.mm(xh, yh, out=oh), 20), 2 * m * n * k)
    b, n = (int(v) for v in a.batched.split("x"))
    xb, yb = torch.rand(b, n, n, device=dev), torch.rand(b, n, n, device=dev)
    ob = torch.empty(b, n, n, device=dev)
    row("gemm_batched", f"{b} x {n}^3", best_ms(lambda: torch.bmm(xb, yb, out=ob), 50), 2 * b * n**3)
    r, c = (int(v) for v in a.matvec.split("x"))
    w, v = torch.rand(r, c, device=dev), torch.rand(c, device=dev)
    ov = torch.empty(r, device=dev)
    ms = best_ms(lambda: torch.mv(w, v, out=ov), 50)
    print(f"{'matvec':<13} {f'{r}x{c}':<16} {4 * r * c / ms / 1e6:12.2f} GB/s    {ms:10.3f} ms")


def attention_suite(argv):
    import torch.nn.functional as F

    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="8,16,2048,64")
    p.add_argument("--causal", default="8,16,2048,64")
    p.add_argument("--decode", default="8,32,8192,128")
    a = p.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, f32, TF32 off")

    def run(name, shape, causal, decode=False):
        b, h, s, d = (int(v) for v in shape.split(","))
        sq = 1 if decode else s
        q = torch.rand(b, h, sq, d, device=dev) - 0.5
        k, v = torch.rand(b, h, s, d, device=dev) - 0.5, torch.rand(b, h, s, d, device=dev) - 0.5
        # a single decode query sees the whole cache: no mask needed (bottom-right alignment)
        ms = best_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal and not decode), 20)
        pairs = sq * (sq + 1) / 2 + sq * (s - sq) if causal and not decode else sq * s
        print(f"{name:<34} {ms:12.3f} ms {4 * b * h * pairs * d / ms / 1e6:12.1f} GFLOP/s"
              + (f"   ({2 * b * h * s * d * 4 / ms / 1e6:.1f} GB/s of K and V)" if decode else ""))

    run(f"sdpa {a.shape}", a.shape, False)
    run(f"sdpa causal {a.causal}", a.causal, True)
    run(f"sdpa decode {a.decode}", a.decode, True, decode=True)


def conv2d_suite(argv):
    import torch.nn.functional as F

    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="32,64,56,56,64,3,1")
    a = p.parse_args(argv)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, f32, TF32 off")
    n, c, h, w, o, k, pad = (int(v) for v in a.shape.split(","))
    x = torch.rand(n, c, h, w, device=dev)
    for name, groups, oc in (("dense", 1, o), ("depthwise", c, c)):
        f = torch.rand(oc, c // groups, k, k, device=dev)
        bias = torch.rand(oc, device=dev)
        ms = best_ms(lambda: F.conv2d(x, f, bias, padding=pad, groups=groups), 20)
        oh = h + 2 * pad - k + 1
        flop = 2 * n * oc * oh * (w + 2 * pad - k + 1) * (c // groups) * k * k
        print(f"{name + ' ' + a.shape:<34} {ms:12.3f} ms {flop / ms / 1e6:12.1f} GFLOP/s")


def main():
    import sys

    if len(sys.argv) > 1 and sys.argv[1] == "attention":
        return attention_suite(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "conv2d":
        return conv2d_suite(sys.argv[2:])

    if len(sys.argv) > 1 and sys.argv[1] == "gemm":
        return gemm_suite(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "ops":
        sys.argv.pop(1)
    p = argparse.ArgumentParser()
    p.add_argument("--add", type=int, default=64 << 20)
    p.add_argument("--sum", type=int, default=16 << 20)
    p.add_argument("--softmax", default="8192x8192")
    p.add_argument("--iters", type=int, default=20)
    a = p.parse_args()
    rows, cols = (int(v) for v in a.softmax.split("x"))
    dev = torch.device("cuda")
    x = torch.rand(max(a.add, a.sum, rows * cols), device=dev)
    y = torch.rand_like(x)
    out = torch.empty_like(x)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    xa, ya, oa = x[: a.add], y[: a.add], out[: a.add]
    ms = best_ms(lambda: torch.add(xa, ya, out=oa), a.iters)
    print(f"{'add %d floats' % a.add:<28} {ms:10.3f} ms {3 * 4 * a.add / ms / 1e6:9.2f} GB/s")
    xs = x[: a.sum]
    ms = best_ms(lambda: torch.sum(xs), a.iters)
    print(f"{'sum %d floats' % a.sum:<28} {ms:10.3f} ms {4 * a.sum / ms / 1e6:9.2f} GB/s")
    xm = x[: rows * cols].view(rows, cols)
    ms = best_ms(lambda: torch.softmax(xm, dim=1), a.iters)
    print(f"{'softmax %dx%d' % (rows, cols):<28} {ms:10.3f} ms {2 * 4 * rows * cols / ms / 1e6:9.2f} GB/s")


if __name__ == "__main__":
    main()
