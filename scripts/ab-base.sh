#!/usr/bin/env bash
# Prepare an A/B run on the device machine: the tree of a commit (default
# HEAD) unpacked into .device/ab-NAME (default NAME: base), which travels
# with `carry: [".device"]` (the device machine has no .git). Several
# commits may be unpacked under different names (e.g. one per branch to
# compare); scripts/device-ab.sh builds and runs them all in one call.
# Then, through the device tool:
#   bash scripts/device-ab.sh bench/bench_deposit "--only 64,10" "--only 128,10"
# Remove them afterwards (rm -rf .device/ab-*): the carried tree is limited
# (64 MiB), so bench/results (measurements, not needed to build) is left out.
# PATCH, if given, is applied to the unpacked tree (a candidate from
# bench/candidates, against REV), so that several candidates can be measured
# against one base in one call.
#   bash scripts/ab-base.sh [REV [NAME [PATCH]]]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
name=${2:-base}
patch=${3:-}
case $name in
  new | *[!a-z0-9-]*) echo "ab-base.sh: NAME must be lower-case letters, digits or '-', not 'new'" >&2; exit 2 ;;
esac
if [ -n "$patch" ] && [ ! -f "$patch" ]; then
  echo "ab-base.sh: no patch file $patch" >&2
  exit 2
fi
rm -rf ".device/ab-$name"
mkdir -p ".device/ab-$name"
git archive "$rev" | tar -x -C ".device/ab-$name" --exclude='bench/results'
if [ -n "$patch" ]; then
  # --directory: the patch's paths under the unpacked tree (run from a
  # subfolder, git apply would skip them silently)
  git apply --directory=".device/ab-$name" "$patch" || {
    echo "ab-base.sh: $patch does not apply to $rev" >&2
    rm -rf ".device/ab-$name"
    exit 1
  }
fi
echo "$name $(git rev-parse --short "$rev")${patch:+ + $patch} in .device/ab-$name ($(du -sh ".device/ab-$name" | cut -f1))"
