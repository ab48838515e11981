/*
 * neardup.h — the whole public C API of neardup.
 *
 * neardup is a persistent near-duplicate fingerprint database. A document
 * becomes a 64-bit simhash fingerprint (Charikar); the database keeps the
 * fingerprints in t permuted tables (Manku, Jain, Das Sarma) and answers
 * "which stored documents differ from this fingerprint in at most k bits".
 *
 * Conventions (see shared/STYLE.md):
 *  - names: a function that acts on an object is nd_<object>_<verb>
 *    (nd_db_open, nd_db_add, nd_loader_add, nd_results_get); one that reads
 *    a property is named for it (nd_db_plan, nd_db_stats); a stateless
 *    computation is named for its result (nd_fingerprint, nd_hamming,
 *    nd_selfjoin, nd_cluster). Macros and enum values are ND_*. Each call
 *    has one name: the aliases that stood for the names of 0.1 (nd_open,
 *    nd_add, nd_query...) were removed before the first release;
 *  - every fallible function returns int: ND_OK (0) or a negative nd_error;
 *    nd_errmsg() then holds a one-line message naming what went wrong;
 *  - outputs come first, the single one called `out` (a buffer and its
 *    capacity count as one);
 *  - heap objects pair _new/_free, databases _open/_close, caller-owned
 *    structs _init/_dispose; every destructor accepts NULL;
 *  - options structs start with `unsigned version` and each has an
 *    ND_<NAME>_INIT macro and an nd_<name>_init() function; zero fields mean
 *    the default, and a NULL options pointer means all defaults. Fields are
 *    only ever appended, each time with a new version number; the library
 *    accepts every version it has known and reads only that version's
 *    fields, so a program built against an older header keeps working;
 *  - a callback returns 0 to go on. A positive value stops the call, which
 *    returns that value; a negative value stops it too, and the call
 *    returns ND_ESTOPPED. A positive result is therefore always a
 *    callback's, and a negative one always an nd_error (ND_ESTOPPED: the
 *    callback failed, and it keeps its own reason);
 *  - the library never reads environment variables: every setting is an
 *    option (a program may map its own variables to them, as the neardup
 *    tool maps ND_BATCH_THREADS to nd_db_options.threads).
 *
 * ABI: the shared library exports exactly the functions declared here (no
 * other symbol) under the soname libneardup.so.ND_ABI_VERSION. Within one
 * ABI version functions, enum values, flags and options fields are only
 * added; a program built against an older header of the same ABI version
 * runs unchanged with a newer library. Removing or changing anything else
 * (a function's parameters, a result struct's layout, a name leaving the
 * header) bumps ND_ABI_VERSION and the soname, from the first release on.
 * Before it (today) nothing has been released: the 0.1 aliases left the
 * header without a bump, since they were macros and static inline
 * functions, never symbols of the library, so no program linked against
 * libneardup.so.2 depends on them.
 *
 * On-disk format (ND_FORMAT_VERSION, recorded in every database):
 *  - read: a build opens every format from 1 to its own, read-only or for
 *    writing. A read-only open never writes, so the database stays readable
 *    by the build that wrote it;
 *  - upgraded: opening an older format for writing records this build's
 *    format (synced) before anything else is written. Nothing is converted
 *    in bulk: data written before is read as it is, data written after uses
 *    the new encodings. From then on builds older than that format refuse
 *    the database;
 *  - refused (ND_EVERSION, and nothing written): a format newer than the
 *    build's, and a database recording a fingerprint function version this
 *    build does not compute (outside ND_FP_VERSION_OLDEST..ND_FP_VERSION):
 *    its fingerprints would never match those the build computes. A
 *    database recording an older version the build still computes opens,
 *    and every text added to it or asked of it is fingerprinted with that
 *    version (ND_FP_FUNCTION), so its fingerprints stay comparable;
 *  - a change that an older build would misread or damage gets a new
 *    format number. Raising the oldest format read (1 today) is an
 *    incompatible release, named in docs/operating.md ("Compatibility").
 *
 * This header includes only the C standard library; no dependency's type
 * ever appears here.
 */
#ifndef NEARDUP_H
#define NEARDUP_H

#include <stddef.h>
#include <stdint.h>

/* Everything declared from here to the end of this header is the shared
 * library's interface: the library is compiled with hidden visibility, so
 * only these declarations are exported (tests/check_symbols.sh checks the
 * dynamic symbol table against this header). */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ND_VERSION_MAJOR 0
#define ND_VERSION_MINOR 1
#define ND_VERSION_PATCH 0
#define ND_VERSION_STRING "0.1.0"

/** Version of the binary interface: the N of the shared library's soname
 *  libneardup.so.N (see "ABI" above). 1: the first with the rules above.
 *  2: resemblance (issue 34): nd_sketch is the 256-bin sketch with band
 *  keys, nd_doc carries a sketch, nd_match and nd_batch_item a
 *  resemblance, nd_sketch_finish returns a code. */
#define ND_ABI_VERSION 2

/** On-disk format version written by this build and checked at open (see
 *  "On-disk format" above). 2: table runs in Golomb-Rice run codec
 *  (version 2); 3: the reverse family's entries carry each document's
 *  score and time; 4: the table entries of recently added fingerprints may
 *  wait in a log of their own; 5: a store may verify by resemblance (its
 *  min-hash sketches and band keys in families of their own, which an
 *  older build would not keep in step). This build reads formats 1 to 5
 *  and writes 5. */
#define ND_FORMAT_VERSION 5u
/** Version of the resemblance sketch (nd_sketch: bins, their filling,
 *  band keys). A change of any sketch for any input bumps it; a store
 *  records the version it was created with and a build refuses another
 *  (ND_EVERSION). */
#define ND_SKETCH_VERSION 1u
/** Version of the fingerprint function (text -> features -> simhash). A
 *  change of the output for any input under any options bumps it. 2: CJK
 *  runs whole (issue 47): whitespace, line breaks and punctuation between
 *  two Han, kana or Hangul characters do not end their run of bigrams,
 *  and Hangul is cut into bigrams (docs/fingerprints.md). A build computes
 *  every version from ND_FP_VERSION_OLDEST to ND_FP_VERSION (new stores
 *  and plain calls use ND_FP_VERSION), so stores of an older version keep
 *  their fingerprints. */
#define ND_FP_VERSION 2u
/** Oldest fingerprint function version this build computes. */
#define ND_FP_VERSION_OLDEST 1u

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/** Error codes. The numbers never change once released. */
typedef enum nd_error {
    ND_OK = 0,
    ND_EINVAL = -1,     /**< invalid argument or malformed input */
    ND_ENOTFOUND = -2,  /**< no such document, database or file */
    ND_ECORRUPT = -3,   /**< stored data failed a check (checksum, decode) */
    ND_EIO = -4,        /**< I/O error from the operating system or RocksDB */
    ND_EBUSY = -5,      /**< database is opened for writing by another process
                             or another handle of this one (nd_errmsg says
                             which, with the other's pid when known) */
    ND_EVERSION = -6,   /**< on-disk format written by an incompatible build */
    ND_ENOMEM = -7,     /**< out of memory */
    ND_EEXIST = -8,     /**< already exists (e.g. create over an existing db) */
    ND_EMISMATCH = -9,  /**< caller's settings differ from the database's */
    ND_ELIMIT = -10,    /**< a documented size limit was exceeded */
    ND_ENOSPC = -11,    /**< no space left on the device */
    ND_EREADONLY = -12, /**< write on a read-only handle or directory */
    ND_EINTERNAL = -13, /**< a bug in neardup: please report */
    ND_ESTOPPED = -14   /**< a callback returned a negative value (its own
                             failure; see the callback rule at the top) */
} nd_error;

/** Static, human-readable name of an error code ("invalid argument"...).
 *  Never NULL; unknown codes give "unknown error". */
const char *nd_strerror(int rc);

/** Detail message of the last failure on the calling thread, or "" if none.
 *  @note The string lives in thread-local storage and stays valid until
 *  the next neardup call on this thread that fails. Works without a handle
 *  (e.g. after nd_db_open failed) and never allocates. */
const char *nd_errmsg(void);

/** Limits enforced by the library (ND_ELIMIT beyond them). */
#define ND_MAX_KEY_LEN 4096u            /**< bytes in a document key */
#define ND_MAX_DOC_BYTES (64u << 20)    /**< bytes of one text or HTML document */
#define ND_MAX_K 16u                    /**< largest query distance */
#define ND_MAX_PLAN_K 8u                /**< largest design distance of a plan */
#define ND_MAX_TABLES 64u               /**< most permuted tables in a plan */

/* ------------------------------------------------------------------ */
/* Simhash                                                             */
/* ------------------------------------------------------------------ */

/** Hamming distance between two fingerprints (popcount of a XOR b). */
unsigned nd_hamming(uint64_t a, uint64_t b);

/** Streaming simhash accumulator: a caller-owned struct.
 *  The fields are private; use the functions below. Conceptually it holds
 *  64 signed counters; adding a feature hash h with weight w adds w to
 *  counter i where bit i of h is 1 and subtracts w where it is 0. */
typedef struct nd_simhash {
    int64_t pos[64]; /* private: sum of weights whose hash has bit i set */
    int64_t total;   /* private: sum of all weights */
    uint32_t pend_n; /* private: features buffered for vectorised adds */
    uint64_t pend_h[32];
    int32_t pend_w[32];
} nd_simhash;

/** Reset the accumulator to "no features". */
void nd_simhash_init(nd_simhash *acc);

/** Add a ready 64-bit feature hash with a weight (may be negative). */
void nd_simhash_add_hash(nd_simhash *acc, uint64_t hash, int32_t weight);

/** Add a feature given as bytes; its hash is XXH3-64 of the bytes with
 *  seed ND_FEATURE_SEED (see nd_feature_hash). */
void nd_simhash_add_feature(nd_simhash *acc, const void *bytes, size_t len,
                            int32_t weight);

/** The fingerprint: bit i is 1 exactly where counter i > 0.
 *  The accumulator is left usable (more features may be added). */
uint64_t nd_simhash_final(nd_simhash *acc);

/** Seed of the feature hash; part of the fingerprint function's identity. */
#define ND_FEATURE_SEED 0x6e65617264757031ull /* "neardup1" */

/** XXH3-64 of bytes with seed ND_FEATURE_SEED. */
uint64_t nd_feature_hash(const void *bytes, size_t len);

/* ------------------------------------------------------------------ */
/* Text and HTML fingerprints                                          */
/* ------------------------------------------------------------------ */

/** What a text's features are. */
typedef enum nd_feature_kind {
    ND_FEATURES_DEFAULT = 0,  /**< the measured best: docs/fingerprints.md */
    ND_FEATURES_WORDS = 1,    /**< each token */
    ND_FEATURES_SHINGLES = 2, /**< each run of n consecutive tokens */
    ND_FEATURES_CHARS = 3     /**< each run of n consecutive code points */
} nd_feature_kind;

/** Flags of nd_fp_options. */
#define ND_FP_HTML 0x1u          /**< input is HTML: extract visible text */
#define ND_FP_NO_CJK_BIGRAMS 0x2u /**< do not split spaceless scripts into bigrams */
/** Fold Traditional Chinese characters to Simplified (OpenCC's t2s) before
 *  tokens are formed, so that a paragraph in either script has the same
 *  features. Fingerprint function version 2 or later (ND_EINVAL with
 *  version 1). Off by default (docs/fingerprints.md says why). */
#define ND_FP_FOLD_CHINESE 0x4u
/** Flags bits 24..31: the version of the fingerprint function to compute,
 *  ND_FP_VERSION_OLDEST..ND_FP_VERSION; 0 (no bits) = ND_FP_VERSION. A
 *  store's options (nd_db_fp_options) carry its version explicitly; a
 *  caller's options given at open with no version take the store's. */
#define ND_FP_FUNCTION(v) (((unsigned)(v) & 0xffu) << 24)
#define ND_FP_FUNCTION_MASK 0xff000000u
/** The fingerprint function version selected by flags (0: the newest). */
#define ND_FP_FUNCTION_OF(flags) (((unsigned)(flags) >> 24) & 0xffu)

#define ND_FP_OPTIONS_VERSION 1u

