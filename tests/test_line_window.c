/* The index arithmetic of the line-of-points deposit
 * (backends/gpu/line_window.h), against brute force: for node-centred CIC
 * (W = 2) and TSC (W = 4) windows on periodic and non-periodic axes, every
 * point's taps visit exactly its window's cells in increasing index, and a
 * block of consecutive points' segments cover each cell that any of its
 * points reaches exactly once, in increasing order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "backends/gpu/line_window.h"

/* One axis of `cells` cells, points in blocks of `threads` consecutive
 * stored indices, window width W (lo = -1 CIC, -2 TSC). */
static void check_axis(int64_t cells, int periodic, int W, int threads)
{
    const int lo = W == 2 ? -1 : -2;
    const int64_t points = periodic ? cells : cells + 3; /* node-centred, one ghost layer */
    int *covered = calloc((size_t)cells, sizeof *covered);
    for (int64_t x0 = 0; x0 < points; x0 += threads) {
        const int64_t xlast = (x0 + threads < points ? x0 + threads : points) - 1;
        int64_t seg[2][2];
        const int nseg = partile_line_segments(x0 - !periodic + lo, xlast - !periodic + lo + W,
                                               cells, periodic, seg);
        assert_true(nseg >= 0 && nseg <= 2);
        /* segments: inside the axis, non-empty, increasing, disjoint */
        for (int s = 0; s < nseg; s++) {
            assert_true(0 <= seg[s][0] && seg[s][0] < seg[s][1] && seg[s][1] <= cells);
            if (s)
                assert_true(seg[s - 1][1] <= seg[s][0]);
        }
        for (int64_t c = 0; c < cells; c++)
            covered[c] = 0;
        for (int64_t sx = x0; sx <= xlast; sx++) {
            const int64_t u = sx - !periodic;
            const int shift = partile_window_shift(u, lo, W, cells, periodic);
            int64_t prev = -1;
            int seen = 0;
            for (int t = 0; t < W; t++) {
                const int d = lo + (t + shift) % W;
                assert_true(d >= lo && d < lo + W);
                const int64_t c = partile_window_cell(u, d, cells, periodic);
                /* brute force: the cell at offset d, wrapped or outside */
                int64_t want = u + d;
                if (periodic)
                    want = ((want % cells) + cells) % cells;
                else if (want < 0 || want >= cells)
                    want = -1;
                assert_int_equal(c, want);
                if (c < 0)
                    continue;
                assert_true(c > prev); /* increasing index: the bitwise order */
                prev = c;
                seen |= 1 << (d - lo);
                int in = 0;
                for (int s = 0; s < nseg; s++)
                    in += seg[s][0] <= c && c < seg[s][1];
                assert_int_equal(in, 1); /* staged by this block, once */
                covered[c] = 1;
            }
            if (periodic)
                assert_int_equal(seen, (1 << W) - 1); /* every offset, none twice */
        }
        /* the segments hold no cell that none of the block's points reaches */
        for (int s = 0; s < nseg; s++)
            for (int64_t c = seg[s][0]; c < seg[s][1]; c++)
                assert_true(covered[c]);
    }
    free(covered);
}

static void windows(void **state)
{
    (void)state;
    const int threads[] = { 32, 64, 96, 128 };
    for (int W = 2; W <= 4; W += 2)
        for (int periodic = 0; periodic < 2; periodic++)
            for (int64_t cells = periodic ? W : 1; cells <= 300; cells += cells < 40 ? 1 : 37)
                for (int t = 0; t < 4; t++)
                    check_axis(cells, periodic, W, threads[t]);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(windows) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
