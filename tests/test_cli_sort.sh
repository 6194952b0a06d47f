#!/bin/sh
# `partile sort` end to end: positions written with NumPy, sorted by the CLI
# (reference backend, then "auto", which must agree), checked with NumPy:
# perm = np.argsort(cells, kind='stable'), offsets = bincount cumsum (and
# np.searchsorted), cell.npy = cells[perm]. Then bad input: each case must
# exit non-zero, say why on stderr and write no perm.npy.
# Usage: test_cli_sort.sh path/to/partile
# Exit: 0 pass, 1 fail, 77 (skip) no Python with NumPy. $PYTHON picks one.
set -u

NAME=cli-sort
# shellcheck source=tests/cli_test_lib.sh
. "$(dirname "$0")/cli_test_lib.sh"

# ---- inputs ------------------------------------------------------------------
"$py" - "$tmp" <<'EOF' || { echo "FAIL: could not write the inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20240611)
# 2-D, float64, few cells so that many particles share one (stability)
np.save(f"{d}/p2.npy", np.column_stack([rng.uniform(-1.0, 1.5, 500), rng.uniform(0.0, 2.0, 500)]))
# 3-D, float32, periodic: positions up to two boxes outside on every side
np.save(f"{d}/p3.npy", rng.uniform(-7.0, 9.0, (300, 3)).astype(np.float32))
# 1-D as (Np,), default lower/upper
np.save(f"{d}/p1.npy", rng.uniform(0.0, 6.0, 200))
# no particles
np.save(f"{d}/p0.npy", np.zeros((0, 2)))
# bad inputs
np.save(f"{d}/int16.npy", np.zeros((4, 2), dtype=np.int16))
np.save(f"{d}/int64.npy", np.zeros((4, 2), dtype=np.int64))
np.save(f"{d}/cols3.npy", np.full((4, 3), 0.5))
nan = np.full((4, 2), 0.5); nan[2, 1] = np.nan
np.save(f"{d}/nan.npy", nan)
out = np.full((4, 2), 0.5); out[3, 0] = 4.0   # upper edge of 4 cells: outside
np.save(f"{d}/outside.npy", out)
neg = np.full((4, 2), 0.5); neg[1, 1] = -1e-300
np.save(f"{d}/below.npy", neg)
np.save(f"{d}/four-a.npy", np.array([[0.5, 0.5], [19.5, 9.5], [3.5, 2.5], [0.5, 0.5]]))
np.save(f"{d}/four-b.npy", np.array([[9.5, 9.5], [1.5, 0.5], [3.5, 2.5], [7.5, 0.5]]))
with open(f"{d}/garbage.npy", "wb") as f:
    f.write(b"this is not an npy file")
EOF

# ---- runs that must succeed --------------------------------------------------
# check NAME POSITIONS LOWER UPPER CELLS PERIODIC [partile sort args...]
check() {
    name=$1 pos=$2 lower=$3 upper=$4 cells=$5 periodic=$6
    shift 6
    auto_out="$tmp/out-$name-auto"
    for backend in reference auto; do
        out="$tmp/out-$name-$backend"
        if ! "$partile" sort --backend "$backend" --positions "$tmp/$pos" --out "$out" "$@" \
                >"$tmp/stdout" 2>"$tmp/stderr"; then
            # A GPU backend that "auto" picks may not have the sort yet:
            # PARTILE_ERROR_UNSUPPORTED is noted, anything else fails.
            if [ "$backend" = auto ] && grep -q "does not support" "$tmp/stderr"; then
                echo "note ($name): --backend auto: $(cat "$tmp/stderr")"
                auto_out=
                continue
            fi
            fail "$name ($backend): partile sort failed: $(cat "$tmp/stderr")"
            return
        fi
        grep -q "particles" "$tmp/stdout" || fail "$name ($backend): no summary line"
        cat "$tmp/stdout"
    done
    if ! "$py" - "$tmp/$pos" "$tmp/out-$name-reference" "$lower" "$upper" "$cells" "$periodic" \
            "$auto_out" <<'EOF'
import sys, numpy as np
pos, out, lower, upper, cells, periodic, out_auto = sys.argv[1:]
lower = np.array([float(v) for v in lower.split(",")])
upper = np.array([float(v) for v in upper.split(",")])
cells = np.array([int(v) for v in cells.split(",")])
x = np.load(pos).astype(np.float64)    # float32 widens exactly
if x.ndim == 1:
    x = x[:, None]
assert x.shape[1] == len(cells)
spacing = (upper - lower) / cells
s = (x - lower) / spacing              # one IEEE division per axis, as the library
ijk = np.floor(s).astype(np.int64)
if periodic == "1":
    ijk = np.mod(ijk, cells)
assert ((ijk >= 0) & (ijk < cells)).all(), "test input must lie inside the box"
c = np.zeros(len(x), dtype=np.int64)
for m in reversed(range(len(cells))):  # c = i + nx*(j + ny*k)
    c = c * cells[m] + ijk[:, m]
ncells = int(np.prod(cells))

perm = np.load(f"{out}/perm.npy")
offsets = np.load(f"{out}/offsets.npy")
cell = np.load(f"{out}/cell.npy")
for name, a, n in (("perm", perm, len(x)), ("offsets", offsets, ncells + 1), ("cell", cell, len(x))):
    assert a.dtype == np.int64 and a.shape == (n,), f"{name}: {a.dtype} {a.shape}, want int64 ({n},)"
expect_perm = np.argsort(c, kind="stable")
assert np.array_equal(perm, expect_perm), "perm is not the stable argsort of the cells"
expect_off = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=ncells))])
assert np.array_equal(offsets, expect_off), "offsets differ from the bincount cumsum"
assert np.array_equal(offsets, np.searchsorted(c[expect_perm], np.arange(ncells + 1), side="left")), \
    "offsets differ from searchsorted"
