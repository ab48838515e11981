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

Usage: quality_truth.py CORPUS.jsonl OUT.tsv [--t 0.8] [--check N]
  --check N  also compare the first N documents by brute force and stop
             with an error if the filter missed or invented a pair.
"""
import json
import math
import os
import re
import sys
import time
from collections import Counter

W = 3
_TOKEN = re.compile(r"[^\W_]+")


class Vocabulary:
    """Token -> small integer, so that a shingle is one exact integer."""

    def __init__(self):
        self.ids = {}
        self.last_words = 0  # tokens of the last text given to shingles()

    def shingles(self, text, w=W):
        """The set of word w-shingles of text (see the module comment)."""
        ids = self.ids
        toks = []
        for t in _TOKEN.findall(text.lower()):
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


def load(path, words=None):
    """Keys and shingle sets of a JSON-lines corpus, in file order (and the
    texts' word counts appended to the list words, if given)."""
    voc = Vocabulary()
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
    args, t, check = [], 0.8, 0
    i = 0
    while i < len(argv):
        if argv[i] == "--t" and i + 1 < len(argv):
            t = float(argv[i + 1])
            i += 2
        elif argv[i] == "--check" and i + 1 < len(argv):
            check = int(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        sys.exit("usage: quality_truth.py CORPUS.jsonl OUT.tsv [--t T] [--check N]")
    t0 = time.time()
    words = []
    keys, sets = load(args[0], words)
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
