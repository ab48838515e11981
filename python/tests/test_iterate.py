"""`for doc in db`: every document in key order from one snapshot, read by
a reader thread in batches; early exits, close() and collection."""

import gc
import threading
import warnings

import pytest

import neardup

N = 2000  # about four reader batches


def fill(db, n=N):
    db.add_many([(f"key{i:05d}", i * 0x9E3779B97F4A7C15 % 2**64, i / 2, 1000 + i)
                 for i in range(n)])


def test_every_document_in_key_order(db):
    assert list(db) == []
    fill(db)
    docs = list(db)
    assert len(docs) == N
    assert [d.key for d in docs] == [f"key{i:05d}" for i in range(N)]
    for i, d in enumerate(docs):
        assert tuple(d) == (f"key{i:05d}", i * 0x9E3779B97F4A7C15 % 2**64, i / 2, 1000 + i)
        assert isinstance(d, neardup.Document)


def test_snapshot(db):
    fill(db)
    it = iter(db)
    first = next(it)  # the reader's snapshot exists by now
    db.add("zzz-later", 1)
    db.delete("key01999")
    rest = list(it)
    keys = [first.key] + [d.key for d in rest]
    assert len(keys) == N and "zzz-later" not in keys and "key01999" in keys


def test_early_exit_and_drop(db):
    fill(db)
    for i, _ in enumerate(db):
        if i == 10:
            break
    its = [iter(db) for _ in range(3)]
    next(its[0])
    assert next(its[1]).key == "key00000"
    del its  # readers blocked on a full slot are stopped and joined
    gc.collect()
    assert sum(1 for _ in db) == N


def test_two_iterators_at_once(db):
    fill(db)
    a, b = iter(db), iter(db)
    pairs = list(zip(a, b))
    assert len(pairs) == N and all(x == y for x, y in pairs)


def test_close_ends_iterators(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)
    fill(db)
    it = iter(db)
    next(it)
    untouched = iter(db)
    db.close()
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        next(it)
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        next(untouched)
    with pytest.raises(neardup.InvalidArgumentError):
        iter(db)
    neardup.Database(db_path).close()  # the handle is really closed


def test_close_from_another_thread_while_iterating(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)
    fill(db, 20000)
    started, seen, errors = threading.Event(), [], []

    def walk():
        try:
            for d in db:
                seen.append(d.key)
                started.set()
        except neardup.Error as e:
            errors.append(e)

    t = threading.Thread(target=walk)
    t.start()
    started.wait()
    db.close()
    t.join()
    # stopped with an InvalidArgumentError, or finished before close()
    assert (len(errors) == 1 and isinstance(errors[0], neardup.InvalidArgumentError)
            and len(seen) < 20000) or (not errors and len(seen) == 20000)


def test_iterator_keeps_database_alive(db_path):
    with neardup.Database(db_path, create=True, fingerprint_only=True) as db:
        fill(db, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        it = iter(neardup.Database(db_path))
        gc.collect()
        assert len(list(it)) == 10
        del it
        gc.collect()
    neardup.Database(db_path).close()  # collected, so closed
