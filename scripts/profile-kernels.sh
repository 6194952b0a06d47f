#!/usr/bin/env bash
# Per-kernel GPU times of any command under Nsight Compute (device machine):
#   bash scripts/profile-kernels.sh NAME COMMAND [ARGS...]
# e.g. bash scripts/profile-kernels.sh mass build-device/bench/bench_mass --only 64,128 --case cic-tensor
# Writes $OUT/ncu-NAME.csv and prints the mean duration of each kernel over
# its launches, the largest total first.
set -uo pipefail
name=$1
shift
OUT=${OUT:-/tmp}
ncu --clock-control none --metrics gpu__time_duration.sum --csv "$@" >"$OUT/ncu-$name.csv" 2>/dev/null
python3 - "$OUT/ncu-$name.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
ki, vi, ui = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
t = collections.defaultdict(list)
for r in rows[1:]:
    v = float(r[vi].replace(",", ""))
    v *= {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}.get(r[ui], 1)
    t[r[ki].split("(")[0][:60]].append(v)
for k, v in sorted(t.items(), key=lambda kv: -sum(kv[1]))[:14]:
    print(f"{k:60s} {len(v):4d} launches  mean {sum(v)/len(v):10.1f} us")
PY
