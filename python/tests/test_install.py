"""`meson install` of the package: into a temporary DESTDIR, the installed
package imports and works from its site directory, which is one the
interpreter searches by default when the prefix is the interpreter's
(Debian's python3 and the default prefix /usr/local)."""

import json
import os
import subprocess
import sys

import pytest


def test_installed_package_imports(tmp_path):
    build, meson = os.environ.get("NEARDUP_BUILD_ROOT"), os.environ.get("MESON")
    if not build or not meson:
        pytest.skip("NEARDUP_BUILD_ROOT or MESON not set: run through meson test")
    installed = json.loads(subprocess.run([meson, "introspect", build, "--installed"],
                                          check=True, capture_output=True, text=True).stdout)
    ext = next(v for k, v in installed.items() if "/_neardup." in k)
    lib = next(v for k, v in installed.items() if "/libneardup.so" in k)
    site = os.path.dirname(os.path.dirname(ext))
    assert {os.path.basename(v) for v in installed.values() if os.path.dirname(v) ==
            os.path.join(site, "neardup")} >= {"__init__.py", "__init__.pyi", "py.typed"}
    dest = str(tmp_path / "dest")
    subprocess.run([meson, "install", "-C", build, "--no-rebuild", "--destdir", dest],
                   check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=dest + site,
               LD_LIBRARY_PATH=dest + os.path.dirname(lib))
    out = subprocess.run(
        [sys.executable, "-c", "import neardup; print(neardup.__file__); "
         "print(neardup.fingerprint('hello') == 0xfbca4ebf15976028)"],
        env=env, check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split()
    assert out == [dest + os.path.join(site, "neardup", "__init__.py"), "True"]
    prefix = sys.prefix.rstrip("/") + "/"
    if site.startswith(prefix) or site.startswith("/usr/local/"):
        default_path = subprocess.run([sys.executable, "-c", "import sys; print(sys.path)"],
                                      env={}, check=True, capture_output=True,
                                      text=True).stdout
        assert repr(site) in default_path
