/* The faces of a grid's domain to the last place, for tests of the checks
 * that bin positions (C and C++). */
#ifndef PARTILE_TESTS_DOMAIN_FACES_H
#define PARTILE_TESTS_DOMAIN_FACES_H

#include <stdint.h>

#include "common/binning.h"

/* The last double inside and the first one out at the upper face of a
 * non-periodic axis, as partile_axis_cell bins them; by bisection (stepping
 * by ulps from a face near 0 would take ~10^300 steps). */
static inline void domain_upper_face(double lower, double spacing, int64_t cells, double *last_in,
                                 double *first_out)
{
    int64_t cell;
    double in = lower + ((double)cells - 0.5) * spacing, out = lower + ((double)cells + 0.5) * spacing;
    for (;;) {
        const double mid = in + (out - in) / 2;
        if (mid == in || mid == out)
            break;
        if (partile_axis_cell(mid, lower, spacing, cells, 0, &cell) == PARTILE_BIN_OK)
            in = mid;
        else
            out = mid;
    }
    *last_in = in;
    *first_out = out;
}

#endif
