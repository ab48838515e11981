#!/usr/bin/env python3
"""quality_truth.py -- exact resemblance truth of a corpus, independent of
the engine (bench/README.md, "Near-duplicate quality").

Resemblance J(A, B) = |A n B| / |A u B| of the documents' word 3-shingle
sets: the text is lower-cased, tokens are maximal runs of letters and
digits (Python's str.isalnum, regex [^\\W_]+), a shingle is 3 consecutive
tokens (a text of 1 or 2 tokens is one shingle of its tokens). Shingles are
kept exactly (token ids packed in one integer), not hashed: no collision.
Nothing of neardup is used, so the truth cannot share the engine's bugs
(NFKC, case folding and marks differ slightly from the engine's features:
that is the point of an outside measure).

Every pair with J >= T (default 0.8) is found by the prefix filter of
all-pairs similarity joins (Bayardo, Ma, Srikant, WWW 2007): order all
shingles rarest first (ties by value) and keep of each set A its first
|A| - ceil(T |A|) + 1; two sets with J >= T share a shingle of both
prefixes, and |B| >= T |A|. Each candidate is then compared exactly.
brute() compares every pair (the check of the filter, on a sample).

Corpus: JSON lines {"id": KEY, "text": TEXT} (what `neardup add --format
jsonl` reads). Output: one line per pair, "I<TAB>J<TAB>RESEMBLANCE" with
I < J the documents' line numbers from 0, sorted, resemblance to 6 places;
and OUT.stats, one line "TRUTH<TAB>NAME<TAB>documents<TAB>median words<TAB>
pairs J >= T<TAB>pairs J >= 0.9<TAB>pairs J = 1" (NAME: the corpus file's
name without .jsonl) for bench/quality_report.py.

Usage: quality_truth.py CORPUS.jsonl OUT.tsv [--t 0.8] [--check N] [--cjk]
  --check N  also compare the first N documents by brute force and stop
             with an error if the filter missed or invented a pair.
  --cjk      CJK text: each Han, kana, Bopomofo or Hangul character is a
             token (so spaces, line breaks and punctuation between them do
             not count), after NFKC and case folding.
"""
import json
import math
import os
import re
import sys
import time
import unicodedata
from collections import Counter

W = 3
_TOKEN = re.compile(r"[^\W_]+")

# --cjk (bench/quality_cjk.py): what a reader of Chinese, Japanese or
# Korean sees. The text is NFKC-normalised and case-folded; each Han, kana,
# Bopomofo or Hangul character is a token of its own, other tokens are runs
# of letters and digits as above; white space, line breaks and punctuation
# are not read. So a shingle is 3 consecutive characters of CJK text,
# however it is spaced, wrapped or punctuated.
_CJK = ("\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035"
        "\u303b\u303c\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3100-\u31bf"
        "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff"
        "\uf900-\ufaff\U0001b000-\U0001b16f\U00020000-\U000323af")
CJK_CHAR = re.compile("[%s]" % _CJK)
_TOKEN_CJK = re.compile("[%s]|(?:(?![%s])[^\\W_])+" % (_CJK, _CJK))


class Vocabulary:
    """Token -> small integer, so that a shingle is one exact integer."""

    def __init__(self, cjk=False):
        self.ids = {}
        self.last_words = 0  # tokens of the last text given to shingles()
        self.cjk = cjk

    def shingles(self, text, w=W):
        """The set of word w-shingles of text (see the module comment)."""
        ids = self.ids
        toks = []
        if self.cjk:
            found = _TOKEN_CJK.findall(unicodedata.normalize("NFKC", text).casefold())
        else:
            found = _TOKEN.findall(text.lower())
        for t in found:
            i = ids.get(t)
            if i is None:
                i = ids[t] = len(ids) + 1
            toks.append(i)
        self.last_words = len(toks)
        if not toks:
            return frozenset()
        if len(toks) < w:
            w = len(toks)
        out = set()
        for k in range(len(toks) - w + 1):
            v = 0
            for t in toks[k:k + w]:
                v = (v << 32) | t
            out.add(v)
        return frozenset(out)


