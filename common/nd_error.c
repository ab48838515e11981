/*
 * nd_error.c — error names and the thread-local last-error message.
 *
 * The message buffer is a fixed thread-local array: setting an error never
 * allocates (so ND_ENOMEM is reportable) and nd_errmsg() works without a
 * database handle, e.g. after nd_db_open failed.
 */
#include "nd_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char errmsg[ND_ERRMSG_CAP];

const char *nd_strerror(int rc)
{
    switch (rc) {
    case ND_OK: return "success";
    case ND_EINVAL: return "invalid argument";
    case ND_ENOTFOUND: return "not found";
    case ND_ECORRUPT: return "corrupt data";
    case ND_EIO: return "I/O error";
    case ND_EBUSY: return "database is busy"; /* the message says who has it */
    case ND_EVERSION: return "incompatible format version";
    case ND_ENOMEM: return "out of memory";
    case ND_EEXIST: return "already exists";
    case ND_EMISMATCH: return "settings do not match the database";
    case ND_ELIMIT: return "size limit exceeded";
    case ND_ENOSPC: return "no space left on device";
    case ND_EREADONLY: return "read-only";
    case ND_EINTERNAL: return "internal error";
    case ND_ESTOPPED: return "stopped by a callback's failure";
    default: return "unknown error";
    }
}

const char *nd_errmsg(void) { return errmsg; }

void nd_err_clear(void) { errmsg[0] = '\0'; }

int nd_err_set(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

int nd_err_callback(int rc, const char *who)
{
    if (rc >= 0) return rc;
    return nd_err_set(ND_ESTOPPED, "%s: the callback failed (returned %d)", who, rc);
}

int nd_err_wrap(int rc, const char *fmt, ...)
{
    char prefix[ND_ERRMSG_CAP];
    char old[ND_ERRMSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errmsg, sizeof old);
    /* prefix ": " old, truncated to the buffer (the tail is least useful). */
    size_t lp = strlen(prefix), lo = strlen(old), at = 0;
    if (lp > sizeof errmsg - 1) lp = sizeof errmsg - 1;
    memcpy(errmsg, prefix, lp);
    at = lp;
    if (at + 2 < sizeof errmsg) {
        memcpy(errmsg + at, ": ", 2);
        at += 2;
    }
    if (lo > sizeof errmsg - 1 - at) lo = sizeof errmsg - 1 - at;
    memcpy(errmsg + at, old, lo);
    errmsg[at + lo] = '\0';
    return rc;
}
