/* Test positions that stay inside the grid when the tests stage them as
 * float: shared by the C tests (sort_util.h) and the C++ emulations. */
#ifndef PARTILE_TESTS_INSIDE_AS_FLOAT_H
#define PARTILE_TESTS_INSIDE_AS_FLOAT_H

#include <math.h>

/* v inside [lo, hi) also after rounding to FP32: the tests stage the same
 * positions as float, and a value within half a float ulp of hi rounds onto
 * it, outside a non-periodic grid (such a draw once failed `partile check`);
 * it moves one float step inside. */
static inline double su_inside_as_float(double v, double lo, double hi)
{
    const float f = (float)v;
    if ((double)f >= hi)
        return (double)nextafterf(f, -INFINITY);
    if ((double)f < lo)
        return (double)nextafterf(f, INFINITY);
    return v;
}

#endif
