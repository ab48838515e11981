"""A store created with min_resemblance, from Python: texts are signed
under the store's options, an edited copy far in simhash is caught with its
resemblance, a text of shared vocabulary is not, bare fingerprints are
refused, and a fingerprint-only store answers the text calls by
fingerprint."""

import random

import pytest

import neardup

BASE = ("the licensee may copy and distribute verbatim copies of the program source code "
        "as received in any medium provided that each copy carries an appropriate copyright "
        "notice and a disclaimer of warranty and keeps intact all the notices that refer to "
        "this license and to the absence of any warranty")
COPY = BASE.replace("each copy carries", "each copy conspicuously carries")


def shuffled(text, seed=7):
    words = text.split()
    random.Random(seed).shuffle(words)
    return " ".join(words)


def test_default_store_verifies_by_resemblance(tmp_path):
    with neardup.Database(str(tmp_path / "default"), create=True) as db:
        assert db.min_resemblance == 0.85
        assert db.add_if_new_text("orig", BASE, time=1000) is None
        with pytest.raises(neardup.Error):
            db.add("bare", 0x1234)  # a bare fingerprint: texts are needed
    with neardup.Database(str(tmp_path / "default")) as db:  # opens as made
        assert db.min_resemblance == 0.85 and len(db) == 1
    with neardup.Database(str(tmp_path / "fp"), create=True, fingerprint_only=True) as db:
        assert db.min_resemblance == 0.0
        db.add("bare", 0x1234)
        assert len(db) == 1
    with pytest.raises(neardup.Error):
        neardup.Database(str(tmp_path / "both"), create=True, fingerprint_only=True,
                         min_resemblance=0.9)
    with pytest.raises(neardup.Error):  # asks for what the store is not
        neardup.Database(str(tmp_path / "default"), fingerprint_only=True)


def test_resemblance_store(tmp_path):
    with neardup.Database(str(tmp_path / "rs"), create=True, docs=100_000,
                          min_resemblance=0.85) as db:
        assert db.min_resemblance == 0.85
        assert db.add_if_new_text("orig", BASE, time=1000) is None
        m = db.add_if_new_text("copy", COPY, time=1001)
        assert m is not None and m.key == "orig"
        assert m.distance > db.k  # beyond simhash's reach
        assert 0.85 <= m.resemblance <= 1.0
        assert len(tuple(m)) == 5  # resemblance is an attribute, not a tuple item
        assert db.add_if_new_text("shuffled", shuffled(BASE)) is None
        assert len(db) == 3  # the copy is stored too
        found = db.query_text(COPY)
        assert [x.key for x in found][:2] == ["copy", "orig"]
        assert found[0].resemblance == 1.0 and found[0].distance == 0
        assert all(x.resemblance >= 0.85 for x in found)
        assert db.query_text("nothing like any of them at all, fish and birds") == []
        db.add_text("again", BASE)
        assert db.get("again").fingerprint == db.fingerprint(BASE)
        with pytest.raises(neardup.InvalidArgumentError):
            db.add("bare", 0x1234)
        with pytest.raises(neardup.InvalidArgumentError):
            db.add_if_new("bare", 0x1234)
        # a fingerprint query answers by distance alone, without resemblance
        q = db.query(db.fingerprint(BASE), k=0)
        assert {x.key for x in q} == {"orig", "again"}
        assert all(x.resemblance is None for x in q)
        db.delete("orig")
        db.verify()
    with neardup.Database(str(tmp_path / "rs"), min_resemblance=0.85) as db:
        assert db.min_resemblance == 0.85 and len(db) == 3
    with pytest.raises(neardup.MismatchError):
        neardup.Database(str(tmp_path / "rs"), min_resemblance=0.9)
    with pytest.raises(ValueError):
        neardup.Database(str(tmp_path / "bad"), create=True, min_resemblance=1.5)


