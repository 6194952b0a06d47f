/* The .npy reader and writer behind `partile sort` (tools/npy.c): round trips
 * for every dtype, headers of format 1.0, 2.0 and 3.0 written by hand in odd
 * but valid forms, and every malformed file the reader must refuse with a
 * message (never a crash). Files go into a fresh mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/npy_raw.h"
#include "tests/temp_dir.h"
#include "tools/npy.h"

/* The reader must fail, leave *out empty and say why (containing `needle`). */
static void expect_error(const char *name, const char *needle)
{
    npy_array_t a;
    memset(&a, 0x5a, sizeof a);
    char err[NPY_ERR_SIZE];
    memset(err, 'x', sizeof err);
    int rc = npy_read(temp_path(name), &a, err);
    if (rc == 0)
        print_error("%s: expected an error, got success\n", name);
    assert_int_not_equal(rc, 0);
    assert_null(a.data);
    assert_int_equal(a.count, 0);
    assert_non_null(memchr(err, '\0', sizeof err));
    assert_true(strlen(err) > 0);
    if (needle && !strstr(err, needle)) {
        print_error("%s: message \"%s\" lacks \"%s\"\n", name, err, needle);
        fail();
    }
}

/* ---- round trips -------------------------------------------------------- */

static void round_trip(npy_dtype_t dt, int ndim, int64_t d0, int64_t d1)
{
    size_t es = npy_dtype_size(dt);
    size_t count = (size_t)d0 * (size_t)(ndim == 2 ? d1 : 1);
    unsigned char *data = malloc(count * es + 1);
    assert_non_null(data);
    for (size_t i = 0; i < count; i++) {
        switch (dt) {
        case NPY_DTYPE_F8: { double v = (double)i * 0.1 - 3.25; memcpy(data + i * es, &v, es); } break;
        case NPY_DTYPE_F4: { float v = (float)i * 0.5f - 7.0f; memcpy(data + i * es, &v, es); } break;
        case NPY_DTYPE_I8: { int64_t v = (int64_t)i * 1000000007LL - 5; memcpy(data + i * es, &v, es); } break;
        case NPY_DTYPE_I4: { int32_t v = (int32_t)i * 7 - 100; memcpy(data + i * es, &v, es); } break;
        }
    }
    int64_t shape[2] = { d0, d1 };
    char err[NPY_ERR_SIZE];
    const char *p = temp_path("rt.npy");
    assert_int_equal(npy_write(p, dt, ndim, shape, count ? data : NULL, err), 0);

    /* The header: v1.0, total preamble + header a multiple of 64, ends in '\n'. */
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    unsigned char pre[10];
    assert_int_equal(fread(pre, 1, 10, f), 10);
    assert_memory_equal(pre, "\x93NUMPY\x01\x00", 8);
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    char *h = malloc(hlen);
    assert_non_null(h);
    assert_int_equal(fread(h, 1, hlen, f), hlen);
    assert_int_equal(h[hlen - 1], '\n');
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    assert_int_equal(ftell(f), (long)(10 + hlen + count * es));
    fclose(f);
    free(h);

    npy_array_t a;
    assert_int_equal(npy_read(p, &a, err), 0);
    assert_int_equal(a.dtype, dt);
    assert_int_equal(a.ndim, ndim);
    assert_int_equal(a.shape[0], d0);
    assert_int_equal(a.shape[1], ndim == 2 ? d1 : 1);
    assert_int_equal(a.count, count);
    if (count)
        assert_memory_equal(a.data, data, count * es);
    else
        assert_null(a.data);
    npy_array_free(&a);
    assert_null(a.data);
    free(data);
}

static void test_round_trips(void **state)
{
    (void)state;
    const npy_dtype_t all[] = { NPY_DTYPE_F8, NPY_DTYPE_F4, NPY_DTYPE_I8, NPY_DTYPE_I4 };
    for (int t = 0; t < 4; t++) {
        round_trip(all[t], 1, 17, 0);
        round_trip(all[t], 1, 0, 0);
        round_trip(all[t], 2, 5, 3);
        round_trip(all[t], 2, 0, 3);
        round_trip(all[t], 2, 4, 0);
        round_trip(all[t], 2, 1000, 2); /* header length field > 255 is not hit; data large */
    }
    int64_t v[3] = { 2, -1, INT64_MAX };
    char err[NPY_ERR_SIZE];
    assert_int_equal(npy_write_i64(temp_path("i64.npy"), v, 3, err), 0);
    npy_array_t a;
    assert_int_equal(npy_read(temp_path("i64.npy"), &a, err), 0);
    assert_int_equal(a.dtype, NPY_DTYPE_I8);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.count, 3);
    assert_memory_equal(a.data, v, sizeof v);
    npy_array_free(&a);
    npy_array_free(NULL);
}

