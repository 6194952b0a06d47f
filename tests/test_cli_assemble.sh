#!/bin/sh
# `partile assemble` end to end (reference backend, and --backend auto):
#  - scalar and tensor mass matrices, CIC and TSC, on 2-D and 3-D grids,
#    periodic (positions also outside the box: they wrap) and not (ghost
#    layer, stored index i + 1), float64 and float32 positions, sigma != 1:
#    the exported CSR/BSR matrix against an independent NumPy triple loop
#    (particles x stencil point x stencil point) with the weights of
#    include/partile/deposit.h and alpha of include/partile/mass.h, to 1e-12
#    relative; cross-checked with scipy.sparse where scipy imports;
#  - indptr/indices well formed (sorted, unique columns in each row), the
#    matrix symmetric (each component block, M^{ij}_{gg'} = M^{ij}_{g'g});
#  - the particles' order does not matter (shuffled input: identical files);
#  - bad input: each case exits non-zero, says why on stderr and writes
#    nothing (not even the output folder).
# Usage: test_cli_assemble.sh path/to/partile
# Exit: 0 pass, 1 fail, 77 (skip) no Python with NumPy. $PYTHON picks one.
set -u

NAME=cli-assemble
# shellcheck source=tests/cli_test_lib.sh
. "$(dirname "$0")/cli_test_lib.sh"

# ---- inputs ------------------------------------------------------------------
# 2-D: 5x6 cells on [-1, 1.5) x [0, 3). 3-D: 5x5x6 on [-1, 1.5) x [0, 2.5) x
# [0.5, 3.5) (periodic TSC needs >= 5 cells per axis).
"$py" - "$tmp" <<'EOF' || { echo "FAIL: could not write the inputs"; exit 1; }
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20240807)
lo2, hi2 = np.array([-1.0, 0.0]), np.array([1.5, 3.0])
lo3, hi3 = np.array([-1.0, 0.0, 0.5]), np.array([1.5, 2.5, 3.5])
n2, n3 = 300, 250
np.save(f"{d}/p2.npy", rng.uniform(lo2, hi2, (n2, 2)))
np.save(f"{d}/p2w.npy", rng.uniform(lo2 - 2.0, hi2 + 2.0, (n2, 2)))  # periodic: wraps
np.save(f"{d}/q2.npy", rng.uniform(-1.0, 2.0, n2))
np.save(f"{d}/w2.npy", rng.normal(0.0, 1.5, (n2, 3)))
np.save(f"{d}/p3.npy", rng.uniform(lo3, hi3, (n3, 3)))
np.save(f"{d}/p3w.npy", rng.uniform(lo3 - 1.0, hi3 + 1.0, (n3, 3)))
np.save(f"{d}/p3f.npy", rng.uniform(lo3, hi3, (n3, 3)).astype(np.float32))
np.save(f"{d}/q3.npy", rng.uniform(0.5, 1.5, n3))
np.save(f"{d}/w3.npy", rng.normal(0.0, 0.8, (n3, 3)))
# the same particles in another order
perm = rng.permutation(n2)
np.save(f"{d}/p2s.npy", np.load(f"{d}/p2.npy")[perm])
np.save(f"{d}/q2s.npy", np.load(f"{d}/q2.npy")[perm])
np.save(f"{d}/w2s.npy", np.load(f"{d}/w2.npy")[perm])
wnan = np.load(f"{d}/w2.npy"); wnan[123, 1] = np.inf               # named by its row in the file
np.save(f"{d}/w2inf.npy", wnan)
# bad inputs
nan = np.load(f"{d}/p2.npy"); nan[11, 0] = np.nan
np.save(f"{d}/nan.npy", nan)
out = np.load(f"{d}/p2.npy"); out[13, 1] = 3.0                     # upper edge: outside
np.save(f"{d}/outside.npy", out)
np.save(f"{d}/w2cols.npy", np.zeros((n2, 2)))
np.save(f"{d}/w2rows.npy", np.zeros((n2 - 1, 3)))
np.save(f"{d}/w2flat.npy", np.zeros(n2 * 3))
np.save(f"{d}/q2rows.npy", np.zeros(n2 + 1))
np.save(f"{d}/q2int.npy", np.zeros(n2, dtype=np.int64))
EOF

