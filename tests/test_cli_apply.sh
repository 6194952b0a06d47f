#!/bin/sh
# `partile apply` end to end (reference backend, and --backend auto):
#  - y = M x, matrix-free and assembled, scalar and tensor, CIC and TSC, 2-D
#    and 3-D grids, periodic (positions also outside the box: they wrap) and
#    not (ghost layer), float64 and float32 positions, sigma != 1: against
#    an independent NumPy computation y = sigma sum_p W_p (c_p (W_p^T x))
#    with the weights of include/partile/deposit.h and alpha of
#    include/partile/mass.h, to 1e-12 relative (FP64), 1e-5 (--precision
#    fp32, float32 output);
#  - the particles' order does not matter (shuffled input: the same y to
#    rounding; matfree and assembled agree to 1e-13);
#  - bad input: each case exits non-zero, says why on stderr and writes no
#    output file.
# Usage: test_cli_apply.sh path/to/partile
# Exit: 0 pass, 1 fail, 77 (skip) no Python with NumPy. $PYTHON picks one.
set -u

NAME=cli-apply
# shellcheck source=tests/cli_test_lib.sh
. "$(dirname "$0")/cli_test_lib.sh"

# ---- inputs ------------------------------------------------------------------
# 2-D: 5x6 cells on [-1, 1.5) x [0, 3); 3-D: 5x5x6 on [-1, 1.5) x [0, 2.5) x
# [0.5, 3.5). x for each grid: non-periodic node points (cells + 3 per axis)
# and periodic (cells per axis), scalar (P,) and tensor (P, 3).
"$py" - "$tmp" <<'EOF' || { echo "FAIL: could not write the inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261130)
lo2, hi2 = np.array([-1.0, 0.0]), np.array([1.5, 3.0])
lo3, hi3 = np.array([-1.0, 0.0, 0.5]), np.array([1.5, 2.5, 3.5])
n2, n3 = 300, 400
np.save(f"{d}/p2.npy", rng.uniform(lo2, hi2, (n2, 2)))
np.save(f"{d}/p2w.npy", rng.uniform(lo2 - 2.0, hi2 + 2.0, (n2, 2)))
np.save(f"{d}/q2.npy", rng.uniform(-1.0, 2.0, n2))
np.save(f"{d}/w2.npy", rng.normal(0.0, 1.5, (n2, 3)))
np.save(f"{d}/p3.npy", rng.uniform(lo3, hi3, (n3, 3)))
np.save(f"{d}/p3w.npy", rng.uniform(lo3 - 1.0, hi3 + 1.0, (n3, 3)))
np.save(f"{d}/p3f.npy", rng.uniform(lo3, hi3, (n3, 3)).astype(np.float32))
np.save(f"{d}/q3.npy", rng.uniform(0.5, 1.5, n3))
np.save(f"{d}/w3.npy", rng.normal(0.0, 0.8, (n3, 3)))
for name, P in (("x2n", 8 * 9), ("x2p", 5 * 6), ("x3n", 8 * 8 * 9), ("x3p", 5 * 5 * 6)):
    np.save(f"{d}/{name}s.npy", rng.uniform(-1.0, 1.0, P))
    np.save(f"{d}/{name}t.npy", rng.uniform(-1.0, 1.0, (P, 3)))
perm = rng.permutation(n2)
np.save(f"{d}/p2s.npy", np.load(f"{d}/p2.npy")[perm])
np.save(f"{d}/q2s.npy", np.load(f"{d}/q2.npy")[perm])
np.save(f"{d}/w2s.npy", np.load(f"{d}/w2.npy")[perm])
# bad inputs
nan = np.load(f"{d}/p2.npy"); nan[11, 0] = np.nan
np.save(f"{d}/nan.npy", nan)
np.save(f"{d}/x2n_rows.npy", np.zeros(8 * 9 - 1))
np.save(f"{d}/x2n_cols.npy", np.zeros((8 * 9, 2)))
np.save(f"{d}/x2n_int.npy", np.zeros(8 * 9, dtype=np.int64))
np.save(f"{d}/q2rows.npy", np.zeros(n2 + 1))
big = np.load(f"{d}/q2.npy"); big[13] = 1e39                       # finite, not in float32
np.save(f"{d}/q2big.npy", big)
big = np.load(f"{d}/w2.npy"); big[21, 2] = -4e38
np.save(f"{d}/w2big.npy", big)
big = np.load(f"{d}/x2ns.npy"); big[40] = 3.5e38
np.save(f"{d}/x2nbig.npy", big)
open(f"{d}/garbage.npy", "w").write("not a numpy file\n")
with open(f"{d}/x2n_trunc.npy", "wb") as f:
    f.write(open(f"{d}/x2ns.npy", "rb").read()[:-8])
EOF

# run NAME ARGS...: `partile apply ARGS` must succeed
run() {
    run_name=$1
    shift
    expect_success "$run_name" "particles.*points.*mode.*backend.*ms" apply "$@"
}

# check NAME POS Q OMEGA|- X SHAPE KIND LOWER UPPER CELLS PERIODIC SIGMA MODE PREC [args...]
check() {
    name=$1 pos=$2 q=$3 om=$4 x=$5 shape=$6 kind=$7 lower=$8 upper=$9
    shift 9
    cells=$1 periodic=$2 sigma=$3 mode=$4 prec=$5
    shift 5
    omarg= perarg=
    [ "$om" != - ] && omarg="--omega $tmp/$om"
    [ "$periodic" = 1 ] && perarg=--periodic
    # shellcheck disable=SC2086
    run "$name" --shape "$shape" --kind "$kind" --cells "$cells" \
        --lower "$lower" --upper "$upper" $perarg --positions "$tmp/$pos" \
        --charges "$tmp/$q" $omarg --sigma "$sigma" --mode "$mode" --precision "$prec" \
        --x "$tmp/$x" --out "$tmp/$name.npy" "$@" || return
    cat "$tmp/stdout"
    if ! "$py" - "$tmp" "$pos" "$q" "$om" "$x" "$shape" "$kind" "$lower" "$upper" "$cells" \
        "$periodic" "$sigma" "$prec" "$name" <<'EOF'
import sys, numpy as np
d, pos, qf, om, xf, shape, kind, lower, upper, cells, periodic, sigma, prec, name = sys.argv[1:]
lower = np.array([float(v) for v in lower.split(",")])
upper = np.array([float(v) for v in upper.split(",")])
cells = np.array([int(v) for v in cells.split(",")])
periodic, sigma, tensor = periodic == "1", float(sigma), kind == "tensor"
x = np.load(f"{d}/{pos}").astype(np.float64)
q = np.load(f"{d}/{qf}")
xv = np.load(f"{d}/{xf}")
n, dim = x.shape
npts = cells if periodic else cells + 3
h = (upper - lower) / cells
s = (x - lower) / h
if shape == "cic":
    j = np.floor(s); xi = s - j; first = j
    w1 = np.stack([1.0 - xi, xi], axis=2)
else:
    k = np.floor(s + 0.5); dl = s - k; first = k - 1
    w1 = np.stack([0.5 * (0.5 - dl) ** 2, 0.75 - dl ** 2, 0.5 * (0.5 + dl) ** 2], axis=2)
first = first.astype(np.int64)
S = w1.shape[2]
if tensor:
    w = np.load(f"{d}/{om}")
    C = np.zeros((n, 3, 3))
    C[:, 0, 1], C[:, 0, 2] = -w[:, 2], w[:, 1]
    C[:, 1, 0], C[:, 1, 2] = w[:, 2], -w[:, 0]
    C[:, 2, 0], C[:, 2, 1] = -w[:, 1], w[:, 0]
    coef = q[:, None, None] * (np.eye(3)[None] - C + w[:, :, None] * w[:, None, :]) / (1.0 + (w * w).sum(1))[:, None, None]
    X = xv.reshape(-1, 3)
else:
    coef = q[:, None, None]
    X = xv.reshape(-1, 1)
# y = sigma sum_p W_p coef_p (W_p^T x)
pts, wts = [], []
for t in np.ndindex(*([S] * dim)):
    g = np.zeros(n, dtype=np.int64); wt = np.ones(n)
    for a in reversed(range(dim)):
        i = first[:, a] + t[a]
        i = np.mod(i, cells[a]) if periodic else i + 1
        g = g * npts[a] + i
        wt = wt * w1[:, a, t[a]]
    pts.append(g); wts.append(wt)
Xp = sum(wt[:, None] * X[g] for g, wt in zip(pts, wts))          # gather
V = np.einsum("pij,pj->pi", coef, Xp)
Y = np.zeros_like(X)
for g, wt in zip(pts, wts):
    np.add.at(Y, g, wt[:, None] * V)
Y = sigma * Y
y = np.load(f"{d}/{name}.npy")
want_dtype = np.float32 if prec == "fp32" else np.float64
assert y.dtype == want_dtype, f"dtype {y.dtype}"
assert y.shape == xv.shape, f"shape {y.shape} vs x {xv.shape}"
err = np.linalg.norm(y.reshape(Y.shape) - Y) / np.linalg.norm(Y)
tol = 1e-5 if prec == "fp32" else 1e-12
assert err < tol, f"relative error {err:.3g} >= {tol}"
print(f"ok {name}: relative error {err:.2e}")
EOF
    then
        fail "$name: y differs from NumPy"
    fi
}

for mode in matfree assembled; do
    check "s2n_cic_$mode" p2.npy q2.npy - x2ns.npy cic scalar -1,0 1.5,3 5,6 0 1.5 $mode fp64 --backend reference
    check "t2n_tsc_$mode" p2.npy q2.npy w2.npy x2nt.npy tsc tensor -1,0 1.5,3 5,6 0 0.7 $mode fp64 --backend reference
    check "t2p_cic_$mode" p2w.npy q2.npy w2.npy x2pt.npy cic tensor -1,0 1.5,3 5,6 1 1 $mode fp64 --backend reference
    check "s3p_tsc_$mode" p3w.npy q3.npy - x3ps.npy tsc scalar -1,0,0.5 1.5,2.5,3.5 5,5,6 1 2 $mode fp64 --backend reference
    check "t3n_tsc_$mode" p3.npy q3.npy w3.npy x3nt.npy tsc tensor -1,0,0.5 1.5,2.5,3.5 5,5,6 0 1 $mode fp64 --backend reference
    check "t3f_cic_$mode" p3f.npy q3.npy w3.npy x3nt.npy cic tensor -1,0,0.5 1.5,2.5,3.5 5,5,6 0 1 $mode fp64 --backend auto
done
# the deposit half by cell (apply.h): the same y to rounding
check t3f_cic_cell p3f.npy q3.npy w3.npy x3nt.npy cic tensor -1,0,0.5 1.5,2.5,3.5 5,5,6 0 1 matfree fp64 --backend auto --order cell
check s3p_cic_cell p3w.npy q3.npy - x3ps.npy cic scalar -1,0,0.5 1.5,2.5,3.5 5,5,6 1 2 matfree fp64 --backend auto --order cell
check s2n_cic_fp32 p2.npy q2.npy - x2ns.npy cic scalar -1,0 1.5,3 5,6 0 1.5 matfree fp32 --backend reference
check t3p_tsc_fp32 p3w.npy q3.npy w3.npy x3pt.npy tsc tensor -1,0,0.5 1.5,2.5,3.5 5,5,6 1 1 matfree fp32 --backend auto

# shuffled particles: the same y to rounding; matfree and assembled agree
common="--backend reference --shape tsc --kind tensor --cells 5,6 --lower -1,0 --upper 1.5,3 --x $tmp/x2nt.npy"
# shellcheck disable=SC2086
run shuffled $common --positions "$tmp/p2s.npy" --charges "$tmp/q2s.npy" --omega "$tmp/w2s.npy" \
    --sigma 0.7 --mode matfree --out "$tmp/shuf.npy" &&
    "$py" -c "
import sys, numpy as np
a, b, c = (np.load(f'$tmp/{f}.npy') for f in ('shuf', 't2n_tsc_matfree', 't2n_tsc_assembled'))
e1 = np.linalg.norm(a - b) / np.linalg.norm(b)
e2 = np.linalg.norm(c - b) / np.linalg.norm(b)
print(f'shuffled vs sorted {e1:.2e}, assembled vs matfree {e2:.2e}')
sys.exit(0 if e1 < 1e-13 and e2 < 1e-13 else 1)" || fail "shuffled input or matfree vs assembled"

# ---- bad input: non-zero exit, a message, no output file -----------------------
# bad NAME EXPECTED-STDERR-REGEX ARGS...
bad() {
    bname=$1 want=$2
    shift 2
    rm -f "$tmp/bad.npy"
    if "$partile" apply "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then
        fail "$bname: exit status 0"
        return
    fi
    grep -Eq -- "$want" "$tmp/stderr" || fail "$bname: stderr lacks /$want/: $(cat "$tmp/stderr")"
    [ -e "$tmp/bad.npy" ] && fail "$bname: wrote an output file"
}
base="--backend reference --cells 5,6 --lower -1,0 --upper 1.5,3 --positions $tmp/p2.npy --charges $tmp/q2.npy --shape cic --kind scalar --out $tmp/bad.npy"
# shellcheck disable=SC2086
{
bad missing-x "missing --x" $base --mode matfree
bad missing-mode "missing --mode" $base --x "$tmp/x2ns.npy"
bad bad-mode "--mode needs matfree or assembled" $base --mode csr --x "$tmp/x2ns.npy"
bad bad-precision "--precision needs fp64 or fp32" $base --mode matfree --precision fp16 --x "$tmp/x2ns.npy"
bad fp32-assembled "fp32 is for --mode matfree only" $base --mode assembled --precision fp32 --x "$tmp/x2ns.npy"
bad bad-order "--order needs point or cell" $base --mode matfree --order cells --x "$tmp/x2ns.npy"
bad order-assembled "--order cell is for --mode matfree with --precision fp64" $base --mode assembled --order cell --x "$tmp/x2ns.npy"
bad order-fp32 "--order cell is for --mode matfree with --precision fp64" $base --mode matfree --precision fp32 --order cell --x "$tmp/x2ns.npy"
bad x-absent "nonexistent" $base --mode matfree --x "$tmp/nonexistent.npy"
bad x-garbage "garbage.npy" $base --mode matfree --x "$tmp/garbage.npy"
bad x-truncated "x2n_trunc.npy" $base --mode matfree --x "$tmp/x2n_trunc.npy"
bad x-rows "x has shape \(71,\), need \(72,\)" $base --mode matfree --x "$tmp/x2n_rows.npy"
bad x-cols "x has shape \(72, 2\), need \(72,\)" $base --mode assembled --x "$tmp/x2n_cols.npy"
bad x-tensor-scalar "x has shape \(72,\), need \(72, 3\)" $base --kind tensor --omega "$tmp/w2.npy" --mode matfree --x "$tmp/x2ns.npy"
bad x-periodic-size "need \(30,\)" $base --periodic --mode matfree --x "$tmp/x2ns.npy"
bad x-int "x must be float64, not int64" $base --mode matfree --x "$tmp/x2n_int.npy"
bad charges-rows "charges have shape \(301,\)" --backend reference --cells 5,6 --lower -1,0 --upper 1.5,3 --positions "$tmp/p2.npy" --charges "$tmp/q2rows.npy" --shape cic --kind scalar --mode matfree --x "$tmp/x2ns.npy" --out "$tmp/bad.npy"
bad tensor-no-omega "needs --omega" $base --kind tensor --mode matfree --x "$tmp/x2nt.npy"
bad nan-position "NaN or infinite" --backend reference --cells 5,6 --lower -1,0 --upper 1.5,3 --positions "$tmp/nan.npy" --charges "$tmp/q2.npy" --shape cic --kind scalar --mode matfree --x "$tmp/x2ns.npy" --out "$tmp/bad.npy"
bad fp32-charge-range "a charge .*q2big.npy. holds 9.99[0-9]*e\+38, beyond the float32 range" --backend reference --cells 5,6 --lower -1,0 --upper 1.5,3 --positions "$tmp/p2.npy" --charges "$tmp/q2big.npy" --shape cic --kind scalar --mode matfree --precision fp32 --x "$tmp/x2ns.npy" --out "$tmp/bad.npy"
bad fp32-omega-range "is particle 21 of" $base --kind tensor --omega "$tmp/w2big.npy" --mode matfree --precision fp32 --x "$tmp/x2nt.npy"
bad fp32-x-range "x, row 40, .*beyond the float32 range" $base --mode matfree --precision fp32 --x "$tmp/x2nbig.npy"
bad bad-shape "--shape needs cic or tsc" --backend reference --cells 5,6 --lower -1,0 --upper 1.5,3 --positions "$tmp/p2.npy" --charges "$tmp/q2.npy" --shape ngp --kind scalar --mode matfree --x "$tmp/x2ns.npy" --out "$tmp/bad.npy"
}

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all passed"
