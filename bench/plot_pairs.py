#!/usr/bin/env python3
"""Plot bench_pairs' JSON: interactions per second against particles per cell
for each strategy (and the selector's pick), one panel per precision, at the
largest particle count measured for each density.
usage: plot_pairs.py PAIRS.json [MORE.json ...] OUT.png (a later file fills
only the (precision, density) points the earlier ones lack)"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402



def load(path):
    text = open(path).read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # a run cut short: close the last complete row
        return json.loads(text[: text.rindex("}") + 1] + "\n  ]\n}\n")


def point(name):  # (precision, ppc) of a per-configuration row, else None
    parts = name.split(".")
    return (parts[1], parts[2]) if len(parts) >= 4 and parts[2].startswith("ppc") else None


data = load(sys.argv[1])
rows = {}
for path in sys.argv[1:-1]:
    new = {r["name"]: r for r in load(path)["results"]}
    have = {point(n) for n in rows}
    for n, r in new.items():
        if point(n) is not None and point(n) not in have:
            rows[n] = r
strategies = ["naive", "all-in-sm", "x-pencil", "x-pencil-reg"]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, prec in zip(axes, ["fp32", "fp64"]):
    # interactions_per_second.PREC.ppcK.nN.STRATEGY
    best_n = {}
    for name in rows:
        if name.startswith(f"interactions_per_second.{prec}."):
            _, _, ppc, n, _ = name.split(".", 4)
            k, nn = int(ppc[3:]), int(n[1:])
            best_n[k] = max(best_n.get(k, 0), nn)
    ppcs = sorted(best_n)
    for s in strategies:
        ys = [rows[f"interactions_per_second.{prec}.ppc{k}.n{best_n[k]}.{s}"]["value"] for k in ppcs]
        ax.plot(ppcs, ys, "o-", label=s)
    sel = []
    for k in ppcs:
        pick = [n for n in rows if n.startswith(f"selected.{prec}.ppc{k}.n{best_n[k]}.")]
        if pick:
            s = pick[0].rsplit(".", 1)[1]
            sel.append(rows[f"interactions_per_second.{prec}.ppc{k}.n{best_n[k]}.{s}"]["value"])
        else:
            sel.append(float("nan"))
    ax.plot(ppcs, sel, "k x", markersize=9, label="selector's pick")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("particles per cell (cell width = r_c)")
    ax.set_title(f"LJ {prec.upper()}, largest N per density")
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("interactions / s")
axes[0].legend()
fig.suptitle(f"partile pair interactions, {data['device']}, {data['date'][:10]}")
fig.tight_layout()
fig.savefig(sys.argv[-1], dpi=120)
