"""Crash and reopen: a child process adds from two threads with sync=True
and prints each acknowledged document; it is killed with SIGKILL at a
random moment; the parent reopens the store and finds every acknowledged
document (DESIGN.md promise 2, through the Python binding)."""

import os
import random
import signal
import subprocess
import sys

import neardup

CHILD = r"""
import random, sys, threading
import neardup

db = neardup.Database(sys.argv[1], create=True, fingerprint_only=True, sync=True)
out = threading.Lock()

def writer(t):
    rng = random.Random(f"{sys.argv[2]}-{t}")
    i = 0
    while True:
        key, fp = f"r{sys.argv[2]}-t{t}-{i}", rng.getrandbits(64)
        if i % 3 == 2:
            db.add(key, fp, time=i)
        elif db.add_if_new(key, fp, time=i) is not None:
            key = None  # a near-duplicate (unlikely): nothing stored
        if key:
            with out:  # one whole line per acknowledgement
                sys.stdout.write(f"{key} {fp}\n")
                sys.stdout.flush()
        i += 1

print("started", flush=True)
threads = [threading.Thread(target=writer, args=(t,), daemon=True) for t in range(2)]
for th in threads:
    th.start()
for th in threads:
    th.join()
"""

ROUNDS = 4


def test_acknowledged_documents_survive_sigkill(tmp_path):
    path = str(tmp_path / "db")
    rng = random.Random(7)
    acked = {}
    for r in range(ROUNDS):
        child = subprocess.Popen([sys.executable, "-c", CHILD, path, str(r)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "started\n"
        wanted = rng.randrange(20, 300)
        lines = []
        while len(lines) < wanted:
            line = child.stdout.readline()
            assert line.endswith("\n"), "the child died"
            lines.append(line)
        os.kill(child.pid, signal.SIGKILL)
        rest = child.stdout.read()
        child.wait()
        assert child.returncode == -signal.SIGKILL
        lines += rest.splitlines(keepends=True)
        for line in lines:
            if line.endswith("\n"):  # a torn last line is no acknowledgement
                key, fp = line.split()
                acked[key] = int(fp)
        with neardup.Database(path) as db:
            for key, fp in acked.items():
                doc = db.get(key)
                assert doc is not None, f"round {r}: acknowledged {key} lost"
                assert doc.fingerprint == fp
            assert len(db) >= len(acked)
            db.verify()
    assert len(acked) >= ROUNDS * 20
