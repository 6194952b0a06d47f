/* A fresh mkdtemp directory for a cmocka group's files ($TMPDIR, else
 * /tmp), removed with everything in it afterwards: temp_dir_setup and
 * temp_dir_teardown as the group's setup and teardown, temp_path(name) for
 * a file in it (a static buffer, valid until the next call), and a whole
 * file written or read (include after cmocka.h: they assert). */
#ifndef PARTILE_TESTS_TEMP_DIR_H
#define PARTILE_TESTS_TEMP_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char temp_dir[4096];

static int temp_dir_setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/partile-test-XXXXXX", base && base[0] ? base : "/tmp");
    return mkdtemp(temp_dir) ? 0 : -1;
}

static int temp_dir_teardown(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", temp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *temp_path(const char *name)
{
    static char buf[4200];
    snprintf(buf, sizeof buf, "%s/%s", temp_dir, name);
    return buf;
}

/* File `name` in the directory: these n bytes. */
static void temp_write_file(const char *name, const void *bytes, size_t n)
{
    FILE *f = fopen(temp_path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* File `name` in the directory, whole, into buf (it must hold less than
 * cap bytes); its size. */
static size_t temp_read_file(const char *name, void *buf, size_t cap)
{
    FILE *f = fopen(temp_path(name), "rb");
    assert_non_null(f);
    const size_t n = fread(buf, 1, cap, f);
    assert_true(n < cap);
    assert_int_equal(fclose(f), 0);
    return n;
}

#endif
