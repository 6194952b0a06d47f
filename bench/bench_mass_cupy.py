#!/usr/bin/env python3
"""What a Python user would write instead of partile's mass-matrix assembly
(issue #4): the CIC mass matrix of the same particles built with CuPy — the
weights on the GPU, COO triplets (row, col, q·W_a·W_b·α_ij), then conversion
to CSR with duplicates summed (cupyx.scipy.sparse). Same grids and particle
counts as bench/bench_mass.cu; times the whole build (weights + triplets +
tocsr) with CUDA events, median of 3 after a warm-up. Reads bench_mass's
JSON (same device call) and prints partile's speedup per row.

usage: bench_mass_cupy.py OUT.json MASS.json [MAX_PARTICLES]
"""
import json
import sys
import time

try:
    import cupy as cp
    import cupyx.scipy.sparse as csp
except ImportError as e:  # the device machine has CuPy; say so elsewhere
    print(f"bench_mass_cupy: CuPy not available ({e})")
    sys.exit(0)


def cic_matrix(x, q, w, side, tensor):
    """CSR of σ Σ_p q_p W_gp W_g'p (α_p) on a periodic side³ node grid."""
    n = x.shape[1]
    s = x * side
    j = cp.floor(s)
    xi = s - j
    j = j.astype(cp.int64)
    # the 8 points and weights of every particle, x fastest
    pts, wts = [], []
    for c in range(8):
        o = [(c >> a) & 1 for a in range(3)]
        idx = [(j[a] + o[a]) % side for a in range(3)]
        pts.append(idx[0] + side * (idx[1] + side * idx[2]))
        wa = [xi[a] if o[a] else 1.0 - xi[a] for a in range(3)]
        wts.append((wa[0] * wa[1]) * wa[2])
    P = cp.stack(pts)  # 8 × n
    W = cp.stack(wts)
    rows = cp.broadcast_to(P[:, None, :], (8, 8, n)).reshape(-1)
    cols = cp.broadcast_to(P[None, :, :], (8, 8, n)).reshape(-1)
    vals = (q[None, None, :] * W[:, None, :] * W[None, :, :]).reshape(-1)
    npts = side ** 3
    if not tensor:
        return csp.coo_matrix((vals, (rows, cols)), shape=(npts, npts)).tocsr()
    # α = (I − C(ω) + ω ωᵀ)/(1 + ω·ω), blocks expanded to scalar triplets
    w2 = 1.0 + (w * w).sum(axis=0)
    C = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
    R, Cc, V = [], [], []
    for i in range(3):
        for k in range(3):
            alpha = ((1.0 if i == k else 0.0) + w[i] * w[k] - C[i][k]) / w2
            R.append(rows * 3 + i)
            Cc.append(cols * 3 + k)
            V.append((vals.reshape(8, 8, n) * alpha[None, None, :]).reshape(-1))
    return csp.coo_matrix((cp.concatenate(V), (cp.concatenate(R), cp.concatenate(Cc))),
                          shape=(3 * npts, 3 * npts)).tocsr()


def timed(fn, repeats=3):
    fn()
    cp.cuda.Device().synchronize()
    out = []
    for _ in range(repeats):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b) * 1e-3)
    return sorted(out)[len(out) // 2]


def main():
    out_path = sys.argv[1]
    mass = {}
    try:
        with open(sys.argv[2]) as f:
            for r in json.load(f)["results"]:
                mass[r["name"]] = r["value"]
    except (OSError, ValueError, KeyError, IndexError):
        pass
    max_n = float(sys.argv[3]) if len(sys.argv) > 3 else 3e7
    points = [(16, p) for p in (1, 4, 13, 32, 64, 128, 256, 512, 1024)]
    points += [(s, 128) for s in (8, 32, 64, 128)]
    rows = []
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"CuPy {cp.__version__} on {dev}: COO triplets + tocsr (CIC)")
    print(f"{'cells':>6} {'ppc':>5} {'case':<11} {'N':>10} | {'cupy ms':>9} {'partile ms':>10} {'speedup':>8}")
    for side, ppc in points:
        n = side ** 3 * ppc
        for tensor in (0, 1):
            if n * (64 * (9 if tensor else 1)) > max_n * 64:
                continue
            rng = cp.random.default_rng(side * 1000 + ppc)
            x = rng.random((3, n))
            q = 0.5 + rng.random(n)
            w = 2 * rng.random((3, n)) - 1
            try:
                t = timed(lambda: cic_matrix(x, q, w, side, tensor))
            except cp.cuda.memory.OutOfMemoryError:
                print(f"{side:>4}^3 {ppc:>5} {'cic-tensor' if tensor else 'cic-scalar':<11} {n:>10} | out of memory")
                continue
            label = "cic-tensor" if tensor else "cic-scalar"
            ours = mass.get(f"tiles_bitwise_seconds.{label}.side{side}.ppc{ppc}")
            print(f"{side:>4}^3 {ppc:>5} {label:<11} {n:>10} | {t * 1e3:9.3f} "
                  f"{(ours or float('nan')) * 1e3:10.3f} {(t / ours if ours else float('nan')):8.1f}")
            sys.stdout.flush()
            rows.append({"name": f"cupy_coo_tocsr_seconds.{label}.side{side}.ppc{ppc}", "value": t,
                         "unit": "s", "partile_speedup": (t / ours) if ours else None})
            del x, q, w
            cp.get_default_memory_pool().free_all_blocks()
    with open(out_path, "w") as f:
        json.dump({"benchmark": "mass_cupy", "cupy": cp.__version__, "device": dev,
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": rows}, f,
                  indent=1)


if __name__ == "__main__":
    main()
