/* A small, strict reader and writer for NumPy .npy files (format 1.0, 2.0
 * and 3.0), for the `partile` tool and its tests. No dependency on the
 * library.
 *
 * Reader: dtypes float64, float32, int64, int32, little-endian '<' (or '='
 * and '|', read as the host's own order); '>' (big-endian) is an error;
 * 1-D or 2-D shapes in C order (fortran_order True is accepted only for
 * ndim <= 1, where both orders are the same bytes). The header dict may hold
 * 'descr', 'fortran_order' and 'shape' in any order with any whitespace and
 * an optional trailing comma; any other key, a duplicate or a missing key is
 * an error. The file must hold exactly the bytes the shape implies: fewer is
 * an error ("truncated data") and so are trailing bytes after the data (a
 * sign that shape and data disagree; np.save never writes any). A stream
 * whose size is unknown (a pipe) is read into a buffer that grows with what
 * arrives, so a header claiming more than it holds is truncated data there
 * too, not an allocation of the claim.
 *
 * Writer: a version 1.0 header padded with spaces to a multiple of 64 bytes
 * (magic + length + dict + '\n'), then the data in little-endian order.
 *
 * Every function returns 0 on success, or -1 with a one-line message in err
 * (NPY_ERR_SIZE bytes, always NUL-terminated; err may be NULL). They never
 * abort and never print. */
#ifndef PARTILE_TOOLS_NPY_H
#define PARTILE_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPY_ERR_SIZE 256

typedef enum npy_dtype {
    NPY_DTYPE_F8 = 0, /* float64, '<f8' */
    NPY_DTYPE_F4 = 1, /* float32, '<f4' */
    NPY_DTYPE_I8 = 2, /* int64,   '<i8' */
    NPY_DTYPE_I4 = 3  /* int32,   '<i4' */
} npy_dtype_t;

typedef struct npy_array {
    npy_dtype_t dtype;
    int ndim;         /* 1 or 2 */
    int64_t shape[2]; /* shape[1] is 1 when ndim == 1 */
    size_t count;     /* elements: shape[0] * shape[1] */
    void *data;       /* malloc'd, count elements in host order; NULL if count == 0 */
} npy_array_t;

/* Bytes per element (8, 4, 8, 4), or 0 for an unknown value. */
size_t npy_dtype_size(npy_dtype_t dtype);

/* NumPy's name: "float64", "float32", "int64", "int32" (or "unknown"). */
const char *npy_dtype_name(npy_dtype_t dtype);

/* Reads path into *out (zeroed first; on error it stays zeroed and owns
 * nothing). Free with npy_array_free. */
int npy_read(const char *path, npy_array_t *out, char *err);

/* Frees out->data and zeroes *out. NULL is accepted. */
void npy_array_free(npy_array_t *a);

/* Writes a C-order 1-D (ndim 1) or 2-D (ndim 2) array of shape[0..ndim)
 * non-negative dims. data may be NULL when there are no elements. On a write
 * error the partial file is removed. */
int npy_write(const char *path, npy_dtype_t dtype, int ndim, const int64_t *shape,
              const void *data, char *err);

/* The same for 1 to NPY_WRITE_MAX_DIMS dimensions (e.g. a (nnz, 3, 3) block
 * array). The reader stays 1-D/2-D. */
#define NPY_WRITE_MAX_DIMS 8
int npy_write_nd(const char *path, npy_dtype_t dtype, int ndim, const int64_t *shape,
                 const void *data, char *err);

/* Shorthand: a 1-D int64 array of n elements. */
int npy_write_i64(const char *path, const int64_t *data, size_t n, char *err);

#endif