/** Fingerprint options. Zero fields mean the default. */
typedef struct nd_fp_options {
    unsigned version;         /**< ND_FP_OPTIONS_VERSION */
    nd_feature_kind features; /**< 0 = ND_FEATURES_DEFAULT */
    unsigned n;               /**< shingle width / n-gram length; 0 = default */
    unsigned flags;           /**< ND_FP_* */
    unsigned title_weight;    /**< HTML: weight of each title token; 0 = default
                                   (1; 2 in function version 1) */
    const char *const *stopwords; /**< optional tokens to drop (matched after
                                   normalisation); NULL = none */
    size_t n_stopwords;
} nd_fp_options;

#define ND_FP_OPTIONS_INIT { ND_FP_OPTIONS_VERSION, ND_FEATURES_DEFAULT, 0, 0, 0, NULL, 0 }

/** Initialise options to defaults. @return ND_OK, or ND_EINVAL for an
 *  unknown version. */
int nd_fp_options_init(nd_fp_options *opts, unsigned version);

/** Fingerprint UTF-8 text (or HTML when opts->flags has ND_FP_HTML).
 *  Invalid UTF-8 is handled deterministically (docs/fingerprints.md), never an error.
 *  @param out  the fingerprint
 *  @return ND_OK; ND_EINVAL for bad options or NULL text with len > 0;
 *          ND_EVERSION for a function version this build does not compute;
 *          ND_ELIMIT when len > ND_MAX_DOC_BYTES; ND_ENOMEM.
 *  @note Thread-safe; options are read, never kept. */
int nd_fingerprint(uint64_t *out, const char *text, size_t len,
                   const nd_fp_options *opts);

/** Callback receiving each feature hash and its weight. */
typedef void (*nd_feature_cb)(uint64_t hash, int32_t weight, void *payload);

/** Call cb for every feature of the text under opts, in text order, with
 *  the weight each occurrence adds (nd_fingerprint is exactly the simhash
 *  of these). @return as nd_fingerprint. */
int nd_features(const char *text, size_t len, const nd_fp_options *opts,
                nd_feature_cb cb, void *payload);

/** Canonical string naming the fingerprint configuration, e.g.
 *  "fp2;shingles:3;nfkc-cf;cjk2;stop:0;title:1", beginning with the
 *  version of the function the options compute. Two option sets give
 *  the same fingerprints iff their strings are equal. Databases record it.
 *  @param out  buffer of cap bytes, NUL-terminated on success
 *  @return ND_OK; ND_EINVAL for bad options; ND_EVERSION for a function
 *          version this build does not compute (ND_FP_FUNCTION);
 *          ND_ELIMIT if cap is too small. */
int nd_fp_config_string(char *out, size_t cap, const nd_fp_options *opts);

/** Visible text of an HTML document (a forgiving streaming tokenizer that
 *  nests elements as libxml2 2.9's HTML parser does): script, style,
 *  noscript and similar are dropped, entities decoded, blocks separated by
 *  newlines. Malformed HTML never fails; time is linear in the input. */
typedef struct nd_html_text {
    char *title;   /**< NUL-terminated UTF-8 title ("" if none) */
    size_t title_len;
    char *body;    /**< NUL-terminated UTF-8 visible text */
    size_t body_len;
} nd_html_text;

/** Extract the text of html into out (caller-owned struct).
 *  @return ND_OK; ND_ELIMIT over ND_MAX_DOC_BYTES; ND_ENOMEM.
 *  @note Release with nd_html_text_dispose. Thread-safe. */
int nd_html_extract(nd_html_text *out, const char *html, size_t len);

/** Free what nd_html_extract allocated; accepts NULL and zeroed structs. */
void nd_html_text_dispose(nd_html_text *text);

/* ------------------------------------------------------------------ */
/* Table plans                                                         */
/* ------------------------------------------------------------------ */

/** A design of permuted tables (Manku et al.): the 64 bits are split into
 *  blocks (one or two levels); each table moves some blocks to the top and
 *  probes on them. */
typedef struct nd_plan_info {
    unsigned k;            /**< design distance: exact by the tables alone */
    unsigned tables;       /**< t */
    unsigned levels;       /**< 1 or 2 */
    unsigned blocks[2];    /**< blocks at level 1 and 2 (0 if one level) */
    unsigned prefix_min;   /**< smallest p_i over tables */
    unsigned prefix_max;   /**< largest p_i */
    double candidates;     /**< expected candidates per probe: N / 2^p */
    double cost;           /**< model cost of one query (arbitrary units) */
    double bytes_per_doc;  /**< estimated disk bytes per stored fingerprint */
} nd_plan_info;

/** Candidate designs for distance k and n expected documents, best first
 *  (lowest model cost). Writes up to cap entries.
 *  @param out_n  number of candidates (may exceed cap: then truncated)
 *  @return ND_OK; ND_EINVAL for k > ND_MAX_PLAN_K or n == 0. */
int nd_plan_candidates(nd_plan_info *out, size_t cap, size_t *out_n,
                       unsigned k, uint64_t n);

/* ------------------------------------------------------------------ */
/* Database                                                            */
/* ------------------------------------------------------------------ */

typedef struct nd_db nd_db;
typedef struct nd_sketch nd_sketch;       /* defined with the sketch functions */
typedef struct nd_signature nd_signature; /* defined with the corpus dedupe */

/** Flags of nd_db_options. */
#define ND_DB_CREATE 0x1u    /**< create the database if it is missing */
#define ND_DB_EXCL 0x2u      /**< with CREATE: fail with ND_EEXIST if it exists */
/** Open read-only, beside a writer in another process if one runs: the
 *  handle sees every write acknowledged before the open, whole write
 *  calls only, and keeps that view while open (writes made later are not
 *  seen; the writer's compactions never make its reads fail). ND_EBUSY
 *  when the writer kept changing the database throughout the open. Uses
 *  a scratch directory in $TMPDIR during the open, one descriptor per
 *  table file while open. */
#define ND_DB_READONLY 0x4u
#define ND_DB_SYNC 0x8u      /**< fsync the WAL on every write */
#define ND_DB_NO_BACKGROUND 0x10u /**< never fold fresh inserts in the background */
/** Read the tables through memory mappings of their files instead of
 *  pread: a warm k=3 query at 100M about twice as fast, since a mapped
 *  block costs no system call, copy or page-cache look-up. The price: the
 *  pages a query touches count in the process's RSS (mapped page cache,
 *  up to the tables' size on disk, which the kernel may reclaim), and an
 *  I/O error on a mapped page ends the process (SIGBUS) where pread would
 *  return ND_EIO. Same answers either way. */
#define ND_DB_MMAP 0x20u

/** (create) A fingerprint-only store: documents are near-duplicates when
 *  their fingerprints are within k bits (Manku's setting), and records may
 *  be bare fingerprints. Without it a store created with options of
 *  version 4 verifies by resemblance (see min_resemblance). At open of an
 *  existing store: it must be fingerprint-only (else ND_EMISMATCH). */
#define ND_DB_FINGERPRINT_ONLY 0x40u

/** 2: threads and scratch_dir appended; 3: min_resemblance appended;
 *  4: a store created with min_resemblance 0 verifies by resemblance
 *  ND_DB_DEFAULT_MIN_RESEMBLANCE unless ND_DB_FINGERPRINT_ONLY is set (in
 *  versions 1 to 3, still accepted, 0 meant a fingerprint-only store). */
#define ND_DB_OPTIONS_VERSION 4u

/** Database options. Zero means default; fields marked (create) are only
 *  used when the database is created and are read from it afterwards. */
typedef struct nd_db_options {
    unsigned version;       /**< ND_DB_OPTIONS_VERSION */
    unsigned flags;         /**< ND_DB_* */
    unsigned k;             /**< (create) design distance; default 3 */
    uint64_t expected_docs; /**< (create) planner's N; default 100M */
    unsigned tables;        /**< (create) force t; 0 = the planner's choice */
    unsigned run_size;      /**< entries per compressed run; default 128 */
    uint64_t cache_bytes;   /**< block cache; default 64 MiB */
    uint64_t fold_threshold;/**< fresh entries (all tables) that trigger a
                                background fold, counting those an earlier
                                open left unfolded; default about one per
                                run (fingerprints x tables / run_size), at
                                least 1M; UINT64_MAX never */
    const nd_fp_options *fp;/**< (create) fingerprint configuration; at open,
                                if non-NULL, must match the stored one
                                (else ND_EMISMATCH) */
    int has_k;              /**< at open: if nonzero, k must equal the stored
                                design distance (else ND_EMISMATCH) */
    unsigned threads;       /**< (version 2) most threads one call of this
                                handle runs on, the calling one included:
                                nd_db_batch's merge and probes, and an
                                nd_loader's overlapped passes (which run
                                beside the caller when threads > 1).
                                0 = one per online CPU, at most 8; 1 =
                                every call on its calling thread only, e.g.
                                where other processes share the CPUs (a
                                resemblance store then also writes its
                                band entries on the writer's thread, not
                                its flush thread);
                                at most 64. Answers never depend on it. */
    const char *scratch_dir;/**< (version 2) with ND_DB_READONLY: the
                                directory under which a reader makes its
                                short-lived scratch directory (removed once
                                open); NULL = /tmp. The library reads no
                                environment: the CLI passes $TMPDIR. */
    double min_resemblance; /**< (create) (version 3) In (0, 1]: the store
                                verifies by resemblance (see "Resemblance
                                stores" below). 0: the default, which is
                                ND_DB_DEFAULT_MIN_RESEMBLANCE (version 4)
                                unless flags has ND_DB_FINGERPRINT_ONLY, a
                                fingerprint-only store (and, in versions 3
                                and older, a fingerprint-only store). At
                                open, if nonzero, must equal the stored
                                one (else ND_EMISMATCH); 0 opens the store
                                as it was made. */
} nd_db_options;

/** The resemblance threshold measured best (bench/README.md,
 *  "Near-duplicate quality"): the default of a store created from options
 *  of version 4 and of `neardup init`. */
#define ND_DB_DEFAULT_MIN_RESEMBLANCE 0.85

#define ND_DB_OPTIONS_INIT { ND_DB_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, 0.0 }

/** Initialise options to defaults: every field of that version zero.
 *  @param version  ND_DB_OPTIONS_VERSION, or 1 or 2 for a struct of that
 *                  version (then only its fields are written)
 *  @return ND_OK or ND_EINVAL (NULL, unknown version). */
int nd_db_options_init(nd_db_options *opts, unsigned version);

/** Open (or with ND_DB_CREATE create) the database in directory path.
 *  A database is created only in a new or empty directory: with CREATE, a
 *  path that is a file, or a directory holding other files and no
 *  database, is refused (ND_EEXIST) and nothing is written there; a
 *  directory holding a database's files but not its CURRENT file is damage
 *  (ND_ECORRUPT), whatever the flags. So is a store that recovers fewer
 *  writes than its last synced one (ND_DB_SYNC, a generation switch)
 *  acknowledged: its write-ahead log was deleted or cut (ND_ECORRUPT,
 *  "acknowledged writes up to sequence S are missing"; read-only opens
 *  too; nothing is written; nd_db_repair accepts the loss).
 *  @return ND_OK; ND_ENOTFOUND (missing, no CREATE); ND_EEXIST (EXCL and
 *          the database exists; CREATE beside other files, see above);
 *          ND_EBUSY (another process, or another handle in this one, has
 *          it open for writing: nd_errmsg says "PATH is open for writing
 *          by another process (pid N)" or "... by this process");
 *          ND_EVERSION (other format version); ND_EMISMATCH (fp config or
 *          k differ); ND_ECORRUPT; ND_EIO; ND_EREADONLY; ND_EINVAL; ND_ENOMEM.
 *  @note *out is set to NULL first when out is not NULL, and to the handle
 *        only on ND_OK: after a failure there is nothing to close. One
 *        handle serves many threads at once. */
int nd_db_open(nd_db **out, const char *path, const nd_db_options *opts);

/** Flush and close; accepts NULL. Waits for a running background fold.
 *  Free every nd_loader of db first (nd_loader_free): a loader's task may
 *  still be writing a chunk's files for it.
 *  @return ND_OK or ND_EIO (the handle is freed either way). */
int nd_db_close(nd_db *db);

/** The database's table plan. */
int nd_db_plan(nd_plan_info *out, const nd_db *db);

/** The database's fingerprint options, stop words included: texts
 *  fingerprinted with them match the stored fingerprints.
 *  @note out->stopwords points into the handle: valid until nd_db_close.
 *  @return ND_OK. */
int nd_db_fp_options(nd_fp_options *out, const nd_db *db);

