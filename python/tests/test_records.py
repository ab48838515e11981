"""Records: every call taking many documents (dedupe, Dedupe.add_many,
Database.add_many, batch, load) reads tuples, dicts (the JSONL reader's
member names) and objects with .id the same way, through one conversion
(python/neardup/py_records.c), and refuses anything else with a TypeError
naming the index and the type; load() and sign_many()."""

import collections
import dataclasses
import sys

import pytest

import neardup

TEXT = "the quick brown fox jumps over the lazy dog while the cat sleeps in the sun"
OTHER = "an entirely different sentence about rivers, mountains and the open sea"


@dataclasses.dataclass
class Doc:
    id: object
    text: object = None
    fp: object = None
    score: float = 0.0


Named = collections.namedtuple("Named", "text id")  # fields out of tuple order


def test_dedupe_dicts_are_records_not_iterables():
    docs = [{"id": "a", "text": TEXT}, {"id": "b", "text": TEXT}, {"id": "c", "text": OTHER}]
    assert neardup.dedupe(docs, out="keep") == ["a", "c"]
    assert neardup.dedupe(docs, out="drop") == ["b"]
    # other members are ignored, None is absent, an int id is its decimal
    docs = [{"id": 1, "text": TEXT, "url": "x", "score": None},
            {"id": 2, "text": TEXT, "html": False}]
    assert neardup.dedupe(docs, out="drop") == ["2"]


def test_dedupe_objects_and_named_tuples():
    assert neardup.dedupe([Doc("x", TEXT), Doc("y", TEXT)], out="drop") == ["y"]
    assert neardup.dedupe([Named(TEXT, "p"), Named(TEXT, "q")], out="drop") == ["q"]
    assert neardup.dedupe([["l1", TEXT], ["l2", TEXT]], out="drop") == ["l2"]
    fp = neardup.fingerprint(TEXT)
    pairs = neardup.dedupe([{"id": "f1", "fp": fp}, Doc("f2", fp=f"{fp ^ 1:016x}")],
                           min_resemblance=0)
    assert [(p.key1, p.key2, p.distance) for p in pairs] == [("f1", "f2", 1)]


def test_html_member():
    html = f"<html><head><title>t</title></head><body><p>{TEXT}</p></body></html>"
    with neardup.Dedupe() as d:
        d.add_many([{"id": "plain", "text": TEXT}, {"id": "page", "text": html, "html": True}])
        assert d.drop() == ["page"]


@pytest.mark.parametrize("bad, message", [
    ("oops", r"records\[3\]: expected a \(key, text\) tuple, a dict or an object with "
             r"\.id/\.text, got str"),
    (b"oops", r"records\[3\]: .* got bytes"),
    (5, r"records\[3\]: .* got int"),
    (None, r"records\[3\]: .* got NoneType"),
    (("k",), r"records\[3\]: expected \(key, text\[, score\]\), got a tuple of 1"),
    (("k", TEXT, 1.0, 0), r"records\[3\]: .* got a tuple of 4"),
    ({"text": TEXT}, r"records\[3\]: the dict has no \"id\""),
    ({"id": "k"}, r"records\[3\]: the dict has no \"text\" nor \"fp\""),
    ({"id": "k", "text": TEXT, "fp": 1}, r"records\[3\]: give either text or fp"),
    ({"id": True, "text": TEXT}, r"records\[3\]: a key must be str, bytes or int, not bool"),
    ({"id": 1.5, "text": TEXT}, r"records\[3\]: a key must be str or bytes, not float"),
    ({"id": "k", "text": 5}, r"records\[3\]: a text must be str or bytes, not int"),
    (Doc("k"), r"records\[3\]: the Doc has no \.text nor \.fp"),
    ({"id": "k", "fp": "xyz"}, r"records\[3\]: fp: expected an int or a string of 16 hex"),
    (("k", 2**64), r"records\[3\]: a fingerprint is an int in \[0, 2\*\*64\)"),
])
def test_bad_records_raise_type_errors_naming_the_index(bad, message):
    docs = [("a", TEXT), {"id": "b", "text": TEXT}, Doc("c", TEXT), bad]
    with pytest.raises((TypeError, ValueError), match=message):
        neardup.dedupe(docs)
    with neardup.Dedupe() as d:
        with pytest.raises((TypeError, ValueError), match=message):
            d.add_many(iter(docs))
        assert len(d) == 0 or len(d) == 3  # a group's earlier records may be added


