#!/usr/bin/env python3
"""gen_man.py NEARDUP OUT VERSION — write the neardup(1) man page.

The page is generated at build time from the built tool's own help:
`neardup --help` gives the list of commands and the exit-code rule, and
`neardup COMMAND --help` each command's section, so the page says what
the tool does and cannot drift from it. Only the few paragraphs below
(description, environment, files, examples) are written here.
"""
import os
import subprocess
import sys

DESCRIPTION = """\
neardup keeps 64-bit simhash fingerprints of documents in permuted tables
on RocksDB and answers which stored documents are within k bits of a new
one: online, one document at a time as a crawler fetches pages
(\\fBadd\\fR, \\fBquery\\fR), and in batch, millions at a time (\\fBbatch\\fR,
\\fBimport\\fR, \\fBdedupe\\fR). A database is a directory. Every write is
atomic and durable: what a command acknowledged survives a crash.
"""

CONVENTIONS = """\
Results go to standard output, one line per item, fields separated by a
TAB; a key is written byte for byte except that backslash, TAB, newline,
carriage return and other control bytes are escaped as \\e\\e, \\et, \\en,
\\er and \\exHH. With \\fB\\-\\-json\\fR, JSON lines. Diagnostics go to
standard error, one line each, starting with \\(lqneardup:\\(rq; a bad
record is named by file, line and field. Summaries of \\fBimport\\fR,
\\fBadd\\fR, \\fBbatch\\fR and \\fBdedupe\\fR go to standard error too.
A usage error is one line ending with \\(lqsee 'neardup COMMAND \\-\\-help'\\(rq.
.PP
SIGINT or SIGTERM ends a command with a line saying so. \\fBimport\\fR,
\\fBadd\\fR and \\fBbatch\\fR first stop at the next document, remove their
temporary files and say what became of their work (\\fBimport\\fR imports
nothing, except into a resemblance store, which keeps the groups written;
what \\fBadd\\fR printed is stored); a second signal ends them at once.
.PP
A store created with \\fBinit\\fR or \\fBshard init\\fR (by default, with
\\fB\\-\\-resemblance\\fR, or with \\fB\\-\\-min\\-resemblance\\fR \\fIR\\fR)
verifies by resemblance: a document
is a near-duplicate of the stored one sharing the largest estimated share
(at least \\fIR\\fR, 0.85 by default) of its word shingles, however far its
fingerprint lies. Such a store needs texts, not fingerprints, and its
decision lines end with that resemblance (see \\fBadd\\fR);
\\fB\\-\\-fingerprint\\-only\\fR makes a store of fingerprints within \\fIk\\fR bits.
"""

ENVIRONMENT = [
    ("ND_BATCH_THREADS", "threads of a batch check (1 to 64; default: one a CPU, at most 8)."),
    ("ND_LOAD_THREADS", "1 runs the bulk loader of \\fBimport\\fR on one thread."),
    ("NEARDUP_PROGRESS", "1: draw the progress line of the long commands even when stderr is not a"
     " terminal; all: and every update of it (for tests); 0: never."),
    ("TMPDIR", "where \\fBdedupe\\fR keeps its scratch files (unlinked at once)."),
]

FILES = """\
.TP
.I DB/
a database: RocksDB's files; \\fBbackup\\fR copies it consistently.
.TP
.I DB/nd\\-load\\-XXXXXX/
temporary files of an \\fBimport\\fR in progress; removed when it ends or is
interrupted, and after a crash when the database is next opened for writing.
"""

EXAMPLES = """\
.nf
neardup init crawl.nd \\-\\-k 3 \\-\\-docs 1e9 \\-\\-fingerprint\\-only
neardup import crawl.nd \\-\\-format files /usr/share/common\\-licenses
neardup fingerprint page.html | neardup add crawl.nd
neardup query crawl.nd \\-\\-text page.txt
neardup expire crawl.nd \\-\\-older\\-than 90d \\-\\-dry\\-run
neardup dump crawl.nd > crawl.tsv
neardup init pages.nd \\-\\-resemblance
neardup add pages.nd \\-\\-format jsonl pages.jsonl
neardup dedupe \\-\\-format jsonl \\-\\-out keep corpus.jsonl
.fi
"""


def roff_text(line):
    """One line of help text, verbatim in a no-fill block."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def run(tool, *args):
    return subprocess.run([tool, *args], check=True, stdout=subprocess.PIPE,
                          env=dict(os.environ, LC_ALL="C"), text=True).stdout


def main():
    tool, out, version = sys.argv[1:4]
    top = run(tool, "--help").splitlines()
    commands, rule, listing = [], [], False
    for line in top:
        if line == "commands:":
            listing = True
        elif listing and line.startswith("  ") and line.strip():
            name, summary = line.split(None, 1)
            commands.append((name, summary))
        elif listing and not line.strip():
            listing = False
        if line.startswith("Exit status:") or rule:
            rule.append(line)
    page = [
        '.TH NEARDUP 1 "" "neardup %s" "User Commands"' % version,
        ".SH NAME",
        "neardup \\- a persistent near-duplicate fingerprint database",
        ".SH SYNOPSIS",
        ".B neardup",
        ".I COMMAND",
        "[\\fIOPTIONS\\fR] [\\fIARGS\\fR]",
        ".br",
        ".B neardup \\-\\-help",
        "|",
        ".B \\-\\-version",
        ".br",
        ".B neardup",
        ".I COMMAND",
        ".B \\-\\-help",
        ".SH DESCRIPTION",
        DESCRIPTION.rstrip("\n"),
        ".PP",
        CONVENTIONS.rstrip("\n"),
        ".SH COMMANDS",
    ]
    for name, summary in commands:
        text = run(tool, name, "--help").splitlines()
        # the exit-code rule closes every command's help: once, below
        if "Exit status:" in "\n".join(text):
            text = text[:[i for i, l in enumerate(text) if l.startswith("Exit status:")][0]]
        while text and not text[-1].strip():
            text.pop()
        page += [".SS %s" % name, roff_text(summary[0].upper() + summary[1:]) + ".",
                 ".PP", ".nf"]
        page += [roff_text(l) for l in text]
        page += [".fi"]
    page += [".SH EXIT STATUS", roff_text(" ".join(l.strip() for l in rule))]
    page += [".SH ENVIRONMENT"]
    for var, text in ENVIRONMENT:
        page += [".TP", ".B " + var, text]
    page += [".SH FILES", FILES.rstrip("\n")]
    page += [".SH EXAMPLES", EXAMPLES.rstrip("\n")]
    page += [".SH SEE ALSO",
             "README.md and docs/ of the neardup source tree, and \\fIinclude/neardup.h\\fR"
             " for the C library: every function's contract."]
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
