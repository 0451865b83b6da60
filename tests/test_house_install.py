"""``systemd/install.sh --house`` in dry-run mode, as tests/test_installer.py runs the table
installer: the facts faked, every command that changes anything shadowed by a recorder, and
PostgreSQL's answers (role, database) faked through ``runuser``."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from pg_cluster import PgCluster
from test_installer import REPO, SCRIPT, FakePi, plan_lines

from server.house import ship
from server.house.migrate import HouseError, connect
from server.rows import EventRow, TableRow

FAKE_RUNUSER = """#!/bin/sh
# runuser -u postgres -- psql ...: answers the installer's read-only queries from the file
# pg_state beside bin/ (words: role, database); anything else is recorded.
state="$(cat "$(dirname "$0")/../pg_state" 2>/dev/null)"
for last; do :; done
case "$last" in
  *pg_roles*) case " $state " in *" role "*) echo 1 ;; esac; exit 0 ;;
  *pg_database*) case " $state " in *" database "*) echo 1 ;; esac; exit 0 ;;
esac
echo "runuser $*" >>"$CALLS"
"""


@pytest.fixture
def house(tmp_path: Path) -> FakePi:
    pi = FakePi(tmp_path)
    runuser = pi.bin / "runuser"
    runuser.write_text(FAKE_RUNUSER)
    runuser.chmod(0o755)
    return pi


def test_a_fresh_house_gets_postgresql_a_role_a_database_and_the_unit(house: FakePi) -> None:
    result = house.run("--house", "--dry-run", numpy="1.24.2")  # not a Pi: no --force needed
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result.stdout)
    opt = f"{house.fs}/opt/dicepad"
    expected_in_order = [
        "apt-get update",
        "env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
        "python3-venv python3-numpy postgresql",
        f"env PIP_DISABLE_PIP_VERSION_CHECK=1 {opt}/venv/bin/python -m pip install "
        f"--upgrade --constraint {opt}/constraints.txt {opt}/src",
        f"{opt}/venv/bin/python {REPO}/server/pi_install.py check --numpy 1.24.2 "
        "psycopg server.house.app",
        "systemctl enable --now postgresql.service",
        f"write {house.fs}/etc/postgresql/VERSION/main/conf.d/dicepad.conf (mode 0644):",
        f"append to {house.fs}/etc/postgresql/VERSION/main/pg_hba.conf: "
        "host dicepad_house dicepad samenet scram-sha-256",
        "systemctl restart postgresql.service",
        "psql as postgres: CREATE ROLE dicepad LOGIN PASSWORD '********'",
        f"write {house.fs}/etc/dicepad/house.env (mode 0600):",
        "psql as postgres: CREATE DATABASE dicepad_house OWNER dicepad",
        f"install -m 0644 {REPO}/systemd/dicepad-house.service "
        f"{house.fs}/etc/systemd/system/dicepad-house.service",
        "systemctl enable dicepad-house.service",
        "systemctl restart dicepad-house.service",
    ]
    positions = [plan.index(step) for step in expected_in_order]
    assert positions == sorted(positions)
    assert (
        "    DICEPAD_HOUSE_DB=postgresql://dicepad:NEW-PASSWORD@localhost:5432/dicepad_house"
        in (result.stdout.splitlines())
    )
    assert "listen_addresses = '*'" in result.stdout
    assert "dicepad serve --house 'postgresql://dicepad:NEW-PASSWORD@" in result.stdout
    assert ".local:5432/dicepad_house' --house-name NAME" in result.stdout
    assert "DICEPAD_HOUSE=postgresql://" in result.stdout
    assert not any("picamera2" in line or "gpio" in line for line in plan)
    assert house.changes() == []


def test_a_second_run_keeps_the_role_its_password_and_the_database(house: FakePi) -> None:
    house.installed_earlier()
    (house.fs / "etc/dicepad/house.env").write_text(
        "DICEPAD_HOUSE_DB=postgresql://dicepad:abc123@localhost:5432/dicepad_house\n"
    )
    conf = house.fs / "etc/postgresql/15/main"
    conf.mkdir(parents=True)
    (conf / "pg_hba.conf").write_text("host dicepad_house dicepad samenet scram-sha-256\n")
    (house.root / "pg_state").write_text("role database")
    result = house.run("--house", "--dry-run", numpy="1.24.2")
    assert result.returncode == 0, result.stderr
    plan = plan_lines(result.stdout)
    assert "    role dicepad exists and" in result.stdout
    assert "    database dicepad_house exists: kept" in result.stdout
    assert not any("CREATE" in line or "ALTER" in line or "house.env" in line for line in plan)
    assert not any("pg_hba.conf" in line for line in plan)  # the line is there already
    assert f"write {conf}/conf.d/dicepad.conf (mode 0644):" in plan
    assert "postgresql://dicepad:abc123@" in result.stdout
    assert house.changes() == []


def test_house_refuses_to_uninstall_and_needs_root(house: FakePi) -> None:
    refused = house.run("--house", "--uninstall", "--dry-run")
    assert refused.returncode != 0
    assert "dicepad-house" in refused.stderr
    if os.getuid() != 0:  # as root it would really run: only the refusal is tried
        not_root = house.run("--house", numpy="1.24.2", root=False)
        assert not_root.returncode != 0
        assert "run as root" in not_root.stderr
    assert house.changes() == []


def test_the_house_unit_is_clean() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = REPO / "systemd" / "dicepad-house.service"
    done = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    problems = [
        line for line in done.stderr.splitlines()
        if line.strip() and "/opt/dicepad/venv/bin/dicepad" not in line
    ]  # fmt: skip
    assert problems == [], done.stderr
    assert SCRIPT.exists()


def test_the_installers_sql_gives_a_role_and_database_a_table_server_ships_to(
    house: FakePi, own_pg_cluster: PgCluster
) -> None:
    """The installer's PostgreSQL statements (from its dry run, the password filled in) on a
    real server, with its pg_hba line ahead of the cluster's own: only the role's password
    gets in, and the role, owning the database, can migrate it and ship to it (PostgreSQL 15
    no longer lets any role create in ``public``)."""
    plan = plan_lines(house.run("--house", "--dry-run", numpy="1.24.2").stdout)
    statements = [line.split(": ", 1)[1] for line in plan if line.startswith("psql as postgres:")]
    assert statements == [
        "CREATE ROLE dicepad LOGIN PASSWORD '********'",
        "CREATE DATABASE dicepad_house OWNER dicepad",
    ]
    (hba_line,) = [line.split(": ", 1)[1] for line in plan if "pg_hba.conf:" in line]
    password = secrets.token_hex(16)  # as the installer's: hex, nothing a URL must escape
    for statement in statements:
        own_pg_cluster.psql(statement.replace("********", password))
    hba = own_pg_cluster.data / "pg_hba.conf"
    hba.write_text(f"{hba_line}\n{hba.read_text()}")  # first match wins: ahead of trust
    own_pg_cluster.psql("SELECT pg_reload_conf()")
    url = own_pg_cluster.url("dicepad_house").replace("//postgres@", f"//dicepad:{password}@")
    with pytest.raises(HouseError, match="password authentication failed"):
        connect(url.replace(password, "0" * 32))
    conn = connect(url, autocommit=True)  # migrated as the role itself
    try:
        ship.claim(conn, "bar-pi", "instance-1", "http://bar-pi.local:8080/")
        row = TableRow("abc234", "bolo", {"players": ["Ann", "Bob"]}, {}, "2026-11-27T21:00")
        event = EventRow("abc234", 1, "2026-11-27T21:01", "phone", "roll", {"type": "roll"})
        held = ship.ship(conn, "bar-pi", "instance-1", ship.Batch(row, (event,)))
        assert held.last_seq == 1
        owner = conn.execute(
            "SELECT tableowner FROM pg_tables WHERE tablename = 'events'"
        ).fetchone()
        assert owner == ("dicepad",)
    finally:
        conn.close()
