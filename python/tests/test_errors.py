"""Failures raise neardup.Error subclasses carrying the C library's code,
nd_strerror name and nd_errmsg detail."""

import subprocess
import sys

import pytest

import neardup


def test_missing_database(tmp_path):
    path = str(tmp_path / "missing")
    with pytest.raises(neardup.NotFoundError) as e:
        neardup.Database(path)
    err = e.value
    assert isinstance(err, neardup.Error)
    assert err.code == -2 and err.name == "not found"
    assert path in err.message and str(err) == f"not found: {err.message}"


def test_exists(db_path):
    neardup.Database(db_path, create=True, fingerprint_only=True).close()
    with pytest.raises(neardup.ExistsError) as e:
        neardup.Database(db_path, create=True, fingerprint_only=True, exclusive=True)
    assert e.value.code == -8 and e.value.message


def test_create_refused_beside_other_files(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("my notes")
    with pytest.raises(neardup.ExistsError) as e:
        neardup.Database(str(d), create=True, fingerprint_only=True)
    assert "is not empty" in e.value.message
    assert sorted(p.name for p in d.iterdir()) == ["notes.txt"]


def test_mismatch(db_path):
    neardup.Database(db_path, create=True, fingerprint_only=True).close()  # k = 3, default features
    with pytest.raises(neardup.MismatchError) as e:
        neardup.Database(db_path, k=5)
    assert e.value.code == -9 and "5" in e.value.message
    with pytest.raises(neardup.MismatchError):
        neardup.Database(db_path, features="words")
    neardup.Database(db_path, k=3).close()


def test_readonly(db_path):
    neardup.Database(db_path, create=True, fingerprint_only=True).close()
    with neardup.Database(db_path, readonly=True) as db:
        with pytest.raises(neardup.ReadOnlyError) as e:
            db.add("a", 1)
        assert e.value.code == -12 and e.value.name == "read-only"
        assert db.query(1) == []


def test_busy_in_another_process(db_path):
    neardup.Database(db_path, create=True, fingerprint_only=True).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import neardup, sys; db = neardup.Database(sys.argv[1]); "
         "print('open', flush=True); sys.stdin.read()", db_path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(neardup.BusyError) as e:
            neardup.Database(db_path)
        assert e.value.code == -5 and e.value.message
        with neardup.Database(db_path, readonly=True):  # readers need no lock
            pass
    finally:
        holder.communicate("")
    neardup.Database(db_path).close()


def test_limits_and_arguments(db):
    with pytest.raises(neardup.LimitError) as e:
        db.add("k" * (neardup.MAX_KEY_LEN + 1), 1)
    assert e.value.code == -10 and e.value.message
    with pytest.raises(neardup.InvalidArgumentError) as e:
        db.add("", 1)
    assert e.value.message
    with pytest.raises(neardup.InvalidArgumentError):
        db.add_if_new("a", 1, k=neardup.MAX_K + 1)
    with pytest.raises(ValueError):
        db.add("a", -1)
    with pytest.raises(TypeError):
        db.add("a")
    with pytest.raises(TypeError):
        db.add("a", 1, colour="red")
    with pytest.raises(TypeError):
        db.add("a", 1, score=0, fingerprint=2)
    with pytest.raises(TypeError):
        neardup.Database()
    assert len(db) == 0


def test_corrupt_is_reported(db_path, tmp_path):
    """A store whose files were overwritten: opening or verifying fails with
    an Error naming the problem, never a crash."""
    import os
    with neardup.Database(db_path, create=True, fingerprint_only=True) as db:
        db.add_many([(f"k{i}", i * 7919) for i in range(2000)])
        db.compact()
    for name in os.listdir(db_path):
        if name.endswith(".sst"):
            with open(os.path.join(db_path, name), "r+b") as f:
                size = f.seek(0, 2)
                f.seek(size // 2)
                f.write(b"\0garbage\0" * 64)
    with pytest.raises(neardup.Error) as e:
        with neardup.Database(db_path) as db:
            db.verify()
            list(db)
    assert isinstance(e.value, (neardup.CorruptError, neardup.DiskIOError))
    assert e.value.message and e.value.code < 0


def test_error_classes():
    classes = [neardup.InvalidArgumentError, neardup.NotFoundError, neardup.CorruptError,
               neardup.DiskIOError, neardup.BusyError, neardup.VersionError,
               neardup.OutOfMemoryError, neardup.ExistsError, neardup.MismatchError,
               neardup.LimitError, neardup.NoSpaceError, neardup.ReadOnlyError,
               neardup.InternalError]
    assert len(set(classes)) == 13
    assert all(issubclass(c, neardup.Error) for c in classes)
    assert issubclass(neardup.InvalidArgumentError, ValueError)
    assert neardup.NotFoundError.__module__ == "neardup"
