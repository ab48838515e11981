/*
 * io_fault.c — an LD_PRELOAD shim for the fault tests (never linked into
 * anything else): fails the Nth write-side call on a file under a
 * directory with a chosen errno, as a full or failing disk would.
 * Interposed: write, pwrite, pwrite64, writev, pwritev, fsync, fdatasync,
 * ftruncate, fallocate, posix_fallocate (what the library and librocksdb
 * call: `nm -D --undefined-only`; not sync_file_range, a hint that
 * RocksDB probes once and asserts on). Only this shim reads the
 * environment:
 *   NEARDUP_FAULT_IO_N      the call to fail, counted from 1 (unset or 0:
 *                           none); that call and every later one fail
 *                           (a disk that stays full or broken)
 *   NEARDUP_FAULT_IO_ERRNO  ENOSPC (default) or EIO
 *   NEARDUP_FAULT_IO_PATH   only files whose path starts with it count
 *   NEARDUP_FAULT_IO_LOG    if set: at exit, append the calls counted
 *                           to this file (to size the loop over N)
 *   NEARDUP_FAULT_IO_TRACE  if set: append "N CALL PATH[ failed]" for each
 *                           call counted to this file (which call hit
 *                           which file, which failed)
 * Reads are counted apart, for an input that fails to read (fault_read.sh):
 *   NEARDUP_FAULT_READ_PATH  read(2) of files whose path starts with it
 *   NEARDUP_FAULT_READ_N     the read to fail with EIO, from 1; that one
 *                            and every later one fail
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static _Atomic long counted;
static long fail_at;
static int fail_errno = ENOSPC;
static const char *prefix;
static int trace_fd = -1;
static _Atomic long reads_counted;
static long read_fail_at;
static const char *read_prefix;

__attribute__((constructor)) static void io_fault_init(void)
{
    const char *n = getenv("NEARDUP_FAULT_IO_N");
    const char *e = getenv("NEARDUP_FAULT_IO_ERRNO");
    fail_at = n ? atol(n) : 0;
    if (e && strcmp(e, "EIO") == 0) fail_errno = EIO;
    prefix = getenv("NEARDUP_FAULT_IO_PATH");
    const char *rn = getenv("NEARDUP_FAULT_READ_N");
    read_fail_at = rn ? atol(rn) : 0;
    read_prefix = getenv("NEARDUP_FAULT_READ_PATH");
    const char *t = getenv("NEARDUP_FAULT_IO_TRACE");
    if (t) trace_fd = open(t, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

__attribute__((destructor)) static void io_fault_report(void)
{
    const char *log = getenv("NEARDUP_FAULT_IO_LOG");
    if (!log) return;
    FILE *f = fopen(log, "a");
    if (!f) return;
    fprintf(f, "%ld\n", atomic_load(&counted));
    fclose(f);
}

/* Whether fd names a file under pfx; its path goes to target (4096). */
static int under(int fd, const char *pfx, char *target)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, target, 4095);
    if (len < 0) return 0;
    target[len] = '\0';
    return strncmp(target, pfx, strlen(pfx)) == 0;
}

/* Nonzero (errno set) when this call on fd must fail. */
static int should_fail(int fd, const char *fn)
{
    char target[4096];
    if (!prefix || !*prefix || !under(fd, prefix, target)) return 0;
    long n = atomic_fetch_add(&counted, 1) + 1;
    int fail = fail_at > 0 && n >= fail_at;
    if (trace_fd >= 0) dprintf(trace_fd, "%ld %s %s%s\n", n, fn, target, fail ? " failed" : "");
    if (!fail) return 0;
    errno = fail_errno;
    return 1;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t read(int fd, void *buf, size_t n)
{
    char target[4096];
    if (read_fail_at > 0 && read_prefix && *read_prefix && under(fd, read_prefix, target) &&
        atomic_fetch_add(&reads_counted, 1) + 1 >= read_fail_at) {
        errno = EIO;
        return -1;
    }
    return REAL(read)(fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (should_fail(fd, "write")) return -1;
    return REAL(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (should_fail(fd, "pwrite")) return -1;
    return REAL(pwrite)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    if (should_fail(fd, "pwrite64")) return -1;
    return REAL(pwrite64)(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (should_fail(fd, "writev")) return -1;
    return REAL(writev)(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    if (should_fail(fd, "pwritev")) return -1;
    return REAL(pwritev)(fd, iov, cnt, off);
}

int fsync(int fd)
{
    if (should_fail(fd, "fsync")) return -1;
    return REAL(fsync)(fd);
}

int fdatasync(int fd)
{
    if (should_fail(fd, "fdatasync")) return -1;
    return REAL(fdatasync)(fd);
}

int ftruncate(int fd, off_t len)
{
    if (should_fail(fd, "ftruncate")) return -1;
    return REAL(ftruncate)(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    if (should_fail(fd, "fallocate")) return -1;
    return REAL(fallocate)(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len)
{
    if (should_fail(fd, "posix_fallocate")) return errno; /* returns the error, errno untouched */
    return REAL(posix_fallocate)(fd, off, len);
}
