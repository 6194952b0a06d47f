#!/usr/bin/env bash
# `meson install` gives a usable library: stage an install, build
# examples/hello_partile.c against it through pkg-config, run it.
# usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --destdir "$stage" --no-rebuild >"$stage.log" 2>&1 ||
  { cat "$stage.log"; exit 1; }
pc=$(dirname "$(find "$stage" -name partile.pc | head -1)")
[ -n "$pc" ] || { echo "partile.pc not installed"; exit 1; }
[ -x "$(find "$stage" -path '*/bin/partile' | head -1)" ] || { echo "partile tool not installed"; exit 1; }
header=$(find "$stage" -path '*/include/partile/partile.h' | head -1)
prefix=$(dirname "$(dirname "$(dirname "$header")")")
flags=$(PKG_CONFIG_PATH=$pc pkg-config --define-variable=prefix="$prefix" --cflags --libs partile)
cc -std=c11 -Wall -Werror "$src/examples/hello_partile.c" -o "$stage/hello" $flags
libdir=$(dirname "$(find "$stage" -name 'libpartile.so*' | head -1)")
LD_LIBRARY_PATH=$libdir "$stage/hello" reference
