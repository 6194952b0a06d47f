/* partile/apply.h compiles on its own (first and only include). */
#include "partile/apply.h"

int header_apply_compiles(void);
int header_apply_compiles(void) { return 0; }
