"""neardup.dedupe() and neardup.Dedupe (the library's corpus dedupe):
the same results as `neardup dedupe --out X` on the same corpus (the
shipped licence texts and edited copies of them) under each option, the
handle's contract (closed corpus, re-read results, close, errors), threads,
and memory and scratch files freed at collection."""

import gc
import json
import os
import subprocess
import threading

import pytest

import neardup
from conftest import TEXTS


def corpus():
    """(key, text, score): the licence texts, edited copies and an exact one."""
    texts = {p.name: p.read_text("utf-8") for p in sorted(TEXTS.iterdir())}
    docs = [(name, text, float(len(text) % 7)) for name, text in texts.items()]
    gpl3, apache = texts["GPL-3"], texts["Apache-2.0"]
    paras = apache.split("\n\n")
    docs += [
        ("GPL-3-header", "Retrieved on 2026-11-22 from a mirror.\n" + gpl3, 9.0),
        ("GPL-3-again", gpl3, 1.0),
        ("Apache-cut", "\n\n".join(paras[: len(paras) // 2] + paras[len(paras) // 2 + 1:]), 8.0),
        ("Apache-half", "\n\n".join(paras[: len(paras) // 2]), 2.0),
        ("MPL-2.0-words", texts["MPL-2.0"].replace("Covered Software", "covered work"), 3.0),
        ("LGPL-3+notes", texts["LGPL-3"] + "\n" + texts["BSD"], 0.5),
        ("tiny", "a few words", 0.0),
        ("tiny-too", "A few words!", 0.0),
    ]
    return docs


# Option sets: (Python keywords, the CLI's flags).
OPTIONS = {
    "default": ({}, []),
    # k 8: LGPL-3 and LGPL-3+notes are 5 bits apart, with a resemblance of 0.79
    "simhash": ({"k": 8, "min_resemblance": 0}, ["--k", "8", "--min-resemblance", "0"]),
    "k40-r70": ({"k": 40, "min_resemblance": 0.7}, ["--k", "40", "--min-resemblance", "0.7"]),
    "containment": ({"min_containment": 0.5}, ["--min-containment", "0.5"]),
    "keep-score": ({"keep": "score"}, ["--keep", "score"]),
    "keep-longest": ({"keep": "longest"}, ["--keep", "longest"]),
    "words": ({"features": "words"}, ["--features", "words"]),
    "partitions": ({"memory": int(0.001 * 2**20)}, ["--memory", "0.001"]),
}


def cli_lines(cli, tmp_path, flags, out, json_out=False):
    path = tmp_path / "corpus.jsonl"
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            for key, text, score in corpus():
                f.write(json.dumps({"id": key, "text": text, "score": score}) + "\n")
    run = subprocess.run([cli, "dedupe", "--format", "jsonl", "--out", out, *flags]
                         + (["--json"] if json_out else []) + [str(path)],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    return run.stdout.splitlines()


def python_lines(result, out):
    """The Python result written as `neardup dedupe --out OUT` prints it."""
    if out == "pairs":
        return [f"{p.key1}\t{p.key2}\t{p.distance}" for p in result]
    if out == "clusters":
        lines = []
        for cid, c in result.items():
            assert cid == c.id
            lines.append(f"{c.id}\tkeep\t{c.keep}\t0")
            lines += [f"{c.id}\tdrop\t{k}\t{d}" for k, d in zip(c.drop, c.distances)]
        return lines
    return list(result)


@pytest.mark.parametrize("name", OPTIONS)
@pytest.mark.parametrize("out", ["pairs", "clusters", "keep", "drop"])
def test_same_as_cli(cli, tmp_path, name, out):
    kwargs, flags = OPTIONS[name]
    result = neardup.dedupe(corpus(), out=out, **kwargs)
    expected = cli_lines(cli, tmp_path, flags, out)
    assert python_lines(result, out) == expected
    if out in ("pairs", "drop"):
        assert expected, "the corpus must have near-duplicates under every option set"


@pytest.mark.parametrize("name", ["default", "containment", "simhash"])
def test_estimates_as_cli_json(cli, tmp_path, name):
    kwargs, flags = OPTIONS[name]
    expected = [json.loads(line) for line in cli_lines(cli, tmp_path, flags, "pairs", True)]
    got = []
    for p in neardup.dedupe(corpus(), **kwargs):
        row = {"a": p.key1, "b": p.key2, "dist": p.distance}
        if p.resemblance is not None:
            row["resemblance"] = round(p.resemblance, 3)
        if p.containment is not None:
            row["containment"] = round(p.containment, 3)
        got.append(row)
    assert got == expected
    if name == "containment":
        assert any(p.by_containment for p in neardup.dedupe(corpus(), **kwargs))
    if name == "simhash":
        assert any(p.resemblance < 0.85 for p in neardup.dedupe(corpus(), **kwargs))


def test_pair_and_cluster_fields():
    docs = [(k, t) for k, t, _ in corpus()]
    keys = [k for k, _ in docs]
    pairs = neardup.dedupe(docs)
    assert ("GPL-3", "GPL-3-again") in {(p.key1, p.key2) for p in pairs}
    for p in pairs:
        assert (keys[p.index1], keys[p.index2]) == (p.key1, p.key2) and p.index1 < p.index2
        assert p.distance == neardup.distance(neardup.fingerprint(docs[p.index1][1]),
                                              neardup.fingerprint(docs[p.index2][1]))
        assert 0.85 <= p.resemblance <= 1 and p.containment is None
        assert p == tuple(p) and len(p) == 8
    clusters = neardup.dedupe(docs, out="clusters")
    assert list(clusters) == list(range(1, len(clusters) + 1))
    for c in clusters.values():
        assert keys[c.keep_index] == c.keep
        assert [keys[i] for i in c.drop_indexes] == c.drop
        assert c.drop_indexes == sorted(c.drop_indexes) and len(c.distances) == len(c.drop)
    keep, drop = neardup.dedupe(docs, out="keep"), neardup.dedupe(docs, out="drop")
    assert sorted(keep + drop) == sorted(keys)
    assert set(drop) == {k for c in clusters.values() for k in c.drop}


def test_dedupe_class_streams_and_rereads():
    with neardup.Dedupe(keep="score") as d:
        for key, text, score in corpus():
            d.add(key, text.encode("utf-8"), score=score)  # bytes texts too
        assert len(d) == len(corpus())
        clusters = d.clusters()
        assert d.pairs() == neardup.dedupe(corpus(), keep="score")
        assert d.clusters() == clusters  # the results may be read again
        assert d.drop() == neardup.dedupe(corpus(), keep="score", out="drop")
        stats = d.stats()
        assert stats["documents"] == stats["texts"] == len(corpus())
        assert stats["k"] == 24 and 0 < stats["distinct"] < len(corpus())
        with pytest.raises(neardup.InvalidArgumentError, match="corpus is closed"):
            d.add("late", "too late")
    assert d.closed
    for call in (lambda: d.pairs(), lambda: d.add("a", "b"), lambda: len(d), d.stats):
        with pytest.raises(neardup.InvalidArgumentError, match="closed"):
            call()
    d.close()  # again: a no-op


def test_fingerprints_html_and_keys():
    fp = neardup.fingerprint("some text of a page")
    docs = [("a", fp), ("b", fp ^ 0b111), ("c", fp ^ 0xFFFF), (b"\xff\xfe", fp ^ 1)]
    with neardup.Dedupe() as d:
        d.add_many(docs)
        d.add_fingerprint("e", fp ^ 0b11, score=2)
        pairs = d.pairs()
        assert {(p.key1, p.key2, p.distance) for p in pairs} == {
            ("a", "b", 3), ("a", "\udcff\udcfe", 1), ("b", "\udcff\udcfe", 2), ("a", "e", 2),
            ("b", "e", 1), ("\udcff\udcfe", "e", 1)}
        assert all(p.resemblance is None for p in pairs)
        assert d.stats()["k"] == 3
    assert neardup.dedupe(docs, out="keep", bytes_keys=True) == [b"a", b"c"]
    page = "<html><title>T</title><body><p>%s</p><script>var x = 1;</script></body></html>"
    text = TEXTS.joinpath("BSD").read_text("utf-8")
    docs = [("plain", text), ("page", page % text)]
    assert neardup.dedupe(docs, html=True, out="drop") == ["page"]
    with neardup.Dedupe() as d:
        d.add("plain", text)
        d.add("page", page % text, html=True)
        assert d.drop() == ["page"]


def test_errors(tmp_path):
    docs = [("a", "text")]
    for kwargs in ({"keep": "best"}, {"out": "all"}, {"k": 65}, {"min_resemblance": 2},
                   {"min_containment": -1}, {"memory": 10}, {"features": "letters"},
                   {"k": 9, "min_resemblance": 0}):
        with pytest.raises(neardup.InvalidArgumentError):
            neardup.dedupe(docs, **kwargs)
    with pytest.raises(neardup.DiskIOError):
        neardup.Dedupe(scratch_dir=tmp_path / "missing")
    with pytest.raises(TypeError):
        neardup.dedupe([("a",)])
    with pytest.raises(TypeError):
        neardup.dedupe([("a", 1.5)])
    with pytest.raises(TypeError):
        neardup.dedupe(docs, "pairs")
    with pytest.raises(TypeError):
        neardup.dedupe()
    assert neardup.dedupe(docs=docs) == []
    with pytest.raises(neardup.InvalidArgumentError, match="k above 8|no document"):
        neardup.dedupe([("a", 1), ("b", 2)], k=12)  # fingerprints only: k <= 8
    with pytest.raises(neardup.LimitError, match=r"records\[1\]"):
        neardup.dedupe([("a", "x"), ("b", b"y" * (neardup.MAX_DOC_BYTES + 1))])
    with neardup.Dedupe() as d:  # a generator feeding add_many may use d between items
        def feed():
            yield "a", "x"
            d.add("b", "y")
            yield "c", "z"
        d.add_many(feed())
        assert len(d) == 3


def test_threads_add_to_one_dedupe():
    docs = [(k, t) for k, t, _ in corpus()] * 8
    docs = [(f"{k}#{i}", t) for i, (k, t) in enumerate(docs)]
    with neardup.Dedupe() as d:
        parts = [docs[i::4] for i in range(4)]
        threads = [threading.Thread(target=d.add_many, args=(p,)) for p in parts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(d) == len(docs)
        got = {frozenset((p.key1, p.key2)) for p in d.pairs()}
    assert got == {frozenset((p.key1, p.key2)) for p in neardup.dedupe(docs)}


def test_collected_without_close_frees_its_files(tmp_path):
    def fds():
        return len(os.listdir("/proc/self/fd"))
    before = fds()
    d = neardup.Dedupe(scratch_dir=tmp_path)
    d.add_many([(k, t) for k, t, _ in corpus()])
    assert fds() > before  # its unlinked scratch files
    del d
    gc.collect()
    assert fds() == before
    assert list(tmp_path.iterdir()) == []


def test_many_results_and_long_keys():
    """More results than one buffer of the walk (1024) and keys longer than
    its arena (256 KiB): every result arrives, every key intact."""
    big = "k" * 300_000
    fps = [0x0123456789ABCDEF, 0xFEDCBA9876543210]  # 64 bits apart
    docs = [(f"{g}-{i:04d}-" + "x" * 300, fps[g]) for g in range(2) for i in range(60)]
    docs.append((big, fps[0]))
    pairs = neardup.dedupe(docs)
    keys = [k for k, _ in docs]
    expected = {(keys[a], keys[b]) for a in range(len(docs)) for b in range(a + 1, len(docs))
                if docs[a][1] == docs[b][1]}
    assert len(pairs) == len(expected) == 61 * 60 // 2 + 60 * 59 // 2
    assert {(p.key1, p.key2) for p in pairs} == expected
    clusters = neardup.dedupe(docs, out="clusters")
    assert [len(c.drop) for c in clusters.values()] == [60, 59]
    assert clusters[1].drop[-1] == big
