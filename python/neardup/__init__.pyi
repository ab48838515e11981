"""Type stubs and contracts of the neardup package (a CPython extension
over the C library's include/neardup.h; see that header for the engine's
own contracts, which every call below inherits).

Conventions
-----------
* Fingerprints are ints in [0, 2**64) (anything with __index__ is taken).
* Keys go in as ``str`` or bytes-like; a str is stored as its UTF-8, with
  lone surrogates U+DC80..U+DCFF standing for the bytes they escape
  (Python's "surrogateescape", as ``os.fsencode``). Keys come back as
  ``str`` decoded the same way, so every stored key, valid UTF-8 or not,
  round-trips; ``Database(..., bytes_keys=True)`` returns ``bytes``
  instead. A key is 1 to MAX_KEY_LEN bytes.
* Times are seconds since the epoch (int, or float rounded down, or a
  ``datetime`` by its ``timestamp()``); None means now.
* Every failure of the library raises ``Error`` (a subclass per code);
  wrong argument types raise ``TypeError`` as usual.
* Records: the calls taking many documents (Database.add_many, batch,
  load; Dedupe.add_many, dedupe()) take each as a tuple, a dict or an
  object (see Record below); anything else raises TypeError naming the
  index and the type ("records[3]: expected a (key, text) tuple, a dict
  or an object with .id/.text, got str").
* Long calls and Ctrl-C: add_many, batch, load, sign_many, Dedupe.add_many
  and dedupe() work in groups (each about 50 ms of library work) and check
  for signals between them, so Ctrl-C stops them within about 0.1 s. The
  KeyboardInterrupt says what was done ("interrupted: 1,200,000 of
  2,000,000 documents committed") and carries it: ``e.committed`` (int)
  and ``e.total`` (int, or None when the input's length is not known); any
  other exception leaving those calls carries them too. What stays is
  stated per call. Single library calls (a batch without add, the commit
  of a load, compact, verify, expire, backup, a Dedupe's join) run to
  their end first.

The GIL
-------
Released while the library works, so other threads run meanwhile: every
Database call (the ones on many documents once per group: their records
are read, and their results built, with the GIL held), Database.sign and
the text calls (signing included), sign_many (once per group of texts),
Dedupe.add_many and dedupe() (once per group: signing and adding), the
walks (pairs, clusters, keep, drop: taken back once per 1024 results),
close(). Held throughout: fingerprint() and Database.fingerprint() of a
text under 2 KB (releasing would cost about as much as hashing it),
Dedupe.add of a text under 2 KB, distance(), resemblance(), len(db), and
every conversion of arguments and results. Threads sharing one Database
run their calls at once (one handle is thread-safe); a Dedupe serves one
call at a time.
"""

from __future__ import annotations

import datetime
import os
from typing import Any, Iterable, Iterator, Literal, Protocol, Tuple, Union, overload


__version__: str
FP_VERSION: int  # version of the fingerprint function (ND_FP_VERSION)
FORMAT_VERSION: int  # on-disk format written (ND_FORMAT_VERSION)
MAX_K: int  # largest query distance (16)
MAX_KEY_LEN: int  # bytes of a key (4096)
MAX_DOC_BYTES: int  # bytes of one text (64 MiB)

Key = Union[str, bytes, bytearray, memoryview]
Text = Union[str, bytes, bytearray, memoryview]
Time = Union[int, float, datetime.datetime, None]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# (key, fingerprint), (key, fingerprint, score) or (key, fingerprint, score, time),
# or (key, fingerprint, score, time, sketch) with Database.sign's sketch (bytes),
# which a store created with min_resemblance requires of every document
DocumentTuple = Union[
    Tuple[Key, int],
    Tuple[Key, int, float],
    Tuple[Key, int, float, Time],
    Tuple[Key, int, float, Time, Union[bytes, None]],
]

# A text as a Database record: (key, text), (key, text, score) or
# (key, text, score, time); signed under the store's options (fingerprint
# and sketch, nd_db_sign) with the GIL released, a group at a time
TextTuple = Union[
    Tuple[Union[Key, int], Text],
    Tuple[Union[Key, int], Text, float],
    Tuple[Union[Key, int], Text, float, Time],
]

