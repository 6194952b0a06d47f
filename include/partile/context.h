/* partile — contexts, backends and memory.
 *
 * A context binds one backend ("reference", "cuda", "hip", or "auto") and
 * one device. All data handed to a context's operations lives in that
 * backend's memory space: host memory for "reference", device memory for
 * the GPU backends. The memory helpers below let a C or Fortran caller stage
 * arrays without including any vendor header.
 *
 * Threads. Contexts are independent: different threads may use different
 * contexts at the same time (tests/test_concurrent.c: four threads, every
 * result the same bits as alone). One context must not be used from two
 * threads at once: it owns one stream and one workspace, so such callers
 * need their own lock. The failure detail (partile_last_error_detail) is
 * kept per thread. The reference backend runs each call with OpenMP threads
 * inside; its bits do not depend on their number (tests/test_threads.c). */
#ifndef PARTILE_CONTEXT_H
#define PARTILE_CONTEXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct partile_context partile_context_t;

/* Create a context. backend_name: "reference", "cuda", "hip" or "auto"
 * ("auto" takes the first GPU backend with a device, else "reference").
 * device: device index within the backend ("reference" has the one device
 * 0; any other index gives PARTILE_ERROR_BAD_DEVICE_INDEX).
 * On failure *ctx is set to NULL and a negative status is returned:
 * PARTILE_ERROR_UNKNOWN_BACKEND, PARTILE_ERROR_NOT_COMPILED,
 * PARTILE_ERROR_NO_DEVICE, PARTILE_ERROR_BAD_DEVICE_INDEX, ...
 * A GPU context owns a stream, a device workspace that grows to the largest
 * need of the calls made on it, and 256 bytes of pinned host memory (taken
 * by the first call) into which each call reads back its input checks;
 * partile_context_destroy frees them. */
int partile_context_create(const char *backend_name, int device,
                           partile_context_t **ctx);

/* Destroy a context; NULL is accepted and ignored. */
int partile_context_destroy(partile_context_t *ctx);

/* The backend's name ("reference", "cuda", "hip") and a description of the
 * device (e.g. "NVIDIA H200 (sm_90, 132 SMs)"). Strings live as long as ctx. */
const char *partile_context_backend(const partile_context_t *ctx);
const char *partile_context_device(const partile_context_t *ctx);

/* Block until every operation issued on ctx has finished. */
int partile_context_synchronize(partile_context_t *ctx);

/* The stream a GPU context issues its work on, for callers whose own
 * kernels share the data: stream is a cudaStream_t (CUDA) or hipStream_t
 * (HIP) of the context's device, created and destroyed by the caller, who
 * keeps it alive while ctx uses it; NULL returns to the context's own
 * stream (a non-blocking stream created with the context). Work the caller
 * queued on that stream before a partile call runs before it, with no
 * synchronization of the caller's; every partile call still waits for its
 * own work (it reads its input checks back) before it returns. Setting
 * first waits for the work issued on the previous stream. A stream the
 * runtime does not know: PARTILE_ERROR_INVALID_ARGUMENT, nothing changed
 * (a destroyed stream cannot always be told apart: undefined, as in the
 * vendor's API). The reference backend has no stream: NULL succeeds, any
 * other PARTILE_ERROR_UNSUPPORTED.
 * get: *stream = the stream in use (NULL for the reference backend). */
int partile_context_set_stream(partile_context_t *ctx, void *stream);
int partile_context_get_stream(const partile_context_t *ctx, void **stream);

/* What a backend offers, without creating a context. */
typedef struct partile_backend_info {
    const char *name;    /* "reference", "cuda", "hip" */
    int compiled;        /* 1 if built into this library */
    int device_count;    /* usable devices (1 for reference), 0 if none */
    const char *targets; /* compiled targets, e.g. "sm_80 sm_90" */
    const char *note;    /* why device_count is 0, or "" */
} partile_backend_info_t;

/* Number of backends partile knows (compiled or not), and the i-th one. */
int partile_backend_count(void);
int partile_backend_query(int index, partile_backend_info_t *info);

/* Memory of the context's backend. Allocation of 0 bytes gives NULL and
 * succeeds. partile_free(ctx, NULL) succeeds. */
int partile_malloc(partile_context_t *ctx, size_t bytes, void **ptr);
int partile_free(partile_context_t *ctx, void *ptr);

typedef enum partile_copy_kind {
    PARTILE_COPY_HOST_TO_DEVICE = 0,
    PARTILE_COPY_DEVICE_TO_HOST = 1,
    PARTILE_COPY_DEVICE_TO_DEVICE = 2
} partile_copy_kind_t;

/* Copy bytes between host memory and the context's memory, or within the
 * context's memory. Synchronous with respect to the host. */
int partile_memcpy(partile_context_t *ctx, void *dst, const void *src,
                   size_t bytes, partile_copy_kind_t kind);

/* Fill bytes of context memory with a byte value (used to poison outputs). */
int partile_memset(partile_context_t *ctx, void *dst, int value, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
