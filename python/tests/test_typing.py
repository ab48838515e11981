"""typed_usage.py, which `mypy --strict` checks against the stubs (the test
python_mypy), also runs: the calls the stubs type-check are real ones."""

import typed_usage


def test_typed_usage_runs(tmp_path):
    typed_usage.use(str(tmp_path / "db.nd"))