assert np.array_equal(cell, c[perm]), "cell.npy is not cells[perm]"
for f in ("perm", "offsets", "cell") if out_auto else ():  # every backend: identical
    assert np.array_equal(np.load(f"{out}/{f}.npy"), np.load(f"{out_auto}/{f}.npy")), \
        f"--backend auto differs from reference in {f}"
print(f"ok: {len(x)} particles, {ncells} cells, {np.count_nonzero(np.bincount(c, minlength=ncells) > 1) if len(x) else 0} cells shared")
EOF
    then
        fail "$name: the results do not match NumPy"
    fi
}

check 2d-f64 p2.npy -1,0 1.5,2 5,4 0 --cells 5,4 --lower -1,0 --upper 1.5,2
check 3d-f32-periodic p3.npy -1,0,0.5 2,3,4 3,4,5 1 \
    --cells 3,4,5 --lower -1,0,0.5 --upper 2,3,4 --periodic
check 1d-defaults p1.npy 0 6 6 0 --cells 6
check empty p0.npy 0,0 4,3 4,3 0 --cells 4,3

# ---- a failed run replaces none of an earlier run's outputs -------------------
# The second run's offsets.npy (201 int64) cannot be written under a file
# size limit of one block (512 or 1024 bytes), while its perm.npy (4) can:
# every output goes to a temporary file first, so the earlier perm.npy must
# stay as it was, and no temporary file may stay behind.
keep="$tmp/keep"
if "$partile" sort --backend reference --cells 20,10 --positions "$tmp/four-a.npy" \
        --out "$keep" >/dev/null 2>"$tmp/stderr"; then
    before=$(cksum "$keep"/perm.npy "$keep"/offsets.npy "$keep"/cell.npy)
    if (trap '' XFSZ; ulimit -f 1 && exec "$partile" sort --backend reference --cells 20,10 \
            --positions "$tmp/four-b.npy" --out "$keep") >/dev/null 2>"$tmp/stderr"; then
        fail "kept-outputs: a run past the file size limit exited 0"
    elif ! grep -q "offsets.npy" "$tmp/stderr"; then
        fail "kept-outputs: the message does not name offsets.npy: $(cat "$tmp/stderr")"
    elif [ "$(cksum "$keep"/perm.npy "$keep"/offsets.npy "$keep"/cell.npy 2>&1)" != "$before" ]; then
        fail "kept-outputs: the earlier run's outputs changed: $(ls -l "$keep")"
    elif ls "$keep" | grep -q tmp; then
        fail "kept-outputs: temporary files left: $(ls "$keep")"
    else
        echo "ok (kept-outputs): $(head -n 1 "$tmp/stderr")"
    fi
else
    fail "kept-outputs: the first run failed: $(cat "$tmp/stderr")"
fi

