"""The history database: one SQLite file (docs/history.md says why SQLite, and the
schema). A result set goes in within one transaction, so a `history add` killed at any
moment leaves the file holding exactly the sets committed before; raw samples stay where
they are, the database holds their paths and content hashes."""

import json
import sqlite3
import typing
from dataclasses import dataclass, fields
from pathlib import Path

import psbench
from psbench.base.errors import UserError

FORMAT = "psbench-history/1"
SCHEMA_VERSION = 1  # PRAGMA user_version


@dataclass
class SampleRow:
    """A raw samples file of a run: where it is (relative to the set) and its hash."""

    receiver: str
    file: str
    sha256: str
    bytes: int
    records: int | None
    format_version: int | None


@dataclass
class RunRow:
    number: int
    rep: int
    label: str
    status: str
    message: str | None
    run_dir: str | None  # relative to the set's folder
    created_utc: str | None
    driver_name: str | None
    driver_version: str | None
    driver_origin: str | None
    driver_build: str | None  # JSON
    driver: str | None  # JSON: the driver's --describe as run.json has it
    n: int | None
    p50: float | None
    p99: float | None
    samples_per_s: float | None
    cpu_ns_per_message: float | None
    samples: list[SampleRow]


@dataclass
class ConfigRow:
    series: str  # the settings without the middleware version (JSON, sorted keys)
    settings: str  # the settings as run (JSON, sorted keys: Config.key)
    label: str
    kind: str | None
    driver: str | None
    size: int | None
    metric: str | None
    driver_version: str | None
    driver_origin: str | None
    driver_build: str | None
    runs: int
    ok_runs: int
    status: str
    n: int | None
    p50: float | None
    p50_low: float | None
    p50_high: float | None
    p99: float | None
    p99_low: float | None
    p99_high: float | None
    p999: float | None
    max: float | None
    mean: float | None
    spread_p50: float | None
    samples_per_s: float | None
    mbit_per_s: float | None
    loss_percent: float | None
    cpu_ns_per_message: float | None
    utilisation: float | None
    peak_rss_kb: float | None
    run_rows: list[RunRow]


@dataclass
class CriterionRow:
    """One verdict of a criteria battery (its criteria.json)."""

    criterion: str
    driver: str
    verdict: str
    evidence: str | None
    experiment: str | None
    run_dir: str | None


@dataclass
class SetRow:
    content_hash: str
    origin: str
    index_size: int | None
    index_sha256: str | None
    kind: str
    name: str
    path: str
    added_utc: str
    started_utc: str | None
    finished_utc: str | None
    machine: str | None
    cpu_model: str | None
    logical_cpus: int | None
    kernel: str | None
    virtualization: str | None
    psbench_version: str | None
    psbench_commit: str | None
    psbench_dirty: int | None
    formats: str
    runs: int
    ok_runs: int
    env: str | None
    experiment: str | None
    config_rows: list[ConfigRow]
    criterion_rows: list[CriterionRow]


SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL"}
KEY = "id INTEGER PRIMARY KEY"


def _of(table: str) -> str:
    return f"INTEGER NOT NULL REFERENCES {table}(id) ON DELETE CASCADE"


def _table(name: str, row_class, head: list[str], tail: tuple[str, ...] = ()) -> str:
    """CREATE TABLE for a row class: its scalar fields as columns (str TEXT, int INTEGER,
    float REAL; NOT NULL unless the type admits None), after the key and links in head."""
    hints = typing.get_type_hints(row_class)
    columns = list(head)
    for column in _columns_of(row_class):
        kinds = typing.get_args(hints[column]) or (hints[column],)
        kind = next(k for k in kinds if k is not type(None))
        null = "" if type(None) in kinds else " NOT NULL"
        columns.append(f"{column} {SQL_TYPES[kind]}{null}")
    return f"CREATE TABLE {name} (\n  " + ",\n  ".join([*columns, *tail]) + "\n);\n"


def _columns_of(row_class) -> list[str]:
    """The scalar fields of a row class (its lists are rows of other tables)."""
    return [
        f.name
        for f in fields(row_class)
        if f.name not in ("samples",) and not f.name.endswith("rows")
    ]


SCHEMA = (
    "CREATE TABLE meta (\n  key TEXT PRIMARY KEY,\n  value TEXT NOT NULL\n);\n"
    + _table("result_sets", SetRow, [f"{KEY} AUTOINCREMENT"], ("UNIQUE (content_hash)",))
    + "CREATE INDEX result_sets_origin ON result_sets(origin);\n"
    + _table("configs", ConfigRow, [KEY, f"set_id {_of('result_sets')}"])
    + "CREATE INDEX configs_series ON configs(series);\n"
    + "CREATE INDEX configs_set ON configs(set_id);\n"
    + _table("runs", RunRow, [KEY, f"set_id {_of('result_sets')}", f"config_id {_of('configs')}"])
    + "CREATE INDEX runs_config ON runs(config_id);\n"
    + _table("samples", SampleRow, [KEY, f"run_id {_of('runs')}"])
    + "CREATE INDEX samples_run ON samples(run_id);\n"
    + _table("criteria", CriterionRow, [KEY, f"set_id {_of('result_sets')}"])
)


def _columns(row) -> dict:
    """The row's values for its table."""
    return {name: getattr(row, name) for name in _columns_of(type(row))}


def _insert(db: sqlite3.Connection, table: str, values: dict) -> int:
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cursor = db.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))
    return cursor.lastrowid


def _problem(path: Path, why: str) -> UserError:
    return UserError(
        f"--db {path}: {why}; give the history database `psbench history add` made, or a "
        f"new file name to start one"
    )


