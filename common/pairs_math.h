/* Pair terms shared by every backend (DESIGN.md §4), written once for FP64
 * (T = double) and FP32 (T = float) through a macro. */
#ifndef PARTILE_COMMON_PAIRS_MATH_H
#define PARTILE_COMMON_PAIRS_MATH_H

#include <math.h>

#include "common/portable.h"

#define PARTILE_DEFINE_PAIR_MATH(T, SUFFIX, RINT, SQRT)                                         \
    /* minimum image along a periodic axis of length L */                                      \
    static inline PARTILE_HD T partile_min_image_##SUFFIX(T d, T L)                            \
    {                                                                                          \
        return d - L * RINT(d / L);                                                            \
    }                                                                                          \
    /* LJ: the scalar f with F = f·d, and the pair energy 4ε(s12 − s6) − shift */               \
    static inline PARTILE_HD void partile_lj_##SUFFIX(T r2, T eps, T sig2, T shift, T *f,      \
                                                      T *e)                                    \
    {                                                                                          \
        const T s2 = sig2 / r2, s6 = (s2 * s2) * s2, s12 = s6 * s6;                            \
        *f = ((T)24 * eps) * ((T)2 * s12 - s6) / r2;                                           \
        *e = ((T)4 * eps) * (s12 - s6) - shift;                                                \
    }                                                                                          \
    /* cubic spline of smoothing length h, normalisation norm (d-dependent) */                 \
    static inline PARTILE_HD T partile_spline_##SUFFIX(T r, T h, T norm)                      \
    {                                                                                          \
        const T q = r / h;                                                                     \
        if (q < (T)1)                                                                          \
            return norm * (((T)1 - (T)1.5 * (q * q)) + (T)0.75 * ((q * q) * q));               \
        if (q < (T)2) {                                                                        \
            const T a = (T)2 - q;                                                              \
            return norm * ((T)0.25 * ((a * a) * a));                                           \
        }                                                                                      \
        return (T)0;                                                                           \
    }

PARTILE_DEFINE_PAIR_MATH(double, f64, rint, sqrt)
PARTILE_DEFINE_PAIR_MATH(float, f32, rintf, sqrtf)

/* Cubic-spline normalisation: 2/(3h) (1-D), 10/(7πh²) (2-D), 1/(πh³) (3-D). */
static inline PARTILE_HD double partile_spline_norm(int dim, double h)
{
    const double pi = 3.14159265358979323846;
    return dim == 1 ? 2.0 / (3.0 * h) : dim == 2 ? 10.0 / (7.0 * pi * (h * h)) : 1.0 / (pi * ((h * h) * h));
}

#endif
