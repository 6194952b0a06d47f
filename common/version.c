#include "partile/version.h"

const char *partile_version(void) { return PARTILE_VERSION_STRING; }
