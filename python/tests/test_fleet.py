"""neardup.Fleet against three `neardup serve --shard I` servers on loopback,
beside a Client of one server whose plain store has the same k, tables and
fingerprint options: one stream of documents with near-duplicates planted
at every distance 0..k+2 (fingerprint-only) and near-copy texts at
resemblances around the threshold (resemblance store) gets the same
decisions from both, call by call (check-and-add, check, batch with and
without add, query). A misconfigured fleet is refused; a misrouted write
is refused by the server (421)."""

import os
import random
import shutil
import subprocess

import pytest

import neardup
from serve_util import Server

K = 3
TABLES = 4


def start(cli, path, *args):
    return Server(cli, path, "--no-sync", *args, create=False)


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    """The four empty stores, made once (a store takes a second to create):
    kind -> (sharded dir, plain db)."""
    cli = os.environ.get("NEARDUP")
    if not cli:
        pytest.skip("NEARDUP (the CLI) not set: run through meson test")
    top = tmp_path_factory.mktemp("templates")
    made = {}
    for kind, flags in (("fp", ["--fingerprint-only"]), ("res", [])):
        sharded, plain = str(top / f"{kind}.nds"), str(top / f"{kind}.nd")
        subprocess.run([cli, "shard", "init", sharded, "--shards", "3", "--k", str(K),
                        "--tables", str(TABLES), "--docs", "300000", *flags],
                       check=True, capture_output=True)
        subprocess.run([cli, "init", plain, "--k", str(K), "--tables", str(TABLES),
                        "--docs", "100000", *flags], check=True, capture_output=True)
        made[kind] = (sharded, plain)
    return made


@pytest.fixture
def stores(templates, tmp_path):
    """A copy of the empty stores for one test."""
    return {kind: tuple(shutil.copytree(p, str(tmp_path / os.path.basename(p))) for p in pair)
            for kind, pair in templates.items()}


class Pair:
    """A fleet of three shard servers and one server of the plain store."""

    def __init__(self, cli, sharded, plain):
        self.shards = [start(cli, sharded, "--shard", str(i)) for i in range(3)]
        self.single = start(cli, plain)
        self.fleet = neardup.Fleet([s.url for s in self.shards])
        self.one = self.single.client()

    def stop(self):
        self.fleet.close()
        self.one.close()
        for s in [*self.shards, self.single]:
            rc, err = s.stop()
            assert rc == 0, err


@pytest.fixture
def fp_pair(cli, stores):
    p = Pair(cli, *stores["fp"])
    yield p
    p.stop()


@pytest.fixture
def res_pair(cli, stores):
    p = Pair(cli, *stores["res"])
    yield p
    p.stop()


def flip(rnd, fp, d):
    for b in rnd.sample(range(64), d):
        fp ^= 1 << b
    return fp


def fields(m):
    if m is None:
        return None
    return (m.key, m.fingerprint, m.distance, m.score, m.time, m.resemblance)


def batch_fields(b):
    return None if b is None else (b.key, b.fingerprint, b.distance, b.match_index,
                                   b.resemblance)


def same(a, b, what):
    assert a == b, f"{what}: fleet {a!r} != one store {b!r}"


