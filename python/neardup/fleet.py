"""neardup.Fleet: one sharded store served by S servers, with the calls of
``Client`` (and so of ``Database``).

    fleet = neardup.Fleet(["http://10.0.0.1:7340", "http://10.0.0.2:7340",
                           "http://10.0.0.3:7340"], token=token)
    match = fleet.add_if_new_text("https://example.org/", text)

Server i of the list serves shard i (``neardup serve DIR --shard I``); at
connect the fleet reads every server's /v1/stats and refuses a list whose
servers do not hold shards 0..S-1 of one store in order (FleetError).
The protocol and the rules below are docs/server.md, "A fleet":

- a document lives in shard FNV-1a-64(key's UTF-8 bytes) mod S (the
  manifest's rule fnv1a64-mod, ``place``); add, get, delete go there;
- every check goes to every server at once (a near-duplicate may live in
  any shard), and the best of their matches wins: the smaller distance,
  then the smaller fingerprint, then the smaller key bytes (the library's
  nd_match_order); in a resemblance store the higher resemblance first;
- check-and-add stores the document in its shard when the check of every
  shard found nothing (a resemblance store: always) by a check-and-add on
  that server, atomic there;
- a batch is checked against every shard's stored documents (/v1/batch
  "stored_only"), decided by one server (/v1/decide: the library's
  nd_shards_decide) and, with add, stored by each shard's server
  (/v1/store).

The answers equal those of one server holding the whole store, except
that across servers check-and-add is not atomic: two clients sending
near-duplicates that live in different shards at the same moment may both
be told new. Standard library only; a Fleet is shared by threads (one
keep-alive connection per thread and server; the fan-out runs on a pool
of threads).
"""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

from . import BatchMatch, Document, Error, Match
from .client import Client, Key, Time, _Queries, _doc_json, _hex, _match

T = TypeVar("T")

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


