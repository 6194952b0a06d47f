/* A small, strict NumPy .npy reader and writer (see npy.h). */
#include "tools/npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1u << 24) /* 16 MiB: far beyond any real header */
#define NPY_MAX_DIMS 64           /* NumPy 2's NPY_MAXDIMS */

static void set_err(char *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NPY_ERR_SIZE, fmt, ap);
    va_end(ap);
}

static int host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void swap_bytes(void *data, size_t count, size_t esize)
{
    unsigned char *p = data;
    for (size_t i = 0; i < count; i++, p += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

size_t npy_dtype_size(npy_dtype_t dtype)
{
    switch (dtype) {
    case NPY_DTYPE_F8: return 8;
    case NPY_DTYPE_F4: return 4;
    case NPY_DTYPE_I8: return 8;
    case NPY_DTYPE_I4: return 4;
    }
    return 0;
}

const char *npy_dtype_name(npy_dtype_t dtype)
{
    switch (dtype) {
    case NPY_DTYPE_F8: return "float64";
    case NPY_DTYPE_F4: return "float32";
    case NPY_DTYPE_I8: return "int64";
    case NPY_DTYPE_I4: return "int32";
    }
    return "unknown";
}

static const char *dtype_code(npy_dtype_t dtype)
{
    switch (dtype) {
    case NPY_DTYPE_F8: return "f8";
    case NPY_DTYPE_F4: return "f4";
    case NPY_DTYPE_I8: return "i8";
    case NPY_DTYPE_I4: return "i4";
    }
    return NULL;
}

void npy_array_free(npy_array_t *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- header dict parser ------------------------------------------------ */

typedef struct parser {
    const char *p, *end;
    char *err;
} parser;

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && is_ws(*ps->p))
        ps->p++;
}

static int at(parser *ps, char c)
{
    return ps->p < ps->end && *ps->p == c;
}

/* Describes the current position for messages: the next few characters. */
static const char *here(parser *ps, char *buf, size_t cap)
{
    if (ps->p >= ps->end)
        return "end of header";
    size_t n = 0;
    buf[n++] = '"';
    for (const char *q = ps->p; q < ps->end && n + 2 < cap && n < 13; q++)
        buf[n++] = (*q >= 32 && *q < 127) ? *q : '?';
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}

static int expect(parser *ps, char c, const char *what)
{
    skip_ws(ps);
    if (!at(ps, c)) {
        char b[24];
        set_err(ps->err, "malformed header: expected '%c' %s, found %s", c, what,
                here(ps, b, sizeof b));
        return -1;
    }
    ps->p++;
    return 0;
}

/* A Python string literal in ' or " quotes, without escapes. */
static int parse_string(parser *ps, char *out, size_t cap, const char *what)
{
    skip_ws(ps);
    char b[24];
    if (!at(ps, '\'') && !at(ps, '"')) {
        set_err(ps->err, "malformed header: expected a quoted string for %s, found %s", what,
                here(ps, b, sizeof b));
        return -1;
    }
    char q = *ps->p++;
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != q) {
        char c = *ps->p;
        if (c == '\\' || c == '\n' || c == '\0') {
            set_err(ps->err, "malformed header: unsupported character in string for %s", what);
            return -1;
        }
        if (n + 1 >= cap) {
            set_err(ps->err, "malformed header: string for %s is too long", what);
            return -1;
        }
        out[n++] = c;
        ps->p++;
    }
    if (ps->p >= ps->end) {
        set_err(ps->err, "malformed header: unterminated string for %s", what);
        return -1;
    }
    ps->p++;
    out[n] = '\0';
    return 0;
}

static int parse_bool(parser *ps, int *value)
{
    skip_ws(ps);
    size_t left = (size_t)(ps->end - ps->p);
    int v = -1;
    size_t len = 0;
    if (left >= 4 && !memcmp(ps->p, "True", 4))
        v = 1, len = 4;
    else if (left >= 5 && !memcmp(ps->p, "False", 5))
        v = 0, len = 5;
    char c = left > len ? ps->p[len] : ' ';
    if (v < 0 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        c == '_') {
        char b[24];
        set_err(ps->err, "malformed header: 'fortran_order' must be True or False, found %s",
                here(ps, b, sizeof b));
        return -1;
    }
    ps->p += len;
    *value = v;
    return 0;
}