# run NAME ARGS...: `partile assemble ARGS` must succeed
run() {
    run_name=$1
    shift
    expect_success "$run_name" "particles.*points.*nnz.*backend.*ms" assemble "$@"
}

# ---- against NumPy -------------------------------------------------------------
# check NAME POS Q OMEGA|- SHAPE KIND LOWER UPPER CELLS PERIODIC SIGMA [args...]
check() {
    name=$1 pos=$2 q=$3 om=$4 shape=$5 kind=$6 lower=$7 upper=$8 cells=$9
    shift 9
    periodic=$1 sigma=$2
    shift 2
    omarg= perarg=
    [ "$om" != - ] && omarg="--omega $tmp/$om"
    [ "$periodic" = 1 ] && perarg=--periodic
    # shellcheck disable=SC2086
    run "$name" --backend reference --shape "$shape" --kind "$kind" --cells "$cells" \
        --lower "$lower" --upper "$upper" $perarg --positions "$tmp/$pos" \
        --charges "$tmp/$q" $omarg --sigma "$sigma" --out "$tmp/$name" "$@" || return
    cat "$tmp/stdout"
    if ! "$py" - "$tmp" "$pos" "$q" "$om" "$shape" "$kind" "$lower" "$upper" "$cells" \
        "$periodic" "$sigma" "$name" <<'EOF'
import sys, numpy as np
d, pos, qf, om, shape, kind, lower, upper, cells, periodic, sigma, name = sys.argv[1:]
lower = np.array([float(v) for v in lower.split(",")])
upper = np.array([float(v) for v in upper.split(",")])
cells = np.array([int(v) for v in cells.split(",")])
periodic, sigma, tensor = periodic == "1", float(sigma), kind == "tensor"
x = np.load(f"{d}/{pos}").astype(np.float64)
q = np.load(f"{d}/{qf}")
n, dim = x.shape
npts = cells if periodic else cells + 3            # node points per axis
P = int(np.prod(npts))
h = (upper - lower) / cells
s = (x - lower) / h

# 1-D weights and (unwrapped) point indices per axis: (n, dim, order + 1)
if shape == "cic":
    j = np.floor(s)
    xi = s - j
    first = j
    w1 = np.stack([1.0 - xi, xi], axis=2)
else:
    k = np.floor(s + 0.5)
    dl = s - k
    first = k - 1
    w1 = np.stack([0.5 * (0.5 - dl) ** 2, 0.75 - dl ** 2, 0.5 * (0.5 + dl) ** 2], axis=2)
first = first.astype(np.int64)
S = w1.shape[2]

# alpha_p = (I - C(w) + w w^T) / (1 + w.w), C(w)u = w x u
if tensor:
    w = np.load(f"{d}/{om}")
    C = np.zeros((n, 3, 3))
    C[:, 0, 1], C[:, 0, 2] = -w[:, 2], w[:, 1]
    C[:, 1, 0], C[:, 1, 2] = w[:, 2], -w[:, 0]
    C[:, 2, 0], C[:, 2, 1] = -w[:, 1], w[:, 0]
    alpha = (np.eye(3)[None] - C + w[:, :, None] * w[:, None, :]) / (1.0 + (w * w).sum(1))[:, None, None]
    u = np.array([0.3, -1.2, 0.7])
    v = np.einsum("pij,j->pi", alpha, u)            # alpha u solves v - v x w = u
    assert np.allclose(v - np.cross(v, w), u, atol=1e-12)
    coef = q[:, None, None] * alpha                  # (n, 3, 3)
else:
    coef = q[:, None, None]                          # (n, 1, 1)
nc = coef.shape[1]

# the (order + 1)^dim stencil points of each particle: point index, weight
pts, wts = [], []
for t in np.ndindex(*([S] * dim)):
    g = np.zeros(n, dtype=np.int64)
    wt = np.ones(n)
    for a in reversed(range(dim)):                     # g = a + Px*(b + Py*c)
        i = first[:, a] + t[a]
        i = np.mod(i, cells[a]) if periodic else i + 1  # stored index i + 1
        assert ((i >= 0) & (i < npts[a])).all()
        g = g * npts[a] + i
    for a in range(dim):                               # W = x*y*z
        wt = wt * w1[:, a, t[a]]
    pts.append(g)
    wts.append(wt)

# the triple loop: particles (vectorised) x point a x point b
dense = np.zeros((P, nc, P, nc))
for ga, wa in zip(pts, wts):
    for gb, wb in zip(pts, wts):
        np.add.at(dense, (ga, slice(None), gb, slice(None)),
                  sigma * (wa * wb)[:, None, None] * coef)

# the files
indptr = np.load(f"{d}/{name}/indptr.npy")
indices = np.load(f"{d}/{name}/indices.npy")
data = np.load(f"{d}/{name}/data.npy")
nnz = len(indices)
assert indptr.dtype == np.int64 and indptr.shape == (P + 1,), f"indptr {indptr.dtype} {indptr.shape}, want int64 ({P + 1},)"
assert indices.dtype == np.int64 and indices.ndim == 1, f"indices {indices.dtype} {indices.shape}"
want_shape = (nnz, 3, 3) if tensor else (nnz,)
assert data.dtype == np.float64 and data.shape == want_shape, f"data {data.dtype} {data.shape}, want {want_shape}"
assert indptr[0] == 0 and indptr[-1] == nnz and (np.diff(indptr) >= 0).all(), "indptr is not 0 .. nnz, non-decreasing"
assert ((indices >= 0) & (indices < P)).all(), "a column index outside 0 .. points-1"
for r in range(P):
    row = indices[indptr[r]:indptr[r + 1]]
    assert (np.diff(row) > 0).all(), f"row {r}: columns not strictly increasing: {row}"
    assert r in row, f"row {r}: no diagonal entry"
# per row: (2n+1)^dim couplings on a periodic grid, fewer at a non-periodic edge
width = (2 * (S - 1) + 1) ** dim
rowlen = np.diff(indptr)
if periodic:
    assert (rowlen == width).all(), f"periodic rows hold {set(rowlen)}, want {width}"
else:
    assert rowlen.max() == width and rowlen.min() < width, f"row lengths {rowlen.min()} .. {rowlen.max()}"

# dense from CSR/BSR by hand
got = np.zeros((P, nc, P, nc))
rows = np.repeat(np.arange(P), rowlen)
got[rows, :, indices, :] = data.reshape(nnz, nc, nc)
scale = np.max(np.abs(dense))
err = np.max(np.abs(got - dense))
assert scale > 0 and err <= 1e-12 * scale, f"max |partile - numpy| = {err:.3g} (scale {scale:.3g})"
# symmetry: each component block is symmetric in (g, g'), bitwise
assert np.array_equal(got, got.transpose(2, 1, 0, 3)), "M^{ij}_{gg'} != M^{ij}_{g'g}"
if not tensor:
    assert np.array_equal(got[:, 0, :, 0], got[:, 0, :, 0].T)
# scipy, where there is one
try:
    import scipy.sparse as sp
except Exception:
    sp = None
if sp is not None:
    if tensor:
        m = sp.bsr_matrix((data, indices, indptr), shape=(3 * P, 3 * P)).toarray()
    else:
        m = sp.csr_matrix((data, indices, indptr), shape=(P, P)).toarray()
    assert np.array_equal(m, got.reshape(P * nc, P * nc)), "scipy reads another matrix"
# the scalar kind's row sums: sigma sum_p q_p W_gp (partition of unity)
if not tensor:
    dep = np.zeros(P)
    for ga, wa in zip(pts, wts):
        np.add.at(dep, ga, sigma * q * wa)
    assert np.allclose(got[:, 0, :, 0].sum(1), dep, atol=1e-12 * scale)
print(f"ok: {name}: {n} particles, {P} points, nnz {nnz}, max diff {err:.2g} (scale {scale:.2g})"
      f"{', scipy agrees' if sp is not None else ''}")
EOF
    then
        fail "$name: the matrix does not match NumPy"
    fi
}

