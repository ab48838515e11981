#!/usr/bin/python3
"""bdb_faiss.py -- FAISS peers of bench_db, on the data bench_db dumps.

Reads DIR/stored.u64, queries.u64, batch.u64 (little-endian uint64) and
the in-memory reference's answer counts refcnt3.u32, refcnt6.u32,
refbcnt.u32 (written by `bench_db --dump DIR`), then measures
  faiss_mh:   IndexBinaryMultiHash(64, 4, 16) -- 4 hash tables on 16-bit
              substrings: exact at radius <= 3 with nflip = 0 (pigeonhole),
              at radius <= 6 with nflip = 1 (some substring is within 1);
  faiss_flat: IndexBinaryFlat, the exhaustive scan;
with range_search at radius k + 1 (FAISS keeps distances < radius). Every
answer count is checked against the reference's; a disagreement makes the
exit status 1. Online latency is one range_search call per query on one
OpenMP thread, so it includes the Python call overhead (a few us); the
batch is one call over the whole batch on one thread.

Usage: bdb_faiss.py DIR OUT.json [--q N] [--q6 N] [--flat-q N] [--batch-q N]
  --batch-q N  time the MultiHash batch on its first N queries only and
               extrapolate (0 = all; at N = 100M a full 1M batch on one
               thread takes about half an hour)
Exit: 0 ok, 1 disagreement, 3 FAISS not installed (the caller skips it).
"""
import json
import resource
import sys
import time

try:
    import faiss
    import numpy as np
except ImportError as e:  # the benchmark skips FAISS with a note
    print("bdb_faiss.py: FAISS not available (%s): apt-get install python3-faiss" % e,
          file=sys.stderr)
    sys.exit(3)


def load(d, name, dtype):
    return np.fromfile("%s/%s" % (d, name), dtype=dtype)


def as_bytes(v):
    return np.ascontiguousarray(v).view(np.uint8).reshape(-1, 8)


def latency(index, q, radius, n):
    lat = np.empty(n)
    counts = np.empty(n, dtype=np.int64)
    w0 = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        lims, _, _ = index.range_search(q[i:i + 1], radius)
        lat[i] = time.perf_counter() - t0
        counts[i] = lims[1]
    wall = time.perf_counter() - w0
    return lat, counts, wall


def record(m, prefix, lat, wall):
    m[prefix + ".p50_us"] = float(np.quantile(lat, 0.5) * 1e6)
    m[prefix + ".p99_us"] = float(np.quantile(lat, 0.99) * 1e6)
    m[prefix + ".qps"] = len(lat) / wall if wall > 0 else 0.0


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    d, out = args[0], args[1]
    opts = {"--q": 10000, "--q6": 2000, "--flat-q": 200, "--batch-q": 0}
    i = 2
    while i < len(args):
        if args[i] in opts and i + 1 < len(args):
            opts[args[i]] = int(float(args[i + 1]))
            i += 2
        else:
            print("bdb_faiss.py: bad argument %s" % args[i], file=sys.stderr)
            return 2
    stored = as_bytes(load(d, "stored.u64", "<u8"))
    queries = as_bytes(load(d, "queries.u64", "<u8"))
    batch = as_bytes(load(d, "batch.u64", "<u8"))
    ref3 = load(d, "refcnt3.u32", "<u4")
    ref6 = load(d, "refcnt6.u32", "<u4")
    refb = load(d, "refbcnt.u32", "<u4")
    n = stored.shape[0]
    q3 = min(opts["--q"], queries.shape[0], ref3.shape[0])
    q6 = min(opts["--q6"], queries.shape[0], ref6.shape[0])
    fq = min(opts["--flat-q"], q3)
    m, notes, failures = {}, [], 0
    faiss.omp_set_num_threads(1)

    def check(what, got, want):
        nonlocal failures
        bad = np.nonzero(got != want)[0]
        if len(bad):
            failures += 1
            msg = "DISAGREEMENT: %s: %d of %d counts differ from the reference (first: " \
                  "query %d, %d vs %d)" % (what, len(bad), len(want), bad[0], got[bad[0]],
                                           want[bad[0]])
            notes.append(msg)
            print("bdb_faiss.py: " + msg, file=sys.stderr)

    # MultiHash
    t0 = time.perf_counter()
    mh = faiss.IndexBinaryMultiHash(64, 4, 16)
    mh.add(stored)
    m["faiss_mh.load.docs_per_s"] = n / (time.perf_counter() - t0)
    for k, nq, nflip, ref in ((3, q3, 0, ref3), (6, q6, 1, ref6)):
        mh.nflip = nflip
        lat, cnt, wall = latency(mh, queries, k + 1, nq)
        record(m, "faiss_mh.query.k%d.t1" % k, lat, wall)
        check("faiss_mh k=%d" % k, cnt, ref[:nq].astype(np.int64))
        for th in (1, 2):  # one call for all the queries
            faiss.omp_set_num_threads(th)
            t0 = time.perf_counter()
            mh.range_search(queries[:nq], k + 1)
            m["faiss_mh.query_onecall.k%d.t%d.qps" % (k, th)] = nq / (time.perf_counter() - t0)
        faiss.omp_set_num_threads(1)
    mh.nflip = 0
    nb = batch.shape[0]
    bq = opts["--batch-q"] if 0 < opts["--batch-q"] < nb else nb
    t0 = time.perf_counter()
    lims, _, _ = mh.range_search(batch[:bq], 4)
    m["faiss_mh.batch.k3.s"] = (time.perf_counter() - t0) * nb / bq
    m["faiss_mh.batch.k3.qps"] = nb / m["faiss_mh.batch.k3.s"]
    check("faiss_mh batch", np.diff(lims).astype(np.int64), refb[:bq].astype(np.int64))
    if bq < nb:
        notes.append("faiss_mh.batch.k3.s is extrapolated from the first %d of the %d batch "
                     "queries" % (bq, nb))
    m["rss.faiss_mh_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    del mh

    # Flat (exhaustive): a sample of queries, the batch extrapolated.
    flat = faiss.IndexBinaryFlat(64)
    t0 = time.perf_counter()
    flat.add(stored)
    m["faiss_flat.add.docs_per_s"] = n / (time.perf_counter() - t0)
    for k, ref in ((3, ref3), (6, ref6)):
        nq = min(fq, ref.shape[0])
        lat, cnt, wall = latency(flat, queries, k + 1, nq)
        record(m, "faiss_flat.query.k%d.t1" % k, lat, wall)
        check("faiss_flat k=%d" % k, cnt, ref[:nq].astype(np.int64))
        if k == 3:
            m["faiss_flat.batch.k3.s"] = wall / nq * batch.shape[0]
    notes.append("faiss_flat.batch.k3.s is extrapolated from %d single queries" % fq)
    notes.append("FAISS %s; online latency includes the Python call (one range_search "
                 "per query, 1 OpenMP thread)" % faiss.__version__)
    m["faiss.failures"] = failures
    with open(out, "w") as f:
        json.dump({"notes": notes, "metrics": m}, f, indent=2)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
