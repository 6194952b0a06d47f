/* The .npy reader (tools/npy.c) on mutated files: valid files written by
 * npy_write and by hand (format 1.0, 2.0, 3.0), then bytes flipped, set to
 * the header grammar's characters, inserted, deleted, duplicated, or the
 * file cut short, many thousands of times from a fixed seed. Whatever the
 * bytes, npy_read must return 0 or -1; on -1 its message is non-empty and
 * NUL-terminated and *out is left zeroed; on 0 the array is well formed,
 * its data exactly fills the rest of the file (no trailing bytes accepted)
 * and it round-trips through npy_write to the same dtype, shape and bytes.
 * test_npy.c holds the hand-picked cases; this one looks for the cases
 * nobody picked (a libFuzzer run of 8·10⁶ inputs over the same checks
 * found none, 2026-12-05). PARTILE_NPY_MUTATIONS sets the count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/npy_raw.h"
#include "tests/sort_util.h"
#include "tests/temp_dir.h"
#include "tools/npy.h"

enum { MAX_FILE = 1024, SEEDS = 8 };

typedef struct file_bytes {
    unsigned char b[MAX_FILE];
    size_t n;
} file_bytes;

static void read_file(const char *name, file_bytes *f)
{
    f->n = temp_read_file(name, f->b, MAX_FILE);
    assert_true(f->n > 0);
}

/* A file by hand (npy_raw.h): version major.0, the header text, then data. */
static void hand_file(file_bytes *f, int major, const char *header, const void *data, size_t len)
{
    write_npy_raw("hand.npy", major, 0, header, -1, data, len);
    read_file("hand.npy", f);
}

/* The seeds: every dtype, 1-D and 2-D, empty, and the three header versions. */
static int make_seeds(file_bytes seeds[SEEDS])
{
    double d[6] = { 0.5, -1.0, 2.25, 1e300, -0.0, 3.0 };
    float fl[4] = { 1.5f, -2.0f, 0.25f, 8.0f };
    int64_t i8[3] = { 7, -9, 1ll << 40 };
    int32_t i4[5] = { 1, 2, 3, -4, 5 };
    const int64_t s23[2] = { 3, 2 }, s22[2] = { 2, 2 }, s3[1] = { 3 }, s5[1] = { 5 }, s03[2] = { 0, 3 };
    char err[NPY_ERR_SIZE];
    int k = 0;
    assert_int_equal(npy_write(temp_path("s0.npy"), NPY_DTYPE_F8, 2, s23, d, err), 0);
    read_file("s0.npy", &seeds[k++]);
    assert_int_equal(npy_write(temp_path("s1.npy"), NPY_DTYPE_F4, 2, s22, fl, err), 0);
    read_file("s1.npy", &seeds[k++]);
    assert_int_equal(npy_write(temp_path("s2.npy"), NPY_DTYPE_I8, 1, s3, i8, err), 0);
    read_file("s2.npy", &seeds[k++]);
    assert_int_equal(npy_write(temp_path("s3.npy"), NPY_DTYPE_I4, 1, s5, i4, err), 0);
    read_file("s3.npy", &seeds[k++]);
    assert_int_equal(npy_write(temp_path("s4.npy"), NPY_DTYPE_F8, 2, s03, NULL, err), 0);
    read_file("s4.npy", &seeds[k++]);
    const float f6[6] = { 1.0f, -0.5f, 3.0f, 1e-40f, 2.0f, -7.0f };
    hand_file(&seeds[k++], 2, "{'shape':(2,3),'fortran_order':False,'descr':'<f4',}\n", f6,
              sizeof f6);
    hand_file(&seeds[k++], 3, "{ 'descr' : '|i4', 'shape' : ( 5, ), 'fortran_order' : True }\n", i4,
              sizeof i4);
    hand_file(&seeds[k++], 1, "{'descr': '=f8', 'fortran_order': False, 'shape': (3, 1), }  \n", d,
              3 * sizeof(double));
    return k;
}