class Database:
    """An open history database. Every write is one transaction (`with db.writing():`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path = path
        self.db = connection

    @classmethod
    def open(cls, path: Path, create: bool) -> "Database":
        """The database at path; created (with its parent folder's permission) when create
        is set and the file does not exist. A UserError names what is wrong."""
        path = Path(path).expanduser()
        if path.is_dir():
            raise _problem(path, "is a folder")
        if not path.exists():
            if not create:
                raise UserError(
                    f"--db {path}: no such history database; `psbench history add DIR` "
                    f"creates it (or give the right --db)"
                )
            if not path.parent.is_dir():
                raise UserError(
                    f"--db {path}: folder {path.parent} does not exist; create it or put "
                    f"the database elsewhere"
                )
        try:
            connection = sqlite3.connect(path, isolation_level=None, timeout=30)
            connection.row_factory = sqlite3.Row
            # The rollback journal (a single file at rest) and a sync at every commit:
            # a killed writer, or a machine that goes down, leaves the last commit.
            connection.execute("PRAGMA journal_mode=DELETE")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise _problem(path, f"not an SQLite database ({exc})") from None
        database = cls(path, connection)
        if version == 0:
            database._create_schema()
        elif version > SCHEMA_VERSION:
            raise UserError(
                f"--db {path}: written by a newer psbench (schema {version}; this one "
                f"knows {SCHEMA_VERSION}); use that psbench, or a new database file",
                exit_code=1,
            )
        database._check_format()
        return database

    def _create_schema(self) -> None:
        tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables:
            raise _problem(self.path, "an SQLite database of something else (it has tables)")
        script = (
            "BEGIN IMMEDIATE;\n"
            + SCHEMA
            + f"INSERT INTO meta VALUES ('format', '{FORMAT}');\n"
            + f"INSERT INTO meta VALUES ('created_by', 'psbench {psbench.__version__}');\n"
            + f"PRAGMA user_version={SCHEMA_VERSION};\nCOMMIT;\n"
        )
        try:
            self.db.executescript(script)
        except sqlite3.Error as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            # Another process may have created it in the meantime.
            if self.db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                raise UserError(
                    f"--db {self.path}: cannot create the database: {exc}", exit_code=1
                ) from None

    def _check_format(self) -> None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None or row[0] != FORMAT:
            raise _problem(self.path, f"not a psbench history database (no meta format {FORMAT})")

    def close(self) -> None:
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Reading.

    def set_by_hash(self, content_hash: str) -> sqlite3.Row | None:
        return self.db.execute(
            "SELECT * FROM result_sets WHERE content_hash = ?", (content_hash,)
        ).fetchone()

    def sets_of_origin(self, origin: str) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM result_sets WHERE origin = ? ORDER BY id", (origin,)
        ).fetchall()

    def sets(self) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM result_sets ORDER BY coalesce(started_utc, added_utc), id"
        ).fetchall()

    def configs(self) -> list[sqlite3.Row]:
        """Every configuration of every set, with its set's date, machine and path."""
        return self.db.execute(
            "SELECT c.*, s.started_utc, s.added_utc, s.machine, s.path AS set_path, "
            "s.name AS set_name, s.kind AS set_kind, s.content_hash FROM configs c JOIN result_sets s "
            "ON s.id = c.set_id ORDER BY coalesce(s.started_utc, s.added_utc), s.id, c.id"
        ).fetchall()

    def runs_of(self, config_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM runs WHERE config_id = ? ORDER BY number", (config_id,)
        ).fetchall()

    def samples_of_set(self, set_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT f.* FROM samples f JOIN runs r ON r.id = f.run_id WHERE r.set_id = ?",
            (set_id,),
        ).fetchall()

    def counts(self) -> dict:
        return {
            table: self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("result_sets", "configs", "runs", "samples", "criteria")
        }

    # Writing.

    def _write(self, work) -> int:
        """work(connection) inside one transaction: all of it is committed, or none."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                result = work(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
            return result
        except sqlite3.Error as exc:
            raise UserError(f"--db {self.path}: cannot write: {exc}", exit_code=1) from None

    def add(self, row: SetRow, replaces: list[int] = ()) -> tuple[int, bool]:
        """Adds a set in one transaction (replacing the sets `replaces`, shorter forms of
        the same sweep, in the same one): its id, and whether it was added (False: it was
        there already)."""
        set_id = self._write(lambda db: self._insert_set(db, row, replaces))
        return abs(set_id), set_id > 0

    def _insert_set(self, db: sqlite3.Connection, row: SetRow, replaces: list[int]) -> int:
        """The new set's id; the id of the same set when another `history add` put it in
        while this one was reading it (then nothing is written)."""
        found = db.execute(
            "SELECT id FROM result_sets WHERE content_hash = ?", (row.content_hash,)
        ).fetchone()
        if found is not None:
            return -found[0]
        for earlier in replaces:
            db.execute("DELETE FROM result_sets WHERE id = ?", (earlier,))
        set_id = _insert(db, "result_sets", _columns(row))
        for config in row.config_rows:
            config_id = _insert(db, "configs", {"set_id": set_id, **_columns(config)})
            for run in config.run_rows:
                run_values = {"set_id": set_id, "config_id": config_id}
                run_values.update(_columns(run))
                run_id = _insert(db, "runs", run_values)
                for sample in run.samples:
                    _insert(db, "samples", {"run_id": run_id, **_columns(sample)})
        for verdict in row.criterion_rows:
            _insert(db, "criteria", {"set_id": set_id, **_columns(verdict)})
        return set_id

    def move(self, set_id: int, path: str) -> None:
        """A set found again at another path: its samples are there now."""
        self._write(
            lambda db: db.execute("UPDATE result_sets SET path = ? WHERE id = ?", (path, set_id))
        )


def json_text(value) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=str)
