/*
 * cmp_kvdir.h — a RocksDB database directory seen as plain files, for the
 * key-value adapter's readers beside a writer in another process.
 *
 * A reader opens as a RocksDB secondary instance: it needs a scratch
 * directory of its own (RocksDB's info log goes there), and its view is
 * consistent only if the writer's MANIFEST did not move while the reader
 * read it and then the log (a flush of waiting entries ingests files,
 * recorded in the MANIFEST, then deletes their records in the log: a view
 * holding the deletion but not the files would miss them). These helpers
 * give the MANIFEST's state and make and remove the scratch directory;
 * they know nothing of RocksDB's API (cmp_kv.c alone includes it).
 */
#ifndef CMP_KVDIR_H
#define CMP_KVDIR_H

#include <stddef.h>

/* The MANIFEST's state, "<name> <size>", into buf (cap bytes): CURRENT's
 * text and the size of the file it names. Two equal states mean no edit
 * in between (the MANIFEST only grows, and a new one changes CURRENT).
 * "" when it cannot be read (then never equal to a later one). */
void kvdir_manifest_state(const char *path, char *buf, size_t cap);

/* Make a fresh scratch directory under $TMPDIR (else /tmp); malloc'd
 * path, or NULL (errno set) when none can be made. */
char *kvdir_scratch_make(void);
/* Remove scratch directory dir and the files in it; frees dir. Accepts
 * NULL. */
void kvdir_scratch_remove(char *dir);

/* Remove dir if it holds only what RocksDB's checkpoint writes (table
 * files, logs, MANIFEST, CURRENT, OPTIONS, IDENTITY, their temporaries):
 * a checkpoint's "DIR.tmp" left by a killed backup. 1 when removed, 0
 * when absent or not such a directory (left alone). */
int kvdir_remove_stale_checkpoint(const char *dir);

#endif /* CMP_KVDIR_H */
