#!/usr/bin/env python3
"""quality_test.py -- the truth and the scorer of the near-duplicate
quality benchmark on a tiny hand-made corpus with known answers
(bench/quality_truth.py, bench/quality_score.py; meson test
quality_score).

The corpus: a base text of 30 distinct words (28 shingles) and its edits,
whose resemblances follow from the shingles an edit touches:
  d0  the base
  d4  30 other words                      unrelated to all
  d1  d0 in capitals, with punctuation    J(d0,d1) = 1
  d2  d0, last word replaced              J(d0,d2) = 27/29 (1 shingle)
  d3  d0, word 15 replaced                J(d0,d3) = 25/31 (3 shingles)
  d5  d2, first word replaced             J(d2,d5) = 27/29, J(d0,d5) = 26/30
in that order. With NEARDUP and QUALITY_SIM in the environment the real
`neardup add`/`dedupe` and bench/quality_sim outputs are parsed and judged
too. Exit 0 when every check passes.
"""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality_corpus  # noqa: E402
import quality_score  # noqa: E402
import quality_truth  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def near(x, y):
    return abs(x - y) < 1e-9


def tiny_corpus():
    base = ["w%02d" % i for i in range(30)]
    d2 = base[:29] + ["changed"]
    d3 = base[:15] + ["edited"] + base[16:]
    d5 = ["first"] + d2[1:]
    docs = [("d0", " ".join(base)),
            ("d4", " ".join("other%02d" % i for i in range(30))),
            ("d1", ", ".join(w.upper() for w in base) + "!"),
            ("d2", " ".join(d2)),
            ("d3", " ".join(d3)),
            ("d5", " ".join(d5))]
    return docs


# Expected pairs with J >= 0.8, by position in the corpus order above.
D0, D4, D1, D2, D3, D5 = range(6)
EXPECTED = sorted([(D0, D1, 1.0), (D0, D2, 27 / 29), (D1, D2, 27 / 29), (D0, D3, 25 / 31),
                   (D1, D3, 25 / 31), (D0, D5, 26 / 30), (D1, D5, 26 / 30), (D2, D5, 27 / 29)])


def test_tokens():
    voc = quality_truth.Vocabulary()
    a = voc.shingles("The quick, brown FOX -- jumps!")
    b = voc.shingles("the QUICK brown fox jumps")
    check(a == b and len(a) == 3, "case and punctuation do not change the shingles")
    check(len(voc.shingles("snake_case x2 y")) == 2, "underscore separates tokens, digits join them")
    check(len(voc.shingles("one two")) == 1 and not voc.shingles(" ,. "),
          "a short text is one shingle, an empty one none")
    check(near(quality_truth.resemblance(frozenset({1, 2, 3}), frozenset({2, 3, 4})), 0.5),
          "resemblance of {1,2,3} and {2,3,4} is 0.5")


