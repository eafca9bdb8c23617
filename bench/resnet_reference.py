#!/usr/bin/env python3
"""ResNet-18 in PyTorch eager against examples/resnet.c, same weights and images.

Writes random torchvision-named ResNet-18 weights and an image batch as safetensors files (the
format resnet.c reads), runs `build/resnet --weights W --input I --backend gl` and the same
network in PyTorch (FP32, TF32 off for cuDNN and matmul) on the same device kind, and prints
both top-5 lists, the logits' agreement and images/s with the ratio. Torchvision is not needed:
the network is written here with torchvision's module names.

    python3 bench/resnet_reference.py [--resnet build/resnet] [--batch 32] [--size 224] [--runs 10]
        [--device cuda|cpu] [--dir build]
"""
import argparse
import json
import os
import re
import struct
import subprocess
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + identity)


class ResNet18(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        widths, cin = [64, 128, 256, 512], 64
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
            cin = w
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        for i in range(4):
            x = getattr(self, f"layer{i + 1}")(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def save_safetensors(path, tensors):
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        dtype = "I64" if t.dtype == torch.int64 else "F32"  # batch norms' num_batches_tracked: I64
        t = t.detach().to("cpu", torch.int64 if dtype == "I64" else torch.float32).contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_model(batch, size, directory):
    """A seeded random ResNet-18 (batch norms that are not the identity, as trained ones are not)
    and an image batch, written as resnet18-ref.safetensors (the whole state dict, as a
    torchvision export has it) and resnet18-input.safetensors in directory. Returns the model,
    the images and the two paths."""
    torch.manual_seed(0)
    model = ResNet18().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.0), m.bias.uniform_(-0.1, 0.1)
                m.running_mean.uniform_(-0.1, 0.1), m.running_var.uniform_(0.5, 1.5)
    images = torch.rand(batch, 3, size, size) * 4 - 2
    os.makedirs(directory, exist_ok=True)
    wpath = os.path.join(directory, "resnet18-ref.safetensors")
    ipath = os.path.join(directory, "resnet18-input.safetensors")
    save_safetensors(wpath, model.state_dict())
    save_safetensors(ipath, {"input": images})
    return model, images, wpath, ipath


def run_torch(model, images, runs, dev):
    """PyTorch eager on dev: a warm-up pass, then runs timed passes. Returns images/s and each
    image's top-5 classes."""
    model = model.to(dev)
    x = images.to(dev)
    with torch.no_grad():
        logits = model(x)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(runs):
            logits = model(x)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        ips = images.shape[0] * runs / (time.perf_counter() - t0)
    return ips, torch.topk(logits.float().cpu(), 5, dim=1).indices.tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resnet", default="build/resnet")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dir", default="build")
    a = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model, images, wpath, ipath = write_model(a.batch, a.size, a.dir)

    out = subprocess.run([a.resnet, "--weights", wpath, "--input", ipath, "--batch", str(a.batch), "--size",
                          str(a.size), "--runs", str(a.runs), "--backend", "gl"], capture_output=True, text=True)
    print(out.stdout, end="")
    if out.returncode:
        print(out.stderr)
        raise SystemExit(out.returncode)
    ours = float(re.search(r"([0-9.]+) images/s", out.stdout).group(1))
    tops = [list(map(int, re.findall(r" (\d+) \(", line))) for line in out.stdout.splitlines() if "top-5" in line]

    dev = torch.device(a.device)
    theirs, ref = run_torch(model, images, a.runs, dev)
    same = all(tops[n] == ref[n] for n in range(len(tops)))
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    print(f"PyTorch {torch.__version__} eager FP32 (TF32 off) on {name}: {theirs:.2f} images/s; "
          f"top-5 of the first {len(tops)} images {'the same' if same else 'DIFFERENT'}: {ref[:len(tops)]}")
    print(f"tensorgl / PyTorch: {ours / theirs:.2f}x (images/s, batch {a.batch} at {a.size}x{a.size})")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
