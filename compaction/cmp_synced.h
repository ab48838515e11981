/*
 * cmp_synced.h — the record of the last synced write (cmp_synced.c): a
 * small file beside the write-ahead log, SYNCED, holding the sequence
 * number a store had reached at its last write whose log was fsynced
 * (`add --sync`, ND_DB_SYNC, a generation switch) and the document
 * counter that write recorded.
 *
 * Why: RocksDB 7.8 opens, without a word, a store whose log was deleted
 * (every log: it looks like a backup), cut at a record boundary (it
 * looks like a crash's torn tail) or damaged in its last block (a zeroed
 * header ends the block; a length past the end reads as a torn tail),
 * and the acknowledged writes the log held are gone; the next writer
 * makes the loss permanent. Its C API has no
 * track_and_verify_wals_in_manifest. The store knows better: a store
 * that recovers to a sequence below the one recorded here lost
 * acknowledged writes, and its open is refused (st_open, cmp_kv.cc).
 *
 * The record is written after the log's fsync, so it never claims more
 * than the log holds: a crash between the two leaves the older record
 * (a weaker check, never a false one). Two slots in different sectors,
 * written in turn, each with its checksum: a torn write leaves the other.
 * No file: nothing synced to check (a new store, a backup, a repaired
 * one, a store closed cleanly: its memtables were flushed and the
 * MANIFEST holds the sequence). Who calls: cmp_store.c, cmp_kv.cc,
 * cmp_repair.c.
 */
#ifndef CMP_SYNCED_H
#define CMP_SYNCED_H

#include <stdint.h>

#define ST_FILE_SYNCED "SYNCED"
#define CMP_SYNCED_NO_DOCS UINT64_MAX /* the counter was not known */

typedef struct cmp_synced_rec {
    uint64_t seq;  /* the store's sequence number after the synced write */
    uint64_t docs; /* the document counter it recorded, or CMP_SYNCED_NO_DOCS */
} cmp_synced_rec;

/* Read dir's record into *out: *present 0 (and *out zeroed) when there
 * is none (no file, or an empty one: killed before its first write).
 * @return ND_OK; ND_ECORRUPT (neither slot passes its checksum: the file
 * was damaged; repair removes it); ND_EIO. */
int cmp_synced_read(const char *dir, cmp_synced_rec *out, int *present);

/* The writer of dir's record (a store open for writing). */
typedef struct cmp_synced cmp_synced;
/* @return ND_OK; ND_ENOMEM; ND_EIO (the file cannot be opened). */
int cmp_synced_open(cmp_synced **out, const char *dir);
/* Write r into the next slot and fdatasync it (the first write also
 * fsyncs dir, which holds the new file). @return ND_OK; ND_EIO. */
int cmp_synced_put(cmp_synced *w, const cmp_synced_rec *r);
/* Close; with sync, the last record is synced first (the store keeps
 * it), and a failure of that is returned. Accepts NULL. */
int cmp_synced_close(cmp_synced *w, int sync);

/* Remove dir's record (ND_OK when there is none); ND_EIO naming it. */
int cmp_synced_remove(const char *dir);

/* ND_ECORRUPT naming the loss: acknowledged writes up to sequence want
 * missing from the store at dir, which recovers to got, and the log
 * (the newest .log left, or none). */
int cmp_synced_loss(const char *dir, uint64_t want, uint64_t got);

#endif /* CMP_SYNCED_H */
