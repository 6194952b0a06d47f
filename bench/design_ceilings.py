#!/usr/bin/env python3
"""The highest fraction of the memory roofline that the by-cell passes can
reach, from the bytes they must move through DRAM at the least, against the
bytes the benchmarks' rooflines count (bench/bench_deposit.cu,
bench/bench_apply.cu). Per cell of a periodic 3-D node-centred CIC grid
(one point per cell), n particles per cell, m (or M) components; a pass's
reads of data another pass wrote count once each way. No device needed.

By-cell deposit (partile_deposit, PARTILE_ORDER_BY_CELL), bench roofline
  n (24 + 8m) + 16m                      positions, values; field read and written
design: k_check_offsets 8, pass 1 offsets 8 + the particles + the corner
buffer written 64m, pass 2 the buffer read 64m + the field 16m.

By-cell matrix-free apply (partile_mass_apply_matfree, BY_CELL), fused
first pass (the path above 1.5 per cell scalar, 3 tensor with ω given),
bench roofline
  n (32 + 24t) + 8 + 16M                 positions, q (and ω); offsets; x and y
design: offsets 8 twice, the particles, x once (its corners are staged per
cell; at least 8M from DRAM), the buffer 64M each way, y 8M.

With x pairs (bench/candidates/corner-x-pairs-walk-mixed.patch; the
earlier corner-x-pairs-refuted.patch moved the same bytes) the first pass
writes four slots per cell (32M), not eight chains, and the second pass
reads them: the x sums of the points whose two cells share a group of G
cells are formed in the first pass. A group's last cell (and a
row's, where G does not divide the row) also writes its four right chains to
plus slots, read once more by the second pass; counted as whole 32-byte
sectors, M doubles at 8-byte alignment (M = 1: one sector, M = 3: up to two).

Gather (partile_gather, CIC, sorted or random order), bench roofline
  n (24 + 8m) + 8m                       positions, values written; the field read
design: the check pass (k_check_particles) reads the positions first, so
that bad input leaves the output untouched, then the gather reads them
again: + 24 n, where the positions are much larger than L2 (the gather
walks backwards, so its first reads are the check's last, still in L2).

A design without the corner buffer (the sums kept on chip: slabs through
L2, column tiles) writes outputs while later particles are still unread, so
under the rule that bad input leaves the caller's arrays untouched it needs
a check pass before it, as the gather has: the positions read twice (and
the tensor apply's omega, which it checks too): - 128 m + 24 n (+ 24 n).
Pair interactions (partile_pairs, LJ force and energy, 3-D, cell width =
r_c), bench roofline 7 values per particle (positions read, force and
energy written). Every strategy of issue #7 tests the 27 n candidates of
the 3^3 cells around a particle's own; none may use Newton's third law (no
atomics, each particle's sum in a fixed order), so each ordered pair is
computed once per particle of it. At the least a candidate costs 7
floating-point instructions (3 differences, a product and 2 FMAs for r^2, a
comparison) and an accepted pair (4 pi / 3) n of them 12 more (1/r^2, the
powers, the force factor, 3 FMAs into the force, the energy), on the FP
pipe whose measured rate (H200, RESULTS.md: plain FMA kernels, FP64 30.3
and FP32 63.5 TFLOP/s, i.e. 15.15 and 31.75 10^12 instructions/s) bounds
them however well issued. The ceiling is the roofline's time over that
time: the highest fraction of the memory roofline any such design reaches.

Mass-matrix assembly (partile_mass_assemble, bitwise, CIC 3-D, one chunk,
omega given; bench/bench_mass.cu). Scalar, bench roofline
  32 n + 8 + 112                         positions and q; offsets; 14 stored
                                         couplings per point written
design: k_check_offsets 8, pass 1 offsets 8 + the particles + the groups'
local entries (36 couplings of the 8 x 8 in the stored half, 288 B per
cell) written, pass 2 reads them and writes the storage (sigma fused).
Tensor, bench roofline: the useful flops 2 * 8 * 8 * 9 per particle over the
measured FP64 tile peak (m16n8k16, 66.6 TFLOP/s); its bytes: 56 n (positions,
q, omega; omega is checked in pass 1, one_pass) + 16 + 2 * 2592 (the local
entries, 36 x 9 doubles per cell, each way) + 1008 (14 x 9 per point). The
tile peak is reached only where the memory time fits under the flops' time:
the ceiling is the flops' time over the larger of the two.
Usage: design_ceilings.py"""


def deposit(n, m):
    roof = n * (24 + 8 * m) + 16 * m
    design = n * (24 + 8 * m) + 8 + 8 + 64 * m + 64 * m + 16 * m
    return roof, design


