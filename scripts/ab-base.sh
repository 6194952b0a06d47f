#!/usr/bin/env bash
# Prepare an A/B run on the device machine: the tree of a commit (default
# HEAD) unpacked into .device/ab-base, which travels with `carry: [".device"]`
# (the device machine has no .git). Then, through the device tool:
#   bash scripts/device-ab.sh bench/bench_deposit "--only 64,10" "--only 128,10"
# Remove it afterwards (rm -rf .device/ab-base): the carried tree is limited.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
rm -rf .device/ab-base
mkdir -p .device/ab-base
git archive "$rev" | tar -x -C .device/ab-base
echo "base $(git rev-parse --short "$rev") in .device/ab-base ($(du -sh .device/ab-base | cut -f1))"
