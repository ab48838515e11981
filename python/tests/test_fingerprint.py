"""fingerprint() and distance() against the C library's golden vectors
(tests/golden_fp.h, read from the source tree) and the CLI's output."""

import re
import subprocess

import pytest

import neardup
from conftest import SOURCE_ROOT, TEXTS

KINDS = {"ND_FEATURES_DEFAULT": "default", "ND_FEATURES_WORDS": "words",
         "ND_FEATURES_SHINGLES": "shingles", "ND_FEATURES_CHARS": "chars"}


def c_strings(src):
    """The bytes of the adjacent C string literals in src."""
    out = bytearray()
    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', src):
        body = lit.encode("utf-8")
        i = 0
        while i < len(body):
            c = body[i:i + 1]
            if c != b"\\":
                out += c
                i += 1
                continue
            e = body[i + 1:i + 2]
            if e == b"x":
                m = re.match(rb"[0-9a-fA-F]+", body[i + 2:])
                out.append(int(m.group(), 16))
                i += 2 + len(m.group())
            elif e.isdigit():
                m = re.match(rb"[0-7]{1,3}", body[i + 1:])
                out.append(int(m.group(), 8))
                i += 1 + len(m.group())
            else:
                out += {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"v": b"\v", b"f": b"\f",
                        b"\\": b"\\", b'"': b'"'}[e]
                i += 2
    return bytes(out)


def golden_vectors():
    """(text, keyword arguments, expected fingerprint) of every vector:
    those of version 1 (which version 2 computes alike) and of version 2."""
    yield from golden_table("golden_inputs", "golden_fp", 30)
    yield from golden_table("golden_inputs_v2", "golden_fp_v2", 39)


def golden_table(inputs_name, fp_name, count):
    inputs = (SOURCE_ROOT / "tests" / "golden_fp_inputs.h").read_text("utf-8")
    table = inputs[inputs.index(inputs_name + "[] = {"):]
    table = table[:table.index("};")]
    stop = [s.decode() for s in re.findall(
        rb'"([^"]*)"', re.search(r"golden_stop\[\] = \{([^}]*)\}", inputs).group(1).encode())]
    entries = re.findall(
        r'(?:G\(((?:\s*"(?:[^"\\]|\\.)*")+)\s*,\s*(\w+),\s*(\d+),\s*([\w|]+)\)'
        r'|\{((?:\s*"(?:[^"\\]|\\.)*")+)\s*,\s*\d+,\s*(\w+),\s*(\d+),\s*(\w+),\s*golden_stop)',
        table)
    golden = (SOURCE_ROOT / "tests" / "golden_fp.h").read_text()
    golden = golden[golden.index(fp_name + "[] = {"):]
    expected = [int(h, 16) for h in re.findall(
        r"0x([0-9a-f]{16})ull", golden[:golden.index("};")])]
    assert len(entries) == len(expected) == count
    for e, fp in zip(entries, expected):
        lits, kind, n, flags = e[0:4] if e[0] else e[4:8]
        features = KINDS[kind] + (f":{n}" if n != "0" else "")
        kw = {"features": features, "html": "ND_FP_HTML" in flags}
        if fp_name == "golden_fp" and kw["html"]:
            kw["title_weight"] = 2  # version 1's default; the newest weighs a title 1
        if "NO_CJK" in flags:
            kw["cjk_bigrams"] = False
        if "FOLD_CHINESE" in flags:
            kw["fold_chinese"] = True
        if not e[0]:
            kw["stopwords"] = stop
        yield c_strings(lits), kw, fp


@pytest.mark.parametrize("text,kw,expected", list(golden_vectors()))
def test_golden_vectors(text, kw, expected):
    assert neardup.fingerprint(text, **kw) == expected
    # the same text as str (surrogateescape keeps invalid bytes as they are)
    s = text.decode("utf-8", "surrogateescape")
    assert neardup.fingerprint(s, **kw) == expected
    assert neardup.fingerprint(bytearray(text), **kw) == expected


