"""The Python examples of the docs, run as written: docs/python.md's (its
first ```python block) on a JSONL corpus of the shipped licence texts
with edited copies of two of them, where it drops what `neardup dedupe
--out drop` drops; and the README's tour (its first ```python block),
which prints what the README says it prints."""

import json
import re
import subprocess
import sys

from conftest import SOURCE_ROOT, TEXTS


def first_python_block(page):
    text = (SOURCE_ROOT / page).read_text("utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def example():
    return first_python_block("docs/python.md")


def write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in docs:
            f.write(json.dumps({"id": doc_id, "text": text}) + "\n")


def test_example_is_ten_lines():
    assert len(example().strip().splitlines()) == 10


def test_example_dedupes_a_jsonl_file(tmp_path, cli):
    script = tmp_path / "dedupe.py"
    script.write_text(example())
    texts = {p.name: p.read_text("utf-8") for p in sorted(TEXTS.iterdir())}
    copy = "Retrieved on 2026-11-22 from a mirror.\n" + texts["GPL-3"]
    docs = list(texts.items())
    docs.insert(list(texts).index("GPL-3") + 1, ("GPL-3-copy", copy))
    docs.insert(0, ("Apache-first", texts["Apache-2.0"].replace("License", "Licence")))
    docs.append(("GPL-3-again", texts["GPL-3"]))
    docs.append((7, "An integer id, and a text of its own."))
    write_jsonl(tmp_path / "corpus.jsonl", docs)
    out = subprocess.run([sys.executable, str(script), "corpus.jsonl"], cwd=tmp_path,
                         check=True, capture_output=True, text=True)
    kept = [json.loads(line)["id"] for line in out.stdout.splitlines()]
    # Every original but Apache-2.0, whose edited copy came first; in order.
    assert kept == ["Apache-first"] + [k for k in texts if k != "Apache-2.0"] + [7]
    assert out.stderr == "3 near-duplicates dropped\n"
    # The lines are copied as they are, and the CLI drops the same ones.
    lines = (tmp_path / "corpus.jsonl").read_text("utf-8").splitlines(keepends=True)
    assert out.stdout == "".join(l for l in lines if json.loads(l)["id"] in kept)
    drop = subprocess.run([cli, "dedupe", "--format", "jsonl", "--out", "drop",
                           str(tmp_path / "corpus.jsonl")], check=True, capture_output=True,
                          text=True).stdout.split()
    assert sorted(drop) == ["Apache-2.0", "GPL-3-again", "GPL-3-copy"]


def test_readme_tour(tmp_path):
    script = tmp_path / "tour.py"
    script.write_text(first_python_block("README.md"))
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                         check=True, capture_output=True, text=True)
    # README.md: prints `home new`, `home-2 near-duplicate of home` and `['b']`.
    assert out.stdout == "home new\nhome-2 near-duplicate of home\n['b']\n"
    assert (tmp_path / "shop.nd").is_dir()