class HasId(Protocol):
    """An object record: its attributes of the dict members' names (id,
    and text or fp; score, time, html, sketch when present)."""

    @property
    def id(self) -> Union[Key, int]: ...

# A record of a Database call: a tuple (DocumentTuple, TextTuple), a dict
# with the members the JSONL reader names -- "id" (str, bytes, or an int,
# written in decimal), "text" or "fp" (an int, or 16 hex digits as in
# JSONL), "score", "time", "html" (a text is HTML), "sketch" (with "fp";
# Database.sign's) -- other members ignored, None meaning absent; or an
# object with .id and those attributes (a dataclass, a named tuple with an
# id field).
Record = Union[DocumentTuple, TextTuple, dict[str, Any], HasId]

# ---- errors -----------------------------------------------------------------

class Error(Exception):
    """A failure of neardup. str(e) is "name: message"."""

    code: int  # the nd_error value (negative), e.g. -2 for ND_ENOTFOUND
    name: str  # nd_strerror(code), e.g. "not found"
    message: str  # nd_errmsg(): the detail, e.g. "no database at /x"

class InvalidArgumentError(Error, ValueError):
    """ND_EINVAL; also raised by any call on a closed Database."""

class NotFoundError(Error): ...  # ND_ENOTFOUND
class CorruptError(Error): ...  # ND_ECORRUPT
class DiskIOError(Error): ...  # ND_EIO
class BusyError(Error): ...  # ND_EBUSY: open for writing elsewhere
class VersionError(Error): ...  # ND_EVERSION
class OutOfMemoryError(Error): ...  # ND_ENOMEM
class ExistsError(Error): ...  # ND_EEXIST
class MismatchError(Error): ...  # ND_EMISMATCH: k or fingerprint options differ
class LimitError(Error): ...  # ND_ELIMIT: key or text too long
class NoSpaceError(Error): ...  # ND_ENOSPC
class ReadOnlyError(Error): ...  # ND_EREADONLY
class InternalError(Error): ...  # ND_EINTERNAL: a bug, please report

# ---- results: struct sequences (tuples with named fields, built in C) -----

class Match(Tuple[Union[str, bytes, None], int, int, float, int]):
    """A stored document near a query: (key, fingerprint, distance, score,
    time). Compares and unpacks as a tuple."""

    @property
    def key(self) -> Union[str, bytes, None]: ...  # None with fingerprints_only=True
    @property
    def fingerprint(self) -> int: ...
    @property
    def distance(self) -> int: ...  # Hamming distance to the query
    @property
    def score(self) -> float: ...
    @property
    def time(self) -> int: ...  # last seen, seconds since the epoch
    @property
    def resemblance(self) -> float | None: ...  # to the query text (an attribute, not in the tuple)

class Document(Tuple[Union[str, bytes], int, float, int]):
    """A stored document (get(), iteration): (key, fingerprint, score, time)."""

    @property
    def key(self) -> Union[str, bytes]: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def score(self) -> float: ...
    @property
    def time(self) -> int: ...

class BatchMatch(Tuple[Union[str, bytes], int, int, Union[int, None]]):
    """The near-duplicate found for one document of a batch:
    (key, fingerprint, distance, match_index). The field is not called
    `index`: that would hide tuple.index."""

    @property
    def key(self) -> Union[str, bytes]: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def distance(self) -> int: ...
    @property
    def match_index(self) -> int | None: ...  # earlier batch document matched; None: a stored one
    @property
    def resemblance(self) -> float | None: ...  # a store created with min_resemblance (an attribute, not in the tuple)

# ---- fingerprints -------------------------------------------------------------

def fingerprint(
    text: Text,
    html: bool = False,
    features: str | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
    fold_chinese: bool | None = None,
) -> int:
    """The 64-bit simhash of a text: equal to nd_fingerprint's (and to
    `neardup fingerprint`'s) under the same options.

    text: str (UTF-8; never an error: invalid sequences become U+FFFD) or
    bytes. html: extract the visible text first. features: None or
    "default" (word 3-shingles), "words", "shingles", "shingles:N",
    "chars" (4 code points), "chars:N". cjk_bigrams=False keeps spaceless
    scripts whole. title_weight: HTML title weight (default 1).
    fold_chinese=True folds Traditional Chinese to Simplified (OpenCC's
    t2s) first, so a text in either script has the same fingerprint
    (ND_FP_FOLD_CHINESE, the CLI's --fold-chinese; default off).
    Raises InvalidArgumentError (bad features), LimitError (text over
    MAX_DOC_BYTES). A text under 2 KB is hashed holding the GIL (releasing
    it would cost about as much); a longer one without it."""

