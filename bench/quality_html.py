#!/usr/bin/env python3
"""quality_html.py -- near-duplicate quality on real HTML pages, and the
weight of the page title (issue 47, points 2 and 5; bench/README.md,
"HTML pages").

Corpus: every regular *.html file under /usr/share/doc (the pages
bench/html_pages.sh lists; its --install adds Debian's documentation
packages), in path order, then manual pages made HTML by groff -Thtml
(Debian's groff package; without it they are left out): the gcloud pages
of a few command groups (sql, dns, redis, pubsub, functions, kms, spanner:
each in its GA, beta and alpha release, whose titles name the release, as
the same item published in two sections is named by its place) and every
second other page of man1; pages of 20 words or more. The real pages have
few near-duplicates (19 pairs J >= 0.8 of 3,150); the manual pages bring
the families. What a reader sees of
a page is its visible text: the title once, then the body, without
script, style, noscript, template and svg; that text, extracted here by
Python's html.parser (nothing of neardup), is the truth's
(bench/quality_truth.py: exact word 3-shingle resemblance).

Engine: the raw pages, read as HTML by the library through the Python
package, for each title weight W compared: a resemblance store (the
default `Database(create=True)`) fed in corpus order with
add_if_new_text(html=True) (the stream), a fingerprint-only store
(simhash within k = 3, where the weight counts: a sketch is of the set of
features, so weights leave it as it is), and dedupe(html=True,
out="pairs") (the pairs). W = 0 is the page with its <title> element removed (the
options have no weight 0: 0 means the default). Each is judged by
bench/quality_score.py.

Usage: quality_html.py BUILD_DIR WORK_DIR [--weights 0,1,2]
Writes WORK_DIR/html.jsonl (the visible texts), html.raw.jsonl, the truth,
the outputs, and prints quality_score.py's RESULT lines.
"""
import html.parser
import json
import os
import re
import subprocess
import tempfile
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = {"script", "style", "noscript", "template", "svg"}
BLOCK = {"p", "div", "br", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4",
         "h5", "h6", "pre", "blockquote", "dt", "dd", "dl", "section", "article", "header",
         "footer", "nav", "hr", "title", "body", "head", "html", "form", "main", "aside"}
TITLE_RE = re.compile(r"<title\b[^>]*>.*?</title\s*>", re.I | re.S)


class Visible(html.parser.HTMLParser):
    """The title, then the body's visible text, blocks on lines of their own."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.in_title = False
        self.title, self.body = [], []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        if tag in BLOCK:
            self.body.append("\n")

    def handle_endtag(self, tag):
        if tag in SKIP and self.skip:
            self.skip -= 1
        elif tag == "title":
            self.in_title = False
        if tag in BLOCK:
            self.body.append("\n")

    def handle_data(self, data):
        if self.skip:
            return
        (self.title if self.in_title else self.body).append(data)


def visible(page):
    v = Visible()
    v.feed(page)
    v.close()
    return "".join(v.title).strip() + "\n" + "".join(v.body)


GCLOUD_RE = re.compile(r"^gcloud_(alpha_|beta_)?(sql|dns|redis|pubsub|functions|kms|spanner)_")
MAN1 = "/usr/share/man/man1"


def man_html(name):
    """A manual page as groff's HTML ("" when it does not render)."""
    # grohtml writes the images of equations and tables into its working
    # directory: keep them out of the caller's.
    with tempfile.TemporaryDirectory(prefix="nd-groff-") as scratch:
        p = subprocess.run(f"zcat -f {MAN1}/{name} | groff -man -Thtml", shell=True,
                           capture_output=True, cwd=scratch)
    return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else ""


def man_pages():
    if subprocess.run(["sh", "-c", "echo | groff -Thtml"], capture_output=True).returncode:
        print("quality_html: groff -Thtml missing (apt-get install groff): no manual pages",
              file=sys.stderr)
        return []
    names = sorted(os.listdir(MAN1)) if os.path.isdir(MAN1) else []
    others = [n for n in names if not n.startswith("gcloud")]
    chosen = [n for n in names if GCLOUD_RE.match(n)] + others[::2]
    import multiprocessing
    with multiprocessing.Pool(2) as pool:
        return [(f"{MAN1}/{n}", h) for n, h in zip(chosen, pool.map(man_html, chosen, 16)) if h]


