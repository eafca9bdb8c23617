#!/usr/bin/env python3
"""The generated tables of docs/performance.md, from `tensorgl bench --json` files.

Each table sits between two marker lines in the document:

    <!-- BEGIN TABLE docs/bench/FILE.json size=large command="the command that made FILE" -->
    ...generated...
    <!-- END TABLE -->

and shows, for every op of that JSON at that size, the GL time and rate and the reference the
same run measured (PyTorch's where the file has it, else the CPU backend's, and OpenBLAS's for
the GEMM family), with GL's speed as a multiple of the reference's. The caption names the
machine, the date and the command.

    python3 bench/perf_tables.py [--check] [docs/performance.md]

--check exits 1 when a table differs from what the JSON gives (the document is stale)."""
import argparse
import json
import math
import re
import sys

BEGIN = re.compile(r'^<!-- BEGIN TABLE (\S+) size=(\w+) command="([^"]*)" -->$')
END = "<!-- END TABLE -->"


def fmt_time(s):
    return "%.3g ms" % (s * 1e3) if s >= 1e-4 else "%.3g us" % (s * 1e6)


def fmt_rate(r, unit):
    return ("%.4g %s" % (r, unit)) if r else "-"


def table(path, size, command):
    with open(path) as f:
        d = json.load(f)
    rows = {}
    for r in d["results"]:
        if r["size"] == size:
            rows.setdefault(r["op"], {})[r["backend"]] = r
    has_torch = any("torch" in v for v in rows.values())
    dev = d["devices"]
    host_ops = [op for op, v in rows.items() if "host" in v]
    if has_torch:
        ref_name = "PyTorch"
    elif host_ops and not any("cpu" in v or "openblas" in v for v in rows.values()):
        ref_name = "C loop on the host"
    else:
        ref_name = "CPU backend (OpenBLAS for GEMM%s)" % (
            ", a C loop on the host for " + ", ".join(host_ops) if host_ops else "")
    out = ["%s, %s: `%s`" % (dev.get("gl", "?"), d.get("date", "?"), command), ""]
    if has_torch:
        out[0] += "; reference: " + dev.get("torch", "PyTorch")
    out += ["| op | shape | GL | GL rate | %s | GL speed vs it |" % ref_name, "| --- | --- | --- | --- | --- | --- |"]
    ratios = []
    for op, b in rows.items():  # in the JSON's order
        gl = b.get("gl")
        if not gl:
            continue
        ref = b.get("torch") if has_torch else b.get("openblas") or b.get("host") or b.get("cpu")
        if ref and "error" in ref:
            ref = None
        if "error" in gl:  # the backend refused the case: its status in the GL columns
            out.append("| %s | %s | %s | - | %s | - |" % (op, gl["shape"], gl["error"],
                                                           fmt_time(ref["median_s"]) if ref else "-"))
            continue
        ratio = ref["median_s"] / gl["median_s"] if ref and gl["median_s"] > 0 else None
        if ratio:
            ratios.append(ratio)
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            op, gl["shape"], fmt_time(gl["median_s"]), fmt_rate(gl["rate"], gl["unit"]),
            fmt_time(ref["median_s"]) if ref else "-", "%.2fx" % ratio if ratio else "-"))
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        out += ["", "Geometric mean of GL's speed against the reference over these %d ops: %.2fx." % (len(ratios), g)]
    return out


def render(lines):
    result, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        result.append(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and lines[i] != END:
            i += 1
        if i == len(lines):
            sys.exit("perf_tables: %s has no %s after it" % (m.group(0), END))
        result += table(m.group(1), m.group(2), m.group(3))
        result.append(END)
        i += 1
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("doc", nargs="?", default="docs/performance.md")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    with open(a.doc) as f:
        lines = f.read().split("\n")
    new = render(lines)
    if a.check:
        if new != lines:
            print("perf_tables: %s is stale; run python3 bench/perf_tables.py" % a.doc, file=sys.stderr)
            return 1
        return 0
    with open(a.doc, "w") as f:
        f.write("\n".join(new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
