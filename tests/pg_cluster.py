"""A throwaway PostgreSQL cluster for the house tests: ``initdb`` into a temporary folder, run as
an unprivileged user, listening on loopback only on a free port, gone when the tests end.

Real PostgreSQL, never a fake: the house's promises (exactly once, in order, LISTEN/NOTIFY,
surviving a restart) are promises about the engine. Outside CI a machine without PostgreSQL's
server skips the house tests with a message; in CI (``CI=true``) that is a failure, because
``./run test`` installs it (Debian's ``postgresql``).

A cluster can be stopped and started again (the fault tests do it mid-evening); each test gets
its own database in the session's cluster (:func:`tests.conftest` fixtures ``pg_cluster`` and
``house_url``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

# Debian puts the server's tools in a versioned folder off PATH.
_SEARCH = ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin")
# The user the cluster runs as when the tests run as root (initdb refuses root).
_RUN_AS = "nobody"


class PgUnavailableError(RuntimeError):
    """This machine cannot run a PostgreSQL server (no ``initdb``/``pg_ctl``)."""


def pg_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``, newest version first."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for pattern in _SEARCH:
        for d in sorted(glob.glob(pattern), reverse=True):
            if (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists():
                return Path(d)
    raise PgUnavailableError(
        "PostgreSQL's server is not installed (no initdb/pg_ctl); on Debian: "
        "apt-get install postgresql (./run test does it)"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _demote() -> tuple[Callable[[], None] | None, int | None]:
    """Who the server runs as: this user, or ``nobody`` when this is root."""
    if os.getuid() != 0:
        return None, None
    pw = pwd.getpwnam(_RUN_AS)

    def drop() -> None:
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)

    return drop, pw.pw_uid


class PgCluster:
    """One PostgreSQL cluster in a temporary folder; ``trust`` auth on loopback only."""

    def __init__(self) -> None:
        self.bindir = pg_bindir()
        self.root = Path(tempfile.mkdtemp(prefix="dicepad-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._drop, uid = _demote()
        if uid is not None:
            os.chown(self.root, uid, -1)
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.root}'\nfsync = off\n"
                "max_connections = 300\nshared_buffers = 32MB\n"
            )
        self.running = False
        self.start()

    def _run(self, tool: str, *args: str) -> str:
        done = subprocess.run(
            [str(self.bindir / tool), *args],
            capture_output=True,
            text=True,
            preexec_fn=self._drop,  # only at set-up and faults, before the server threads matter
            cwd=self.root,
            timeout=120,
        )
        if done.returncode != 0:
            raise PgUnavailableError(f"{tool} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def start(self) -> None:
        """Start (or restart after :meth:`stop`) the server and wait until it accepts."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "start")
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: clients are cut off, as when the house machine goes
        down; ``immediate``: as a crash)."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
            self.running = False

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run SQL through ``psql`` (no driver needed); the rows' text."""
        psql = shutil.which("psql") or str(self.bindir / "psql")
        done = subprocess.run(
            [psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.url(dbname),
             "-c", sql],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"psql: {done.stderr.strip()}")
        return done.stdout

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        self.psql(f"CREATE DATABASE {name}")
        return self.url(name)

    def close(self) -> None:
        with contextlib.suppress(PgUnavailableError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def wait_until(check: Callable[[], bool], timeout: float = 10.0, step: float = 0.05) -> bool:
    """Poll ``check`` until it is true or ``timeout`` seconds pass; whether it came true."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(step)
    return check()
