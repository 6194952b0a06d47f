#!/usr/bin/env bash
# Prepare an A/B run on the device machine: the tree of a commit (default
# HEAD) unpacked into .device/ab-NAME (default NAME: base), which travels
# with `carry: [".device"]` (the device machine has no .git). Several
# commits may be unpacked under different names (e.g. one per branch to
# compare); scripts/device-ab.sh builds and runs them all in one call.
# Then, through the device tool:
#   bash scripts/device-ab.sh bench/bench_deposit "--only 64,10" "--only 128,10"
# Remove them afterwards (rm -rf .device/ab-*): the carried tree is limited.
#   bash scripts/ab-base.sh [REV [NAME]]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
name=${2:-base}
case $name in
  new | *[!a-z0-9-]*) echo "ab-base.sh: NAME must be lower-case letters, digits or '-', not 'new'" >&2; exit 2 ;;
esac
rm -rf ".device/ab-$name"
mkdir -p ".device/ab-$name"
git archive "$rev" | tar -x -C ".device/ab-$name"
echo "$name $(git rev-parse --short "$rev") in .device/ab-$name ($(du -sh ".device/ab-$name" | cut -f1))"
