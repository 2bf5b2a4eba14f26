"""Fixtures of the rplasma Python tests: real rplasma-store, rplasma-manager and redis-server
processes started by the test itself, as tests/integration's C++ fixtures do.

ctest sets RPLASMA_BIN_DIR (the build's bin/) and PYTHONPATH (the built package). A missing
binary or module is a failure, never a skip: CI must not pass a test that did not run.
"""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import rplasma

STARTUP_TIMEOUT_S = 20


def bin_dir():
    path = os.environ.get("RPLASMA_BIN_DIR")
    assert path, "RPLASMA_BIN_DIR is not set (run through ctest, or point it at <build>/bin)"
    return path


def wait_for(condition, timeout_s, what, log_path=None):
    """Polls condition() until it is true; fails with `what` (and the log) after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    log = open(log_path, errors="replace").read() if log_path and os.path.exists(log_path) else ""
    pytest.fail(f"{what} within {timeout_s}s\n{log}")


def unix_accepts(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(path)
            return True
        except OSError:
            return False


class Process:
    """A child process with its log file; stop() ends it (SIGTERM, then SIGKILL)."""

    def __init__(self, argv, log_path):
        self.argv = argv
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def running(self):
        return self.popen.poll() is None

    def log(self):
        return open(self.log_path, errors="replace").read()

    def stop(self):
        if self.running():
            self.popen.terminate()
            try:
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()
        return self.popen.returncode


class Store(Process):
    def __init__(self, directory, name="store", memory="64M"):
        self.socket_path = os.path.join(directory, f"{name}.sock")
        super().__init__([os.path.join(bin_dir(), "rplasma-store"), "--socket", self.socket_path,
                          "--memory", memory], os.path.join(directory, f"{name}.log"))
        wait_for(lambda: not self.running() or unix_accepts(self.socket_path), STARTUP_TIMEOUT_S,
                 "rplasma-store did not listen", self.log_path)
        assert self.running(), f"rplasma-store exited at start:\n{self.log()}"


def free_loopback_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_pings(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Redis(Process):
    """A private redis-server on a free loopback port (redis cannot pick its own: retried)."""

    def __init__(self, directory):
        binary = "/usr/bin/redis-server"
        assert os.access(binary, os.X_OK), "redis-server is not installed (scripts/setup.sh installs it)"
        for attempt in range(5):
            self.port = free_loopback_port()
            super().__init__([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", directory, "--daemonize", "no",
                              "--protected-mode", "no"], os.path.join(directory, "redis.log"))
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while time.monotonic() < deadline and self.running() and not redis_pings(self.port):
                time.sleep(0.01)
            # The PING must have reached our child, not a stranger that took the port.
            if self.running() and redis_pings(self.port):
                return
            self.stop()
        pytest.fail(f"redis-server did not start:\n{self.log()}")

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"


def write_secret(path):
    """A shared peer secret in a new private (0600) file, as the manager requires."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")


class Manager(Process):
    def __init__(self, directory, name, store, redis, secret_file):
        self.client_socket = os.path.join(directory, f"{name}.manager.sock")
        super().__init__([os.path.join(bin_dir(), "rplasma-manager"),
                          f"--store_socket={store.socket_path}", f"--redis={redis.address}",
                          "--listen=127.0.0.1:0", f"--client_socket={self.client_socket}",
                          f"--secret_file={secret_file}", f"--node_name={name}", "--transport=tcp",
                          "--pin_threshold=65536"], os.path.join(directory, f"{name}.manager.log"))
        wait_for(lambda: not self.running() or ("rplasma-manager ready" in self.log()
                                                 and unix_accepts(self.client_socket)),
                 STARTUP_TIMEOUT_S, f"manager {name} was not ready", self.log_path)
        assert self.running(), f"manager {name} exited at start:\n{self.log()}"


def held_references(stats):
    """References clients hold, taken by socket gets or through their slots (gets with no IPC,
    through the store's shared index): ref_count counts both, slot_references the latter."""
    return stats["ref_count"]


def stats_at_baseline(client, baseline):
    """The leak audit every lifecycle test ends with: nothing referenced, created or stored."""
    stats = client.stats()
    keys = ("used_bytes", "objects_created", "objects_sealed", "ref_count", "slot_references")
    return {k: stats[k] for k in keys} == {k: baseline[k] for k in keys}


@pytest.fixture
def workdir():
    """A short private directory for sockets and logs (pytest's tmp_path can exceed the 108
    bytes a unix socket path may have)."""
    path = tempfile.mkdtemp(prefix="rplasma-py-", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def store(workdir):
    s = Store(workdir)
    yield s
    code = s.stop()
    assert code == 0, f"rplasma-store exited with {code}:\n{s.log()}"


@pytest.fixture
def client(store):
    c = rplasma.connect(store.socket_path, client_name="pytest")
    baseline = c.stats()
    yield c
    wait_for(lambda: stats_at_baseline(c, baseline), 5, "store did not return to its baseline")
    c.close()
