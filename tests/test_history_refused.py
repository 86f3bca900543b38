"""What `psbench history` refuses, and that a refusal costs the database nothing: damaged
or half-written result sets (a run.json missing or cut short, an index cut mid-line,
samples that disagree with their summary, a run that has not ended, formats this psbench
does not know), bad arguments (exit 2, one message naming the file or option and the
fix, no traceback), and a resumed sweep added again (it replaces its shorter form)."""

import json
import re
import shutil
import socket
import sqlite3
from functools import partial

import pytest

from conftest import run_cli
from history_sets import index_of, run_records, run_sweep, write_index
from psbench.results.samples import HEADER, HEADER_SIZE


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, driver_libs):
    """A real sweep of udp and shm, two repetitions, short runs."""
    return run_sweep(tmp_path_factory.mktemp("refused"), "sweep", reps=2, count=200)


def history(*args, db, results=None):
    return run_cli(["history", *args, "--db", str(db)], results or db.parent, timeout=600)


def contents(db) -> list[tuple]:
    """Every row of every table: what must survive a refusal unchanged."""
    with sqlite3.connect(db) as connection:
        return [
            row
            for table in ("result_sets", "configs", "runs", "samples")
            for row in connection.execute(f"SELECT * FROM {table} ORDER BY id")
        ]


@pytest.fixture
def db_with_one_set(sweep, tmp_path):
    db = tmp_path / "history.sqlite"
    assert history("add", str(sweep), db=db).returncode == 0
    return db, contents(db)


def damaged_copy(sweep, tmp_path, damage) -> str:
    copy = tmp_path / "damaged"
    shutil.copytree(sweep, copy)
    damage(copy)
    return str(copy)


def cut_run_json(copy):
    path = run_records(copy)[1]
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def cut_index(copy):
    data = (copy / "index.jsonl").read_bytes()
    (copy / "index.jsonl").write_bytes(data[:-40])


def _samples(copy):
    return run_records(copy)[0].parent / "ping.samples"


def cut_samples(copy):
    data = _samples(copy).read_bytes()
    _samples(copy).write_bytes(data[:-24])


def fewer_samples(copy):
    """A whole samples file whose header agrees with its length, one record short of
    what the summary counted."""
    path = _samples(copy)
    data = path.read_bytes()
    fields = list(HEADER.unpack_from(data))
    fields[3] -= 1
    record_size = fields[2]
    header = HEADER.pack(*fields).ljust(HEADER_SIZE, b"\0")
    path.write_bytes(header + data[HEADER_SIZE : len(data) - record_size])


def rewritten_samples(copy):
    """Samples rewritten (a 10 µs delay added) and run.json not told."""
    import numpy as np

    path = _samples(copy)
    data = bytearray(path.read_bytes())
    records = np.frombuffer(bytes(data[HEADER_SIZE:]), dtype=np.dtype("<u8")).copy()
    records = records.reshape(-1, 5)  # v2: seq, intended, latency, send, flags+writer
    records[:, 2] += 10_000
    path.write_bytes(bytes(data[:HEADER_SIZE]) + records.tobytes())


def first_record_says(copy, **fields):
    """The first run's run.json rewritten with fields."""
    path = run_records(copy)[0]
    path.write_text(json.dumps(json.loads(path.read_text()) | fields))


def future_samples(copy):
    path = _samples(copy)
    data = bytearray(path.read_bytes())
    data[8:12] = (9).to_bytes(4, "little")  # the header's version
    path.write_bytes(bytes(data))


def missing_run_json(copy):
    run_records(copy)[0].unlink()


def missing_run_folder(copy):
    shutil.rmtree(run_records(copy)[2].parent)


DAMAGES = {
    "run.json missing": (missing_run_json, r"run\.json: missing"),
    "run.json cut short": (cut_run_json, r"run\.json: truncated or not JSON"),
    "run folder missing": (missing_run_folder, r"index\.jsonl: run 3's folder .* is missing"),
    "index cut mid-line": (cut_index, r"index\.jsonl: its last line is cut short"),
    "samples cut short": (cut_samples, r"ping\.samples: header says 200 records"),
    "samples fewer than counted": (
        fewer_samples,
        r"ping\.samples: 199 records, but ping\.json says counts\.samples = 200",
    ),
    "samples rewritten": (rewritten_samples, r"ping\.samples: its median is .* but run\.json"),
    "a newer format": (
        partial(first_record_says, format="psbench-run/9"),
        r"format 'psbench-run/9'; this psbench reads",
    ),
    "a newer samples file": (
        future_samples,
        r"ping\.samples: format version 9, this reader knows 1, 2",
    ),
    "a run not ended": (
        partial(first_record_says, status="running"),
        r"status 'running': the run has not ended",
    ),
}


@pytest.mark.parametrize("name", DAMAGES)
@pytest.mark.run_json_by_hand  # run.json cut short or of a future format
def test_a_damaged_set_is_refused_with_the_reason_and_nothing_is_lost(
    name, sweep, tmp_path, db_with_one_set
):
    db, before = db_with_one_set
    damage, reason = DAMAGES[name]
    copy = damaged_copy(sweep, tmp_path, damage)
    proc = history("add", copy, db=db)
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"psbench: refused {copy}: ")
    assert re.search(reason, line), line
    assert contents(db) == before
    assert "1 set refused" in proc.stdout


