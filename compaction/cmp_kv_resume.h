/*
 * cmp_kv_resume.h — RocksDB's automatic resume after a failed background
 * write, turned off on the options of every database the key-value
 * adapter opens (cmp_kv.cc, make_options).
 *
 * A resume runs in a thread of RocksDB's own and races the next change
 * of the MANIFEST: RocksDB 7.8 asserts (`!versions_->descriptor_log_`
 * in DBImpl::ResumeImpl) when it runs beside a family dropped after a
 * failed ingest (fault_io, ASan). It also turns file deletions back on,
 * which the adapter stops at the first failed write (write_error,
 * cmp_kv_impl.h). Without it the store stays failed: every later write
 * returns the error, and the next open recovers the store as after a
 * crash.
 */
#ifndef ND_CMP_KV_RESUME_H
#define ND_CMP_KV_RESUME_H

struct rocksdb_options_t;

/* Replace *opts by a copy with both of RocksDB 7.8's automatic resumes
 * off: of retryable errors (max_bgerror_resume_count=0), and of a full
 * disk, which its SstFileManager starts unless a listener refuses it.
 * The copy is made by RocksDB's options parser: call it first, on
 * RocksDB's defaults, and set the rest on the copy.
 * @return ND_OK; ND_ENOMEM; if RocksDB refused the options or made no
 *         listener, the code of its error (kv_map_error: ND_EINVAL for
 *         an unknown option) or ND_EIO; *opts is then unchanged. Throws
 *         what RocksDB's calls throw (std::bad_alloc): call it under
 *         KV_CAPTURE (kv_open does).
 * @note The listener's factory is registered in RocksDB's default object
 *       library once per process. */
int kv_no_resume(struct rocksdb_options_t **opts);

#endif
