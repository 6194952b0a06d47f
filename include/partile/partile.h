/* partile — portable kernels for particle–grid methods. Umbrella header. */
#ifndef PARTILE_PARTILE_H
#define PARTILE_PARTILE_H

#include "partile/version.h"
#include "partile/status.h"
#include "partile/context.h"
#include "partile/mma.h"
#include "partile/timing.h"
#include "partile/sort.h"
#include "partile/deposit.h"
#include "partile/mass.h"
#include "partile/pairs.h"
#include "partile/apply.h"

#endif
