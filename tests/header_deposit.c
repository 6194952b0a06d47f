/* partile/deposit.h compiles on its own (first and only include). */
#include "partile/deposit.h"

int header_deposit_compiles(void);
int header_deposit_compiles(void) { return 0; }
