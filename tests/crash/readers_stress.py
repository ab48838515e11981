#!/usr/bin/env python3
"""readers_stress.py — readers in other processes beside a writer are right
or refused, never silently wrong (issue 37, points 1 and 5).

  readers_stress.py NEARDUP [SECONDS]

For SECONDS (default 30), in a store on /dev/shm when there is one (fsync
is free there, so the writer passes mirror flushes and folds):
- a writer process `neardup add DB --sync` of generated fingerprints,
  whose output lines are the acknowledgements; it is stopped now and then
  and `neardup compact DB` runs in its place, then a writer starts again;
- several reader processes, each in a loop: note what was acknowledged,
  then run `neardup query DB --k 0 -` of a sample of those keys (the
  latest ones first); every key must come back (exit 0), or the open is
  refused (exit 2, "busy"); a reader answering without some key fails;
- `neardup verify DB` beside the writer must pass (or be refused busy),
  and `neardup backup DB DEST` beside it must give a copy that verifies
  and holds every key acknowledged before the backup began.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ND = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
READERS = 3
BASE = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None

lock = threading.Lock()
acked = []          # (fp hex, key) in acknowledgement order
failures = []
counts = {"queries": 0, "refused": 0, "keys": 0, "verify": 0, "backups": 0, "compacts": 0}
stop = threading.Event()


def fail(msg):
    with lock:
        failures.append(msg)
    print("FAIL:", msg, flush=True)


def snapshot():
    with lock:
        return list(acked)


def writer_loop(db):
    rng = random.Random(7)
    n = 0
    while not stop.is_set():
        p = subprocess.Popen([ND, "add", db, "--sync", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        batch = ["%016x\tk%d" % (rng.getrandbits(64), n + i) for i in range(200000)]
        n += len(batch)
        fps = {line.split("\t")[1]: line.split("\t")[0] for line in batch}

        def feed():
            try:
                p.stdin.write("\n".join(batch) + "\n")
                p.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
        threading.Thread(target=feed, daemon=True).start()
        deadline = time.time() + 4
        for line in p.stdout:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "new":
                with lock:
                    acked.append((fps[parts[1]], parts[1]))
            if time.time() > deadline or stop.is_set():
                break
        p.terminate()  # SIGTERM: ends cleanly; lines not read are not acknowledgements
        p.stdout.close()
        p.stderr.close()
        p.wait()
        if stop.is_set():
            break
        r = subprocess.run([ND, "compact", db], capture_output=True, text=True)
        if r.returncode != 0:
            fail("compact exit %d: %s" % (r.returncode, r.stderr.strip()))
        counts["compacts"] += 1


def check_reader_answer(db, keys, what):
    """Query keys (known acknowledged); 'ok', 'refused' or a failure."""
    inp = "".join(fp + "\n" for fp, _ in keys)
    r = subprocess.run([ND, "query", db, "--k", "0", "-"], input=inp, capture_output=True,
                       text=True)
    if r.returncode == 2 and "busy" in r.stderr:
        return "refused"
    if r.returncode != 0:
        fail("%s: query exit %d: %s" % (what, r.returncode, r.stderr.strip()[:300]))
        return "failed"
    found = set()
    for line in r.stdout.splitlines():
        f = line.split("\t")
        if len(f) >= 2:
            found.add((f[0], f[1]))
    missing = [k for k in keys if k not in found]
    if missing:
        fail("%s: %d of %d acknowledged keys missing, e.g. %s" % (what, len(missing), len(keys),
                                                                  missing[:3]))
        return "failed"
    return "ok"


def reader_loop(db, seed):
    rng = random.Random(seed)
    while not stop.is_set():
        known = snapshot()
        if not known:
            time.sleep(0.05)
            continue
        sample = known[-300:] + rng.sample(known, min(700, len(known)))
        res = check_reader_answer(db, sample, "reader %d" % seed)
        with lock:
            counts["queries"] += 1
            counts["keys"] += len(sample)
            counts["refused"] += res == "refused"


def verify_backup_loop(db, tmp):
    i = 0
    while not stop.is_set():
        time.sleep(1.5)
        r = subprocess.run([ND, "verify", db], capture_output=True, text=True)
        if r.returncode == 0:
            counts["verify"] += 1
        elif not (r.returncode == 2 and "busy" in r.stderr):
            fail("verify beside the writer: exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
        known = snapshot()
        dest = os.path.join(tmp, "copy%d" % i)
        i += 1
        r = subprocess.run([ND, "backup", db, dest], capture_output=True, text=True)
        if r.returncode != 0:
            if not (r.returncode == 2 and "busy" in r.stderr):
                fail("backup beside the writer: exit %d: %s" % (r.returncode, r.stderr.strip()))
            continue
        r = subprocess.run([ND, "verify", dest], capture_output=True, text=True)
        if r.returncode != 0:
            fail("backup %s does not verify: %s" % (dest, r.stderr.strip()[:300]))
        elif known:
            if check_reader_answer(dest, known, "backup %s" % dest) == "ok":
                counts["backups"] += 1
        shutil.rmtree(dest, ignore_errors=True)


def main():
    tmp = tempfile.mkdtemp(prefix="nd-readers-", dir=BASE)
    try:
        db = os.path.join(tmp, "db")
        subprocess.run([ND, "init", db, "--k", "3", "--docs", "1e5", "--fingerprint-only"], check=True,
                       stdout=subprocess.DEVNULL)
        threads = [threading.Thread(target=writer_loop, args=(db,))]
        threads += [threading.Thread(target=reader_loop, args=(db, s)) for s in range(READERS)]
        threads.append(threading.Thread(target=verify_backup_loop, args=(db, tmp)))
        for t in threads:
            t.start()
        time.sleep(SECONDS)
        stop.set()
        for t in threads:
            t.join()
        r = subprocess.run([ND, "verify", db], capture_output=True, text=True)
        if r.returncode != 0:
            fail("verify after the run: %s" % r.stderr.strip())
        print("acknowledged %d; %d reader queries of %d keys, %d refused; %d verify passes, "
              "%d backups checked, %d compactions" % (len(acked), counts["queries"],
                                                      counts["keys"], counts["refused"],
                                                      counts["verify"], counts["backups"],
                                                      counts["compacts"]))
        if counts["queries"] - counts["refused"] < 5:
            fail("too few reader answers to judge")
        if counts["verify"] == 0 or counts["backups"] == 0:
            fail("no verify or backup beside the writer succeeded")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


sys.exit(main())
