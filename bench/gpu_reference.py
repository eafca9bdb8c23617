#!/usr/bin/env python3
"""The standard set on an NVIDIA machine with PyTorch as the reference column.

Runs `tensorgl bench --json` (GL, and the CPU backend with --with-cpu), then, for every GL case
in that JSON, the same op on the same shapes and parameters in PyTorch (f32; TF32 off for
matmul and cuDNN, so both compute in FP32), timed like tensorgl times itself: one warm-up call,
one call to size the runs, then --repeat runs of as many back-to-back calls as fill ~50 ms,
measured with CUDA events; median, min and max per call. Writes the merged JSON (PyTorch rows
have backend "torch"), prints the comparison, and draws the chart with bench/chart.py.

    python3 bench/gpu_reference.py [--tensorgl build/tensorgl] [--ops LIST] [--sizes LIST]
        [--repeat N] [--with-cpu] [--out build/bench-gpu.json] [--svg build/bench-gpu.svg]
    python3 bench/gpu_reference.py --models [bench/models_reference.py's options]

--models times whole models instead (`tensorgl bench models` against the same models in PyTorch
eager: bench/models_reference.py, which takes the other options).

PyTorch has no rope op: the reference is the usual eager form (precomputed cos/sin tables,
two halves rotated, concatenated), as model code writes it. tgl_map's expression runs as the
eager sqrt(a * b + c) a PyTorch user writes (three kernels). The weight-format products
(matvec_q4_0, matvec_q8_0, matvec_f16) have no PyTorch kernel: their reference is a device
copy moving the same bytes, so the ratio is their share of the GPU's copy bandwidth."""
import argparse
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chart  # noqa: E402


def rand(*shape, dtype=torch.float32):
    return (torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)


