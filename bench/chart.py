#!/usr/bin/env python3
"""Draws `tensorgl bench --json` figures as an SVG bar chart: one panel per op family, one group
of bars per (op, size), one bar per backend (gl, cpu, openblas, host, and torch when
bench/gpu_reference.py added PyTorch's figures). Bars are the rate (GFLOP/s or GB/s, as the
label says) on a log scale, since the backends differ by orders of magnitude.

    python3 bench/chart.py build/bench.json build/bench.svg [--title TEXT]

Standard library only, so it runs wherever the JSON is."""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

COLORS = {"gl": "#1f77b4", "cpu": "#ff7f0e", "openblas": "#2ca02c", "host": "#9467bd", "torch": "#d62728"}
ORDER = ["gl", "torch", "openblas", "host", "cpu"]
BAR_H, GAP, LABEL_W, PLOT_W, RIGHT_W = 11, 8, 290, 560, 130


def load(path):
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        sys.exit(f"chart: {path}: not a tensorgl bench JSON file")
    return data


def fmt(v):
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3g}"


def groups(results):
    """[(family, [((op, size, shape), {backend: result})])] in the file's order."""
    fams = {}
    for r in results:
        if r.get("error") or not r.get("rate"):
            continue
        fam = fams.setdefault(r["family"], {})
        fam.setdefault((r["op"], r["size"], r["shape"]), {})[r["backend"]] = r
    return [(f, list(cases.items())) for f, cases in fams.items()]


def draw(data, title):
    panels = groups(data["results"])
    if not panels:
        sys.exit("chart: no measured results in the file")

    out, y = [], 60
    for family, cases in panels:
        # each panel has its own decades, so a family of GB/s ops is not squeezed by GFLOP/s ones
        rates = [r["rate"] for _, by in cases for r in by.values()]
        lo = 10 ** math.floor(math.log10(min(rates)))
        hi = 10 ** max(math.ceil(math.log10(max(rates))), math.log10(lo) + 1)
        span = math.log10(hi) - math.log10(lo)

        def x_of(v):
            return LABEL_W + PLOT_W * (math.log10(v) - math.log10(lo)) / span

        out.append(f'<text x="10" y="{y + 14}" font-weight="bold" font-size="14">{escape(family)}</text>')
        y += 24
        top = y
        for (op, size, shape), by in cases:
            backends = [b for b in ORDER if b in by] + sorted(b for b in by if b not in ORDER)
            h = len(backends) * BAR_H
            out.append(f'<text x="{LABEL_W - 6}" y="{y + h / 2 + 4}" text-anchor="end" font-size="11">'
                       f'{escape(op)} {escape(size)} ({escape(shape)})</text>')
            for b in backends:
                r = by[b]
                w = max(1.0, x_of(r["rate"]) - LABEL_W)
                out.append(f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H - 1}" '
                           f'fill="{COLORS.get(b, "#7f7f7f")}"><title>{escape(b)}: {r["rate"]:.4g} '
                           f'{escape(r["unit"])}, median {r["median_s"] * 1e3:.4g} ms</title></rect>')
                out.append(f'<text x="{LABEL_W + w + 4:.1f}" y="{y + BAR_H - 2}" font-size="9">'
                           f'{fmt(r["rate"])} {escape(r["unit"])}</text>')
                y += BAR_H
            y += GAP
        # decade grid lines for this panel
        for e in range(int(math.log10(lo)), int(math.log10(hi)) + 1):
            gx = x_of(10 ** e)
            out.append(f'<line x1="{gx:.1f}" y1="{top - 4}" x2="{gx:.1f}" y2="{y - GAP}" stroke="#ccc" '
                       f'stroke-dasharray="2,2"/>')
            out.append(f'<text x="{gx:.1f}" y="{y + 6}" font-size="9" text-anchor="middle">{fmt(10 ** e)}</text>')
        y += 22
    legend = "".join(
        f'<rect x="{LABEL_W + i * 110}" y="34" width="12" height="10" fill="{COLORS[b]}"/>'
        f'<text x="{LABEL_W + i * 110 + 16}" y="43" font-size="11">{b}</text>'
        for i, b in enumerate(b for b in ORDER if any(b in by for _, c in panels for _, by in c)))
    devices = data.get("devices", {})
    sub = "; ".join(f"{k}: {v}" for k, v in devices.items() if isinstance(v, str) and v)
    head = (f'<text x="10" y="18" font-size="15" font-weight="bold">{escape(title)}</text>'
            f'<text x="10" y="30" font-size="9">{escape(data.get("date", ""))} {escape(sub)}</text>')
    width = LABEL_W + PLOT_W + RIGHT_W
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>'
            + head + legend + "".join(out) + "</svg>\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("svg")
    ap.add_argument("--title", default="tensorgl bench: rate per op and size (log scale; higher is faster)")
    a = ap.parse_args()
    svg = draw(load(a.json), a.title)
    with open(a.svg, "w") as f:
        f.write(svg)
    print(f"chart: wrote {a.svg}")


if __name__ == "__main__":
    main()
