/*
 * nd_options.h — the one initialiser behind every public options struct's
 * _init() (nd_fp_options_init, nd_db_options_init, ...).
 *
 * neardup.h's rule: an options struct starts with `unsigned version`, its
 * fields are only ever appended, zero means the default, and the library
 * accepts every version it has known, touching only that version's
 * fields. So initialising one is always the same: refuse a NULL struct or
 * an unknown version, zero the bytes that version has, set the version.
 */
#ifndef ND_OPTIONS_H
#define ND_OPTIONS_H

#include <stddef.h>

/* Initialise the options struct opts of version `version`, whose fields
 * take `size` bytes in that version, for a build that knows versions
 * oldest..newest: zero those bytes and set the first field, the version.
 * ND_EINVAL (message "WHAT options: ...") when opts is NULL or the version
 * is unknown; ND_OK otherwise. */
int nd_options_init(void *opts, size_t size, unsigned version, unsigned oldest, unsigned newest,
                    const char *what);

#endif /* ND_OPTIONS_H */