def make_case(op, p):
    """A zero-argument callable running the op on fresh inputs shaped by the params p."""
    if set(p) == {"n"}:
        n = p["n"]
        a, b, c, o = rand(n), rand(n), rand(n).abs(), rand(n)
        o16, a16 = torch.empty(n, device="cuda", dtype=torch.half), rand(n, dtype=torch.half)
        obf = torch.empty(n, device="cuda", dtype=torch.bfloat16)
        host = torch.rand(n)  # pageable, as tensorgl's host arrays are
        if op in ("scatter_add", "scatter_add_unordered"):  # PyTorch's own index dtype (int64)
            idx = torch.randint(0, n, (n,), device="cuda")
            return lambda: o.scatter_add_(0, idx, a)
        if op == "sort":
            return lambda: torch.sort(a, stable=True)
        return {
            "cast_f16_f32": lambda: o.copy_(a16),
            "copy_htod": lambda: o.copy_(host),
            "copy_dtoh": lambda: host.copy_(a),
            "copy_dtod": lambda: o.copy_(a),
            "unary_gelu": lambda: F.gelu(a, approximate="tanh"),
            "binary_add": lambda: torch.add(a, b, out=o),
            "map_sqrt_ab_c": lambda: torch.sqrt(a * b + c),
            "scale_add": lambda: o.mul_(0.25).add_(a, alpha=0.5),
            "fill": lambda: o.fill_(1.5),
            "cast_f32_f16": lambda: o16.copy_(a),
            "copy_f32_bf16": lambda: obf.copy_(a),
            "compare_where": lambda: torch.where(a > b, a, b, out=o),
            "map_where": lambda: torch.where(a > b, a, b, out=o),
            "random_normal": lambda: o.normal_(),
            "dropout": lambda: F.dropout(a, 0.1, training=True),
            "reduce_sum": lambda: torch.sum(a),
            "cumsum": lambda: torch.cumsum(a, 0, out=o),
        }[op]
    if "rows" in p and not op.startswith("matvec"):
        r, c = p["rows"], p["cols"]
        x, w, bias, o = rand(r, c), rand(c), rand(c), torch.empty(r, c, device="cuda")
        if op == "topk":
            return lambda: torch.topk(x, p["k"], dim=1)
        if op == "gather":  # PyTorch's own index dtype (int64)
            idx = torch.randint(0, c, (r, c), device="cuda")
            return lambda: torch.gather(x, 1, idx, out=o)
        if op == "rmsnorm" and hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x, (c,), w, 1e-5)
        return {
            "binary_broadcast": lambda: torch.add(x, bias, out=o),
            "permute": lambda: o.view(c, r).copy_(x.t()),
            "copy_transpose": lambda: o.view(c, r).copy_(x.t()),
            "reduce_sum_cols": lambda: torch.sum(x, dim=0),
            "argmax": lambda: torch.argmax(x, dim=1),
            "argmin": lambda: torch.argmin(x, dim=1),
            "reduce_max_rows": lambda: torch.amax(x, dim=1),
            "log_softmax": lambda: torch.log_softmax(x, dim=1),
            "softmax": lambda: torch.softmax(x, dim=1),
            "rmsnorm": lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w,
            "layernorm": lambda: F.layer_norm(x, (c,), w, bias, 1e-5),
        }[op]
    if op == "rope":
        b, s, h, d = p["batch"], p["seq"], p["heads"], p["head_dim"]
        x = rand(b, s, h, d)
        inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2, device="cuda").float() / d))
        ang = torch.arange(s, device="cuda").float()[:, None] * inv[None, :]
        cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]

        def rope():
            x1, x2 = x[..., : d // 2], x[..., d // 2:]
            return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
        return rope
    if op == "gather_rows":
        table = rand(p["table_rows"], p["cols"])
        ids = torch.randint(0, p["table_rows"], (p["n_ids"],), device="cuda")
        o = torch.empty(p["n_ids"], p["cols"], device="cuda")
        return lambda: torch.index_select(table, 0, ids, out=o)
    if op in ("gemm", "gemm_f16", "gemm_batched"):
        m, n, k, bt = p["m"], p["n"], p["k"], p["batch"]
        dt = torch.half if op == "gemm_f16" else torch.float32
        if op == "gemm_batched":
            a, b, o = rand(bt, m, k), rand(bt, k, n), torch.empty(bt, m, n, device="cuda")
            return lambda: torch.bmm(a, b, out=o)
        a, b, o = rand(m, k, dtype=dt), rand(k, n, dtype=dt), torch.empty(m, n, device="cuda", dtype=dt)
        return lambda: torch.mm(a, b, out=o)
    if op in ("linear", "linear_gelu", "linear_swiglu"):
        m, n, k = p["m"], p["n"], p["k"]
        x, w, bias, o = rand(m, k), rand(n, k), rand(n), rand(m, n)
        if op == "linear":
            return lambda: torch.mm(x, w.t(), out=o)
        if op == "linear_gelu":
            return lambda: F.gelu(F.linear(x, w, bias), approximate="tanh")
        return lambda: torch.mul(F.silu(F.linear(x, w)), o, out=o)
    if op == "matvec":
        w, x, o = rand(p["rows"], p["cols"]), rand(p["cols"]), torch.empty(p["rows"], device="cuda")
        return lambda: torch.mv(w, x, out=o)
    if op.startswith("matvec_"):
        # No PyTorch kernel takes ggml's blocks (nor f16 weights with f32 activations): the
        # reference is the bound, a device copy of half as many bytes as the product must read
        # and write (W as stored, x, y), so that both move the same bytes; the ratio is the
        # product's share of the copy bandwidth.
        per = {"matvec_q4_0": 18 / 32, "matvec_q8_0": 34 / 32, "matvec_f16": 2.0}[op]
        total = int(per * p["rows"] * p["cols"]) + 4 * (p["rows"] + p["cols"])
        src = torch.empty(total // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)
    if op in ("attention_gqa_decode", "attention_gqa_decode_f16"):
        b, h, hkv, skv, d = p["batch"], p["heads"], p["heads_kv"], p["seq_kv"], p["head_dim"]
        q, k, v = rand(b, h, 1, d), rand(b, hkv, skv, d), rand(b, hkv, skv, d)
        if op.endswith("_f16"):  # SDPA takes one dtype: all three in f16, the same cache bytes
            q, k, v = q.half(), k.half(), v.half()
        return lambda: F.scaled_dot_product_attention(q, k, v, scale=1.0 / math.sqrt(d), enable_gqa=True)
    if op in ("attention", "attention_decode"):
        b, h, sq, skv, d = p["batch"], p["heads"], p["seq_q"], p["seq_kv"], p["head_dim"]
        q, k, v = rand(b, h, sq, d), rand(b, h, skv, d), rand(b, h, skv, d)
        # PyTorch's is_causal aligns top-left; tensorgl's bottom-right. They agree when
        # seq_q == seq_kv, and a single decode query sees the whole cache (no mask).
        causal = bool(p["causal"]) and sq > 1
        if causal and sq != skv:
            raise ValueError("causal with seq_q != seq_kv has no is_causal equivalent")
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.125)
    if op == "conv2d":
        x = rand(p["batch"], p["in_channels"], p["height"], p["width"])
        w = rand(p["out_channels"], p["in_channels"], p["kernel"], p["kernel"])
        bias = rand(p["out_channels"])
        return lambda: F.conv2d(x, w, bias, padding=p["pad"])
    raise KeyError(op)


def time_case(fn, repeat):
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    once = s.elapsed_time(e) / 1e3
    iters = max(1, min(1000, int(0.05 / once))) if once > 0 else 1000
    times = []
    for _ in range(repeat):
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / iters)
    times.sort()
    mid = len(times) // 2
    median = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
    return median, times[0], times[-1], iters


