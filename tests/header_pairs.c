/* partile/pairs.h compiles on its own (first and only include). */
#include "partile/pairs.h"

int header_pairs_compiles(void);
int header_pairs_compiles(void) { return 0; }