def resemblance(a, b):
    """Exact Jaccard resemblance of two sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def load(path, words=None, cjk=False):
    """Keys and shingle sets of a JSON-lines corpus, in file order (and the
    texts' word counts appended to the list words, if given); cjk: the
    tokens of --cjk."""
    voc = Vocabulary(cjk)
    keys, sets = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            keys.append(str(rec["id"]))
            sets.append(voc.shingles(rec["text"]))
            if words is not None:
                words.append(voc.last_words)
    return keys, sets


def _prefix_len(n, t):
    return n - math.ceil(t * n - 1e-9) + 1


def join(sets, t=0.8):
    """Every pair (i, j, J) with i < j and J >= t, by the prefix filter."""
    df = Counter()
    for s in sets:
        df.update(s)
    index = {}  # shingle -> documents whose prefix holds it
    pairs = []
    for a, s in enumerate(sets):
        if not s:
            continue
        na = len(s)
        prefix = sorted(s, key=lambda x: (df[x], x))[:_prefix_len(na, t)]
        seen = set()
        for x in prefix:
            if df[x] < 2:
                continue
            lst = index.get(x)
            if lst is None:
                index[x] = [a]
                continue
            for b in lst:
                if b in seen:
                    continue
                seen.add(b)
                nb = len(sets[b])
                if min(na, nb) < t * max(na, nb) - 1e-9:
                    continue
                j = resemblance(s, sets[b])
                if j >= t:
                    pairs.append((b, a, j))
            lst.append(a)
    pairs.sort()
    return pairs


def brute(sets, t=0.8):
    """Every pair (i, j, J) with i < j and J >= t, comparing all pairs."""
    pairs = []
    for a in range(len(sets)):
        if not sets[a]:
            continue
        for b in range(a + 1, len(sets)):
            if sets[b]:
                j = resemblance(sets[a], sets[b])
                if j >= t:
                    pairs.append((a, b, j))
    return pairs


def write(path, pairs):
    with open(path, "w") as f:
        for a, b, j in pairs:
            f.write("%d\t%d\t%.6f\n" % (a, b, j))


def read(path):
    """Pairs written by write(): a list of (i, j, J)."""
    out = []
    with open(path) as f:
        for line in f:
            a, b, j = line.split("\t")
            out.append((int(a), int(b), float(j)))
    return out


def main(argv):
    args, t, check, cjk = [], 0.8, 0, False
    i = 0
    while i < len(argv):
        if argv[i] == "--cjk":
            cjk = True
            i += 1
        elif argv[i] == "--t" and i + 1 < len(argv):
            t = float(argv[i + 1])
            i += 2
        elif argv[i] == "--check" and i + 1 < len(argv):
            check = int(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        sys.exit("usage: quality_truth.py CORPUS.jsonl OUT.tsv [--t T] [--check N] [--cjk]")
    t0 = time.time()
    words = []
    keys, sets = load(args[0], words, cjk)
    t1 = time.time()
    pairs = join(sets, t)
    t2 = time.time()
    write(args[1], pairs)
    n9 = sum(1 for p in pairs if p[2] >= 0.9)
    n10 = sum(1 for p in pairs if p[2] >= 1.0)
    words.sort()
    median = words[len(words) // 2] if words else 0
    name = os.path.basename(args[0])
    name = name[:-6] if name.endswith(".jsonl") else name
    with open(args[1] + ".stats", "w") as f:
        f.write("TRUTH\t%s\t%d\t%d\t%d\t%d\t%d\n" % (name, len(sets), median, len(pairs), n9, n10))
    print("truth %s: %d documents (median %d words), %d pairs with J >= %.2f, "
          "%d with J >= 0.9, %d identical sets; load %.1f s, join %.1f s"
          % (args[0], len(sets), median, len(pairs), t, n9, n10, t1 - t0, t2 - t1))
    if check:
        sub = sets[:check]
        want = brute(sub, t)
        got = [p for p in pairs if p[1] < check]
        if [(a, b) for a, b, _ in want] != [(a, b) for a, b, _ in got]:
            sys.exit("truth: the prefix filter disagrees with brute force on the first %d "
                     "documents (%d pairs against %d)" % (check, len(got), len(want)))
        print("truth checked by brute force on the first %d documents: the same %d pairs"
              % (len(sub), len(want)))


if __name__ == "__main__":
    main(sys.argv[1:])