/* Valid headers in forms np.save does not write, but other writers (or old
 * NumPy versions) may. */
static void test_header_variants(void **state)
{
    (void)state;
    const double d[6] = { 1.5, -2.0, 3.25, 0.0, 1e300, -1e-300 };
    const float f4[2] = { 1.5f, -2.0f };
    const int32_t i4[3] = { 1, -2, 3 };
    struct { const char *header; int major; const void *data; size_t len;
             npy_dtype_t dt; int ndim; int64_t d0, d1; } cases[] = {
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }\n", 1, d, 48,
          NPY_DTYPE_F8, 2, 3, 2 },
        /* keys in another order, no trailing comma, double quotes, odd spacing */
        { "{ \"shape\" :(3,2) ,\t\"descr\":\"<f8\",'fortran_order':False}   \n", 1, d, 48,
          NPY_DTYPE_F8, 2, 3, 2 },
        { "{'shape': (6,), 'fortran_order': False, 'descr': '<f8'}\n", 2, d, 48,
          NPY_DTYPE_F8, 1, 6, 1 },
        { "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 3, f4, 8,
          NPY_DTYPE_F4, 1, 2, 1 },
        /* fortran_order True is the same bytes for 1-D */
        { "{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }\n", 1, i4, 12,
          NPY_DTYPE_I4, 1, 3, 1 },
        /* '=' and '|' as the host's order; Python 2 long suffix */
        { "{'descr': '=f8', 'fortran_order': False, 'shape': (2L, 3L), }\n", 1, d, 48,
          NPY_DTYPE_F8, 2, 2, 3 },
        { "{'descr': '|i4', 'fortran_order': False, 'shape': (3,), }\n", 1, i4, 12,
          NPY_DTYPE_I4, 1, 3, 1 },
        /* header without the final newline, multi-line */
        { "{'descr': '<f8',\n 'fortran_order': False,\n 'shape': (1, 6)}", 1, d, 48,
          NPY_DTYPE_F8, 2, 1, 6 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_npy_raw("var.npy", cases[c].major, 0, cases[c].header, -1, cases[c].data,
                      cases[c].len);
        npy_array_t a;
        char err[NPY_ERR_SIZE];
        int rc = npy_read(temp_path("var.npy"), &a, err);
        if (rc != 0)
            print_error("case %zu: %s\n", c, err);
        assert_int_equal(rc, 0);
        assert_int_equal(a.dtype, cases[c].dt);
        assert_int_equal(a.ndim, cases[c].ndim);
        assert_int_equal(a.shape[0], cases[c].d0);
        assert_int_equal(a.shape[1], cases[c].d1);
        assert_memory_equal(a.data, cases[c].data, cases[c].len);
        npy_array_free(&a);
    }
}

/* ---- malformed files ---------------------------------------------------- */

#define HDR(descr, fortran, shape) \
    "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }\n"

static void test_missing_and_not_npy(void **state)
{
    (void)state;
    expect_error("does-not-exist.npy", "cannot open");
    expect_error("", NULL); /* the temp dir itself */
    temp_write_file("empty.npy", "", 0);
    expect_error("empty.npy", "truncated");
    temp_write_file("text.npy", "hello, this is not numpy at all\n", 32);
    expect_error("text.npy", "magic");
    temp_write_file("short-magic.npy", "\x93NU", 3);
    expect_error("short-magic.npy", "truncated");
    temp_write_file("short-bad.npy", "PK\x03", 3);
    expect_error("short-bad.npy", "magic");
    temp_write_file("no-len.npy", "\x93NUMPY\x01\x00\x40", 9);
    expect_error("no-len.npy", "truncated");
    temp_write_file("no-len2.npy", "\x93NUMPY\x02\x00\x40\x00", 10);
    expect_error("no-len2.npy", "truncated");
    write_npy_raw("v4.npy", 4, 0, HDR("<f8", "False", "(0,)"), -1, NULL, 0);
    expect_error("v4.npy", "version");
    write_npy_raw("v11.npy", 1, 1, HDR("<f8", "False", "(0,)"), -1, NULL, 0);
    expect_error("v11.npy", "version");
}