def test_fingerprint_store_text_calls(db):
    assert db.min_resemblance == 0.0
    assert db.add_if_new_text("orig", BASE) is None
    m = db.add_if_new_text("copy", COPY)  # 10 bits away: new by fingerprint
    assert m is None
    m = db.add_if_new_text("same", BASE)
    assert m.key == "orig" and m.distance == 0 and m.resemblance is None
    assert [x.key for x in db.query_text(BASE, k=0)] == ["orig"]


def test_sign_and_resemblance(tmp_path, db):
    """sign() gives what add_text stores (one tokenisation): the store's
    fingerprint and a 176-byte sketch; resemblance() of two sketches is
    the estimate a resemblance store decides by."""
    with neardup.Database(str(tmp_path / "rs"), create=True, docs=100_000,
                          min_resemblance=0.85) as rs:
        fp, sk = rs.sign(BASE)
        assert fp == rs.fingerprint(BASE) == neardup.fingerprint(BASE)
        assert isinstance(sk, bytes) and len(sk) == 176
        assert rs.sign(BASE.encode()) == (fp, sk)
        fp2, sk2 = rs.sign(COPY)
        assert neardup.distance(fp, fp2) > rs.k
        r = neardup.resemblance(sk, sk2)
        assert 0.85 <= r < 1.0
        assert neardup.resemblance(sk, sk) == 1.0
        assert neardup.resemblance(sk, rs.sign(shuffled(BASE))[1]) < 0.5
        # the store's decision reports the same estimate
        rs.add_text("orig", BASE)
        m = rs.add_if_new_text("copy", COPY)
        assert m.key == "orig" and m.resemblance == pytest.approx(r)
        html_fp, _ = rs.sign("<p>" + BASE + "</p>", html=True)
        assert html_fp == fp
    # a fingerprint-only store signs too (its texts' sketches exist)
    assert db.sign(BASE) == (fp, sk)
    with pytest.raises(ValueError):
        neardup.resemblance(sk, sk[:-1])
    with pytest.raises(TypeError):
        neardup.resemblance(sk)


def test_batch_and_add_many_with_sketches(tmp_path, db):
    """Documents (key, fp, score, time, sketch) from sign(): batch decides
    by resemblance in such a store (BatchMatch.resemblance), add_many
    stores the sketches; without a sketch such a store refuses them."""
    with neardup.Database(str(tmp_path / "rs"), create=True, docs=100_000,
                          min_resemblance=0.85) as rs:
        fp0, sk0 = rs.sign(BASE)
        fp1, sk1 = rs.sign(COPY)
        fp2, sk2 = rs.sign(shuffled(BASE))
        docs = [("orig", fp0, 0.0, 1000, sk0), ("copy", fp1, 0.0, 1000, sk1),
                ("shuffled", fp2, 0.0, 1000, sk2)]
        out = rs.batch(docs)
        assert out[0] is None and out[2] is None
        assert out[1].key == "orig" and out[1].match_index == 0
        assert out[1].resemblance == pytest.approx(neardup.resemblance(sk0, sk1))
        assert len(tuple(out[1])) == 4
        assert len(rs) == 0
        out = rs.batch(docs, add=True)
        assert out[1].key == "orig" and len(rs) == 3  # every document stored
        m = rs.add_if_new_text("again", COPY)
        assert m.key in ("copy", "orig") and m.resemblance >= 0.85
        rs.add_many([("many", fp1, 0.0, None, sk1)])
        assert rs.query_text(COPY)[0].resemblance == 1.0
        rs.verify()
        with pytest.raises(neardup.InvalidArgumentError):
            rs.batch([("bare", fp0)])
        with pytest.raises(neardup.InvalidArgumentError):
            rs.add_many([("bare", fp0, 0.0, None, None)])
        with pytest.raises(ValueError, match=r"records\[0\]: sketch"):
            rs.batch([("short", fp0, 0.0, None, sk0[:10])])
        assert len(rs) == 5
    # a fingerprint-only store takes and ignores sketches: no resemblance
    out = db.batch([("a", fp0, 0.0, None, sk0), ("b", fp0, 0.0, None, sk0)])
    assert out[0] is None and out[1].match_index == 0 and out[1].resemblance is None
