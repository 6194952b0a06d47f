/* The mass-matrix tile kernel's fragment logic for one engine — which staged
 * value each lane feeds the tile, and where each accumulator element of the
 * local matrix goes — as plain functions, so that a CPU test
 * (tests/test_mass_layout.c) runs them for every lane of every engine
 * against an emulated tile. A template (no include guard), included once
 * per engine with
 *   MASS_E                      the engine's shape name, whose S##_a_pos,
 *                               _b_pos, _c_pos, _b_from_a, _A_N, _B_N, _C_N
 *                               and _in_t exist
 *   MASS_MT                     its tile's rows
 *   MASS_RING, MASS_STRIDE      the staging ring: slots (a power of two) and
 *                               the doubles between two staged fields
 *   MASS_IN(x)                  the conversion into the tile's input type
 * Local matrix rows are (component, point a) where rows share a point (CIC)
 * and (point a, component) elsewhere (MASS_ROW_POINT, MASS_ROW_COMP);
 * columns are points b; k is the staged particle, slot (head + k) mod
 * MASS_RING. */

#define MASS_CAT2_(a, b) a##_##b
#define MASS_CAT2(a, b) MASS_CAT2_(a, b)
#define MASS_FN(name) MASS_CAT2(name, MASS_E)
#define MASS_ENGINE_(S, what) S##_##what
#define MASS_ENGINE(S, what) MASS_ENGINE_(S, what)

/* Device code in the GPU builds (the engines' input conversions are
 * device functions), plain C in the CPU test. */
#if defined(__CUDACC__) || defined(__HIPCC__)
#define MASS_HD_INLINE static __device__ __forceinline__
#else
#define MASS_HD_INLINE static inline
#endif

/* The ring slot of particle k of the k-step that starts at slot `head`.
 * The kernel starts every k-step at a multiple of its length KT, which
 * divides MASS_RING (mass_tile.inc asserts it), so a step's slots never
 * wrap and need no mask: the slot is a constant offset from the step's
 * first, folded into the shared loads' addresses. (With the mask, the
 * address arithmetic was ~60 % of an m8n8k4 k-step's instructions; Nsight
 * Compute, bench/RESULTS.md 2026-12-02.) */
#define MASS_STEP_SLOT(head, k) ((head) + (k))

/* Whether each lane's A rows keep one point a in every row tile: tiles
 * start at multiples of MASS_MT, so when NPTS divides it (CIC: 2, 4, 8
 * points) row0 + r and r have the same point (row mod NPTS). Then the
 * weights W_ap of a k-step are loaded once for all its row tiles. */
#define MASS_ROWS_SHARE_POINT(NPTS) (MASS_MT % (NPTS) == 0)

/* The point a and component of local-matrix row r. Where rows share a
 * point (CIC), row = comp·NPTS + a, which keeps a lane's point in every row
 * tile. Elsewhere (TSC: 3, 9, 27 points) row = a·COMPS + comp: a warp's
 * store of one accumulator element then reaches the consecutive components
 * of a few pairs, which the pair-by-pair scratch keeps together, and pass 2
 * finds a coupling's components in one or two sectors. The tile's chains,
 * and so the bits, are the same in either order. */
#define MASS_ROW_POINT(r, NPTS, COMPS) (MASS_ROWS_SHARE_POINT(NPTS) ? (r) % (NPTS) : (r) / (COMPS))
#define MASS_ROW_COMP(r, NPTS, COMPS) (MASS_ROWS_SHARE_POINT(NPTS) ? (r) / (NPTS) : (r) % (COMPS))

/* The k-step's weights for lane's A elements, valid for every row tile when
 * MASS_ROWS_SHARE_POINT: wa[e] = W at the point of lane's row of element e,
 * slot of its k (loaded also for k ≥ valid; mass_a_fragment zeroes those). */
MASS_HD_INLINE void MASS_FN(mass_a_weights)(int lane, int head, const double *Wsh, const int NPTS,
                                            double *wa)
{
    for (int e = 0; e < MASS_ENGINE(MASS_E, A_N); e++) {
        int r, k;
        MASS_ENGINE(MASS_E, a_pos)(lane, e, &r, &k);
        wa[e] = Wsh[(r % NPTS) * MASS_STRIDE + MASS_STEP_SLOT(head, k)];
    }
}

/* The A fragment of the row tile at row0 for k-step `head` with `valid`
 * real particles: A = c_p·W_ap as the reference computes it, zero for
 * k ≥ valid and rows past the local matrix. wa: mass_a_weights of this
 * k-step (unused unless MASS_ROWS_SHARE_POINT). */