def test_truth(sets):
    got = quality_truth.join(sets, 0.8)
    check([(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in EXPECTED]
          and all(near(x[2], y[2]) for x, y in zip(got, EXPECTED)),
          "prefix-filter truth is the expected pairs: %r" % (got,))
    check(quality_truth.brute(sets, 0.8) == got, "brute force agrees on the tiny corpus")
    # Random corpora with planted edits: the filter never misses a pair.
    rng = random.Random(7)
    voc = quality_truth.Vocabulary()
    words = ["v%d" % i for i in range(60)]
    for trial in range(20):
        texts = []
        for _ in range(40):
            if texts and rng.random() < 0.6:
                t = rng.choice(texts).split()
                for _ in range(rng.randrange(3)):
                    t[rng.randrange(len(t))] = rng.choice(words)
                if rng.random() < 0.3:
                    t.append(rng.choice(words))
            else:
                t = [rng.choice(words) for _ in range(rng.randrange(5, 25))]
            texts.append(" ".join(t))
        rs = [voc.shingles(t) for t in texts]
        for t in (0.5, 0.8, 0.9):
            if quality_truth.join(rs, t) != quality_truth.brute(rs, t):
                check(False, "prefix filter = brute force on random corpus %d at T=%s" % (trial, t))
                return


def test_scorer(judge, keys):
    k = keys
    stream = ["new\t%s" % k[D0], "new\t%s" % k[D4], "dup\t%s\t%s\t0" % (k[D1], k[D0]),
              "new\t%s" % k[D2], "dup\t%s\t%s\t9" % (k[D3], k[D2]),
              "dup\t%s\t%s\t2" % (k[D5], k[D2])]
    # Documents with an earlier J >= 0.9: d1 (identical to d0), d2, d5;
    # not identical: d2, d5. Calls: d1 good, d3 bad (J(d2,d3) = 24/32), d5 good.
    r = judge.stream(line + "\n" for line in stream)
    check(all(near(x, y) for x, y in zip(r, (2 / 3, 2 / 3, 1 / 2))) and r[3:] == (3, 3, 2),
          "stream: precision 2/3, recall 2/3, non-identical 1/2 (got %r)" % (r,))
    pairs = ["%s\t%s\t0" % (k[D0], k[D1]), "%s\t%s\t1" % (k[D2], k[D0]),
             "%s\t%s\t0" % (k[D1], k[D0]), "%s\t%s\t30" % (k[D3], k[D4]),
             "%s\t%s\t5" % (k[D2], k[D3]), "%s\t%s" % (k[D5], k[D2])]
    # 5 distinct pairs, 3 with J >= 0.8 (not d3-d4: 0, d2-d3: 0.75); J >=
    # 0.9: (0,1) (0,2) (1,2) (2,5), found 3; not identical: (0,2) (1,2)
    # (2,5), found 2.
    r = judge.pairs(line + "\n" for line in pairs)
    check(all(near(x, y) for x, y in zip(r, (3 / 5, 3 / 4, 2 / 3))) and r[3:] == (5, 4, 3),
          "pairs: precision 3/5, recall 3/4, non-identical 2/3 (got %r)" % (r,))
    for bad, what in ((stream[:-1], "a missing document"), (stream[1:2] + stream[:1] + stream[2:],
                      "documents out of order"), (stream + ["new\tnobody"], "an unknown key"),
                      (["dup\t%s" % k[D0]] + stream[1:], "a dup line without its match")):
        try:
            judge.stream(line + "\n" for line in bad)
            check(False, "the stream scorer refuses %s" % what)
        except ValueError:
            pass


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def test_tools(judge, corpus, texts, tmp):
    """The real engine's and the simulator's outputs parse and score."""
    nd, sim = os.environ.get("NEARDUP"), os.environ.get("QUALITY_SIM")
    if nd:
        db = os.path.join(tmp, "db")
        run([nd, "init", db, "--k", "3", "--fingerprint-only"])
        out = run([nd, "add", db, "--format", "jsonl", corpus])
        r = judge.stream(out.splitlines())
        check("dup\td1\td0\t0" in out.splitlines() and r[0] == 1.0,
              "neardup add: d1 (d0 in capitals) is a dup of d0, every dup call right (%r)" % (r,))
        out = run([nd, "dedupe", "--format", "jsonl", "--out", "pairs", corpus])
        r = judge.pairs(out.splitlines())
        check(r[3] >= 1 and r[0] == 1.0, "neardup dedupe: pairs found and right (%r)" % (r,))
    if sim:
        # Exact resemblance, bands that catch J >= 0.8, R = 0.85: every
        # decision is right, d3 (J 0.81 at best) stays new.
        prefix = os.path.join(tmp, "sim")
        run([sim, texts, prefix, "exact,64x2s,0.85,all"])
        with open(prefix + ".exact_64x2s_0.85_all.stream") as f:
            lines = f.read().splitlines()
        r = judge.stream(lines)
        check(r[:3] == (1.0, 1.0, 1.0) and "new\td3" in lines,
              "quality_sim stream, exact J: all right, d3 new (%r)" % (r,))
        with open(prefix + ".exact_64x2s_0.85_all.pairs") as f:
            r = judge.pairs(f)
        check(r[:4] == (1.0, 1.0, 1.0, 6), "quality_sim pairs, exact J >= 0.85: 6 right (%r)" % (r,))
        # The recommended sketch: d1 (same shingles as d0) is its dup, d4
        # (nothing shared) new.
        run([sim, texts, prefix, "fss256x4,12x8f,0.85,all"])
        with open(prefix + ".fss256x4_12x8f_0.85_all.stream") as f:
            lines = f.read().splitlines()
        check("dup\td1\td0\t0" in lines and "new\td4" in lines,
              "quality_sim stream, fss256x4: d1 dup of d0, d4 new (%r)" % (lines,))


def main():
    docs = tiny_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        quality_corpus.write_corpus(os.path.join(tmp, "tiny"), docs)
        corpus, texts = os.path.join(tmp, "tiny.jsonl"), os.path.join(tmp, "tiny.texts")
        keys, sets = quality_truth.load(corpus)
        test_tokens()
        test_truth(sets)
        truth = os.path.join(tmp, "tiny.truth")
        quality_truth.write(truth, quality_truth.join(sets))
        judge = quality_score.Judge(keys, sets, quality_truth.read(truth))
        test_scorer(judge, keys)
        test_tools(judge, corpus, texts, tmp)
    if FAILS:
        sys.exit("%d check(s) failed" % len(FAILS))
    print("all checks passed")


if __name__ == "__main__":
    main()
