#!/usr/bin/env bash
# One kernel in detail under Nsight Compute (device machine): occupancy,
# throughput, warp stalls, instruction mix and the hottest source lines.
#   bash scripts/profile-detail.sh NAME KERNEL_REGEX COMMAND [ARGS...]
# KERNEL_REGEX matches the base name (no template arguments); NCU_SKIP=k
# profiles its (k+1)-th launch; NCU_NAME_BASE=mangled matches KERNEL_REGEX
# against the mangled name (one template instance). Build with
# NVCC_APPEND_FLAGS=-lineinfo for the source lines. Writes
# $OUT/ncu-NAME.txt (and the report $OUT/ncu-NAME.ncu-rep if small) and the
# SASS page $OUT/ncu-NAME-sass.csv.gz, which scripts/sass-blocks.py sums by
# basic block (warp instructions per particle, stalls).
set -uo pipefail
name=$1 kernel=$2
shift 2
OUT=${OUT:-/tmp}
rep=/tmp/ncu-$name
ncu --clock-control none --kernel-name-base "${NCU_NAME_BASE:-function}" --kernel-name "regex:$kernel" \
  --launch-skip "${NCU_SKIP:-0}" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section SourceCounters --import-source yes \
  -f -o "$rep" "$@" >/dev/null 2>&1
{
  ncu --import "$rep.ncu-rep" --page details --print-units base 2>&1 |
    grep -vE "^\s*-{5,}|^\s*$" | cut -c1-150 | head -150
  # the CUDA-source view, and the SASS view (which holds the stall samples
  # where the source view gave only the text, 2026-12-03); the SASS page
  # also goes to $OUT, compressed
  for view in cuda sass; do
  echo "-- hottest $view lines (warp stall samples)"
  ncu --import "$rep.ncu-rep" --page source --csv --print-source $view 2>/dev/null >"$rep-$view.csv"
  [ $view = sass ] && gzip -c "$rep-$view.csv" >"$OUT/ncu-$name-sass.csv.gz"
  python3 - "$rep-$view.csv" <<'PY'
import csv, sys
# The CSV holds a section per source file (or kernel): a "File Name" (or
# "Kernel Name") row, then a header row (with "Source" and the stall-sample
# columns), then its lines.
rows = list(csv.reader(open(sys.argv[1])))
col = src = None
fname = ""
lines = []
def val(r):
    try: return float(r[col].replace(",", ""))
    except (ValueError, IndexError): return 0.0
for r in rows:
    if r and r[0] in ("File Name", "Kernel Name"):
        fname = r[1].split("/")[-1] if len(r) > 1 else ""
        continue
    if any(h.startswith("Warp Stall Sampling (All") for h in r) and "Source" in r:
        col = next(i for i, h in enumerate(r) if h.startswith("Warp Stall Sampling (All"))
        src = r.index("Source")
        continue
    if col is not None and len(r) > max(col, src):
        lines.append((val(r), fname, r[0], r[src].strip()))
if not lines:
    print("no source lines:", rows[:2]); sys.exit(0)
tot = sum(v for v, *_ in lines) or 1
for v, f, n, s in sorted(lines, key=lambda l: -l[0])[:30]:
    print(f"{100*v/tot:5.1f}%  {f[:18]}:{n:>5}  {s[:110]}")
PY
  done
} >"$OUT/ncu-$name.txt"
cat "$OUT/ncu-$name.txt"