static void test_truncated(void **state)
{
    (void)state;
    const double d[4] = { 1, 2, 3, 4 };
    /* header length beyond the end of the file */
    write_npy_raw("hlen-beyond.npy", 1, 0, HDR("<f8", "False", "(4,)"), 60000, d, 32);
    expect_error("hlen-beyond.npy", "beyond");
    write_npy_raw("hlen-beyond2.npy", 2, 0, HDR("<f8", "False", "(4,)"), 0xfffffff0LL, d, 32);
    expect_error("hlen-beyond2.npy", "beyond");
    /* header cut short: the dict never closes */
    write_npy_raw("cut-header.npy", 1, 0, "{'descr': '<f8', 'fortran_or", -1, NULL, 0);
    expect_error("cut-header.npy", "header");
    write_npy_raw("cut-string.npy", 1, 0, "{'descr': '<f8", -1, NULL, 0);
    expect_error("cut-string.npy", "unterminated");
    write_npy_raw("cut-shape.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,", -1, NULL, 0);
    expect_error("cut-shape.npy", "header");
    /* data shorter than the shape implies */
    write_npy_raw("short-data.npy", 1, 0, HDR("<f8", "False", "(4,)"), -1, d, 31);
    expect_error("short-data.npy", "truncated data");
    write_npy_raw("short-data2.npy", 1, 0, HDR("<f8", "False", "(3, 2)"), -1, d, 32);
    expect_error("short-data2.npy", "truncated data");
    write_npy_raw("no-data.npy", 3, 0, HDR("<i4", "False", "(1,)"), -1, NULL, 0);
    expect_error("no-data.npy", "truncated data");
    /* a huge claimed shape is refused before any allocation */
    write_npy_raw("huge.npy", 1, 0, HDR("<f8", "False", "(1000000000000, 3)"), -1, d, 32);
    expect_error("huge.npy", "truncated data");
    /* trailing bytes after the data: an error (shape and data disagree) */
    write_npy_raw("trailing.npy", 1, 0, HDR("<f8", "False", "(3,)"), -1, d, 32);
    expect_error("trailing.npy", "trailing");
    write_npy_raw("trailing1.npy", 1, 0, HDR("<i4", "False", "(7,)"), -1, d, 29);
    expect_error("trailing1.npy", "trailing");
}

static void test_bad_dtype(void **state)
{
    (void)state;
    const double d[4] = { 1, 2, 3, 4 };
    const char *bad[] = { "<i2", "<u8", "<f2", "<c16", "|b1", "|u1", "<U8", "O", "", "f8",
                          "<f8 ", "<f16", "<i8x" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char h[160];
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }\n",
                 bad[i]);
        write_npy_raw("dtype.npy", 1, 0, h, -1, d, 16);
        expect_error("dtype.npy", "unsupported dtype");
    }
    const char *big[] = { ">f8", ">f4", ">i8", ">i4" };
    for (size_t i = 0; i < 4; i++) {
        char h[160];
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }\n",
                 big[i]);
        write_npy_raw("big.npy", 1, 0, h, -1, d, 16);
        expect_error("big.npy", "big-endian");
    }
    write_npy_raw("struct.npy", 1, 0,
                  "{'descr': [('x', '<f8'), ('y', '<f8')], 'fortran_order': False, 'shape': (2,), }\n",
                  -1, d, 32);
    expect_error("struct.npy", "structured");
    write_npy_raw("descr-int.npy", 1, 0,
                  "{'descr': 8, 'fortran_order': False, 'shape': (2,), }\n", -1, d, 16);
    expect_error("descr-int.npy", "string");
}