/** A document to store. */
typedef struct nd_doc {
    const void *key;  /**< bytes, 1..ND_MAX_KEY_LEN */
    size_t key_len;
    uint64_t fp;      /**< fingerprint */
    double score;     /**< authority score (e.g. PageRank); 0 if unknown */
    int64_t time;     /**< last-seen time, seconds since the epoch */
    const nd_sketch *sketch; /**< its resemblance sketch, of the same
                                  features as fp (nd_db_sign); NULL =
                                  none. A resemblance store requires it
                                  (ND_EINVAL without); a fingerprint-only
                                  store ignores it. */
} nd_doc;

/** Store (or replace) the document key with fingerprint fp.
 *  Durable on return (WAL; fsync too with ND_DB_SYNC) and atomic across
 *  every column family it touches; visible to the next query.
 *  Replacing a key moves it to the new fingerprint; a fingerprint leaves the
 *  tables only when its last document goes.
 *  @return ND_OK; ND_EINVAL; ND_ELIMIT (key too long); ND_EREADONLY;
 *          ND_EIO; ND_ENOSPC; ND_ENOMEM. */
int nd_db_add(nd_db *db, const void *key, size_t key_len, uint64_t fp,
              double score, int64_t time);

/** Store n documents in one atomic write (one fsync with ND_DB_SYNC: the
 *  group commit). Later entries with the same key win.
 *  @return as nd_db_add; on failure nothing is stored. */
int nd_db_add_many(nd_db *db, const nd_doc *docs, size_t n);

/** Delete document key. @return ND_OK; ND_ENOTFOUND; as nd_db_add. */
int nd_db_delete(nd_db *db, const void *key, size_t key_len);

/** Make every write acknowledged so far durable against a crash of the
 *  machine, as if each had been made with ND_DB_SYNC: one fsync of the
 *  write-ahead log for all of them (a handle opened without ND_DB_SYNC
 *  then syncs when its caller needs it: a group of writes, a checkpoint
 *  of a crawl). The store's record of its last synced write moves with
 *  it, so an open that finds these writes lost (a log deleted or cut)
 *  refuses the store as it does for ND_DB_SYNC writes. With ND_DB_SYNC
 *  there is nothing left to sync, and the call is cheap.
 *  @note Thread-safe; it waits for a write in progress on another thread
 *        (the writer lock) and covers it.
 *  @return ND_OK; ND_EINVAL (NULL db); ND_EREADONLY; ND_EIO or ND_ENOSPC
 *          (the fsync failed: the writes may not be durable, and the
 *          handle refuses further writes); ND_ECORRUPT. */
int nd_db_sync(nd_db *db);

/** One query answer. key points into the nd_results that holds it. */
typedef struct nd_match {
    uint64_t fp;       /**< stored fingerprint */
    unsigned dist;     /**< Hamming distance to the query */
    const char *key;   /**< document key (not NUL-terminated in general; a
                            NUL follows it for convenience); NULL with
                            ND_QUERY_FP_ONLY */
    size_t key_len;
    double score;
    int64_t time;      /**< last-seen time */
    double resemblance;/**< estimated resemblance to the query's sketch
                            (nd_db_query_doc, nd_db_add_doc_if_new); -1
                            when not estimated */
} nd_match;

/** A growable list of matches and the bytes of their keys.
 *  @note Not thread-safe: a call that fills an nd_results (a query, a
 *        check) clears it first, so each thread uses results of its own;
 *        a handle (nd_db) is shared, its results are not. */
typedef struct nd_results nd_results;

/** New empty results. @return ND_OK or ND_ENOMEM. */
int nd_results_new(nd_results **out);
/** Free; accepts NULL. */
void nd_results_free(nd_results *res);
/** Number of matches. */
size_t nd_results_count(const nd_results *res);
/** Match i (< count). @note Valid until res is cleared, reused or freed. */
const nd_match *nd_results_get(const nd_results *res, size_t i);
/** The order in which matches are ranked wherever one must be chosen
 *  (nd_db_batch, sharded stores, neardup-mpi): by distance, then
 *  fingerprint, then key bytes (a shorter key first when one is a prefix).
 *  Reads fp, dist, key and key_len only.
 *  @return < 0 when a comes first, 0 when equal, > 0 when b comes first. */
int nd_match_order(const nd_match *a, const nd_match *b);
/** Remove all matches (keeps capacity). */
void nd_results_clear(nd_results *res);

/** Flags of nd_query_options. */
#define ND_QUERY_FIRST 0x1u   /**< stop at the first match found */
#define ND_QUERY_FP_ONLY 0x2u /**< one match per stored fingerprint, no keys */

#define ND_QUERY_OPTIONS_VERSION 1u

/** Options of nd_db_query. Zero fields mean the default. */
typedef struct nd_query_options {
    unsigned version;  /**< ND_QUERY_OPTIONS_VERSION */
    unsigned flags;    /**< ND_QUERY_* */
    size_t limit;      /**< at most this many matches (closest kept); 0 = all */
} nd_query_options;
#define ND_QUERY_OPTIONS_INIT { ND_QUERY_OPTIONS_VERSION, 0, 0 }

/** Initialise options to defaults. @return ND_OK or ND_EINVAL (NULL,
 *  unknown version). */
int nd_query_options_init(nd_query_options *opts, unsigned version);

/** Every stored document whose fingerprint is within distance k of fp
 *  (inclusive), ordered by distance, then fingerprint, then key. Exact for
 *  any k <= ND_MAX_K: up to the plan's k by the tables, beyond it by extra
 *  probes or a scan.
 *  @param out  cleared, then filled
 *  @return ND_OK (also when nothing matched); ND_EINVAL (k > ND_MAX_K);
 *          ND_ECORRUPT; ND_EIO; ND_ENOMEM.
 *  @note Thread-safe; runs concurrently with writes. */
int nd_db_query(nd_results *out, nd_db *db, uint64_t fp, unsigned k,
                const nd_query_options *opts);

/** The crawler's check-then-insert: if a stored document lies within k of
 *  fp, out receives the closest one (ties: smallest fingerprint, then key)
 *  and nothing is stored; otherwise the document is stored (as nd_db_add) and
 *  out is left empty. Atomic with respect to other writers: two racing
 *  near-duplicates never both get in. If the closest match is key itself,
 *  its last-seen time is refreshed to time.
 *  The check runs outside the writer lock (calls from several threads
 *  check at once); the insert takes the lock and checks again only when
 *  a document committed meanwhile might be within k of fp.
 *  @return ND_OK in both cases; errors as nd_db_add and nd_db_query. */
int nd_db_add_if_new(nd_results *out, nd_db *db, const void *key, size_t key_len,
                     uint64_t fp, double score, int64_t time, unsigned k);

/* Resemblance stores.
 *
 * A store created with nd_db_options.min_resemblance R > 0, or with options
 * of version 4 at zero (R = ND_DB_DEFAULT_MIN_RESEMBLANCE, the default
 * store; ND_DB_FINGERPRINT_ONLY asks for the other kind), verifies by
 * resemblance. It keeps, per document, the sketch of the features its
 * fingerprint is made from (nd_db_sign computes both from one
 * tokenisation) and the sketch's ND_SKETCH_BANDS band keys, in families
 * of their own, written and removed in the same atomic write as the
 * document (nd_db_delete, nd_db_expire, replacement) and checked by
 * nd_db_verify.
 *  - Every document written must carry a sketch (nd_doc.sketch): the
 *    calls that take a bare fingerprint (nd_db_add, nd_db_add_if_new)
 *    and documents without one return ND_EINVAL there.
 *  - The near-duplicates of a document D are the stored documents whose
 *    estimated resemblance to D (nd_sketch_resemblance) is at least R,
 *    among the candidates: the documents that share a band key with D
 *    (at most ND_DB_BAND_CANDIDATES per band key, in key order), and
 *    those whose fingerprint lies within k bits of D's (at most
 *    ND_DB_BAND_CANDIDATES per fingerprint, in key order). So a document is
 *    found however far its fingerprint lies (an edited short text often
 *    lies 10 bits or more away), and a simhash neighbour of lower
 *    resemblance (texts that share vocabulary only) is not one. The best
 *    is the one of highest resemblance (ties: nd_match_order).
 *  - It indexes every document it is given, near-duplicates included:
 *    nd_db_add_doc_if_new and nd_db_batch with ND_BATCH_ADD store the
 *    document in both cases and report its match. A later copy of an
 *    edited copy is then caught through it (measured: a store of the new
 *    documents only cannot reach the recall targets of bench/README.md).
 *  - nd_db_query (a bare fingerprint) answers by distance alone, exactly
 *    as in any store.
 * In a fingerprint-only store (R = 0) the calls below that take an
 * nd_doc behave exactly as the fingerprint calls (sketches ignored). */

/** Most documents read per band key, and per fingerprint, by one check
 *  of a resemblance store (a band key or fingerprint shared by more, a
 *  text copied thousands of times, yields the first this many in key
 *  order: any of them is a near-duplicate of the others). */
#define ND_DB_BAND_CANDIDATES 64u

/** The fingerprint and sketch of a text under db's fingerprint options,
 *  from one tokenisation: what a document of this text stores.
 *  out->distinct is 0; out->length is len.
 *  @param flags  ND_FP_HTML: the text is HTML (besides the store's flags)
 *  @return as nd_fingerprint; ND_EINVAL for unknown flags.
 *  @note Thread-safe. */
int nd_db_sign(nd_signature *out, nd_db *db, const char *text, size_t len, unsigned flags);

/** The store's resemblance threshold R; 0 for a fingerprint-only store
 *  (and a NULL db). */
double nd_db_min_resemblance(const nd_db *db);

/** The near-duplicates of a document: in a resemblance store with
 *  doc->sketch, the stored documents of estimated resemblance >= R among
 *  the candidates (see "Resemblance stores"), most resemblant first (ties:
 *  nd_match_order), each with its distance and resemblance; else exactly
 *  nd_db_query(out, db, doc->fp, k, opts). doc->key, score and time are
 *  not read.
 *  @param opts  NULL = defaults; ND_QUERY_FIRST stops at the first
 *               verified match, limit keeps the best; ND_QUERY_FP_ONLY is
 *               refused (ND_EINVAL) in a resemblance store
 *  @return as nd_db_query; ND_EINVAL (a resemblance store and a NULL
 *          sketch). @note Thread-safe; runs concurrently with writes. */
int nd_db_query_doc(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k,
                    const nd_query_options *opts);

/** The crawler's check-then-insert for a document with its sketch.
 *  Fingerprint-only store: exactly nd_db_add_if_new with doc's fields.
 *  Resemblance store: out receives the best near-duplicate (as
 *  nd_db_query_doc's first, resemblance filled) or is left empty, and
 *  the document is stored in both cases (stored documents include
 *  near-duplicates, see "Resemblance stores"). The check and the insert
 *  hold the writer lock together, so of two racing near-duplicates the
 *  second sees the first.
 *  @return ND_OK in both cases; ND_EINVAL (NULL doc, or a resemblance
 *          store and a NULL sketch); errors as nd_db_add and nd_db_query. */
int nd_db_add_doc_if_new(nd_results *out, nd_db *db, const nd_doc *doc, unsigned k);

/** Look up one document. @param out  receives one match (dist 0)
 *  @return ND_OK; ND_ENOTFOUND; ND_EIO; ND_ECORRUPT. */
int nd_db_get(nd_results *out, nd_db *db, const void *key, size_t key_len);

/** Fold every fresh insert into compressed runs now (the background does
 *  the fold alone past fold_threshold), then compact RocksDB's files so the
 *  space of deleted documents and rewritten runs comes back (a rewrite of
 *  the whole database: an administrative call). Each fold step is atomic,
 *  so a crash leaves every table holding the same set.
 *  @return ND_OK, an error, or a progress callback's stop
 *          (nd_db_set_progress). */
int nd_db_compact(nd_db *db);

/** Per-table statistics. */
typedef struct nd_table_stats {
    unsigned prefix_bits; /**< p_i */
    uint64_t entries;     /**< fingerprints in the table (runs + fresh) */
    uint64_t runs;        /**< compressed runs */
    uint64_t fresh;       /**< entries not yet folded into runs */
    uint64_t bytes;       /**< bytes of keys and values (before RocksDB) */
    double bits_per_entry;/**< 8 * bytes / entries */
} nd_table_stats;