/* A dimension: optional sign, decimal digits, optional Python 2 'L'. */
static int parse_dim(parser *ps, int64_t *value)
{
    skip_ws(ps);
    int neg = 0;
    if (at(ps, '-') || at(ps, '+')) {
        neg = *ps->p == '-';
        ps->p++;
    }
    if (!(ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')) {
        char b[24];
        set_err(ps->err, "malformed header: expected an integer in 'shape', found %s",
                here(ps, b, sizeof b));
        return -1;
    }
    int64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        int d = *ps->p++ - '0';
        if (v > (INT64_MAX - d) / 10) {
            set_err(ps->err, "bad shape: a dimension exceeds %" PRId64, INT64_MAX);
            return -1;
        }
        v = v * 10 + d;
    }
    if (at(ps, 'L') || at(ps, 'l'))
        ps->p++;
    if (neg && v != 0) {
        set_err(ps->err, "bad shape: negative dimension -%" PRId64, v);
        return -1;
    }
    *value = v;
    return 0;
}

static int parse_shape(parser *ps, int64_t *dims, int *ndim)
{
    if (expect(ps, '(', "to open 'shape' (a tuple)") < 0)
        return -1;
    int n = 0, commas = 0;
    skip_ws(ps);
    while (!at(ps, ')')) {
        if (n == NPY_MAX_DIMS) {
            set_err(ps->err, "bad shape: more than %d dimensions", NPY_MAX_DIMS);
            return -1;
        }
        if (parse_dim(ps, &dims[n]) < 0)
            return -1;
        n++;
        skip_ws(ps);
        if (at(ps, ',')) {
            ps->p++;
            commas++;
            skip_ws(ps);
        } else if (!at(ps, ')')) {
            char b[24];
            set_err(ps->err, "malformed header: expected ',' or ')' in 'shape', found %s",
                    here(ps, b, sizeof b));
            return -1;
        }
    }
    ps->p++;
    if (n == 1 && commas == 0) {
        set_err(ps->err, "malformed header: 'shape' (%" PRId64 ") is not a tuple (write (%" PRId64
                         ",))", dims[0], dims[0]);
        return -1;
    }
    *ndim = n;
    return 0;
}

typedef struct header {
    char descr[64];
    int fortran;
    int ndim;
    int64_t dims[NPY_MAX_DIMS];
} header;