static void test_bad_shape_and_layout(void **state)
{
    (void)state;
    const double d[8] = { 0 };
    struct { const char *shape, *needle; } cases[] = {
        { "(-1,)", "negative" },
        { "(3, -2)", "negative" },
        { "(-0,)", "trailing" }, /* -0 is 0: a valid shape, then 64 bytes too many */
        { "()", "dimensions" },
        { "(1, 2, 4)", "dimensions" },
        { "(8)", "tuple" },
        { "8", "'('" },
        { "[8]", "'('" },
        { "(8,,)", "integer" },
        { "(8 2)", "','" },
        { "(2.5,)", "','" },
        { "(x,)", "integer" },
        { "(99999999999999999999,)", "exceeds" },
        { "(9223372036854775807, 9223372036854775807)", "overflow" },
        { "(4611686018427387904, 4)", "overflow" },
        { "(2305843009213693952,)", "overflow" }, /* 2^61 · 8 bytes */
        { "(4294967296, 4294967296)", "overflow" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char h[200];
        snprintf(h, sizeof h, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }\n",
                 cases[i].shape);
        write_npy_raw("shape.npy", 1, 0, h, -1, d, i == 2 ? 64 : 0);
        expect_error("shape.npy", cases[i].needle);
    }
    write_npy_raw("fortran2d.npy", 1, 0, HDR("<f8", "True", "(2, 4)"), -1, d, 64);
    expect_error("fortran2d.npy", "fortran_order");
    write_npy_raw("fortran-bad.npy", 1, 0, HDR("<f8", "true", "(2,)"), -1, d, 16);
    expect_error("fortran-bad.npy", "True or False");
    write_npy_raw("fortran-bad2.npy", 1, 0, HDR("<f8", "Falsey", "(2,)"), -1, d, 16);
    expect_error("fortran-bad2.npy", "True or False");
    write_npy_raw("fortran-int.npy", 1, 0, HDR("<f8", "0", "(2,)"), -1, d, 16);
    expect_error("fortran-int.npy", "True or False");
}

static void test_bad_dict(void **state)
{
    (void)state;
    const double d[2] = { 0 };
    struct { const char *header, *needle; } cases[] = {
        { "", "'{'" },
        { "   \n", "'{'" },
        { "descr: '<f8'", "'{'" },
        { "{'descr': '<f8', 'fortran_order': False}\n", "missing key 'shape'" },
        { "{'fortran_order': False, 'shape': (2,)}\n", "missing key 'descr'" },
        { "{'descr': '<f8', 'shape': (2,)}\n", "missing key 'fortran_order'" },
        { "{}\n", "missing key" },
        { "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}\n", "twice" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}\n", "unexpected key" },
        { "{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}\n", "expected ','" },
        { "{'descr' '<f8', 'fortran_order': False, 'shape': (2,)}\n", "':'" },
        { "{descr: '<f8', 'fortran_order': False, 'shape': (2,)}\n", "quoted string" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}\n}", "after the dict" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", "after the dict" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,),,}\n", "quoted string" },
        { "{'descr': '<f\\x38', 'fortran_order': False, 'shape': (2,)}\n", "string" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)\n", "'}'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_npy_raw("dict.npy", 1, 0, cases[i].header, -1, d, 16);
        expect_error("dict.npy", cases[i].needle);
    }
    /* a NUL byte inside the header */
    unsigned char buf[10 + 64 + 16] = "\x93NUMPY\x01\x00\x40\x00";
    const char *h = HDR("<f8", "False", "(2,)");
    memset(buf + 10, ' ', 64);
    memcpy(buf + 10, h, strlen(h));
    buf[10 + 63] = '\n';
    buf[10 + 20] = '\0';
    temp_write_file("nul.npy", buf, sizeof buf);
    expect_error("nul.npy", "NUL");
}

/* npy_write_nd: a (4, 3, 3) float64 header and size; 1-D and 2-D files are
 * byte for byte those of npy_write; bad ndim refused. */
