"""neardup: near-duplicate detection with 64-bit simhash fingerprints.

A text becomes a fingerprint with ``fingerprint()``; a ``Database`` keeps
fingerprints on disk (RocksDB) in permuted tables and answers "which
stored documents are within k bits of this one", one document at a time
(``add_if_new``, ``query``) or in batches (``batch``).

    import neardup
    with neardup.Database("pages.nd", create=True) as db:
        match = db.add_if_new("https://example.org/", db.fingerprint(text))
        if match is not None:
            print("near-duplicate of", match.key, match.distance, "bits")

A corpus is deduped without a database by ``dedupe()`` (or a ``Dedupe``
fed in pieces), the library's corpus dedupe (``nd_dedupe_*``):

    drop = set(neardup.dedupe(((d["id"], d["text"]) for d in docs), out="drop"))

Every failure raises ``neardup.Error`` (a subclass per C error code:
``NotFoundError``, ``BusyError``, ...), carrying ``code``, ``name`` and
``message``. Keys go in as str (UTF-8) or bytes and come back as str
(``bytes_keys=True``: bytes). Calls release the GIL: threads sharing one
``Database`` run at once. The full contract of every call is in
``__init__.pyi`` and, for the C library behind it, in ``neardup.h``.
"""

from ._neardup import (
    FORMAT_VERSION,
    FP_VERSION,
    MAX_DOC_BYTES,
    MAX_K,
    MAX_KEY_LEN,
    BatchMatch,
    BusyError,
    Cluster,
    CorruptError,
    Database,
    Dedupe,
    DiskIOError,
    Document,
    Error,
    ExistsError,
    InternalError,
    InvalidArgumentError,
    LimitError,
    Match,
    MismatchError,
    NoSpaceError,
    NotFoundError,
    OutOfMemoryError,
    Pair,
    ReadOnlyError,
    VersionError,
    __version__,
    dedupe,
    distance,
    fingerprint,
    resemblance,
)
from .client import Client, ServerError
from .fleet import Fleet, FleetError

__all__ = [
    "BatchMatch",
    "BusyError",
    "Client",
    "Fleet",
    "FleetError",
    "Cluster",
    "CorruptError",
    "Database",
    "Dedupe",
    "DiskIOError",
    "Document",
    "Error",
    "ExistsError",
    "FORMAT_VERSION",
    "FP_VERSION",
    "InternalError",
    "InvalidArgumentError",
    "LimitError",
    "MAX_DOC_BYTES",
    "MAX_K",
    "MAX_KEY_LEN",
    "Match",
    "MismatchError",
    "NoSpaceError",
    "NotFoundError",
    "OutOfMemoryError",
    "Pair",
    "ReadOnlyError",
    "ServerError",
    "VersionError",
    "__version__",
    "dedupe",
    "distance",
    "fingerprint",
    "resemblance",
]
