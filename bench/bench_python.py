#!/usr/bin/env python3
"""bench_python.py — what the Python binding adds per call, against the C
API doing the same work on the same store.

  bench/bench_python.py [--build build] [--dir DIR] [--n 1000000]
                        [--queries 20000] [--adds 40000] [--rounds 5]
                        [--threads T] [--smoke]

Makes (once; kept in DIR) a store of N fingerprints with bench_db, then
alternates, for each round:
  query       bench_query DIR N Q 3 (C: nd_db_query, timed call by call, p50)
              against the same Q queries through Database.query (timed call
              by call with perf_counter_ns, p50); both run the queries twice
              and time the second pass;
  add_if_new  bench_fold COPY --add A --queries 0 (C: nd_db_add_if_new of
              bench_db's stream from id 200M, 8-byte keys, docs/s) against
              the same documents through Database.add_if_new (docs/s), each
              on a fresh copy of the store opened without background folds;
              with --threads T, on T threads each (thread i: documents i,
              i + T, ...), which shows the GIL released during the calls.
The fingerprints are bench_db's (bench/bdb_gen.c, ported below); the
matches found must agree, which checks the port. Prints each round and
the medians: C, Python, the ratio and the difference in microseconds per
call (the binding's overhead: argument conversion, result objects, the GIL
release). Run it pinned to one core (taskset -c 1) on a quiet machine,
with DIR on a tmpfs (/dev/shm) to keep other jobs' disk traffic out of the
add_if_new figures. --smoke: a small store in a temporary DIR, one round
(the test suite's check that the port agrees).
"""

import argparse
import os
import re
import shutil
import statistics
import tempfile
import subprocess
import sys
import threading
import time

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
STORED, QUERY, STREAM = ord("S"), ord("Q"), ord("A")
MAX_FLIPS = 6


def mix(x):
    x = (x + GOLDEN) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


class Gen:
    """bench/bdb_gen.c: element j of stream s is a function of (seed, s, j)."""

    def __init__(self, n, seed=1):
        self.n, self.seed = n, seed

    def stream_seed(self, stream):
        return mix(mix(self.seed) ^ ((stream * 0xD6E8FEB86659FD93) & M64))

    def stored(self, i):
        return mix((self.stream_seed(STORED) + i * GOLDEN) & M64)

    def query(self, stream, j):
        s = mix(self.stream_seed(stream) ^ ((j * 0xC2B2AE3D27D4EB4F) & M64))

        def nxt():
            nonlocal s
            s = (s + GOLDEN) & M64
            return mix(s)

        def below(n):
            return (nxt() * n) >> 64

        if nxt() & 1:
            fp = self.stored(below(self.n))
            flips, m = below(MAX_FLIPS + 1), 0
            while bin(m).count("1") < flips:
                m |= 1 << below(64)
            return fp ^ m
        return nxt()


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def make_store(build, path, n):
    if os.path.isdir(path):
        return
    print(f"making a store of {n} fingerprints in {path} (bench_db)", flush=True)
    run([os.path.join(build, "bench", "bench_db"), "--n", str(n), "--q", "1000", "--q6", "10",
         "--qcold", "10", "--sample", "10", "--batch", "1000", "--join", "1000",
         "--stream", "0", "--group-docs", "0", "--fsync-docs", "0", "--keep", "--dir", path,
         "--out", os.devnull])


def c_query(build, path, n, q):
    out = run([os.path.join(build, "bench", "bench_query"), path, str(n), str(q), "3"])
    m = re.search(r"p50 ([0-9.]+) .* (\d+) matches", out)
    return float(m.group(1)), int(m.group(2))


def py_query(neardup, path, gen, q):
    qs = [gen.query(QUERY, 5000 + j) for j in range(q)]
    lat, matches = [0] * q, 0
    clock = time.perf_counter_ns
    with neardup.Database(path) as db:
        for timed in (False, True):
            for j, fp in enumerate(qs):
                t0 = clock()
                res = db.query(fp, 3)
                lat[j] = clock() - t0
                if timed:
                    matches += len(res)
    return statistics.median(lat) / 1000, matches


def c_adds(build, copy, a, threads):
    out = run([os.path.join(build, "bench", "bench_fold"), copy, "--add", str(a), "--queries",
               "0", "--threads", str(threads)])
    return float(re.search(r"add_if_new .*: ([0-9.]+) docs/s", out).group(1))


def py_adds(neardup, copy, a, threads, start=200_000_000):
    with neardup.Database(copy, background=False, fold_threshold=M64) as db:
        gen = Gen(db.stats()["fingerprints"])
        docs = [(((1 << 62) | (start + j)).to_bytes(8, "big"), gen.query(STREAM, start + j))
                for j in range(a)]
        new = [0] * threads

        def adder(i):
            add = db.add_if_new
            new[i] = sum(add(key, fp, 3, 0.0, 2) is None for key, fp in docs[i::threads])

        workers = [threading.Thread(target=adder, args=(i,)) for i in range(1, threads)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        adder(0)
        for w in workers:
            w.join()
        secs = time.perf_counter() - t0
    return a / secs, sum(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="/tmp/neardup-bench-python")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--adds", type=int, default=40_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--smoke", action="store_true")
    o = ap.parse_args()
    if o.smoke:
        o.n, o.queries, o.adds, o.rounds = 20_000, 500, 500, 1
        o.dir = tempfile.mkdtemp(prefix="bench-python-")
    try:
        bench(o)
    finally:
        if o.smoke:
            shutil.rmtree(o.dir, ignore_errors=True)


def bench(o):
    sys.path.insert(0, os.path.join(os.path.abspath(o.build), "python"))
    import neardup

    os.makedirs(o.dir, exist_ok=True)
    store, copy = os.path.join(o.dir, f"store-{o.n}"), os.path.join(o.dir, "copy")
    make_store(o.build, store, o.n)
    gen = Gen(o.n)
    rows = {"query": ([], []), "add_if_new": ([], [])}
    for r in range(o.rounds):
        c_us, c_matches = c_query(o.build, store, o.n, o.queries)
        py_us, py_matches = py_query(neardup, store, gen, o.queries)
        if c_matches != py_matches:
            sys.exit(f"query: {py_matches} matches in Python, {c_matches} in C: port broken")
        rows["query"][0].append(c_us)
        rows["query"][1].append(py_us)
        rates = []
        for side in ("C", "Python"):
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(store, copy)
            if side == "C":
                rates.append(c_adds(o.build, copy, o.adds, o.threads))
            else:
                rate, new = py_adds(neardup, copy, o.adds, o.threads)
                rates.append(rate)
        shutil.rmtree(copy, ignore_errors=True)
        rows["add_if_new"][0].append(1e6 / rates[0])
        rows["add_if_new"][1].append(1e6 / rates[1])
        print(f"round {r + 1}: query p50 C {c_us:.2f} us, Python {py_us:.2f} us "
              f"({c_matches} matches); add_if_new C {rates[0]:.0f} docs/s, Python "
              f"{rates[1]:.0f} docs/s ({new} new)", flush=True)
    print(f"\nN = {o.n}, {o.queries} queries (k=3, p50 per call), {o.adds} add_if_new "
          f"(wall time per document, {o.threads} thread{'s' if o.threads > 1 else ''}), "
          f"median of {o.rounds} rounds:")
    print("| call | C us | Python us | ratio | overhead us |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (c, py) in rows.items():
        cm, pm = statistics.median(c), statistics.median(py)
        print(f"| {name} | {cm:.2f} | {pm:.2f} | {pm / cm:.2f} | {pm - cm:.2f} |")


if __name__ == "__main__":
    main()