def test_database_records(db):
    fp = 0x0123_4567_89AB_CDEF
    db.add_many([
        ("t1", fp), ("t2", fp ^ 1, 0.5, 100), ["t3", fp ^ 2],
        {"id": "d1", "fp": fp ^ 4, "score": 1.5, "time": 200, "extra": [1]},
        {"id": 7, "fp": f"{fp ^ 8:016x}"},
        Doc("o1", fp=fp ^ 16, score=2.5),
        ("x1", TEXT), {"id": "x2", "text": OTHER.encode()}, Doc("x3", TEXT),
    ])
    assert db.get("t2") == ("t2", fp ^ 1, 0.5, 100)
    assert db.get("t3").fingerprint == fp ^ 2
    assert db.get("d1") == ("d1", fp ^ 4, 1.5, 200)
    assert db.get("7").fingerprint == fp ^ 8
    assert db.get("o1").score == 2.5
    assert db.get("x1").fingerprint == db.sign(TEXT)[0] == db.fingerprint(TEXT)
    assert db.get("x2").fingerprint == db.sign(OTHER)[0]
    assert db.get("x3").fingerprint == db.get("x1").fingerprint
    ans = db.batch([{"id": "q", "text": TEXT}, Doc("r", fp=fp ^ 3)])
    assert ans[0].key in ("x1", "x3") and ans[0].distance == 0
    assert ans[1].distance == 1
    with pytest.raises(TypeError, match=r"records\[1\]: expected a \(key, fingerprint\) or "
                                        r"\(key, text\) tuple, a dict or an object with \.id "
                                        r"and \.fp or \.text, got str"):
        db.add_many([("ok", 1), "oops"])
    with pytest.raises(TypeError, match=r"records\[0\]: a sketch goes with a fingerprint"):
        db.add_many([("s", TEXT, 0.0, None, db.sign(TEXT)[1])])
    n = len(db)
    with pytest.raises(neardup.LimitError, match=r"records\[1\]: a key is 1 to 4096 bytes"):
        db.add_many([("fine", 1), ("e" * (neardup.MAX_KEY_LEN + 1), 2)])
    with pytest.raises(neardup.InvalidArgumentError, match=r"records\[0\]: a key is 1 to"):
        db.batch([("", 1)], add=True)
    assert len(db) == n and db.get("fine") is None  # records are all read first


def test_resemblance_store_records(tmp_path):
    with neardup.Database(str(tmp_path / "rs"), create=True, min_resemblance=0.85) as rs:
        fp, sketch = rs.sign(TEXT)
        rs.add_many([{"id": "signed", "fp": fp, "sketch": sketch}, ("text", OTHER)])
        ans = rs.batch([Doc("again", TEXT), ("other", OTHER)])
        assert ans[0].key == "signed" and ans[0].resemblance == 1.0
        assert ans[1].key == "text"
        with pytest.raises(ValueError, match=r"records\[0\]: sketch: a sketch is 176 bytes"):
            rs.add_many([{"id": "short", "fp": fp, "sketch": sketch[:10]}])


