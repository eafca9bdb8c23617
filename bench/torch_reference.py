"""PyTorch reference figures for `tensorgl bench ops`, for the NVIDIA machine (run in the same
session): add of N floats (3 arrays counted), sum of N floats, and row softmax, in f32, each the
best of a few repetitions of back-to-back calls, timed with CUDA events.

usage: python3 bench/torch_reference.py [--add N] [--sum N] [--softmax ROWSxCOLS] [--iters N]
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


def main():
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
