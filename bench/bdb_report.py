#!/usr/bin/env python3
"""bdb_report.py -- turn bench_db runs into a result file and its table.

Usage: bdb_report.py --size SIZE --out RESULT.json --md RESULT.md
                     [--commit HASH --dirty 0|1] [--note TEXT]
                     RUN.json... [--faiss FAISS.json...]
(--commit: the commit bench_db was built from; default the current HEAD)

Every metric is summarised over the runs as median, min and max; each
neardup figure (nd.*) is also given as a ratio to the same figure of each
baseline measured in the same runs (ref.*, scan.*, faiss_mh.*, faiss_flat.*:
value of neardup / value of the baseline), and the disk figure to the
entropy bound 64 - log2 N + 1.44. RESULT.md (beside RESULT.json in
bench/results/) is the record's table, every figure with its range; the
method it follows and the current figures are in bench/README.md, which
this script does not touch. Standard library only.
"""
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys

BASELINES = ("ref", "scan", "faiss_mh", "faiss_flat")
TARGETS = {  # issue 5, at N = 100M, k = 3, 2 cores
    "nd.query.k3.t1.p50_us": ("<=", 20),
    "nd.query.k3.t1.p99_us": ("<=", 100),
    "nd.query.k6.t1.p50_us": ("<=", 500),
    "nd.batch.k3.s": ("<=", 10),
    "nd.selfjoin.k3.s": ("<=", 1),
    "nd.load.docs_per_s": (">=", 1e6),
    "nd.stream.docs_per_s": (">=", 5e4),
    "rss.query_mib": ("<=", 1024),
}

