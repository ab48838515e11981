#!/usr/bin/env python3
"""quality_cjk.py -- near-duplicate quality on CJK text of this machine
(issue 47 point 3; bench/README.md, "CJK near-duplicates").

Corpora (JSON lines {"id", "text"} and the same records as .texts for
build/bench/quality_stream, as bench/quality_corpus.py writes them):
  cjk     the translations of the gettext catalogues of this machine,
          /usr/share/locale/{zh_CN,zh_TW,ja,ko}/LC_MESSAGES/*.mo: every
          msgstr (each plural form) of at least 20 CJK characters, in
          locale, file and catalogue order. Its near-duplicates are the
          natural ones: a message shared by several programs' catalogues
          (gnulib, binutils, gettext...), or edited between them.
  cjkman  the independent check: the paragraphs (at least 20 CJK
          characters) of the Chinese and Japanese manual pages,
          /usr/share/man/{zh_CN,zh_TW,ja}/man*/*, roff requests dropped.
  cjkorig the control: cjk with every document kept as it is.
  cjk_zh_CN, cjk_zh_TW, cjk_ja, cjk_ko  cjk by language (the same
          documents and variants).
Each document of cjk and cjkman is then, by a deterministic hash of its key, kept as it is
(one third), word-segmented (one third: a space between two adjacent CJK
characters with probability 0.35, as word-segmented Chinese is) or
wrapped (one third: a line break every 20 to 40 characters, between two
CJK characters or in place of a space, as HTML sources and man pages
are). So two thirds of the documents are segmented or wrapped.

Truth: bench/quality_truth.py --cjk: J = Jaccard resemblance of the sets
of 3-character shingles of the text after NFKC and case folding, each
CJK character a token, white space and punctuation not read. That is what
a reader sees: a space, a line break or a quotation mark inside Chinese
or Japanese text changes no word. Hangul is read the same way (its word
spaces do not count; see docs/fingerprints.md for why).

Folding (Traditional <-> Simplified, ND_FP_FOLD_CHINESE): cjkzh, the
zh_CN and zh_TW documents of cjk, scored against the truth of the texts
folded by OpenCC's command (opencc -c t2s.json) and against the plain
truth, with and without --fold-chinese (the first build only).

Measures (bench/quality_score.py --cjk): stream = build/bench/quality_stream
(a default store, `neardup init --k 3`: resemblance 0.85, the crawler's
sign then check-and-store); dedupe = `neardup dedupe --format jsonl --out
pairs` with defaults.

Usage: quality_cjk.py WORK_DIR BUILD_DIR [LABEL=BUILD_DIR]...
  Builds the corpora and their truth into WORK_DIR once, then runs and
  scores every build (the first one is labelled "after", or give
  LABEL=DIR), printing RESULT lines (quality_score.py's) and a table.
"""
import gzip
import json
import os
import random
import re
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quality_truth  # noqa: E402

MIN_CJK = 20
LOCALES = ("zh_CN", "zh_TW", "ja", "ko")


def mo_strings(path):
    """The msgstr strings of a GNU .mo catalogue, in catalogue order."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic == 0x950412DE else ">"
    n, _, toff = struct.unpack(e + "III", data[8:20])
    out = []
    for i in range(n):
        length, off = struct.unpack(e + "II", data[toff + 8 * i:toff + 8 * i + 8])
        raw = data[off:off + length]
        for part in raw.split(b"\0"):
            out.append(part.decode("utf-8", "replace"))
    return out


def clean(text):
    """As quality_corpus.py: C0 controls but tab and newline made spaces."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", text).strip()


def cjk_count(text):
    return len(quality_truth.CJK_CHAR.findall(text))


def catalogue_docs():
    for loc in LOCALES:
        d = "/usr/share/locale/%s/LC_MESSAGES" % loc
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".mo"):
                continue
            try:
                strings = mo_strings(os.path.join(d, name))
            except (OSError, struct.error):
                continue
            for i, s in enumerate(strings):
                s = clean(s)
                if s.startswith("Project-Id-Version") or cjk_count(s) < MIN_CJK:
                    continue
                yield "%s/%s/%d" % (loc, name[:-3], i), s


