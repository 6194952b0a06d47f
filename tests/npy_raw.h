/* A .npy file written byte by byte into the test's temporary directory, for
 * the reader's tests (test_npy.c, test_npy_mutations.c); include after
 * cmocka.h. */
#ifndef PARTILE_TESTS_NPY_RAW_H
#define PARTILE_TESTS_NPY_RAW_H

#include <stdlib.h>
#include <string.h>

#include "tests/temp_dir.h"

/* A .npy file by hand: version major.0, the header text as given (no padding
 * added), the length field `hlen_field` (or the true length if < 0), then
 * data_len bytes of data. */
static void write_npy_raw(const char *name, int major, int minor, const char *header,
                          long long hlen_field, const void *data, size_t data_len)
{
    size_t hl = strlen(header);
    size_t lenbytes = major == 1 ? 2 : 4;
    size_t n = 8 + lenbytes + hl + data_len;
    unsigned char *buf = calloc(1, n);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = (unsigned char)minor;
    unsigned long long h = hlen_field < 0 ? hl : (unsigned long long)hlen_field;
    for (size_t i = 0; i < lenbytes; i++)
        buf[8 + i] = (unsigned char)(h >> (8 * i));
    memcpy(buf + 8 + lenbytes, header, hl);
    if (data_len)
        memcpy(buf + 8 + lenbytes + hl, data, data_len);
    temp_write_file(name, buf, n);
    free(buf);
}

#endif
