#!/usr/bin/env python3
"""quality_corpus.py -- real-text corpora found on this machine, for the
near-duplicate quality benchmark (bench/README.md, "Near-duplicate
quality"; bench/quality.sh runs it).

Corpora (documents in a fixed, natural order; near-duplicates are the
ones the texts have, nothing is planted):
  pkgdesc  Debian package descriptions (short + long), one per package of
           the release's main archive, from apt's Translation-en index, in
           package-name order; texts of at least 20 words (median about
           55). Families: lib/-dev/-doc packages, versioned variants,
           transitional packages. The index is fetched with
           `apt-get -o Acquire::Languages=en update` (Debian's images set
           Acquire::Languages "none"); a copy is kept beside the corpus.
  manpara  paragraphs of the English man pages (/usr/share/man/man*/,
           gcloud pages left out: their boilerplate repeats 13,000 times),
           roff markup stripped, at least 20 words (median about 36), page
           by page. Families: option texts shared by related tools, licence
           and copyright boilerplate, versioned pages.
  docs     whole files: /usr/share/common-licenses, /usr/share/doc/*/copyright,
           every man page (roff source, all languages) and the gcloud pages;
           the corpus of bench/dedupe_quality.sh as JSON lines.
  files    the same documents as docs, one file each in a directory (the
           input of bench/dedupe_quality.sh, named CATEGORY__NAME).

Output of pkgdesc, manpara and docs: OUT.jsonl, lines {"id": KEY, "text":
TEXT} (the input of `neardup add|dedupe --format jsonl`), and OUT.texts,
the same records for bench/quality_sim as "KEY<TAB>BYTES\\n", the UTF-8
text, "\\n". Texts are decoded as UTF-8 with invalid bytes replaced, NUL
and other C0 controls but tab and newline made spaces, so the JSON and
the texts file carry the same bytes.

Usage: quality_corpus.py pkgdesc|manpara|docs OUT_PREFIX [--src DIR]
       quality_corpus.py files OUT_DIR
  --src DIR  where the Translation-en copy is kept (default: beside OUT)
"""
import glob
import gzip
import json
import lzma
import os
import re
import shutil
import subprocess
import sys

MIN_WORDS = 20
_WORD = re.compile(r"[^\W_]+")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def clean(data):
    """Bytes -> the text every tool of the benchmark sees."""
    return _CONTROL.sub(" ", data.decode("utf-8", "replace"))


def words(text):
    return len(_WORD.findall(text.lower()))


# ---- Debian package descriptions -------------------------------------------

def translation_file(src):
    """The largest Translation-en index (the main archive's), copied to src
    once, so that a later `apt-get update` without languages loses nothing."""
    os.makedirs(src, exist_ok=True)
    kept = glob.glob(os.path.join(src, "*_main_i18n_Translation-en*"))
    if kept:
        return max(kept, key=os.path.getsize)
    found = glob.glob("/var/lib/apt/lists/*_main_i18n_Translation-en*")
    if not found:
        sys.exit("quality_corpus: no Translation-en index in /var/lib/apt/lists; fetch it "
                 "with: apt-get -o Acquire::Languages=en update")
    best = max(found, key=os.path.getsize)
    dst = os.path.join(src, os.path.basename(best))
    shutil.copyfile(best, dst)
    return dst


def read_compressed(path):
    if path.endswith(".lz4"):
        return subprocess.run(["lz4cat", path], check=True, capture_output=True).stdout
    if path.endswith(".gz"):
        return gzip.open(path).read()
    if path.endswith(".xz"):
        return lzma.open(path).read()
    return open(path, "rb").read()


def pkgdesc(src):
    """(key, text) of each package's description, in index order."""
    seen = set()
    for rec in clean(read_compressed(translation_file(src))).split("\n\n"):
        pkg, desc, inside = None, [], False
        for line in rec.split("\n"):
            if line.startswith("Package: "):
                pkg = line[9:].strip()
            elif line.startswith("Description-en: "):
                desc.append(line[16:])
                inside = True
            elif line.startswith(" ") and inside:
                desc.append("" if line.strip() == "." else line[1:])
            else:
                inside = False
        if pkg and desc and pkg not in seen:
            seen.add(pkg)
            text = "\n".join(desc)
            if words(text) >= MIN_WORDS:
                yield "pkg:" + pkg, text


# ---- man pages ---------------------------------------------------------------

_ESCAPE = re.compile(r"\\(f[BIRP1-4]|f\[[^\]]*\]|f\(..|\(..|\[[^\]]*\]|\*\(..|\*\[[^\]]*\]"
                     r"|\*.|s[-+]?\d+|[-&e|^~0 .'`%c:/,!])")
