"""The README's Python example (the first ```python block of its "Python"
section), run as written on a JSONL corpus of the shipped licence texts
with an edited copy of one of them."""

import json
import re
import subprocess
import sys

from conftest import SOURCE_ROOT, TEXTS


def example():
    readme = (SOURCE_ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in docs:
            f.write(json.dumps({"id": doc_id, "text": text}) + "\n")


def run(script, corpus, cwd):
    return subprocess.run([sys.executable, str(script), str(corpus)], cwd=cwd, check=True,
                          capture_output=True, text=True)


def test_example_is_ten_lines():
    assert len(example().strip().splitlines()) == 10


def test_example_dedupes_a_jsonl_file(tmp_path):
    script = tmp_path / "dedupe.py"
    script.write_text(example())
    texts = {p.name: p.read_text("utf-8") for p in sorted(TEXTS.iterdir())}
    copy = "Retrieved on 2026-11-22 from a mirror.\n" + texts["GPL-3"]
    docs = list(texts.items())
    docs.insert(list(texts).index("GPL-3") + 1, ("GPL-3-copy", copy))
    docs.append(("GPL-3-again", texts["GPL-3"]))
    write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = run(script, "corpus.jsonl", tmp_path)
    kept = [json.loads(line)["id"] for line in out.stdout.splitlines()]
    assert kept == list(texts)  # every original, in input order
    assert out.stderr.splitlines() == ["GPL-3-copy: near-duplicate of GPL-3",
                                       "GPL-3-again: near-duplicate of GPL-3"]
    # The store remembers: a later file is checked against all seen before.
    write_jsonl(tmp_path / "more.jsonl", [("new", "A text of its own, about nothing."),
                                         ("apache-copy", texts["Apache-2.0"])])
    out = run(script, "more.jsonl", tmp_path)
    assert [json.loads(line)["id"] for line in out.stdout.splitlines()] == ["new"]
    assert out.stderr == "apache-copy: near-duplicate of Apache-2.0\n"
