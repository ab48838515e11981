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
 * they know nothing of RocksDB's API (cmp_kv.c alone includes it). Also
 * here, as they need no RocksDB call: the version built with, whether a
 * directory is a database, and making a new database's directory.
 */
#ifndef CMP_KVDIR_H
#define CMP_KVDIR_H

#include <stddef.h>

/* The MANIFEST's state, "<name> <size>", into buf (cap bytes): CURRENT's
 * text and the size of the file it names. Two equal states mean no edit
 * in between (the MANIFEST only grows, and a new one changes CURRENT).
 * "" when it cannot be read (then never equal to a later one). */
#define KVDIR_STATE_MAX 320 /* room for a state */
void kvdir_manifest_state(const char *path, char *buf, size_t cap);

/* A secondary's open, attempt i (from 0): 0 when the attempts are spent,
 * else 1 after a pause (none before the first) and the MANIFEST's state
 * into before (cap bytes). */
int kvdir_next_try(const char *path, int i, char *before, size_t cap);
/* After an attempt: the state now into view (cap bytes); 1 if it equals
 * before (the view read is whole). */
int kvdir_settled(const char *path, const char *before, char *view, size_t cap);
/* ND_EBUSY with a message: no whole view could be read. */
int kvdir_busy(const char *path);

/* ND_EBUSY for a writer's open refused by the lock of the database at
 * path, saying plainly who holds it: "PATH is open for writing by this
 * process (another handle)" when self (RocksDB's "lock hold by current
 * process"), else "PATH is open for writing by another process (pid N)",
 * N read from the holder of PATH/LOCK's lock (F_GETLK; left out when it
 * cannot be known). LOCK is opened only when not self: closing a file
 * drops the POSIX locks its process holds on it. */
int kvdir_locked(const char *path, int self);

/* Make a fresh scratch directory under parent (NULL or "": /tmp; the
 * library reads no environment, the CLI passes $TMPDIR); malloc'd path,
 * or NULL (errno set) when none can be made. */
char *kvdir_scratch_make(const char *parent);
/* Remove scratch directory dir and the files in it (the reader removes it
 * once open: its info log stays open, and a killed reader leaves nothing
 * behind). Accepts NULL. */
void kvdir_scratch_remove(const char *dir);

/* Remove dir if it holds only what RocksDB's checkpoint writes (table
 * files, logs, MANIFEST, CURRENT, OPTIONS, IDENTITY, their temporaries):
 * a checkpoint found inconsistent after it was written. 1 when removed,
 * 0 when absent or not such a directory (left alone). */
int kvdir_remove_checkpoint(const char *dir);
/* Remove the closed store at dir if it holds only what a store's
 * directory holds (a checkpoint's names, LOCK, LOG, LOG.old.*): 1 when
 * removed, 0 when absent or holding anything else (left alone). */
int kvdir_remove_store(const char *dir);

/* The RocksDB version this library was built with (meson reads it from
 * rocksdb's pkg-config file). RocksDB's soname carries major.minor
 * (librocksdb.so.7.8), so the library loaded at run time has the same. */
void kv_version(unsigned *major, unsigned *minor);

/* Is path a database? 1 (it holds RocksDB's CURRENT); 0 (absent, an empty
 * directory, or one holding only the files RocksDB writes before CURRENT:
 * a creation that did not finish); 2 (a directory holding other files,
 * where no database is created); 3 (a database's logs or table files
 * without CURRENT: a damaged database); -1 (not a directory). */
int kv_probe(const char *path);

/* May a database be opened (create: or created) at path? ND_OK with
 * *exists (1: a database is there; 0: one is to be created), or the
 * failure naming why: ND_EEXIST (create beside a file or other files, or
 * excl and a database exists), ND_ECORRUPT (a database's files without
 * CURRENT), ND_ENOTFOUND (no database, and not create or readonly),
 * ND_EINVAL (path is a file). */
int kvdir_open_check(const char *path, int create, int excl, int readonly, int *exists);

/* Make directory path for a new database (ND_OK if it exists), or fail
 * naming it: ND_EREADONLY, ND_ENOSPC, ND_ENOTFOUND (no parent), ND_EIO. */
int kvdir_make(const char *path);

#endif /* CMP_KVDIR_H */
