#!/usr/bin/env python3
"""live_pipe.py NEARDUP — a crawler's conversation with neardup.

Writes one line to `add -`, `query -` or `batch --add -` on a pipe (or a
terminal), waits (at most TIMEOUT seconds) for its answer, then writes the
next: a reader that waits for more input before answering deadlocks here
and the case fails. Plain, gzip (flushed line by line) and JSONL input, a
line written in two pieces, and a terminal. Prints one line per failure
and "N passed, N failed"; exits 1 on any failure. Databases go in a fresh
temporary directory, removed at the end.
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import termios
import time
import zlib

ND = sys.argv[1]
DIR = tempfile.mkdtemp(prefix="nd-live-")
TIMEOUT = 15.0
passed = failed = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL", msg)


def ok():
    global passed
    passed += 1


class Conversation:
    """A neardup process whose stdout we read line by line with a timeout."""

    def __init__(self, args, tty=False):
        self.args = args
        self.buf = b""
        self.tty = tty
        if tty:
            master, slave = pty.openpty()
            attrs = termios.tcgetattr(slave)
            attrs[3] &= ~termios.ECHO  # no echo to drain
            termios.tcsetattr(slave, termios.TCSANOW, attrs)
            self.p = subprocess.Popen([ND] + args, stdin=slave, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
            os.close(slave)
            self.w = master
        else:
            self.p = subprocess.Popen([ND] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
            self.w = self.p.stdin.fileno()
        self.out = self.p.stdout.fileno()

    def write(self, data):
        os.write(self.w, data)

    def read_line(self, timeout=TIMEOUT):
        """The next stdout line, or None when none comes in time."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.out], [], [], left)[0]:
                return None
            chunk = os.read(self.out, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def ask(self, data, want, what):
        """Write data, expect one answer line matching want."""
        self.write(data)
        got = self.read_line()
        if got is None:
            fail("%s: no answer to %r within %.0f s (%s)" % (what, data[:60], TIMEOUT, " ".join(self.args)))
            return False
        if not re.fullmatch(want, got):
            fail("%s: answer %r, want /%s/" % (what, got, want))
            return False
        ok()
        return True

    def close(self, want_exit=0):
        if self.tty:
            os.write(self.w, b"\x04")  # a terminal's end of input
        else:
            self.p.stdin.close()
        try:
            self.p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("%s: did not end after its input" % " ".join(self.args))
            return
        rest = self.p.stdout.read().decode()
        self.rest = (self.buf.decode() + rest).splitlines()
        if self.p.returncode != want_exit:
            fail("%s: exit %d, want %d: %s" % (" ".join(self.args), self.p.returncode, want_exit,
                                              self.p.stderr.read().decode()))
        else:
            ok()
        if self.tty:
            os.close(self.w)


def init(name):
    db = os.path.join(DIR, name)
    subprocess.run([ND, "init", db, "--k", "3", "--docs", "1e4", "--fingerprint-only"], check=True,
                   stdout=subprocess.DEVNULL)
    return db


FP = "%016x\t%s\n"

# add on a pipe: plain fingerprints, each answered before the next is sent
db = init("add.nd")
c = Conversation(["add", db, "-"])
c.ask((FP % (0x1111111111111111, "a")).encode(), r"new\ta", "add fp")
c.ask((FP % (0x1111111111111113, "b")).encode(), r"dup\tb\ta\t1", "add fp")
c.ask((FP % (0x2222222222222222, "c")).encode(), r"new\tc", "add fp")
# a line written in two pieces: no answer before it is complete
c.write(b"33333333")
if c.read_line(timeout=0.5) is not None:
    fail("add: answered half a line")
else:
    ok()
c.ask(b"33333333\td\n", r"new\td", "add fp, second piece")
c.close()

# add on a pipe, gzip: each line flushed from the compressor on its own
db = init("gz.nd")
c = Conversation(["add", db, "-"])
z = zlib.compressobj(6, zlib.DEFLATED, 31)
for i, want in ((1, r"new\tg1"), (2, r"new\tg2"), (3, r"new\tg3")):
    data = z.compress((FP % (0x0f0f0f0f0f0f0f0f * i % (1 << 64), "g%d" % i)).encode())
    c.ask(data + z.flush(zlib.Z_SYNC_FLUSH), want, "add gzip")
c.write(z.flush())
c.close()

# add on a pipe, JSONL texts
db = init("jsonl.nd")
c = Conversation(["add", db, "--format", "jsonl", "-"])
text = "the quick brown fox jumps over the lazy dog near the river bank today"
c.ask(b'{"id":"j1","text":"%s"}\n' % text.encode(), r"new\tj1", "add jsonl")
c.ask(b'{"id":"j2","text":"%s"}\n' % text.encode(), r"dup\tj2\tj1\t0", "add jsonl")
c.close()

# query on a pipe: the answer of each fingerprint before the next is read
db = os.path.join(DIR, "add.nd")
c = Conversation(["query", db, "-"])
c.ask(b"1111111111111111\n", r"1111111111111111\ta\t1111111111111111\t0", "query")
c.ask(b"2222222222222223\n", r"2222222222222223\tc\t2222222222222222\t1", "query")
c.close()

# batch --add on a pipe: each line checked, stored and answered as it comes
db = init("batch.nd")
c = Conversation(["batch", db, "--add", "-"])
c.ask((FP % (0x4444444444444444, "b1")).encode(), r"new\tb1", "batch --add")
c.ask((FP % (0x4444444444444445, "b2")).encode(), r"dup\tb2\tb1\t1", "batch --add")
c.ask((FP % (0x8888888888888888, "b3")).encode(), r"new\tb3", "batch --add")
c.close()

# batch --add on a pipe, gzip flushed line by line
db = init("batchgz.nd")
c = Conversation(["batch", db, "--add", "-"])
z = zlib.compressobj(6, zlib.DEFLATED, 31)
for line, want in ((FP % (0x1234567812345678, "bz1"), r"new\tbz1"),
                   (FP % (0x1234567812345679, "bz2"), r"dup\tbz2\tbz1\t1")):
    c.ask(z.compress(line.encode()) + z.flush(zlib.Z_SYNC_FLUSH), want, "batch --add gzip")
c.write(z.flush())
c.close()

# batch without --add on a pipe: each line answered as it comes, the
# stream still one batch (the second line is a near-duplicate of the
# first, which is not stored; the third of nothing; the fourth of the
# third), and the answers those of the same lines given as a file
db = init("batch2.nd")
c = Conversation(["batch", db, "-"])
lines = [FP % (0x5555555555555555, "p1"), FP % (0x5555555555555554, "p2"),
         FP % (0x9999999999999999, "p3"), FP % (0x9999999999999998, "p4")]
wants = [r"new\tp1", r"dup\tp2\tp1\t1", r"new\tp3", r"dup\tp4\tp3\t1"]
for line, want in zip(lines, wants):
    c.ask(line.encode(), want, "batch without --add")
c.close()
with open(os.path.join(DIR, "batch2.fp"), "w") as f:
    f.write("".join(lines))
whole = subprocess.run([ND, "batch", db, os.path.join(DIR, "batch2.fp")], capture_output=True)
if whole.stdout.decode().splitlines() != ["new\tp1", "dup\tp2\tp1\t1", "new\tp3", "dup\tp4\tp3\t1"]:
    fail("batch without --add, the same lines as a file: %r" % whole.stdout)
else:
    ok()
st = subprocess.run([ND, "stats", db], capture_output=True)
if b"documents\t0\n" not in st.stdout:
    fail("batch without --add stored documents: %r" % st.stdout)
else:
    ok()

# add on a terminal
db = init("tty.nd")
c = Conversation(["add", db, "-"], tty=True)
c.ask((FP % (0x6666666666666666, "t1")).encode(), r"new\tt1", "add on a terminal")
c.ask((FP % (0x6666666666666667, "t2")).encode(), r"dup\tt2\tt1\t1", "add on a terminal")
c.close()

shutil.rmtree(DIR, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
