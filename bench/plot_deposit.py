#!/usr/bin/env python3
"""Plot bench_deposit's JSON (and bench_deposit_torch.py's, optional):
particles per second against particles per cell, one panel per mesh, for
the unsorted (atomic) and sorted (bitwise) deposit, the gather on random and
sorted particles, and PyTorch's deposit and gather; CIC or TSC, m components.
usage: plot_deposit.py DEPOSIT.json [TORCH.json] OUT.png [--shape cic] [--m 3]"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# options are "--name value" pairs anywhere on the line; the rest are files
args, opts, argv = [], {}, sys.argv[1:]
while argv:
    a = argv.pop(0)
    if a.startswith("--"):
        if not argv:
            sys.exit(f"plot_deposit.py: {a} needs a value")
        opts[a] = argv.pop(0)
    else:
        args.append(a)
if len(args) not in (2, 3) or set(opts) - {"--shape", "--m"}:
    sys.exit(__doc__.splitlines()[-1])
shape, m = opts.get("--shape", "cic"), int(opts.get("--m", "3"))
data = json.load(open(args[0]))
torch = json.load(open(args[1]))["results"] if len(args) == 3 else []
out = args[-1]
rows = {r["name"]: r["value"] for r in data["results"]}
series = {
    "deposit, unsorted (atomics)": "deposit_unsorted_seconds",
    "deposit, sorted by point (bitwise)": "deposit_sorted_seconds",
    "deposit, sorted by cell (bitwise)": "deposit_sorted_by_cell_seconds",
    "gather, random order": "gather_seconds",
    "gather, sorted": "gather_sorted_seconds",
}
prefix = f".{shape}.m{m}.side"
sides = sorted({int(k.split(".side")[1].split(".")[0]) for k in rows if prefix in k})
fig, axes = plt.subplots(1, len(sides), figsize=(4.5 * len(sides), 4), sharey=True)
axes = axes if len(sides) > 1 else [axes]
for ax, side in zip(axes, sides):
    for label, key in series.items():
        pts = sorted((float(k.split(".ppc")[1]), v, rows[k.replace(key, "particles")])
                     for k, v in rows.items() if k.startswith(f"{key}{prefix}{side}.ppc"))
        if pts:
            ax.plot([p for p, _, _ in pts], [n / v for _, v, n in pts], "o-", label=label)
    for label, key in (("PyTorch deposit", "torch_deposit_seconds"),
                       ("PyTorch gather", "torch_gather_seconds")):
        pts = sorted((r["ppc"], r["particles"] / r[key]) for r in torch
                     if r["side"] == side and r["shape"] == shape and r["m"] == m)
        if pts:
            ax.plot([p for p, _ in pts], [v for _, v in pts], "x--", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("particles per cell")
    ax.set_title(f"{side}³ cells, {shape.upper()}, {m} comp.")
    ax.grid(True, alpha=0.3)
axes[0].set_ylabel("particles / s")
axes[0].legend(fontsize=7)
fig.suptitle(f"{data['device']}, {data['date'][:10]}")
fig.tight_layout()
fig.savefig(out, dpi=110)
