/* Index arithmetic of the sorted deposit by fractions (k_deposit_lines and
 * k_deposit_points, backends/gpu/deposit_gpu.inc): which cells a node
 * point's window reaches, in which order, and which cell ranges a block of
 * consecutive points stages. Plain C so that a CPU test (tests/test_line_window.c) checks it
 * against brute force for periodic and non-periodic axes. */
#ifndef PARTILE_GPU_LINE_WINDOW_H
#define PARTILE_GPU_LINE_WINDOW_H

#include <stdint.h>

#include "common/portable.h"

/* The x cells of a block's window [ua, ub) (unwrapped cell indices,
 * ua >= -2) as at most two ranges of wrapped cells in increasing order;
 * returns their number. A periodic window as long as the axis is the whole
 * axis, once. */
static inline PARTILE_HD int partile_line_segments(int64_t ua, int64_t ub, int64_t cells,
                                                   int periodic, int64_t seg[2][2])
{
    if (!periodic) {
        seg[0][0] = ua < 0 ? 0 : ua;
        seg[0][1] = ub > cells ? cells : ub;
        return seg[0][0] < seg[0][1];
    }
    const int64_t len = ub - ua, a = ua < 0 ? ua + cells : ua;
    if (len >= cells) {
        seg[0][0] = 0, seg[0][1] = cells;
        return 1;
    }
    if (a + len <= cells) {
        seg[0][0] = a, seg[0][1] = a + len;
        return 1;
    }
    seg[0][0] = 0, seg[0][1] = a + len - cells;
    seg[1][0] = a, seg[1][1] = cells;
    return 2;
}

/* The window of point u is cells u + lo … u + lo + W − 1; tap t visits
 * offset lo + (t + shift) % W, so that on a periodic axis (at least W
 * cells) the wrapped cells come in increasing index: cells below 0 wrap to
 * the top (visited last), cells at or above `cells` to the bottom (first). */
static inline PARTILE_HD int partile_window_shift(int64_t u, int lo, int W, int64_t cells,
                                                  int periodic)
{
    if (!periodic)
        return 0;
    const int64_t below = -(u + lo), above = u + lo + W - cells;
    return below > 0 ? (int)below : above > 0 ? W - (int)above : 0;
}

/* The wrapped cell at offset d from point u; −1 outside a non-periodic axis. */
static inline PARTILE_HD int64_t partile_window_cell(int64_t u, int d, int64_t cells, int periodic)
{
    const int64_t c = u + d;
    if (periodic)
        return c < 0 ? c + cells : c >= cells ? c - cells : c;
    return c < 0 || c >= cells ? -1 : c;
}

#endif
