#!/usr/bin/env python3
"""bench_serve.py — `neardup serve`'s check-and-add against the embedded library.

  bench_serve.py NEARDUP [--seconds S] [--runs R] [--clients 1,8,64] [--no-sync]

For each client count C: a new fingerprint-only store, a server over it
(fsynced commits unless --no-sync), C clients on loopback (threads spread
over up to 4 processes, one keep-alive connection each, stdlib http.client)
sending check-and-add requests of new random fingerprints for S seconds.
Reports requests/s and the p50/p99 latency of one request, median of R
runs. The baseline is one embedded writer: Database.add_if_new in a loop
(sync=True for fsynced writes, as the server's default; sync=False too),
from the Python package of the same build (PYTHONPATH=build/python).
The clients run on the same machine as the server: on few cores they
compete with it for the CPU, so the figures are a floor.
"""
import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def client_proc(port, threads, seconds, seed, out):
    lats = []
    lock = threading.Lock()
    start_at = time.monotonic() + 0.3

    def run(t):
        rnd = random.Random(seed * 1000 + t)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", "/healthz")
        c.getresponse().read()
        mine = []
        while time.monotonic() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        i = 0
        while True:
            t0 = time.monotonic()
            if t0 >= end:
                break
            body = json.dumps({"key": f"p{seed}t{t}-{i}", "fingerprint": "%016x" % rnd.getrandbits(64)})
            c.request("POST", "/v1/check-and-add", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise SystemExit(f"status {r.status}")
            mine.append(time.monotonic() - t0)
            i += 1
        c.close()
        with lock:
            lats.extend(mine)

    ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put(lats)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def serve_run(nd, clients, seconds, sync, tmp, run):
    path = os.path.join(tmp, f"s{clients}-{run}.nd")
    subprocess.run([nd, "init", path, "--fingerprint-only", "--docs", "10000000"], check=True,
                   capture_output=True)
    args = [nd, "serve", path, "--listen", "127.0.0.1:0"] + ([] if sync else ["--no-sync"])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(p.stdout.readline().rsplit(":", 1)[1])
    procs = min(4, clients)
    q = mp.Queue()
    ps = [mp.Process(target=client_proc,
                     args=(port, clients // procs + (i < clients % procs), seconds, i, q))
          for i in range(procs)]
    for x in ps:
        x.start()
    lats = []
    for _ in ps:
        lats.extend(q.get())
    for x in ps:
        x.join()
    p.terminate()
    p.wait()
    subprocess.run(["rm", "-rf", path])
    return len(lats) / seconds, pct(lats, 0.5), pct(lats, 0.99)


def embedded_run(seconds, sync, tmp, run):
    import neardup
    path = os.path.join(tmp, f"e{int(sync)}-{run}.nd")
    rnd = random.Random(run)
    lats = []
    with neardup.Database(path, create=True, fingerprint_only=True, docs=10_000_000,
                          sync=sync) as db:
        end = time.monotonic() + seconds
        i = 0
        while True:
            t0 = time.monotonic()
            if t0 >= end:
                break
            db.add_if_new(f"e{i}", rnd.getrandbits(64))
            lats.append(time.monotonic() - t0)
            i += 1
    subprocess.run(["rm", "-rf", path])
    return len(lats) / seconds, pct(lats, 0.5), pct(lats, 0.99)


def median3(results):
    return tuple(statistics.median(r[i] for r in results) for i in range(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("neardup")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clients", default="1,8,64")
    ap.add_argument("--no-sync", action="store_true")
    a = ap.parse_args()
    sync = not a.no_sync
    print(f"| what | fsync | requests/s | p50 ms | p99 ms |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        for s in ([True, False] if sync else [False]):
            r = median3([embedded_run(a.seconds, s, tmp, i) for i in range(a.runs)])
            print(f"| embedded, 1 writer | {'yes' if s else 'no'} | {r[0]:.0f} | "
                  f"{r[1] * 1e3:.3f} | {r[2] * 1e3:.3f} |", flush=True)
        for c in map(int, a.clients.split(",")):
            r = median3([serve_run(a.neardup, c, a.seconds, sync, tmp, i) for i in range(a.runs)])
            print(f"| serve, {c} client{'s' if c > 1 else ''} | {'yes' if sync else 'no'} | "
                  f"{r[0]:.0f} | {r[1] * 1e3:.3f} | {r[2] * 1e3:.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