L2=-1,0 U2=1.5,3 C2=5,6
L3=-1,0,0.5 U3=1.5,2.5,3.5 C3=5,5,6
for shape in cic tsc; do
    check "$shape-scalar-2d-periodic" p2w.npy q2.npy - "$shape" scalar $L2 $U2 $C2 1 1
    check "$shape-scalar-2d-ghost" p2.npy q2.npy - "$shape" scalar $L2 $U2 $C2 0 0.75
    check "$shape-tensor-2d-periodic" p2w.npy q2.npy w2.npy "$shape" tensor $L2 $U2 $C2 1 1
    check "$shape-tensor-2d-ghost" p2.npy q2.npy w2.npy "$shape" tensor $L2 $U2 $C2 0 -2.5
    check "$shape-scalar-3d-periodic" p3w.npy q3.npy - "$shape" scalar $L3 $U3 $C3 1 1
    check "$shape-scalar-3d-ghost-f32" p3f.npy q3.npy - "$shape" scalar $L3 $U3 $C3 0 1
    check "$shape-tensor-3d-periodic" p3w.npy q3.npy w3.npy "$shape" tensor $L3 $U3 $C3 1 0.5
    check "$shape-tensor-3d-ghost" p3.npy q3.npy w3.npy "$shape" tensor $L3 $U3 $C3 0 1
