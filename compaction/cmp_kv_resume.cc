/*
 * cmp_kv_resume.cc — RocksDB's automatic resume after a failed background
 * write, off (cmp_kv_resume.h says why). Part of the key-value adapter:
 * the only file that uses RocksDB's C++ API, for what the C API cannot
 * set.
 *
 * RocksDB 7.8 resumes on two paths. A retryable error starts a thread
 * that calls DBImpl::ResumeImpl up to max_bgerror_resume_count times;
 * the option is set through the options string. A full disk (ENOSPC:
 * NoSpace, which the retryable path leaves alone) is handed to the
 * SstFileManager, whose thread resumes at once when it finds room (the
 * disk is rarely full to the byte); nothing turns that off but an
 * EventListener that clears *auto_recovery in OnErrorRecoveryBegin. The
 * C API adds no listener, but the options string names listeners by the
 * id of a factory in RocksDB's object library: kv_no_resume registers
 * one, and counts what it makes, since RocksDB skips a listener it
 * cannot make without an error.
 */
extern "C" {
#include "nd_error.h"
}
#include "cmp_kv_error.h"
#include "cmp_kv_impl.h" /* the adapter's one <rocksdb/c.h> */
#include "cmp_kv_resume.h"

#include <rocksdb/listener.h>
#include <rocksdb/utilities/object_registry.h>

#include <atomic>
#include <string.h>

#define NO_RESUME_ID "neardup_no_auto_resume"

namespace {

struct no_resume : rocksdb::EventListener {
    const char *Name() const override { return NO_RESUME_ID; }
    /* Called with RocksDB's DB mutex released, before a resume; must
     * not throw. */
    void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                              bool *auto_recovery) override
    {
        *auto_recovery = false;
    }
};

std::atomic<unsigned long> made{0};

/* A static's initializer runs once, under the lock C++ keeps for it; one
 * that throws runs again on the next call. */
void register_factory()
{
    static const bool done = [] {
        rocksdb::ObjectLibrary::Default()->AddFactory<rocksdb::EventListener>(
            NO_RESUME_ID, [](const std::string &, std::unique_ptr<rocksdb::EventListener> *guard,
                             std::string *) {
                guard->reset(new no_resume());
                made.fetch_add(1);
                return guard->get();
            });
        return true;
    }();
    (void)done;
}

} // namespace

int kv_no_resume(struct rocksdb_options_t **opts)
{
    char *err = NULL;
    register_factory();
    rocksdb_options_t *o = rocksdb_options_create();
    ND_RETURN_IF(!o, ND_ENOMEM, "storage: out of memory creating options");
    unsigned long before = made.load();
    rocksdb_get_options_from_string(*opts, "max_bgerror_resume_count=0;listeners=" NO_RESUME_ID,
                                    o, &err);
    if (err) {
        rocksdb_options_destroy(o);
        int rc = kv_map_error(err, "storage: turning off automatic resume");
        rocksdb_free(err);
        return rc;
    }
    if (made.load() == before) {
        rocksdb_options_destroy(o);
        return nd_err_set(ND_EIO, "storage: turning off automatic resume: RocksDB made no "
                                  "listener " NO_RESUME_ID);
    }
    rocksdb_options_destroy(*opts);
    *opts = o;
    return ND_OK;
}