static int parse_header(const char *text, size_t len, header *h, char *err)
{
    parser ps = { text, text + len, err };
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (expect(&ps, '{', "at the start of the header dict") < 0)
        return -1;
    for (;;) {
        skip_ws(&ps);
        if (at(&ps, '}'))
            break;
        char key[32];
        if (parse_string(&ps, key, sizeof key, "a key") < 0)
            return -1;
        if (expect(&ps, ':', "after a key") < 0)
            return -1;
        int *seen;
        if (!strcmp(key, "descr")) {
            seen = &have_descr;
            skip_ws(&ps);
            if (at(&ps, '[')) {
                set_err(err, "unsupported dtype: structured (record) arrays are not supported");
                return -1;
            }
            if (!*seen && parse_string(&ps, h->descr, sizeof h->descr, "'descr'") < 0)
                return -1;
        } else if (!strcmp(key, "fortran_order")) {
            seen = &have_fortran;
            if (!*seen && parse_bool(&ps, &h->fortran) < 0)
                return -1;
        } else if (!strcmp(key, "shape")) {
            seen = &have_shape;
            if (!*seen && parse_shape(&ps, h->dims, &h->ndim) < 0)
                return -1;
        } else {
            set_err(err, "malformed header: unexpected key '%s'", key);
            return -1;
        }
        if (*seen) {
            set_err(err, "malformed header: key '%s' appears twice", key);
            return -1;
        }
        *seen = 1;
        skip_ws(&ps);
        if (at(&ps, ','))
            ps.p++;
        else if (!at(&ps, '}')) {
            char b[24];
            set_err(err, "malformed header: expected ',' or '}' after '%s', found %s", key,
                    here(&ps, b, sizeof b));
            return -1;
        }
    }
    ps.p++; /* '}' */
    skip_ws(&ps);
    if (ps.p != ps.end) {
        char b[24];
        set_err(err, "malformed header: unexpected %s after the dict", here(&ps, b, sizeof b));
        return -1;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        set_err(err, "malformed header: missing key '%s'",
                !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
}

/* descr -> dtype; *swap set when the data must be byte-swapped for the host. */
static int parse_descr(const char *descr, npy_dtype_t *dtype, int *swap, char *err)
{
    char order = descr[0];
    const char *code = descr + (descr[0] ? 1 : 0);
    static const npy_dtype_t all[] = { NPY_DTYPE_F8, NPY_DTYPE_F4, NPY_DTYPE_I8, NPY_DTYPE_I4 };
    int found = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(code, dtype_code(all[i])))
            found = i;
    if (order == '>' && found >= 0) {
        set_err(err, "unsupported dtype '%s': big-endian data is not supported (use '<%s')",
                descr, code);
        return -1;
    }
    if (found < 0 || (order != '<' && order != '=' && order != '|')) {
        set_err(err, "unsupported dtype '%s' (supported: <f8, <f4, <i8, <i4)", descr);
        return -1;
    }
    *dtype = all[found];
    *swap = order == '<' && !host_little_endian();
    return 0;
}

/* ---- reader ------------------------------------------------------------ */

static int read_exact(FILE *f, void *buf, size_t n, size_t *got)
{
    *got = fread(buf, 1, n, f);
    return *got == n ? 0 : -1;
}

/* n bytes from a stream whose size is unknown (a pipe): into a buffer that
 * grows with what arrives, so that a header claiming more than the stream
 * holds ends as truncated data, not as an allocation of what it claims.
 * *data: the buffer (the caller frees it, also on failure; NULL when it
 * could not be had, *got then what had arrived); 0, or -1 with *got < n. */
static int read_growing(FILE *f, size_t n, void **data, size_t *got)
{
    size_t cap = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    unsigned char *buf = malloc(cap);
    *got = 0;
    while (buf) {
        *got += fread(buf + *got, 1, cap - *got, f);
        if (*got < cap || cap == n)
            break;
        const size_t next = cap > n / 2 ? n : 2 * cap;
        unsigned char *grown = realloc(buf, next);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap = next;
    }
    *data = buf;
    return buf && *got == n ? 0 : -1;
}

int npy_read(const char *path, npy_array_t *out, char *err)
{
    if (err)
        err[0] = '\0';
    if (!out) {
        set_err(err, "internal error: no output array");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (!path) {
        set_err(err, "no file name");
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, "cannot open: %s", strerror(errno));
        return -1;
    }
    int rc = -1;
    char *text = NULL;
    void *data = NULL;
    long long size = -1; /* file size, when it is a regular file */
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            set_err(err, "is a directory");
            goto done;
        }
        if (S_ISREG(st.st_mode))
            size = (long long)st.st_size;
    }

    unsigned char pre[12];
    size_t got;
    if (read_exact(f, pre, 8, &got) < 0) {
        if (ferror(f))
            set_err(err, "read error: %s", strerror(errno));
        else if (memcmp(pre, NPY_MAGIC, got < NPY_MAGIC_LEN ? got : NPY_MAGIC_LEN) != 0)
            set_err(err, "not a .npy file (bad magic)");
        else
            set_err(err, "truncated: %zu bytes, shorter than the .npy preamble", got);
        goto done;
    }
    if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        set_err(err, "not a .npy file (bad magic)");
        goto done;
    }
    int major = pre[6], minor = pre[7];
    size_t lenbytes;
    if (major == 1 && minor == 0)
        lenbytes = 2;
    else if ((major == 2 || major == 3) && minor == 0)
        lenbytes = 4;
    else {
        set_err(err, "unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major,
                minor);
        goto done;
    }
    if (read_exact(f, pre + 8, lenbytes, &got) < 0) {
        set_err(err, "truncated: the file ends inside the header length field");
        goto done;
    }
    uint32_t hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (lenbytes == 4)
        hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    size_t preamble = 8 + lenbytes;
    if (size >= 0 && (long long)hlen > size - (long long)preamble) {
        set_err(err, "truncated header: header length %" PRIu32 " extends beyond the end of the "
                     "file (%lld bytes after the preamble)", hlen, size - (long long)preamble);
        goto done;
    }
    if (hlen > NPY_MAX_HEADER) {
        set_err(err, "header length %" PRIu32 " is implausibly large", hlen);
        goto done;
    }
    text = malloc((size_t)hlen + 1);
    if (!text) {
        set_err(err, "out of memory reading the header");
        goto done;
    }
    if (read_exact(f, text, hlen, &got) < 0) {
        set_err(err, "truncated header: expected %" PRIu32 " bytes, the file has %zu", hlen, got);
        goto done;
    }
    text[hlen] = '\0';
    if (memchr(text, '\0', hlen)) {
        set_err(err, "malformed header: contains a NUL byte");
        goto done;
    }

    header h;
    memset(&h, 0, sizeof h);
    if (parse_header(text, hlen, &h, err) < 0)
        goto done;
    npy_dtype_t dtype;
    int swap;
    if (parse_descr(h.descr, &dtype, &swap, err) < 0)
        goto done;
    if (h.ndim < 1 || h.ndim > 2) {
        set_err(err, "unsupported shape: %d dimensions (only 1-D and 2-D arrays are supported)",
                h.ndim);
        goto done;
    }
    if (h.fortran && h.ndim > 1) {
        set_err(err, "unsupported layout: fortran_order is True for a %d-D array (C order only)",
                h.ndim);
        goto done;
    }
    int64_t d0 = h.dims[0], d1 = h.ndim == 2 ? h.dims[1] : 1;
    size_t esize = npy_dtype_size(dtype);
    if ((uint64_t)d0 > SIZE_MAX || (uint64_t)d1 > SIZE_MAX ||
        (d1 != 0 && (size_t)d0 > SIZE_MAX / (size_t)d1) ||
        (d1 != 0 && (size_t)d0 * (size_t)d1 > SIZE_MAX / esize) ||
        (d0 != 0 && d1 != 0 && (uint64_t)d0 > (uint64_t)INT64_MAX / (uint64_t)d1)) {
        set_err(err, "bad shape: (%" PRId64 ", %" PRId64 ") of %s overflows the size "
                     "computation", d0, d1, npy_dtype_name(dtype));
        goto done;
    }
    size_t count = (size_t)d0 * (size_t)d1;
    size_t bytes = count * esize;
    long long offset = (long long)preamble + (long long)hlen;
    if (size >= 0 && (unsigned long long)(size - offset) < (unsigned long long)bytes) {
        set_err(err, "truncated data: the shape needs %zu bytes of %s, the file has %lld after "
                     "the header", bytes, npy_dtype_name(dtype), size - offset);
        goto done;
    }
    if (count > 0) {
        const int known = size >= 0; /* a regular file: its size was checked above */
        if (known)
            data = malloc(bytes);
        const int short_read = known ? (data ? read_exact(f, data, bytes, &got) : 0)
                                     : read_growing(f, bytes, &data, &got);
        if (!data) {
            set_err(err, "out of memory: %zu bytes for the data", bytes);
            goto done;
        }
        if (short_read < 0) {
            if (ferror(f))
                set_err(err, "read error: %s", strerror(errno));
            else
                set_err(err, "truncated data: the shape needs %zu bytes of %s, the file has %zu "
                             "after the header", bytes, npy_dtype_name(dtype), got);
            goto done;
        }
    }
    if (fgetc(f) != EOF) {
        long long extra = size >= 0 ? size - offset - (long long)bytes : -1;
        if (extra > 0)
            set_err(err, "trailing garbage: %lld bytes after the data the shape implies", extra);
        else
            set_err(err, "trailing garbage after the data the shape implies");
        goto done;
    }
    if (swap)
        swap_bytes(data, count, esize);
    out->dtype = dtype;
    out->ndim = h.ndim;
    out->shape[0] = d0;
    out->shape[1] = d1;
    out->count = count;
    out->data = data;
    data = NULL;
    rc = 0;
