#!/usr/bin/env python3
"""bench_python.py — what the Python binding adds per call, against the C
API doing the same work on the same store.

  bench/bench_python.py [--build build] [--dir DIR] [--n 1000000]
                        [--queries 20000] [--adds 40000] [--rounds 5]
                        [--threads T] [--only query,add_if_new,load,sign]
                        [--texts 40000] [--smoke]

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
  load        `neardup import` of N fingerprints (a file in the fp format,
              into a store made by `neardup init`, the CLI's own seconds)
              against Database.load of the same (key, fingerprint) tuples
              (a list built before the clock starts; a store made with
              Database(create=True)), docs/s;
  sign        texts of 1 KB (under the 2 KB below which fingerprint() and
              Dedupe.add keep the GIL) signed on 1 and on 2 threads: through
              Database.sign_many (the GIL released once a group), through
              Database.sign one call per text, through Dedupe.add_many (one
              Dedupe a thread), and through Dedupe.add one call per text
              (which keeps the GIL for such a text: the reference that does
              not scale); texts/s and the 2-thread speed-up.
              Run it on two idle cores to see the scaling.
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
import json
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


def fp_only_store_args(neardup, build):
    """The arguments that make a fingerprint-only store (the default store
    verifies by resemblance), for the Python side and for `neardup init`."""
    return {"fingerprint_only": True}, ["--fingerprint-only"]


def write_fp_file(path, gen, n):
    """N fingerprints of bench_db's stored stream, keys doc0, doc1, ...:
    the file for `neardup import` and the same records for load()."""
    recs = [(f"doc{i}", gen.stored(i)) for i in range(n)]
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.writelines(f"{fp:016x}\t{key}\n" for key, fp in recs)
        os.replace(path + ".tmp", path)
    return recs


def c_import(build, store, fp_file, n, init_args):
    cli = os.path.join(build, "cli", "neardup")
    shutil.rmtree(store, ignore_errors=True)
    run([cli, "init", store, "--docs", str(n), *init_args])
    out = json.loads(run([cli, "import", store, fp_file, "--json"]).strip().splitlines()[-1])
    if out["imported"] != n:
        sys.exit(f"import: {out['imported']} of {n} imported")
    return n / out["seconds"]


def py_load(neardup, store, n, recs, store_args):
    """load() of recs (a list), or, when recs is a path, of the records
    parsed from that fp file as they are read (a generator)."""
    shutil.rmtree(store, ignore_errors=True)
    with neardup.Database(store, create=True, docs=n, background=False, **store_args) as db:
        t0 = time.perf_counter()
        if isinstance(recs, str):
            with open(recs) as f:
                new = db.load((line[17:-1], int(line[:16], 16)) for line in f)
        else:
            new = db.load(recs)
        secs = time.perf_counter() - t0
        if new != n or len(db) != n:
            sys.exit(f"load: {new} new, {len(db)} stored of {n}")
    return n / secs


def bench_load(o, neardup, gen):
    store_args, init_args = fp_only_store_args(neardup, o.build)
    fp_file = os.path.join(o.dir, f"fps-{o.n}.txt")
    recs = write_fp_file(fp_file, gen, o.n)
    store = os.path.join(o.dir, "load")
    c, py, pyf = [], [], []
    for r in range(o.rounds):
        c.append(c_import(o.build, store, fp_file, o.n, init_args))
        py.append(py_load(neardup, store, o.n, recs, store_args))
        pyf.append(py_load(neardup, store, o.n, fp_file, store_args))
        print(f"round {r + 1}: neardup import {c[-1]:,.0f} docs/s, Database.load "
              f"{py[-1]:,.0f} docs/s (of a list), {pyf[-1]:,.0f} docs/s (parsing the file "
              f"in Python)", flush=True)
    shutil.rmtree(store, ignore_errors=True)
    cm, pm, fm = statistics.median(c), statistics.median(py), statistics.median(pyf)
    print(f"\nload of {o.n:,} fingerprints into an empty store, docs/s, median of "
          f"{o.rounds}:")
    print("| load | docs/s | import / it |")
    print("| --- | ---: | ---: |")
    print(f"| neardup import FILE (its own seconds) | {cm:,.0f} | 1.00 |")
    print(f"| Database.load(list of tuples) | {pm:,.0f} | {cm / pm:.2f} |")
    print(f"| Database.load(tuples parsed from FILE) | {fm:,.0f} | {cm / fm:.2f} |")
    return cm, pm, fm


def corpus(n, size=1000, seed=45):
    """n texts of about `size` bytes: words of a 20,000-word vocabulary
    drawn with a skew, so that texts differ as real ones do."""
    import random
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(20_000)]
    out = []
    for _ in range(n):
        words, length = [], 0
        while length < size:
            w = vocab[int(rng.paretovariate(1.2)) % len(vocab)]
            words.append(w)
            length += len(w) + 1
        out.append(" ".join(words))
    return out


def on_threads(threads, work, parts):
    """(wall seconds, process CPU seconds) of work(part) for each part, on
    `threads` threads."""
    workers = [threading.Thread(target=work, args=(p,)) for p in parts[1:]]
    t0, c0 = time.perf_counter(), time.process_time()
    for w in workers:
        w.start()
    work(parts[0])
    for w in workers:
        w.join()
    return time.perf_counter() - t0, time.process_time() - c0


def bench_sign(o, neardup):
    texts = corpus(o.texts)
    store = os.path.join(o.dir, "sign")
    shutil.rmtree(store, ignore_errors=True)
    rows = {"sign_many": ([], []), "sign per text": ([], []), "Dedupe.add_many": ([], []),
            "Dedupe.add per text": ([], [])}
    busy = {name: [] for name in rows}  # CPU seconds / wall seconds on 2 threads
    with neardup.Database(store, create=True, docs=1000) as db:
        if db.sign_many(texts[:100]) != [db.sign(t) for t in texts[:100]]:
            sys.exit("sign_many differs from sign")

        def per_text(part):
            sign = db.sign
            for t in part:
                sign(t)

        def dedupe(part):
            with neardup.Dedupe() as d:
                d.add_many(part)

        def dedupe_add(part):  # a text under 2 KB is signed holding the GIL
            with neardup.Dedupe() as d:
                add = d.add
                for key, t in part:
                    add(key, t)

        keyed = [(str(i), t) for i, t in enumerate(texts)]
        for r in range(o.rounds):
            for name, work, data in (("sign_many", db.sign_many, texts),
                                     ("sign per text", per_text, texts),
                                     ("Dedupe.add_many", dedupe, keyed),
                                     ("Dedupe.add per text", dedupe_add, keyed)):
                for threads in (1, 2):
                    parts = [data[i::threads] for i in range(threads)]
                    wall, cpu = on_threads(threads, work, parts)
                    rows[name][threads - 1].append(len(data) / wall)
                    if threads == 2:
                        busy[name].append(cpu / wall)
            print(f"round {r + 1}: " + ", ".join(
                f"{name} {v[0][-1]:,.0f} / {v[1][-1]:,.0f} texts/s" for name, v in rows.items()),
                flush=True)
    shutil.rmtree(store, ignore_errors=True)
    print(f"\n{o.texts:,} texts of about 1 KB, texts/s on 1 and 2 threads, median of "
          f"{o.rounds} (os.cpu_count() = {os.cpu_count()}, load average "
          f"{os.getloadavg()[0]:.2f} at the end):")
    print("(CPU / wall: the process's CPU seconds per wall second on 2 threads, near 2 when "
          "both threads run at once, near 1 when the GIL serialises them)")
    print("| call | 1 thread | 2 threads | speed-up | CPU / wall |")
    print("| --- | ---: | ---: | ---: | ---: |")
    out = {}
    for name, (one, two) in rows.items():
        a, b = statistics.median(one), statistics.median(two)
        out[name] = (a, b)
        print(f"| {name} | {a:,.0f} | {b:,.0f} | {b / a:.2f} | "
              f"{statistics.median(busy[name]):.2f} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="/tmp/neardup-bench-python")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=20_000)
    ap.add_argument("--adds", type=int, default=40_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="query,add_if_new",
                    help="comma-separated: query, add_if_new (one set, run together), "
                         "load, sign")
    ap.add_argument("--texts", type=int, default=40_000)
    ap.add_argument("--smoke", action="store_true")
    o = ap.parse_args()
    o.only = set(o.only.split(","))
    if o.smoke:
        o.n, o.queries, o.adds, o.rounds, o.texts = 20_000, 500, 500, 1, 400
        o.only = {"query", "add_if_new", "load", "sign"}
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
    gen = Gen(o.n)
    if "load" in o.only:
        bench_load(o, neardup, gen)
    if "sign" in o.only:
        bench_sign(o, neardup)
    if not o.only & {"query", "add_if_new"}:
        return
    store, copy = os.path.join(o.dir, f"store-{o.n}"), os.path.join(o.dir, "copy")
    make_store(o.build, store, o.n)
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
