/* partile/mass.h compiles on its own (first and only include). */
#include "partile/mass.h"

int header_mass_compiles(void);
int header_mass_compiles(void) { return 0; }
