/* The context as the front end sees it; shared by the front-end files. */
#ifndef PARTILE_COMMON_CONTEXT_INTERNAL_H
#define PARTILE_COMMON_CONTEXT_INTERNAL_H

#include "common/backend.h"
#include "common/error.h"

struct partile_context {
    const partile_backend_ops_t *ops;
    void *state;
    char device[160];
};

#define PARTILE_CHECK_CTX(ctx)                                                 \
    do {                                                                       \
        partile_clear_error();                                                 \
        if (!(ctx))                                                            \
            return partile_fail(PARTILE_ERROR_NULL_POINTER, "ctx is NULL");    \
    } while (0)

#endif
