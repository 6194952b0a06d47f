/* partile/mma.h compiles on its own (first and only include). */
#include "partile/mma.h"

int header_mma_compiles(void);
int header_mma_compiles(void) { return 0; }