def apply(n, tensor):
    M = 3 if tensor else 1
    roof = n * (32 + 24 * tensor) + 8 + 16 * M
    design = n * (32 + 24 * tensor) + 8 + 8 + 8 * M + 64 * M + 64 * M + 8 * M
    return roof, design


def pairs_saving(M, G, nx):
    """Buffer bytes per cell saved, both ways, by x pairs in groups of G on
    rows of nx cells."""
    edges = 1.0 / G + (0.0 if nx % G == 0 else 1.0 / nx)
    sectors = 1 if M == 1 else 2
    each_way = 32 * M + edges * 4 * 32 * sectors
    return 2 * (64 * M - each_way)


print("by-cell deposit, CIC: per cell, roofline bytes / design bytes = ceiling")
for m in (1, 3):
    for n in (1, 4, 10, 30, 100):
        roof, design = deposit(n, m)
        print(f"  {m} component{'s' if m > 1 else ' '} {n:4d} per cell: {roof:5d} / {design:5d} B"
              f" = {roof / design:.2f}   (x pairs, G 16: "
              f"{roof / (design - pairs_saving(m, 16, 128)):.2f}; on chip, a check pass before: "
              f"{roof / (design - 128 * m + 24 * n):.2f})")
print("by-cell matrix-free apply, CIC, fused first pass")
for tensor in (0, 1):
    for n in (4, 8, 16, 64):
        roof, design = apply(n, tensor)
        M = 3 if tensor else 1
        G = 8 if tensor and n > 3 else 16  # corner_first: batches of 8 cells, else rounds of 16
        print(f"  {'tensor' if tensor else 'scalar'} {n:4d} per cell: {roof:5d} / {design:5d} B"
              f" = {roof / design:.2f}   (x pairs, G {G}: "
              f"{roof / (design - pairs_saving(M, G, 64)):.2f}; on chip, a check pass before: "
              f"{roof / (design - 128 * M + 24 * n * (1 + tensor)):.2f})")
print("gather, CIC, a check pass before it (the positions read twice; none from L2)")
for m in (1, 3):
    for n in (10, 100):
        roof = n * (24 + 8 * m) + 8 * m
        design = roof + 24 * n
        print(f"  {m} component{'s' if m > 1 else ' '} {n:4d} per cell: {roof:5d} / {design:5d} B"
              f" = {roof / design:.2f}   (without the check pass: 1.00)")
print("pairs, LJ 3-D: FP instructions per particle at the least, and the memory-roofline "
      "ceiling they allow (27 cells; sub-cells of r_c / 2: 125 of them; the sphere alone)")
BANDWIDTH = 4235e9  # measured device copy, B/s (RESULTS.md, issue #2)
for name, esize, rate in (("FP32", 4, 31.75e12), ("FP64", 8, 15.15e12)):
    roof_s = 7 * esize / BANDWIDTH
    for n in (1, 2, 4, 8):
        accepted = 4.0 / 3.0 * 3.141592653589793 * n
        ops = {"27 cells": 27 * n * 7 + accepted * 12,
               "sub-cells": 125 * n / 8 * 7 + accepted * 12,
               "sphere": accepted * (7 + 12)}
        line = ", ".join(f"{k} {v:5.0f} -> {min(1.0, roof_s / (v / rate)):.2f}"
                         for k, v in ops.items())
        print(f"  {name} {n:2d} per cell: {line}")
MASS_BANDWIDTH = 4200e9  # measured copy on the H200, B/s (4167-4235, RESULTS.md)
TILE_PEAK = 66.6e12  # measured FP64 m16n8k16, FLOP/s (RESULTS.md, issue #2)
print("mass assembly, CIC 3-D, bitwise, one chunk (omega given for the tensor)")
for n in (32, 128, 256, 1024):
    roof = 32 * n + 8 + 112
    design = 32 * n + 16 + 2 * 288 + 112
    flops = 2 * 8 * 8 * 9 * n
    tbytes = 56 * n + 16 + 2 * 2592 + 1008
    t_flops, t_bytes = flops / TILE_PEAK, tbytes / MASS_BANDWIDTH
    print(f"  {n:5d} per cell: scalar {roof:6d} / {design:6d} B = {roof / design:.2f} of the "
          f"memory roofline; tensor {t_flops * 1e9:.2f} ns of tile peak a cell against "
          f"{tbytes:6d} B = {t_bytes * 1e9:.2f} ns: {min(1.0, t_flops / t_bytes):.2f} of the "
          f"tile peak")