def distance(a: int, b: int, /) -> int:
    """Hamming distance between two fingerprints."""

def resemblance(a: bytes, b: bytes, /) -> float:
    """Estimated resemblance in [0, 1] (the share of word shingles two
    texts have in common) of the texts behind two sketches, as
    Database.sign returns them; standard error about 0.025 near 0.85."""

# ---- the database -------------------------------------------------------------

class Database:
    """A neardup store: a directory holding one RocksDB database.

    Database(path) opens an existing store for writing (one writing process
    at a time: BusyError otherwise; readonly=True opens without the lock).
    create=True creates it when missing (exclusive=True: ExistsError if it
    exists). Creation settings (read from the store afterwards):
      k: design distance (default 3); at open, if given, must equal the
         store's (MismatchError) -- None accepts any;
      docs: expected number of documents (the planner's N; default 100M);
      tables: force the number of permuted tables;
      features, cjk_bigrams, title_weight, stopwords, fold_chinese: the
         fingerprint options recorded in the store (see fingerprint()); at open, if any
         is given, they must match the stored ones (MismatchError).
    Handle settings: sync (fsync every write), mmap (read tables through
    mappings), background (fold fresh inserts in the background; default
    True), cache_bytes, fold_threshold, run_size, bytes_keys (return keys
    as bytes).

    Use it as a context manager, or call close(). A Database dropped
    without close() is closed when collected (with a ResourceWarning), so
    its directory can be opened again. After close() every call raises
    InvalidArgumentError. close() refuses new calls at once, stops the
    document iterators, waits for the calls other threads have in
    progress, then closes the handle: a call racing close() either
    completes or raises InvalidArgumentError, never crashes.
    """

    def __init__(
        self,
        path: PathLike,
        create: bool = False,
        *,
        exclusive: bool = False,
        k: int | None = None,
        docs: int | None = None,
        tables: int | None = None,
        sync: bool = False,
        readonly: bool = False,
        mmap: bool = False,
        background: bool = True,
        cache_bytes: int | None = None,
        fold_threshold: int | None = None,
        run_size: int | None = None,
        features: str | None = None,
        cjk_bigrams: bool | None = None,
        title_weight: int | None = None,
        stopwords: Iterable[str] | None = None,
        bytes_keys: bool = False,
        min_resemblance: float | None = None,
        fingerprint_only: bool = False,
        fold_chinese: bool | None = None,
    ) -> None:
        """Open the store at path; create=True makes it if missing. A store
        created from texts verifies by resemblance 0.85 (min_resemblance
        to choose another); fingerprint_only=True makes a fingerprint-only
        store (near-duplicates within k bits; records may be bare
        fingerprints). An existing store opens as it was made."""
    @property
    def path(self) -> str: ...
    @property
    def min_resemblance(self) -> float:
        """The store's resemblance threshold (0.85 by default: it verifies
        by resemblance); 0.0 for a fingerprint-only store."""
    @property
    def k(self) -> int:
        """The store's design distance: the default k of every call."""
    @property
    def closed(self) -> bool: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def bytes_keys(self) -> bool: ...
    @property
    def fp_config(self) -> str:
        """The stored fingerprint configuration, e.g.
        "fp2;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:1"."""
    def fingerprint(self, text: Text, html: bool = False) -> int:
        """fingerprint() under the store's own options (stop words too):
        what its stored fingerprints are comparable with."""
    def add(self, key: Key, fingerprint: int, score: float = 0.0, time: Time = None) -> None:
        """Store (or replace) a document, without the near-duplicate check.
        Durable on return (fsynced with sync=True)."""
    def add_if_new(
        self,
        key: Key,
        fingerprint: int,
        k: int | None = None,
        score: float = 0.0,
        time: Time = None,
    ) -> Match | None:
        """The crawler's check-then-insert, atomic against other writers.

        Returns None when no stored document lies within k bits (default:
        the store's k) -- the document was stored, durably. Otherwise
        returns the closest stored document (ties: smaller fingerprint, then
        key) and stores nothing; if that match is `key` itself, its
        last-seen time is refreshed to `time`."""
    def sign(self, text: Text, html: bool = False) -> tuple[int, bytes]:
        """(fingerprint, sketch) of a text under the store's options, from
        one tokenisation: what add_text stores for it. The sketch (176
        bytes: 128 of min-hash bins, then 12 band keys as big-endian
        uint32) compares with resemblance(); any store signs texts. The
        GIL is released for the signing (for many short texts, sign_many
        releases it once per group instead of once per text)."""
    def add_text(
        self, key: Key, text: Text, score: float = 0.0, time: Time = None, *, html: bool = False
    ) -> None:
        """Store the document of a text without the near-duplicate check:
        its fingerprint, and in a store created with min_resemblance its
        sketch, from one tokenisation under the store's options."""
    def add_if_new_text(
        self,
        key: Key,
        text: Text,
        k: int | None = None,
        score: float = 0.0,
        time: Time = None,
        *,
        html: bool = False,
    ) -> Match | None:
        """add_if_new for a text. In a store created with min_resemblance
        R, the best stored near-duplicate of estimated resemblance >= R
        (found by band keys or within k bits; Match.resemblance), and the
        document is stored either way (such a store indexes every
        document); None when there is none. A store without it: exactly
        add_if_new(key, fingerprint of text, ...)."""
    def query_text(
        self, text: Text, k: int | None = None, limit: int | None = None, *, html: bool = False
    ) -> list[Match]:
        """The stored near-duplicates of a text as add_if_new_text finds
        them, most resemblant first; in a fingerprint-only store, query()
        of its fingerprint."""
    def add_many(self, documents: Iterable[Record], *, html: bool = False) -> None:
        """Store documents without the near-duplicate check (the group
        commit, nd_db_add_many: online writes, their table entries folded
        later); later entries of a key win. A missing time is now; a text
        is signed (html: texts without an "html" member are HTML).

        Every record is read first (a bad one raises before anything is
        written). A call of at most 256 documents is one atomic write (one
        fsync with sync=True); a longer one writes atomic groups sized for
        about 50 ms each, checking for Ctrl-C between them: an interrupt or
        a failure raises with ``e.committed`` documents written (the first
        ones, in order). Many documents into a new or large store: load()
        is several times faster."""
    def load(self, records: Iterable[Record], *, html: bool = False) -> int:
        """The bulk load (nd_loader, as `neardup import`): store records
        without the near-duplicate check, in bounded memory (the records
        are streamed a group at a time; the loader sorts chunks of up to
        8M documents, spilled to temporary files in the store's
        directory), the store written once at the end. Later records of a
        key win; a key already stored is replaced. Returns the number of
        documents new to the store.

        The load commits at the end, all or nothing (in a store
        verifying by resemblance, the sketches and band keys with the
        documents): an interrupt (Ctrl-C is seen between groups) or a
        failure before the commit imports nothing new (``e.committed`` 0;
        keys already stored may have been replaced), and the temporary
        files go. The commit itself runs to its end (a signal during it is
        raised after it, with everything committed). One load() of a
        Database at a time
        (InvalidArgumentError); close() during it makes it raise
        InvalidArgumentError, nothing new committed. The GIL is released
        while each group is handed over (texts signed) and for the
        commit."""
    def sign_many(self, texts: Iterable[Text], html: bool = False) -> list[tuple[int, bytes]]:
        """sign() of each text, in order: the GIL is released once per
        group of texts (sized for about 50 ms), so threads signing at once
        use as many cores; Ctrl-C is seen between groups."""
    def query(
        self,
        fingerprint: int,
        k: int | None = None,
        limit: int | None = None,
        *,
        first: bool = False,
        fingerprints_only: bool = False,
    ) -> list[Match]:
        """Every stored document within k bits (k <= MAX_K; default the
        store's k), ordered by distance, then fingerprint, then key. Exact.
        limit: keep the closest `limit`; first: stop at the first match
        found; fingerprints_only: one Match per stored fingerprint, key
        None."""
    def batch(
        self,
        documents: Iterable[Record],
        k: int | None = None,
        add: bool = False,
        *,
        html: bool = False,
    ) -> list[BatchMatch | None]:
        """Check documents against the store and against each other, as if
        each were add_if_new'ed in order: answer i is None when document i
        is new, else its closest match -- a stored document (index None) or
        an earlier new document of the batch (its index). add=True stores
        the new ones, atomically with the check. In a store created with
        min_resemblance every document carries its sketch (fingerprint and
        sketch from sign(text), or a text record, signed here): a match is
        the most resemblant stored or earlier document of resemblance >=
        the store's (BatchMatch.resemblance), and add=True stores every
        document.

        Every record is read first. Without add, one library call checks
        them all (texts signed first, in groups; Ctrl-C is seen between
        those, not during the check). With add, a call of at most 256
        documents is one group, checked and stored atomically; a longer
        one runs in groups sized for about 50 ms each, one after the other
        (the answers are those of one batch: a match with a document that
        an earlier group stored names its match_index), with Ctrl-C seen
        between groups: ``e.committed`` documents were checked and, if new,
        stored."""
    def get(self, key: Key, /) -> Document | None:
        """The stored document of key, or None."""
    def __contains__(self, key: Key) -> bool: ...
    def delete(self, key: Key, /) -> None:
        """Delete a document; NotFoundError when it is not stored."""
    def expire(
        self, before: Union[int, float, datetime.datetime, datetime.timedelta], /
    ) -> int:
        """Delete every document last seen before a time (a timedelta: that
        long before now). Returns the number deleted. Ctrl-C stops it between
        documents (each deleted whole or kept): the KeyboardInterrupt's
        `committed` is the number deleted."""
    def stats(self) -> dict[str, Any]:
        """{"documents", "fingerprints", "disk_bytes", "tables": [{"prefix_bits",
        "entries", "runs", "fresh", "bytes", "bits_per_entry"}, ...]}
        (reads every table: O(entries))."""
    def __len__(self) -> int:
        """Stored documents (a counter: O(1))."""
    def compact(self) -> None:
        """Fold fresh inserts into runs and compact the files (a rewrite of
        the store: an administrative call). Ctrl-C stops it after the table
        being folded (the store stays consistent)."""
    def verify(self) -> None:
        """Check every invariant; CorruptError names the first problem.
        Ctrl-C stops it (KeyboardInterrupt)."""
    def backup(self, directory: PathLike, /) -> None:
        """Write a consistent checkpoint into a new directory (ExistsError if
        it exists); it opens as a Database."""
    def __iter__(self) -> Iterator[Document]:
        """Every stored document in key order, from one snapshot, in
        bounded memory (a reader thread fills batches of 512). close()
        ends every iterator of the store: their next step raises
        InvalidArgumentError."""
    def close(self) -> None: ...
    def __enter__(self) -> Database: ...
    def __exit__(self, *exc: object) -> None: ...

