#!/usr/bin/env python3
"""quality_report.py -- the tables of the near-duplicate quality benchmark
(bench/README.md, "Near-duplicate quality"), in Markdown, from the lines
bench/quality.sh collects:
  TRUTH<TAB>CORPUS<TAB>documents<TAB>median words<TAB>pairs J>=0.8<TAB>
        J>=0.9<TAB>identical                      (quality_truth.py --stats)
  RESULT<TAB>CORPUS<TAB>stream|pairs<TAB>LABEL<TAB>precision<TAB>recall<TAB>
        non-identical recall<TAB>...               (quality_score.py)
  SIM<TAB>CORPUS<TAB>LABEL<TAB>sketch bytes<TAB>band keys<TAB>stream
        candidates<TAB>pair candidates<TAB>cand J>=0.9<TAB>cand 0.8-0.9<TAB>
        P(0.9)<TAB>P(0.8)<TAB>sketch us<TAB>band us<TAB>shared
                                                   (quality_sim, CORPUS added)
The label "engine" is today's neardup with default options; "resemblance"
its store created with --resemblance (the stream only).

Tables: the corpora; the engine's figures in issue 34's layout; per
design the worst figure over the corpora of each measure (targets: stream
and pairs precision and recall >= 0.97, non-identical recall >= 0.93),
bytes a document (sketch + band keys at BAND_KEY_BYTES each) and
candidates a document; band layouts; every figure per corpus.

Usage: quality_report.py RESULTS.tsv
"""
import sys

TARGETS = (0.97, 0.97, 0.93)
# A band key on disk: 4 bytes of band hash + 8 of fingerprint (the
# reference to the document) + 1 byte of band number; RocksDB's own
# overhead comes on top (and prefix compression takes some off).
BAND_KEY_BYTES = 13
MEASURES = ("precision", "recall", "non-identical recall")


def load(path):
    truth, result, sim, order = {}, {}, {}, []
    with open(path) as f:
        for line in f:
            x = line.rstrip("\n").split("\t")
            if x[0] == "TRUTH":
                truth[x[1]] = x[2:]
            elif x[0] == "RESULT":
                result[(x[1], x[2], x[3])] = [float(v) for v in x[4:7]]
                if x[3] not in order:
                    order.append(x[3])
            elif x[0] == "SIM":
                sim[(x[1], x[2])] = x[3:]
    corpora = list(truth) or sorted({k[0] for k in result})
    return corpora, truth, result, sim, order


def fmt(v):
    return "%.4f" % v


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " if i == 0 else " ---: "
                                                         for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: quality_report.py RESULTS.tsv")
    corpora, truth, result, sim, order = load(argv[0])
    print("### Corpora\n")
    print(table(["corpus", "documents", "median words", "pairs J >= 0.8", "J >= 0.9",
                 "identical (J = 1)"],
                [[c] + ["{:,}".format(int(v)) for v in truth[c]] for c in corpora if c in truth]))
    if any(("engine" == k[2]) for k in result):
        print("\n### Today's engine (default options)\n")
        rows = []
        for use, label, name in (
                ("stream", "engine", "stream (`init --k 3`, `add --format jsonl`)"),
                ("stream", "resemblance", "stream (`init --k 3 --resemblance`, `add`)"),
                ("pairs", "engine", "`dedupe --out pairs`")):
            if not any((c, use, label) in result for c in corpora):
                continue
            for m in range(3):
                rows.append([name + ": " + MEASURES[m]] +
                            [fmt(result[(c, use, label)][m]) if (c, use, label) in result
                             else "-" for c in corpora])
        print(table(["measure"] + corpora, rows))
    designs = [d for d in order if d not in ("engine", "resemblance")]
    if designs:
        print("\n### Designs: the worst corpus of each measure\n")
        rows = []
        for d in designs:
            sims = [sim[(c, d)] for c in corpora if (c, d) in sim]
            cells, met = [d], True
            if sims:
                s = sims[0]
                keys = int(s[1])
                # CPU of the sketch and the band keys; one computation
                # when the bands are the sketch's own bins.
                cpu = max(float(x[8]) + (0 if x[10] == "1" else float(x[9])) for x in sims)
                cells += [s[0], str(keys), str(int(s[0]) + BAND_KEY_BYTES * keys),
                          " / ".join("%.1f" % float(sim[(c, d)][2]) if (c, d) in sim else "-"
                                     for c in corpora), "%.1f" % cpu]
            else:
                cells += ["-"] * 5
            for use in ("stream", "pairs"):
                for m in range(3):
                    vals = [(result[(c, use, d)][m], c) for c in corpora if (c, use, d) in result]
                    if not vals:
                        cells.append("-")
                        continue
                    v, c = min(vals)
                    met = met and v >= TARGETS[m]
                    cells.append(fmt(v) + ("" if v >= TARGETS[m] else " (%s)" % c))
            cells.append("**yes**" if met else "no")
            rows.append(cells)
        print(table(["design", "sketch B", "band keys", "B/doc", "stream cand/doc (" +
                     " / ".join(corpora) + ")", "CPU us/doc", "stream P", "stream R",
                     "stream R non-ident.", "pairs P", "pairs R", "pairs R non-ident.",
                     "all targets"], rows))
        # band layout and k -> corpus -> SIM fields, from the designs with the
        # first design's sketch when there are (their bands may come from
        # its bins), else the first seen
        layouts = {}
        first = designs[0].split("_")[0]
        for d in sorted(designs, key=lambda d: d.split("_")[0] != first):
            parts = d.split("_")
            key = parts[1] + ("" if not any(p.startswith("k") for p in parts[3:]) else
                              ", " + next(p for p in parts[3:] if p.startswith("k")))
            for c in corpora:
                if (c, d) in sim:
                    layouts.setdefault(key, {}).setdefault(c, sim[(c, d)])
        print("\n### Band layouts (candidates: a shared band key, or simhash within k = 3)\n")
        rows = []
        for key, per in layouts.items():
            s = next(iter(per.values()))
            rows.append([key, s[1], "%.4f" % float(s[6]), "%.4f" % float(s[7]),
                         "%.4f" % min(float(x[4]) for x in per.values()),
                         "%.4f" % min(float(x[5]) for x in per.values()),
                         " / ".join("%.1f" % float(per[c][3]) if c in per else "-" for c in corpora),
                         "%.1f" % max(float(x[9]) for x in per.values())])
        print(table(["bands", "keys", "P(0.9) theory", "P(0.8) theory", "caught J >= 0.9 (worst)",
                     "caught 0.8-0.9 (worst)", "pair cand/doc (" + " / ".join(corpora) + ")",
                     "band CPU us/doc"], rows))
    print("\n### Every figure (stream P / R / R non-ident. ; pairs P / R / R non-ident.)\n")
    rows = []
    for d in order:
        row = [d]
        for c in corpora:
            st, pa = result.get((c, "stream", d)), result.get((c, "pairs", d))
            row.append(("%s / %s / %s" % tuple(fmt(v) for v in st) if st else "-") + " ; " +
                       ("%s / %s / %s" % tuple(fmt(v) for v in pa) if pa else "-"))
        rows.append(row)
    print(table(["design"] + corpora, rows))


if __name__ == "__main__":
    main(sys.argv[1:])