# (label, neardup metric, baseline metric suffix or None, unit)
ROWS = [
    ("bulk import (docs/s)", "nd.load.docs_per_s", "load.docs_per_s"),
    ("bulk import: first call (s)", "nd.load.first_call_s", None),
    ("bulk import: last call (s)", "nd.load.last_call_s", None),
    ("stream add_if_new, WAL, no fsync (docs/s)", "nd.stream.docs_per_s", None),
    ("stream add_if_new latency p50 (us)", "nd.stream.k3.p50_us", None),
    ("stream add_if_new latency p99 (us)", "nd.stream.k3.p99_us", None),
    ("stream add_if_new, 2 threads, WAL, no fsync (docs/s)", "nd.stream_t2.docs_per_s", None),
    ("stream add_if_new, tables mapped (docs/s)", "nd.stream_mmap.docs_per_s", None),
    ("stream add_if_new, tables mapped, latency p50 (us)", "nd.stream_mmap.k3.p50_us", None),
    ("stream add_if_new, tables mapped, 2 threads (docs/s)", "nd.stream_mmap_t2.docs_per_s",
     None),
    ("group commit: query + nd_db_add_many, ND_DB_SYNC (docs/s)",
     "nd.stream_group_sync.docs_per_s", None),
    ("add_if_new with fsync per doc (docs/s)", "nd.stream_sync_each.docs_per_s", None),
    ("stream in groups: nd_db_batch ADD, WAL, no fsync (docs/s)",
     "nd.stream_batch.docs_per_s", None),
    ("stream in groups: nd_db_batch ADD, ND_DB_SYNC (docs/s)",
     "nd.stream_batch_sync.docs_per_s", None),
    ("query k=3, 1 thread, p50 (us)", "nd.query.k3.t1.p50_us", "query.k3.t1.p50_us"),
    ("query k=3, 1 thread, p99 (us)", "nd.query.k3.t1.p99_us", "query.k3.t1.p99_us"),
    ("query k=3, 1 thread (queries/s)", "nd.query.k3.t1.qps", "query.k3.t1.qps"),
    ("query k=3, 2 threads, p50 (us)", "nd.query.k3.t2.p50_us", "query.k3.t2.p50_us"),
    ("query k=3, 2 threads, p99 (us)", "nd.query.k3.t2.p99_us", "query.k3.t2.p99_us"),
    ("query k=3, 2 threads (queries/s)", "nd.query.k3.t2.qps", "query.k3.t2.qps"),
    ("query k=3, fingerprints only, p50 (us)", "nd.query_fponly.k3.t1.p50_us",
     "query.k3.t1.p50_us"),
    ("query k=3, tables mapped, 1 thread, p50 (us)", "nd.query_mmap.k3.t1.p50_us",
     "query.k3.t1.p50_us"),
    ("query k=3, tables mapped, 1 thread, p99 (us)", "nd.query_mmap.k3.t1.p99_us",
     "query.k3.t1.p99_us"),
    ("query k=3, tables mapped, 2 threads (queries/s)", "nd.query_mmap.k3.t2.qps",
     "query.k3.t2.qps"),
    ("query k=3, tables mapped, fingerprints only, p50 (us)",
     "nd.query_mmap_fponly.k3.t1.p50_us", "query.k3.t1.p50_us"),
    ("query k=6, tables mapped, 1 thread, p50 (us)", "nd.query_mmap.k6.t1.p50_us",
     "query.k6.t1.p50_us"),
    ("query k=6, 1 thread, p50 (us)", "nd.query.k6.t1.p50_us", "query.k6.t1.p50_us"),
    ("query k=6, 1 thread, p99 (us)", "nd.query.k6.t1.p99_us", "query.k6.t1.p99_us"),
    ("query k=6, 1 thread (queries/s)", "nd.query.k6.t1.qps", "query.k6.t1.qps"),
    ("query k=6, 2 threads, p50 (us)", "nd.query.k6.t2.p50_us", "query.k6.t2.p50_us"),
    ("query k=6, 2 threads (queries/s)", "nd.query.k6.t2.qps", "query.k6.t2.qps"),
    ("cold query k=3, p50 (us)", "nd.query_cold.k3.t1.p50_us", "query.k3.t1.p50_us"),
    ("cold query k=3, p99 (us)", "nd.query_cold.k3.t1.p99_us", "query.k3.t1.p99_us"),
    ("cold query k=6, p50 (us)", "nd.query_cold.k6.t1.p50_us", "query.k6.t1.p50_us"),
    ("batch of B queries, k=3 (s)", "nd.batch.k3.s", "batch.k3.s"),
    ("self-join of J bare fps, k=3 (s)", "nd.selfjoin.k3.s", "selfjoin.k3.s"),
    ("disk: total (MB)", "nd.disk.mb", None),
    ("disk: bytes per document, all families", "nd.disk.bytes_per_doc", None),
    ("disk: table bits per entry per table", "nd.disk.table_bits_per_entry",
     "disk.table_bits_per_entry"),
    ("disk: all files, bits per entry per table", "nd.disk.all_bits_per_entry_table", None),
    ("peak RSS: bulk import (MiB)", "rss.load_mib", None),
    ("RSS when the query phase starts (MiB)", "rss.query_start_mib", None),
    ("peak RSS: queries (MiB)", "rss.query_mib", None),
    ("peak RSS: queries, tables mapped (MiB; mapped page cache included)",
     "rss.query_mmap_mib", None),
    ("RSS after the mapped queries: anonymous (MiB; top's RES minus SHR)",
     "rss.query_mmap_anon_mib", None),
    ("RSS after the mapped queries: file-backed (MiB; top's SHR: mapped tables)",
     "rss.query_mmap_file_mib", None),
    ("peak RSS: batch (MiB)", "rss.batch_mib", None),
    ("peak RSS: self-join (MiB)", "rss.selfjoin_mib", None),
    ("peak RSS: stream (MiB)", "rss.stream_mib", None),
    ("peak RSS: stream, tables mapped (MiB)", "rss.stream_mmap_mib", None),
    ("peak RSS: in-memory reference (MiB)", "rss.ref_mib", None),
    ("RSS of the harness's own data before neardup's phases (MiB)", "rss.harness_mib", None),
]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def machine(path):
    info = {"cores": os.cpu_count()}
    try:
        # The model name alone hides what the scan and the reference use
        # (bench_db is built with -march=native): "AMD EPYC" machines here
        # came with and without AVX-512, and the scan ran 3.5x apart.
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    info["isa"] = ("AVX-512" if "avx512f" in flags else
                                   "AVX2" if "avx2" in flags else "SSE")
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["ram_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    df = sh("df", "-hT", path).splitlines()
    if len(df) > 1:
        p = df[1].split()
        info["disk"] = "%s %s (%s, %s free)" % (p[0], p[1], p[2], p[4])
        dev = os.path.basename(p[0])
        base = re.sub(r"p?\d+$", "", dev) if not os.path.exists(
            "/sys/block/%s" % dev) else dev
        rot = "/sys/block/%s/queue/rotational" % base
        if os.path.exists(rot):
            with open(rot) as f:
                info["disk"] += ", rotational" if f.read().strip() == "1" else ", non-rotational"
    info["kernel"] = sh("uname", "-r")
    return info


def git_info(root):
    commit = sh("git", "-C", root, "rev-parse", "--short=12", "HEAD")
    dirty = sh("git", "-C", root, "status", "--porcelain", "-uno", "--", "engine", "compaction",
               "include", "common", "bench", "meson.build")
    return commit, bool(dirty)


def summary(vals):
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "runs": vals}


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e6:
        return "%.2fM" % (v / 1e6)
    if a >= 1e4:
        return "%.0fk" % (v / 1e3)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def cell(s):
    if s is None:
        return "-"
    if s["min"] == s["max"] or len(s["runs"]) == 1:
        return fmt(s["median"])
    return "%s (%s-%s)" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"]))