# ---- corpus dedupe (the library's nd_dedupe_*) -------------------------------

# (key, text) or (key, text, score); an int text is a fingerprint (a
# document without text: it pairs by distance alone, within min(k, 8) bits)
DedupeTuple = Union[
    Tuple[Union[Key, int], Union[Text, int]], Tuple[Union[Key, int], Union[Text, int], float]
]
# a record of a dedupe: a tuple, a dict ("id", "text" or "fp", "score",
# "html"; as a Database Record, without time and sketch) or an object
DedupeRecord = Union[DedupeTuple, dict[str, Any], HasId]

class Pair(Tuple[Union[str, bytes], Union[str, bytes], int, Union[float, None],
                 Union[float, None], bool, int, int]):
    """Two near-duplicate documents: (key1, key2, distance, resemblance,
    containment, by_containment, index1, index2); index1 < index2 are
    input positions (0 = the first added)."""

    @property
    def key1(self) -> Union[str, bytes]: ...
    @property
    def key2(self) -> Union[str, bytes]: ...
    @property
    def distance(self) -> int: ...  # bits between their fingerprints
    @property
    def resemblance(self) -> float | None: ...  # estimated; None: a document has no text
    @property
    def containment(self) -> float | None: ...  # estimated when min_containment > 0
    @property
    def by_containment(self) -> bool: ...  # only the containment made it a pair
    @property
    def index1(self) -> int: ...
    @property
    def index2(self) -> int: ...

