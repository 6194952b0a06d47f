/* A fresh mkdtemp directory for a cmocka group's files ($TMPDIR, else
 * /tmp), removed with everything in it afterwards: temp_dir_setup and
 * temp_dir_teardown as the group's setup and teardown, temp_path(name) for
 * a file in it (a static buffer, valid until the next call). */
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

#endif
