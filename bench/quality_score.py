#!/usr/bin/env python3
"""quality_score.py -- judge near-duplicate decisions against exact
resemblance (bench/README.md, "Near-duplicate quality").

Two uses of issue 34, judged with the truth of bench/quality_truth.py (J =
exact resemblance of word 3-shingle sets; "identical" = J = 1, the same
shingle set):
  stream  the output of `neardup add DB --format jsonl CORPUS` (or of
          bench/quality_sim): one line per document, in corpus order,
          "new<TAB>KEY" or "dup<TAB>KEY<TAB>MATCH<TAB>DIST".
            precision   share of the dup calls whose named match has J >= 0.8
            recall      share of the documents with an earlier document of
                        J >= 0.9 (any earlier one, stored or not) called dup
            non-ident.  the same, of those documents with no earlier
                        identical one
  pairs   the output of `neardup dedupe --out pairs` (or of quality_sim):
          "KEY1<TAB>KEY2[<TAB>...]" per pair, any order, repeats ignored.
            precision   share of the reported pairs with J >= 0.8
            recall      share of the pairs with J >= 0.9 that are reported
            non-ident.  the same, of the pairs with 0.9 <= J < 1
J of a reported pair is computed from the two sets, so precision needs no
truth beyond J >= 0.8; recall uses the truth's pairs.

Usage: quality_score.py CORPUS.jsonl TRUTH.tsv [--name NAME] [--cjk]
                        [stream:LABEL=FILE | pairs:LABEL=FILE]...
(--cjk: the truth's CJK tokens, quality_truth.py --cjk.)
Prints per output a line
  RESULT<TAB>NAME<TAB>stream|pairs<TAB>LABEL<TAB>precision<TAB>recall<TAB>
  non-identical recall<TAB>calls<TAB>recall denominator<TAB>non-identical
  denominator
(NAME defaults to the corpus file's name without .jsonl). A malformed
output (unknown key, a document missing or out of order) is an error.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality_truth  # noqa: E402

GOOD, MUST = 0.8, 0.9


class Judge:
    def __init__(self, keys, sets, truth):
        self.keys, self.sets = keys, sets
        self.index = {k: i for i, k in enumerate(keys)}
        if len(self.index) != len(keys):
            raise ValueError("the corpus repeats a key")
        # Per document: has an earlier J >= MUST partner; has an earlier
        # identical one. Pairs J >= MUST, and those not identical.
        self.earlier_must = [False] * len(keys)
        self.earlier_same = [False] * len(keys)
        self.must_pairs, self.ni_pairs = set(), set()
        for a, b, j in truth:
            if j >= MUST:
                self.earlier_must[b] = True
                self.must_pairs.add((a, b))
                if j >= 1.0:
                    self.earlier_same[b] = True
                else:
                    self.ni_pairs.add((a, b))

    def j(self, a, b):
        return quality_truth.resemblance(self.sets[a], self.sets[b])

    def _doc(self, key, what):
        i = self.index.get(key)
        if i is None:
            raise ValueError("%s: unknown key %r" % (what, key))
        return i

    def stream(self, lines, what="stream"):
        """(precision, recall, non-identical recall, dup calls, recall
        denominator, non-identical denominator)."""
        n = 0
        calls = good = 0
        dup = [False] * len(self.keys)
        for line in lines:
            f = line.rstrip("\n").split("\t")
            if f == [""]:
                continue
            if f[0] not in ("new", "dup") or (f[0] == "dup") != (len(f) >= 3):
                raise ValueError("%s: malformed line %r" % (what, line))
            d = self._doc(f[1], what)
            if d != n:
                raise ValueError("%s: line %d is %r, expected document %r"
                                 % (what, n + 1, f[1], self.keys[n] if n < len(self.keys) else None))
            n += 1
            if f[0] == "dup":
                calls += 1
                dup[d] = True
                good += self.j(d, self._doc(f[2], what)) >= GOOD
        if n != len(self.keys):
            raise ValueError("%s: %d decisions for %d documents" % (what, n, len(self.keys)))
        must = [d for d in range(n) if self.earlier_must[d]]
        ni = [d for d in must if not self.earlier_same[d]]
        return (good / calls if calls else 1.0, _share(dup, must), _share(dup, ni), calls,
                len(must), len(ni))

    def pairs(self, lines, what="pairs"):
        rep = set()
        for line in lines:
            f = line.rstrip("\n").split("\t")
            if f == [""]:
                continue
            if len(f) < 2:
                raise ValueError("%s: malformed line %r" % (what, line))
            a, b = self._doc(f[0], what), self._doc(f[1], what)
            if a != b:
                rep.add((min(a, b), max(a, b)))
        good = sum(1 for a, b in rep if self.j(a, b) >= GOOD)
        found = len(rep & self.must_pairs)
        found_ni = len(rep & self.ni_pairs)
        return (good / len(rep) if rep else 1.0,
                found / len(self.must_pairs) if self.must_pairs else 1.0,
                found_ni / len(self.ni_pairs) if self.ni_pairs else 1.0,
                len(rep), len(self.must_pairs), len(self.ni_pairs))


def _share(flags, docs):
    return sum(1 for d in docs if flags[d]) / len(docs) if docs else 1.0


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__.split("Usage: ")[1].split("\n\n")[0])
    corpus, truth = argv[0], argv[1]
    rest = argv[2:]
    name = os.path.basename(corpus)
    if name.endswith(".jsonl"):
        name = name[:-6]
    cjk = False
    while rest and rest[0] in ("--name", "--cjk"):
        if rest[0] == "--cjk":
            cjk, rest = True, rest[1:]
        elif len(rest) >= 2:
            name, rest = rest[1], rest[2:]
        else:
            break
    keys, sets = quality_truth.load(corpus, cjk=cjk)
    judge = Judge(keys, sets, quality_truth.read(truth))
    for arg in rest:
        use, _, spec = arg.partition(":")
        label, _, path = spec.partition("=")
        if use not in ("stream", "pairs") or not label or not path:
            sys.exit("quality_score: expected stream:LABEL=FILE or pairs:LABEL=FILE, got %r" % arg)
        try:
            with open(path, encoding="utf-8") as f:
                r = judge.stream(f, path) if use == "stream" else judge.pairs(f, path)
        except ValueError as e:
            sys.exit("quality_score: %s" % e)
        print("RESULT\t%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d" % ((name, use, label) + r))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
