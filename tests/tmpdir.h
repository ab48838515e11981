/*
 * tmpdir.h — a fresh temporary directory per test, removed afterwards.
 */
#ifndef ND_TEST_TMPDIR_H
#define ND_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mkdtemp into buf (at least 64 bytes); aborts the test run on failure. */
static inline char *tmpdir_make(char *buf)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, 64, "%s/ndtest.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        abort();
    }
    return buf;
}

static inline void tmpdir_remove(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
}

#endif
