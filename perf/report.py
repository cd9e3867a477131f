#!/usr/bin/env python3
"""Turns spmv_bench JSON files into a Markdown table and a PNG plot.

    python3 perf/report.py DIR [--title TEXT] [--command TEXT] [--commit SHA]

Reads every DIR/*-device.json and DIR/*-host.json written by perf/spmv_bench, and writes
DIR/<name>.md (one table per matrix: median time, GB/s, fraction of the copy bandwidth measured in
the same run, GFLOP/s, speedup over Kokkos Kernels and over cuSPARSE CSR) and DIR/<name>.png (bar
chart of the fraction of copy bandwidth). The block-size sweep (names with /sweep/) goes into a
separate table, best setting first. Needs matplotlib only for the plot.
"""
import argparse
import glob
import json
import os
import re
import sys


def medians(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    errors = []
    for b in data.get("benchmarks", []):
        name = re.sub(r"/iterations:\d+/repeats:\d+/manual_time$", "", b["run_name"])
        if b.get("error_occurred"):
            errors.append((name, b.get("error_message", "")))
            continue
        if b.get("aggregate_name") == "median":
            rows.setdefault(name, {}).update(
                ms=b["real_time"], gbs=b["GB/s"], frac=b["frac_copy_bw"], gflops=b["GFLOP/s"], mb=b.get("MB", 0))
        if b.get("aggregate_name") == "min":
            rows.setdefault(name, {})["min_ms"] = b["real_time"]
    return data.get("context", {}), rows, errors


def table(rows, ctx, title):
    kk = next((r["ms"] for n, r in rows.items() if "/kokkos-kernels/" in n), None)
    cu = next((r["ms"] for n, r in rows.items() if n.endswith("/cusparse-csr/default")), None)
    out = [f"### {title}", "",
           f"device: {ctx.get('device', '?')}; copy bandwidth measured in the same run: "
           f"{float(ctx.get('copy_bandwidth_GBps', 0)):.0f} GB/s (read + write); {ctx.get('precision', '')}; "
           f"{ctx.get('cispmv', '')}", "",
           "| kernel | median ms | min ms | MB moved | GB/s | of copy BW | GFLOP/s | vs Kokkos Kernels | vs cuSPARSE CSR |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, r in rows.items():
        if "/sweep/" in n:
            continue
        short = "/".join(n.split("/")[2:])
        out.append(f"| {short} | {r['ms']:.4f} | {r.get('min_ms', float('nan')):.4f} | {r['mb']:.1f} | {r['gbs']:.0f} | "
                   f"{100 * r['frac']:.1f}% | {r['gflops']:.1f} | "
                   f"{(kk / r['ms']) if kk else float('nan'):.2f}x | {(cu / r['ms']) if cu else float('nan'):.2f}x |")
    sweep = [(n, r) for n, r in rows.items() if "/sweep/" in n]
    if sweep:
        out += ["", f"#### Launch-shape sweep (rows per team x lanes per row x unroll), best first", "",
                "| kernel | setting | median ms | of copy BW |", "|---|---|---:|---:|"]
        for n, r in sorted(sweep, key=lambda t: t[1]["ms"]):
            parts = n.split("/")
            out.append(f"| {parts[2]}/{parts[3]} | {'/'.join(parts[5:])} | {r['ms']:.4f} | {100 * r['frac']:.1f}% |")
    return out


def plot(rows, title, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib not available, no plot", file=sys.stderr)
        return
    items = [(("/".join(n.split("/")[2:])), r) for n, r in rows.items() if "/sweep/" not in n]
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(items) + 1.5))
    names = [n for n, _ in items]
    fracs = [100 * r["frac"] for _, r in items]
    colors = ["tab:gray" if ("kokkos" in n or "cusparse" in n) else "tab:blue" for n in names]
    ax.barh(names, fracs, color=colors)
    for i, (_, r) in enumerate(items):
        ax.text(fracs[i] + 0.5, i, f"{r['ms']:.3f} ms", va="center", fontsize=8)
    ax.axvline(85, color="tab:red", linestyle="--", linewidth=1, label="85% goal")
    ax.invert_yaxis()
    ax.set_xlabel("fraction of the device copy bandwidth measured in the same run (%)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--command", default="")
    p.add_argument("--commit", default="")
    p.add_argument("--date", default="")
    a = p.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, "*-device.json")) + glob.glob(os.path.join(a.dir, "*-host.json")))
    if not files:
        sys.exit(f"report.py: no spmv_bench JSON in {a.dir}")
    for path in files:
        base = os.path.splitext(path)[0]
        ctx, rows, errors = medians(path)
        title = os.path.basename(base)
        lines = table(rows, ctx, title)
        if errors:
            lines += ["", "Errors (not timed):"] + [f"- {n}: {m}" for n, m in errors]
        lines += ["", f"date: {a.date}; commit: {a.commit}; command: `{a.command}`", ""]
        with open(base + ".md", "w") as f:
            f.write("\n".join(lines))
        plot(rows, f"{title} ({ctx.get('device', '')})", base + ".png")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
