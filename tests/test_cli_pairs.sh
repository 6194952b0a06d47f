#!/bin/sh
# `partile pairs` end to end (reference backend, and --backend auto):
#  - LJ force and energy (shifted and not) and SPH density on 1-D, 2-D and
#    3-D boxes, periodic (positions also outside the box: they wrap) and not,
#    against an independent NumPy all-pairs computation with the minimum
#    image and the formulas of include/partile/pairs.h (SPH cubic spline,
#    normalised 2/(3h), 10/(7 pi h^2), 1/(pi h^3); the self term m W(0)),
#    to 1e-10 relative (per particle, to the sum of |terms|) in FP64 and
#    1e-5 in FP32 (the differences taken in FP32, as pairs.h specifies);
#    outputs in the positions' dtype and shapes, the summary's total;
#  - results in the input order: a shuffle that keeps each cell's order gives
#    bitwise the same outputs, permuted alike; any shuffle gives them to 1e-12;
#  - bad input: each case exits non-zero, says why on stderr and writes
#    nothing (not even the output folder).
# Usage: test_cli_pairs.sh path/to/partile
# Exit: 0 pass, 1 fail, 77 (skip) no Python with NumPy. $PYTHON picks one.
set -u

NAME=cli-pairs
# shellcheck source=tests/cli_test_lib.sh
. "$(dirname "$0")/cli_test_lib.sh"