class Cluster(Tuple[int, Union[str, bytes], list[Union[str, bytes]], list[int], int, list[int]]):
    """A cluster of two or more near-duplicates: (id, keep, drop, distances,
    keep_index, drop_indexes). Every dropped document forms a pair with the
    kept one (the representative rule)."""

    @property
    def id(self) -> int: ...  # 1, 2, ... in keep order of the kept documents
    @property
    def keep(self) -> Union[str, bytes]: ...  # the kept document's key
    @property
    def drop(self) -> list[Union[str, bytes]]: ...  # dropped keys, input order
    @property
    def distances(self) -> list[int]: ...  # bits from each dropped one to the kept one
    @property
    def keep_index(self) -> int: ...
    @property
    def drop_indexes(self) -> list[int]: ...

@overload
def dedupe(
    docs: Iterable[DedupeRecord],
    *,
    k: int | None = None,
    min_resemblance: float | None = None,
    min_containment: float | None = None,
    keep: Literal["first", "score", "longest"] = "first",
    out: Literal["pairs"] = "pairs",
    memory: int | None = None,
    features: str | None = None,
    html: bool = False,
    scratch_dir: PathLike | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
    bytes_keys: bool = False,
    fold_chinese: bool | None = None,
) -> list[Pair]: ...
@overload
def dedupe(
    docs: Iterable[DedupeRecord],
    *,
    k: int | None = None,
    min_resemblance: float | None = None,
    min_containment: float | None = None,
    keep: Literal["first", "score", "longest"] = "first",
    out: Literal["clusters"],
    memory: int | None = None,
    features: str | None = None,
    html: bool = False,
    scratch_dir: PathLike | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
    bytes_keys: bool = False,
    fold_chinese: bool | None = None,
) -> dict[int, Cluster]: ...
@overload
def dedupe(
    docs: Iterable[DedupeRecord],
    *,
    k: int | None = None,
    min_resemblance: float | None = None,
    min_containment: float | None = None,
    keep: Literal["first", "score", "longest"] = "first",
    out: Literal["keep", "drop"],
    memory: int | None = None,
    features: str | None = None,
    html: bool = False,
    scratch_dir: PathLike | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
    bytes_keys: bool = False,
    fold_chinese: bool | None = None,
) -> list[Union[str, bytes]]: ...
@overload
def dedupe(
    docs: Iterable[DedupeRecord],
    *,
    k: int | None = None,
    min_resemblance: float | None = None,
    min_containment: float | None = None,
    keep: Literal["first", "score", "longest"] = "first",
    out: str = "pairs",
    memory: int | None = None,
    features: str | None = None,
    html: bool = False,
    scratch_dir: PathLike | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
    bytes_keys: bool = False,
    fold_chinese: bool | None = None,
) -> Union[list[Pair], dict[int, Cluster], list[Union[str, bytes]]]:
    """The near-duplicates of a corpus, without a database: a Dedupe (see
    there for the options) fed docs, read once, closed. The result is what
    `neardup dedupe --out OUT` prints for the same documents:
      out="pairs": every Pair, as found (the self-join's, then banding's);
      out="clusters": {id: Cluster} for clusters of two or more, in id order;
      out="keep": the keys to keep (one a cluster, singletons too), input order;
      out="drop": the keys to drop, input order.
    Raises InvalidArgumentError for a bad out or option."""

