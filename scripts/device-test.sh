#!/usr/bin/env bash
# Everything partile does on the GPU machine, in one call:
#   build (CUDA backend; hipcc is not there), the GPU test suite (the CPU
#   tests on request), partile info, partile check --bench, the ceilings benchmark,
#   compute-sanitizer on the GPU tests; logs and JSON under $OUT; a short
#   table last.
# Run through the device tool:  bash scripts/device-test.sh   (carry .device)
# Files under $OUT (at most 8 come back): build.log (with nvidia-smi), test.log
# (with compute-sanitizer), check.txt, bench.txt, ceilings.json, sort.json,
# deposit.json, deposit_torch.json, pairs.json, apply.json, and the whole
# logs of the pairs and apply GPU tests (test_pairs_gpu.log, test_apply_gpu.log;
# their failures are also printed).
set -uo pipefail
OUT=${OUT:-/tmp/partile-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."

# cmocka is not installed there: unpack the carried Debian packages.
if ! ls /usr/include/cmocka.h >/dev/null 2>&1; then
  for f in .device/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export PATH=/usr/local/cuda/bin:$PATH

build=build-device
status=0
step() { echo "== $*"; }
# PARTILE_STEPS picks sections (default all): tests large check ceilings deposit
# deposit-profile sort pairs mass-profile mass-detail mass apply sanitizer;
# cpu-tests runs only when named (CI runs the CPU tests; here 16 of them at
# once, each with an OpenMP team per core, took past one 10-minute call).
named() { [[ " ${PARTILE_STEPS:-} " == *" $1 "* ]]; }
want() { [ -z "${PARTILE_STEPS:-}" ] || named "$1"; }

step "configure + build" | tee "$OUT/build.log"
# Only the device's own architecture (sm_90): CI compiles sm_80 as well.
# PARTILE_TARGETS: ninja targets to build (default all).
arch=-Dcuda-arch=${PARTILE_CUDA_ARCH:-sm_90}
{ meson setup "$build" --wipe -Dhip=disabled -Dcuda=enabled "$arch" --buildtype=release ||
  meson setup "$build" -Dhip=disabled -Dcuda=enabled "$arch" --buildtype=release; } >>"$OUT/build.log" 2>&1
ninja -C "$build" ${PARTILE_TARGETS:-} >>"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }

step "nvidia-smi"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/build.log"

if want tests; then
step "tests (the GPU suite; gpu-large is step large)"
# the API fuzz against the reference lists every difference, not the first
PARTILE_FUZZ_REPORT_ALL=1 meson test -C "$build" --suite gpu --no-suite gpu-large --print-errorlogs 2>&1 |
  tee "$OUT/test.log" | tail -25 || status=1 # pipefail: Meson's status, timeouts included
grep -q "^Fail: *0" "$OUT/test.log" || status=1
# a GPU test (HIP's aside: hipcc is not there) that skips here ran nothing on the GPU
python3 - "$build/meson-logs/testlog.json" <<'PY' | tee -a "$OUT/test.log" || status=1
import json, sys
skipped = [t["name"] for t in map(json.loads, open(sys.argv[1]))
           if t["name"].startswith("partile:gpu") and "hip" not in t["name"] and t["result"] == "SKIP"]
for name in skipped:
    print(f"FAIL: {name} skipped on the GPU machine")
sys.exit(1 if skipped else 0)
PY
# the Fortran tests exist only where meson found a Fortran compiler: say so
# when they were not built, rather than count them as passed
grep -q "gpu-fortran-example-cuda" "$build/meson-logs/testlog.json" ||
  echo "NOTE: gpu-fortran-example-cuda not built (no Fortran compiler here): not run" |
  tee -a "$OUT/test.log" "$OUT/bench.txt"
fi

if named cpu-tests; then
step "CPU tests (one OpenMP thread each, so that Meson's parallel tests share the cores)"
# Meson's exit status counts timeouts too, which the summary's "Fail:" does not
OMP_NUM_THREADS=1 meson test -C "$build" --suite cpu --print-errorlogs \
  >"$OUT/cpu-test.log" 2>&1 || status=1
grep -E "^(Ok|Expected Fail|Fail|Timeout|Skipped):" "$OUT/cpu-test.log" | tee -a "$OUT/test.log"
grep -q "^Fail: *0" "$OUT/cpu-test.log" || status=1
fi

if want large; then
step "more than 2^31 particles (~104 GB of device memory)"
# appended to test.log (the files that come back are few); the CUDA test must pass
# the CUDA test alone (the suite's HIP twin always skips here)
large=$(meson test -C "$build" large-gpu-cuda --print-errorlogs 2>&1)
echo "$large" | tee -a "$OUT/test.log" | tail -8
# a device with less memory (an 80 GB H100) skips it: not run, said so, not a pass
if echo "$large" | grep -q "^Skipped: *1"; then
  echo "NOTE: large-gpu-cuda skipped (too little device memory): not run" |
    tee -a "$OUT/test.log" "$OUT/bench.txt"
else
  echo "$large" | grep -q "^Ok: *1" || status=1
fi
fi

if want check; then
step "partile info"
"$build/tools/partile" info 2>&1 | tee -a "$OUT/check.txt"

step "partile check --bench"
"$build/tools/partile" check --bench 2>&1 | tee -a "$OUT/check.txt" || status=1

step "partile check --backend cuda, three more fresh seeds"
for i in 1 2 3; do
  "$build/tools/partile" check --backend cuda 2>&1 | tail -1 | tee -a "$OUT/check.txt"
done
grep -q FAILED "$OUT/check.txt" && status=1
fi

if want ceilings; then
step "ceilings"
"$build/bench/bench_ceilings" --backend cuda --json "$OUT/ceilings.json" 2>&1 | tee -a "$OUT/bench.txt" || status=1
fi

if want deposit; then
step "deposit/gather benchmark (partile, roofline, reference; then PyTorch)"
"$build/bench/bench_deposit" --json "$OUT/deposit.json" --max "${PARTILE_DEPOSIT_MAX:-2.2e8}" ${PARTILE_DEPOSIT_ARGS:-} 2>&1 | tee -a "$OUT/bench.txt" || status=1
PYTHONUNBUFFERED=1 python3 bench/bench_deposit_torch.py "$OUT/deposit_torch.json" "${PARTILE_DEPOSIT_MAX:-2.2e8}" 2>&1 | tee -a "$OUT/bench.txt" || status=1
fi

if want deposit-profile && command -v ncu >/dev/null; then
step "deposit/gather kernels under Nsight Compute (${PARTILE_DEPOSIT_ONLY:-64,10}): per-kernel times"
OUT=/tmp bash scripts/profile-kernels.sh deposit "$build/bench/bench_deposit" \
  --only "${PARTILE_DEPOSIT_ONLY:-64,10}" 2>&1 | tee -a "$OUT/bench.txt"
fi

if want sort; then
step "sorting benchmark (partile vs CUB, roofline)"
"$build/bench/bench_sort" --json "$OUT/sort.json" --max "${PARTILE_SORT_MAX:-1e9}" 2>&1 | tee -a "$OUT/bench.txt" || status=1
fi

if want pairs; then
step "pair interactions: GPU test (every strategy bitwise vs the reference), then the benchmark"
# the whole log under $OUT; here its failures (cmocka's messages) and summary
"$build/tests/test_pairs_gpu" >"$OUT/test_pairs_gpu.log" 2>&1 || status=1
{ grep -E "FAIL|ERROR|differ|want" "$OUT/test_pairs_gpu.log" | head -20; tail -6 "$OUT/test_pairs_gpu.log"; } |
  tee -a "$OUT/bench.txt"
if [ -n "${PARTILE_PAIRS_SANITIZE:-}" ] && command -v compute-sanitizer >/dev/null; then
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
    "$build/tests/test_pairs_gpu" 2>&1 | grep -E "ERROR SUMMARY|FAILED|PASSED" | tee -a "$OUT/bench.txt"
fi
if [ -n "${PARTILE_PAIRS_PROFILE:-}" ] && command -v nsys >/dev/null; then
  nsys profile -o /tmp/pairs-prof --force-overwrite true "$build/bench/bench_pairs" --max-n 1e7 \
    --max-work 1e7 >/dev/null 2>&1
  nsys stats --report cuda_gpu_kern_sum --format csv /tmp/pairs-prof.nsys-rep 2>/dev/null |
    cut -c1-220 | head -24 | tee -a "$OUT/bench.txt"
fi
"$build/bench/bench_pairs" --json "$OUT/pairs.json" --max-work "${PARTILE_PAIRS_MAX_WORK:-2e9}" ${PARTILE_PAIRS_ARGS:-} 2>&1 | tee -a "$OUT/bench.txt" || status=1
fi

if want mass-profile && command -v ncu >/dev/null; then
step "mass-matrix kernels under Nsight Compute (64^3 cells, 128 ppc): per-kernel times"
for c in cic-scalar cic-tensor; do
  echo "-- $c" | tee -a "$OUT/bench.txt"
  OUT=/tmp bash scripts/profile-kernels.sh "mass-$c" "$build/bench/bench_mass" --only 64,128 \
    --case "$c" 2>&1 | tee -a "$OUT/bench.txt"
done
fi

if want mass-detail && command -v ncu >/dev/null; then
step "mass-matrix kernels in detail (Nsight Compute, 64^3 cells, 128 ppc)"
for k in ${PARTILE_DETAIL:-cic-tensor:k_mass_tile_f64_m16n8k16_8x9 cic-scalar:k_mass_tile_f64_m16n8k16_8x1}; do
  OUT=$OUT bash scripts/profile-detail.sh "${k#*:}" "${k#*:}" "$build/bench/bench_mass" --only 64,128 \
    --case "${k%%:*}" >/dev/null 2>&1
  echo "-- ${k#*:}: $OUT/ncu-${k#*:}.txt" | tee -a "$OUT/bench.txt"
done
fi

if want mass; then
step "mass-matrix benchmark (tiles vs kernels (i) and (ii), roofline; then CuPy)"
"$build/bench/bench_mass" --json "$OUT/mass.json" --max "${PARTILE_MASS_MAX:-3.5e7}" 2>&1 | tee -a "$OUT/bench.txt" || status=1
PYTHONUNBUFFERED=1 python3 bench/bench_mass_cupy.py "$OUT/mass_cupy.json" "$OUT/mass.json" 2>&1 | tee -a "$OUT/bench.txt" || status=1
# PARTILE_MASS_DIMS="2 1": the same sweeps on 2-D and 1-D grids (mass-dim2.json, mass-dim1.json)
for d in ${PARTILE_MASS_DIMS:-}; do
  "$build/bench/bench_mass" --dim "$d" --json "$OUT/mass-dim$d.json" --max "${PARTILE_MASS_MAX:-3.5e7}" 2>&1 |
    tee -a "$OUT/bench.txt" || status=1
done
fi

if want apply; then
step "mass-matrix apply: GPU test (both matrix-free paths, assembled, FP32: bitwise vs the reference), CLI, benchmark"
"$build/tests/test_apply_gpu" >"$OUT/test_apply_gpu.log" 2>&1 || status=1
{ grep -E "FAIL|ERROR|differ|want" "$OUT/test_apply_gpu.log" | head -20; tail -6 "$OUT/test_apply_gpu.log"; } |
  tee -a "$OUT/bench.txt"
if command -v compute-sanitizer >/dev/null; then
  compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no \
    "$build/tests/test_apply_gpu" 2>&1 | grep -E "ERROR SUMMARY|FAILED|PASSED" | tee -a "$OUT/bench.txt"
fi
sh tests/test_cli_apply.sh "$build/tools/partile" >/tmp/cli_apply.log 2>&1
rc=$?
tail -3 /tmp/cli_apply.log | tee -a "$OUT/bench.txt"
[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
"$build/bench/bench_apply" --json "$OUT/apply.json" ${PARTILE_APPLY_ARGS:-} 2>&1 | tee -a "$OUT/bench.txt" || status=1
fi

if want sanitizer && command -v compute-sanitizer >/dev/null; then
  step "compute-sanitizer memcheck (GPU tests)"
  ( compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no "$build/tests/test_mma_gpu" &&
    compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no "$build/tests/test_sort_gpu" &&
    compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no "$build/tests/test_deposit_gpu" &&
    for t in "$build"/tests/test_*_gpu; do
      # not the large test (2^31 particles: instrumented, past the 10-minute
      # call) nor the memory pressure test (memcheck needs device memory of
      # its own); both run uninstrumented in their steps
      case "$t" in *mma_gpu|*sort_gpu|*deposit_gpu|*large_gpu|*pressure_gpu) continue ;; esac
      compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no "$t" || exit 3
    done &&
    # bad input through every operation, 100 cases (tests/test_api_fuzz.c)
    PARTILE_FUZZ_ITERATIONS=100 compute-sanitizer --tool memcheck --error-exitcode 3 \
      --report-api-errors no "$build/tests/test_api_fuzz" cuda ) \
    >>"$OUT/test.log" 2>&1
  rc=$?
  grep -E "ERROR SUMMARY" "$OUT/test.log" | tail -3
  [ $rc -eq 0 ] || { echo "compute-sanitizer: exit $rc"; status=1; }
fi

step "summary"
printf '%-22s %s\n' "gpu" "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
[ -f "$OUT/test.log" ] && printf '%-22s %s\n' "tests" "$(grep -E '^(Ok|Fail|Skipped):' "$OUT/test.log" | tr -s ' ' | paste -sd' ')"
[ -f "$OUT/check.txt" ] && grep -E '^(PASSED|FAILED)' "$OUT/check.txt"
[ -f "$OUT/bench.txt" ] && cat "$OUT/bench.txt"
exit $status
