"""Threads sharing one Database: concurrent add_if_new keeps exactly one of
each group of near-duplicates, close() racing calls never crashes, and a
Database dropped without close() frees its handle."""

import gc
import random
import threading

import pytest

import neardup

THREADS = 4
PER_THREAD = 2000


def run_threads(target):
    errors = []

    def wrap(t):
        try:
            target(t)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_concurrent_add_if_new_counts_are_exact(db):
    rng = random.Random(36)
    # Random 64-bit fingerprints lie about 32 bits apart: none within 3 of
    # another (chance about 1e-14). Thread t adds base[i] ^ (1 << t): the
    # four variants of base[i] are within 2 bits of each other, so exactly
    # one of them gets in, whichever thread wins the race.
    base = [rng.getrandbits(64) for _ in range(PER_THREAD)]
    unique = [[rng.getrandbits(64) for _ in range(PER_THREAD)] for _ in range(THREADS)]
    stored = [[] for _ in range(THREADS)]
    matched = [0] * THREADS

    def adder(t):
        for i in range(PER_THREAD):
            if db.add_if_new(f"t{t}-{i}", base[i] ^ (1 << t)) is None:
                stored[t].append(i)
            else:
                matched[t] += 1
            assert db.add_if_new(f"u{t}-{i}", unique[t][i]) is None

    run_threads(adder)
    assert len(db) == PER_THREAD + THREADS * PER_THREAD
    assert sum(len(s) for s in stored) == PER_THREAD
    assert sum(matched) == (THREADS - 1) * PER_THREAD
    assert sorted(i for s in stored for i in s) == list(range(PER_THREAD))
    for i in range(0, PER_THREAD, 97):
        assert len(db.query(base[i], 2)) == 1
    db.verify()


def test_concurrent_readers_and_writers(db):
    db.add_many([(f"seed{i}", i * 0x9E3779B97F4A7C15 % 2**64) for i in range(500)])

    def worker(t):
        for i in range(300):
            if t % 2:
                db.add(f"w{t}-{i}", (i * 0x9E3779B97F4A7C15 + t) % 2**64)
            else:
                fp = (i % 500) * 0x9E3779B97F4A7C15 % 2**64
                assert db.query(fp, 0)[0].key == f"seed{i % 500}"
                assert db.get(f"seed{i % 500}").fingerprint == fp

    run_threads(worker)
    assert len(db) == 500 + 2 * 300


def test_close_while_other_threads_call(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)
    running = threading.Barrier(THREADS + 1)
    acked = [[] for _ in range(THREADS)]
    outcome = [None] * THREADS

    def caller(t):
        rng = random.Random(t)
        running.wait()
        try:
            while True:
                key, fp = f"{t}-{len(acked[t])}", rng.getrandbits(64)
                if db.add_if_new(key, fp) is None:
                    acked[t].append((key, fp))
                db.query(fp)
        except neardup.InvalidArgumentError as e:
            outcome[t] = str(e)

    threads = [threading.Thread(target=caller, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    running.wait()
    while len(db) < 200:
        pass
    db.close()
    for th in threads:
        th.join()
    assert all(o is not None and "closed" in o for o in outcome)
    with neardup.Database(db_path) as again:  # every acknowledged add is there
        assert len(again) == sum(len(a) for a in acked)
        for key, fp in (kf for a in acked for kf in a):
            assert again.get(key).fingerprint == fp
        again.verify()


def test_dropped_database_is_freed(db_path):
    db = neardup.Database(db_path, create=True, fingerprint_only=True)
    db.add("a", 1)
    with pytest.raises(neardup.BusyError):  # the writer's lock is held
        neardup.Database(db_path)
    with pytest.warns(ResourceWarning, match="unclosed neardup.Database"):
        del db
        gc.collect()
    with neardup.Database(db_path) as db:  # opened for writing again
        assert db.get("a").fingerprint == 1


def test_handles_dropped_in_a_loop_leak_no_descriptors(tmp_path):
    """Handles go back at collection: opening and dropping a store again
    and again leaves the process's file descriptors as they were."""
    import os
    import warnings
    path = str(tmp_path / "db")
    neardup.Database(path, create=True, fingerprint_only=True).close()
    fds = len(os.listdir("/proc/self/fd"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        for i in range(8):
            db = neardup.Database(path)
            db.add(f"k{i}", i << 32)
            del db  # the last reference: finalized at once
    assert len(os.listdir("/proc/self/fd")) == fds
    with neardup.Database(path) as db:
        assert len(db) == 8
