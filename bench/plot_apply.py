#!/usr/bin/env python3
"""Plot bench_apply's JSON: GDofs/s of y = M x against particles per cell,
one panel per shape and kind: sparse-host (OpenMP CSR/BSR), cuSPARSE,
assembled canonical (partile), matrix-free (partile; by point, and by cell
where the JSON has it), FP64 solid, FP32 dashed. The sparse and assembled rates do not depend on ppc for the apply
itself (only the assembly does).
usage: plot_apply.py APPLY.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
rows = {r["name"]: r["value"] for r in data["results"]}
series = [
    ("sparse-host FP64", "sparse_host_fp64_seconds", "C0", "-"),
    ("sparse-host FP32", "sparse_host_fp32_seconds", "C0", "--"),
    ("cuSPARSE FP64", "cusparse_fp64_seconds", "C1", "-"),
    ("cuSPARSE FP32", "cusparse_fp32_seconds", "C1", "--"),
    ("assembled canonical FP64", "assembled_canonical_fp64_seconds", "C2", "-"),
    ("matrix-free FP64", "matfree_fp64_seconds", "C3", "-"),
    ("matrix-free by cell FP64", "matfree_fp64_by_cell_seconds", "C4", "-"),
    ("matrix-free by cell FP64, ω from B", "matfree_fp64_by_cell_bfield_seconds", "C4", ":"),
    ("matrix-free FP32", "matfree_fp32_seconds", "C3", "--"),
]
panels = [(s, k) for s in ("cic", "tsc") for k in ("scalar", "tensor")]
fig, axes = plt.subplots(1, 4, figsize=(20, 4.5), sharey=True)
for ax, (shape, kind) in zip(axes, panels):
    for label, key, color, style in series:
        pts = []
        for name, v in rows.items():
            if name.startswith(f"{key}.{shape}.{kind}.ppc") and v > 0:
                tag = name.split(".ppc")[1]  # "4" or "1.5" (bench_apply's %g)
                ppc = float(tag)
                dofs = rows[f"dofs.{shape}.{kind}.ppc{tag}"]
                pts.append((ppc, dofs / v * 1e-9))
        pts.sort()
        if pts:
            ax.plot([p for p, _ in pts], [g for _, g in pts], style, color=color, marker="o",
                    ms=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("particles per cell")
    ax.set_title(f"{shape.upper()} {kind}")
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("GDofs/s (y = M x)")
axes[-1].legend(fontsize=8, loc="lower left")
fig.suptitle(f"Mass-matrix apply, {data['device']}, {data['date'][:10]}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
