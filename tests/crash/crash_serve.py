#!/usr/bin/env python3
"""crash_serve.py — kill -9 `neardup serve` while many clients add.

  crash_serve.py NEARDUP ROUNDS

Each round: a server over one of two stores kept across rounds (a
fingerprint-only one, a resemblance one, alternately), 16 client threads
sending
check-and-add requests (new documents, near-duplicates of them, and
batches with "add"), each recording what the server acknowledged; after a
random 0.2-1.2 s the server is killed with SIGKILL. Then every
acknowledged key must be stored (`neardup get`), and the store must
verify. Only the standard library: the clients speak HTTP themselves.
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time


def start(nd, path):
    p = subprocess.Popen([nd, "serve", path, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("listening on "):
        err = p.stderr.read()
        if "built without the server" in err:
            print("crash_serve: built without the server: skipped")
            sys.exit(77)
        sys.exit(f"crash_serve: serve did not start: {line}{err}")
    return p, int(line.rsplit(":", 1)[1])


def client(port, tag, rnd, texts, acked, lock, stop):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    i = 0
    while not stop.is_set():
        i += 1
        key = f"{tag}-{i}"
        if rnd.random() < 0.2:
            docs = [{"key": f"{key}.{j}", **doc(rnd, texts)} for j in range(rnd.randrange(1, 8))]
            path, body, keys = "/v1/batch", {"documents": docs, "add": True}, [d["key"] for d in docs]
        else:
            path, body, keys = "/v1/check-and-add", {"key": key, **doc(rnd, texts)}, [key]
        try:
            c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            return  # the server is gone: this request was not acknowledged
        if r.status != 200:
            sys.exit(f"crash_serve: {path} answered {r.status}: {data!r}")
        ans = json.loads(data)
        # fingerprint-only: a dup is not stored; new ones are
        if "results" in ans:
            new = [k for k, res in zip(keys, ans["results"]) if res is None or texts]
        else:
            new = keys if ans["new"] or texts else []
        with lock:
            acked.extend(new)


def doc(rnd, texts):
    if texts:
        return {"text": " ".join(rnd.choice(texts) for _ in range(30))}
    return {"fingerprint": "%016x" % rnd.getrandbits(64)}


def main():
    nd, rounds = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(int(os.environ.get("SEED", "46")))
    words = ["page", "crawl", "copy", "near", "text", "word", "site", "link", "news", "mirror",
             "story", "index", "fresh", "stale", "shard", "group", "commit", "durable"]
    with tempfile.TemporaryDirectory() as tmp:
        stores = {"fp": os.path.join(tmp, "fp.nd"), "res": os.path.join(tmp, "res.nd")}
        subprocess.run([nd, "init", stores["fp"], "--fingerprint-only", "--docs", "100000"],
                       check=True, capture_output=True)
        subprocess.run([nd, "init", stores["res"], "--docs", "100000"], check=True,
                       capture_output=True)
        total = 0
        for r in range(rounds):
            kind = "fp" if r % 2 == 0 else "res"
            texts = words if kind == "res" else None
            p, port = start(nd, stores[kind])
            acked, lock, stop = [], threading.Lock(), threading.Event()
            ts = [threading.Thread(target=client,
                                   args=(port, f"r{r}c{t}", random.Random(rnd.random()), texts,
                                         acked, lock, stop)) for t in range(16)]
            for t in ts:
                t.start()
            time.sleep(rnd.uniform(0.2, 1.2))
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            stop.set()
            for t in ts:
                t.join()
            p.stdout.close()
            p.stderr.close()
            with lock:
                keys = list(acked)
            for i in range(0, len(keys), 500):
                g = subprocess.run([nd, "get", stores[kind], "--", *keys[i:i + 500]],
                                   capture_output=True, text=True)
                if g.returncode != 0:
                    missing = [line for line in g.stdout.splitlines() if line.startswith("missing")]
                    sys.exit(f"crash_serve: round {r}: acknowledged but lost: {missing[:5]} "
                             f"({len(missing)} of {len(keys)}) {g.stderr}")
            v = subprocess.run([nd, "verify", stores[kind]], capture_output=True, text=True)
            if v.returncode != 0:
                sys.exit(f"crash_serve: round {r}: verify failed: {v.stderr}")
            total += len(keys)
        print(f"crash_serve: {rounds} kills, {total} acknowledged documents, none lost")


if __name__ == "__main__":
    main()
