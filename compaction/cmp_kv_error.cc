/*
 * cmp_kv_error.cc — the key-value adapter's errors: RocksDB's error
 * strings and the C++ exceptions its C API lets through, as nd_error
 * codes with a message (cmp_kv_error.h). C++ to catch the exceptions;
 * it does not include RocksDB.
 */
extern "C" {
#include "cmp_kvdir.h"
#include "nd_error.h"
}
#include "cmp_kv_error.h"

#include <errno.h>
#include <string.h>

#include <new>
#include <system_error>

int kv_map_error(const char *err, const char *what)
{
    int rc = ND_EIO;
    if (!err) err = "unknown RocksDB error";
    if (strstr(err, "Corruption") || strstr(err, "checksum mismatch") ||
        strstr(err, "Bad table magic number"))
        rc = ND_ECORRUPT;
    else if (strstr(err, "No space left") || strstr(err, "NoSpace"))
        rc = ND_ENOSPC;
    else if (strstr(err, "lock") && (strstr(err, "Resource temporarily unavailable") ||
                                     strstr(err, "No locks available") ||
                                     strstr(err, "lock hold by current process")))
        /* Who holds it, plainly, instead of RocksDB's text (what is the
         * database's path: only an open takes the lock). */
        return kvdir_locked(what, strstr(err, "lock hold by current process") != NULL);
    else if (strstr(err, "Read-only file system") || strstr(err, "Permission denied"))
        rc = ND_EREADONLY;
    else if (strstr(err, "does not exist") || strstr(err, "No such file"))
        rc = ND_ENOTFOUND;
    else if (strstr(err, "Not a directory"))
        rc = ND_EINVAL;
    else if (strncmp(err, "Invalid argument", 16) == 0)
        rc = ND_EINVAL;
    return nd_err_set(rc, "%s: %s", what, err);
}

/* The error of the exception being handled: out of memory for an
 * allocation or a thread RocksDB could not create, else an I/O error. */
int kv_exception(void)
{
    try {
        throw;
    } catch (const std::bad_alloc &) {
        return nd_err_set(ND_ENOMEM, "storage: out of memory");
    } catch (const std::system_error &e) {
        /* errno values (a thread RocksDB could not start: EAGAIN). */
        int v = e.code().value();
        int rc = v == EAGAIN || v == ENOMEM ? ND_ENOMEM : ND_EIO;
        return nd_err_set(rc, "storage: %s%s", rc == ND_ENOMEM ? "out of memory: " : "",
                          e.what());
    } catch (const std::exception &e) {
        return nd_err_set(ND_EIO, "storage: %s", e.what());
    } catch (...) {
        return nd_err_set(ND_EIO, "storage: unknown failure inside RocksDB");
    }
}