def test_grouped_batch_answers_as_one_batch(tmp_path):
    """batch(add=True) of more than 256 documents runs in groups; its
    answers are those of one batch (check-only batch on a fresh store),
    a match with a document of an earlier group naming its position."""
    import random
    rng = random.Random(45)
    base = [rng.getrandbits(64) for _ in range(1500)]
    docs = [(f"b{i}", fp) for i, fp in enumerate(base)]
    docs += [(f"d{i}", base[i] ^ (1 << rng.randrange(64))) for i in range(0, 1500, 7)]
    docs += [(f"b{i}", base[i]) for i in range(0, 1500, 11)]  # the same key and fingerprint
    rng.shuffle(docs)
    with neardup.Database(str(tmp_path / "a"), create=True, fingerprint_only=True) as one, \
            neardup.Database(str(tmp_path / "b"), create=True, fingerprint_only=True) as grouped:
        expect = one.batch(docs)
        got = grouped.batch(docs, add=True)
        assert got == expect
        assert [g.match_index if g else None for g in got] == \
            [e.match_index if e else None for e in expect]
        # a match more than 256 positions back crossed a group boundary
        assert any(g and g.match_index is not None and pos - g.match_index > 256
                   for pos, g in enumerate(got))
        assert len(grouped) == len({k for (k, _), a in zip(docs, got) if a is None})


def test_load(db):
    assert db.load([]) == 0
    recs = [(f"k{i}", i * 0x9E3779B97F4A7C15 % 2**64) for i in range(5000)]
    assert db.load(iter(recs)) == 5000
    assert len(db) == 5000 and db.get("k42").fingerprint == recs[42][1]
    assert db.query(recs[7][1], 0)[0].key == "k7"
    # stored keys are replaced, later records win, dicts and texts too
    assert db.load([("k1", 1), {"id": "k1", "fp": 2}, {"id": "new", "text": TEXT}]) == 1
    assert db.get("k1").fingerprint == 2 and db.get("new").fingerprint == db.sign(TEXT)[0]
    db.verify()
    with pytest.raises(TypeError, match=r"records\[1\]"):
        db.load([("x", 1), 5])
    assert db.get("x") is None  # nothing new imported


def test_load_into_resemblance_store(tmp_path):
    with neardup.Database(str(tmp_path / "rs"), create=True, min_resemblance=0.85) as rs:
        assert rs.load([("a", TEXT), {"id": "b", "text": OTHER}, Doc("c", TEXT)]) == 3
        assert len(rs) == 3
        assert rs.query_text(TEXT)[0].resemblance == 1.0


def test_load_closed_from_its_generator(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)

    def recs():
        for i in range(3000):
            if i == 2500:
                db.close()  # frees the loader between groups
            yield (f"k{i}", i)

    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        db.load(recs())
    with neardup.Database(db_path) as again:
        assert len(again) == 0


def test_sign_many(db):
    texts = [f"text {i}: " + TEXT * (1 + i % 5) for i in range(300)]
    assert db.sign_many(texts) == [db.sign(t) for t in texts]
    assert db.sign_many(t.encode() for t in texts[:3]) == [db.sign(t) for t in texts[:3]]
    html = f"<p>{TEXT}</p>"
    assert db.sign_many([html], html=True) == [db.sign(html, html=True)]
    assert db.sign_many([]) == []
    with pytest.raises(TypeError, match=r"records\[1\]: a text must be str or bytes"):
        db.sign_many(["a", 1])


def test_records_keep_no_references(db):
    """The conversion holds its references only during the call."""
    key, text, fp = "key-" + "x" * 20, TEXT + " unique", 12345
    rec_d = {"id": key, "text": text}
    rec_o = Doc(key, text)
    rec_t = (key, text)
    before = [sys.getrefcount(o) for o in (key, text, rec_d, rec_o, rec_t)]
    for _ in range(3):
        db.add_many([rec_d, rec_o, rec_t])
        db.batch([rec_d, rec_o, rec_t], add=True)
        db.load([rec_d, rec_o, rec_t])
        neardup.dedupe([rec_d, rec_o, rec_t])
        db.sign_many([text, text])
        with pytest.raises(TypeError):
            db.add_many([rec_d, rec_o, "bad"])
        with pytest.raises(TypeError):
            neardup.dedupe([rec_d, rec_o, rec_t, "bad"])
        with pytest.raises(TypeError):
            db.load([rec_d, 5])
    assert [sys.getrefcount(o) for o in (key, text, rec_d, rec_o, rec_t)] == before
    assert db.add_many([{"id": key, "fp": fp}]) is None