_ROFF_ESC = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)|\\s[-+]?\d|\\\(..|\\[&|^e\-]|\\\*\(?..?")


def man_paragraphs(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    text = data.decode("utf-8", "replace")
    paras, cur = [], []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            req = line[1:3]
            if req in ("PP", "P ", "LP", "SH", "SS", "TP", "IP", "HP", "sp", "br") or \
                    line.strip() in (".P", ".PP", ".LP", ".SH", ".br", ".sp"):
                paras.append(cur)
                cur = []
            if req in ("B ", "I ", "BR", "BI", "IR", "IB", "RB", "RI") and len(line) > 3:
                cur.append(line[3:].replace('"', ""))
            continue
        if not line.strip():
            paras.append(cur)
            cur = []
            continue
        cur.append(_ROFF_ESC.sub("", line))
    paras.append(cur)
    for p in paras:
        s = clean("\n".join(p))
        if cjk_count(s) >= MIN_CJK:
            yield s


def man_docs():
    for loc in ("zh_CN", "zh_TW", "ja"):
        root = "/usr/share/man/%s" % loc
        if not os.path.isdir(root):
            continue
        for sec in sorted(os.listdir(root)):
            d = os.path.join(root, sec)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                p = os.path.join(d, name)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                try:
                    for i, s in enumerate(man_paragraphs(p)):
                        yield "%s/%s/%s/%d" % (loc, sec, name, i), s
                except (OSError, EOFError, zlib.error):
                    continue


def is_cjk(c):
    return bool(quality_truth.CJK_CHAR.match(c))


def segmented(text, rng):
    out = []
    for i, c in enumerate(text):
        if i and is_cjk(c) and is_cjk(text[i - 1]) and rng.random() < 0.35:
            out.append(" ")
        out.append(c)
    return "".join(out)


def wrapped(text, rng):
    out, run, width = [], 0, rng.randint(20, 40)
    for i, c in enumerate(text):
        if c == "\n":
            run = 0
        elif run >= width:
            if c == " ":
                out.append("\n")
                run, width = 0, rng.randint(20, 40)
                continue
            if i and is_cjk(c) and is_cjk(text[i - 1]):
                out.append("\n")
                run, width = 0, rng.randint(20, 40)
        out.append(c)
        run += 1
    return "".join(out)


def variant(key, text, keep=False):
    """(kind, text): kept, segmented or wrapped, by a hash of the key."""
    if keep:
        return "orig", text
    h = zlib.crc32(key.encode("utf-8"))
    rng = random.Random(h)
    kind = ("orig", "seg", "wrap")[h % 3]
    if kind == "seg":
        return kind, segmented(text, rng)
    if kind == "wrap":
        return kind, wrapped(text, rng)
    return kind, text


def write_corpus(prefix, docs, keep=False):
    kinds = {"orig": 0, "seg": 0, "wrap": 0}
    with open(prefix + ".jsonl.tmp", "w", encoding="utf-8") as js, \
            open(prefix + ".texts.tmp", "wb") as tx:
        for key, text in docs:
            kind, text = variant(key, text, keep)
            kinds[kind] += 1
            js.write(json.dumps({"id": key, "text": text}, ensure_ascii=False) + "\n")
            raw = text.encode("utf-8")
            tx.write(b"%s\t%d\n" % (key.encode("utf-8"), len(raw)))
            tx.write(raw + b"\n")
    os.rename(prefix + ".jsonl.tmp", prefix + ".jsonl")
    os.rename(prefix + ".texts.tmp", prefix + ".texts")
    print("corpus %s: %d documents (%d kept, %d segmented, %d wrapped)"
          % (prefix, sum(kinds.values()), kinds["orig"], kinds["seg"], kinds["wrap"]))


def run(cmd, out):
    with open(out, "w") as f:
        subprocess.run(cmd, stdout=f, check=True)


def fold_runs(work, build):
    """Traditional <-> Simplified: the Chinese catalogues (zh_CN and zh_TW,
    variants as in cjk), scored against a truth of the texts folded by
    OpenCC's own command (opencc -c t2s.json), with and without
    --fold-chinese; and the folded run against the plain truth."""
    if subprocess.run(["sh", "-c", "command -v opencc"], capture_output=True).returncode:
        print("fold: no opencc command (package opencc): skipped")
        return []
    prefix = os.path.join(work, "cjkzh")
    if not os.path.exists(prefix + ".jsonl"):
        write_corpus(prefix, (d for d in catalogue_docs() if d[0].startswith("zh_")))
    if not os.path.exists(prefix + ".t2s.jsonl"):
        subprocess.run(["opencc", "-c", "t2s.json", "-i", prefix + ".jsonl", "-o",
                        prefix + ".t2s.jsonl"], check=True)
    for corpus in (prefix + ".jsonl", prefix + ".t2s.jsonl"):
        truth = corpus[:-6] + ".truth"
        if not os.path.exists(truth + ".stats"):
            subprocess.run([sys.executable, os.path.join(HERE, "quality_truth.py"), corpus,
                            truth, "--cjk"], check=True)
        with open(truth + ".stats") as f:
            print(f.read().strip())
    out = []
    for label, flag in (("v2", []), ("v2-fold", ["--fold-chinese"])):
        db = "%s.%s.db" % (prefix, label)
        subprocess.run(["rm", "-rf", db], check=True)
        run([os.path.join(build, "bench", "quality_stream"), prefix + ".texts", db] + flag,
            "%s.%s.stream" % (prefix, label))
        subprocess.run(["rm", "-rf", db], check=True)
        run([os.path.join(build, "cli", "neardup"), "dedupe", "--format", "jsonl", "--out",
             "pairs"] + flag + [prefix + ".jsonl"], "%s.%s.pairs" % (prefix, label))
        for truth_of, name in ((".t2s", "cjkzh-folded-truth"), ("", "cjkzh-plain-truth")):
            r = subprocess.run(
                [sys.executable, os.path.join(HERE, "quality_score.py"),
                 prefix + truth_of + ".jsonl", prefix + truth_of + ".truth", "--name", name,
                 "--cjk", "stream:%s=%s.%s.stream" % (label, prefix, label),
                 "pairs:%s=%s.%s.pairs" % (label, prefix, label)],
                check=True, capture_output=True, text=True).stdout
            sys.stdout.write(r)
            out += [l.split("\t") for l in r.splitlines() if l.startswith("RESULT")]
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__.split("Usage: ")[1].split("\n\n")[0])
    work = argv[0]
    builds = []
    for i, a in enumerate(argv[1:]):
        label, _, d = a.rpartition("=")
        builds.append((label or ("after" if i == 0 else "build%d" % i), d))
    os.makedirs(work, exist_ok=True)
    results = []
    corpora = [("cjk", catalogue_docs), ("cjkman", man_docs), ("cjkorig", catalogue_docs)]
    for loc in LOCALES:  # cjk by language
        corpora.append(("cjk_" + loc, lambda loc=loc: (
            d for d in catalogue_docs() if d[0].startswith(loc + "/"))))
    for name, docs in corpora:
        prefix = os.path.join(work, name)
        if not os.path.exists(prefix + ".jsonl"):
            write_corpus(prefix, docs(), keep=name == "cjkorig")
        if not os.path.exists(prefix + ".truth.stats"):
            subprocess.run([sys.executable, os.path.join(HERE, "quality_truth.py"),
                            prefix + ".jsonl", prefix + ".truth", "--cjk", "--check", "2000"],
                           check=True)
        with open(prefix + ".truth.stats") as f:
            print(f.read().strip())
        for label, b in builds:
            db = "%s.%s.db" % (prefix, label)
            subprocess.run(["rm", "-rf", db], check=True)
            run([os.path.join(b, "bench", "quality_stream"), prefix + ".texts", db],
                "%s.%s.stream" % (prefix, label))
            subprocess.run(["rm", "-rf", db], check=True)
            run([os.path.join(b, "cli", "neardup"), "dedupe", "--format", "jsonl", "--out",
                 "pairs", prefix + ".jsonl"], "%s.%s.pairs" % (prefix, label))
            r = subprocess.run(
                [sys.executable, os.path.join(HERE, "quality_score.py"), prefix + ".jsonl",
                 prefix + ".truth", "--cjk", "stream:%s=%s.%s.stream" % (label, prefix, label),
                 "pairs:%s=%s.%s.pairs" % (label, prefix, label)],
                check=True, capture_output=True, text=True).stdout
            sys.stdout.write(r)
            results += [l.split("\t") for l in r.splitlines() if l.startswith("RESULT")]
    results += fold_runs(work, builds[0][1])
    print("\n| corpus | build | use | precision | recall | non-identical recall | calls |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for r in results:
        print("| %s | %s | %s | %s | %s | %s | %s |" % (r[1], r[3], r[2], r[4], r[5], r[6], r[7]))


if __name__ == "__main__":
    main(sys.argv[1:])
