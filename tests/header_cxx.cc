// The public headers compile as C++20 too (a C++ caller includes them).
#include "partile/partile.h"

int header_cxx_compiles();
int header_cxx_compiles() { return 0; }