@pytest.mark.parametrize("features", [None, "words", "shingles:2", "chars:5"])
def test_equals_cli(cli, features):
    files = sorted(p for p in TEXTS.iterdir() if p.is_file())
    args = [cli, "fingerprint"] + (["--features", features] if features else [])
    out = subprocess.run(args + [str(p) for p in files], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert len(out) == len(files)
    for line, path in zip(out, files):
        hexfp, name = line.split("\t")
        assert name == str(path)
        assert neardup.fingerprint(path.read_bytes(), features=features) == int(hexfp, 16)


def test_html_equals_cli(cli, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><head><title>T</title></head><body><p>Simhash &amp; "
                    "tables</p><script>x()</script></body></html>")
    out = subprocess.run([cli, "fingerprint", str(page)], check=True, capture_output=True,
                         text=True).stdout
    fp = neardup.fingerprint(page.read_text(), html=True)
    assert out.split("\t")[0] == f"{fp:016x}"
    assert fp != neardup.fingerprint(page.read_text())


def test_options():
    text = "the cat and the hat of doom " * 3
    assert neardup.fingerprint(text) == neardup.fingerprint(text, features="default")
    assert neardup.fingerprint(text) == neardup.fingerprint(text, features="shingles:3")
    assert neardup.fingerprint(text, features="shingles") == neardup.fingerprint(text)
    assert neardup.fingerprint(text, features="chars") == neardup.fingerprint(
        text, features="chars:4")
    assert neardup.fingerprint(text, features="words") != neardup.fingerprint(text)
    assert neardup.fingerprint(text, stopwords=["the"]) != neardup.fingerprint(text)
    assert neardup.fingerprint("") == 0


TRADITIONAL = "我們的數據庫存儲指紋並回答查詢，每天處理許多網頁的內容和標題"
SIMPLIFIED = "我们的数据库存储指纹并回答查询，每天处理许多网页的内容和标题"


def test_fold_chinese():
    """fold_chinese=True: either script, one fingerprint (as --fold-chinese);
    False and None: the default, the scripts apart."""
    t, s = TRADITIONAL, SIMPLIFIED
    assert neardup.fingerprint(t, fold_chinese=True) == neardup.fingerprint(s, fold_chinese=True)
    assert neardup.fingerprint(t) != neardup.fingerprint(s)
    assert neardup.fingerprint(t, fold_chinese=False) == neardup.fingerprint(t)
    assert neardup.fingerprint(t, fold_chinese=None) == neardup.fingerprint(t)
    # Simplified text is left as it is
    assert neardup.fingerprint(s, fold_chinese=True) == neardup.fingerprint(s)


def test_fold_chinese_equals_cli(cli, tmp_path):
    page = tmp_path / "zh.txt"
    page.write_text(TRADITIONAL, "utf-8")
    out = subprocess.run([cli, "fingerprint", "--fold-chinese", str(page)], check=True,
                         capture_output=True, text=True).stdout
    assert out.split("\t")[0] == f"{neardup.fingerprint(TRADITIONAL, fold_chinese=True):016x}"


def test_fold_chinese_database(tmp_path):
    """A store created with fold_chinese records it (its configuration says
    +t2s) and signs both scripts alike; opening it asking otherwise is a
    mismatch."""
    path = tmp_path / "zh.nd"
    with neardup.Database(path, create=True, fingerprint_only=True, fold_chinese=True) as db:
        assert "+t2s" in db.fp_config
        assert db.fingerprint(TRADITIONAL) == db.fingerprint(SIMPLIFIED)
        assert db.fingerprint(TRADITIONAL) == neardup.fingerprint(TRADITIONAL, fold_chinese=True)
    with neardup.Database(path, fold_chinese=True) as db:
        assert "+t2s" in db.fp_config
    with pytest.raises(neardup.MismatchError):
        neardup.Database(path, fold_chinese=False)
    with neardup.Database(tmp_path / "plain.nd", create=True, fingerprint_only=True) as db:
        assert "+t2s" not in db.fp_config
        assert db.fingerprint(TRADITIONAL) != db.fingerprint(SIMPLIFIED)


def test_fold_chinese_dedupe():
    docs = [("t", TRADITIONAL), ("s", SIMPLIFIED)]
    assert neardup.dedupe(docs, out="drop", fold_chinese=True) == ["s"]
    assert neardup.dedupe(docs, out="drop") == []
    with neardup.Dedupe(fold_chinese=True) as d:
        d.add_many(docs)
        assert [(p.key1, p.key2) for p in d.pairs()] == [("t", "s")]


@pytest.mark.parametrize("features", ["word", "words:2", "shingles:", "shingles:0",
                                      "chars:x", "shingles:3x", ""])
def test_bad_features(features):
    with pytest.raises(neardup.InvalidArgumentError) as e:
        neardup.fingerprint("text", features=features)
    assert e.value.code == -1 and "features" in e.value.message
    assert isinstance(e.value, ValueError)


def test_bad_types():
    with pytest.raises(TypeError):
        neardup.fingerprint(42)
    with pytest.raises(TypeError):
        neardup.fingerprint("x", features=3)
    with pytest.raises(TypeError):
        neardup.fingerprint("x", nonsense=1)
    with pytest.raises(TypeError):
        neardup.fingerprint()


def test_lone_surrogates_are_not_an_error():
    assert neardup.fingerprint("a \ud800 b", features="words") == neardup.fingerprint(
        b"a \xed\xa0\x80 b", features="words")


def test_too_long():
    with pytest.raises(neardup.LimitError) as e:
        neardup.fingerprint(bytes(neardup.MAX_DOC_BYTES + 1))
    assert e.value.code == -10 and e.value.name == "size limit exceeded"


def test_distance():
    assert neardup.distance(0, 0) == 0
    assert neardup.distance(0, 2**64 - 1) == 64
    assert neardup.distance(0b1011, 0b0110) == 3
    with pytest.raises(ValueError):
        neardup.distance(-1, 0)
    with pytest.raises(ValueError):
        neardup.distance(2**64, 0)
    with pytest.raises(TypeError):
        neardup.distance("ff", 0)
    with pytest.raises(TypeError):
        neardup.distance(1)


def test_constants():
    assert neardup.__version__ == "0.1.0"
    assert neardup.FP_VERSION == 2 and neardup.MAX_K == 16 and neardup.MAX_KEY_LEN == 4096
