#!/usr/bin/env python3
"""PyTorch reference for examples/llama.c: reads the same GGUF file, decodes the weights to f32
(f32, f16, bf16, q8_0, q4_0, as ggml defines them), runs the Llama forward pass the way Hugging
Face's LlamaForCausalLM does (q and k rows un-permuted back from llama.cpp's converter, rotate-half
RoPE, SDPA with grouped-query attention, an f32 KV cache) and greedily decodes. With --llama it
also runs tensorgl's example on the same file and prompt and compares the tokens (at the first
difference, PyTorch's margin between its top two logits says whether it was a near tie) and the
decode and prefill speeds, in the same run.

  python3 bench/llama_reference.py --model m.gguf --llama build/llama [--backend gl] [--steps 64]
"""
import argparse
import re
import struct
import subprocess
import sys
import time

import torch

GGUF_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 8: (32, 34), 2: (32, 18)}


def read_gguf(path):
    data = open(path, "rb").read()
    at = 0

    def take(fmt):
        nonlocal at
        v = struct.unpack_from(fmt, data, at)
        at += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal at
        n = take("<Q")
        s = data[at:at + n].decode("utf-8", "replace")
        at += n
        return s

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(GGUF_SCALAR[t])

    assert data[:4] == b"GGUF", "not a GGUF file"
    at = 4
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    assert version in (2, 3)
    kv = {}
    for _ in range(n_kv):
        k = string()
        kv[k] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        ne = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, ne, take("<I"), take("<Q")))
    align = kv.get("general.alignment", 32)
    base = (at + align - 1) // align * align
    tensors = {}
    for name, ne, t, off in infos:
        elems, bytes_ = BLOCK[t]
        count = 1
        for n in ne:
            count *= n
        raw = data[base + off: base + off + count // elems * bytes_]
        tensors[name] = (decode(raw, t, count), list(reversed(ne)))
    return kv, tensors


def decode(raw, t, count):
    b = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    if t == 0:
        return b.view(torch.float32).clone()
    if t == 1:
        return b.view(torch.float16).float()
    if t == 30:
        return (b.view(torch.int16).int() << 16).view(torch.float32)
    if t == 8:
        blocks = b.view(-1, 34)
        d = blocks[:, :2].contiguous().view(torch.float16).float()
        q = blocks[:, 2:].contiguous().view(torch.int8).float()
        return (q * d).reshape(count)
    if t == 2:
        blocks = b.view(-1, 18)
        d = blocks[:, :2].contiguous().view(torch.float16).float()
        qs = blocks[:, 2:].int()
        q = torch.cat([qs & 15, qs >> 4], dim=1).float() - 8  # element j: low nibble, j + 16: high
        return (q * d).reshape(count)
    raise ValueError(f"ggml type {t}")


def unpermute(w, heads):
    """Inverse of llama.cpp's converter permute: back to Hugging Face's rotate-half row order."""
    out, inp = w.shape
    return w.reshape(heads, out // heads // 2, 2, inp).transpose(1, 2).reshape(out, inp)


def attention(q, k, v, mask):
    """PyTorch's SDPA with grouped K/V heads; written out where this PyTorch has no enable_gqa
    (Debian 12's 1.13 has no SDPA at all)."""
    try:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    except (AttributeError, TypeError):
        g = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
        return s.masked_fill(~mask, float("-inf")).softmax(-1) @ v


class Llama:
    def __init__(self, kv, tensors, dev):
        g = lambda k, d=None: kv.get("llama." + k, d)
        self.layers, self.dim = g("block_count"), g("embedding_length")
        self.heads = g("attention.head_count")
        self.heads_kv = g("attention.head_count_kv", self.heads)
        self.hd = self.dim // self.heads
        self.eps = g("attention.layer_norm_rms_epsilon", 1e-5)
        self.theta = g("rope.freq_base", 10000.0)
        self.ctx = g("context_length", 2048)
        w = lambda n: tensors[n][0].reshape(tensors[n][1]).to(dev)
        self.embed = w("token_embd.weight")
        self.head = w("output.weight") if "output.weight" in tensors else self.embed
        self.out_norm = w("output_norm.weight")
        self.L = []
        for l in range(self.layers):
            p = f"blk.{l}."
            self.L.append(dict(
                q=unpermute(w(p + "attn_q.weight"), self.heads), k=unpermute(w(p + "attn_k.weight"), self.heads_kv),
                v=w(p + "attn_v.weight"), o=w(p + "attn_output.weight"), gate=w(p + "ffn_gate.weight"),
                up=w(p + "ffn_up.weight"), down=w(p + "ffn_down.weight"), n1=w(p + "attn_norm.weight"),
                n2=w(p + "ffn_norm.weight")))
        self.kc = torch.zeros(self.layers, 1, self.heads_kv, self.ctx, self.hd, device=dev)
        self.vc = torch.zeros_like(self.kc)
        inv = 1.0 / (self.theta ** (torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd))
        if g("rope.scaling.type", "none") == "linear":  # Hugging Face's "linear" rope_scaling
            inv = inv / g("rope.scaling.factor")
        if "rope_freqs.weight" in tensors:  # Llama 3.1's scaling, as GGUF carries it: per-frequency factors
            inv = inv / tensors["rope_freqs.weight"][0].reshape(-1).double()
        ang = torch.outer(torch.arange(self.ctx, dtype=torch.float64), inv)
        self.cos = torch.cat([ang.cos(), ang.cos()], -1).float().to(dev)
        self.sin = torch.cat([ang.sin(), ang.sin()], -1).float().to(dev)

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    def rope(self, x, pos):  # x [1, heads, n, hd]; Hugging Face's rotate_half
        c, s = self.cos[pos][None, None], self.sin[pos][None, None]
        h = x.shape[-1] // 2
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
        return x * c + rot * s

    @torch.no_grad()
    def forward(self, ids, pos):
        n = len(ids)
        x = self.embed[torch.tensor(ids, device=self.embed.device)]
        p = torch.arange(pos, pos + n, device=x.device)
        for l, L in enumerate(self.L):
            h = self.rms(x, L["n1"])
            q = (h @ L["q"].T).view(n, self.heads, self.hd).transpose(0, 1)[None]
            k = (h @ L["k"].T).view(n, self.heads_kv, self.hd).transpose(0, 1)[None]
            v = (h @ L["v"].T).view(n, self.heads_kv, self.hd).transpose(0, 1)[None]
            q, k = self.rope(q, p), self.rope(k, p)
            self.kc[l, :, :, pos:pos + n] = k
            self.vc[l, :, :, pos:pos + n] = v
            K, V = self.kc[l, :, :, :pos + n], self.vc[l, :, :, :pos + n]
            mask = torch.ones(n, pos + n, dtype=torch.bool, device=x.device).tril(pos)
            o = attention(q, K, V, mask)
            x = x + o[0].transpose(0, 1).reshape(n, self.dim) @ L["o"].T
            h = self.rms(x, L["n2"])
            x = x + (torch.nn.functional.silu(h @ L["gate"].T) * (h @ L["up"].T)) @ L["down"].T
        logits = self.rms(x[-1], self.out_norm) @ self.head.T
        return logits


def greedy(m, prompt, steps, dev):
    """Prefill of prompt, then steps greedy tokens (one argmax read back a token), twice: the
    first pass warms PyTorch up, the second is timed. Returns the tokens, PyTorch's margin between
    its top two logits at each step, and the prefill and decode milliseconds."""
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for _ in range(2):
        tokens, margins = [], []
        sync()
        t_pre = time.perf_counter()
        logits = m.forward(prompt, 0)
        sync()
        t0 = time.perf_counter()
        prefill_ms = (t0 - t_pre) * 1e3
        for s in range(steps):
            top = torch.topk(logits, 2).values
            margins.append(float(top[0] - top[1]))
            tokens.append(int(logits.argmax()))
            if s + 1 < steps:
                logits = m.forward([tokens[-1]], len(prompt) + s)
        sync()
        ms = (time.perf_counter() - t0) * 1e3
    return tokens, margins, prefill_ms, ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", default="1,15,27,3,8")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--llama", help="tensorgl's example binary: run it on the same file and compare")
    ap.add_argument("--backend", default="gl")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    kv, tensors = read_gguf(a.model)
    m = Llama(kv, tensors, dev)
    prompt = [int(t) for t in a.prompt.split(",")]
    tokens, margins, prefill_ms, ms = greedy(m, prompt, a.steps, dev)
    name = torch.cuda.get_device_name() if dev.type == "cuda" else "cpu"
    print(f"pytorch {torch.__version__} ({name}): prefill {prefill_ms:.1f} ms, {a.steps} tokens in {ms:.1f} ms: "
          f"{1e3 * a.steps / ms:.1f} tokens/s")
    print("  tokens:", " ".join(map(str, tokens)))
    if not a.llama:
        return 0
    out = subprocess.run([a.llama, "--model", a.model, "--prompt", a.prompt, "--steps", str(a.steps), "--backend",
                          a.backend], capture_output=True, text=True)
    print(out.stdout, end="")
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return 1
    got = [int(t) for t in re.search(r"tokens:([\d ]+)", out.stdout).group(1).split()]
    speed = float(re.search(r"([\d.]+) tokens/s", out.stdout).group(1))
    prefill = float(re.search(r"prefill ([\d.]+) ms", out.stdout).group(1))
    same = next((i for i, (x, y) in enumerate(zip(got, tokens)) if x != y), len(tokens))
    print(f"tensorgl vs pytorch: {same} of {a.steps} tokens the same"
          + (f" (at step {same} PyTorch's top two logits are {margins[same]:.3g} apart)" if same < a.steps else "")
          + f"; decode speed {speed / (1e3 * a.steps / ms):.2f}x PyTorch's, prefill speed "
          f"{prefill_ms / prefill:.2f}x")
    return 0 if same == a.steps else 1


if __name__ == "__main__":
    sys.exit(main())