# ---- outputs that are not plain files ------------------------------------------
# A symbolic link is written through (its target replaced, the link kept) and
# a pipe is written into, as npy_write would: the temporary file and rename
# are for regular files only.
links="$tmp/links"
mkdir -p "$links"
: >"$tmp/perm-target.npy"
ln -s "$tmp/perm-target.npy" "$links/perm.npy"
mkfifo "$links/cell.npy"
cat "$links/cell.npy" >"$tmp/cell-from-pipe.npy" &
reader=$!
if ! "$partile" sort --backend reference --cells 20,10 --positions "$tmp/four-a.npy" \
        --out "$links" >/dev/null 2>"$tmp/stderr"; then
    fail "links-and-pipes: $(cat "$tmp/stderr")"
fi
# a pipe replaced by a file never gets a writer: its reader would wait forever
[ -p "$links/cell.npy" ] || { : >"$links/cell.npy.unblock"; kill "$reader" 2>/dev/null; }
wait "$reader" 2>/dev/null
if [ ! -L "$links/perm.npy" ] || [ ! -p "$links/cell.npy" ]; then
    fail "links-and-pipes: the link or the pipe was replaced: $(ls -l "$links")"
elif ! "$py" -c "import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
assert a.shape == (4,) and b.shape == (4,), (a.shape, b.shape)" \
        "$tmp/perm-target.npy" "$tmp/cell-from-pipe.npy"; then
    fail "links-and-pipes: the link's target or the pipe's reader did not get the array"
else
    echo "ok (links-and-pipes)"
fi

# ---- runs that must fail -----------------------------------------------------
# bad NAME WANT_STATUS partile-sort-args... ("any" = any non-zero status)
bad() {
    name=$1 want=$2
    shift 2
    out="$tmp/bad-$name"
    "$partile" sort --backend reference --out "$out" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        fail "$name: exit status 0, expected failure"
    elif [ "$want" != any ] && [ "$rc" -ne "$want" ]; then
        fail "$name: exit status $rc, expected $want"
    fi
    if ! grep -q "^partile sort: " "$tmp/stderr"; then
        fail "$name: no \"partile sort: ...\" message on stderr: $(cat "$tmp/stderr")"
    elif sanitizer_report "$tmp/stderr"; then
        fail "$name: sanitizer report: $(cat "$tmp/stderr")"
    else
        echo "ok ($name, exit $rc): $(head -n 1 "$tmp/stderr")"
    fi
    if [ -e "$out/perm.npy" ] || [ -e "$out/offsets.npy" ] || [ -e "$out/cell.npy" ]; then
        fail "$name: wrote output files"
    fi
}

bad missing-file 1 --cells 4,3 --positions "$tmp/does-not-exist.npy"
bad grid-too-large 1 --cells 100000,100000,100000 --positions "$tmp/cols3.npy"
bad out-is-an-option 2 --cells 4,3 --positions "$tmp/p2.npy" --out --periodic
bad positions-missing-value 2 --cells 4,3 --positions
bad not-npy 1 --cells 4,3 --positions "$tmp/garbage.npy"
bad int16 1 --cells 4,3 --positions "$tmp/int16.npy"
bad int64 1 --cells 4,3 --positions "$tmp/int64.npy"
bad three-columns 1 --cells 4,3 --positions "$tmp/cols3.npy"
bad 1d-for-2-axes 1 --cells 4,3 --positions "$tmp/p1.npy"
bad nan 1 --cells 4,3 --positions "$tmp/nan.npy"
bad outside 1 --cells 4,3 --positions "$tmp/outside.npy"
bad below 1 --cells 4,3 --positions "$tmp/below.npy"
bad zero-cells 2 --cells 4,0 --positions "$tmp/p2.npy"
bad bad-cells 2 --cells 4,x --positions "$tmp/p2.npy"
bad four-axes 2 --cells 2,2,2,2 --positions "$tmp/p2.npy"
bad lower-count 2 --cells 4,3 --lower 0 --positions "$tmp/p2.npy"
bad empty-box 2 --cells 4,3 --lower 0,1 --upper 4,1 --positions "$tmp/p2.npy"
bad inf-upper 2 --cells 4,3 --upper 4,inf --positions "$tmp/p2.npy"
bad unknown-backend 1 --cells 4,3 --positions "$tmp/p2.npy" --backend vulkan
bad unknown-option 2 --cells 4,3 --positions "$tmp/p2.npy" --frobnicate
bad no-positions 2 --cells 4,3
if "$partile" sort --cells 4,3 --positions "$tmp/p2.npy" >/dev/null 2>&1; then
    fail "no --out: exit status 0"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all passed"
exit 0
