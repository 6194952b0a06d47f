#!/usr/bin/env python3
"""Plot bench_sort's JSON: time per particle against particles per cell, for
partile's full sort (random and nearly sorted input), re-sort, CUB
SortPairs (sort only) and binning + CUB.
usage: plot_sort.py SORT.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
rows = {r["name"]: r["value"] for r in data["results"]}
series = {
    "partile sort (random input)": "sort_seconds",
    "partile sort (nearly sorted input)": "full_sort_moved_seconds",
    "partile re-sort (after 0.1-cell move)": "resort_seconds",
    "CUB SortPairs (keys given)": "cub_sortpairs_seconds",
}
sizes = sorted({k.split(".n")[1].split(".ppc")[0] for k in rows if k.startswith("sort_seconds")},
               key=float)
fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), sharey=True)
axes = axes if len(sizes) > 1 else [axes]
for ax, n in zip(axes, sizes):
    for label, key in series.items():
        pts = sorted((float(k.split(".ppc")[1]), v) for k, v in rows.items()
                     if k.startswith(key + ".n" + n + ".ppc"))
        if pts:
            ax.plot([p for p, _ in pts], [v / float(n) * 1e9 for _, v in pts], "o-", label=label)
    bin_cub = sorted((float(k.split(".ppc")[1]),
                      v + rows["bin_seconds" + k[len("cub_sortpairs_seconds"):]])
                     for k, v in rows.items() if k.startswith("cub_sortpairs_seconds.n" + n + ".ppc"))
    ax.plot([p for p, _ in bin_cub], [v / float(n) * 1e9 for _, v in bin_cub], "s--",
            label="binning + CUB SortPairs")
    ax.set_xscale("log")
    ax.set_xlabel("particles per cell")
    ax.set_title(f"N = {float(n):.0e}")
    ax.grid(True, alpha=0.3)
axes[0].set_ylabel("ns per particle (lower is better)")
axes[-1].legend(fontsize=8)
fig.suptitle(f"{data['device']} — {data['date'][:10]}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