class FleetError(Error):
    """The servers given do not make one fleet: a server that holds no
    shard, shards out of order, or servers of different stores (manifest,
    k, min_resemblance)."""


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64 bits, of data (the placement rule's hash)."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & _MASK
    return h


def _key_bytes(key: Key) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else key


def _order(m: dict[str, Any]) -> tuple[Any, ...]:
    """A match's rank, smallest best: resemblance (higher first) where the
    store gave one, then distance, fingerprint, key bytes."""
    r = m.get("resemblance")
    return (-(r if r is not None else 0.0), m["distance"], int(m["fingerprint"], 16),
            m["key"].encode("utf-8"))


def _best(matches: Iterable[Optional[dict[str, Any]]]) -> Optional[dict[str, Any]]:
    found = [m for m in matches if m is not None]
    return min(found, key=_order) if found else None


class Fleet(_Queries):
    """S `neardup serve --shard I` servers as one store, with the method
    names of Client."""

    def __init__(self, urls: Sequence[str], token: Optional[str] = None,
                 timeout: float = 30.0, *, threads: Optional[int] = None) -> None:
        if isinstance(urls, str) or not urls:
            raise ValueError("expected a list of server urls, shard 0 first")
        self.urls = [u.rstrip("/") for u in urls]
        self._clients = [Client(u, token=token, timeout=timeout) for u in self.urls]
        self.shards = len(self._clients)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=threads or 16 * self.shards, thread_name_prefix="neardup-fleet")
        self._next = 0
        try:
            self._check_fleet()
        except BaseException:
            self.close()
            raise

    # ---- the fleet ---------------------------------------------------------
    def _check_fleet(self) -> None:
        stats = self._fan(lambda c: c.stats())
        manifest: Optional[str] = None
        for i, st in enumerate(stats):
            sh = st.get("shard")
            if sh is None:
                if self.shards == 1:
                    continue  # one plain store: a fleet of one
                raise FleetError(f"{self.urls[i]} serves a plain store, not a shard "
                                 f"(start it with --shard {i})")
            if sh.get("placement") != "fnv1a64-mod":
                raise FleetError(f"{self.urls[i]}: placement {sh.get('placement')!r} is not "
                                 "fnv1a64-mod")
            if sh["count"] != self.shards or sh["index"] != i:
                raise FleetError(f"{self.urls[i]} serves shard {sh['index']} of {sh['count']}; "
                                 f"position {i} of {self.shards} urls needs shard {i} of "
                                 f"{self.shards}")
            if manifest is None:
                manifest = sh["manifest"]
            elif sh["manifest"] != manifest:
                raise FleetError(f"{self.urls[i]} serves another store (manifest "
                                 f"{sh['manifest']}, not {manifest})")
        for name in ("k", "min_resemblance"):
            if len({st.get(name) for st in stats}) != 1:
                raise FleetError(f"the servers disagree on {name}: "
                                 + ", ".join(f"{u}: {st.get(name)}"
                                             for u, st in zip(self.urls, stats)))
        self.k = int(stats[0]["k"])
        self.min_resemblance = float(stats[0].get("min_resemblance") or 0.0)
        self.manifest = manifest

    def place(self, key: Key) -> int:
        """The shard (index into urls) of a key: FNV-1a-64 of its bytes mod S."""
        return fnv1a64(_key_bytes(key)) % self.shards

    def _owner(self, key: Key) -> Client:
        return self._clients[self.place(key)]

    def _fan(self, call: Callable[[Client], T],
             servers: Optional[Sequence[int]] = None) -> list[T]:
        """call on the servers (default all) at once, answers in their order;
        the first runs on this thread. The first failure is raised."""
        idx = list(range(self.shards)) if servers is None else list(servers)
        futs = [self._pool.submit(call, self._clients[i]) for i in idx[1:]]
        try:
            first = call(self._clients[idx[0]])
        finally:
            rest = [f.result() for f in futs]
        return [first, *rest]

    def _post_all(self, path: str, body: dict[str, Any]) -> list[Any]:
        """POST body to path on every server at once: their answers."""
        def call(c: Client) -> Any:
            return c._call("POST", path, body)
        return self._fan(call)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for c in self._clients:
            c.close()

    def __enter__(self) -> "Fleet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- checks ------------------------------------------------------------
    def _checks(self, body: dict[str, Any]) -> list[Optional[dict[str, Any]]]:
        check = {m: v for m, v in body.items() if m not in ("key", "sync", "score", "time")}
        return [a["match"] for a in self._post_all("/v1/check", check)]

    def _check_and_add(self, key: Key, body: dict[str, Any]) -> Optional[Match]:
        found = self._checks(body)
        best = _best(found)
        if best is not None and not self.min_resemblance and \
                best["key"].encode("utf-8") != _key_bytes(key):
            return _match(best)
        # new (or a resemblance store, which stores every document, or a
        # duplicate of its own key, whose time the owner refreshes): the
        # owner's check-and-add, atomic on its shard, replaces its check
        owner = self.place(key)
        a = self._clients[owner]._call("POST", "/v1/check-and-add", body)
        found[owner] = a["match"]
        return _match(_best(found))

    def add_if_new(self, key: Key, fingerprint: int, k: Optional[int] = None, score: float = 0.0,
                   time: Time = None, *, sync: bool = False) -> Optional[Match]:
        """Client.add_if_new over the fleet: None when new (stored), else the match."""
        return self._check_and_add(key, Client._one(key, k, score, time, sync,
                                                    fingerprint=_hex(fingerprint)))

    def add_if_new_text(self, key: Key, text: str, k: Optional[int] = None, score: float = 0.0,
                        time: Time = None, *, html: bool = False,
                        sync: bool = False) -> Optional[Match]:
        """add_if_new for a text, signed by the servers under the store's options."""
        return self._check_and_add(key, Client._one(key, k, score, time, sync, text=text,
                                                    html=html or None))

    def check(self, fingerprint: int, k: Optional[int] = None) -> Optional[Match]:
        """The match add_if_new would report, storing nothing."""
        return _match(_best(self._checks(Client._one(None, k, 0.0, None, False,
                                                     fingerprint=_hex(fingerprint)))))

    def check_text(self, text: str, k: Optional[int] = None, *,
                   html: bool = False) -> Optional[Match]:
        return _match(_best(self._checks(Client._one(None, k, 0.0, None, False, text=text,
                                                     html=html or None))))

    # ---- writes and reads by key ------------------------------------------
    def add(self, key: Key, fingerprint: int, score: float = 0.0, time: Time = None, *,
            sync: bool = False) -> None:
        """Store without the check, in the key's shard."""
        self._owner(key).add(key, fingerprint, score, time, sync=sync)

    def add_text(self, key: Key, text: str, score: float = 0.0, time: Time = None, *,
                 html: bool = False, sync: bool = False) -> None:
        self._owner(key).add_text(key, text, score, time, html=html, sync=sync)

    def get(self, key: Key, /) -> Optional[Document]:
        return self._owner(key).get(key)

    def __contains__(self, key: Key) -> bool:
        return self.get(key) is not None

    def delete(self, key: Key, /) -> None:
        """Delete from the key's shard; NotFoundError when it is not stored."""
        self._owner(key).delete(key)

    # ---- queries -----------------------------------------------------------
    def _query(self, body: dict[str, Any], k: Optional[int], limit: Optional[int]) -> list[Match]:
        if k is not None:
            body["k"] = k
        if limit is not None:
            body["limit"] = limit
        answers = self._post_all("/v1/query", body)
        merged = sorted((m for a in answers for m in a["matches"]), key=_order)
        if limit:
            merged = merged[:limit]
        return [m for m in map(_match, merged) if m is not None]

    # ---- batches -----------------------------------------------------------
    def batch(self, documents: Iterable[Any], k: Optional[int] = None, add: bool = False, *,
              html: bool = False, sync: bool = False) -> list[Optional[BatchMatch]]:
        """Client.batch over the fleet: check against every shard, decide on
        one server, store (with add) in each document's shard."""
        docs = [_doc_json(r, html, i) for i, r in enumerate(documents)]
        if not docs:
            return []
        check: dict[str, Any] = {"documents": docs, "stored_only": True}
        decide: dict[str, Any] = {"documents": docs}
        if k is not None:
            check["k"] = decide["k"] = k
        per_shard = [a["results"] for a in self._post_all("/v1/batch", check)]
        decide["matches"] = [
            None if b is None else {m: b[m] for m in ("key", "fingerprint", "distance",
                                                      "resemblance") if m in b}
            for b in (_best(col) for col in zip(*per_shard))]
        # the decision is arithmetic: spread it over the servers
        self._next = (self._next + 1) % self.shards
        results: list[Any] = self._clients[self._next]._call(
            "POST", "/v1/decide", decide)["results"]
        if add:
            owners: dict[int, list[int]] = {}
            for i, d in enumerate(docs):
                owners.setdefault(self.place(d["key"]), []).append(i)

            def store(c: Client) -> Any:
                mine = owners[self._clients.index(c)]
                body: dict[str, Any] = {"documents": [docs[i] for i in mine],
                                        "results": [results[i] for i in mine]}
                if sync:
                    body["sync"] = True
                return c._call("POST", "/v1/store", body)

            self._fan(store, sorted(owners))
        return [None if r is None else BatchMatch(
            (r["key"], int(r["fingerprint"], 16), r["distance"], r.get("index"),
             r.get("resemblance"))) for r in results]

    # ---- figures -----------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """documents and fingerprints summed over the servers; k,
        min_resemblance; "servers": each server's /v1/stats."""
        each = self._fan(lambda c: c.stats())
        return {"documents": sum(int(s["documents"]) for s in each),
                "fingerprints": sum(int(s["fingerprints"]) for s in each),
                "k": self.k, "min_resemblance": self.min_resemblance,
                "durable": all(bool(s.get("durable")) for s in each),
                "shards": self.shards, "servers": each}

    def __len__(self) -> int:
        return int(self.stats()["documents"])

    def healthy(self) -> bool:
        """Every server answers /healthz."""
        return all(self._fan(lambda c: c.healthy()))
