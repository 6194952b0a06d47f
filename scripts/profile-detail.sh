#!/usr/bin/env bash
# One kernel in detail under Nsight Compute (device machine): occupancy,
# throughput, warp stalls, instruction mix and the hottest source lines.
#   bash scripts/profile-detail.sh NAME KERNEL_REGEX COMMAND [ARGS...]
# KERNEL_REGEX matches the base name (no template arguments); NCU_SKIP=k
# profiles its (k+1)-th launch; NCU_NAME_BASE=mangled matches KERNEL_REGEX
# against the mangled name (one template instance). Build with
# NVCC_APPEND_FLAGS=-lineinfo for the source lines. Writes
# $OUT/ncu-NAME.txt (and the report $OUT/ncu-NAME.ncu-rep if small).
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
  echo "-- hottest source lines (warp stall samples)"
  ncu --import "$rep.ncu-rep" --page source --csv --print-source cuda 2>/dev/null >"$rep-src.csv"
  python3 - "$rep-src.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if not rows:
    sys.exit(0)
head = rows[0]
col = next((i for i, h in enumerate(head) if h.startswith("Warp Stall Sampling (All")), None)
src = next((i for i, h in enumerate(head) if h == "Source"), None)
if col is None or src is None:
    print("columns:", head[:12]); sys.exit(0)
def val(r):
    try: return float(r[col].replace(",", ""))
    except ValueError: return 0.0
tot = sum(val(r) for r in rows[1:]) or 1
for r in sorted(rows[1:], key=val, reverse=True)[:30]:
    print(f"{100*val(r)/tot:5.1f}%  {r[0]:>5}  {r[src].strip()[:120]}")
PY
} >"$OUT/ncu-$name.txt"
cat "$OUT/ncu-$name.txt"
