"""neardup.Client against `neardup serve` on a free loopback port: the
calls of Database with the same answers, race-free check-and-add from many
threads, the token, limits, malformed bodies, the drain on SIGTERM; over
TLS (https://, a self-signed certificate made by openssl)."""

import http.client
import json
import random
import shutil
import signal
import ssl
import subprocess
import threading

import pytest

import neardup
from serve_util import Server


@pytest.fixture
def server(cli, tmp_path):
    s = Server(cli, str(tmp_path / "srv.nd"))
    yield s
    rc, err = s.stop()
    assert rc == 0, err


def flip(fp, *bits):
    for b in bits:
        fp ^= 1 << b
    return fp


def test_same_answers_as_database(server, tmp_path):
    """One sequence of calls on an embedded Database and on a Client."""
    rnd = random.Random(7)
    fps = [rnd.getrandbits(64) for _ in range(40)]
    ops = []
    for i, fp in enumerate(fps):
        ops.append(("add_if_new", f"doc{i}", fp))
        ops.append(("add_if_new", f"near{i}", flip(fp, 3, 40)))
    with neardup.Database(str(tmp_path / "local.nd"), create=True, fingerprint_only=True,
                          docs=100_000) as db, server.client() as c:
        for _, key, fp in ops:
            a, b = db.add_if_new(key, fp, time=100), c.add_if_new(key, fp, time=100)
            assert (a is None) == (b is None)
            if a is not None:
                assert (a.key, a.fingerprint, a.distance, a.score, a.time) == \
                    (b.key, b.fingerprint, b.distance, b.score, b.time)
        assert c.get("doc3") == db.get("doc3")
        assert c.get("missing") is None and db.get("missing") is None
        assert c.query(flip(fps[5], 1), k=3) == db.query(flip(fps[5], 1), k=3)
        recs = [("b0", fps[0]), ("b1", flip(fps[0], 9)), ("b2", rnd.getrandbits(64)),
                ("b3", flip(fps[30], 2))]
        assert c.batch(recs) == db.batch(recs)
        assert c.batch(recs, add=True) == db.batch(recs, add=True)
        c.delete("doc3")
        db.delete("doc3")
        with pytest.raises(neardup.NotFoundError):
            c.delete("doc3")
        assert c.get("doc3") is None
        assert c.stats()["documents"] == db.stats()["documents"] == len(c)
        c.add("plain", 12345, score=0.5, time=7)
        assert c.get("plain") == neardup.Document(("plain", 12345, 0.5, 7))


def test_texts_resemblance_store(cli, tmp_path):
    s = Server(cli, str(tmp_path / "r.nd"), fingerprint_only=False)
    try:
        c = s.client()
        text = "the quick brown fox jumps over the lazy dog " * 5
        assert c.add_if_new_text("a", text) is None
        m = c.add_if_new_text("b", text + "again")
        assert m is not None and m.key == "a" and m.resemblance > 0.85
        assert [x.key for x in c.query_text(text)][:1] in (["a"], ["b"])
        assert c.check_text(text).key in ("a", "b")
        with pytest.raises(neardup.InvalidArgumentError):
            c.add_if_new("c", 42)  # a resemblance store needs the text
    finally:
        assert s.stop()[0] == 0


def race(client_of, n_threads, send):
    """n_threads call send(client, i) at once; their answers."""
    barrier = threading.Barrier(n_threads)
    out = [None] * n_threads
    errors = []

    def run(i):
        c = client_of()
        try:
            c.healthy()  # connect first, so the sends start together
            barrier.wait()
            out[i] = send(c, i)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
        finally:
            c.close()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    return out


def test_check_and_add_is_race_free(server):
    """Many clients send near-duplicates of one fingerprint at once:
    exactly one is new, every other matches a stored one."""
    rnd = random.Random(11)
    for round_ in range(6):
        base = rnd.getrandbits(64)
        answers = race(server.client, 32,
                       lambda c, i: c.add_if_new(f"r{round_}-{i}", flip(base, i % 3)))
        assert sum(a is None for a in answers) == 1, answers
    assert server.client().stats()["documents"] == 6


def test_check_and_add_race_free_texts(cli, tmp_path):
    s = Server(cli, str(tmp_path / "r.nd"), fingerprint_only=False)
    try:
        text = "a page copied by many crawlers at the same moment, word for word. " * 4
        answers = race(s.client, 24, lambda c, i: c.add_if_new_text(f"t{i}", text))
        assert sum(a is None for a in answers) == 1
    finally:
        assert s.stop()[0] == 0


def test_group_commit_groups(server):
    """Concurrent writes share commits: fewer groups than documents."""
    race(server.client, 32,
         lambda c, i: [c.add_if_new(f"g{i}-{j}", random.getrandbits(64)) for j in range(20)])
    m = metrics(server)
    assert m["neardup_commit_group_documents_total"] == 640
    assert m["neardup_documents_added_total"] <= 640
    assert m["neardup_commit_groups_total"] <= 640


def metrics(server):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/plain")
    out = {}
    for line in r.read().decode().splitlines():
        if line and not line.startswith("#") and "{" not in line:
            name, value = line.split()
            out[name] = float(value)
    c.close()
    return out


