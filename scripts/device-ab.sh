#!/usr/bin/env bash
# A/B in one device call: the working tree ("new") against every tree in
# .device/ab-NAME (from scripts/ab-base.sh; "base" by default, more for
# several variants), all built for sm_90 with the same options, then TARGET
# run with each set of ARGS on every tree, in turns, PARTILE_AB_ROUNDS times
# (default 2), so that drift between rounds shows. Every output line is
# prefixed "NAME rK" ("new rK" for the working tree); all of it also goes to
# $OUT/ab.txt; PARTILE_AB_TREES="NAME ..." runs only those trees (and the
# working tree). Machine-to-machine drift on the H200 reached ~7 %
# (bench/RESULTS.md), hence one call for all.
#   bash scripts/device-ab.sh TARGET ARGS...   e.g.
#   bash scripts/device-ab.sh bench/bench_deposit "--only 64,10" "--only 128,10"
set -uo pipefail
OUT=${OUT:-/tmp/partile-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: device-ab.sh TARGET [ARGS ...]" >&2; exit 2; }
trees=()
if [ -n "${PARTILE_AB_TREES:-}" ]; then # a subset of the trees, e.g. "occ16 occ12"
  for v in $PARTILE_AB_TREES; do
    [ -d ".device/ab-$v" ] || { echo "device-ab.sh: no .device/ab-$v" >&2; exit 2; }
    trees+=("$v")
  done
else
  for d in .device/ab-*/; do
    [ -d "$d" ] && trees+=("$(basename "$d" | sed 's/^ab-//')")
  done
fi
[ ${#trees[@]} -ge 1 ] || { echo "device-ab.sh: no .device/ab-NAME (run scripts/ab-base.sh REV)" >&2; exit 2; }
target=$1
shift
[ $# -ge 1 ] || set -- ""
if ! ls /usr/include/cmocka.h >/dev/null 2>&1; then
  for f in .device/debs/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export PATH=/usr/local/cuda/bin:$PATH
# PARTILE_AB_OPTS: other meson options (e.g. to try the script without a GPU)
opts=${PARTILE_AB_OPTS:-"-Dhip=disabled -Dcuda=enabled -Dcuda-arch=sm_90 --buildtype=release"}
# Meson 1.0 (Debian 12) gives nvcc no depfile (mesonbuild/meson#11969, fixed
# upstream later), so ninja does not see the headers and .inc files a .cu
# includes: in a kept build-ab (a warm machine) an edit to them alone would
# not rebuild the CUDA objects. Touching the .cu files makes every call
# compile them.
build() { # DIR: configure (again, keeping what an earlier target in this call built) and build TARGET there
  find "$1/backends/cuda" -name '*.cu' -exec touch {} +
  (cd "$1" && { if [ -f build-ab/build.ninja ]; then meson setup --reconfigure build-ab $opts; else
    meson setup build-ab $opts; fi; } >/dev/null 2>&1 &&
    ninja -C build-ab "$target" >"$OUT/build-$2.log" 2>&1) ||
    { echo "device-ab.sh: the $2 build failed"; tail -20 "$OUT/build-$2.log"; return 1; }
}
pids=()
for v in "${trees[@]}"; do
  build ".device/ab-$v" "$v" & pids+=($!)
done
build . new || exit 1
for p in "${pids[@]}"; do wait "$p" || exit 1; done
for round in $(seq 1 "${PARTILE_AB_ROUNDS:-2}"); do
  for v in "${trees[@]}" new; do
    dir=.; [ $v = new ] || dir=.device/ab-$v
    for a in "$@"; do
      # shellcheck disable=SC2086 # each ARGS is a list of words
      "$dir/build-ab/$target" $a 2>&1 | sed "s/^/$v r$round /"
    done
  done
done | tee "$OUT/ab.txt"