def main():
    args = sys.argv[1:]
    size = out = md = commit_arg = dirty_arg = None
    runs, faiss, notes = [], [], []
    target = runs
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--size", "--out", "--md", "--faiss-note", "--note", "--commit",
                 "--dirty") and i + 1 < len(args):
            v = args[i + 1]
            if a == "--commit":
                commit_arg = v
            elif a == "--dirty":
                dirty_arg = v != "0"
            elif a == "--size":
                size = v
            elif a == "--out":
                out = v
            elif a == "--md":
                md = v
            else:
                notes.append(v)
            i += 2
            continue
        if a == "--faiss":
            target = faiss
        else:
            target.append(a)
        i += 1
    if not size or not out or not runs:
        print(__doc__, file=sys.stderr)
        return 2
    docs = []
    for p in runs:
        with open(p) as f:
            docs.append(json.load(f))
    fdocs = []
    for p in faiss:
        with open(p) as f:
            fdocs.append(json.load(f))
    # merge faiss run i into run i
    per_run = []
    for i, d in enumerate(docs):
        m = dict(d["metrics"])
        if i < len(fdocs):
            m.update(fdocs[i]["metrics"])
        n = d["n"]
        m["bound.disk.table_bits_per_entry"] = 64 - math.log2(n) + 1.44
        m["bound_plus4.disk.table_bits_per_entry"] = 64 - math.log2(n) + 4
        if "nd.disk.bytes" in m:
            m["nd.disk.mb"] = m["nd.disk.bytes"] / 1e6
        per_run.append(m)
    keys = []
    for m in per_run:
        for k in m:
            if k not in keys:
                keys.append(k)
    metrics = {}
    for k in keys:
        vals = [m[k] for m in per_run if k in m]
        metrics[k] = summary(vals)
    ratios = {}
    for label, ndk, base in ROWS:
        if not base or ndk not in metrics:
            continue
        r = {}
        for b in BASELINES + ("bound",):
            bk = "%s.%s" % (b, base)
            if bk in metrics and metrics[bk]["median"]:
                r[b] = metrics[ndk]["median"] / metrics[bk]["median"]
        if r:
            ratios[ndk] = r
    for d in docs + fdocs:
        for nt in d.get("notes", []):
            if nt not in notes:
                notes.append(nt)
    failures = sum(d.get("failures", 0) for d in docs) + sum(
        d["metrics"].get("faiss.failures", 0) for d in fdocs)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit, dirty = git_info(root)
    if commit_arg:  # the commit the benchmark was built from (run.sh)
        commit, dirty = commit_arg, bool(dirty_arg)
    now = datetime.datetime.now(datetime.timezone.utc)
    d0 = docs[0]
    result = {
        "size": size, "date": now.strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
        "dirty": dirty, "machine": machine(root),
        "params": {k: d0[k] for k in d0 if k not in ("metrics", "notes")},
        "runs": len(docs), "faiss_runs": len(fdocs), "failures": failures,
        "estimated": ["scan.batch.k3.s", "scan.selfjoin.k3.s", "faiss_flat.batch.k3.s"],
        "targets_100M": {k: "%s %g" % v for k, v in TARGETS.items()},
        "notes": notes, "metrics": metrics, "ratios": ratios,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    if md:
        write_record(md, result, os.path.relpath(out, os.path.dirname(md)))
    return 0


def section_text(res, rel):
    m, r, p = res["metrics"], res["ratios"], res["params"]
    mach = res["machine"]
    lines = ["### N = %s" % res["size"], ""]
    lines.append("%s, commit `%s`%s; %s cores (%s), %s GiB RAM, disk %s. "
                 "%d run%s%s; plan: k=%s, %s tables (%s blocks); Q=%s online queries "
                 "(k=6: %s, cold: %s), B=%s batch, J=%s self-join%s; checks: %s. "
                 "Full figures: [`%s`](%s)." % (
                     res["date"], res["commit"], " + uncommitted changes" if res["dirty"] else "",
                     mach.get("cores"),
                     ", ".join(v for v in (mach.get("cpu", "?"), mach.get("isa")) if v),
                     mach.get("ram_gib", "?"),
                     mach.get("disk", "?"), res["runs"], "" if res["runs"] == 1 else "s",
                     " (FAISS: %d)" % res["faiss_runs"] if res["faiss_runs"] else
                     " (FAISS skipped: see the notes)",
                     p["plan"]["k"], p["plan"]["tables"], p["plan"]["blocks"],
                     p["q"], p["q6"], p["qcold"], fmt(p["batch"]), fmt(p["join"]),
                     # records before 2026-11-26 10:30 do not say (they used 256)
                     ", groups of %s" % p["group"] if "group" in p else "",
                     "all agree" if res["failures"] == 0 else
                     "**%d DISAGREEMENTS**" % res["failures"], rel, rel))
    lines.append("")
    lines.append("| figure | neardup | ref | scan | FAISS MH | FAISS flat | target (100M) |")
    lines.append("|---|---|---|---|---|---|---|")
    for label, ndk, base in ROWS:
        if ndk not in m:
            continue
        label = label.replace("B queries", "%s queries" % fmt(p["batch"])).replace(
            "J bare", "%s bare" % fmt(p["join"]))
        row = [label, cell(m[ndk])]
        for b in BASELINES:
            bk = "%s.%s" % (b, base) if base else None
            s = m.get(bk) if bk else None
            if not s:
                row.append("")
                continue
            txt = fmt(s["median"]) + (" (est.)" if bk in res["estimated"] else "")
            rv = r.get(ndk, {}).get(b)
            if rv is not None:
                txt += " &rarr; %sx" % ("%.2g" % rv if rv < 100 else "%.0f" % rv)
            row.append(txt)
        t = TARGETS.get(ndk)
        if ndk == "nd.disk.table_bits_per_entry":
            t = ("<=", m["bound_plus4.disk.table_bits_per_entry"]["median"])
        row.append("%s %s" % (t[0].replace("<=", "&le;").replace(">=", "&ge;"), fmt(t[1]))
                   if t else "")
        lines.append("| " + " | ".join(row) + " |")
    if "bound.disk.table_bits_per_entry" in m:
        lines.append("")
        lines.append("Entropy bound 64 - log2 N + 1.44 = %.1f bits per entry per table; "
                     "neardup's tables: %s of it; the target, 64 - log2 N + 4, is %.1f."
                     % (m["bound.disk.table_bits_per_entry"]["median"],
                        "%.2fx" % r.get("nd.disk.table_bits_per_entry", {}).get("bound", 0),
                        m["bound_plus4.disk.table_bits_per_entry"]["median"]))
    if res["notes"]:
        lines.append("")
        for nt in res["notes"]:
            lines.append("- " + nt)
    lines.append("")
    return "\n".join(lines)


def write_record(path, res, rel):
    """The record's table as a Markdown file of its own."""
    with open(path, "w") as f:
        f.write("# bench_db record: N = %s\n\n"
                "Written by bench/run.sh (bench/bdb_report.py); the method is in\n"
                "[bench/README.md](../README.md).\n\n" % res["size"])
        f.write(section_text(res, rel))


if __name__ == "__main__":
    sys.exit(main())
