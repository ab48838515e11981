"""Every Database method on small stores: results, defaults, keys, times."""

import datetime
import pathlib
import os
import time

import pytest

import neardup


def test_add_get_delete(db):
    assert len(db) == 0 and db.get("a") is None and "a" not in db
    db.add("a", 0x1234, score=2.5, time=1000)
    doc = db.get("a")
    assert tuple(doc) == ("a", 0x1234, 2.5, 1000)
    assert (doc.key, doc.fingerprint, doc.score, doc.time) == ("a", 0x1234, 2.5, 1000)
    assert "a" in db and b"a" in db and len(db) == 1
    db.add("a", 0x9999)  # replaces; time defaults to now
    doc = db.get("a")
    assert doc.fingerprint == 0x9999 and abs(doc.time - time.time()) < 60 and doc.score == 0
    db.delete("a")
    assert db.get("a") is None and len(db) == 0
    with pytest.raises(neardup.NotFoundError) as e:
        db.delete("a")
    assert e.value.code == -2 and e.value.name == "not found"


def test_add_if_new(db):
    assert db.add_if_new("first", 0xF0F0, score=1.0, time=50) is None
    m = db.add_if_new("second", 0xF0F1, time=60)  # 1 bit away: not stored
    assert tuple(m) == ("first", 0xF0F0, 1, 1.0, 50)
    assert m.distance == 1 and db.get("second") is None
    assert db.add_if_new("third", 0xF0F1, k=0) is None  # k=0: only equal ones
    assert db.add_if_new("far", 0xF0F0 ^ 0xF000) is None  # 4 and 5 bits > k=3
    # the closest is reported (ties: smaller fingerprint, then key)
    assert db.add_if_new("x", 0xF0F0 ^ 0b110).key == "first"  # 2 bits; third: 3
    # the match is the key itself: its last-seen time is refreshed
    assert db.add_if_new("first", 0xF0F0, time=99).key == "first"
    assert db.get("first").time == 99
    assert len(db) == 3


def test_query(db):
    base = 0x0123456789ABCDEF
    for i, flips in enumerate([0, 1, 0b11, 0b111, 0b1111]):
        db.add(f"d{i}", base ^ flips, score=i, time=i)
    got = db.query(base)
    assert [(m.key, m.distance) for m in got] == [("d0", 0), ("d1", 1), ("d2", 2), ("d3", 3)]
    assert tuple(got[2]) == ("d2", base ^ 0b11, 2, 2.0, 2)
    assert [m.key for m in db.query(base, 4)] == ["d0", "d1", "d2", "d3", "d4"]
    assert [m.key for m in db.query(base, k=1)] == ["d0", "d1"]
    assert [m.key for m in db.query(base, limit=2)] == ["d0", "d1"]
    assert len(db.query(base, first=True)) == 1
    db.add("d0bis", base)
    only = db.query(base, 0, fingerprints_only=True)
    assert len(only) == 1 and only[0].key is None and only[0].fingerprint == base
    assert db.query(~base & (2**64 - 1)) == []
    with pytest.raises(neardup.InvalidArgumentError):
        db.query(base, k=neardup.MAX_K + 1)


def test_batch(db):
    db.add("stored", 0xAAAA)
    docs = [("b0", 0xAAAB), ("b1", 0x5555_0000_0000), ("b2", 0x5555_0000_0001, 1.0, 7),
            (b"b3", 0x1234_5678_9ABC_DEF0)]
    ans = db.batch(docs)
    assert tuple(ans[0]) == ("stored", 0xAAAA, 1, None)
    assert ans[1] is None and ans[3] is None
    assert tuple(ans[2]) == ("b1", 0x5555_0000_0000, 1, 1)
    assert len(db) == 1  # checked only
    ans = db.batch(iter(docs), add=True)  # any iterable
    assert [a is None for a in ans] == [False, True, False, True]
    assert len(db) == 3 and db.get("b3").fingerprint == 0x1234_5678_9ABC_DEF0
    assert db.batch([]) == []
    assert db.batch([("c", 0xAAAA ^ 0b1111)], k=4)[0].key == "stored"
    with pytest.raises(TypeError):
        db.batch([("only-a-key",)])
    with pytest.raises(TypeError):
        db.batch([("k", 1, 0.0, 0, "extra")])
    with pytest.raises(TypeError):
        db.batch(5)


