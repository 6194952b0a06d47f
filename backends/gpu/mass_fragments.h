/* The mass-matrix tile kernel's fragment logic for one engine — which staged
 * value each lane feeds the tile, and where each accumulator element of the
 * local matrix goes — as plain functions, so that a CPU test
 * (tests/test_mass_layout.c) runs them for every lane of every engine
 * against an emulated tile. A template (no include guard), included once
 * per engine with
 *   MASS_E                      the engine's shape name, whose S##_a_pos,
 *                               _b_pos, _c_pos, _A_N, _B_N, _C_N and _in_t exist
 *   MASS_MT, MASS_NT            its tile's rows and columns
 *   MASS_RING, MASS_STRIDE      the staging ring: slots (a power of two) and
 *                               the doubles between two staged fields
 *   MASS_IN(x)                  the conversion into the tile's input type
 * Local matrix rows are (component, point a), row = comp·NPTS + a; columns
 * are points b; k is the staged particle, slot (head + k) mod MASS_RING. */

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

/* A and B fragments of the tile at (row0, col0) for k-step `head` with
 * `valid` real particles (the rest, and rows or columns past the local
 * matrix, are zeros): A = c_p·W_ap as the reference computes it, B = W_bp. */
MASS_HD_INLINE void MASS_FN(mass_fragments)(int lane, int row0, int col0, int head, int valid,
                                            const double *Wsh, const double *Csh, const int NPTS,
                                            const int COMPS, MASS_ENGINE(MASS_E, in_t) *a,
                                            MASS_ENGINE(MASS_E, in_t) *b)
{
    const int ROWS = COMPS * NPTS;
    for (int e = 0; e < MASS_ENGINE(MASS_E, A_N); e++) {
        int r, k;
        MASS_ENGINE(MASS_E, a_pos)(lane, e, &r, &k);
        r += row0;
        const int slot = (head + k) & (MASS_RING - 1);
        a[e] = MASS_IN((r < ROWS && k < valid)
                           ? Csh[(r / NPTS) * MASS_STRIDE + slot] * Wsh[(r % NPTS) * MASS_STRIDE + slot]
                           : 0.0);
    }
    for (int e = 0; e < MASS_ENGINE(MASS_E, B_N); e++) {
        int k, col;
        MASS_ENGINE(MASS_E, b_pos)(lane, e, &k, &col);
        col += col0;
        const int slot = (head + k) & (MASS_RING - 1);
        b[e] = MASS_IN((col < NPTS && k < valid) ? Wsh[col * MASS_STRIDE + slot] : 0.0);
    }
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
    *comp = r / NPTS;
    return (r % NPTS) * NPTS + col;
}
