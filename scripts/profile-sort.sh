#!/usr/bin/env bash
# Per-kernel times of the sorting benchmark under Nsight Compute (device
# machine): bash scripts/profile-sort.sh BUILD_DIR N PPC
exec bash "$(dirname "$0")/profile-kernels.sh" "$3" "$1/bench/bench_sort" --n "$2" --ppc "$3"
