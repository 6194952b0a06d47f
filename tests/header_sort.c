/* partile/sort.h compiles on its own (first and only include). */
#include "partile/sort.h"

int header_sort_compiles(void);
int header_sort_compiles(void) { return 0; }
