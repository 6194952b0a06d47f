#!/usr/bin/env bash
# `meson install` gives a usable library: stage an install, build
# examples/hello_partile.c against it through pkg-config, run it; with a
# Fortran compiler, build examples/ecsim_step.f90 with the installed module
# source as the README says, and run it on the reference backend; with CMake,
# build both through examples/CMakeLists.txt (pkg-config's module) and run
# them. partile.pc is relocatable, so the staged install needs no prefix.
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
if command -v gfortran >/dev/null; then
  module=$(PKG_CONFIG_PATH=$pc pkg-config --define-variable=prefix="$prefix" --variable=includedir partile)/partile/partile.f90
  [ -f "$module" ] || { echo "partile.f90 not installed at $module"; exit 1; }
  libs=$(PKG_CONFIG_PATH=$pc pkg-config --define-variable=prefix="$prefix" --libs partile)
  (cd "$stage" && gfortran "$module" "$src/examples/ecsim_step.f90" -o "$stage/ecsim_step" $libs)
  LD_LIBRARY_PATH=$libdir "$stage/ecsim_step" reference
fi
if command -v cmake >/dev/null; then
  PKG_CONFIG_PATH=$pc cmake -S "$src/examples" -B "$stage/cmake" >"$stage/cmake.log" 2>&1 &&
    cmake --build "$stage/cmake" >>"$stage/cmake.log" 2>&1 ||
    { cat "$stage/cmake.log"; echo "the CMake build of the examples failed"; exit 1; }
  LD_LIBRARY_PATH=$libdir "$stage/cmake/hello_partile" reference
  if command -v gfortran >/dev/null; then
    LD_LIBRARY_PATH=$libdir "$stage/cmake/ecsim_step" reference
  fi
fi
