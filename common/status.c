#include <stdarg.h>
#include <stdio.h>

#include "partile/status.h"
#include "common/error.h"

static _Thread_local char last_detail[512];

const char *partile_status_string(int status)
{
    switch (status) {
    case PARTILE_SUCCESS: return "success";
    case PARTILE_ERROR_NULL_POINTER: return "a required pointer argument is NULL";
    case PARTILE_ERROR_INVALID_ARGUMENT: return "an argument is out of its valid range";
    case PARTILE_ERROR_UNKNOWN_BACKEND:
        return "unknown backend name (expected \"reference\", \"cuda\", \"hip\" or \"auto\")";
    case PARTILE_ERROR_NOT_COMPILED: return "the backend was not compiled into this library";
    case PARTILE_ERROR_NO_DEVICE: return "the backend found no usable device";
    case PARTILE_ERROR_UNSUPPORTED: return "the backend does not support this operation or shape";
    case PARTILE_ERROR_SIZE_OVERFLOW: return "a size computation overflows";
    case PARTILE_ERROR_OUT_OF_MEMORY: return "out of memory";
    case PARTILE_ERROR_DEVICE: return "the GPU runtime reported an error";
    case PARTILE_ERROR_BAD_DEVICE_INDEX: return "device index out of range";
    case PARTILE_ERROR_OUT_OF_DOMAIN:
        return "a particle position lies outside the grid (a non-periodic axis's bounds, or 2^52 "
               "cells from a periodic one)";
    case PARTILE_ERROR_NOT_FINITE: return "a particle position (or omega) is NaN or infinite";
    case PARTILE_ERROR_NOT_SORTED: return "particles are not sorted by cell where sorted input is required";
    default: return "unknown status code";
    }
}

const char *partile_last_error_detail(void) { return last_detail; }

void partile_clear_error(void) { last_detail[0] = '\0'; }

int partile_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_detail, sizeof last_detail, fmt, ap);
    va_end(ap);
    return status;
}
