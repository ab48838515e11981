/*
 * nd_error.h — setting and forwarding errors inside the library.
 *
 * Every layer (common, compaction, engine) reports failure the same way:
 * return a negative nd_error and leave a one-line message in a thread-local
 * buffer that nd_errmsg() reads. Formatting into that buffer never
 * allocates, so out-of-memory can be reported too. Lives in common/ because
 * it is below every other layer.
 */
#ifndef ND_ERROR_H
#define ND_ERROR_H

#include "neardup.h"

#if defined(__GNUC__)
#define ND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ND_PRINTF(a, b)
#endif

/* Size of the message buffer, NUL included: a thread that hands its
 * failure to another copies nd_errmsg() into a buffer this big, and the
 * receiver sets it again with nd_err_set(rc, "%s", buf). */
#define ND_ERRMSG_CAP 512

/* Record message (printf-style) as the thread's last error; returns rc so
 * callers can write `return nd_err_set(ND_EINVAL, "...")`. */
int nd_err_set(int rc, const char *fmt, ...) ND_PRINTF(2, 3);

/* Prefix the current message with "context: " (for adding a file or key
 * name on the way up); returns rc. */
int nd_err_wrap(int rc, const char *fmt, ...) ND_PRINTF(2, 3);

/* What a call returns when its callback returned rc != 0 (the callback
 * rule of neardup.h): a positive rc as it is, a negative one as
 * ND_ESTOPPED with a message naming who (the public function). */
int nd_err_callback(int rc, const char *who);

/* Forget the last error (called on success paths that want a clean "").*/
void nd_err_clear(void);

/* Early return with an error when cond holds (zstd's RETURN_ERROR_IF). */
#define ND_RETURN_IF(cond, rc, ...)                                            \
    do {                                                                       \
        if (cond) return nd_err_set((rc), __VA_ARGS__);                        \
    } while (0)

/* Return the error of a call that failed (zstd's FORWARD_IF_ERROR). */
#define ND_FORWARD(expr)                                                       \
    do {                                                                       \
        int nd_fwd_rc_ = (expr);                                               \
        if (nd_fwd_rc_ < 0) return nd_fwd_rc_;                                 \
    } while (0)

/* In functions with a single exit: needs `int rc` and a `cleanup:` label. */
#define ND_TRY(expr)                                                           \
    do {                                                                       \
        rc = (expr);                                                           \
        if (rc < 0) goto cleanup;                                              \
    } while (0)

#define ND_FAIL(code, ...)                                                     \
    do {                                                                       \
        rc = nd_err_set((code), __VA_ARGS__);                                  \
        goto cleanup;                                                          \
    } while (0)

#endif /* ND_ERROR_H */
