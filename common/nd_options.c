/*
 * nd_options.c — the one initialiser of the public options structs
 * (nd_options.h says the rule it follows). Callers: each options struct's
 * _init() in engine/.
 */
#include <string.h>

#include "nd_error.h"
#include "nd_options.h"

int nd_options_init(void *opts, size_t size, unsigned version, unsigned oldest, unsigned newest,
                    const char *what)
{
    ND_RETURN_IF(!opts, ND_EINVAL, "%s options: NULL", what);
    if (version < oldest || version > newest) {
        if (oldest == newest)
            return nd_err_set(ND_EINVAL, "%s options: version %u unknown (this build knows %u)",
                              what, version, newest);
        return nd_err_set(ND_EINVAL,
                          "%s options: version %u unknown (this build knows %u to %u)", what,
                          version, oldest, newest);
    }
    memset(opts, 0, size);
    *(unsigned *)opts = version;
    return ND_OK;
}