def test_add_many(db):
    db.add_many([("a", 1), ("b", 2, 0.5), ("c", 3, 0.0, 10), ("a", 4)])
    assert len(db) == 3 and db.get("a").fingerprint == 4 and db.get("c").time == 10
    with pytest.raises(neardup.LimitError):  # nothing stored on failure
        db.add_many([("d", 5), ("e" * (neardup.MAX_KEY_LEN + 1), 6)])
    assert db.get("d") is None
    db.add_many([])


def test_keys_str_and_bytes(db_path):
    raw = b"\xff\xfe-not-utf8"
    with neardup.Database(db_path, create=True, fingerprint_only=True) as db:
        db.add("café", 1)
        db.add(raw, 2)
        db.add(memoryview(b"mv"), 3)
        assert db.get(b"caf\xc3\xa9").key == "café"
        key = db.get(raw).key  # str, with the bad bytes escaped
        assert isinstance(key, str) and os.fsencode(key) == raw
        assert db.get(key).fingerprint == 2  # and it round-trips
        assert db.get("mv").fingerprint == 3
        with pytest.raises(TypeError):
            db.add(12, 1)
        with pytest.raises(UnicodeEncodeError):  # a surrogate that escapes nothing
            db.add("\ud800", 1)
    with neardup.Database(db_path, bytes_keys=True) as db:
        assert db.bytes_keys
        assert db.get("café").key == "café".encode()
        assert db.query(2, 0)[0].key == raw
        assert sorted(d.key for d in db) == sorted([b"caf\xc3\xa9", raw, b"mv"])


def test_times(db):
    when = datetime.datetime(2026, 1, 2, tzinfo=datetime.timezone.utc)
    db.add("dt", 1, time=when)
    db.add("float", 2, time=12.9)
    assert db.get("dt").time == int(when.timestamp())
    assert db.get("float").time == 12
    with pytest.raises(TypeError):
        db.add("bad", 3, time="yesterday")


def test_expire(db):
    now = int(time.time())
    db.add("old", 1, time=100)
    db.add("week", 2, time=now - 7 * 86400)
    db.add("new", 3)
    assert db.expire(101) == 1 and db.get("old") is None
    assert db.expire(datetime.timedelta(days=8)) == 0
    assert db.expire(datetime.timedelta(days=6)) == 1 and db.get("week") is None
    assert db.expire(datetime.datetime.fromtimestamp(now - 60)) == 0
    assert len(db) == 1
    with pytest.raises(TypeError):
        db.expire(None)


def test_stats_compact_verify(db):
    db.add_many([(f"k{i}", i * 0x9E3779B97F4A7C15 % 2**64) for i in range(1000)])
    s = db.stats()
    assert s["documents"] == 1000 and s["fingerprints"] == 1000 and s["disk_bytes"] > 0
    assert len(s["tables"]) >= 1
    assert all(t["entries"] == 1000 for t in s["tables"])
    assert set(s["tables"][0]) == {"prefix_bits", "entries", "runs", "fresh", "bytes",
                                   "bits_per_entry"}
    db.compact()
    assert all(t["fresh"] == 0 and t["runs"] > 0 for t in db.stats()["tables"])
    db.verify()


def test_backup(db, tmp_path):
    db.add("a", 42)
    db.backup(tmp_path / "copy")  # a PathLike
    with neardup.Database(str(tmp_path / "copy")) as copy:
        assert copy.get("a").fingerprint == 42
    with pytest.raises(neardup.ExistsError):
        db.backup(tmp_path / "copy")