def test_a_refused_set_does_not_stop_the_others(sweep, tmp_path):
    db = tmp_path / "history.sqlite"
    folder = tmp_path / "sets"
    folder.mkdir()
    shutil.copytree(sweep, folder / "a-whole")
    damaged = damaged_copy(sweep, tmp_path, cut_index)
    shutil.move(damaged, folder / "b-damaged")
    proc = history("add", str(folder), db=db)
    assert proc.returncode == 1
    assert f"added: {folder / 'a-whole'}" in proc.stdout
    assert f"refused {folder / 'b-damaged'}" in proc.stderr
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM result_sets").fetchone() == (1,)


def test_a_resumed_sweep_replaces_its_shorter_form(sweep, tmp_path):
    """A sweep stopped after two runs, added; then the same sweep ended by --resume
    (here: its whole index and runs), added again: one set, the longer."""
    db = tmp_path / "history.sqlite"
    stopped = tmp_path / "sweep"
    shutil.copytree(sweep, stopped)
    entries = index_of(stopped)
    write_index(stopped, entries[:2])
    for entry in entries[2:]:
        shutil.rmtree(stopped / entry["run_dir"])
    proc = history("add", str(stopped), db=db)
    assert "(set 1, 2 runs in 2 configurations" in proc.stdout, proc.stdout
    short = tmp_path / "short"
    stopped.rename(short)
    shutil.copytree(sweep, stopped)
    proc = history("add", str(stopped), db=db)
    assert "(set 2, 4 runs in 2 configurations; it replaces set 1, its shorter form)" in proc.stdout
    rows = json.loads(history("list", "--json", db=db).stdout)["rows"]
    assert [(r["set"], r["runs"]) for r in rows] == [(2, 4)]
    # The shorter form again: already there in its longer form.
    shutil.rmtree(short)
    shutil.copytree(stopped, short)
    write_index(short, entries[:2])
    for entry in entries[2:]:
        shutil.rmtree(short / entry["run_dir"])
    proc = history("add", str(short), db=db)
    assert "already in the history in a longer form" in proc.stdout, proc.stdout
    assert len(json.loads(history("list", "--json", db=db).stdout)["rows"]) == 1


def one_error(proc) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    # An argparse error comes after the usage; psbench's own errors alone.
    lines = [line for line in proc.stderr.strip().splitlines() if "error: " in line]
    assert len(lines) == 1, proc.stderr
    assert lines[0] == proc.stderr.strip().splitlines()[-1]
    return lines[0]


def test_bad_arguments_exit_2_with_one_message(tmp_path, sweep):
    db = tmp_path / "history.sqlite"
    line = one_error(history("add", str(tmp_path / "nowhere"), db=db))
    assert "nowhere: no such folder; give the folder of a result set" in line
    assert not db.exists()  # nothing was created for a bad argument
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "empty: holds no result set" in one_error(history("add", str(empty), db=db))
    run = sorted(sweep.glob("runs/*/*"))[0]
    line = one_error(history("add", str(run), db=db))
    assert f"a run of the result set {sweep}, not a set of its own; add the set" in line
    file = tmp_path / "notes.txt"
    file.write_text("not a database")
    line = one_error(history("add", str(sweep), db=file))
    assert f"--db {file}: not an SQLite database" in line
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    assert "an SQLite database of something else" in one_error(history("list", db=other))
    missing = tmp_path / "missing.sqlite"
    line = one_error(history("trend", db=missing))
    assert f"--db {missing}: no such history database; `psbench history add DIR` creates it" in line
    assert one_error(history("add", str(sweep), db=tmp_path / "no" / "h.sqlite")).endswith(
        "does not exist; create it or put the database elsewhere"
    )
    assert history("add", str(sweep), db=db).returncode == 0
    line = one_error(history("trend", "--driver", "nope", db=db))
    assert "--driver nope: no configuration in the history matches; it has drivers shm, udp" in line
    line = one_error(history("trend", "--since", "2100-01-01", db=db))
    assert line.endswith(
        "no configuration in the history matches; it has drivers shm, udp on machines "
        + socket.gethostname()
    )
    line = one_error(history("trend", "--since", "May", db=db))
    assert line.endswith(
        "argument --since: is a date like 2026-11-29 or 2026-11-29T12:00:00, got 'May'"
    )
    line = one_error(history("trend", "-o", str(tmp_path / "no" / "out"), db=db))
    assert "does not exist; create it or write elsewhere" in line
    assert "invalid choice: 'dates'" in one_error(history("trend", "--by", "dates", db=db))


def test_an_empty_history_lists_nothing_and_has_no_trend(tmp_path, sweep):
    db = tmp_path / "history.sqlite"
    history("add", str(sweep), db=db)
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM result_sets")
    proc = history("list", db=db)
    assert proc.returncode == 0 and "holds no result set yet" in proc.stdout
    assert "holds no measured configuration yet" in one_error(history("trend", db=db))


def test_the_formats_history_reads_are_the_ones_psbench_writes():
    from psbench.history import ingest
    from psbench.run.criteria.battery import FORMAT, RECORD
    from psbench.run.measure import RUN_FORMAT

    assert (ingest.RUN_FORMAT, ingest.CRITERIA_FILE, ingest.CRITERIA_FORMAT) == (
        RUN_FORMAT,
        RECORD,
        FORMAT,
    )


def test_a_set_another_add_committed_meanwhile_is_not_added_twice(sweep, tmp_path):
    """Two `history add` of one set at once: both read it, the second to commit finds it
    there inside its transaction and writes nothing."""
    from psbench.history.database import Database
    from psbench.history.ingest import read_set

    row = read_set(sweep)
    with Database.open(tmp_path / "history.sqlite", create=True) as db:
        assert db.add(row) == (1, True)
        assert db.add(row) == (1, False)
        assert db.counts()["result_sets"] == 1
