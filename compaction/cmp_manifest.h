/*
 * cmp_manifest.h — a database's table files checked against its MANIFEST
 * (cmp_manifest.c), by the key-value adapter at open.
 *
 * Why: RocksDB 7.8's secondary and read-only instances open without a
 * table file the MANIFEST lists (it is left out of the view, and out of
 * rocksdb_livefiles), and read a truncated one as far as it goes: a
 * reader answered from part of the store, exit 0. The MANIFEST is small
 * and read whole here; each live file is one stat.
 */
#ifndef CMP_MANIFEST_H
#define CMP_MANIFEST_H

#include <stddef.h>

/* Check that every table file the MANIFEST leaves live is in directory
 * path with the size it records. state is a MANIFEST's state as
 * kvdir_manifest_state gives it ("<name> <size>": only that many bytes of
 * it are read, so the check is of that view), or NULL for the one
 * CURRENT names now.
 * @return ND_OK, also when the MANIFEST holds edits this reader does not
 * know (RocksDB's open judges those) or no state can be read;
 * ND_ECORRUPT naming the file ("table file 000076.sst, listed in
 * MANIFEST-000039, is missing" / "is 1000 bytes; MANIFEST-000039 records
 * 129273"), or a MANIFEST record that fails its checksum; ND_ENOMEM;
 * ND_EIO (the MANIFEST cannot be read). */
int cmp_manifest_check(const char *path, const char *state);

/* May a repair open the database at path as its MANIFEST says? RocksDB's
 * open reads a MANIFEST cut short as far as it goes and then deletes
 * every table file that view does not name: a repair must not open a
 * store whose MANIFEST lost edits. 1 when CURRENT names a MANIFEST whose
 * records all pass their checksums and which leaves live every table
 * file in the directory, with its size (or holds an edit this reader does
 * not know: RocksDB judges); 0 when not (CURRENT or the MANIFEST missing,
 * damaged or cut); ND_ENOMEM, ND_EIO. *intact (may be NULL): 1 when the
 * MANIFEST was read whole, even if it leaves a file of the directory out
 * (a dropped generation's, not yet deleted: no damage); else 0. */
int cmp_manifest_whole(const char *path, int *intact);

/* The table files (NNNNNN.sst) of the directory at path that its MANIFEST,
 * read whole, does not name live at all (a dropped generation's, not yet
 * deleted; a file it names with another size is not one), NUL-separated
 * in *out (*len bytes; the caller frees it); *out NULL when there are
 * none or the MANIFEST cannot be read whole. Before a repair rewrites
 * the MANIFEST. @return ND_OK, ND_ENOMEM, ND_EIO. */
int cmp_manifest_unnamed(const char *path, char **out, size_t *len);

/* After an ingestion that failed: RocksDB 7.8 deletes the files it
 * linked in even when its MANIFEST record of them was written (only its
 * sync failed), and the next open finds a listed table file missing. For
 * each table file the MANIFEST CURRENT names lists but path lacks, link
 * in the one of saved[0..n) (copies of the ingested files; NULL entries
 * skipped) of the size it records. @return the files restored (>= 0),
 * ND_ENOMEM or ND_EIO. */
int cmp_manifest_restore(const char *path, const char *const *saved, size_t n);

/* The family the MANIFEST CURRENT names (read as far as its records
 * pass their checksums) gives the live table file file (NNNNNN.sst),
 * into out (cap bytes): for a repair, of a file RocksDB cannot open.
 * @return 1 found; 0 not (no MANIFEST, the file not live in it, a name
 * longer than cap); ND_ENOMEM, ND_EIO. */
int cmp_manifest_family_of(const char *path, const char *file, char *out, size_t cap);

#endif