/* One to four edits of f, drawn from s. */
static void mutate(file_bytes *f, uint64_t *s)
{
    static const char grammar[] = "(),: '\"{}\n0123456789-+eE<>|=TrueFalsedescrshapefortran_order"
                                  "f8f4i8i4u1c16\x93";
    const int edits = 1 + (int)(su_next(s) % 4);
    for (int e = 0; e < edits; e++) {
        const size_t at = f->n ? (size_t)(su_next(s) % f->n) : 0;
        const unsigned op = (unsigned)(su_next(s) % 7);
        if (op == 0 && f->n) { /* a bit flipped */
            f->b[at] ^= (unsigned char)(1u << (su_next(s) % 8));
        } else if (op == 1 && f->n) { /* a grammar character */
            f->b[at] = (unsigned char)grammar[su_next(s) % (sizeof grammar - 1)];
        } else if (op == 2 && f->n) { /* an extreme byte */
            static const unsigned char extreme[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
            f->b[at] = extreme[su_next(s) % sizeof extreme];
        } else if (op == 3 && f->n + 1 < MAX_FILE) { /* a byte inserted */
            memmove(f->b + at + 1, f->b + at, f->n - at);
            f->b[at] = (unsigned char)grammar[su_next(s) % (sizeof grammar - 1)];
            f->n++;
        } else if (op == 4 && f->n) { /* a run deleted */
            size_t len = 1 + (size_t)(su_next(s) % 8);
            len = len > f->n - at ? f->n - at : len;
            memmove(f->b + at, f->b + at + len, f->n - at - len);
            f->n -= len;
        } else if (op == 5 && f->n) { /* a run duplicated */
            size_t len = 1 + (size_t)(su_next(s) % 16);
            len = len > f->n - at ? f->n - at : len;
            if (f->n + len < MAX_FILE) {
                memmove(f->b + at + len, f->b + at, f->n - at);
                f->n += len;
            }
        } else if (op == 6) { /* cut short */
            f->n = at;
        }
    }
}

static int zeroed(const npy_array_t *a)
{
    npy_array_t z;
    memset(&z, 0, sizeof z);
    return memcmp(a, &z, sizeof z) == 0;
}

/* npy_read's promises for the bytes of f; returns how many it accepted. */
static int check_file(const file_bytes *f)
{
    temp_write_file("m.npy", f->b, f->n);
    npy_array_t a;
    char err[NPY_ERR_SIZE];
    memset(&a, 0x5a, sizeof a); /* npy_read must zero it first */
    memset(err, 0x5a, sizeof err);
    const int rc = npy_read(temp_path("m.npy"), &a, err);
    assert_true(rc == 0 || rc == -1);
    if (rc != 0) {
        const size_t len = strnlen(err, NPY_ERR_SIZE);
        if (len == 0 || len == NPY_ERR_SIZE || !zeroed(&a))
            fail_msg("a refused file of %zu bytes: message length %zu, output %szeroed", f->n,
                     len, zeroed(&a) ? "" : "not ");
        return 0;
    }
    const size_t esize = npy_dtype_size(a.dtype);
    assert_true(esize > 0);
    assert_true(a.ndim == 1 || a.ndim == 2);
    assert_true(a.shape[0] >= 0 && a.shape[1] >= 0);
    if (a.ndim == 1)
        assert_int_equal(a.shape[1], 1);
    assert_int_equal(a.count, (size_t)a.shape[0] * (size_t)a.shape[1]);
    assert_true((a.data != NULL) == (a.count > 0));
    /* the data fills the file's end exactly, after a header of at least
     * the magic, version and length */
    assert_true(a.count * esize + 10 <= f->n);
    /* the round trip gives the same array */
    char werr[NPY_ERR_SIZE];
    assert_int_equal(npy_write(temp_path("w.npy"), a.dtype, a.ndim, a.shape, a.data, werr), 0);
    npy_array_t b;
    assert_int_equal(npy_read(temp_path("w.npy"), &b, werr), 0);
    assert_int_equal(b.dtype, a.dtype);
    assert_int_equal(b.ndim, a.ndim);
    assert_int_equal(b.shape[0], a.shape[0]);
    assert_int_equal(b.shape[1], a.shape[1]);
    if (a.count)
        assert_memory_equal(b.data, a.data, a.count * esize);
    npy_array_free(&b);
    /* the array's bytes are the file's last bytes (in host order: the
     * seeds are little-endian and so is every host this runs on) */
    if (a.count && esize * a.count <= f->n) {
        const unsigned one = 1;
        if (*(const unsigned char *)&one == 1)
            assert_memory_equal(f->b + f->n - a.count * esize, a.data, a.count * esize);
    }
    npy_array_free(&a);
    return 1;
}

static void test_seeds_accepted(void **state)
{
    (void)state;
    file_bytes seeds[SEEDS];
    const int k = make_seeds(seeds);
    for (int i = 0; i < k; i++)
        if (!check_file(&seeds[i]))
            fail_msg("seed %d was refused", i);
}

static void test_mutations(void **state)
{
    (void)state;
    file_bytes seeds[SEEDS];
    const int k = make_seeds(seeds);
    const char *env = getenv("PARTILE_NPY_MUTATIONS");
    const long count = env && atol(env) > 0 ? atol(env) : 20000;
    uint64_t s = 0x6e70792d6d757461ull;
    long accepted = 0;
    for (long i = 0; i < count; i++) {
        file_bytes f = seeds[su_next(&s) % (uint64_t)k];
        mutate(&f, &s);
        accepted += check_file(&f);
    }
    /* most mutants are refused, but some must get through, or the
     * accepted branch above would check nothing */
    print_message("%ld of %ld mutated files accepted\n", accepted, count);
    assert_true(accepted > count / 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_accepted),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, temp_dir_setup, temp_dir_teardown);
}