def main():
    if "--models" in sys.argv[1:]:
        import models_reference
        sys.exit(models_reference.main([x for x in sys.argv[1:] if x != "--models"]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensorgl", default="build/tensorgl")
    ap.add_argument("--ops")
    ap.add_argument("--sizes")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--with-cpu", action="store_true", help="also run tensorgl's CPU backend")
    ap.add_argument("--out", default="build/bench-gpu.json")
    ap.add_argument("--svg", default="build/bench-gpu.svg")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    cmd = [a.tensorgl, "bench", "--backend", "gl,cpu" if a.with_cpu else "gl", "--repeat", str(a.repeat),
           "--json", a.out]
    if a.ops:
        cmd += ["--ops", a.ops]
    if a.sizes:
        cmd += ["--sizes", a.sizes]
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(a.out) as f:
        data = json.load(f)

    torch_rows = []
    for r in data["results"]:
        if r["backend"] != "gl":
            continue
        row = {k: r[k] for k in ("op", "family", "size", "shape", "params", "flops", "bytes", "unit")}
        row["backend"] = "torch"
        try:
            median, lo, hi, iters = time_case(make_case(r["op"], r["params"]), a.repeat)
            work = r["flops"] if r["flops"] > 0 else r["bytes"]
            row.update(median_s=median, min_s=lo, max_s=hi, repeats=a.repeat, iters=iters, rate=work / median / 1e9)
        except (KeyError, ValueError, RuntimeError) as e:
            row["error"] = f"{type(e).__name__}: {e}"
        torch_rows.append(row)
        torch.cuda.empty_cache()
    data["results"] += torch_rows
    data["devices"]["torch"] = (f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
                                f"{torch.cuda.get_device_name()}, f32, TF32 off")
    with open(a.out, "w") as f:
        json.dump(data, f, indent=1)

    gl = {(r["op"], r["size"]): r for r in data["results"] if r["backend"] == "gl" and not r.get("error")}
    print(f"tensorgl {data['version']} GL: {data['devices']['gl']}")
    print(f"reference: {data['devices']['torch']}")
    print(f"{'op':<24} {'size':<6} {'shape':<28} {'gl ms':>10} {'torch ms':>10} {'gl rate':>12} "
          f"{'torch rate':>12} {'unit':<8} {'gl/torch speed':>14}")
    ratios = []
    for t in torch_rows:
        g = gl.get((t["op"], t["size"]))
        if not g:
            continue
        if t.get("error"):
            print(f"{t['op']:<24} {t['size']:<6} {t['shape']:<28} {g['median_s'] * 1e3:10.4g} {t['error']}")
            continue
        ratio = t["median_s"] / g["median_s"]
        ratios.append(ratio)
        print(f"{t['op']:<24} {t['size']:<6} {t['shape']:<28} {g['median_s'] * 1e3:10.4g} "
              f"{t['median_s'] * 1e3:10.4g} {g['rate']:12.4g} {t['rate']:12.4g} {t['unit']:<8} {ratio:13.2f}x")
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geometric mean of gl/torch speed over {len(ratios)} cases: {geo:.2f}x")
    with open(a.svg, "w") as f:
        f.write(chart.draw(data, "tensorgl GL vs PyTorch on an NVIDIA GPU (rate, log scale; higher is faster)"))
    print(f"wrote {a.out} and {a.svg}")


if __name__ == "__main__":
    main()