static void test_write_nd(void **state)
{
    (void)state;
    char err[NPY_ERR_SIZE];
    double v[36];
    for (int i = 0; i < 36; i++)
        v[i] = 0.5 * i - 3.0;
    int64_t shape3[3] = { 4, 3, 3 };
    assert_int_equal(npy_write_nd(temp_path("nd.npy"), NPY_DTYPE_F8, 3, shape3, v, err), 0);
    FILE *f = fopen(temp_path("nd.npy"), "rb");
    assert_non_null(f);
    unsigned char buf[128 + sizeof v + 1];
    size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_int_equal(got, 128 + sizeof v); /* 10 + 62 + 1 > 64: two blocks */
    assert_int_equal(buf[8] | buf[9] << 8, 118);
    assert_memory_equal(buf + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3, 3), }",
                        62);
    assert_int_equal(buf[127], '\n');
    assert_memory_equal(buf + 128, v, sizeof v);
    /* the reader stays 1-D/2-D */
    npy_array_t a;
    assert_int_not_equal(npy_read(temp_path("nd.npy"), &a, err), 0);

    int64_t shapes[2][2] = { { 36, 0 }, { 12, 3 } };
    for (int nd = 1; nd <= 2; nd++) {
        assert_int_equal(npy_write(temp_path("w2.npy"), NPY_DTYPE_F8, nd, shapes[nd - 1], v, err), 0);
        assert_int_equal(npy_write_nd(temp_path("n2.npy"), NPY_DTYPE_F8, nd, shapes[nd - 1], v, err),
                         0);
        unsigned char x[128 + sizeof v], y[128 + sizeof v];
        FILE *fx = fopen(temp_path("w2.npy"), "rb"), *fy = fopen(temp_path("n2.npy"), "rb");
        assert_non_null(fx);
        assert_non_null(fy);
        assert_int_equal(fread(x, 1, sizeof x, fx), sizeof x);
        assert_int_equal(fread(y, 1, sizeof y, fy), sizeof y);
        fclose(fx);
        fclose(fy);
        assert_memory_equal(x, y, sizeof x);
    }
    assert_int_not_equal(npy_write_nd(temp_path("w.npy"), NPY_DTYPE_F8, 0, shape3, v, err), 0);
    assert_int_not_equal(npy_write_nd(temp_path("w.npy"), NPY_DTYPE_F8, NPY_WRITE_MAX_DIMS + 1,
                                      shape3, v, err), 0);
    int64_t neg[3] = { 4, -3, 3 };
    assert_int_not_equal(npy_write_nd(temp_path("w.npy"), NPY_DTYPE_F8, 3, neg, v, err), 0);
    assert_true(strlen(err) > 0);
}

static void test_writer_errors(void **state)
{
    (void)state;
    char err[NPY_ERR_SIZE];
    int64_t shape[2] = { 2, 2 }, v[4] = { 0 };
    assert_int_not_equal(npy_write(temp_path("no-such-dir/x.npy"), NPY_DTYPE_I8, 1, shape, v, err), 0);
    assert_non_null(strstr(err, "cannot create"));
    assert_int_not_equal(npy_write(temp_path("w.npy"), NPY_DTYPE_I8, 3, shape, v, err), 0);
    assert_true(strlen(err) > 0);
    assert_int_not_equal(npy_write(temp_path("w.npy"), NPY_DTYPE_I8, 2, shape, NULL, err), 0);
    assert_true(strlen(err) > 0);
    int64_t neg[1] = { -1 };
    assert_int_not_equal(npy_write(temp_path("w.npy"), NPY_DTYPE_I8, 1, neg, v, err), 0);
    assert_true(strlen(err) > 0);
    assert_int_not_equal(npy_write(temp_path("w.npy"), (npy_dtype_t)9, 1, shape, v, err), 0);
    assert_true(strlen(err) > 0);
    /* NULL err is allowed */
    assert_int_not_equal(npy_write(temp_path("w.npy"), NPY_DTYPE_I8, 3, shape, v, NULL), 0);
    npy_array_t a;
    assert_int_not_equal(npy_read(temp_path("nothing-here.npy"), &a, NULL), 0);
    assert_int_equal(npy_dtype_size((npy_dtype_t)9), 0);
    assert_string_equal(npy_dtype_name(NPY_DTYPE_I4), "int32");
}

/* A pipe has no size to check the header's shape against: a header that
 * claims 2^40 doubles over a pipe that holds two must end as truncated data
 * after reading the pipe, not as an attempt to allocate 8 TiB (which fails
 * as "out of memory", or aborts under AddressSanitizer). */
static void test_pipe_claiming_more(void **state)
{
    (void)state;
    const double two[2] = { 1.5, -2.5 };
    write_npy_raw("claim.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, "
                  "'shape': (1099511627776,), }\n", -1, two, sizeof two);
    unsigned char bytes[256];
    const size_t n = temp_read_file("claim.npy", bytes, sizeof bytes);
    assert_true(n > 16);
    assert_int_equal(mkfifo(temp_path("claim.fifo"), 0600), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the writer: the file's bytes into the pipe, then EOF */
        FILE *f = fopen(temp_path("claim.fifo"), "wb");
        _exit(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0 ? 0 : 1);
    }
    expect_error("claim.fifo", "truncated data");
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_missing_and_not_npy),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_pipe_claiming_more),
        cmocka_unit_test(test_bad_dtype),
        cmocka_unit_test(test_bad_shape_and_layout),
        cmocka_unit_test(test_bad_dict),
        cmocka_unit_test(test_writer_errors),
        cmocka_unit_test(test_write_nd),
    };
    return cmocka_run_group_tests(tests, temp_dir_setup, temp_dir_teardown);
}