typedef struct nd_stats {
    uint64_t documents;    /**< stored documents (keys) */
    uint64_t fingerprints; /**< distinct stored fingerprints */
    uint64_t disk_bytes;   /**< size of the database directory's files */
    unsigned tables;       /**< t */
    nd_table_stats table[ND_MAX_TABLES];
    double min_resemblance;/**< the store's threshold; 0: fingerprint only */
    uint64_t sketches;     /**< documents with a sketch (a resemblance store:
                                every document) */
    uint64_t band_keys;    /**< band entries (ND_SKETCH_BANDS a sketch) */
    uint64_t sketch_bytes; /**< bytes of keys and values of the sketch and
                                band families (before RocksDB) */
} nd_stats;

/** Stored documents and distinct fingerprints, from the counters (O(1)).
 *  @param out_docs, out_fingerprints  either may be NULL
 *  @return ND_OK or ND_EINVAL (NULL db). */
int nd_db_counts(uint64_t *out_docs, uint64_t *out_fingerprints, const nd_db *db);

/** Gather statistics (reads every table: O(entries)). */
int nd_db_stats(nd_stats *out, nd_db *db);

/** Check the whole database: every table holds the same set of
 *  fingerprints, runs are sorted, disjoint and decodable, the documents and
 *  reverse families agree, counters match; in a resemblance store every
 *  document has a well-formed sketch and its ND_SKETCH_BANDS band
 *  entries, and those families hold nothing else.
 *  @return ND_OK; ND_ECORRUPT with nd_errmsg naming the first problem; a
 *          progress callback's stop (nd_db_set_progress). */
int nd_db_verify(nd_db *db);

/** Write a consistent checkpoint of the database into new directory dir
 *  (which must not exist); it opens as a database. The copy is made
 *  in "dir.tmp" and renamed; a "dir.tmp" a killed backup left is emptied
 *  and reused (its files are deleted, whatever they are). From a writable handle: every
 *  write that returned before the call. From a ND_DB_READONLY handle
 *  (while another process may write): at least the handle's view, and
 *  ND_EBUSY (no dir written) when the writer has changed the database's
 *  files since the handle opened or during the copy (open a new handle
 *  and try again).
 *  @return ND_OK; ND_EEXIST; ND_EBUSY; ND_EIO. */
int nd_db_backup(nd_db *db, const char *dir);

/** What nd_db_repair did. */
typedef struct nd_repair_report {
    uint64_t docs_before;  /**< documents found: those the salvaged store
                                names (its document entries, and those whose
                                entry is lost but whose reverse entry or
                                sketch is not; when they outnumber the
                                counters record, deleted documents a lost
                                deletion brought back: the entries of one
                                family only are left out), or the salvaged
                                counters' figure, or the document count the
                                last synced write acknowledged (a log
                                deleted or cut lost them), when larger */
    uint64_t docs_kept;    /**< documents in the rebuilt database */
    uint64_t docs_dropped; /**< docs_before - docs_kept (0 if negative) */
    unsigned files_lost;   /**< damaged files set aside in DB.damaged/lost/:
                                table files the store used, unreadable or
                                cut (their originals), files ingested whole
                                not put back, a damaged MANIFEST. 0 for a
                                healthy store, whose lost/ holds only the
                                logs replayed, the MANIFEST replaced and
                                table files no family used */
    char damaged_copy[4096]; /**< where the salvaged original now lies */
    unsigned logs_replayed; /**< write-ahead logs whose records were
                                 replayed into table files (a store killed
                                 or closed holds one or more: not damage;
                                 a damaged record's loss is counted in
                                 docs_dropped), kept in DB.damaged/lost/ */
} nd_repair_report;

/** Salvage the damaged database at path (closed; no other process may
 *  have it open) into a consistent one: intact log records and table
 *  files are kept, damaged files are set aside, and every table is
 *  rebuilt from the documents that survived, so that nd_db_verify
 *  accepts the result. The original, salvaged in place, moves to
 *  path.damaged; the rebuilt database takes path.
 *  @param out  what was kept and dropped (may be NULL)
 *  @return ND_OK; ND_ENOTFOUND; ND_EEXIST (path.damaged or
 *          path.repairing exists); ND_ECORRUPT (too damaged to salvage,
 *          e.g. its configuration is lost); ND_EIO; ND_ENOSPC; ND_ENOMEM. */
int nd_db_repair(const char *path, nd_repair_report *out);

/** Where a long call's work is (nd_db_set_progress, nd_db_repair_progress). */
typedef struct nd_progress {
    const char *phase;  /**< what the call is doing: its phases are named
                             where the call is declared */
    const char *unit;   /**< what done counts: "tables", "documents" */
    uint64_t done;      /**< work of the phase done */
    uint64_t total;     /**< the phase's work, estimated when it starts
                             (done may end below or above it); 0 when unknown */
} nd_progress;

/** A long call's progress: called at the start (done 0) and the end of each
 *  phase and every ND_PROGRESS_EVERY units between, on the calling thread.
 *  It may not call functions of the handle. The callback rule (top): 0 goes
 *  on; nonzero stops the call at its next consistent point, which returns
 *  that value (positive) or ND_ESTOPPED (negative); what the call had
 *  committed stays, as each call says. */
typedef int (*nd_progress_cb)(const nd_progress *p, void *payload);
#define ND_PROGRESS_EVERY 65536u

/** Have db's long whole-store calls report their progress to cb (NULL: no
 *  calls, the default): nd_db_verify (phases "tables", a table at a time,
 *  and "documents"), nd_db_compact ("folding", tables; "compacting", files),
 *  nd_db_expire ("expiring", documents read; then, when it writes the
 *  store anew, "rewriting", families written of docs, rev and the tables)
 *  and nd_db_import of a fingerprint-only store ("importing", families
 *  written; not the loader's commit, which runs to its end).
 *  Stopped, verify has found nothing wrong so far; compact leaves the
 *  tables folded so far folded (the store stays consistent: a fold is
 *  atomic), and while it compacts the files (asked every 50 ms meanwhile)
 *  RocksDB's compaction is cancelled, each of its jobs done or not; expire has deleted the documents it reports (each whole), the
 *  others stay; import has imported none of its new documents. Set it
 *  before such
 *  calls run: it is read without a lock.
 *  @return ND_OK; ND_EINVAL (NULL db). */
int nd_db_set_progress(nd_db *db, nd_progress_cb cb, void *payload);

/** nd_db_repair, reporting its progress to cb (NULL: as nd_db_repair): the
 *  phases "salvaging" (the storage's own repair: done 0, then 1),
 *  "counting" (documents the salvaged store names), "rebuilding"
 *  (documents copied into the new store, of those counted), then the new
 *  store's nd_db_verify phases. Stopped by cb: the rebuilt copy is
 *  removed, path holds the store as salvaged in place (it may fail
 *  verify), and a new repair starts again.
 *  @return as nd_db_repair, or cb's stop. */
int nd_db_repair_progress(const char *path, nd_progress_cb cb, void *payload,
                          nd_repair_report *out);

/** Delete every document whose last-seen time is < before. Few of them
 *  (at most 1/128 of the store, or 16384): in atomic groups of documents
 *  (each deleted whole or kept, a crash or a stop between groups), other
 *  writers going on between groups, and a document refreshed to a later
 *  time while the call runs is kept. More: the store is written anew
 *  without them (one sequential pass, as a bulk import's) and one write
 *  switches to that copy, so the expiry is atomic as a whole (a crash or
 *  a stop before the switch deletes nothing); other writers wait
 *  meanwhile, queries read the store as it was until the switch. In a
 *  resemblance store that write also deletes their sketches and band
 *  entries: it holds about 0.5 KB an expired document in memory.
 *  @param out_deleted  number deleted, also when a later step failed (may
 *                      be NULL)
 *  @return ND_OK; ND_EREADONLY; ND_EIO; ND_ENOSPC; ND_ENOMEM; ND_ECORRUPT;
 *          a progress callback's stop (nd_db_set_progress). */
int nd_db_expire(uint64_t *out_deleted, nd_db *db, int64_t before);

/** Visit, in key order, every document nd_db_expire(db, before) would
 *  delete now, deleting nothing (a dry run; read-only handles too). cb
 *  follows the callback rule of nd_db_foreach_doc: a positive value stops
 *  the walk and is returned, a negative one stops it with ND_ESTOPPED.
 *  @note doc->key is valid during the callback only.
 *  @return ND_OK; ND_EINVAL (NULL argument); the callback's positive
 *          value; ND_ESTOPPED; ND_EIO; ND_ECORRUPT. */
int nd_db_foreach_expired(nd_db *db, int64_t before,
                          int (*cb)(const nd_doc *doc, void *payload), void *payload);

/* ------------------------------------------------------------------ */
/* Bulk loading and batch mode                                         */
/* ------------------------------------------------------------------ */

/* Writing many documents: which call.
 *  - The bulk path is nd_loader (nd_loader_new, nd_loader_add as often as
 *    needed, nd_loader_finish): any number of documents, in bounded memory,
 *    each family of the store rewritten once; `neardup import` uses it.
 *  - nd_db_import is the same load for documents already in memory: it is
 *    what nd_loader_finish runs for a loader that never filled a chunk,
 *    without the loader's copy of every key and its temporary directory
 *    (so it is not written as a wrapper of the loader: that would add
 *    both). nd_db_import_step sizes a sequence of nd_db_import calls, each
 *    of which rewrites the store; kept for callers that load that way, as
 *    a loader writes the store only once.
 *  - nd_db_add_many is not a bulk load: it is the group commit of online
 *    writes (one atomic, durable write of up to thousands of documents,
 *    their table entries folded later), costing per document what nd_db_add
 *    costs.
 *  - nd_db_batch with ND_BATCH_ADD is another feature: the near-duplicate
 *    check of a group, storing only its new documents. */

/** A bulk loader (the bulk path): a load larger than memory, written into
 *  the store once. nd_db_import calls in nd_db_import_step sizes rewrite the
 *  whole store at every call (a 100M load rewrites about 6 times its
 *  size). A loader instead
 *  buffers chunk_docs documents, sorts each full chunk and spills it to
 *  temporary files (a directory "nd-load-*" inside the database's
 *  directory); nd_loader_finish merges every chunk with the store in one
 *  pass per family, into a new generation (as a large nd_db_import does).
 *  Semantics are those of one nd_db_import of everything added:
 *  - a later document with the same key wins, across the whole load;
 *  - a key already stored when its chunk is spilled (or, for the last
 *    chunk, at the commit) is replaced then, by an atomic write of its
 *    own, as nd_db_import replaces stored keys first;
 *  - the documents new to the store become visible together, by the
 *    commit's one atomic write: a crash before it keeps none of them, and
 *    the next writable open removes the temporary files left behind;
 *  - a key that another writer stores after the loader spilled it as a
 *    new key is replaced by the loader's last document of it right after
 *    the commit's write; a key the loader replaced in the store keeps
 *    whatever another writer stores after that replacement (unless a
 *    later chunk of the load has the key again).
 *  A full chunk's stored keys are replaced by the nd_loader_add call that
 *  fills it; its files are written by a task of the loader's while the
 *  caller fills the next chunk (with nd_db_options.threads 1, or on a
 *  machine of one CPU by default, before the call returns).
 *  Memory: two chunks of chunk_docs documents with their keys (the one
 *  filled, the one written) and the sort's work space (about 200 bytes a
 *  document plus twice the key). Disk: the temporary files
 *  (about 8 bytes per table plus 40 plus twice the key length, a document)
 *  and, until the commit's switch, the old and the new generation.
 *  nd_loader_add holds the writer lock while it replaces stored keys;
 *  nd_loader_finish holds it throughout. Other writers and readers run
 *  meanwhile. A loader is used by one thread at a time.
 *  In a resemblance store every document needs a sketch (else ND_EINVAL);
 *  the loader keeps it with the document and writes the sketches and
 *  band keys of the documents new to the store with them, visible by the
 *  same one write (a crash before it keeps none); its chunks are
 *  ND_LOADER_SKETCH_CHUNK documents by default (a sketch adds about 180
 *  bytes a document in memory and 400 on the temporary disk), and a load
 *  that never fills a chunk is spilled too. nd_db_import into a resemblance store is such a
 *  load of one chunk (its temporary files too). */
/** No longer used by the library (the size of the groups in which a
 *  resemblance store was once imported); kept for source compatibility. */
#define ND_DB_IMPORT_GROUP 4096u
/** A resemblance store's default loader chunk: two chunks and the spill's
 *  sort of one band at a time take about 0.6 GB with 8-byte keys. */
