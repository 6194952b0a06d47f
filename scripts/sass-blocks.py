#!/usr/bin/env python3
"""Where a kernel's instructions and stalls go, by basic block.

Reads the SASS page that scripts/profile-detail.sh saves
($OUT/ncu-NAME-sass.csv.gz: one row per SASS instruction with its
"Instructions Executed", "Avg. Threads Executed" and warp-stall samples)
and prints the totals, the stall reasons, and each run of consecutive
instructions executed equally often (a basic block, near enough) with its
share of the warp instructions, its warp instructions per item (particle,
point, ... : ITEMS), its active threads and its share of the stall samples.

    python3 scripts/sass-blocks.py FILE.csv[.gz] [ITEMS] [--min PERCENT]

Blocks under --min percent (default 0.4) of both the instructions and the
stall samples are left out. The twenty-eighth session's profile of the
by-cell first pass (bench/RESULTS.md) was read this way.
"""
import argparse
import collections
import csv
import gzip
import signal


def number(row, col):
    try:
        return float(row[col].replace(",", ""))
    except (ValueError, IndexError):
        return 0.0


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("items", nargs="?", type=float, default=1.0)
    ap.add_argument("--min", type=float, default=0.4)
    a = ap.parse_args()
    opener = gzip.open if a.csv.endswith(".gz") else open
    with opener(a.csv, "rt") as f:
        rows = list(csv.reader(f))
    header = next(i for i, r in enumerate(rows) if "Instructions Executed" in r)
    h = rows[header]
    col = {name: h.index(name) for name in
           ("Source", "Instructions Executed", "Avg. Threads Executed")}
    samples = next(i for i, name in enumerate(h) if name.startswith("Warp Stall Sampling (All"))
    stalls = [i for i, name in enumerate(h) if name.startswith("stall_") and "Not Issued" not in name]
    body = [r for r in rows[header + 1:] if len(r) > samples]
    executed = col["Instructions Executed"]
    total = sum(number(r, executed) for r in body) or 1.0
    sampled = sum(number(r, samples) for r in body) or 1.0
    print(f"warp instructions {total:.4g}, per item {total / a.items:.2f}; "
          f"stall samples {sampled:.0f}")
    reasons = sorted(((sum(number(r, i) for r in body), h[i][6:]) for i in stalls), reverse=True)
    print("stalls: " + ", ".join(f"{name} {100 * v / sampled:.1f} %" for v, name in reasons[:8]))
    blocks = []
    for i, r in enumerate(body):
        count = number(r, executed)
        text = r[col["Source"]].strip()
        if blocks and count == blocks[-1]["count"] and not text.startswith("BSYNC"):
            b = blocks[-1]
        else:
            b = {"first": i, "count": count, "ops": [], "samples": 0.0,
                 "threads": number(r, col["Avg. Threads Executed"])}
            blocks.append(b)
        b["ops"].append(text.split()[1] if text.startswith("@") else text.split()[0])
        b["samples"] += number(r, samples)
    print(" line  instrs   executed threads  %instr  per item  %stall  opcodes")
    for b in blocks:
        share = b["count"] * len(b["ops"]) / total
        stall = b["samples"] / sampled
        if b["count"] == 0 or (100 * share < a.min and 100 * stall < a.min):
            continue
        ops = collections.Counter(op.split(".")[0] for op in b["ops"])
        print(f"{b['first']:5d} {len(b['ops']):7d} {b['count']:10.0f} {b['threads']:7.1f} "
              f"{100 * share:7.1f} {b['count'] * len(b['ops']) / a.items:9.2f} {100 * stall:7.1f}  "
              + " ".join(f"{k}{v}" for k, v in ops.most_common(7)))


if __name__ == "__main__":
    main()
