#!/usr/bin/env python3
"""What a PyTorch user writes instead of partile's deposit and gather, timed
on the same cases as bench_deposit (cubic periodic node-centred meshes,
uniform random particles, CIC and TSC, 1 and 3 components): weights and
indices per stencil corner, index_add_ to deposit, indexing and a weighted
sum to gather. CUDA events, median of 5 after a warm-up.
usage: bench_deposit_torch.py [OUT.json] [MAX_PARTICLES] [--only SIDE,PPC]
(--only: that mesh and density only, as bench_deposit's)"""
import json
import sys
import time

import torch


def weights_1d(s, shape):
    """per-corner (offset, weight) along one axis, as DESIGN.md §2"""
    if shape == "cic":
        j = torch.floor(s)
        xi = s - j
        return j, [(0, 1 - xi), (1, xi)]
    k = torch.floor(s + 0.5)
    d = s - k
    return k, [(-1, 0.5 * (0.5 - d) ** 2), (0, 0.75 - d * d), (1, 0.5 * (0.5 + d) ** 2)]


def corners(x, side, shape):
    bases, axes = [], []
    for a in range(3):
        b, ws = weights_1d(x[a] * side, shape)
        bases.append(b.long())
        axes.append(ws)
    for ox, wx in axes[0]:
        for oy, wy in axes[1]:
            for oz, wz in axes[2]:
                idx = ((bases[0] + ox) % side) + side * (((bases[1] + oy) % side)
                                                        + side * ((bases[2] + oz) % side))
                yield idx, wx * wy * wz


def deposit(x, v, field, side, shape):
    for idx, w in corners(x, side, shape):
        field.index_add_(0, idx, w[:, None] * v)


def gather(x, field, side, shape):
    out = None
    for idx, w in corners(x, side, shape):
        term = w[:, None] * field[idx]
        out = term if out is None else out + term
    return out


def timed(fn):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return sorted(times)[2]


def main():
    args, only = sys.argv[1:], None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            sys.exit("bench_deposit_torch.py: --only needs SIDE,PPC")
        side_s, ppc_s = args[i + 1].split(",")
        only = (int(side_s), float(ppc_s))
        del args[i:i + 2]
    out = args[0] if len(args) > 0 else None
    max_n = float(args[1]) if len(args) > 1 else 2.2e8
    dev = torch.device("cuda")
    rows = []
    print(f"{'mesh':>6} {'ppc':>5} {'shp':>4} m {'N':>11} | {'deposit ms':>10} {'gather ms':>10}")
    for side in (16, 64, 128, 256):
        for ppc in (0.1, 1, 10, 100):
            n = round(side ** 3 * ppc)
            if n > max_n or n < 100 or (only and (side, ppc) != only):
                continue
            for shape in ("cic", "tsc"):
                for m in (1, 3):
                    try:
                        g = torch.Generator(device=dev).manual_seed(7)
                        x = torch.rand(3, n, device=dev, dtype=torch.float64, generator=g)
                        v = torch.rand(n, m, device=dev, dtype=torch.float64, generator=g) * 2 - 1
                        field = torch.zeros(side ** 3, m, device=dev, dtype=torch.float64)
                        td = timed(lambda: deposit(x, v, field, side, shape))
                        tg = timed(lambda: gather(x, field, side, shape))
                    except torch.cuda.OutOfMemoryError:
                        print(f"{side:>4}^3 {ppc:5.1f} {shape:>4} {m} {n:>11} | out of memory")
                        torch.cuda.empty_cache()
                        continue
                    print(f"{side:>4}^3 {ppc:5.1f} {shape:>4} {m} {n:>11} | {td*1e3:10.3f} {tg*1e3:10.3f}",
                          flush=True)
                    rows.append({"side": side, "ppc": ppc, "shape": shape, "m": m, "particles": n,
                                 "torch_deposit_seconds": td, "torch_gather_seconds": tg})
                    del x, v, field
                    torch.cuda.empty_cache()
    if out:
        with open(out, "w") as f:
            json.dump({"benchmark": "deposit_torch", "torch": torch.__version__,
                       "device": torch.cuda.get_device_name(0),
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