#define ND_LOADER_SKETCH_CHUNK (1u << 20)
typedef struct nd_loader nd_loader;

/** Start a load into db.
 *  @param chunk_docs  documents per chunk; 0: nd_db_import_step's largest
 *                     (in a resemblance store ND_LOADER_SKETCH_CHUNK)
 *  @return ND_OK; ND_EREADONLY; ND_EIO (the temporary directory); ND_ENOMEM. */
int nd_loader_new(nd_loader **out, nd_db *db, size_t chunk_docs);

/** Add n documents (keys are copied; checked as nd_db_import checks them).
 *  A chunk filled by the call has its stored keys replaced before the call
 *  returns; its files are written meanwhile (see nd_loader), and a failure
 *  to write them is returned by the next call that fills a chunk, or by
 *  nd_loader_finish.
 *  @return ND_OK; ND_EINVAL (NULL docs, or the loader was committed or
 *          failed); ND_ELIMIT (a key too long, nothing of the call added);
 *          ND_EIO; ND_ENOSPC; ND_ENOMEM (this call's, or the files of the
 *          chunk filled before). After an error other than ND_EINVAL and
 *          ND_ELIMIT the loader only accepts nd_loader_free. */
int nd_loader_add(nd_loader *l, const nd_doc *docs, size_t n);

/** Commit the load: make every document added visible (see nd_loader),
 *  once the files of every chunk are written. A load that never filled a
 *  chunk is one nd_db_import call (in a fingerprint-only store). Afterwards (and after a failure) the
 *  loader only accepts nd_loader_free.
 *  @param out_new  documents new to the store (may be NULL)
 *  @return ND_OK; ND_EINVAL (finished twice); ND_EIO; ND_ENOSPC; ND_ENOMEM;
 *          ND_ECORRUPT. */
int nd_loader_finish(uint64_t *out_new, nd_loader *l);

/** Free the loader: documents not committed are dropped (replacements
 *  already written stay) and the temporary files removed, once its writer
 *  task (if one runs) is done. Call it before nd_db_close of the loader's
 *  database. Accepts NULL. */
void nd_loader_free(nd_loader *l);

/** Load n documents held in memory fast, without the near-duplicate check
 *  (an existing crawl, a corpus; larger loads: nd_loader): keys are
 *  sorted, fingerprints permuted and sorted per table, and merged into the
 *  compressed runs in one pass per table, never one probe per document.
 *  Later entries with the same key win; a key already stored is replaced
 *  (moved to its new fingerprint).
 *  Atomicity: the documents new to the store are written by one atomic
 *  write (a crash keeps all of them or none); keys already stored are
 *  replaced first, by an atomic write of their own. Millions of documents
 *  go through an nd_loader (one write of the store), or a sequence of
 *  calls (see nd_db_import_step; each rewrites the store). Holds the
 *  writer lock for its duration. Fresh inserts are folded first.
 *  A call that adds at least 1/16 as many fingerprints as are stored, or
 *  one for every run (the database's run_size entries: most runs would
 *  change; the first load of an empty database, the steps of
 *  nd_db_import_step) writes
 *  the documents, their reverse index and every table anew as SST files
 *  of a new generation that its one write switches to: memory stays
 *  bounded whatever the size of the call or the store, and the disk holds
 *  both generations until the switch (free space about the size of the
 *  database is needed). Smaller calls merge into the runs they touch.
 *  Stopped by the handle's progress callback (nd_db_set_progress, phase
 *  "importing": families written of the tables, docs and rev), it has
 *  imported none of the new documents (what it wrote of a new generation
 *  is removed); keys already stored that it replaced stay replaced.
 *  In a resemblance store it is a load of one chunk (see nd_loader: the
 *  sketches and band keys written with the documents, temporary files in
 *  the database's directory), which reports no progress and runs to its
 *  end.
 *  @return ND_OK; ND_EINVAL; ND_ELIMIT (a key too long); ND_EREADONLY;
 *          ND_EIO; ND_ENOSPC; ND_ENOMEM; ND_ECORRUPT; the callback's
 *          stop. */
int nd_db_import(nd_db *db, const nd_doc *docs, size_t n);

/** Documents for the next nd_db_import call into a database holding `stored`
 *  documents: half of it, from 1M up to 8M. Each call rewrites every run
 *  of every table, so calls that grow with the store keep a large load to
 *  a few rewrites of its size instead of size^2 / call.
 *  @note Pure arithmetic; thread-safe. */
size_t nd_db_import_step(uint64_t stored);

/** nd_batch_item.match_index when the match is a stored document. */
#define ND_BATCH_STORED ((size_t)-1)

/** One answer of nd_db_batch. */
typedef struct nd_batch_item {
    int dup;             /**< 1: a near-duplicate exists; 0: new */
    unsigned dist;       /**< with dup: distance to the match */
    uint64_t match_fp;   /**< with dup: the match's fingerprint */
    size_t match_index;  /**< with dup: index of the earlier batch document
                              matched, or ND_BATCH_STORED */
    const char *match_key; /**< with dup: the match's key (NUL follows) */
    size_t match_key_len;
    double resemblance;  /**< with dup in a resemblance store: the estimated
                              resemblance to the match; else -1 */
} nd_batch_item;

/** Flags of nd_db_batch. */
#define ND_BATCH_ADD 0x1u /**< store the new documents (and refresh the
                               last-seen time of a stored match with the
                               same key), atomically with the check */

/** Manku's batch mode: check n documents against the stored set and
 *  against each other, as if they were added one by one in order with
 *  nd_db_add_if_new: document i is a duplicate when a stored document or an
 *  earlier *new* document of the batch lies within k; its match is the
 *  closest such (ties: smaller fingerprint, then smaller key).
 *  The stored set is read by a merge: the batch is sorted under each
 *  table's permutation and each table is walked once in order. A batch of
 *  at most 4096 documents (and any batch for k above the plan's k) is
 *  instead checked document by document, as nd_db_query does. The batch is
 *  checked within itself by nd_selfjoin over its distinct fingerprints
 *  (exact copies cost no pairs). One difference from one-by-one calls: a
 *  new document whose key an earlier new document of the batch has
 *  replaces that one in the store, yet the batch still matches later
 *  documents against the earlier one.
 *  In a resemblance store every document needs a sketch (else
 *  ND_EINVAL), and document i is a duplicate when a stored document or
 *  any earlier document of the batch (such a store indexes every
 *  document) is a near-duplicate as nd_db_add_doc_if_new decides; its
 *  match is the best such (highest resemblance, ties nd_match_order),
 *  and out[i].resemblance is its estimate. With ND_BATCH_ADD every
 *  document is stored. Documents are checked one by one there (band
 *  keys are point look-ups, not a merge).
 *  The tables are merged on min(tables, T) threads, T being the handle's
 *  nd_db_options.threads (by default min(online CPUs, 8)), the calling one
 *  included; each extra thread holds 48 bytes a document. Documents checked
 *  one by one are shared among T threads, one per 32 documents at most.
 *  The result does not depend on the number.
 *  @param out    n items, filled
 *  @param keys   receives the stored matches' keys: out[i].match_key points
 *                into it (or into docs[j].key for batch matches) and stays
 *                valid until keys is cleared or freed
 *  @note With ND_BATCH_ADD the writer lock is held throughout, so the
 *        stored set is the one at the start of the call. Without it, a
 *        document that another thread stores or deletes during the call
 *        may or may not be seen (each table is read as it is when the
 *        merge reaches it, or each document checked against the store as
 *        it is then, as concurrent nd_db_query calls would); every
 *        document stored throughout the call is. A document that replaces
 *        a stored key does not remove that key's old fingerprint from the
 *        set seen by later documents.
 *  @return ND_OK; ND_EINVAL (k > ND_MAX_K); errors as nd_db_add and nd_db_query. */
int nd_db_batch(nd_batch_item *out, nd_results *keys, nd_db *db, const nd_doc *docs, size_t n,
                unsigned k, unsigned flags);

/** Callback for nd_db_foreach_doc: return 0 to go on, a positive value to
 *  stop (nd_db_foreach_doc returns it), a negative one to stop with a
 *  failure (nd_db_foreach_doc returns ND_ESTOPPED).
 *  @note doc and its key are valid during the call only. */
typedef int (*nd_doc_cb)(const nd_doc *doc, void *payload);

/** Visit every stored document in key order (a consistent snapshot).
 *  In a resemblance store doc->sketch is the document's stored sketch
 *  (NULL if it was lost: nd_db_verify reports that); elsewhere NULL.
 *  @return ND_OK when every document was visited; the callback's positive
 *          value when it stopped the walk; ND_ESTOPPED when it returned a
 *          negative value; ND_EINVAL (NULL db or cb); ND_EIO; ND_ECORRUPT. */
int nd_db_foreach_doc(nd_db *db, nd_doc_cb cb, void *payload);



/* ------------------------------------------------------------------ */
/* Batch algorithms: self-join, resemblance, clustering                */
/* ------------------------------------------------------------------ */

/** Callback receiving one pair (i < j) and its distance; return 0 to go
 *  on, nonzero to stop (the callback rule at the top: a positive value is
 *  returned by the caller, a negative one becomes ND_ESTOPPED). */
typedef int (*nd_pair_cb)(size_t i, size_t j, unsigned dist, void *payload);

/** Every pair i < j of fps[0..n) with popcount(fps[i] ^ fps[j]) <= k,
 *  each reported exactly once (Manku's batch mode within one batch: sort
 *  under each table's permutation, compare within equal prefixes).
 *  Memory O(n); no I/O.
 *  @return ND_OK; ND_EINVAL (k > ND_MAX_PLAN_K); ND_ENOMEM; cb's positive
 *          value; ND_ESTOPPED (cb returned a negative value).
 *  @note Thread-safe. Pair order: as nd_selfjoin_stream's (the same call
 *        with no memory limit). */
int nd_selfjoin(const uint64_t *fps, size_t n, unsigned k, nd_pair_cb cb, void *payload);

/** Source of fingerprints for nd_selfjoin_stream: copy fingerprints
 *  start .. start + count - 1 into out[0..count). Return 0, or nonzero to
 *  stop (as a pair callback: a positive value is returned by
 *  nd_selfjoin_stream, a negative one becomes ND_ESTOPPED). */
typedef int (*nd_fp_read_cb)(uint64_t *out, size_t start, size_t count, void *payload);

/** nd_selfjoin with the fingerprints read through a callback and the sort
 *  kept within a memory budget, for batches larger than memory allows.
 *  Each table's documents are split into partitions by the top bits of
 *  their permuted fingerprint (bits inside the table's prefix, so a pair
 *  the table can report lies in one partition), each sorted and joined
 *  alone. Every pair within k is reported exactly once, in the same order
 *  for any budget: table by table, within a table by permuted prefix
 *  (pairs inside one prefix run in their sorted order).
 *  @param n       fingerprints in the source (indices 0 .. n-1)
 *  @param memory  bytes for the sort buffers (32 a fingerprint in the
 *                 largest partition); 0 = no limit (one partition, the
 *                 whole batch). A run of fingerprints sharing their top
 *                 min(prefix, 16) permuted bits is never split, so a batch
 *                 of many equal fingerprints can exceed the budget.
 *                 Besides it: 32 KB of read buffer, and 256 KB of counts
 *                 when the batch is partitioned.
 *  @param read    called with start 0, 4096, 8192, ... in order for each
 *                 pass over the source: one pass per table when everything
 *                 fits, else 1 + the number of partitions per table
 *  @return ND_OK; ND_EINVAL (k > ND_MAX_PLAN_K, or NULL read or cb);
 *          ND_ELIMIT (n >= 2^32); ND_ENOMEM; read's or cb's positive
 *          value; ND_ESTOPPED (one of them returned a negative value).
 *  @note Thread-safe. No I/O besides read. */
int nd_selfjoin_stream(size_t n, unsigned k, size_t memory, nd_fp_read_cb read,
                       void *read_payload, nd_pair_cb cb, void *payload);