MASS_HD_INLINE void MASS_FN(mass_a_fragment)(int lane, int row0, int head, int valid,
                                             const double *Wsh, const double *Csh,
                                             const double *wa, const int NPTS, const int COMPS,
                                             MASS_ENGINE(MASS_E, in_t) *a)
{
    const int ROWS = COMPS * NPTS;
    for (int e = 0; e < MASS_ENGINE(MASS_E, A_N); e++) {
        int r, k;
        MASS_ENGINE(MASS_E, a_pos)(lane, e, &r, &k);
        r += row0;
        const int slot = MASS_STEP_SLOT(head, k);
        if (r < ROWS && k < valid) {
            const double w =
                MASS_ROWS_SHARE_POINT(NPTS)
                    ? wa[e]
                    : Wsh[MASS_ROW_POINT(r, NPTS, COMPS) * MASS_STRIDE + slot];
            a[e] = MASS_IN(Csh[MASS_ROW_COMP(r, NPTS, COMPS) * MASS_STRIDE + slot] * w);
        } else {
            a[e] = MASS_IN(0.0);
        }
    }
}

/* The B fragment of the column tile at col0: B = W_bp, zero past the local
 * matrix and for k ≥ valid. */
MASS_HD_INLINE void MASS_FN(mass_b_fragment)(int lane, int col0, int head, int valid,
                                             const double *Wsh, const int NPTS,
                                             MASS_ENGINE(MASS_E, in_t) *b)
{
    for (int e = 0; e < MASS_ENGINE(MASS_E, B_N); e++) {
        int k, col;
        MASS_ENGINE(MASS_E, b_pos)(lane, e, &k, &col);
        col += col0;
        const int slot = MASS_STEP_SLOT(head, k);
        b[e] = MASS_IN((col < NPTS && k < valid) ? Wsh[col * MASS_STRIDE + slot] : 0.0);
    }
}

/* The B fragment of the first column tile (col0 = 0) from the k-step's A
 * weights wa (MASS_ROWS_SHARE_POINT): B element e's (k, column) is the
 * lane's A element b_from_a(e) transposed, and a column b < NPTS is that
 * row's point, so the weight is already in a register and the shared load
 * of mass_b_fragment is saved. */
MASS_HD_INLINE void MASS_FN(mass_b_fragment_from_a)(int lane, int valid, const double *wa,
                                                    const int NPTS, MASS_ENGINE(MASS_E, in_t) *b)
{
    for (int e = 0; e < MASS_ENGINE(MASS_E, B_N); e++) {
        int k, col;
        MASS_ENGINE(MASS_E, b_pos)(lane, e, &k, &col);
        b[e] = MASS_IN((col < NPTS && k < valid) ? wa[MASS_ENGINE(MASS_E, b_from_a)(e)] : 0.0);
    }
}

/* Both fragments of the tile at (row0, col0), as the kernel builds them
 * (it hoists the weights and, with one column tile, B out of its tiles,
 * taking that B from the weights when it can). */
MASS_HD_INLINE void MASS_FN(mass_fragments)(int lane, int row0, int col0, int head, int valid,
                                            const double *Wsh, const double *Csh, const int NPTS,
                                            const int COMPS, MASS_ENGINE(MASS_E, in_t) *a,
                                            MASS_ENGINE(MASS_E, in_t) *b)
{
    double wa[MASS_ENGINE(MASS_E, A_N)];
    if (MASS_ROWS_SHARE_POINT(NPTS))
        MASS_FN(mass_a_weights)(lane, head, Wsh, NPTS, wa);
    MASS_FN(mass_a_fragment)(lane, row0, head, valid, Wsh, Csh, wa, NPTS, COMPS, a);
    if (MASS_ROWS_SHARE_POINT(NPTS) && col0 == 0)
        MASS_FN(mass_b_fragment_from_a)(lane, valid, wa, NPTS, b);
    else
        MASS_FN(mass_b_fragment)(lane, col0, head, valid, Wsh, NPTS, b);
}

/* Accumulator element e of lane in the tile at (row0, col0): its local pair
 * a·NPTS + b and component, or -1 for an element past the local matrix. */
MASS_HD_INLINE int MASS_FN(mass_c_target)(int lane, int e, int row0, int col0, const int NPTS,
                                          const int COMPS, int *comp)
{
    int r, col;
    MASS_ENGINE(MASS_E, c_pos)(lane, e, &r, &col);
    r += row0;
    col += col0;
    if (r >= COMPS * NPTS || col >= NPTS)
        return -1;
    *comp = MASS_ROW_COMP(r, NPTS, COMPS);
    return MASS_ROW_POINT(r, NPTS, COMPS) * NPTS + col;
}
