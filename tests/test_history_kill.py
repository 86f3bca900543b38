"""A `psbench history add` killed with SIGKILL leaves a database that opens and holds
exactly what was committed before: killed inside the transaction of a set (every row of
it written, none committed), and killed wherever it happens to be while adding several
sets. Adding again then completes the history."""

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from conftest import REPO, cli_in_background, python_env, run_cli
from history_sets import run_sweep, split

# psbench's CLI with the set's insertion stopped inside its transaction: what a kill at
# the worst moment finds.
STALLED = """
import sys, time
from psbench.history import database
write = database.Database._insert_set
def stalled(self, db, row, replaces):
    found = write(self, db, row, replaces)
    print("in transaction", flush=True)
    time.sleep(600)
    return found
database.Database._insert_set = stalled
from psbench.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def parts(tmp_path_factory, driver_libs):
    """Four sets cut from one real sweep of four repetitions."""
    folder = tmp_path_factory.mktemp("kill")
    store = run_sweep(folder, "sweep", reps=4, count=200)
    (folder / "parts").mkdir()
    return split(store, folder / "parts", 4)


def history(*args, db):
    return run_cli(["history", *args, "--db", str(db)], db.parent, timeout=600)


def contents(db) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        return [
            row
            for table in ("result_sets", "configs", "runs", "samples")
            for row in connection.execute(f"SELECT * FROM {table} ORDER BY id")
        ]


def set_sizes(db) -> dict[str, tuple]:
    """path -> (configurations, runs, samples files) of every set in the database."""
    with sqlite3.connect(db) as connection:
        return {
            path: (
                connection.execute(
                    "SELECT count(*) FROM configs WHERE set_id = ?", (i,)
                ).fetchone()[0],
                connection.execute("SELECT count(*) FROM runs WHERE set_id = ?", (i,)).fetchone()[
                    0
                ],
                connection.execute(
                    "SELECT count(*) FROM samples f JOIN runs r ON r.id = f.run_id "
                    "WHERE r.set_id = ?",
                    (i,),
                ).fetchone()[0],
            )
            for i, path in connection.execute("SELECT id, path FROM result_sets")
        }


def test_killed_inside_a_sets_transaction(parts, tmp_path):
    db = tmp_path / "history.sqlite"
    assert history("add", str(parts[0]), db=db).returncode == 0
    before = contents(db)
    proc = subprocess.Popen(
        [sys.executable, "-c", STALLED, "history", "add", str(parts[1]), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=python_env(),
        start_new_session=True,
    )
    try:
        assert proc.stdout.readline() == "in transaction\n", proc.stderr.read()
        # Every row of the set is written into the database file's pages or its journal,
        # and nothing is committed.
        assert db.with_name(db.name + "-journal").exists()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert contents(db) == before  # opens, the hot journal rolled back
    listed = history("list", "--json", db=db)
    assert listed.returncode == 0 and str(parts[1]) not in listed.stdout
    again = history("add", str(parts[1]), db=db)
    assert f"added: {parts[1]}" in again.stdout, again.stdout + again.stderr
    assert set_sizes(db) == {str(parts[0]): (2, 2, 2), str(parts[1]): (2, 2, 2)}


def test_killed_anywhere_while_adding_several_sets(parts, tmp_path):
    db = tmp_path / "history.sqlite"
    args = ["history", "add", *map(str, parts), "--db", str(db)]
    with cli_in_background(args, tmp_path, PYTHONUNBUFFERED="1") as proc:
        first = proc.stdout.readline()
        os.killpg(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
    assert first.startswith(f"added: {parts[0]}"), first
    announced = [line for line in (first + rest).splitlines() if line.startswith("added: ")]
    contents(db)  # opens, whole
    found = set_sizes(db)
    # Every set there is whole, and what was said to be added is there.
    assert all(size == (2, 2, 2) for size in found.values()), found
    assert len(found) >= len(announced)
    assert set(found) <= set(map(str, parts))
    again = history("add", *map(str, parts), db=db)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already in the history: ") == len(found)
    assert set_sizes(db) == {str(p): (2, 2, 2) for p in parts}
