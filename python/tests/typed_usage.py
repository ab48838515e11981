"""A typed use of the package, checked by `mypy --strict` against the stubs
(python/neardup/__init__.pyi) by the test python_mypy; also run by
test_typing.py, so that what type-checks also works. Not a pytest module
itself (its name does not start with test_)."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from typing import Union

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - mypy reads the branch of its target version
    from typing_extensions import assert_type

import neardup

Key = Union[str, bytes]


@dataclasses.dataclass
class Rec:
    """A record object: read by its attributes."""

    id: str
    text: str


def use(path: str) -> None:
    fp: int = neardup.fingerprint("a text to fingerprint, some words long")
    assert_type(neardup.distance(fp, fp ^ 1), int)
    assert_type(neardup.fingerprint("我們的數據庫", fold_chinese=True), int)
    with neardup.Database(path, create=True, docs=1000, fingerprint_only=True) as db:
        db.add("a", fp)
        db.add_many([("b", fp ^ 0xFF), ("c", fp ^ 0xFF00, 0.5, None)])
        match = db.add_if_new("d", fp ^ 1)
        assert_type(match, Union[neardup.Match, None])
        if match is not None:
            assert_type(match.distance, int)
        answers = db.batch([("e", fp ^ 3), ("f", fp ^ 7)])
        for a in answers:
            if a is not None:
                assert_type(a.match_index, Union[int, None])
                assert_type(a.index(a.key), int)  # tuple.index, not a field
        assert_type(db.query(fp), list[neardup.Match])
        assert_type(len(db), int)
        for doc in db:
            assert_type(doc, neardup.Document)
        sig = db.sign("a text to sign")
        assert_type(sig, tuple[int, bytes])
        assert_type(db.sign_many(["one text", b"another"]), list[tuple[int, bytes]])
        # records: tuples, dicts (the JSONL reader's members), objects with .id
        new = db.load([("g", fp ^ 0xF0F0), ("h", "a text, signed"), {"id": 5, "fp": fp ^ 0xFF0},
                       Rec(id="i", text="another text, signed")])
        assert_type(new, int)
        db.add_many([{"id": "j", "text": "<p>html</p>", "html": True}], html=False)
        assert_type(db.batch([Rec(id="k", text="a text, checked")], add=True, html=False),
                    list[Union[neardup.BatchMatch, None]])
        assert_type(neardup.resemblance(sig[1], sig[1]), float)

    docs = [("x", "the same words in the same order"), ("y", "the same words in the same order")]
    assert_type(neardup.dedupe(docs), list[neardup.Pair])
    assert_type(neardup.dedupe(docs, out="pairs"), list[neardup.Pair])
    assert_type(neardup.dedupe(docs, out="clusters"), dict[int, neardup.Cluster])
    assert_type(neardup.dedupe(docs, out="keep"), list[Key])
    assert_type(neardup.dedupe(docs, out="drop"), list[Key])
    assert_type(neardup.dedupe([{"id": "x", "text": "a text"}, Rec("y", "a text")], out="keep"),
                list[Key])
    view: str = "pairs"
    assert_type(neardup.dedupe(docs, out=view),
                Union[list[neardup.Pair], dict[int, neardup.Cluster], list[Key]])
    with neardup.Dedupe(keep="longest") as d:
        d.add("x", "a text")
        d.add_fingerprint("z", fp)
        assert_type(d.clusters(), dict[int, neardup.Cluster])
        assert_type(d.stats(), dict[str, int])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        use(tmp + "/db.nd")


if __name__ == "__main__":
    main()
