#!/usr/bin/env python3
"""bench_serve.py — `neardup serve`'s check-and-add against the embedded library.

  bench_serve.py NEARDUP [--seconds S] [--runs R] [--clients 1,8,64] [--no-sync]
                         [--fleet N]

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

--fleet N adds, in the same run, the same load through the sharded client:
N servers on loopback, each `serve --shard I` of an N-shard store, and
neardup.Fleet in every client (one Fleet per client process, shared by its
threads); and, to tell the client's cost from the fleet's, one server
through neardup.Client. Each row also gives the servers' peak resident
memory (VmHWM of /proc/PID/status, read before they stop; a fleet: the
largest of its servers, and their sum).
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


def client_proc(urls, mode, threads, seconds, seed, out):
    """threads clients of the servers at urls: mode "raw" (http.client, one
    server), "client" (neardup.Client) or "fleet" (neardup.Fleet)."""
    lats = []
    lock = threading.Lock()
    start_at = time.monotonic() + 0.3
    port = int(urls[0].rsplit(":", 1)[1])
    shared = None
    if mode != "raw":
        import neardup
        shared = neardup.Fleet(urls) if mode == "fleet" else neardup.Client(urls[0])

    def run(t):
        rnd = random.Random(seed * 1000 + t)
        c = None
        if shared is None:
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
            key, fp = f"p{seed}t{t}-{i}", rnd.getrandbits(64)
            if shared is not None:
                shared.add_if_new(key, fp)
            else:
                body = json.dumps({"key": key, "fingerprint": "%016x" % fp})
                c.request("POST", "/v1/check-and-add", body, {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    raise SystemExit(f"status {r.status}")
            mine.append(time.monotonic() - t0)
            i += 1
        if c is not None:
            c.close()
        with lock:
            lats.extend(mine)

    ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if shared is not None:
        shared.close()
    out.put(lats)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def vm_hwm_kib(pid):
    """Peak resident memory of a process, KiB (VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def serve_run(nd, clients, seconds, sync, tmp, run, mode="raw", shards=0):
    """One run: a store (shards > 0: a sharded store and one server per
    shard), the clients, then (requests/s, p50, p99, [VmHWM KiB of each
    server])."""
    path = os.path.join(tmp, f"s{mode}{clients}-{run}.nd")
    if shards:
        subprocess.run([nd, "shard", "init", path, "--shards", str(shards), "--fingerprint-only",
                        "--docs", "10000000"], check=True, capture_output=True)
    else:
        subprocess.run([nd, "init", path, "--fingerprint-only", "--docs", "10000000"],
                       check=True, capture_output=True)
    servers, urls = [], []
    for i in range(max(1, shards)):
        args = [nd, "serve", path, "--listen", "127.0.0.1:0"] + ([] if sync else ["--no-sync"])
        if shards:
            args += ["--shard", str(i)]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        servers.append(p)
        urls.append(p.stdout.readline().split()[-1])
    procs = min(4, clients)
    q = mp.Queue()
    ps = [mp.Process(target=client_proc,
                     args=(urls, mode, clients // procs + (i < clients % procs), seconds, i, q))
          for i in range(procs)]
    for x in ps:
        x.start()
    lats = []
    for _ in ps:
        lats.extend(q.get())
    for x in ps:
        x.join()
    hwm = [vm_hwm_kib(p.pid) for p in servers]
    for p in servers:
        p.terminate()
        p.wait()
    subprocess.run(["rm", "-rf", path])
    return len(lats) / seconds, pct(lats, 0.5), pct(lats, 0.99), hwm


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


def mib(results):
    """The servers' VmHWM over the runs: the largest server, and the
    largest sum, MiB."""
    return (max(max(r[3]) for r in results) / 1024, max(sum(r[3]) for r in results) / 1024)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("neardup")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clients", default="1,8,64")
    ap.add_argument("--no-sync", action="store_true")
    ap.add_argument("--fleet", type=int, default=0, metavar="N",
                    help="also N shard servers through neardup.Fleet (and one through Client)")
    a = ap.parse_args()
    sync = not a.no_sync
    print("| what | fsync | requests/s | p50 ms | p99 ms | server VmHWM MiB |\n"
          "|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        for s in ([True, False] if sync else [False]):
            r = median3([embedded_run(a.seconds, s, tmp, i) for i in range(a.runs)])
            print(f"| embedded, 1 writer | {'yes' if s else 'no'} | {r[0]:.0f} | "
                  f"{r[1] * 1e3:.3f} | {r[2] * 1e3:.3f} | |", flush=True)
        setups = [("serve", "raw", 0)]
        if a.fleet:
            setups += [("serve via Client", "client", 0),
                       (f"fleet of {a.fleet} via Fleet", "fleet", a.fleet)]
        for name, mode, shards in setups:
            for c in map(int, a.clients.split(",")):
                rs = [serve_run(a.neardup, c, a.seconds, sync, tmp, i, mode, shards)
                      for i in range(a.runs)]
                r, m = median3(rs), mib(rs)
                mem = f"{m[0]:.0f}" + (f" each, {m[1]:.0f} in all" if shards else "")
                print(f"| {name}, {c} client{'s' if c > 1 else ''} | {'yes' if sync else 'no'} | "
                      f"{r[0]:.0f} | {r[1] * 1e3:.3f} | {r[2] * 1e3:.3f} | {mem} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
