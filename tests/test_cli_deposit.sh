#!/bin/sh
# `partile deposit` and `partile gather` end to end (reference backend):
#  - CIC deposits on 2-D and 3-D grids, periodic and not (stored index
#    i + 1 there), against an independent NumPy CIC (np.add.at), tol 1e-12;
#  - --sorted (partile_sort + partile_permute + the cell list) bitwise equal
#    to the unsorted deposit, for every shape and both centerings; --sorted
#    --order cell against NumPy too;
#  - NGP, TSC and OVERLAP: the deposit conserves the sum of the values;
#  - gather of a linear field: CIC and TSC reproduce it (up to rounding);
#  - bad input: each case exits non-zero, says why on stderr and writes
#    nothing.
# Usage: test_cli_deposit.sh path/to/partile
# Exit: 0 pass, 1 fail, 77 (skip) no Python with NumPy. $PYTHON picks one.
set -u

NAME=cli-deposit
# shellcheck source=tests/cli_test_lib.sh
. "$(dirname "$0")/cli_test_lib.sh"

# ---- inputs ------------------------------------------------------------------
# Grid 2-D: 5x4 cells on [-1, 1.5) x [0, 2). Grid 3-D: 3x4x5 on
# [-1, 2) x [0, 3) x [0.5, 4). Node points per axis: cells (periodic) or
# cells + 3 (not); cell points: cells or cells + 2.
"$py" - "$tmp" <<'EOF' || { echo "FAIL: could not write the inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20240612)
lo2, hi2 = np.array([-1.0, 0.0]), np.array([1.5, 2.0])
lo3, hi3 = np.array([-1.0, 0.0, 0.5]), np.array([2.0, 3.0, 4.0])
np.save(f"{d}/p2.npy", rng.uniform(lo2, hi2, (400, 2)))
np.save(f"{d}/v2.npy", rng.uniform(-1.0, 1.0, (400, 3)))
np.save(f"{d}/g2n.npy", rng.uniform(-1.0, 1.0, ((5 + 3) * (4 + 3), 3)))  # initial field
# 3-D periodic: some positions outside the box (they wrap)
np.save(f"{d}/p3w.npy", rng.uniform(lo3 - 3.0, hi3 + 3.0, (300, 3)))
np.save(f"{d}/v3.npy", rng.uniform(-2.0, 2.0, (300, 2)))
# 3-D non-periodic, float32 positions, 1-D values
np.save(f"{d}/p3f.npy", rng.uniform(lo3, hi3, (300, 3)).astype(np.float32))
np.save(f"{d}/v3s.npy", rng.uniform(-1.0, 1.0, 300))
np.save(f"{d}/p3.npy", rng.uniform(lo3, hi3, (300, 3)))
# OVERLAP widths: 0 < d <= the smallest spacing (0.5 in 2-D, 0.7 in 3-D)
np.save(f"{d}/d2.npy", rng.uniform(0.05, 0.5, 400))
np.save(f"{d}/d3.npy", rng.uniform(0.05, 0.7, 300))
# bad inputs
nan = np.load(f"{d}/p2.npy"); nan[7, 1] = np.nan
np.save(f"{d}/nan.npy", nan)
out = np.load(f"{d}/p2.npy"); out[9, 0] = 1.5                # upper edge: outside
np.save(f"{d}/outside.npy", out)
np.save(f"{d}/v2rows.npy", np.zeros((399, 3)))
np.save(f"{d}/v17.npy", np.zeros((400, 17)))
np.save(f"{d}/v2int.npy", np.zeros((400, 3), dtype=np.int64))
np.save(f"{d}/g2short.npy", np.zeros((8 * 7 - 1, 3)))         # one row short
np.save(f"{d}/g2cols.npy", np.zeros((8 * 7, 2)))               # 2 columns, values 3
np.save(f"{d}/d2big.npy", np.full(400, 0.75))                  # > spacing 0.5 on y
np.save(f"{d}/d2rows.npy", np.full(399, 0.25))
EOF

# run NAME SUBCOMMAND ARGS...: must succeed
# (sh has no locals: run_name, so that the caller's $name stays)
run() {
    run_name=$1
    shift
    expect_success "$run_name" "particles" "$@"
}

# ---- CIC deposit against NumPy -------------------------------------------------
# cic NAME POS VALUES LOWER UPPER CELLS PERIODIC INITIAL|- [grid args...]
cic() {
    name=$1 pos=$2 vals=$3 lower=$4 upper=$5 cells=$6 periodic=$7 init=$8
    shift 8
    initarg=
    [ "$init" != - ] && initarg="--grid $tmp/$init"
    # shellcheck disable=SC2086
    run "$name" deposit --backend reference --shape cic --positions "$tmp/$pos" \
        --values "$tmp/$vals" $initarg --out "$tmp/$name.npy" "$@" || return
    cat "$tmp/stdout"
    # shellcheck disable=SC2086
    run "$name-sorted" deposit --backend reference --shape cic --positions "$tmp/$pos" \
        --values "$tmp/$vals" $initarg --out "$tmp/$name-sorted.npy" --sorted "$@" || return
    cmp -s "$tmp/$name.npy" "$tmp/$name-sorted.npy" ||
        fail "$name: --sorted is not bitwise equal to the unsorted deposit"
    # shellcheck disable=SC2086
    run "$name-cell" deposit --backend reference --shape cic --positions "$tmp/$pos" \
        --values "$tmp/$vals" $initarg --out "$tmp/$name-cell.npy" --sorted --order cell "$@" ||
        return
    if ! "$py" - "$tmp" "$pos" "$vals" "$lower" "$upper" "$cells" "$periodic" "$init" "$name" <<'EOF'
import sys, numpy as np
d, pos, vals, lower, upper, cells, periodic, init, name = sys.argv[1:]
lower = np.array([float(v) for v in lower.split(",")])
upper = np.array([float(v) for v in upper.split(",")])
cells = np.array([int(v) for v in cells.split(",")])
periodic = periodic == "1"
x = np.load(f"{d}/{pos}").astype(np.float64)
v = np.load(f"{d}/{vals}")
one_d = v.ndim == 1
v2 = v[:, None] if one_d else v
dim, m = len(cells), v2.shape[1]
npts = cells if periodic else cells + 3          # node points per axis
h = (upper - lower) / cells
s = (x - lower) / h
j = np.floor(s).astype(np.int64)
xi = s - j
field = np.zeros((int(np.prod(npts)), m))
if init != "-":
    field += np.load(f"{d}/{init}").reshape(field.shape)
# every corner of the cell: offsets o in {0,1}^dim
for corner in range(1 << dim):
    o = np.array([(corner >> a) & 1 for a in range(dim)])
    idx = j + o
    idx = np.mod(idx, cells) if periodic else idx + 1    # stored index i + 1
    assert ((idx >= 0) & (idx < npts)).all()
    w = np.prod(np.where(o == 1, xi, 1.0 - xi), axis=1)
    g = np.zeros(len(x), dtype=np.int64)
    for a in reversed(range(dim)):                        # g = a + Px*(b + Py*c)
        g = g * npts[a] + idx[:, a]
    np.add.at(field, g, w[:, None] * v2)
want_shape = (field.shape[0],) if one_d else field.shape
scale = max(1.0, np.max(np.abs(field)))
for run in (name, name + "-cell"):   # the point order, then --sorted --order cell
    got = np.load(f"{d}/{run}.npy")
    assert got.dtype == np.float64 and got.shape == want_shape, f"{run}: {got.dtype} {got.shape}, want {want_shape}"
    got = got.reshape(field.shape)
    err = np.max(np.abs(got - field))
    assert err <= 1e-12 * scale, f"{run}: max |partile - numpy| = {err:.3g} (scale {scale:.3g})"
got = np.load(f"{d}/{name}.npy").reshape(field.shape)
err = np.max(np.abs(got - field))
assert np.allclose(got.sum(axis=0), v2.sum(axis=0) + (np.load(f"{d}/{init}").reshape(field.shape).sum(axis=0) if init != "-" else 0), atol=1e-11)
print(f"ok: {name}: {len(x)} particles, {field.shape[0]} points x {m}, max diff {err:.2g}")
EOF
    then
        fail "$name: the deposit does not match NumPy"
    fi
}

cic cic-2d-periodic p2.npy v2.npy -1,0 1.5,2 5,4 1 - \
    --cells 5,4 --lower -1,0 --upper 1.5,2 --periodic
cic cic-2d-ghost p2.npy v2.npy -1,0 1.5,2 5,4 0 g2n.npy \
    --cells 5,4 --lower -1,0 --upper 1.5,2
cic cic-3d-periodic p3w.npy v3.npy -1,0,0.5 2,3,4 3,4,5 1 - \
    --cells 3,4,5 --lower -1,0,0.5 --upper 2,3,4 --periodic
cic cic-3d-ghost-f32 p3f.npy v3s.npy -1,0,0.5 2,3,4 3,4,5 0 - \
    --cells 3,4,5 --lower -1,0,0.5 --upper 2,3,4

# ---- every shape: sorted = unsorted bitwise, and the sum is conserved ----------
# conserve NAME POS VALUES SHAPE [args...]
conserve() {
    name=$1 pos=$2 vals=$3 shape=$4
    shift 4
    run "$name" deposit --backend reference --shape "$shape" --positions "$tmp/$pos" \
        --values "$tmp/$vals" --out "$tmp/$name.npy" "$@" || return
    run "$name" deposit --backend reference --shape "$shape" --positions "$tmp/$pos" \
        --values "$tmp/$vals" --out "$tmp/$name-sorted.npy" --sorted "$@" || return
    cmp -s "$tmp/$name.npy" "$tmp/$name-sorted.npy" ||
        fail "$name: --sorted is not bitwise equal to the unsorted deposit"
    "$py" - "$tmp/$vals" "$tmp/$name.npy" "$name" <<'EOF' || fail "$name: sum not conserved"
import sys, numpy as np
v, f, name = np.load(sys.argv[1]), np.load(sys.argv[2]), sys.argv[3]
err = np.max(np.abs(v.sum(axis=0) - f.sum(axis=0)))
assert err < 1e-11, f"sum of the field differs from the sum of the values by {err:.3g}"
print(f"ok: {name}: sorted = unsorted bitwise, sum conserved ({err:.2g})")
EOF
}

g2="--cells 5,4 --lower -1,0 --upper 1.5,2"
g3="--cells 3,4,5 --lower -1,0,0.5 --upper 2,3,4"
for shape in ngp cic tsc overlap; do
    for centering in node cell; do
        s2= s3=
        [ "$shape" = overlap ] && s2="--sizes $tmp/d2.npy" s3="--sizes $tmp/d3.npy"
        # shellcheck disable=SC2086
        conserve "$shape-$centering-2d-periodic" p2.npy v2.npy "$shape" $g2 --periodic \
            --centering "$centering" $s2
        # shellcheck disable=SC2086
        conserve "$shape-$centering-3d-ghost" p3.npy v3s.npy "$shape" $g3 \
            --centering "$centering" $s3
    done
done

# ---- gather of a linear field --------------------------------------------------
# linear NAME POS LOWER UPPER CELLS CENTERING SHAPE M1D [grid args...]
# (non-periodic grid; M1D: "1" writes the field as (points,))
linear() {
    name=$1 pos=$2 lower=$3 upper=$4 cells=$5 centering=$6 shape=$7 m1d=$8
    shift 8
    "$py" - "$tmp" "$lower" "$upper" "$cells" "$centering" "$m1d" "$name" <<'EOF' ||
import sys, numpy as np
d, lower, upper, cells, centering, m1d, name = sys.argv[1:]
lower = np.array([float(v) for v in lower.split(",")])
upper = np.array([float(v) for v in upper.split(",")])
cells = np.array([int(v) for v in cells.split(",")])
h = (upper - lower) / cells
npts = cells + (3 if centering == "node" else 2)
off = 0.0 if centering == "node" else 0.5
# point coordinates, stored index k is point i = k - 1; x fastest
axes = [lower[a] + (np.arange(npts[a]) - 1 + off) * h[a] for a in range(len(cells))]
mesh = np.meshgrid(*axes, indexing="ij")
coords = np.stack([c.ravel(order="F") for c in mesh], axis=1)   # (points, dim)
coef = np.array([[0.5, 2.0, -1.0, 0.25][: len(cells) + 1], [-3.0, 0.5, 1.5, -2.0][: len(cells) + 1]])
f = coef[:, :1].T + coords @ coef[:, 1:].T                       # (points, 2)
np.save(f"{d}/{name}-grid.npy", f[:, 0] if m1d == "1" else f)
np.save(f"{d}/{name}-coef.npy", coef)
EOF
    { fail "$name: could not write the field"; return; }
    run "$name" gather --backend reference --shape "$shape" --centering "$centering" \
        --positions "$tmp/$pos" --grid "$tmp/$name-grid.npy" --out "$tmp/$name.npy" "$@" ||
        return
    "$py" - "$tmp" "$pos" "$name" "$m1d" <<'EOF' || fail "$name: gather does not reproduce the linear field"
import sys, numpy as np
d, pos, name, m1d = sys.argv[1:]
x = np.load(f"{d}/{pos}").astype(np.float64)
coef = np.load(f"{d}/{name}-coef.npy")
want = coef[:, :1].T + x @ coef[:, 1:].T
if m1d == "1":
    want = want[:, 0]
got = np.load(f"{d}/{name}.npy")
assert got.dtype == np.float64 and got.shape == want.shape, f"{got.dtype} {got.shape}, want {want.shape}"
err = np.max(np.abs(got - want))
assert err <= 1e-12 * max(1.0, np.max(np.abs(want))), f"max |gather - linear| = {err:.3g}"
print(f"ok: {name}: {len(x)} particles, max diff {err:.2g}")
EOF
}

for centering in node cell; do
    for shape in cic tsc; do
        # shellcheck disable=SC2086
        linear "gather-$shape-$centering-2d" p2.npy -1,0 1.5,2 5,4 "$centering" "$shape" 0 $g2
        # shellcheck disable=SC2086
        linear "gather-$shape-$centering-3d" p3f.npy -1,0,0.5 2,3,4 3,4,5 "$centering" \
            "$shape" 1 $g3
    done
done

# ---- runs that must fail -------------------------------------------------------
# bad NAME WANT_STATUS SUBCOMMAND [PATTERN|-] args... ("any" = any non-zero status)
bad() {
    bname=$1 bwant=$2 bcmd=$3 bpattern=$4
    shift 4
    expect_failure "$bcmd" "$tmp/bad-$bname.npy" "$bname" "$bwant" "$bpattern" --backend reference "$@"
}

P2="--positions $tmp/p2.npy"
V2="--values $tmp/v2.npy"
# shellcheck disable=SC2086
{
bad missing-values 2 deposit "missing --values" $g2 $P2 --shape cic
bad missing-shape 2 deposit "missing --shape" $g2 $P2 $V2
bad order 2 deposit "--order needs point or cell" $g2 $P2 $V2 --shape cic --sorted --order z
bad grid-rows 1 deposit "grid has 55 rows, the field needs 56 points" $g2 $P2 $V2 --shape cic \
    --grid "$tmp/g2short.npy"
bad grid-columns 1 deposit "columns" $g2 $P2 $V2 --shape cic --grid "$tmp/g2cols.npy"
bad overlap-no-sizes 2 deposit "needs --sizes" $g2 $P2 $V2 --shape overlap
bad sizes-for-cic 2 deposit "only for --shape overlap" $g2 $P2 $V2 --shape cic \
    --sizes "$tmp/d2.npy"
bad sizes-rows 1 deposit "sizes have shape" $g2 $P2 $V2 --shape overlap --sizes "$tmp/d2rows.npy"
bad sizes-too-big 1 deposit "OVERLAP size" $g2 $P2 $V2 --shape overlap --sizes "$tmp/d2big.npy"
bad sizes-too-big-sorted 1 deposit "of the sorted order is particle" $g2 $P2 $V2 \
    --shape overlap --sizes "$tmp/d2big.npy" --sorted
bad nan 1 deposit "particle 7" $g2 --positions "$tmp/nan.npy" $V2 --shape cic
bad nan-sorted 1 deposit "particle 7" $g2 --positions "$tmp/nan.npy" $V2 --shape cic --sorted
bad outside 1 deposit "particle 9" $g2 --positions "$tmp/outside.npy" $V2 --shape tsc
bad values-rows 1 deposit "399 rows" $g2 $P2 --values "$tmp/v2rows.npy" --shape cic
bad values-17 1 deposit "1 to 16" $g2 $P2 --values "$tmp/v17.npy" --shape cic
bad values-int 1 deposit "float64" $g2 $P2 --values "$tmp/v2int.npy" --shape cic
bad values-missing-file 1 deposit - $g2 $P2 --values "$tmp/none.npy" --shape cic
bad shape-name 2 deposit "ngp, cic, tsc or overlap" $g2 $P2 $V2 --shape quadratic
bad centering-name 2 deposit "node or cell" $g2 $P2 $V2 --shape cic --centering edge
bad zero-cells 2 deposit - --cells 5,0 $P2 $V2 --shape cic
bad positions-3-axes 1 deposit - $g3 $P2 $V2 --shape cic
bad unknown-backend 1 deposit - $g2 $P2 $V2 --shape cic --backend vulkan
bad gather-missing-grid 2 gather "missing --grid" $g2 $P2 --shape cic
bad gather-grid-rows 1 gather "grid has 55 rows, the field needs 56 points" $g2 $P2 \
    --shape cic --grid "$tmp/g2short.npy"
bad gather-nan 1 gather "particle 7" $g2 --positions "$tmp/nan.npy" --shape cic \
    --grid "$tmp/g2n.npy"
bad gather-sorted 2 gather "unknown" $g2 $P2 --shape cic --grid "$tmp/g2n.npy" --sorted
bad gather-values 2 gather "unknown" $g2 $P2 --shape cic --grid "$tmp/g2n.npy" $V2
bad gather-overlap-no-sizes 2 gather "needs --sizes" $g2 $P2 --shape overlap \
    --grid "$tmp/g2n.npy"
}

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all passed"
exit 0