/** The resemblance sketch (Broder's min-hash, in the one-permutation form
 *  filled by rounds: Dahlgaard, Knudsen, Thorup, "Fast similarity
 *  sketching", FOCS 2017). Measured in bench/README.md ("Near-duplicate
 *  quality"): on real text of 30 to 5,000 words it estimates the word
 *  3-shingle resemblance well enough to decide at 0.85 with a standard
 *  error of about 0.025, and its band keys catch pairs of resemblance 0.9
 *  with probability 0.9988.
 *
 *  Bins: each distinct feature hash h goes to bin h mod 256 and the bin
 *  keeps the least h / 256 (round 0). While a bin is empty, round r = 1,
 *  2, ... hashes every feature again, h_r = mix64(h XOR r * 0x9e3779b97f4a7c15)
 *  (mix64: splitmix64's finaliser), into bin h_r mod 256 with value
 *  h_r / 256, and each bin still empty takes the round's least value; the
 *  value of a bin filled in round r > 0 is mix64(v XOR r << 58). Every bin
 *  is therefore the minimum of one hash over the whole set, so two sets
 *  agree on a bin with probability J, bins nearly independent, however
 *  short the texts. A bin keeps the low ND_SKETCH_BIN_BITS bits of its
 *  value (b-bit min-hash, Li and Koenig): two sets agree on a bin with
 *  probability J + (1 - J) / 16, which the estimate corrects for.
 *
 *  Band keys (locality-sensitive hashing): band b (0..11) is bins 8b ..
 *  8b + 7 with their whole 64-bit values, written as 64 little-endian
 *  bytes and hashed by nd_feature_hash; the key is the hash's top 32 bits.
 *  Two sets of resemblance J share some band with probability about
 *  1 - (1 - J^8)^12: 0.9988 at J = 0.9, 0.89 at 0.8, 0.16 at 0.5.
 *
 *  An empty set (a text with no feature) has every bin 0xf and every band
 *  key 0: all empty texts are alike. Sketches are stable: the same set
 *  gives the same sketch on every machine and version (ND_SKETCH_VERSION;
 *  golden vectors in tests/test_sketch.c). */
#define ND_SKETCH_BINS 256u      /**< bins */
#define ND_SKETCH_BIN_BITS 4u    /**< bits kept a bin */
#define ND_SKETCH_BYTES 128u     /**< ND_SKETCH_BINS * ND_SKETCH_BIN_BITS / 8 */
#define ND_SKETCH_BANDS 12u      /**< band keys */
#define ND_SKETCH_ROWS 8u        /**< bins a band */

/** A min-hash sketch of a set of 64-bit feature hashes and its band keys
 *  (176 bytes). */
typedef struct nd_sketch {
    uint8_t bin[ND_SKETCH_BYTES];    /**< bin 2i in the low 4 bits of byte i,
                                          bin 2i + 1 in the high 4 bits */
    uint32_t band[ND_SKETCH_BANDS];  /**< band keys */
} nd_sketch;

/** Caller-owned builder: nd_sketch_init once, then for each set
 *  nd_sketch_begin, nd_sketch_add for every feature hash (repeats are
 *  harmless), nd_sketch_finish; nd_sketch_dispose at the end. The builder
 *  keeps the hashes it was given while some bin is still empty (the
 *  rounds need them): a list of 4,096 hashes (32 KB) at first, grown
 *  only when over half of it is distinct (so at most about twice the
 *  set's distinct hashes), and none kept once all 256 bins are filled
 *  (on average after 1,600 distinct features). */
typedef struct nd_sketch_builder {
    uint64_t min[ND_SKETCH_BINS]; /* private */
    uint64_t *held;               /* private */
    size_t n_held, cap_held;      /* private */
    unsigned empty;               /* private: bins no hash reached yet */
    int oom;                      /* private */
} nd_sketch_builder;

/** Initialise a builder (owns no memory yet). */
void nd_sketch_init(nd_sketch_builder *b);
/** Start a new set (keeps the builder's memory for reuse). */
void nd_sketch_begin(nd_sketch_builder *b);
/** Add a feature hash to the set. */
void nd_sketch_add(nd_sketch_builder *b, uint64_t hash);
/** The sketch of the set added since nd_sketch_begin.
 *  @return ND_OK; ND_ENOMEM (the builder could not keep the hashes the
 *          rounds need; *out is then unset). Either way the builder may
 *          begin a new set. */
int nd_sketch_finish(nd_sketch *out, nd_sketch_builder *b);
/** Free the builder's memory; accepts a builder that was only
 *  initialised, and NULL. */
void nd_sketch_dispose(nd_sketch_builder *b);

/** Estimated resemblance of the sets behind two sketches, in [0, 1]:
 *  (E - 1/16) / (1 - 1/16) with E the share of equal bins, 0 when below.
 *  Standard error about 0.02-0.03 near J = 0.85. */
double nd_sketch_resemblance(const nd_sketch *a, const nd_sketch *b);

/** The sketch of a set given whole (a convenience over the builder).
 *  @return ND_OK; ND_EINVAL (NULL hashes with n > 0); ND_ENOMEM. */
int nd_sketch_of(nd_sketch *out, const uint64_t *hashes, size_t n);

/** Exact resemblance (Jaccard) and containment |A n B| / |A| of two sorted
 *  arrays of distinct hashes. Both empty: 1.0. */
double nd_resemblance(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);
double nd_containment(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);

/** The sorted distinct word w-shingle hashes of a text (the features of
 *  ND_FEATURES_SHINGLES with n = w under otherwise default options).
 *  @param out  malloc'd array (free() it); NULL when *out_n is 0
 *  @return ND_OK; ND_EINVAL; ND_ELIMIT; ND_ENOMEM. */
int nd_shingle_set(uint64_t **out, size_t *out_n, const char *text, size_t len, unsigned w);

/** Greedy clustering with the representative rule (near-duplication is
 *  not transitive): documents are taken in priority order; one not yet
 *  assigned becomes a representative and takes every unassigned neighbour
 *  (an edge of the graph). Every removed document is a neighbour of its
 *  representative.
 *  @param order  the n documents in priority order (a permutation of 0..n-1)
 *  @param adj_start, adj  neighbours in CSR form: neighbours of i are
 *                adj[adj_start[i] .. adj_start[i+1])
 *  @param out_rep  out_rep[i] = representative of i (i itself when kept)
 *  @return ND_OK; ND_EINVAL if order is not a permutation. */
int nd_cluster_greedy(uint32_t *out_rep, const uint32_t *order, size_t n,
                      const size_t *adj_start, const uint32_t *adj);

/** One search result for nd_cluster. */
typedef struct nd_cluster_item {
    uint32_t query; /**< query id: the items of a query are contiguous */
    uint32_t rank;  /**< position in the query's results, 1 = top */
    uint32_t doc;   /**< index into the caller's document table: the same
                         document in several queries has the same index */
    uint64_t fp;    /**< the document's fingerprint */
    double score;   /**< authority (higher is better); not NaN */
} nd_cluster_item;

/** A tier of queries sharing one distance: queries of popularity rank
 *  (previous tier's last_query, last_query] use k. */
typedef struct nd_cluster_tier {
    uint32_t last_query; /**< last query rank of the tier (1 = most popular) */
    unsigned k;          /**< distance, 0..64 */
} nd_cluster_tier;

#define ND_CLUSTER_OPTIONS_VERSION 1u

/** Options of nd_cluster. Zero fields mean the default. */
typedef struct nd_cluster_options {
    unsigned version;              /**< ND_CLUSTER_OPTIONS_VERSION */
    size_t top;                    /**< results per query considered (M); 0 = all */
    const nd_cluster_tier *tiers;  /**< last_query strictly ascending; the
                                        last tier also applies to every later
                                        query; NULL (n_tiers 0) = k 3 for all */
    size_t n_tiers;
} nd_cluster_options;

#define ND_CLUSTER_OPTIONS_INIT { ND_CLUSTER_OPTIONS_VERSION, 0, NULL, 0 }

/** Initialise options to defaults. @return ND_OK or ND_EINVAL (NULL,
 *  unknown version). */
int nd_cluster_options_init(nd_cluster_options *opts, unsigned version);

/** Callback receiving one removal: document removed of query query lies
 *  dist bits from kept, its representative. Return 0 to go on, nonzero to
 *  stop (a positive value is returned by nd_cluster, a negative one
 *  becomes ND_ESTOPPED). */
typedef int (*nd_cluster_cb)(uint32_t query, uint32_t removed, uint32_t kept,
                             unsigned dist, void *payload);

/** Query-biased clustering of search results (Pi et al.): collapse
 *  near-duplicate results, the most popular queries first.
 *  Contract of items: the items of a query are contiguous, and queries come
 *  in popularity order (the first query has query rank 1); a document
 *  appears at most once per query. Per query, in order:
 *   1. drop the items whose document an earlier query removed;
 *   2. take the top M remaining by rank (ties: input order);
 *   3. order them by score descending (ties: better rank, then input order);
 *   4. greedily: the first not yet assigned is kept, and every unassigned
 *      one within k bits (nd_hamming, k of the query's tier) is removed with
 *      it as representative, reported through cb in that order.
 *  So every removed document is within k of its kept one and scores no
 *  higher (the representative rule), and a removed document is gone for
 *  every later query. Kept documents may still be removed by a later query.
 *  @param o  NULL = defaults (all results, k 3)
 *  @return ND_OK; ND_EINVAL (NULL items with n > 0, NULL cb, bad version,
 *          tiers not ascending or k > 64, a query's items not contiguous,
 *          a document twice in a query, a NaN score); ND_ELIMIT (n >= 2^32);
 *          ND_ENOMEM; cb's positive value; ND_ESTOPPED (cb returned a
 *          negative value).
 *  @note Thread-safe; memory O(n); no I/O. */
int nd_cluster(const nd_cluster_item *items, size_t n, const nd_cluster_options *o,
               nd_cluster_cb cb, void *payload);

/* ------------------------------------------------------------------ */
/* Corpus dedupe                                                       */
/* ------------------------------------------------------------------ */

/** The near-duplicates of a corpus, without a database: feed every
 *  document (nd_dedupe_add_text, _add_fp, _add_signature), then read the
 *  results through callbacks (nd_dedupe_pairs, _clusters, _roles, _docs).
 *
 *  A pair is two documents whose fingerprints lie within k bits and whose
 *  min-hash sketches (of the same features as the fingerprint) estimate a
 *  resemblance of at least min_resemblance, or, with min_containment C > 0,
 *  a containment |A n B| / min(|A|, |B|) of at least C. Candidates come
 *  from the self-join of the fingerprints (every pair within min(k, 8)
 *  bits) and from min-hash banding (16 bands of 8 bins; 32 of 4 when C > 0),
 *  which reaches k above 8. Documents without text (nd_dedupe_add_fp) pair
 *  by fingerprint distance alone, within min(k, 8) bits.
 *
 *  Memory: 8 bytes a document (16 with ND_DEDUPE_KEEP_SCORE|LONGEST); keys,
 *  scores and sketches (260 bytes a text) go to unlinked files in the
 *  scratch directory, read back where needed. The sorts stay within the
 *  memory budget (32 bytes a document sorted at once; a larger sort is
 *  split into partitions, same results); banding takes 16 bytes a document;
 *  clustering about 20 a document and 20 a pair. No text is kept.
 *
 *  A handle is used by one thread at a time; separate handles are
 *  independent. The library never reads an environment variable for it. */
typedef struct nd_dedupe nd_dedupe;

/** Which document of a cluster stays. Ties: input order. */
typedef enum nd_dedupe_keep {
    ND_DEDUPE_KEEP_FIRST = 0,   /**< the first added (default) */
    ND_DEDUPE_KEEP_SCORE = 1,   /**< the highest score */
    ND_DEDUPE_KEEP_LONGEST = 2  /**< the longest text (fingerprint-only
                                     documents count as length 0) */
} nd_dedupe_keep;

/** Flags of nd_dedupe_options. */
/** Pairs by fingerprint distance alone: no sketch confirmation and no
 *  banding, so k is at most 8 (default 3); min_resemblance and
 *  min_containment decide nothing. Sketches are still computed from
 *  texts, and pairs still carry their estimated resemblance (and
 *  containment, when min_containment > 0). */
#define ND_DEDUPE_SIMHASH_ONLY 0x1u

#define ND_DEDUPE_OPTIONS_VERSION 1u

/** Defaults of nd_dedupe_options, measured (bench/README.md, "Dedupe
 *  quality"): with texts, k = 24 and resemblance 0.85. */
#define ND_DEDUPE_DEFAULT_K 24u
#define ND_DEDUPE_DEFAULT_SIMHASH_K 3u
#define ND_DEDUPE_DEFAULT_MIN_RESEMBLANCE 0.85
#define ND_DEDUPE_DEFAULT_MEMORY (256ull << 20)
/** Smallest memory budget accepted (forces many partitions: for tests). */
#define ND_DEDUPE_MIN_MEMORY 1024u

