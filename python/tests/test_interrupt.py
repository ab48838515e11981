"""Ctrl-C stops the long calls: a SIGINT sent by a timer thread during a
large add_many, batch(add=True), load, sign_many, dedupe, verify or expire raises
KeyboardInterrupt within about a second, and the exception says what
was committed (e.committed, e.total, "interrupted: N of M documents
committed"), which is what the store holds."""

import functools
import os
import re
import signal
import threading
import time

import pytest

import neardup

# The latency allowed between the signal and the exception: groups are
# sized for 50 ms of work; the rest is margin for a loaded machine.
LATENCY = 1.5


@pytest.fixture
def interrupt():
    """interrupt(call, after): run call, send SIGINT after `after` seconds
    from another thread; returns (the KeyboardInterrupt, seconds from the
    signal to the exception). A signal that would come after the call
    ended is not sent (the handler is disarmed first)."""
    armed = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        if armed.is_set():
            armed.clear()
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    timers = []

    def run(call, after=1.0):
        sent = []

        def fire():
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

        armed.set()
        timer = threading.Timer(after, fire)
        timers.append(timer)
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt) as e:
                call()
        finally:
            armed.clear()
            timer.cancel()
        end = time.monotonic()
        assert sent, "the call ended before the signal"
        return e.value, end - sent[0]

    yield run
    for t in timers:
        t.join()
    signal.signal(signal.SIGINT, previous)


def fps(n, start=0):
    return [(f"k{i}", (i * 0x9E3779B97F4A7C15) % 2**64) for i in range(start, start + n)]


@functools.lru_cache(maxsize=None)
def _corpus():
    words = [f"w{j}" for j in range(997)]
    return tuple(f"document {i}: " + " ".join(words[(i * 7 + j) % 997] for j in range(60))
                 for i in range(300_000))


def texts(n):
    return list(_corpus()[:n])


def check(e, latency, total, what="committed"):
    print(f"latency {latency:.3f} s: {e}")
    assert latency < LATENCY, f"{latency:.2f} s from the signal to the exception"
    assert isinstance(e.committed, int) and e.total == total
    shown = f"{total:,}" if total is not None else None
    pattern = (rf"interrupted: {e.committed:,} of {shown} documents {what}" if shown
               else rf"interrupted: {e.committed:,} documents {what}")
    assert re.match(pattern, str(e)), str(e)


def test_add_many(db, interrupt):
    db.add("before", 1)
    e, latency = interrupt(lambda: db.add_many(fps(400_000)))
    check(e, latency, 400_000)
    assert 0 < e.committed < 400_000
    assert len(db) == 1 + e.committed
    assert db.get(f"k{e.committed - 1}") is not None and db.get(f"k{e.committed}") is None


def test_batch_add(db, interrupt):
    e, latency = interrupt(lambda: db.batch(fps(300_000), add=True))
    check(e, latency, 300_000)
    assert 0 < e.committed < 300_000 and len(db) == e.committed


def test_load_fingerprint_store_commits_nothing(db, db_path, interrupt):
    db.add("before", 1)

    def endless():
        i = 0
        while True:  # the interrupt ends it
            yield (f"k{i}", i * 0x9E3779B97F4A7C15 % 2**64)
            i += 1

    e, latency = interrupt(lambda: db.load(endless()))
    assert latency < LATENCY and e.committed == 0 and e.total > 0  # records read
    assert re.match(r"interrupted: 0 of [\d,]+ documents committed; nothing new imported",
                    str(e)), str(e)
    assert len(db) == 1
    assert not [f for f in os.listdir(db_path) if f.startswith("nd-load-")]
    assert db.load(fps(1000)) == 1000  # a new load works


def test_load_resemblance_store_commits_nothing(tmp_path, interrupt):
    path = tmp_path / "rs"
    with neardup.Database(str(path), create=True, min_resemblance=0.85) as rs:
        many = texts(200_000)
        e, latency = interrupt(lambda: rs.load((f"t{i}", t) for i, t in enumerate(many)))
        assert latency < LATENCY and e.committed == 0 and e.total > 0
        assert re.match(r"interrupted: 0 of [\d,]+ documents committed; nothing new imported",
                        str(e)), str(e)
        assert len(rs) == 0
        rs.verify()
        assert not [f for f in os.listdir(path) if f.startswith("nd-load-")]
        assert rs.load((f"t{i}", t) for i, t in enumerate(many[:1000])) == 1000
        assert len(rs) == 1000
        rs.verify()
        assert [m.key for m in rs.query_text(many[7])][:1] == ["t7"]


def test_sign_many(db, interrupt):
    many = texts(300_000)
    e, latency = interrupt(lambda: db.sign_many(many), after=0.5)
    check(e, latency, 300_000, "signed")
    assert 0 < e.committed < 300_000


def test_dedupe_and_dedupe_add_many(interrupt):
    many = texts(300_000)
    e, latency = interrupt(lambda: neardup.dedupe((f"d{i}", t) for i, t in enumerate(many)),
                           after=0.5)
    check(e, latency, None, "added")
    with neardup.Dedupe() as d:
        e, latency = interrupt(lambda: d.add_many(list(enumerate(many))), after=0.5)
        check(e, latency, 300_000, "added")
        assert 0 < e.committed == len(d)


def test_batch_without_add_while_signing(db, interrupt):
    many = texts(300_000)
    e, latency = interrupt(lambda: db.batch(list(enumerate(many))), after=0.5)
    check(e, latency, 300_000)
    assert e.committed == 0 and len(db) == 0
    assert str(e).endswith("; a batch without add stores nothing")


def test_verify_and_expire(db, interrupt):
    assert db.load(fps(400_000)) == 400_000
    e, latency = interrupt(db.verify, after=0.3)
    assert latency < LATENCY, f"{latency:.2f} s from the signal to the exception"
    # expire: every document is older than the year 3000, so the store is
    # written anew and switched to in one write: stopped before, none goes
    e, latency = interrupt(lambda: db.expire(32503680000), after=0.1)
    assert latency < LATENCY, f"{latency:.2f} s from the signal to the exception"
    assert e.committed == 0, e.committed
    assert re.match(rf"interrupted: {e.committed:,} documents expired", str(e)), str(e)
    assert len(db) == 400_000 - e.committed
    db.verify()


def test_other_handlers_and_threads(db):
    """A handler that does not raise lets the call finish; a call on
    another thread is not interrupted (signals go to the main thread)."""
    seen = []
    previous = signal.signal(signal.SIGINT, lambda s, f: seen.append(s))
    try:
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        db.add_many(fps(20_000))
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(db) == 20_000
    out = []
    worker = threading.Thread(target=lambda: out.append(db.add_many(fps(2_000, 50_000))))
    worker.start()
    worker.join()
    assert out == [None] and len(db) == 22_000
