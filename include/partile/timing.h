/* partile — timing on the context's device.
 *
 * GPU backends time with device events, the reference backend with a
 * monotonic host clock. fn is called warmup times untimed, then repeats
 * times, each timed on its own; the median and minimum are returned. */
#ifndef PARTILE_TIMING_H
#define PARTILE_TIMING_H

#include "partile/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*partile_timed_fn)(partile_context_t *ctx, void *arg);

typedef struct partile_timing {
    double median_s;
    double min_s;
    int repeats;
} partile_timing_t;

/* Stops at the first negative status fn returns and passes it on. */
int partile_time(partile_context_t *ctx, partile_timed_fn fn, void *arg,
                 int warmup, int repeats, partile_timing_t *timing);

#ifdef __cplusplus
}
#endif
#endif
