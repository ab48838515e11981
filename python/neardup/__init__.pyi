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
* Every call releases the GIL while the library works: threads sharing one
  ``Database`` run their calls at once (one handle is thread-safe).
"""

from __future__ import annotations

import datetime
import os
from typing import Iterable, Iterator, Tuple, Union

__version__: str
FP_VERSION: int  # version of the fingerprint function (ND_FP_VERSION)
FORMAT_VERSION: int  # on-disk format written (ND_FORMAT_VERSION)
MAX_K: int  # largest query distance (16)
MAX_KEY_LEN: int  # bytes of a key (4096)
MAX_DOC_BYTES: int  # bytes of one text (64 MiB)

Key = Union[str, bytes, bytearray, memoryview]
Text = Union[str, bytes, bytearray, memoryview]
Time = Union[int, float, datetime.datetime, None]
PathLike = Union[str, bytes, os.PathLike]
# (key, fingerprint), (key, fingerprint, score) or (key, fingerprint, score, time)
DocumentTuple = Union[
    Tuple[Key, int], Tuple[Key, int, float], Tuple[Key, int, float, Time]
]

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
    (key, fingerprint, distance, index)."""

    @property
    def key(self) -> Union[str, bytes]: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def distance(self) -> int: ...
    @property
    def index(self) -> int | None: ...  # earlier batch document matched; None: a stored one

# ---- fingerprints -------------------------------------------------------------

def fingerprint(
    text: Text,
    html: bool = False,
    features: str | None = None,
    cjk_bigrams: bool | None = None,
    title_weight: int | None = None,
    stopwords: Iterable[str] | None = None,
) -> int:
    """The 64-bit simhash of a text: equal to nd_fingerprint's (and to
    `neardup fingerprint`'s) under the same options.

    text: str (UTF-8; never an error: invalid sequences become U+FFFD) or
    bytes. html: extract the visible text first. features: None or
    "default" (word 3-shingles), "words", "shingles", "shingles:N",
    "chars" (4 code points), "chars:N". cjk_bigrams=False keeps spaceless
    scripts whole. title_weight: HTML title weight (default 2).
    Raises InvalidArgumentError (bad features), LimitError (text over
    MAX_DOC_BYTES)."""

def distance(a: int, b: int, /) -> int:
    """Hamming distance between two fingerprints."""

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
      features, cjk_bigrams, title_weight, stopwords: the fingerprint
         options recorded in the store (see fingerprint()); at open, if any
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
    ) -> None: ...
    @property
    def path(self) -> str: ...
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
        "fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2"."""
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
    def add_many(self, documents: Iterable[DocumentTuple]) -> None:
        """Store documents in one atomic write (one fsync with sync=True),
        without the near-duplicate check; later entries of a key win.
        A missing time is now."""
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
        self, documents: Iterable[DocumentTuple], k: int | None = None, add: bool = False
    ) -> list[BatchMatch | None]:
        """Check documents against the store and against each other, as if
        each were add_if_new'ed in order: answer i is None when document i
        is new, else its closest match -- a stored document (index None) or
        an earlier new document of the batch (its index). add=True stores
        the new ones, atomically with the check."""
    def get(self, key: Key, /) -> Document | None:
        """The stored document of key, or None."""
    def __contains__(self, key: Key) -> bool: ...
    def delete(self, key: Key, /) -> None:
        """Delete a document; NotFoundError when it is not stored."""
    def expire(
        self, before: Union[int, float, datetime.datetime, datetime.timedelta], /
    ) -> int:
        """Delete every document last seen before a time (a timedelta: that
        long before now). Returns the number deleted."""
    def stats(self) -> dict:
        """{"documents", "fingerprints", "disk_bytes", "tables": [{"prefix_bits",
        "entries", "runs", "fresh", "bytes", "bits_per_entry"}, ...]}
        (reads every table: O(entries))."""
    def __len__(self) -> int:
        """Stored documents (a counter: O(1))."""
    def compact(self) -> None:
        """Fold fresh inserts into runs and compact the files (a rewrite of
        the store: an administrative call)."""
    def verify(self) -> None:
        """Check every invariant; CorruptError names the first problem."""
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

# neardup.dedupe(iterable of (key, text)) -> clusters: reserved for the
# library's nd_dedupe_* API (issue 36); not available yet.
