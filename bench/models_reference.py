#!/usr/bin/env python3
"""Whole models, tensorgl against PyTorch eager in the same run: `tensorgl bench models` (the
llama and resnet examples' forward passes) and the same models in PyTorch (FP32, TF32 off), on
the same files.

Writes a seeded random ResNet-18 and an image batch (bench/resnet_reference.py's), runs
`tensorgl bench models` on them and on a random Llama-architecture model it saves as GGUF
(default: GPT-2-small's size, --format's weights), then runs bench/llama_reference.py's Llama
and resnet_reference.py's ResNet-18 on those files in PyTorch: prefill ms, decode tokens/s,
images/s, the ratios, and whether the greedy tokens and the top-5 classes are the same. Writes
tensorgl's JSON with a "torch" object added to each model.

    python3 bench/models_reference.py [--tensorgl build/tensorgl] [--device cuda|cpu]
        [--format f32] [--shape 12,768,12,12,2048,50257,1024] [--prompt 128] [--steps 64]
        [--batch 32] [--size 224] [--runs 3] [--models llama,resnet] [--dir build] [--threads N]
        [--out build/bench-models.json]

(`python3 bench/gpu_reference.py --models` runs this on the GPU machine.) PyTorch's prefill is
one timed pass after a warm-up, as tensorgl's is.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import resnet_reference  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensorgl", default="build/tensorgl")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--models", default="llama,resnet")
    ap.add_argument("--format", default="f32")
    ap.add_argument("--shape", default="12,768,12,12,2048,50257,1024")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default="build")
    ap.add_argument("--out", default="build/bench-models.json")
    ap.add_argument("--threads", type=int, default=0,
                    help="PyTorch's CPU threads (default: its own choice, printed with the results)")
    a = ap.parse_args(argv)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    want = set(a.models.split(","))

    cmd = [a.tensorgl, "bench", "models", "--models", a.models, "--json", a.out]
    if "llama" in want:
        gguf = os.path.join(a.dir, "bench-models-llama.gguf")
        cmd += ["--format", a.format, "--shape", a.shape, "--save-gguf", gguf, "--prompt", str(a.prompt),
                "--steps", str(a.steps)]
    if "resnet" in want:
        model, images, wpath, ipath = resnet_reference.write_model(a.batch, a.size, a.dir)
        cmd += ["--resnet", wpath, "--input", ipath, "--batch", str(a.batch), "--size", str(a.size), "--runs",
                str(a.runs)]
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(a.out) as f:
        data = json.load(f)

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    data["torch"] = f"torch {torch.__version__} eager on {name}, f32, TF32 off, {torch.get_num_threads()} threads"
    print(f"tensorgl {data['version']}: {data['device']}")
    print(f"reference: {data['torch']}")
    ok = True
    for r in data["models"]:
        if r["model"] == "llama":
            kv, tensors = llama_reference.read_gguf(r["file"])
            m = llama_reference.Llama(kv, tensors, dev)
            tokens, margins, prefill_ms, decode_ms = llama_reference.greedy(m, r["prompt"], r["steps"], dev)
            del m, tensors
            same = next((i for i, (x, y) in enumerate(zip(r["tokens"], tokens)) if x != y), len(tokens))
            tps = 1e3 * (r["steps"] - 1) / decode_ms  # as tensorgl counts: the prompt's pass gave the first
            r["torch"] = {"prefill_ms": prefill_ms, "decode_ms": decode_ms, "tokens_per_s": tps, "tokens": tokens,
                          "same_tokens": same}
            print(f"llama ({r['shape']}), {len(r['prompt'])} prompt tokens, {r['steps']} steps:")
            print(f"  prefill  tensorgl {r['prefill_ms']:9.2f} ms   torch {prefill_ms:9.2f} ms   "
                  f"speed {prefill_ms / r['prefill_ms']:.2f}x")
            print(f"  decode   tensorgl {r['tokens_per_s']:9.2f} tokens/s   torch {tps:9.2f} tokens/s   "
                  f"speed {r['tokens_per_s'] / tps:.2f}x   ({r['decode_calls']} tensorgl calls a token)")
            print(f"  tokens   {same} of {r['steps']} the same"
                  + (f" (at step {same} PyTorch's top two logits are {margins[same]:.3g} apart)"
                     if same < r["steps"] else ""))
            ok &= same == r["steps"]
        elif r["model"] == "resnet18":
            ips, top = resnet_reference.run_torch(model, images, r["runs"], dev)
            ours = [r["top5"][i * 5:i * 5 + 5] for i in range(r["batch"])]
            same = sum(ours[i] == top[i] for i in range(r["batch"]))
            r["torch"] = {"images_per_s": ips, "same_top5": same}
            print(f"resnet-18, batch {r['batch']} at {r['size']}x{r['size']}:")
            print(f"  tensorgl {r['images_per_s']:9.2f} images/s   torch {ips:9.2f} images/s   "
                  f"speed {r['images_per_s'] / ips:.2f}x   top-5 the same for {same} of {r['batch']} images")
            ok &= same == r["batch"]
    with open(a.out, "w") as f:
        json.dump(data, f, indent=1)
    print(f"wrote {a.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