done:
    free(text);
    free(data);
    fclose(f);
    return rc;
}

/* ---- writer ------------------------------------------------------------ */

/* Any ndim in 1 .. NPY_WRITE_MAX_DIMS; npy_write keeps its 1-D/2-D contract. */
static int write_array(const char *path, npy_dtype_t dtype, int ndim, const int64_t *shape,
                       const void *data, char *err)
{
    if (err)
        err[0] = '\0';
    size_t esize = npy_dtype_size(dtype);
    if (!path || !shape || esize == 0 || ndim < 1 || ndim > NPY_WRITE_MAX_DIMS) {
        set_err(err, "internal error: bad arguments to npy_write");
        return -1;
    }
    size_t count = 1;
    for (int k = 0; k < ndim; k++) {
        int64_t d = shape[k];
        if (d < 0 || (uint64_t)d > SIZE_MAX) {
            set_err(err, "internal error: bad shape for npy_write");
            return -1;
        }
        if (count != 0 && (size_t)d > SIZE_MAX / count / esize) {
            set_err(err, "internal error: bad shape for npy_write");
            return -1;
        }
        count *= (size_t)d;
    }
    size_t bytes = count * esize;
    if (count > 0 && !data) {
        set_err(err, "internal error: no data for npy_write");
        return -1;
    }

    /* 'shape': (d0,) for 1-D, else (d0, d1, ...) as NumPy writes it */
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '<%s', 'fortran_order': False, 'shape': (",
                     dtype_code(dtype));
    for (int k = 0; k < ndim; k++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%" PRId64, k ? ", " : "", shape[k]);
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", ndim == 1 ? "," : "");
    /* magic(6) + version(2) + length(2) + dict + padding + '\n' = 64·k */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    size_t hlen = total - 10;
    unsigned char head[320];
    memcpy(head, NPY_MAGIC, NPY_MAGIC_LEN);
    head[6] = 1;
    head[7] = 0;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)n);
    memset(head + 10 + n, ' ', total - 10 - (size_t)n - 1);
    head[total - 1] = '\n';

    FILE *f = fopen(path, "wb");
    if (!f) {
        set_err(err, "cannot create: %s", strerror(errno));
        return -1;
    }
    int ok = fwrite(head, 1, total, f) == total;
    if (ok && bytes > 0) {
        if (host_little_endian())
            ok = fwrite(data, 1, bytes, f) == bytes;
        else {
            unsigned char chunk[4096];
            const unsigned char *src = data;
            for (size_t done = 0; ok && done < bytes;) {
                size_t m = bytes - done < sizeof chunk ? bytes - done : sizeof chunk;
                memcpy(chunk, src + done, m);
                swap_bytes(chunk, m / esize, esize);
                ok = fwrite(chunk, 1, m, f) == m;
                done += m;
            }
        }
    }
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        set_err(err, "write error: %s", strerror(saved));
        remove(path);
        return -1;
    }
    return 0;
}

int npy_write(const char *path, npy_dtype_t dtype, int ndim, const int64_t *shape,
              const void *data, char *err)
{
    if (ndim < 1 || ndim > 2) {
        if (err)
            err[0] = '\0';
        set_err(err, "internal error: bad arguments to npy_write");
        return -1;
    }
    return write_array(path, dtype, ndim, shape, data, err);
}

int npy_write_nd(const char *path, npy_dtype_t dtype, int ndim, const int64_t *shape,
                 const void *data, char *err)
{
    return write_array(path, dtype, ndim, shape, data, err);
}

int npy_write_i64(const char *path, const int64_t *data, size_t n, char *err)
{
    if (n > (size_t)INT64_MAX) {
        set_err(err, "internal error: too many elements");
        return -1;
    }
    int64_t shape[1] = { (int64_t)n };
    return npy_write(path, NPY_DTYPE_I8, 1, shape, data, err);
}
