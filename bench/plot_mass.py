#!/usr/bin/env python3
"""Plot bench_mass's JSON like the paper's figures 6-9: the tile kernel's
speedup over kernels (i) (unsorted, atomics) and (ii) (sorted, FMA per
cell) against particles per cell on 16^3 cells, one panel per case; and a
second row with particles/s against the number of cells at 128 ppc.
usage: plot_mass.py MASS.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
rows = {r["name"]: r["value"] for r in data["results"]}
cases = ["cic-scalar", "cic-tensor", "tsc-scalar", "tsc-tensor"]


def series(key, case, side=None, ppc=None):
    out = []
    for name, v in rows.items():
        parts = name.split(".")
        if parts[0] != key or parts[1] != case or parts[2].startswith("dim"):
            continue  # 1-D and 2-D rows (bench_mass --dim) are not plotted
        s, p = int(parts[2][4:]), int(parts[3][3:])
        if side is not None and s == side:
            out.append((p, v))
        if ppc is not None and p == ppc:
            out.append((s ** 3, v))
    return sorted(out)


fig, axes = plt.subplots(2, 4, figsize=(18, 8))
for ax, case in zip(axes[0], cases):
    tiles = dict(series("tiles_bitwise_seconds", case, side=16))
    for key, label, style in (("fma_per_cell_seconds", "over kernel (ii): sorted, FMA per cell", "o-"),
                              ("atomic_unsorted_seconds", "over kernel (i): unsorted, atomics", "s-"),
                              ("tiles_relaxed_seconds", "over the tiles in relaxed mode (atomics)", "^--")):
        pts = [(p, v) for p, v in series(key, case, side=16) if p in tiles]
        if pts:
            ax.plot([p for p, _ in pts], [v / tiles[p] for p, v in pts], style, label=label)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("particles per cell (16³ cells)")
    ax.set_ylabel("speedup of the tile kernel (bitwise)")
    ax.set_title(case + " FP64")
    ax.grid(True, which="both", alpha=0.3)
axes[0][0].legend(fontsize=8)
for ax, case in zip(axes[1], cases):
    for key, label, style in (("tiles_bitwise_seconds", "tiles, bitwise", "o-"),
                              ("tiles_relaxed_seconds", "tiles, relaxed", "^--"),
                              ("tiles_tf32_seconds", "tiles, TF32", "d:"),
                              ("fma_per_cell_seconds", "kernel (ii)", "s-"),
                              ("atomic_unsorted_seconds", "kernel (i)", "x-")):
        pts = series(key, case, ppc=128)
        n = dict(series("particles", case, ppc=128))
        pts = [(c, n[c] / v) for c, v in pts if c in n]
        if pts:
            ax.plot([c for c, _ in pts], [r for _, r in pts], style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cells (128 particles per cell)")
    ax.set_ylabel("particles / s")
    ax.grid(True, which="both", alpha=0.3)
axes[1][0].legend(fontsize=8)
fig.suptitle(f"partile mass-matrix assembly on {data['device']} ({data['date'][:10]})")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
