/*
 * cmp_kv_error.h — the key-value adapter's errors: RocksDB's error
 * strings as codes (kv_map_error, for C too), and for C++ (cmp_kv.cc)
 * the guard against RocksDB's exceptions.
 *
 * RocksDB's C API lets C++ exceptions through: std::bad_alloc, and
 * std::system_error when it cannot start a thread (under `ulimit -v`).
 * Uncaught, they terminate the process; KV_GUARD catches them around a
 * call and returns kv_exception()'s code instead.
 */
#ifndef ND_CMP_KV_ERROR_H
#define ND_CMP_KV_ERROR_H

/* Translate a RocksDB error string into an nd_error and set the message
 * "<what>: <rocksdb text>": corruption and checksum mismatches
 * ND_ECORRUPT, a full disk ND_ENOSPC, a lock held ND_EBUSY (with
 * kvdir_locked's message instead: what is then the path), a read-only
 * or forbidden path ND_EREADONLY, a missing one ND_ENOTFOUND, a path
 * through a file or an invalid argument ND_EINVAL, anything else ND_EIO.
 * Returns the code. */
#ifdef __cplusplus
extern "C" int kv_map_error(const char *rocksdb_err, const char *what);
#else
int kv_map_error(const char *rocksdb_err, const char *what);
#endif

#ifdef __cplusplus
/* Inside a catch handler only: the code of the exception being handled
 * (ND_ENOMEM for an allocation or a thread that could not be made, else
 * ND_EIO), with its message set. */
int kv_exception(void);

/* Run a RocksDB call; return kv_exception()'s code if it throws. */
#define KV_GUARD(...)                                                                 \
    do {                                                                              \
        try {                                                                         \
            __VA_ARGS__;                                                              \
        } catch (...) {                                                               \
            return kv_exception();                                                    \
        }                                                                             \
    } while (0)
/* Move iterator it; an exception leaves it failed. */
#define KV_GUARD_MOVE(it, ...)                                                        \
    do {                                                                              \
        try {                                                                         \
            if (!(it)->failed) __VA_ARGS__;                                           \
        } catch (...) {                                                               \
            (it)->failed = kv_exception();                                            \
        }                                                                             \
    } while (0)
/* Run a RocksDB call; an exception sets rc to kv_exception()'s code. */
#define KV_CAPTURE(rc, ...)                                                           \
    do {                                                                              \
        try {                                                                         \
            __VA_ARGS__;                                                              \
        } catch (...) {                                                               \
            (rc) = kv_exception();                                                    \
        }                                                                             \
    } while (0)

#endif /* __cplusplus */

#endif
