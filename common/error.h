/* Recording failure details for partile_last_error_detail(). Callable from
 * every backend (C, CUDA C++, HIP C++). */
#ifndef PARTILE_COMMON_ERROR_H
#define PARTILE_COMMON_ERROR_H

#include "partile/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a printf-style detail for this thread and returns status, so that
 * `return partile_fail(PARTILE_ERROR_..., "...", ...);` reads naturally. */
int partile_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Forget any recorded detail (done at the start of each API call). */
void partile_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
