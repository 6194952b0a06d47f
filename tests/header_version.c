/* partile/version.h compiles on its own (first and only include). */
#include "partile/version.h"

int header_version_compiles(void);
int header_version_compiles(void) { return 0; }
