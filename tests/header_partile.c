/* partile/partile.h compiles on its own (first and only include). */
#include "partile/partile.h"

int header_partile_compiles(void);
int header_partile_compiles(void) { return 0; }
