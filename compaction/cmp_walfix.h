/*
 * cmp_walfix.h — rewrite a closed database's write-ahead logs with their
 * intact records only, found again past any damage (cmp_walfix.c), so
 * that a repair loses the damaged records and nothing after them.
 */
#ifndef CMP_WALFIX_H
#define CMP_WALFIX_H

#include <stdint.h>

/* Every "*.log" file of directory dir that has damage is rewritten with
 * its intact logical records, in order; *dropped counts the damaged
 * places (each a record or a run of damaged bytes). A log holding record
 * types it does not know is left alone. @return ND_OK; ND_EIO; ND_ENOSPC;
 * ND_ENOMEM. */
int cmp_wal_resync(const char *dir, uint64_t *dropped);

#endif