# ---- inputs ------------------------------------------------------------------
# 2-D box [-1, 2.5) x [0, 4.2); 3-D box [-1, 2.5) x [0, 3.1) x [0.5, 3.9);
# 1-D box [0, 10). Cutoff 1 (LJ), 0.8 (SPH, h 0.4).
"$py" - "$tmp" <<'EOF' || { echo "FAIL: could not write the inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20240911)
lo1, hi1 = np.array([0.0]), np.array([10.0])
lo2, hi2 = np.array([-1.0, 0.0]), np.array([2.5, 4.2])
lo3, hi3 = np.array([-1.0, 0.0, 0.5]), np.array([2.5, 3.1, 3.9])
n1, n2, n3 = 60, 400, 500
np.save(f"{d}/p1.npy", rng.uniform(lo1, hi1, (n1, 1)))
np.save(f"{d}/p2.npy", rng.uniform(lo2, hi2, (n2, 2)))
np.save(f"{d}/p2w.npy", rng.uniform(lo2 - 3.0, hi2 + 3.0, (n2, 2)))   # periodic: wraps
np.save(f"{d}/p3.npy", rng.uniform(lo3, hi3, (n3, 3)))
np.save(f"{d}/p3w.npy", rng.uniform(lo3 - 2.0, hi3 + 2.0, (n3, 3)))
np.save(f"{d}/p2f.npy", rng.uniform(lo2, hi2, (n2, 2)).astype(np.float32))
np.save(f"{d}/p3f.npy", rng.uniform(lo3, hi3, (n3, 3)).astype(np.float32))
# the same particles in another order: any order (perm_any), and one that
# keeps the order of the particles of each cell (perm_cell: whole cells move)
p3 = np.load(f"{d}/p3.npy")
perm_any = rng.permutation(n3)
cells = np.floor((p3 - lo3) / ((hi3 - lo3) / np.floor((hi3 - lo3) / 1.0))).astype(np.int64)
cid = cells[:, 0] + 100 * (cells[:, 1] + 100 * cells[:, 2])
key = rng.permutation(cid.max() + 1)[cid]
perm_cell = np.argsort(key, kind="stable")
assert not np.array_equal(perm_cell, np.arange(n3))
np.save(f"{d}/perm_any.npy", perm_any)
np.save(f"{d}/perm_cell.npy", perm_cell)
np.save(f"{d}/p3s.npy", p3[perm_any])
np.save(f"{d}/p3c.npy", p3[perm_cell])
# bad inputs
nan = np.load(f"{d}/p2.npy"); nan[11, 0] = np.nan
np.save(f"{d}/nan.npy", nan)
out = np.load(f"{d}/p2.npy"); out[13, 1] = 4.2                     # upper edge: outside
np.save(f"{d}/outside.npy", out)
same = np.load(f"{d}/p2.npy"); same[17] = same[5]                   # LJ at r = 0
np.save(f"{d}/same.npy", same)
np.save(f"{d}/p2int.npy", np.zeros((n2, 2), dtype=np.int64))
EOF

# run NAME ARGS...: `partile pairs ARGS` must succeed
run() {
    run_name=$1
    shift
    expect_success "$run_name" "total.*particles.*cells.*backend.*ms" pairs "$@"
}

# ---- against NumPy -------------------------------------------------------------
# check NAME POS BOX PERIODIC lj CUTOFF EPS SIGMA SHIFTED
# check NAME POS BOX PERIODIC sph CUTOFF H MASS -
check() {
    name=$1 pos=$2 box=$3 periodic=$4 inter=$5 rc=$6 a=$7 b=$8 shifted=$9
    perarg= params=
    [ "$periodic" = 1 ] && perarg=--periodic
    if [ "$inter" = lj ]; then
        params="--epsilon $a --sigma $b"
        [ "$shifted" = 1 ] && params="$params --shifted"
    else
        params="--h $a --mass $b"
    fi
    # shellcheck disable=SC2086
    run "$name" --backend reference --interaction "$inter" --cutoff "$rc" $params --box "$box" \
        $perarg --positions "$tmp/$pos" --out "$tmp/$name" || return
    cat "$tmp/stdout"
    if ! "$py" - "$tmp" "$pos" "$box" "$periodic" "$inter" "$rc" "$a" "$b" "$shifted" \
        "$name" "$tmp/stdout" <<'EOF'
import sys, re, numpy as np
d, pos, box, periodic, inter, rc, a, b, shifted, name, summary = sys.argv[1:]
box = np.array([float(v) for v in box.split(",")])
dim = len(box) // 2
lower, upper = box[:dim], box[dim:]
length = upper - lower
periodic, rc, lj, shifted = periodic == "1", float(rc), inter == "lj", shifted == "1"
x = np.load(f"{d}/{pos}")
f32 = x.dtype == np.float32
x = x.reshape(len(x), dim)
n = len(x)

# all pairs (i, j), i != j: d_ij = x_i - x_j, minimum image on periodic axes.
# FP32 positions: the difference and the image in FP32 (pairs.h), the rest in FP64.
T = np.float32 if f32 else np.float64
L = length.astype(T)
dx = x[:, None, :] - x[None, :, :]                    # (n, n, dim), in T
if periodic:
    dx = dx - L * np.rint(dx / L)
# the cutoff test r^2 < r_c^2 in T, r^2 = (d_x^2 + d_y^2) + d_z^2 (pairs.h)
r2t = dx[:, :, 0] * dx[:, :, 0]
for k in range(1, dim):
    r2t = r2t + dx[:, :, k] * dx[:, :, k]
off = ~np.eye(n, dtype=bool)
inside = off & (r2t < T(rc) * T(rc))
dx = dx.astype(np.float64)
r2 = np.sum(dx * dx, axis=2)
if not f32:
    # no pair so close to the cutoff that its rounding could decide
    assert not (off & (np.abs(r2 - rc * rc) < 1e-12 * rc * rc)).any(), "a pair at the cutoff: change the seed"
npairs = int(inside.sum()) // 2
assert npairs > 0

if lj:
    eps, sig = float(a), float(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s6 = (sig * sig / r2) ** 3
        s12 = s6 * s6
        fs = np.where(inside, 24 * eps * (2 * s12 - s6) / r2, 0.0)
        sr6 = (sig / rc) ** 6
        shift = 4 * eps * (sr6 * sr6 - sr6) if shifted else 0.0
        e = np.where(inside, 4 * eps * (s12 - s6) - shift, 0.0)
    fterm = fs[:, :, None] * dx                           # (n, n, dim)
    want = {"force": fterm.sum(axis=1), "energy": 0.5 * e.sum(axis=1)}
    scale = {"force": np.abs(fterm).sum(axis=1), "energy": 0.5 * np.abs(e).sum(axis=1)}
    shapes = {"force": (n, dim), "energy": (n,)}
else:
    h, m = float(a), float(b)
    norm = {1: 2 / (3 * h), 2: 10 / (7 * np.pi * h * h), 3: 1 / (np.pi * h ** 3)}[dim]
    q = np.sqrt(np.where(inside, r2, 0.0)) / h
    w = np.where(q < 1, norm * (1 - 1.5 * q ** 2 + 0.75 * q ** 3),
                 np.where(q < 2, norm * 0.25 * (2 - q) ** 3, 0.0))
    w = np.where(inside, w, 0.0)
    rho = m * norm + m * w.sum(axis=1)                    # self term m W(0) = m norm
    want = {"density": rho}
    scale = {"density": np.abs(rho)}
    shapes = {"density": (n,)}

tol = 1e-5 if f32 else 1e-10
worst = 0.0
for key in want:
    got = np.load(f"{d}/{name}/{key}.npy")
    assert got.dtype == (np.float32 if f32 else np.float64), f"{key}.npy is {got.dtype}, want {x.dtype}"
    assert got.shape == shapes[key], f"{key}.npy has shape {got.shape}, want {shapes[key]}"
    assert np.isfinite(got).all(), f"{key}.npy: not finite"
    err = np.abs(got.astype(np.float64) - want[key])
    lim = tol * np.maximum(scale[key], np.finfo(np.float64).tiny)
    # particles without neighbours: force and energy exactly 0
    bad = np.nonzero(err > lim)
    assert len(bad[0]) == 0, (f"{key}: {len(bad[0])} values beyond {tol:g} relative, first at "
                              f"{tuple(int(v[0]) for v in bad)}: {got[bad][0]!r} vs {want[key][bad][0]!r}")
    worst = max(worst, float(np.max(err / np.maximum(scale[key], 1e-300))))
# the summary's total: sum of energy (LJ) or density (SPH)
tot_key = "energy" if lj else "density"
mt = re.search(r"total \w+ (\S+), ", open(summary).read())
assert mt, "no total in the summary"
total = float(mt.group(1))
ref = want[tot_key].sum()
assert abs(total - ref) <= tol * max(np.abs(want[tot_key]).sum(), 1e-300) + (1e-5 if f32 else 1e-12) * scale[tot_key].sum(), \
    f"summary total {total!r}, numpy {ref!r}"
print(f"ok: {name}: {n} particles, {npairs} pairs, max rel diff {worst:.2g}, total {total:.6g}")
EOF
    then
        fail "$name: does not match NumPy"
    fi
}

B1=0,10
B2=-1,0,2.5,4.2
B3=-1,0,0.5,2.5,3.1,3.9
# LJ: sigma 0.35 and cutoff 1 (cutoff about 2.9 sigma)
check lj-2d-box p2.npy $B2 0 lj 1 1.5 0.35 0
check lj-2d-box-shifted p2.npy $B2 0 lj 1 1.5 0.35 1
check lj-2d-periodic p2w.npy $B2 1 lj 1 1.5 0.35 0
check lj-2d-periodic-shifted p2w.npy $B2 1 lj 1 0.7 0.35 1
check lj-3d-box p3.npy $B3 0 lj 1 1 0.3 0
check lj-3d-box-shifted p3.npy $B3 0 lj 1 1 0.3 1
check lj-3d-periodic p3w.npy $B3 1 lj 1 2 0.3 0
check lj-3d-periodic-shifted p3w.npy $B3 1 lj 1 2 0.3 1
check lj-1d-periodic p1.npy $B1 1 lj 1 1 0.2 1
check lj-2d-f32 p2f.npy $B2 1 lj 1 1.5 0.35 1
check lj-3d-f32 p3f.npy $B3 0 lj 1 1 0.3 0
# SPH: h 0.4, support 0.8 = cutoff; and a cutoff wider than the support
check sph-2d-box p2.npy $B2 0 sph 0.8 0.4 1.7 -
check sph-2d-periodic p2w.npy $B2 1 sph 0.8 0.4 1.7 -
check sph-3d-box p3.npy $B3 0 sph 0.8 0.4 0.25 -
check sph-3d-periodic p3w.npy $B3 1 sph 1 0.4 0.25 -
check sph-1d-box p1.npy $B1 0 sph 1 0.5 2 -
check sph-3d-f32 p3f.npy $B3 1 sph 0.8 0.4 0.25 -

# ---- results in the input order; explicit defaults; --backend auto -----------------
LJ3="--interaction lj --cutoff 1 --epsilon 1 --sigma 0.3 --shifted --box $B3"
SPH3="--interaction sph --cutoff 1 --h 0.4 --mass 0.25 --box $B3"   # the grid of LJ3
# shellcheck disable=SC2086
{
run order-lj --backend reference $LJ3 --positions "$tmp/p3.npy" --out "$tmp/order-lj" &&
run order-lj-any --backend reference $LJ3 --positions "$tmp/p3s.npy" --out "$tmp/order-lj-any" &&
run order-lj-cell --backend reference $LJ3 --positions "$tmp/p3c.npy" --out "$tmp/order-lj-cell" &&
run order-sph --backend reference $SPH3 --positions "$tmp/p3.npy" --out "$tmp/order-sph" &&
run order-sph-any --backend reference $SPH3 --positions "$tmp/p3s.npy" --out "$tmp/order-sph-any" &&
run order-sph-cell --backend reference $SPH3 --positions "$tmp/p3c.npy" --out "$tmp/order-sph-cell" &&
run explicit-defaults --backend reference $LJ3 --strategy naive --positions "$tmp/p3.npy" \
    --out "$tmp/order-naive" &&
run strategy-auto --backend reference $LJ3 --strategy auto --positions "$tmp/p3.npy" \
    --out "$tmp/order-auto-strategy" &&
run strategy-all-in-sm $LJ3 --strategy all-in-sm --positions "$tmp/p3.npy" \
    --out "$tmp/order-all-in-sm" &&
run strategy-x-pencil $LJ3 --strategy x-pencil --positions "$tmp/p3.npy" \
    --out "$tmp/order-x-pencil" &&
run strategy-x-pencil-reg $LJ3 --strategy x-pencil-reg --positions "$tmp/p3.npy" \
    --out "$tmp/order-x-pencil-reg" &&
run auto $LJ3 --positions "$tmp/p3.npy" --out "$tmp/order-auto"
}
for f in force energy; do
    for o in order-naive order-auto-strategy order-auto order-all-in-sm order-x-pencil \
        order-x-pencil-reg; do
        cmp -s "$tmp/order-lj/$f.npy" "$tmp/$o/$f.npy" || fail "$o: $f.npy differs from the defaults"
    done
done
if grep -q "note: --backend auto picked" "$tmp/stderr"; then
    echo "ok: --backend auto fell back to the reference: $(cat "$tmp/stderr")"
fi
"$py" - "$tmp" <<'EOF' || fail "shuffled particles give other results"
import sys, numpy as np
d = sys.argv[1]
perm_any, perm_cell = np.load(f"{d}/perm_any.npy"), np.load(f"{d}/perm_cell.npy")
for inter, keys in (("lj", ("force", "energy")), ("sph", ("density",))):
    for key in keys:
        a = np.load(f"{d}/order-{inter}/{key}.npy")
        # cells moved whole: the sorted order is the same, the results bitwise
        c = np.load(f"{d}/order-{inter}-cell/{key}.npy")
        assert np.array_equal(c, a[perm_cell]), f"{inter} {key}: cell-order shuffle not bitwise"
        # any order: the order inside a cell changes, so may the roundings
        s = np.load(f"{d}/order-{inter}-any/{key}.npy")
        err = np.max(np.abs(s - a[perm_any]))
        assert err <= 1e-12 * np.max(np.abs(a)), f"{inter} {key}: max diff {err:.3g}"
        assert not np.array_equal(s, a), f"{inter} {key}: output not permuted"
        print(f"ok: shuffled input, {inter} {key}: permuted alike (cell-order bitwise, "
              f"any order max diff {err:.2g})")
EOF

# ---- runs that must fail ---------------------------------------------------------
# bad NAME WANT_STATUS PATTERN|- args... ("any" = any non-zero status)
bad() { expect_failure pairs "$tmp/bad-$1" "$@"; }

R="--backend reference"
P2="--positions $tmp/p2.npy"
LJ="--interaction lj --epsilon 1 --sigma 0.3"
SPH="--interaction sph --h 0.4 --mass 1"
# shellcheck disable=SC2086
{
bad missing-cutoff 2 "missing --cutoff" $R $LJ --box $B2 $P2
bad missing-box 2 "missing --box" $R $LJ --cutoff 1 $P2
bad missing-interaction 2 "missing --interaction" $R --cutoff 1 --box $B2 $P2
bad sph-no-h 2 "needs --h" $R --interaction sph --mass 1 --cutoff 1 --box $B2 $P2
bad sph-no-mass 2 "needs --h H and --mass M" $R --interaction sph --h 0.4 --cutoff 1 --box $B2 $P2
bad lj-no-sigma 2 "needs --epsilon E and --sigma S" $R --interaction lj --epsilon 1 --cutoff 1 \
    --box $B2 $P2
bad lj-with-h 2 "--h is only for --interaction sph" $R $LJ --h 0.4 --cutoff 1 --box $B2 $P2
bad sph-with-epsilon 2 "--epsilon is only for --interaction lj" $R $SPH --epsilon 1 --cutoff 1 \
    --box $B2 $P2
bad sph-shifted 2 "--shifted is only for --interaction lj" $R $SPH --shifted --cutoff 1 \
    --box $B2 $P2
bad interaction-name 2 "lj or sph" $R --interaction coulomb --cutoff 1 --box $B2 $P2
bad strategy-name 2 "--strategy needs" $R $LJ --cutoff 1 --box $B2 $P2 --strategy fastest
bad cutoff-zero 2 "--cutoff needs a number > 0" $R $LJ --cutoff 0 --box $B2 $P2
bad cutoff-nan 2 "--cutoff needs a finite number" $R $LJ --cutoff nan --box $B2 $P2
bad box-odd 2 "--box needs" $R $LJ --cutoff 1 --box -1,0,2.5 $P2
bad box-empty-axis 2 "upper corner must lie above" $R $LJ --cutoff 1 --box 0,0,2,0 $P2
bad cells-given 2 "not for pairs" $R $LJ --cutoff 1 --box $B2 --cells 3,4 $P2
bad nan 1 "particle 11" $R $LJ --cutoff 1 --box $B2 --positions "$tmp/nan.npy"
bad nan-periodic 1 "particle 11" $R $SPH --cutoff 1 --box $B2 --periodic \
    --positions "$tmp/nan.npy"
bad outside 1 "particle 13" $R $LJ --cutoff 1 --box $B2 --positions "$tmp/outside.npy"
bad periodic-2-cells 1 "needs at least 3" $R $LJ --cutoff 1.5 --box $B2 --periodic $P2
bad sph-support 1 "2h <= cutoff" $R --interaction sph --h 0.6 --mass 1 --cutoff 1 --box $B2 $P2
bad lj-same-position 1 "particle 17 is at the same position" $R $LJ --cutoff 1 --box $B2 \
    --positions "$tmp/same.npy"
bad lj-overflow 1 "may overflow" $R --interaction lj --epsilon 1e308 --sigma 0.9 --cutoff 1 \
    --box $B2 $P2
bad sigma-zero 1 "sigma > 0" $R --interaction lj --epsilon 1 --sigma 0 --cutoff 1 --box $B2 $P2
bad positions-3-axes 1 "need (Np, 3)" $R $LJ --cutoff 1 --box $B3 $P2
bad positions-int 1 "float64 or float32" $R $LJ --cutoff 1 --box $B2 --positions "$tmp/p2int.npy"
bad positions-missing-file 1 - $R $LJ --cutoff 1 --box $B2 --positions "$tmp/none.npy"
bad unknown-option 2 "unknown" $R $LJ --cutoff 1 --box $B2 $P2 --sorted
bad unknown-backend 1 - --backend vulkan $LJ --cutoff 1 --box $B2 $P2
}
# --out is a file: the directory cannot be made
: >"$tmp/a-file"
# shellcheck disable=SC2086
if "$partile" pairs $R $LJ --cutoff 1 --box $B2 $P2 --out "$tmp/a-file" \
    >/dev/null 2>"$tmp/stderr"; then
    fail "out-is-a-file: exit status 0"
elif ! grep -q "not a directory" "$tmp/stderr"; then
    fail "out-is-a-file: $(cat "$tmp/stderr")"
else
    echo "ok (out-is-a-file): $(head -n 1 "$tmp/stderr")"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all passed"
exit 0
