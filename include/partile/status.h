/* partile — status codes.
 *
 * Every partile function returns an int: 0 on success, a negative
 * partile_status_t on failure. The library never aborts and never prints;
 * partile_status_string() turns a code into a message, and
 * partile_last_error_detail() gives the most recent failure's details
 * (for example the vendor's own error string) for the calling thread. */
#ifndef PARTILE_STATUS_H
#define PARTILE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum partile_status {
    PARTILE_SUCCESS = 0,
    PARTILE_ERROR_NULL_POINTER = -1,     /* a required pointer argument is NULL */
    PARTILE_ERROR_INVALID_ARGUMENT = -2, /* a value is out of its documented range */
    PARTILE_ERROR_UNKNOWN_BACKEND = -3,  /* backend name is not one partile knows */
    PARTILE_ERROR_NOT_COMPILED = -4,     /* backend exists but was not built in */
    PARTILE_ERROR_NO_DEVICE = -5,        /* backend built, but no usable device */
    PARTILE_ERROR_UNSUPPORTED = -6,      /* backend lacks this operation or shape */
    PARTILE_ERROR_SIZE_OVERFLOW = -7,    /* a size computation overflows size_t */
    PARTILE_ERROR_OUT_OF_MEMORY = -8,    /* host or device allocation failed */
    PARTILE_ERROR_DEVICE = -9,           /* the GPU runtime reported an error */
    PARTILE_ERROR_BAD_DEVICE_INDEX = -10, /* device index out of range */
    PARTILE_ERROR_OUT_OF_DOMAIN = -11,   /* a position lies outside a non-periodic grid, or
                                          * 2^52 cells or more from a periodic one */
    PARTILE_ERROR_NOT_FINITE = -12,      /* a position (or the mass matrix's ω) is NaN or
                                          * infinite */
    PARTILE_ERROR_NOT_SORTED = -13       /* input that must be sorted by cell is not */
} partile_status_t;

/* A static, human-readable message for a status code. Never NULL. */
const char *partile_status_string(int status);

/* Details of the last failure on this thread (e.g. "cudaMalloc: out of
 * memory"; for an error that names a particle, its position and what is
 * wrong with it: "particle 4 at (2.5, 0.1): x = 2.5 is outside [0, 1), the
 * non-periodic x axis"), or "" if none was recorded. Valid until the next
 * partile call on this thread. */
const char *partile_last_error_detail(void);

#ifdef __cplusplus
}
#endif
#endif
