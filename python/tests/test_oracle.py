"""query() and batch() against a brute-force scan, on random stored
fingerprints with neighbours planted at every distance 0..k+2 of each
query (DESIGN.md promise 1, through the Python binding)."""

import random

import neardup

STORED = 3000
QUERIES = 60


def flip(rng, fp, bits):
    for b in rng.sample(range(64), bits):
        fp ^= 1 << b
    return fp


def build(db, seed):
    rng = random.Random(seed)
    docs = {f"r{i}": rng.getrandbits(64) for i in range(STORED)}
    queries = [rng.getrandbits(64) for _ in range(QUERIES)]
    for j, q in enumerate(queries):
        for d in range(0, 9):  # planted: every distance 0..8 (k + 2 for k <= 6)
            for c in range(2):
                docs[f"p{j}-{d}-{c}"] = flip(rng, q, d)
    items = list(docs.items())
    db.add_many(items[: len(items) // 2])
    db.compact()  # half in runs, half fresh
    db.add_many(items[len(items) // 2:])
    return docs, queries


def scan(docs, q, k):
    return sorted((bin(fp ^ q).count("1"), fp, key) for key, fp in docs.items()
                  if bin(fp ^ q).count("1") <= k)


def test_query_equals_scan(db):
    docs, queries = build(db, 1)
    for k in (0, 1, 2, 3, 4, 6):
        for q in queries:
            got = [(m.distance, m.fingerprint, m.key) for m in db.query(q, k)]
            assert got == scan(docs, q, k), f"k={k} q={q:016x}"
            assert all(m.distance == neardup.distance(m.fingerprint, q)
                       for m in db.query(q, k, limit=3))
    assert len(db.query(queries[0], 3, limit=3)) == 3


def test_batch_equals_scan(db):
    docs, queries = build(db, 2)
    answers = db.batch([(f"q{j}", q) for j, q in enumerate(queries)])
    for q, a in zip(queries, answers):
        best = scan(docs, q, 3)[0]  # a planted one at distance 0 exists
        assert a is not None and a.match_index is None
        assert (a.distance, a.fingerprint, a.key) == best
    far = [(f"f{j}", flip(random.Random(j), q, 20)) for j, q in enumerate(queries)]
    for (key, fp), a in zip(far, db.batch(far)):
        expect = scan(docs, fp, 3)
        assert (a is None) == (not expect)