done

# ---- the input order does not matter; defaults; --backend auto ---------------------
G2="--cells $C2 --lower $L2 --upper $U2"
# shellcheck disable=SC2086
{
run order-a --backend reference --shape tsc --kind tensor $G2 --positions "$tmp/p2.npy" \
    --charges "$tmp/q2.npy" --omega "$tmp/w2.npy" --out "$tmp/order-a" &&
run order-b --backend reference --shape tsc --kind tensor $G2 --positions "$tmp/p2s.npy" \
    --charges "$tmp/q2s.npy" --omega "$tmp/w2s.npy" --out "$tmp/order-b" &&
run explicit-defaults --backend reference --shape tsc --kind tensor $G2 \
    --positions "$tmp/p2.npy" --charges "$tmp/q2.npy" --omega "$tmp/w2.npy" --sigma 1 \
    --precision fp64 --mode bitwise --out "$tmp/order-c" &&
run auto --shape tsc --kind tensor $G2 --positions "$tmp/p2.npy" --charges "$tmp/q2.npy" \
    --omega "$tmp/w2.npy" --out "$tmp/order-auto" &&
run relaxed --backend reference --shape tsc --kind tensor $G2 --positions "$tmp/p2.npy" \
    --charges "$tmp/q2.npy" --omega "$tmp/w2.npy" --mode relaxed --out "$tmp/order-relaxed" &&
run tf32 --backend reference --shape tsc --kind tensor $G2 --positions "$tmp/p2.npy" \
    --charges "$tmp/q2.npy" --omega "$tmp/w2.npy" --precision tf32 --out "$tmp/order-tf32"
}
# the reference backend answers relaxed and tf32 with its bitwise FP64 result
for v in relaxed tf32; do
    for f in indptr indices data; do
        cmp -s "$tmp/order-a/$f.npy" "$tmp/order-$v/$f.npy" ||
            fail "--$v on the reference: $f.npy differs from bitwise fp64"
    done
done
for f in indptr indices data; do
    # Stable sort by cell; the bitwise order is fixed inside each cell, so a
    # shuffle can change roundings only: compare with NumPy's tolerance.
    cmp -s "$tmp/order-a/$f.npy" "$tmp/order-c/$f.npy" ||
        fail "explicit defaults: $f.npy differs from the defaults"
    cmp -s "$tmp/order-a/$f.npy" "$tmp/order-auto/$f.npy" ||
        fail "--backend auto: $f.npy differs from the reference"
done
"$py" - "$tmp/order-a" "$tmp/order-b" <<'EOF' || fail "shuffled particles give another matrix"
import sys, numpy as np
a, b = sys.argv[1:]
for f in ("indptr", "indices"):
    assert np.array_equal(np.load(f"{a}/{f}.npy"), np.load(f"{b}/{f}.npy")), f
x, y = np.load(f"{a}/data.npy"), np.load(f"{b}/data.npy")
err = np.max(np.abs(x - y))
assert err <= 1e-12 * np.max(np.abs(x)), f"max diff {err:.3g}"
print(f"ok: shuffled input: same structure, max diff {err:.2g}")
EOF
if grep -q "note: --backend auto picked" "$tmp/stderr"; then
    echo "ok: --backend auto fell back to the reference: $(cat "$tmp/stderr")"