_FONT = {"B", "I", "BI", "BR", "IB", "IR", "RB", "RI", "SM", "SB", "UR", "MT", "OP"}
_BREAK = {"PP", "P", "LP", "TP", "IP", "HP", "SH", "SS", "sp", "br", "TQ", "nf", "fi", "RS",
          "RE", "EX", "EE", "in", "ti", "Bl", "El", "Pp", "It", "Sh", "Ss"}


def _unescape(m):
    e = m.group(1)
    return "-" if e == "-" else " " if e in ("0", " ", "~") else ""


def roff_paragraphs(src):
    """Paragraphs of a roff page: text lines joined, font macros kept as
    text, paragraph and section macros separate, other requests and
    escapes dropped. Crude, but the same text reaches every tool."""
    out, cur = [], []

    def flush():
        if cur:
            out.append(" ".join(cur))
            cur.clear()

    for line in src.split("\n"):
        if line.startswith(('.\\"', "'\\\"", '\\"')):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].strip().split(None, 1)
            if not parts:
                flush()
                continue
            mac, arg = parts[0], parts[1] if len(parts) > 1 else ""
            if mac in _FONT:
                cur.append(arg.replace('"', ""))
            elif mac in _BREAK:
                flush()
                if mac in ("SH", "SS") and arg:
                    out.append(arg.replace('"', ""))
            continue
        if not line.strip():
            flush()
            continue
        cur.append(line)
    flush()
    return [" ".join(_ESCAPE.sub(_unescape, p).replace("\\", "").split()) for p in out]


def man_pages(top="/usr/share/man", english_only=False):
    """(relative path without .gz, decompressed bytes) of each gzipped man
    page that is a regular file and not a .so redirect, in sorted order."""
    for root, dirs, files in os.walk(top):
        dirs.sort()
        if english_only and os.path.relpath(root, top) != "." and \
                not os.path.relpath(root, top).startswith("man"):
            dirs.clear()
            continue
        for fn in sorted(files):
            p = os.path.join(root, fn)
            if os.path.islink(p) or not fn.endswith(".gz"):
                continue
            try:
                data = gzip.open(p).read()
            except (OSError, EOFError):
                continue
            if data.startswith(b".so "):
                continue
            yield os.path.relpath(p, top)[:-3], data


def manpara():
    for rel, data in man_pages(english_only=True):
        if os.path.basename(rel).startswith("gcloud"):
            continue
        for i, para in enumerate(roff_paragraphs(clean(data))):
            if words(para) >= MIN_WORDS:
                yield "man:%s#%d" % (rel, i), para


# ---- whole files (bench/dedupe_quality.sh's corpus) --------------------------

def whole_files():
    """(CATEGORY__NAME, bytes) of every document of the files corpus."""
    for p in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(p) and not os.path.islink(p):
            yield "lic__" + os.path.basename(p), open(p, "rb").read()
    for p in sorted(glob.glob("/usr/share/doc/*/copyright")):
        if os.path.isfile(p) and not os.path.islink(p):
            yield "copyright__" + p.split("/")[-2], open(p, "rb").read()
    for rel, data in man_pages():
        cat = "gcloud" if os.path.basename(rel).startswith("gcloud") else "man"
        yield cat + "__" + rel.replace("/", "_"), data


def docs():
    for name, data in whole_files():
        if data.strip():
            yield name, clean(data)


def write_files(out):
    tmp = out + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    for name, data in whole_files():
        if data.strip():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
    os.rename(tmp, out)


def write_corpus(prefix, records):
    n = 0
    with open(prefix + ".jsonl.tmp", "w", encoding="utf-8") as js, \
            open(prefix + ".texts.tmp", "wb") as tx:
        for key, text in records:
            js.write(json.dumps({"id": key, "text": text}, ensure_ascii=False) + "\n")
            raw = text.encode("utf-8")
            tx.write(b"%s\t%d\n" % (key.encode("utf-8"), len(raw)))
            tx.write(raw + b"\n")
            n += 1
    os.rename(prefix + ".texts.tmp", prefix + ".texts")
    os.rename(prefix + ".jsonl.tmp", prefix + ".jsonl")
    return n


def main(argv):
    src = None
    if len(argv) >= 4 and argv[2] == "--src":
        src = argv[3]
        argv = argv[:2]
    if len(argv) != 2 or argv[0] not in ("pkgdesc", "manpara", "docs", "files"):
        sys.exit("usage: quality_corpus.py pkgdesc|manpara|docs OUT_PREFIX [--src DIR]\n"
                 "       quality_corpus.py files OUT_DIR")
    kind, out = argv
    if kind == "files":
        write_files(out)
        return
    if src is None:
        src = os.path.join(os.path.dirname(os.path.abspath(out)), "src")
    records = {"pkgdesc": lambda: pkgdesc(src), "manpara": manpara, "docs": docs}[kind]()
    n = write_corpus(out, records)
    print("corpus %s: %d documents -> %s.jsonl" % (kind, n, out))


if __name__ == "__main__":
    main(sys.argv[1:])