def pages():
    out = subprocess.run(["find", "/usr/share/doc", "-type", "f", "-name", "*.html"],
                         check=True, capture_output=True, text=True).stdout.split("\n")
    found = []
    for path in sorted(p for p in out if p):
        with open(path, "rb") as f:
            found.append((path, f.read().decode("utf-8", "replace")))
    for path, raw in found + man_pages():
        text = visible(raw)
        if len(re.findall(r"[^\W_]+", text)) >= 20:
            yield path, raw, text


def build(work):
    corpus, raw_path = os.path.join(work, "html.jsonl"), os.path.join(work, "html.raw.jsonl")
    if not os.path.exists(corpus):
        with open(corpus + ".tmp", "w") as c, open(raw_path, "w") as r:
            for path, raw, text in pages():
                c.write(json.dumps({"id": path, "text": text}) + "\n")
                r.write(json.dumps({"id": path, "text": raw}) + "\n")
        os.rename(corpus + ".tmp", corpus)
    truth = os.path.join(work, "html.truth")
    if not os.path.exists(truth):
        subprocess.run([sys.executable, os.path.join(HERE, "quality_truth.py"), corpus, truth,
                        "--check", "1000"], check=True)
    return corpus, raw_path, truth


def run_engine(neardup, raw_path, work, w):
    docs = []
    with open(raw_path) as f:
        for line in f:
            r = json.loads(line)
            page = TITLE_RE.sub("", r["text"]) if w == 0 else r["text"]
            docs.append((r["id"], page))
    opts = {} if w == 0 else {"title_weight": w}
    stream = os.path.join(work, f"html.w{w}.stream")
    db_dir = os.path.join(work, f"html.w{w}.db")
    subprocess.run(["rm", "-rf", db_dir], check=True)
    with neardup.Database(db_dir, create=True, **opts) as db, open(stream, "w") as out:
        for key, page in docs:
            m = db.add_if_new_text(key, page, html=True)
            out.write(f"dup\t{key}\t{m.key}\t{m.distance}\n" if m else f"new\t{key}\n")
    # a fingerprint-only store (simhash within k = 3): where weights count,
    # since a sketch is of the set of features
    fp_stream = os.path.join(work, f"html.w{w}.fp.stream")
    subprocess.run(["rm", "-rf", db_dir], check=True)
    with neardup.Database(db_dir, create=True, fingerprint_only=True, **opts) as db, \
            open(fp_stream, "w") as out:
        for key, page in docs:
            m = db.add_if_new(key, db.sign(page, html=True)[0])
            out.write(f"dup\t{key}\t{m.key}\t{m.distance}\n" if m else f"new\t{key}\n")
    subprocess.run(["rm", "-rf", db_dir], check=True)
    pairs = os.path.join(work, f"html.w{w}.pairs")
    with open(pairs, "w") as out:
        for p in neardup.dedupe(docs, html=True, out="pairs", **opts):
            out.write(f"{p[0]}\t{p[1]}\n")
    return stream, fp_stream, pairs


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: quality_html.py BUILD_DIR WORK_DIR [--weights 0,1,2]")
    build_dir, work = argv[0], argv[1]
    weights = [0, 1, 2]
    if "--weights" in argv:
        weights = [int(x) for x in argv[argv.index("--weights") + 1].split(",")]
    sys.path.insert(0, os.path.join(os.path.abspath(build_dir), "python"))
    import neardup
    os.makedirs(work, exist_ok=True)
    corpus, raw_path, truth = build(work)
    outputs = []
    for w in weights:
        stream, fp_stream, pairs = run_engine(neardup, raw_path, work, w)
        outputs += [f"stream:title{w}={stream}", f"stream:fp-only-title{w}={fp_stream}",
                    f"pairs:title{w}={pairs}"]
    subprocess.run([sys.executable, os.path.join(HERE, "quality_score.py"), corpus, truth,
                    "--name", "html"] + outputs, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