def test_placement_is_the_librarys(cli, stores):
    """Fleet.place == `neardup shard which` (nd_shards_place) on many keys."""
    rnd = random.Random(3)
    keys = [f"https://example.org/{rnd.getrandbits(40):x}/{i}" for i in range(400)]
    keys += ["a", "b", "z" * 300, "\u00e9t\u00e9/\u65e5\u672c", "k\u00fc\u00dfe"]
    out = subprocess.run([cli, "shard", "which", stores["fp"][0], *keys], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    lib = {line.split("\t")[0]: int(line.split("\t")[1]) for line in out}

    class Three(neardup.Fleet):
        def __init__(self):  # placement only: no servers
            self.shards = 3
    f = Three()
    assert [f.place(k) for k in keys] == [lib[k] for k in keys]
    assert len(set(lib.values())) == 3


def test_fingerprint_stream_same_decisions(fp_pair):
    rnd = random.Random(11)
    fleet, one = fp_pair.fleet, fp_pair.one
    bases = [rnd.getrandbits(64) for _ in range(14)]
    stream = []  # (key, fingerprint): each base, then near copies at 0..K+2 bits
    for i, b in enumerate(bases):
        stream.append((f"base/{i}", b))
    for i, b in enumerate(bases):
        for d in range(K + 3):
            stream.append((f"near/{i}/{d}/{rnd.getrandbits(20):x}", flip(rnd, b, d)))
    head, tail = stream[:len(bases)], stream[len(bases):]
    rnd.shuffle(tail)
    stream = head[:7] + tail + head[7:]
    stream += [stream[3], stream[20]]  # keys seen again: their time refreshed
    news = 0
    for t, (key, fp) in enumerate(stream[:70]):
        same(fields(fleet.check(fp)), fields(one.check(fp)), f"check {key}")
        a = fleet.add_if_new(key, fp, time=1000 + t)
        b = one.add_if_new(key, fp, time=1000 + t)
        same(fields(a), fields(b), f"check-and-add {key}")
        news += a is None
        if t % 9 == 0:
            q = flip(rnd, fp, 1)
            same([fields(m) for m in fleet.query(q, k=K + 2)],
                 [fields(m) for m in one.query(q, k=K + 2)], f"query {key}")
            same([fields(m) for m in fleet.query(q, k=K + 2, limit=2)],
                 [fields(m) for m in one.query(q, k=K + 2, limit=2)], f"query limit {key}")
    assert 0 < news < 70
    # batches: near copies of stored documents and of each other
    rest = stream[70:]
    for lo in range(0, len(rest), 12):
        recs = [(k, fp, 0.0, 5000 + lo + j) for j, (k, fp) in enumerate(rest[lo:lo + 12])]
        recs.append((f"dup-in-batch/{lo}", recs[0][1] ^ 1, 0.0, 6000))
        same([batch_fields(x) for x in fleet.batch(recs)],
             [batch_fields(x) for x in one.batch(recs)], f"batch {lo}")
        same([batch_fields(x) for x in fleet.batch(recs, k=K - 1)],
             [batch_fields(x) for x in one.batch(recs, k=K - 1)], f"batch k {lo}")
        same([batch_fields(x) for x in fleet.batch(recs, add=True)],
             [batch_fields(x) for x in one.batch(recs, add=True)], f"batch add {lo}")
    # a batch document new on one shard only: a later one's stored match
    # there still counts (the shard's check must not stop at it)
    x = next(f"a/{i}" for i in range(100) if fleet.place(f"a/{i}") == 0)
    y = next(f"b/{i}" for i in range(100) if fleet.place(f"b/{i}") == 1)
    a_fp = rnd.getrandbits(64)
    i_fp = a_fp ^ 0b11111           # 5 bits from A: new on A's shard
    b_fp = i_fp ^ (0b11 << 20)      # 2 bits from i: i's stored match, elsewhere
    j_fp = a_fp ^ 0b111             # 3 from A, 2 from i, 4 from B
    for key, fp in ((x, a_fp), (y, b_fp)):
        assert fleet.add_if_new(key, fp, time=1) is None and one.add_if_new(key, fp, time=1) is None
    recs = [("i", i_fp, 0.0, 2), ("j", j_fp, 0.0, 3)]
    want = [(y, b_fp, 2, None, None), (x, a_fp, 3, None, None)]
    same([batch_fields(m) for m in one.batch(recs)], want, "the single store's answer")
    same([batch_fields(m) for m in fleet.batch(recs)], want, "shard-new batch document")
    same(len(fleet), len(one), "documents")
    for key, _ in stream[::5]:
        same(fleet.get(key), one.get(key), f"get {key}")
        same(key in fleet, key in one, f"in {key}")
    for b in bases:
        same([fields(m) for m in fleet.query(b, k=K + 2)],
             [fields(m) for m in one.query(b, k=K + 2)], "final query")
    fleet.delete("base/0")
    one.delete("base/0")
    with pytest.raises(neardup.NotFoundError):
        fleet.delete("base/0")
    assert fleet.get("base/0") is None
    fleet.add("plain", 12345, score=0.5, time=7)
    one.add("plain", 12345, score=0.5, time=7)
    same(fleet.get("plain"), one.get("plain"), "add")
    st = fleet.stats()
    assert st["documents"] == len(one) and st["shards"] == 3 and st["k"] == K
    assert "tables" not in one.stats() and len(one.stats(full=True)["tables"]) == TABLES
    full = fp_pair.shards[1].client().stats(full=True)
    assert full["shard"]["index"] == 1 and full["documents"] == st["servers"][1]["documents"]


WORDS = ("river stone market window garden bridge winter summer letter station "
         "harbour village engine copper forest meadow candle lantern ribbon valley "
         "orchard pepper thunder marble feather silver basket mirror ladder pocket").split()


def text_of(rnd, n=90):
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(50)) for _ in range(n))