def raw(port, method, path, body=b"", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def test_malformed_bodies_fuzz(server):
    """Random, truncated and mistyped JSON: always a 4xx with a JSON error,
    and the server keeps answering."""
    rnd = random.Random(5)
    good = json.dumps({"key": "k", "fingerprint": "00000000000000ff", "score": 1.5,
                       "time": 5, "k": 3}).encode()
    batch = json.dumps({"documents": [{"key": "a", "fingerprint": "0123456789abcdef"}],
                        "add": True}).encode()
    cases = [b"", b"null", b"[]", b"{}", b'{"key":1}', b'{"key":"a","fingerprint":"xyz"}',
             b'{"key":"a","fingerprint":"00","text":"x"}', b'{"key":"","text":"x"}',
             b'{"key":"a","text":"x","k":99}', b'{"key":"a","text":"x","bogus":1}',
             b'{"key":"a","key":"b","text":"x"}', b'{"documents":{}}',
             b'{"documents":[1]}', b'{"key":"a","text":"x","time":"now"}',
             b"\xff\xfe\x00", b'{"key":"\xff","text":"x"}']
    for _ in range(150):
        src = rnd.choice([good, batch])
        kind = rnd.randrange(3)
        if kind == 0:
            cases.append(src[:rnd.randrange(len(src))])
        elif kind == 1:
            b = bytearray(src)
            for _ in range(rnd.randrange(1, 4)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            cases.append(bytes(b))
        else:
            cases.append(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 64))))
    paths = ["/v1/check", "/v1/check-and-add", "/v1/add", "/v1/batch", "/v1/query"]
    for i, body in enumerate(cases):
        status, data = raw(server.port, "POST", paths[i % len(paths)], body)
        assert status < 500, (body, status, data)
        if status != 200:
            assert 400 <= status < 500
            assert json.loads(data)["error"]["status"] == status
    assert server.client().healthy()
    assert raw(server.port, "GET", "/v1/nothing")[0] == 404
    assert raw(server.port, "GET", "/v1/check")[0] == 405
    assert raw(server.port, "PUT", "/v1/documents/x")[0] == 405


def test_token_and_limits(cli, tmp_path):
    tok = tmp_path / "token"
    tok.write_text("s3cret-token-0123456789\n")
    s = Server(cli, str(tmp_path / "t.nd"), "--token-file", str(tok), "--max-body", "2000",
               "--max-batch", "3")
    try:
        with pytest.raises(PermissionError) as e:
            s.client().add_if_new("a", 1)
        assert e.value.status == 401
        with pytest.raises(PermissionError) as e:
            s.client(token="wrong-token-0123456789").add_if_new("a", 1)
        assert e.value.status == 403
        with pytest.raises(PermissionError):
            s.client().delete("a")
        with pytest.raises(PermissionError):
            s.client().batch([("a", 1)], add=True)
        c = s.client(token="s3cret-token-0123456789")
        assert c.add_if_new("a", 1) is None
        assert s.client().get("a").fingerprint == 1  # reads need no token
        assert s.client().batch([("b", 1)]) != [None]  # nor a check
        with pytest.raises(neardup.LimitError):
            c.batch([(f"k{i}", i) for i in range(4)], add=True)
        with pytest.raises(neardup.LimitError):
            c.add_if_new_text("big", "x" * 3000)
    finally:
        assert s.stop()[0] == 0


def test_sigterm_drains(cli, tmp_path):
    """SIGTERM while clients add: exit 0, every acknowledged key stored."""
    path = str(tmp_path / "d.nd")
    s = Server(cli, path)
    acked, stop = [], threading.Event()

    def writer(t):
        c = s.client()
        i = 0
        while not stop.is_set():
            key = f"w{t}-{i}"
            try:
                c.add_if_new(key, random.getrandbits(64))
            except (OSError, neardup.Error, http.client.HTTPException):
                return
            acked.append(key)
            i += 1

    ts = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    for t in ts:
        t.start()
    threading.Event().wait(0.5)
    rc, err = s.stop(signal.SIGTERM)
    stop.set()
    for t in ts:
        t.join()
    assert rc == 0, err
    assert "store closed" in err
    assert acked
    with neardup.Database(path, readonly=True) as db:
        missing = [k for k in acked if db.get(k) is None]
    assert not missing


def _self_signed(tmp_path):
    """A certificate for 127.0.0.1 and its key (PEM files), or a skip."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, crt = tmp_path / "tls.key", tmp_path / "tls.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(crt)], check=True, capture_output=True)
    return str(crt), str(key)


def test_https(cli, tmp_path):
    """An https:// Client verifies the server against cafile (or an
    ssl_context) and makes the same calls; without the certificate it is
    refused; cafile with an http:// url is a mistake said at once."""
    crt, key = _self_signed(tmp_path)
    s = Server(cli, str(tmp_path / "tls.nd"), "--tls-cert", crt, "--tls-key", key)
    try:
        assert s.url.startswith("https://127.0.0.1:")
        with neardup.Client(s.url, cafile=crt) as c:
            assert c.add_if_new("a", 0xFF00) is None
            m = c.add_if_new("b", 0xFF01)
            assert m is not None and m.key == "a" and m.distance == 1
            assert c.get("a").fingerprint == 0xFF00
            assert [x.key for x in c.query(0xFF00, k=0)] == ["a"]
        ctx = ssl.create_default_context(cafile=crt)
        with neardup.Client(s.url, ssl_context=ctx) as c:
            assert len(c) == 1 and c.healthy()
        with pytest.raises(ssl.SSLCertVerificationError):
            neardup.Client(s.url).stats()
        # plain HTTP to the TLS port: no answer
        with pytest.raises((http.client.HTTPException, OSError)):
            neardup.Client(s.url.replace("https:", "http:"), timeout=5).stats()
    finally:
        rc, err = s.stop()
        assert rc == 0, err
    with pytest.raises(ValueError):
        neardup.Client("http://127.0.0.1:7340", cafile=crt)
    with pytest.raises(ValueError):
        neardup.Client("ftp://127.0.0.1:7340")
