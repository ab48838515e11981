"""`pip install .` (pyproject.toml, meson-python) works offline in a fresh
venv on Debian: a copy of the source tree is installed with
`pip install --no-build-isolation --no-deps --no-index` into a venv made
with --system-site-packages (for Debian's python3-mesonpy), and the
package imports and works from the venv, with the library linked into
its extension; and `meson install` with the prefix of a venv lands where
that venv's python looks. Run by meson test (suite 'install': both
compile the library again); not collected with the other tests (no
test_ prefix)."""

import os
import shutil
import subprocess
import sys

import pytest


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))}: exit {r.returncode}\n"
                    f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.stdout


def test_pip_install_into_a_fresh_venv(tmp_path):
    src = os.environ.get("NEARDUP_SOURCE_ROOT")
    if not src:
        pytest.skip("NEARDUP_SOURCE_ROOT not set: run through meson test")
    if subprocess.run([sys.executable, "-c", "import mesonpy"]).returncode != 0:
        pytest.skip("meson-python missing (Debian: python3-mesonpy)")
    if subprocess.run([sys.executable, "-c", "import venv, ensurepip"]).returncode != 0:
        pytest.skip("venv or ensurepip missing (Debian: python3-venv)")
    # A copy: meson-python writes its native file and build directory into
    # the tree it builds.
    tree = tmp_path / "src"
    shutil.copytree(src, tree, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "build-*", "builddir", ".mesonpy*", "__pycache__", "results"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               NINJAFLAGS=env.get("NINJAFLAGS", "-j2"))
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], env=env)
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
         "--no-cache-dir",
         str(tree)], env=env, cwd=tmp_path)
    check = r'''
import os, sys, tempfile
import neardup
here = os.path.dirname(neardup.__file__)
assert here.startswith(sys.prefix), (here, sys.prefix)
assert {"__init__.py", "__init__.pyi", "py.typed"} <= set(os.listdir(here))
assert neardup.fingerprint("hello") == 0xfbca4ebf15976028
with tempfile.TemporaryDirectory() as d:
    with neardup.Database(d + "/db", create=True, fingerprint_only=True) as db:
        db.load([("a", 1), {"id": "b", "fp": 2}])
        assert [m.key for m in db.query(3, 1)] == ["a", "b"]
text = "the same words in the same order, twice over, near-duplicates"
assert neardup.dedupe([{"id": "x", "text": text}, {"id": "y", "text": text}],
                      out="drop") == ["y"]
ext = [f for f in os.listdir(here) if f.startswith("_neardup")]
print(os.path.join(here, ext[0]))
'''
    ext = run([python, "-c", check], env=env, cwd=tmp_path).strip().splitlines()[-1]
    assert ext.startswith(str(venv))
    libs = run(["ldd", ext], env=env)
    assert "libneardup" not in libs and "librocksdb" in libs, libs
    shown = run([python, "-m", "pip", "show", "neardup"], env=env)
    assert "Name: neardup" in shown


def test_meson_install_into_a_venv_prefix(tmp_path):
    """A prefix no interpreter searches gets a venv's layout: `meson setup
    --prefix VENV` then `meson install` puts the package where the venv's
    python finds it, without PYTHONPATH."""
    src, meson = os.environ.get("NEARDUP_SOURCE_ROOT"), os.environ.get("MESON")
    if not src or not meson:
        pytest.skip("NEARDUP_SOURCE_ROOT or MESON not set: run through meson test")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env)
    build = tmp_path / "build"
    run([meson, "setup", str(build), src, f"--prefix={venv}", "-Dtests=false", "-Dbench=false",
         "-Dmpi=disabled", "-Dpython=enabled"], env=env)
    run([meson, "compile", "-C", str(build)], env=env)
    run([meson, "install", "-C", str(build), "--no-rebuild"], env=env)
    ver = "%d.%d" % sys.version_info[:2]
    site = venv / "lib" / f"python{ver}" / "site-packages" / "neardup"
    assert (site / "__init__.pyi").exists()
    out = run([str(venv / "bin" / "python"), "-c",
               "import neardup; print(neardup.__file__); "
               "print(neardup.fingerprint('hello') == 0xfbca4ebf15976028)"],
              env=env, cwd=tmp_path).split()
    assert out == [str(site / "__init__.py"), "True"]