def test_settings(db_path):
    with neardup.Database(db_path, create=True, fingerprint_only=True, k=6, docs=10_000, features="words") as db:
        assert db.k == 6 and db.path == db_path and not db.readonly
        assert db.fp_config.startswith("fp2;words:1;")
        text = "alpha beta gamma"
        assert db.fingerprint(text) == neardup.fingerprint(text, features="words")
        html = "<p>alpha beta</p>"
        assert db.fingerprint(html, html=True) == neardup.fingerprint(
            html, html=True, features="words")
        db.add("a", 0)
        assert db.add_if_new("b", 0b11_1111) is not None  # the default k is the store's
    with neardup.Database(db_path, readonly=True) as db:
        assert db.readonly and db.k == 6 and len(db) == 1
    with neardup.Database(db_path, k=6, features="words"):
        pass  # the stored settings, given again, are accepted
    db = neardup.Database(db_path)
    assert "closed" not in repr(db) and db_path in repr(db)
    db.close()
    assert "closed" in repr(db)


def test_context_and_close(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)
    with db as same:
        assert same is db and not db.closed
    assert db.closed
    db.close()  # closing twice is fine
    for call in (lambda: db.add("a", 1), lambda: db.query(1), lambda: len(db),
                 lambda: db.get("a"), lambda: list(db), lambda: db.stats(),
                 lambda: db.fp_config, lambda: db.batch([("a", 1)])):
        with pytest.raises(neardup.InvalidArgumentError, match="closed"):
            call()
    with pytest.raises(neardup.Error):
        with db:
            pass


def test_stubs_match_the_module():
    """__init__.pyi and the extension agree: every public name exists, and
    every function and Database method has the stub's parameters (names,
    kinds, defaults) as inspect.signature reads them from the docstrings."""
    import ast
    import inspect
    stub = ast.parse((pathlib.Path(neardup.__file__).with_name("__init__.pyi")).read_text())

    none = object()  # no default

    def params(fn):
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults = [none] * (len(positional) - len(a.defaults)) + list(a.defaults)
        kinds = ["POSITIONAL_ONLY"] * len(a.posonlyargs) + ["POSITIONAL_OR_KEYWORD"] * len(a.args)
        out = list(zip([x.arg for x in positional], kinds, defaults))
        out += [(x.arg, "KEYWORD_ONLY", d or none) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
        return [(n, k, none if d is none else ast.literal_eval(d)) for n, k, d in out
                if n != "self"]

    def runtime(obj):
        return [(p.name, p.kind.name, none if p.default is p.empty else p.default)
                for p in inspect.signature(obj).parameters.values() if p.name != "self"]

    def overloaded(node):
        return any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)

    # Of a function with @overload variants, the last variant states every
    # parameter with its runtime default: that one is compared.
    last = {n.name: n for n in stub.body if isinstance(n, ast.FunctionDef)}

    # A Protocol (the shape of a record object) exists for the type
    # checker only.
    def typing_only(node):
        return isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "Protocol" for b in node.bases)

    stub.body = [n for n in stub.body if not typing_only(n)]
    checked = 0
    for node in stub.body:
        if isinstance(node, ast.FunctionDef) and overloaded(node) and last[node.name] is not node:
            continue
        if isinstance(node, ast.FunctionDef):
            assert runtime(getattr(neardup, node.name)) == params(node), node.name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(neardup, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    member = getattr(cls, item.name)
                    if item.name == "__init__":
                        assert runtime(cls) == params(item)
                    elif not item.name.startswith("__") and callable(member):
                        assert runtime(member) == params(item), item.name
                    checked += 1
    assert checked > 25
    names = {n.name for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    # and what the stub re-exports from the package's pure-Python modules
    names |= {a.asname or a.name for n in stub.body if isinstance(n, ast.ImportFrom)
              and n.level == 1 for a in n.names}
    assert names <= set(dir(neardup)) and set(neardup.__all__) - {"__version__"} <= (
        names | {n.target.id for n in stub.body if isinstance(n, ast.AnnAssign)})
