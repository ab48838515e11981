"""neardup.Client: the calls of ``Database`` over HTTP, for `neardup serve`.

    client = neardup.Client("http://127.0.0.1:7340", token=None)
    match = client.add_if_new_text("https://example.org/", text)
    tls = neardup.Client("https://dedup.example:7340", token=TOKEN,
                         cafile="/etc/neardup/cert.pem")

The protocol is server/openapi.yaml (version 1); this module uses the
standard library only (http.client), so any Python 3 talks to a server
without the extension being built -- it imports the result types
(Match, Document, BatchMatch) and the errors from the package when they
are there. One keep-alive connection per thread: a Client is shared by
threads. Failures raise the package's errors by HTTP status: 400
InvalidArgumentError, 404 NotFoundError, 413 LimitError, 401/403
PermissionError, 429/503 BusyError (retry later), anything else Error.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time as _time
import urllib.parse
from typing import Any, Iterable, Optional, Union

from . import (
    BatchMatch,
    BusyError,
    Document,
    Error,
    InvalidArgumentError,
    LimitError,
    Match,
    NotFoundError,
)

Key = Union[str, bytes]
Time = Union[int, float, None]


class ServerError(Error):
    """An answer of the server that is not a success: ``status`` (HTTP),
    ``error_code`` (the JSON error's code, e.g. "malformed") and
    ``message``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.error_code = code
        self.message = message


class ServerInvalidArgumentError(ServerError, InvalidArgumentError):
    """400: a malformed request."""


class ServerNotFoundError(ServerError, NotFoundError):
    """404: no such document (or endpoint)."""


class ServerLimitError(ServerError, LimitError):
    """413: a body, key, text or batch over the server's limits."""


class ServerPermissionError(ServerError, PermissionError):
    """401 (no token) or 403 (a wrong one)."""


class ServerBusyError(ServerError, BusyError):
    """429 or 503: over a limit of the server, or shutting down: retry."""


_CLASSES: dict[int, type[ServerError]] = {
    400: ServerInvalidArgumentError, 404: ServerNotFoundError, 413: ServerLimitError,
    401: ServerPermissionError, 403: ServerPermissionError, 429: ServerBusyError,
    503: ServerBusyError}


def _key(key: Key) -> str:
    return key.decode("utf-8") if isinstance(key, bytes) else key


def _time_of(t: Time) -> Optional[int]:
    return None if t is None else int(t)


def _hex(fp: int) -> str:
    if not 0 <= fp < 1 << 64:
        raise ValueError("a fingerprint is an unsigned 64-bit integer")
    return "%016x" % fp


def _match(m: Optional[dict[str, Any]]) -> Optional[Match]:
    if m is None:
        return None
    fields: list[Any] = [m["key"], int(m["fingerprint"], 16), m["distance"],
                         m.get("score", 0.0), m.get("time", 0), m.get("resemblance")]
    return Match(fields)


def _doc_json(rec: Any, html: bool, index: int) -> dict[str, Any]:
    """A Database record (tuple, dict or object) as the protocol's document."""
    if isinstance(rec, tuple):
        if len(rec) < 2:
            raise TypeError(f"records[{index}]: expected a (key, text) or (key, fingerprint) tuple")
        key, body = rec[0], rec[1]
        out: dict[str, Any] = {"key": _key(key) if not isinstance(key, int) else str(key)}
        if isinstance(body, int):
            out["fingerprint"] = _hex(body)
        else:
            out["text"] = body.decode("utf-8") if isinstance(body, bytes) else body
            if html:
                out["html"] = True
        if len(rec) > 2 and rec[2] is not None:
            out["score"] = float(rec[2])
        if len(rec) > 3 and rec[3] is not None:
            out["time"] = int(rec[3])
        return out
    get = rec.get if isinstance(rec, dict) else (lambda n: getattr(rec, n, None))
    key = get("id")
    if key is None:
        key = get("key")
    if key is None:
        raise TypeError(f"records[{index}]: no id")
    out = {"key": str(key) if isinstance(key, int) else _key(key)}
    fp = get("fp")
    if fp is None:
        fp = get("fingerprint")
    text = get("text")
    if text is not None:
        out["text"] = text.decode("utf-8") if isinstance(text, bytes) else text
        if html or get("html"):
            out["html"] = True
    elif fp is not None:
        out["fingerprint"] = fp if isinstance(fp, str) else _hex(fp)
    else:
        raise TypeError(f"records[{index}]: neither text nor fp")
    for name in ("score", "time"):
        if get(name) is not None:
            out[name] = get(name)
    return out


class _Queries:
    """query and query_text over a _query(body, k, limit) of the class's
    own: one store's (Client) or every shard's, merged (Fleet)."""

    def _query(self, body: dict[str, Any], k: Optional[int], limit: Optional[int]) -> list[Match]:
        raise NotImplementedError

    def query(self, fingerprint: int, k: Optional[int] = None,
              limit: Optional[int] = None) -> list[Match]:
        """POST /v1/query by fingerprint: the stored documents within k, the
        closest first -- at most limit of them, the server's default (100)
        without one, 0 the server's maximum (its --max-batch)."""
        return self._query({"fingerprint": _hex(fingerprint)}, k, limit)

    def query_text(self, text: str, k: Optional[int] = None, limit: Optional[int] = None, *,
                   html: bool = False) -> list[Match]:
        body: dict[str, Any] = {"text": text}
        if html:
            body["html"] = True
        return self._query(body, k, limit)


class Client(_Queries):
    """A `neardup serve` server, with the method names of Database."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0, *,
                 cafile: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        """url: http://HOST:PORT or https://HOST:PORT (a server with
        --tls-cert, or behind a TLS proxy). An https server's certificate
        is verified against the system's authorities, or those of cafile
        (PEM; a self-signed certificate is its own), or as ssl_context
        says."""
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"expected an http:// or https://HOST:PORT url, got {url!r}")
        if u.scheme == "http" and (cafile is not None or ssl_context is not None):
            raise ValueError("cafile and ssl_context are for an https:// url")
        if cafile is not None and ssl_context is not None:
            raise ValueError("give cafile or ssl_context, not both")
        self.url = url.rstrip("/")
        self._host = u.hostname
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._ssl: Optional[ssl.SSLContext] = None
        if u.scheme == "https":
            self._ssl = ssl_context or ssl.create_default_context(cafile=cafile)
        self._token = token
        self._timeout = timeout
        self._local = threading.local()

    # ---- transport ---------------------------------------------------------
    def _conn(self) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None:
            if self._ssl is not None:
                c = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout,
                                                context=self._ssl)
            else:
                c = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.conn = c
        return c

    def _call(self, method: str, path: str, body: Optional[dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        for attempt in (0, 1):
            c = self._conn()
            try:
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                raw = r.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                # a keep-alive connection the server closed (idle timeout)
                c.close()
                self._local.conn = None
                if attempt:
                    raise
        if r.getheader("Connection", "").lower() == "close":
            c.close()
            self._local.conn = None
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = raw.decode("utf-8", "replace")
        if r.status != 200:
            err = answer.get("error", {}) if isinstance(answer, dict) else {}
            cls = _CLASSES.get(r.status, ServerError)
            raise cls(r.status, err.get("code", "error"), err.get("message", str(answer)))
        return answer

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the Database calls ------------------------------------------------
    @staticmethod
    def _one(key: Optional[Key], k: Optional[int], score: float, time: Time, sync: bool,
             **doc: Any) -> dict[str, Any]:
        body: dict[str, Any] = {m: v for m, v in doc.items() if v is not None}
        if key is not None:
            body["key"] = _key(key)
        if k is not None:
            body["k"] = k
        if score:
            body["score"] = score
        t = _time_of(time)
        if t is not None:
            body["time"] = t
        if sync:
            body["sync"] = True
        return body

    def add_if_new(self, key: Key, fingerprint: int, k: Optional[int] = None, score: float = 0.0,
                   time: Time = None, *, sync: bool = False) -> Optional[Match]:
        """POST /v1/check-and-add: None when new (stored), else the match."""
        a = self._call("POST", "/v1/check-and-add",
                       self._one(key, k, score, time, sync, fingerprint=_hex(fingerprint)))
        return None if a["new"] else _match(a["match"])

    def add_if_new_text(self, key: Key, text: str, k: Optional[int] = None, score: float = 0.0,
                        time: Time = None, *, html: bool = False,
                        sync: bool = False) -> Optional[Match]:
        """add_if_new for a text, signed by the server under the store's options."""
        a = self._call("POST", "/v1/check-and-add",
                       self._one(key, k, score, time, sync, text=text, html=html or None))
        return None if a["new"] else _match(a["match"])

    def check(self, fingerprint: int, k: Optional[int] = None) -> Optional[Match]:
        """POST /v1/check: the match add_if_new would report, storing nothing."""
        a = self._call("POST", "/v1/check", self._one(None, k, 0.0, None, False,
                                                      fingerprint=_hex(fingerprint)))
        return None if a["new"] else _match(a["match"])

    def check_text(self, text: str, k: Optional[int] = None, *,
                   html: bool = False) -> Optional[Match]:
        a = self._call("POST", "/v1/check", self._one(None, k, 0.0, None, False, text=text,
                                                      html=html or None))
        return None if a["new"] else _match(a["match"])

    def add(self, key: Key, fingerprint: int, score: float = 0.0, time: Time = None, *,
            sync: bool = False) -> None:
        """POST /v1/add: store without the check."""
        self._call("POST", "/v1/add", self._one(key, None, score, time, sync,
                                                fingerprint=_hex(fingerprint)))

    def add_text(self, key: Key, text: str, score: float = 0.0, time: Time = None, *,
                 html: bool = False, sync: bool = False) -> None:
        self._call("POST", "/v1/add", self._one(key, None, score, time, sync, text=text,
                                                html=html or None))

    def get(self, key: Key, /) -> Optional[Document]:
        """GET /v1/documents/KEY, or None."""
        try:
            d = self._call("GET", "/v1/documents/" + urllib.parse.quote(_key(key), safe=""))
        except NotFoundError:
            return None
        return Document((d["key"], int(d["fingerprint"], 16), d["score"], d["time"]))

    def __contains__(self, key: Key) -> bool:
        return self.get(key) is not None

    def delete(self, key: Key, /) -> None:
        """DELETE /v1/documents/KEY; NotFoundError when it is not stored."""
        self._call("DELETE", "/v1/documents/" + urllib.parse.quote(_key(key), safe=""))

    def _query(self, body: dict[str, Any], k: Optional[int], limit: Optional[int]) -> list[Match]:
        """POST /v1/query with body, k and limit: the matches."""
        if k is not None:
            body["k"] = k
        if limit is not None:
            body["limit"] = limit
        return [m for m in map(_match, self._call("POST", "/v1/query", body)["matches"])
                if m is not None]

    def batch(self, documents: Iterable[Any], k: Optional[int] = None, add: bool = False, *,
              html: bool = False, sync: bool = False) -> list[Optional[BatchMatch]]:
        """POST /v1/batch: as Database.batch (one request, one group)."""
        docs = [_doc_json(r, html, i) for i, r in enumerate(documents)]
        body: dict[str, Any] = {"documents": docs, "add": add}
        if k is not None:
            body["k"] = k
        if sync:
            body["sync"] = True
        out: list[Optional[BatchMatch]] = []
        for r in self._call("POST", "/v1/batch", body)["results"]:
            out.append(None if r is None else BatchMatch(
                (r["key"], int(r["fingerprint"], 16), r["distance"], r.get("index"),
                 r.get("resemblance"))))
        return out

    def stats(self, full: bool = False) -> dict[str, Any]:
        """GET /v1/stats: documents, fingerprints, the server's k and
        min_resemblance; with full, also the figures that read every table
        (Database.stats's members)."""
        return dict(self._call("GET", "/v1/stats?full=1" if full else "/v1/stats"))

    def __len__(self) -> int:
        return int(self.stats()["documents"])

    def healthy(self) -> bool:
        """GET /healthz answered 200."""
        try:
            return bool(self._call("GET", "/healthz"))
        except (OSError, ServerError):
            return False

    def wait_ready(self, seconds: float = 10.0) -> None:
        """Wait until the server answers /healthz (after starting it)."""
        until = _time.monotonic() + seconds
        while not self.healthy():
            if _time.monotonic() > until:
                raise TimeoutError(f"{self.url}: no answer within {seconds} s")
            _time.sleep(0.05)