/** Options of nd_dedupe_new. Zero fields mean the default. */
typedef struct nd_dedupe_options {
    unsigned version;         /**< ND_DEDUPE_OPTIONS_VERSION */
    unsigned flags;           /**< ND_DEDUPE_* */
    unsigned k;               /**< largest distance in bits (0..64), used
                                   when has_k; default ND_DEDUPE_DEFAULT_K,
                                   or ND_DEDUPE_DEFAULT_SIMHASH_K when no
                                   document has text or with
                                   ND_DEDUPE_SIMHASH_ONLY. Above 8 needs
                                   texts. */
    int has_k;                /**< nonzero: k as given (0 included) */
    double min_resemblance;   /**< in (0, 1]; 0 = 0.85 (see
                                   ND_DEDUPE_SIMHASH_ONLY for none) */
    double min_containment;   /**< in [0, 1]; 0 = off */
    nd_dedupe_keep keep;      /**< ND_DEDUPE_KEEP_*; 0 = FIRST */
    uint64_t memory;          /**< bytes for the sorts, at least
                                   ND_DEDUPE_MIN_MEMORY; 0 = 256 MiB */
    const nd_fp_options *fp;  /**< features of texts; NULL = defaults.
                                   Copied (stop words included). */
    const char *scratch_dir;  /**< directory of the scratch files; NULL =
                                   "/tmp". Copied. */
} nd_dedupe_options;

#define ND_DEDUPE_OPTIONS_INIT \
    { ND_DEDUPE_OPTIONS_VERSION, 0, 0, 0, 0.0, 0.0, ND_DEDUPE_KEEP_FIRST, 0, NULL, NULL }

/** Initialise options to defaults. @return ND_OK or ND_EINVAL (version). */
int nd_dedupe_options_init(nd_dedupe_options *opts, unsigned version);

/** A new, empty dedupe.
 *  @param opts  NULL = all defaults
 *  @return ND_OK; ND_EINVAL (bad version, flags, k above 64, k above 8
 *          with ND_DEDUPE_SIMHASH_ONLY, a threshold outside [0, 1] or NaN,
 *          unknown keep, memory below ND_DEDUPE_MIN_MEMORY, bad fp
 *          options); ND_EIO (the scratch files cannot be created in the
 *          scratch directory); ND_ENOMEM.
 *  @note Free with nd_dedupe_free. */
int nd_dedupe_new(nd_dedupe **out, const nd_dedupe_options *opts);

/** Free the handle and its scratch files; accepts NULL. */
void nd_dedupe_free(nd_dedupe *d);

/** What the dedupe knows of one document, computed from one pass over its
 *  features: what nd_dedupe_add_text stores. Computed on one machine and
 *  added on another (nd_dedupe_add_signature), it gives the same results
 *  when both handles have the same fingerprint options and thresholds. */
typedef struct nd_signature {
    uint64_t fp;        /**< the simhash fingerprint (as nd_fingerprint) */
    nd_sketch sketch;   /**< min-hash sketch of the same features */
    uint32_t distinct;  /**< distinct features (saturated at 2^32 - 2),
                             counted only when min_containment > 0, else 0 */
    uint64_t length;    /**< bytes of the text (ND_DEDUPE_KEEP_LONGEST) */
} nd_signature;

/** The signature of a text under d's options, without adding it.
 *  @param flags  ND_FP_HTML: the text is HTML (besides the options' flags)
 *  @return as nd_fingerprint; ND_EINVAL for unknown flags.
 *  @note Any time, also after results were read. */
int nd_dedupe_sign(nd_signature *out, nd_dedupe *d, const char *text, size_t len,
                   unsigned flags);

/** Add a document with text: its fingerprint and sketch come from one
 *  tokenisation (nd_dedupe_sign with no flags, then add_signature).
 *  @param key    bytes identifying the document in the results (copied;
 *                any length, may repeat)
 *  @param score  its authority: ND_DEDUPE_KEEP_SCORE keeps the highest;
 *                handed back by nd_dedupe_docs
 *  @return ND_OK; as nd_dedupe_sign; ND_EINVAL (NULL key with key_len > 0,
 *          or results were already read: the corpus is closed); ND_ELIMIT
 *          (2^32 - 1 documents); ND_EIO or ND_ENOSPC (a scratch file);
 *          ND_ENOMEM. After an error other than ND_EINVAL and ND_ELIMIT,
 *          the handle only accepts nd_dedupe_free. */
int nd_dedupe_add_text(nd_dedupe *d, const char *key, size_t key_len, const char *text,
                       size_t len, double score);

/** Add a document known by its fingerprint only (no sketch: it pairs by
 *  distance alone, within min(k, 8) bits). @return as nd_dedupe_add_text. */
int nd_dedupe_add_fp(nd_dedupe *d, const char *key, size_t key_len, uint64_t fp,
                     double score);

/** Add a document by a signature from nd_dedupe_sign (of this handle or
 *  one with the same options). @return as nd_dedupe_add_text. */
int nd_dedupe_add_signature(nd_dedupe *d, const char *key, size_t key_len,
                            const nd_signature *sig, double score);

/** Returned by the nd_dedupe walks when a callback returned nonzero:
 *  positive, so it never equals an nd_error. */
#define ND_DEDUPE_STOPPED 1

/** One pair of near-duplicate documents. */
typedef struct nd_dedupe_pair {
    uint64_t a, b;        /**< the documents, by input order (0 = first
                               added), a < b */
    const char *key_a;    /**< a's key (a NUL follows) */
    size_t key_a_len;
    const char *key_b;
    size_t key_b_len;
    unsigned dist;        /**< bits between their fingerprints */
    double resemblance;   /**< estimated from the sketches; -1 when a
                               document of the pair has none (added by
                               nd_dedupe_add_fp) */
    double containment;   /**< estimated when min_containment > 0 and both
                               have sketches; else -1 */
    int by_containment;   /**< 1: only the containment made it a pair */
} nd_dedupe_pair;

/** Receives one pair; its strings live until the callback returns.
 *  Return 0 to go on, nonzero to stop. */
typedef int (*nd_dedupe_pair_cb)(const nd_dedupe_pair *pair, void *payload);

/** Every pair of the corpus, each once, streamed as found: the self-join's
 *  (table by table) then banding's. The first result call closes the
 *  corpus (no more adds).
 *  @return ND_OK; ND_DEDUPE_STOPPED (cb returned nonzero); ND_EINVAL (NULL
 *          cb, or k above 8 given while no document had text); ND_EIO;
 *          ND_ENOMEM.
 *  @note Memory as the header of this section says; the pairs themselves
 *        are not kept. */
int nd_dedupe_pairs(nd_dedupe *d, nd_dedupe_pair_cb cb, void *payload);

/** Role of a document in the clusters. */
typedef enum nd_dedupe_role {
    ND_DEDUPE_ROLE_KEEP = 1, /**< kept: the first of its cluster in keep
                                  order, or alone */
    ND_DEDUPE_ROLE_DROP = 2  /**< a near-duplicate of its cluster's kept one */
} nd_dedupe_role;

/** One document in the clusters. */
typedef struct nd_dedupe_member {
    uint64_t cluster;     /**< 1, 2, ... in keep order of the kept documents,
                               counting clusters of two or more only; 0
                               for a document alone */
    nd_dedupe_role role;
    uint64_t doc;         /**< the document, by input order */
    const char *key;      /**< its key (a NUL follows) */
    size_t key_len;
    uint64_t kept;        /**< the kept document of its cluster (doc itself
                               when kept) */
    unsigned dist;        /**< bits to the kept document's fingerprint */
} nd_dedupe_member;

/** Receives one member; its key lives until the callback returns.
 *  Return 0 to go on, nonzero to stop. */
typedef int (*nd_dedupe_member_cb)(const nd_dedupe_member *m, void *payload);

/** The clusters of two or more documents (representative rule, as
 *  nd_cluster_greedy: documents are taken in keep order; one not yet
 *  assigned is kept and takes every unassigned document it forms a pair
 *  with, so every dropped document is a pair with its kept one). Each
 *  cluster comes as its kept member then its dropped ones in input order;
 *  clusters in keep order of their kept documents. Identical documents
 *  (same fingerprint and sketch) are clustered as one.
 *  The clustering is computed by the first of nd_dedupe_clusters and
 *  nd_dedupe_roles and kept for the other (4 bytes a document and 16 a
 *  group of identical ones).
 *  @return as nd_dedupe_pairs. */
int nd_dedupe_clusters(nd_dedupe *d, nd_dedupe_member_cb cb, void *payload);

/** Every document in input order with its role in the clusters (the keys
 *  to keep and to drop). @return as nd_dedupe_pairs. */
int nd_dedupe_roles(nd_dedupe *d, nd_dedupe_member_cb cb, void *payload);

/** Receives up to a batch of documents in input order: key, fingerprint,
 *  score as added, time 0, and the sketch of each document added with
 *  text (else NULL), so that a resemblance store takes them as they are.
 *  The callback may change the entries (their time, say); the keys and
 *  sketches live until it returns. Return 0 to go on. */
typedef int (*nd_dedupe_docs_cb)(nd_doc *docs, size_t n, void *payload);

/** Every document added, in batches of at most batch (0 = 65536): to load
 *  the corpus into a database (nd_loader_add takes such a batch).
 *  @return as nd_dedupe_pairs. */
int nd_dedupe_docs(nd_dedupe *d, size_t batch, nd_dedupe_docs_cb cb, void *payload);

/** Counts of a dedupe. */
typedef struct nd_dedupe_stats {
    uint64_t documents;      /**< added */
    uint64_t texts;          /**< added with a sketch */
    uint64_t distinct;       /**< groups of identical documents, once
                                  clustered; else 0 */
    uint64_t pairs;          /**< pairs found by the last walk that joined
                                  (nd_dedupe_pairs, or the clustering:
                                  there, pairs of distinct documents) */
    uint64_t by_containment; /**< of those, pairs by containment only */
    unsigned k;              /**< the distance in effect (the default
                                  resolved once the corpus is closed) */
} nd_dedupe_stats;

/** The counts so far. @return ND_OK; ND_EINVAL (NULL). */
int nd_dedupe_stats_get(nd_dedupe_stats *out, const nd_dedupe *d);

/** Where a result walk's long work is (nd_dedupe_set_progress): the
 *  phases of a walk that joins, in order: "grouping" (documents sorted
 *  into groups of identical ones; clusters and roles), "self-join" and
 *  "banding" (fingerprints and sketches read by the joins' passes), and
 *  "clustering" (the groups clustered; clusters and roles). */
typedef struct nd_dedupe_progress {
    const char *phase;  /**< one of the names above */
    const char *unit;   /**< what done counts: "documents", "fingerprints",
                             "sketches" or "groups" */
    uint64_t done;      /**< work of the phase done */
    uint64_t total;     /**< the phase's work, estimated before it starts
                             (done may end below or, seldom, above it); 0
                             when unknown */
} nd_dedupe_progress;

typedef void (*nd_dedupe_progress_cb)(const nd_dedupe_progress *p, void *payload);

/** Have the result walks that join (nd_dedupe_pairs, and the first of
 *  nd_dedupe_clusters or nd_dedupe_roles) call cb as they go: at the start
 *  (done 0) and end of each phase, and every few thousand fingerprints
 *  between, on the calling thread. cb may not call functions of d. NULL
 *  cb: no calls (the default). The library prints nothing: showing it is
 *  the caller's (the neardup tool draws a progress line).
 *  @return ND_OK; ND_EINVAL (NULL d). */
int nd_dedupe_set_progress(nd_dedupe *d, nd_dedupe_progress_cb cb, void *payload);

/* ------------------------------------------------------------------ */
/* Sharded stores                                                      */
/* ------------------------------------------------------------------ */

/** A sharded store: S ordinary databases DIR/shard-000 .. DIR/shard-(S-1)
 *  (three digits at least) and a manifest DIR/NEARDUP-SHARDS recording the
 *  shard count, the placement rule, k, tables, expected documents, the
 *  fingerprint configuration and the format versions (its text format is
 *  described in engine/shards/shard_manifest.h). Every shard has the same plan
 *  and fingerprint configuration, so a check against the store is the
 *  union of the same check against each shard; a document lives in shard
 *  FNV-1a-64(key) mod S (nd_shards_place). Each shard is a complete
 *  database: it verifies, backs up and compacts alone. The manifest is
 *  written last, so a directory without one (an unfinished creation) is
 *  refused.
 *
 *  A handle may open a part of the shards only (options part and parts:
 *  one process of a job of several); its functions then see those shards
 *  only. A handle is used by one thread at a time; the nd_db of a shard
 *  (nd_shards_db) serves many, as any nd_db. */