class Dedupe:
    """The library's corpus dedupe (nd_dedupe_*): add every document, then
    read the results. Memory: 8 bytes a document (16 with keep="score" or
    "longest") and the sorts, within `memory`; keys and sketches go to
    unlinked scratch files. No text is kept.

    A pair is two documents whose fingerprints lie within k bits and whose
    min-hash sketches estimate a resemblance of at least min_resemblance
    (or, with min_containment C > 0, a containment of at least C).
      k: largest distance in bits, 0..64 (default 24; 3 when no document
         has text or min_resemblance=0, where k <= 8);
      min_resemblance: in (0, 1], default 0.85; 0 = by fingerprint
         distance alone (as `neardup dedupe --min-resemblance 0`);
      min_containment: in [0, 1], default 0 (off);
      keep: which document of a cluster stays: "first" (input order),
         "score" (the highest score), "longest" (the longest text);
      memory: bytes for the sorts (default 256 MiB, at least 1024); a
         larger sort is split into partitions, same results;
      features, cjk_bigrams, title_weight, stopwords, fold_chinese: as
         fingerprint();
      html: texts are HTML (add(..., html=) decides per document);
      scratch_dir: where the scratch files go (default
         tempfile.gettempdir(), so $TMPDIR as the CLI); DiskIOError when
         they cannot be created;
      bytes_keys: return keys as bytes instead of str.
    Bad options raise InvalidArgumentError.

    The first result call closes the corpus (a later add raises
    InvalidArgumentError); the results may be read again, in any view.
    Calls release the GIL while the library works (add() of a text under
    2 KB excepted; add_many once per group of records; the walks take it
    back once per 1024 results).
    The handle serves one call at a time: another thread's call waits for
    it; a call made from inside one of its own calls on the same thread
    (from a __del__ the collector runs during a walk) raises
    InvalidArgumentError. A generator feeding add_many may call the Dedupe
    between documents. Use it as a context
    manager or call close(); a Dedupe collected unclosed is freed then
    (memory and scratch files). After close() every call raises
    InvalidArgumentError.
    """

    def __init__(
        self,
        *,
        k: int | None = None,
        min_resemblance: float | None = None,
        min_containment: float | None = None,
        keep: Literal["first", "score", "longest"] = "first",
        memory: int | None = None,
        features: str | None = None,
        html: bool = False,
        scratch_dir: PathLike | None = None,
        cjk_bigrams: bool | None = None,
        title_weight: int | None = None,
        stopwords: Iterable[str] | None = None,
        bytes_keys: bool = False,
        fold_chinese: bool | None = None,
    ) -> None: ...
    @property
    def closed(self) -> bool: ...
    def add(self, key: Key, text: Text, score: float = 0.0, html: bool | None = None) -> None:
        """Add a document with text (keys may repeat; score serves
        keep="score"). Raises LimitError for a text over MAX_DOC_BYTES.
        A text under 2 KB is signed holding the GIL; add_many signs any
        text without it."""
    def add_fingerprint(self, key: Key, fingerprint: int, score: float = 0.0) -> None:
        """Add a document known by its fingerprint only."""
    def add_many(self, docs: Iterable[DedupeRecord], /) -> None:
        """add() (or add_fingerprint() for an int text or an "fp") each
        record, streamed from any iterable a group at a time: the group is
        read with the GIL held, then signed and added with it released
        (texts of any length), and Ctrl-C is seen between groups (the
        documents added before stay: ``e.committed``). A library error
        names the record's position."""
    def pairs(self) -> list[Pair]:
        """Every pair, each once, as found."""
    def clusters(self) -> dict[int, Cluster]:
        """The clusters of two or more documents, by id (keep order)."""
    def keep(self) -> list[Union[str, bytes]]:
        """The keys to keep, in input order."""
    def drop(self) -> list[Union[str, bytes]]:
        """The keys to drop, in input order."""
    def stats(self) -> dict[str, int]:
        """{"documents", "texts", "distinct", "pairs", "by_containment", "k"}
        (nd_dedupe_stats: distinct once clustered; pairs of the last walk
        that joined; k the distance in effect)."""
    def __len__(self) -> int:
        """Documents added."""
    def close(self) -> None:
        """Free the handle, its memory and scratch files; waits for another
        thread's call in progress."""
    def __enter__(self) -> Dedupe: ...
    def __exit__(self, *exc: object) -> None: ...

# ---- the server's client (neardup/client.py, typed there) -------------------

from .client import Client as Client, ServerError as ServerError
from .fleet import Fleet as Fleet, FleetError as FleetError
