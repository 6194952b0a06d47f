/* Size arithmetic that reports overflow instead of wrapping. */
#ifndef PARTILE_COMMON_CHECKED_H
#define PARTILE_COMMON_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* *out = a * b; returns 0, or -1 on overflow (then *out is unspecified). */
static inline int partile_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

static inline int partile_mul3_size(size_t a, size_t b, size_t c, size_t *out)
{
    size_t ab;
    return partile_mul_size(a, b, &ab) ? -1 : partile_mul_size(ab, c, out);
}

#endif