def edit(rnd, text, m):
    w = text.split()
    for i in rnd.sample(range(len(w)), m):
        w[i] = "edit" + str(rnd.getrandbits(24))
    return " ".join(w)


def test_resemblance_stream_same_decisions(res_pair):
    rnd = random.Random(5)
    fleet, one = res_pair.fleet, res_pair.one
    assert fleet.min_resemblance > 0
    bases = [text_of(rnd) for _ in range(6)]
    stream = [(f"page/{i}", t) for i, t in enumerate(bases)]
    for i, t in enumerate(bases):
        for m in (0, 1, 2, 3, 4, 6, 12):  # resemblance ~1 .. ~0.6, 0.85 among them
            stream.append((f"copy/{i}/{m}/{rnd.getrandbits(16):x}", edit(rnd, t, m)))
    head, tail = stream[:6], stream[6:]
    rnd.shuffle(tail)
    stream = head[:3] + tail + head[3:]
    dups = 0
    for t, (key, text) in enumerate(stream[:36]):
        same(fields(fleet.check_text(text)), fields(one.check_text(text)), f"check {key}")
        a = fleet.add_if_new_text(key, text, time=100 + t)
        b = one.add_if_new_text(key, text, time=100 + t)
        same(fields(a), fields(b), f"check-and-add {key}")
        dups += a is not None
        if t % 5 == 0:
            same([fields(m) for m in fleet.query_text(text)],
                 [fields(m) for m in one.query_text(text)], f"query {key}")
    assert 0 < dups < 36
    rest = [{"id": k, "text": x, "time": 900 + j} for j, (k, x) in enumerate(stream[36:])]
    rest.append({"id": "again", "text": stream[40][1], "time": 999})
    same([batch_fields(x) for x in fleet.batch(rest)],
         [batch_fields(x) for x in one.batch(rest)], "batch")
    same([batch_fields(x) for x in fleet.batch(rest, add=True)],
         [batch_fields(x) for x in one.batch(rest, add=True)], "batch add")
    same(len(fleet), len(one), "documents")
    for text in bases:
        same([fields(m) for m in fleet.query_text(text)],
             [fields(m) for m in one.query_text(text)], "final query")


def test_misconfigured_fleet_refused(cli, stores, fp_pair):
    u = [s.url for s in fp_pair.shards]
    with pytest.raises(neardup.FleetError, match="shard 1 of 3"):
        neardup.Fleet([u[1], u[0], u[2]])
    with pytest.raises(neardup.FleetError, match="plain store"):
        neardup.Fleet([u[0], u[1], fp_pair.single.url])
    with pytest.raises(neardup.FleetError, match="of 3"):
        neardup.Fleet(u[:2])
    other = start(cli, stores["res"][0], "--shard", "2")
    try:
        with pytest.raises(neardup.FleetError, match="another store|disagree"):
            neardup.Fleet([u[0], u[1], other.url])
    finally:
        assert other.stop()[0] == 0
    # a sharded store without --shard: a usage error
    r = subprocess.run([cli, "serve", stores["fp"][0], "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "--shard" in r.stderr
    r = subprocess.run([cli, "serve", stores["fp"][0], "--shard", "3"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "3 shards" in r.stderr


def test_misrouted_write_refused(fp_pair):
    fleet = fp_pair.fleet
    key = next(f"k{i}" for i in range(100) if fleet.place(f"k{i}") == 1)
    wrong = fp_pair.shards[0].client()
    for call in (lambda: wrong.add_if_new(key, 99, time=1), lambda: wrong.add(key, 99),
                 lambda: wrong.get(key), lambda: wrong.delete(key),
                 lambda: wrong.batch([(key, 99)], add=True)):
        with pytest.raises(neardup.ServerError) as e:
            call()
        assert e.value.status == 421 and e.value.error_code == "wrong_shard"
    assert wrong.batch([(key, 99)]) == [None]  # a check of any key is fine
    assert fleet.add_if_new(key, 99, time=1) is None and key in fleet
    assert fp_pair.shards[1].client().get(key) is not None
    wrong.close()
