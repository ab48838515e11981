"""Shared fixtures of the Python tests (run by `meson test --suite python`,
which puts build/python on PYTHONPATH and sets NEARDUP, the CLI, and
NEARDUP_SOURCE_ROOT, the source tree)."""

import os
import pathlib

import pytest

import neardup

SOURCE_ROOT = pathlib.Path(
    os.environ.get("NEARDUP_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[2]))
TEXTS = SOURCE_ROOT / "tests" / "data" / "texts"


@pytest.fixture
def db_path(tmp_path):
    """A path where a database may be created."""
    return str(tmp_path / "db.nd")


@pytest.fixture
def db(db_path):
    """A new, empty database (k = 3), closed after the test."""
    with neardup.Database(db_path, create=True, fingerprint_only=True, docs=100_000) as d:
        yield d


@pytest.fixture
def cli():
    """The neardup command-line tool of the same build."""
    path = os.environ.get("NEARDUP")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("NEARDUP (the CLI) not set: run through meson test")
    return path