fi

# ---- runs that must fail ---------------------------------------------------------
# bad NAME WANT_STATUS PATTERN|- args... ("any" = any non-zero status)
bad() { expect_failure assemble "$tmp/bad-$1" "$@"; }

R="--backend reference"
P2="--positions $tmp/p2.npy"
Q2="--charges $tmp/q2.npy"
W2="--omega $tmp/w2.npy"
# shellcheck disable=SC2086
{
bad tensor-no-omega 2 "needs --omega" $R $G2 $P2 $Q2 --shape cic --kind tensor
bad scalar-with-omega 2 "only for --kind tensor" $R $G2 $P2 $Q2 $W2 --shape cic --kind scalar
bad omega-columns 1 "omega has shape (300, 2), need (300, 3)" $R $G2 $P2 $Q2 --shape cic \
    --kind tensor --omega "$tmp/w2cols.npy"
bad omega-not-finite 1 "w2inf.npy: row 123 holds omega (.*inf.*), which is not finite" $R $G2 \
    $P2 $Q2 --shape cic --kind tensor --omega "$tmp/w2inf.npy"
bad omega-rows 1 "omega has shape (299, 3)" $R $G2 $P2 $Q2 --shape cic --kind tensor \
    --omega "$tmp/w2rows.npy"
bad omega-1d 1 "omega has shape (900,)" $R $G2 $P2 $Q2 --shape cic --kind tensor \
    --omega "$tmp/w2flat.npy"
bad nan 1 "particle 11" $R $G2 --positions "$tmp/nan.npy" $Q2 --shape cic --kind scalar
bad nan-periodic 1 "particle 11" $R $G2 --periodic --positions "$tmp/nan.npy" $Q2 $W2 \
    --shape tsc --kind tensor
bad outside 1 "particle 13" $R $G2 --positions "$tmp/outside.npy" $Q2 --shape tsc \
    --kind scalar
bad periodic-cic-2-cells 1 "needs at least 3" $R --cells 5,2 --periodic $P2 $Q2 --shape cic \
    --kind scalar
bad periodic-tsc-4-cells 1 "needs at least 5" $R --cells 4,6 --lower $L2 --upper $U2 \
    --periodic $P2 $Q2 --shape tsc --kind scalar
bad charges-rows 1 "charges have shape (301,)" $R $G2 $P2 --charges "$tmp/q2rows.npy" \
    --shape cic --kind scalar
bad charges-int 1 "float64" $R $G2 $P2 --charges "$tmp/q2int.npy" --shape cic --kind scalar
bad charges-missing-file 1 - $R $G2 $P2 --charges "$tmp/none.npy" --shape cic --kind scalar
bad missing-charges 2 "missing --charges" $R $G2 $P2 --shape cic --kind scalar
bad missing-kind 2 "missing --kind" $R $G2 $P2 $Q2 --shape cic
bad shape-ngp 2 "cic or tsc" $R $G2 $P2 $Q2 --shape ngp --kind scalar
bad kind-name 2 "scalar or tensor" $R $G2 $P2 $Q2 --shape cic --kind diagonal
bad precision-name 2 "fp64 or tf32" $R $G2 $P2 $Q2 --shape cic --kind scalar \
    --precision fp16
bad mode-name 2 "bitwise or relaxed" $R $G2 $P2 $Q2 --shape cic --kind scalar \
    --mode fast
bad sigma-nan 2 "--sigma needs a finite number" $R $G2 $P2 $Q2 --shape cic --kind scalar \
    --sigma nan
bad positions-3-axes 1 "need (Np, 3)" $R --cells $C3 $P2 $Q2 --shape cic --kind scalar
bad zero-cells 2 - $R --cells 5,0 $P2 $Q2 --shape cic --kind scalar
bad unknown-option 2 "unknown" $R $G2 $P2 $Q2 --shape cic --kind scalar --sorted
bad unknown-backend 1 - --backend vulkan $G2 $P2 $Q2 --shape cic --kind scalar
}
# --out is a file: the directory cannot be made
: >"$tmp/a-file"
if "$partile" assemble $R $G2 $P2 $Q2 --shape cic --kind scalar --out "$tmp/a-file" \
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
