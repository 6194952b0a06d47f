/* partile/timing.h compiles on its own (first and only include). */
#include "partile/timing.h"

int header_timing_compiles(void);
int header_timing_compiles(void) { return 0; }
