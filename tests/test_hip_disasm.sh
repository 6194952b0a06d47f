#!/bin/sh
# Checks that the HIP backend's object really contains each MFMA the engine
# claims (common/mma_shapes.c, HIP_SHAPES), per offload target: extracts the
# .hip_fatbin section, unbundles the code object of each target (by default
# gfx90a and gfx940, else the targets given after the object) and
# disassembles it. LLVM renamed some instructions for gfx940, so each is
# looked for under every known spelling.
# Usage: test_hip_disasm.sh path/to/backend_hip.o [ARCH...]
# MFMA_WANTED (e.g. "f64") narrows the instructions looked for (an object
# holding one engine's kernels, such as the mass-matrix tiles).
# Exit: 0 all found, 1 one missing or a step failed, 77 (skip) tools missing.
set -u

obj=${1:-}
if [ -z "$obj" ] || [ ! -f "$obj" ]; then
    echo "usage: $0 HIP_OBJECT [ARCH...] (got '${obj}')" >&2
    exit 1
fi
shift
archs=${*:-gfx90a gfx940}

# LLVM tools: the llvm-15 that hipcc uses on Debian first, then PATH.
find_tool() {
    for dir in /usr/lib/llvm-15/bin ${ROCM_PATH:+$ROCM_PATH/llvm/bin} /opt/rocm/llvm/bin; do
        if [ -x "$dir/$1" ]; then
            echo "$dir/$1"
            return 0
        fi
    done
    command -v "$1" 2>/dev/null
}
bundler=$(find_tool clang-offload-bundler)
objdump=$(find_tool llvm-objdump)
objcopy=$(command -v objcopy 2>/dev/null || find_tool llvm-objcopy)
for t in "bundler:$bundler" "llvm-objdump:$objdump" "objcopy:$objcopy"; do
    if [ -z "${t#*:}" ]; then
        echo "SKIP: ${t%%:*} not found" >&2
        exit 77
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hip_disasm.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! "$objcopy" -O binary --only-section=.hip_fatbin "$obj" "$tmp/fatbin" ||
    [ ! -s "$tmp/fatbin" ]; then
    echo "FAIL: $obj has no .hip_fatbin section" >&2
    exit 1
fi
if ! "$bundler" --list --type=o --input="$tmp/fatbin" >"$tmp/bundles"; then
    echo "FAIL: clang-offload-bundler cannot list the bundles of $obj" >&2
    exit 1
fi
echo "bundles in $obj:"
sed 's/^/  /' "$tmp/bundles"

# The spellings llvm-objdump may print for each instruction (ISA name first;
# LLVM 15 prints e.g. v_mfma_f64_16x16x4_f64 and v_mfma_f32_16x16x16_bf16
# for gfx940).
spellings() {
    case $1 in
    f64) echo v_mfma_f64_16x16x4f64 v_mfma_f64_16x16x4_f64 ;;
    f32) echo v_mfma_f32_16x16x4f32 v_mfma_f32_16x16x4_f32 ;;
    xf32) echo v_mfma_f32_16x16x8_xf32 v_mfma_f32_16x16x8xf32 ;;
    f16) echo v_mfma_f32_16x16x16f16 v_mfma_f32_16x16x16_f16 ;;
    bf16) echo v_mfma_f32_16x16x16bf16_1k v_mfma_f32_16x16x16_bf16 v_mfma_f32_16x16x16bf16 ;;
    esac
}

status=0
for arch in $archs; do
    bundle=hipv4-amdgcn-amd-amdhsa--$arch
    if ! grep -qx "$bundle" "$tmp/bundles"; then
        echo "FAIL: no $bundle code object in $obj (built without --offload-arch=$arch?)" >&2
        status=1
        continue
    fi
    if ! "$bundler" --unbundle --type=o --input="$tmp/fatbin" --targets="$bundle" \
        --output="$tmp/$arch.co" ||
        ! "$objdump" -d --mcpu="$arch" "$tmp/$arch.co" >"$tmp/$arch.s"; then
        echo "FAIL: cannot unbundle or disassemble the $arch code object" >&2
        status=1
        continue
    fi
    case $arch in
    gfx940 | gfx941 | gfx942) wanted="f64 f32 xf32 f16 bf16" ;;
    *) wanted="f64 f32 f16 bf16" ;;
    esac
    wanted=${MFMA_WANTED:-$wanted}
    echo "$arch:"
    for name in $wanted; do
        found=""
        for s in $(spellings "$name"); do
            n=$(grep -cw -- "$s" "$tmp/$arch.s")
            if [ "$n" -gt 0 ]; then
                found="$s ($n)"
                break
            fi
        done
        if [ -n "$found" ]; then
            echo "  $name: $found"
        else
            echo "  $name: MISSING (looked for: $(spellings "$name"))"
            echo "FAIL: $arch code object has no $name MFMA" >&2
            status=1
        fi
    done
done
exit $status
