/* partile/status.h compiles on its own (first and only include). */
#include "partile/status.h"

int header_status_compiles(void);
int header_status_compiles(void) { return 0; }
