/*
 * storage.h — the one header through which engine/ uses compaction/.
 *
 * compaction/ is the storage layer, in two levels: the key-value adapter
 * (cmp_kv.h, the only module whose files include <rocksdb/c.h>; engine/ never
 * sees it) and above it the table layer, whose modules engine/ uses
 * through the headers included here: the store and its batches
 * (cmp_store.h), reads of its families (cmp_read.h), tables (cmp_table.h),
 * their folds and merges (cmp_fold.h), full scans (cmp_scan.h), new
 * generations (cmp_regen.h), band entries in bulk (cmp_band.h), and the
 * arrays reads fill (cmp_u64s.h).
 * cmp_layout.h says how a store lies in its database. This header
 * declares nothing of its own.
 */
#ifndef ND_STORAGE_H
#define ND_STORAGE_H

#include "cmp_band.h"
#include "cmp_fold.h"
#include "cmp_layout.h"
#include "cmp_read.h"
#include "cmp_regen.h"
#include "cmp_repair.h"
#include "cmp_scan.h"
#include "cmp_store.h"
#include "cmp_store_ingest.h"
#include "cmp_table.h"
#include "cmp_u64s.h"

#endif /* ND_STORAGE_H */
