"""Starting `neardup serve` for a test: a store, a free loopback port (the
server picks it: --listen 127.0.0.1:0, and says which on stdout), and a
Client. Shared by test_client.py and tests/crash/crash_serve.py's
style of test."""

import os
import signal
import subprocess

import neardup


class Server:
    def __init__(self, cli, path, *args, create=True, fingerprint_only=True):
        if create:
            init = [cli, "init", path, "--docs", "100000"]
            if fingerprint_only:
                init.append("--fingerprint-only")
            subprocess.run(init, check=True, capture_output=True)
        self.proc = subprocess.Popen(
            [cli, "serve", path, "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            err = self.proc.stderr.read()
            self.proc.wait()
            if "built without the server" in err:
                import pytest
                pytest.skip("neardup built without the server (libmicrohttpd)")
            raise RuntimeError("serve did not start: " + line + err)
        self.url = line.split()[-1]
        self.port = int(self.url.rsplit(":", 1)[1])

    def client(self, token=None):
        return neardup.Client(self.url, token=token)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        rc = self.proc.wait(timeout)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc, err
