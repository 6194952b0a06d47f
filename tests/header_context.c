/* partile/context.h compiles on its own (first and only include). */
#include "partile/context.h"

int header_context_compiles(void);
int header_context_compiles(void) { return 0; }
