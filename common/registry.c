/* Placeholders for backends this build does not contain: only the name is
 * set, so the front end can say "not compiled" rather than "unknown". */
#include "common/backend.h"

#ifndef PARTILE_HAVE_CUDA
const partile_backend_ops_t partile_backend_cuda = { .name = "cuda", .targets = "" };
#endif
#ifndef PARTILE_HAVE_HIP
const partile_backend_ops_t partile_backend_hip = { .name = "hip", .targets = "" };
#endif