typedef struct nd_shards nd_shards;

#define ND_SHARDS_MAX 4096u                      /**< most shards in a store */
#define ND_SHARDS_MANIFEST_NAME "NEARDUP-SHARDS" /**< the manifest's file name */
#define ND_SHARDS_MANIFEST_MAX 2048u             /**< largest manifest text */
#define ND_SHARDS_ASSIGN_RULE "fnv1a64-mod"      /**< the placement rule's name */

/** Flags of nd_shards_options. */
#define ND_SHARDS_CREATE 0x1u        /**< create the store; DIR must not exist */
#define ND_SHARDS_NO_MANIFEST 0x2u   /**< with CREATE: write the manifest only at
                                          nd_shards_finish (a store being filled,
                                          which no one may open before) */
#define ND_SHARDS_MANIFEST_ONLY 0x4u /**< open no shard: the manifest alone (with
                                          CREATE, each shard is created and closed
                                          in turn) */

/** 2: min_resemblance appended (version 1 is still accepted). */
#define ND_SHARDS_OPTIONS_VERSION 2u

/** Options of nd_shards_open. Zero means default; (create) fields are
 *  used only with ND_SHARDS_CREATE. */
typedef struct nd_shards_options {
    unsigned version;         /**< ND_SHARDS_OPTIONS_VERSION */
    unsigned flags;           /**< ND_SHARDS_* */
    unsigned db_flags;        /**< ND_DB_READONLY, _SYNC, _NO_BACKGROUND, _MMAP:
                                   how every shard is opened */
    unsigned shards;          /**< (create) S, 1..ND_SHARDS_MAX */
    unsigned k;               /**< (create) design distance, used when has_k;
                                   default 3 */
    int has_k;                /**< (create) nonzero: k as given (0 included) */
    unsigned tables;          /**< (create) t; 0 = the planner's choice */
    uint64_t expected_docs;   /**< (create) of the whole store (each shard's
                                   planner gets its share); default 100M */
    const nd_fp_options *fp;  /**< (create) fingerprint configuration */
    unsigned part, parts;     /**< open only the shards s with s % parts ==
                                   part; parts 0 = every shard */
    const char *manifest;     /**< (open) the manifest's text (from
                                   nd_shards_manifest), read instead of DIR's:
                                   the copy a coordinator sent */
    unsigned threads;         /**< nd_db_options.threads of every shard (0:
                                   the library's default) */
    double min_resemblance;   /**< (create) (version 2) every shard a
                                   resemblance store of this threshold (see
                                   "Resemblance stores"); 0 = fingerprint
                                   only (unlike nd_db_options of version
                                   4; `neardup shard init` passes
                                   ND_DB_DEFAULT_MIN_RESEMBLANCE unless
                                   told --fingerprint-only) */
} nd_shards_options;

#define ND_SHARDS_OPTIONS_INIT \
    { ND_SHARDS_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, 0, 0.0 }

/** Initialise options to defaults. @return ND_OK or ND_EINVAL (version). */
int nd_shards_options_init(nd_shards_options *opts, unsigned version);

/** Open (or create) the sharded store in directory dir, and its shards
 *  (those of the part), each checked against the manifest.
 *  @return ND_OK; ND_EINVAL (bad options: version, flags, shards, k,
 *          part >= parts, CREATE with a part or a manifest text);
 *          ND_EEXIST (CREATE: dir exists); ND_ENOTFOUND (no manifest: not
 *          a sharded store, or a shard missing); ND_EVERSION (a manifest
 *          version or placement rule this build does not know);
 *          ND_ECORRUPT (a manifest that does not parse); ND_EMISMATCH (a
 *          shard whose plan or fingerprint configuration differs from the
 *          manifest's); errors of nd_open; ND_EIO; ND_ENOMEM. Messages
 *          name the manifest's line or the shard's path. After a failed
 *          CREATE, dir is left without a manifest.
 *  @note Free with nd_shards_close. */
int nd_shards_open(nd_shards **out, const char *dir, const nd_shards_options *opts);

/** Close every shard, then write the manifest of a store created with
 *  ND_SHARDS_NO_MANIFEST: from now on it opens. Afterwards the handle only
 *  accepts nd_shards_close and the functions that read the manifest.
 *  @return ND_OK; ND_EINVAL (not such a store, or finished); errors of
 *          nd_close; ND_EIO; ND_ENOSPC. */
int nd_shards_finish(nd_shards *s);

/** Close every open shard and free the handle; accepts NULL.
 *  @return ND_OK, or the first shard's error (the handle is freed). */
int nd_shards_close(nd_shards *s);

/** What the manifest records. */
typedef struct nd_shards_info {
    unsigned shards;          /**< S */
    unsigned k;               /**< design distance of every shard */
    unsigned tables;          /**< t of every shard */
    uint64_t expected_docs;   /**< of the whole store */
    char fingerprint[256];    /**< nd_fp_config_string of every shard */
    unsigned format;          /**< ND_FORMAT_VERSION at creation */
    unsigned fp_version;      /**< fingerprint function version of every shard
                                   (that of fingerprint) */
} nd_shards_info;

/** The manifest's record. @return ND_OK; ND_EINVAL (NULL). */
int nd_shards_info_get(nd_shards_info *out, const nd_shards *s);

/** The shard of a key: FNV-1a-64 of its bytes mod S (the rule never
 *  changes under its name, ND_SHARDS_ASSIGN_RULE). */
unsigned nd_shards_place(const nd_shards *s, const void *key, size_t key_len);

/** "DIR/shard-NNN" of shard into out (cap bytes, NUL-terminated).
 *  @return ND_OK; ND_EINVAL (shard >= S); ND_ELIMIT (cap too small). */
int nd_shards_path(char *out, size_t cap, const nd_shards *s, unsigned shard);

/** The open database of shard, or NULL when this handle did not open it
 *  (another part's, ND_SHARDS_MANIFEST_ONLY, finished, or shard >= S).
 *  @note Valid until nd_shards_finish or nd_shards_close. */
nd_db *nd_shards_db(const nd_shards *s, unsigned shard);

/** The manifest's text into out (cap bytes, at most
 *  ND_SHARDS_MANIFEST_MAX), for nd_shards_options.manifest elsewhere.
 *  @return ND_OK; ND_ELIMIT (cap too small). */
int nd_shards_manifest(char *out, size_t cap, const nd_shards *s);

/** Each document's closest stored match over the shards this handle
 *  opened, within k: out[i].dup, dist, match_fp, match_key (into keys)
 *  and match_index ND_BATCH_STORED; dup 0 when none. Ties: smaller
 *  fingerprint, then smaller key, as nd_batch. The batch is not checked
 *  against itself (nd_shards_decide does that). Each shard is read by
 *  nd_batch's merge; documents it answers with a batch match go round
 *  again, the last few by nd_query, so every one gets its stored answer.
 *  @param keys  cleared, then receives the matches' keys: valid until it
 *               is cleared or freed
 *  @return ND_OK; ND_EINVAL (NULL, k > ND_MAX_K); errors of nd_batch and
 *          nd_query, the message naming the shard.
 *  @note Shards are read as concurrent nd_batch calls read a database. */
int nd_shards_check(nd_batch_item *out, nd_results *keys, nd_shards *s, const nd_doc *docs,
                    size_t n, unsigned k);

/** Decide a batch as nd_batch does on one database, given in items each
 *  document's closest stored match (nd_shards_check's, or the closest of
 *  the answers of several parts): in input order, document j is a
 *  duplicate when its stored match or an earlier *new* document lies
 *  within k, the closest winning (ties: smaller fingerprint, then smaller
 *  key). A batch match gets match_index i and match_key docs[i].key.
 *  Stored answers beyond k are dropped.
 *  @return ND_OK; ND_EINVAL (NULL, k > ND_MAX_K); ND_ELIMIT (n >= 2^32);
 *          ND_ENOMEM. @note Thread-safe; no I/O. */
int nd_shards_decide(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k);

/** nd_shards_decide for a store of resemblance shards, whose threshold
 *  min_resemblance (nd_db_min_resemblance of any of its shards) it needs:
 *  given in items each document's best stored near-duplicate
 *  (nd_shards_check's, or the best of several parts' answers: highest
 *  resemblance, then nd_match_order), decide in input order as
 *  nd_db_batch does in a resemblance store: an earlier document of the
 *  batch (any: such a store stores every document) that shares a band key
 *  with document j or lies within k, of estimated resemblance >=
 *  min_resemblance, replaces j's match when it is better (match_index
 *  its index, match_key its key, resemblance its estimate). Every
 *  document needs its sketch. (nd_shards_batch calls it in such a store;
 *  nd_shards_add then stores every document.)
 *  @return ND_OK; ND_EINVAL (NULL, k > ND_MAX_K, min_resemblance outside
 *          (0, 1], a document without a sketch); ND_ELIMIT (n >= 2^32);
 *          ND_ENOMEM. @note Thread-safe; no I/O. */
int nd_shards_decide_similar(nd_batch_item *items, const nd_doc *docs, size_t n, unsigned k,
                             double min_resemblance);

/** Store the documents items call new (dup 0) in their shards, among those
 *  this handle opened (one atomic write a shard; nd_import from 100000
 *  documents), and refresh to docs[i].time the last-seen time of a stored
 *  match with the document's own key (as nd_batch with ND_BATCH_ADD).
 *  @return ND_OK; ND_EINVAL; errors of nd_add_many, nd_import, nd_get and
 *          nd_add, the message naming the shard. Shards are written in
 *          order, each atomically: after a failure the shards before the
 *          one named hold their new documents. */
int nd_shards_add(nd_shards *s, const nd_doc *docs, const nd_batch_item *items, size_t n);

/** nd_batch over a whole sharded store (every shard open in this handle):
 *  nd_shards_check, nd_shards_decide and, with ND_BATCH_ADD,
 *  nd_shards_add. Same answers as nd_batch on one database holding the
 *  store's documents.
 *  @note Unlike nd_batch, the check and the store are not one atomic step
 *        across the shards: another writer may store in between.
 *  @return as the three; ND_EINVAL when a shard is not open here. */
int nd_shards_batch(nd_batch_item *out, nd_results *keys, nd_shards *s, const nd_doc *docs,
                    size_t n, unsigned k, unsigned flags);

/** A bulk load into a sharded store: one nd_loader per shard, each
 *  document handed to the loader of its key's shard (see nd_loader for
 *  chunks, spills and memory: every shard holds a chunk). Used by one
 *  thread at a time. */
typedef struct nd_shards_loader nd_shards_loader;

/** Start a load into every shard of s (all must be open here).
 *  @param chunk_docs  documents a shard's loader holds before it sorts and
 *                     spills them; 0 = nd_import_step's largest shared
 *                     among the shards, at least 100000
 *  @return ND_OK; ND_EINVAL (a shard not open here); errors of
 *          nd_loader_new, naming the shard. */
int nd_shards_loader_new(nd_shards_loader **out, nd_shards *s, size_t chunk_docs);

/** The documents a shard's loader holds per chunk (chunk_docs resolved). */
size_t nd_shards_loader_chunk(const nd_shards_loader *l);

/** Add n documents, each to its shard's loader (keys copied).
 *  @return ND_OK; errors of nd_loader_add, naming the shard. */
int nd_shards_loader_add(nd_shards_loader *l, const nd_doc *docs, size_t n);

/** Make shard's part of the load visible (nd_loader_commit). Call it for
 *  every shard: each commit is atomic, the set is not, so after a failure
 *  (or a crash) the shards committed hold the load and the others none
 *  of it.
 *  @param out_new  documents new to the shard (may be NULL)
 *  @return ND_OK; ND_EINVAL (shard >= S, or committed twice); errors of
 *          nd_loader_commit, naming the shard. */
int nd_shards_loader_commit(nd_shards_loader *l, unsigned shard, uint64_t *out_new);

/** Free the loaders (what was not committed is dropped); before
 *  nd_shards_close or nd_shards_finish. Accepts NULL. */
void nd_shards_loader_free(nd_shards_loader *l);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif
#endif /* NEARDUP_H */
