"""The browser table's SQLite file: every table and every action applied at it.

A table is its deal (rules preset, seed), its seats (``human`` or an agent spec),
its pace and the SHA-256 digests of its seat tokens (a stolen file does not hand
out seats).  Its state is the action log: one row per applied action, each
written in its own transaction before the game moves on, so a server killed at
any moment restarts with every action it acknowledged.  The file runs in WAL
mode with ``synchronous=NORMAL``: a killed process loses nothing committed (a
power cut may lose the last commits; ``--durable`` syncs every commit).

The server's threads share one connection, one statement or transaction at a
time: a call waits at most :data:`BUSY_TIMEOUT` seconds for its turn and at most
as long again for a lock held by another connection, then raises
:class:`sqlite3.Error` (the server answers 503 and retries the agents' moves); it
never stalls a request for long.  ``seen`` remembers which persons have seen a
round's score sheet (the table waits for them between rounds), ``left`` which
persons left their seat to the table's stand-in agent; an action a stand-in made
for a person is marked ``stand_in``.  A table's ``creator`` is a digest of the
client that created it (its share of the tables in play), never its address.  ``offered``: whether the
table's finished game may be offered for datasets (``handfoot dataset from-records``), as the start page
says; ``handfoot serve --no-offer-games`` creates tables with it off, and the tables of a file written
before the column existed have it off (they were played without the start page's line).
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    rules TEXT NOT NULL,
    seats TEXT NOT NULL,
    seed INTEGER NOT NULL,
    pace_ms INTEGER NOT NULL,
    token_digests TEXT NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    seed_chosen INTEGER NOT NULL DEFAULT 0,
    creator TEXT NOT NULL DEFAULT '',
    stand_in TEXT NOT NULL DEFAULT 'strategic',
    finished_at REAL NOT NULL DEFAULT 0,
    offered INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS actions (
    table_id TEXT NOT NULL REFERENCES tables(id),
    seq INTEGER NOT NULL,
    player INTEGER NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL,
    stand_in INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE IF NOT EXISTS seen (
    table_id TEXT NOT NULL REFERENCES tables(id),
    round INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    PRIMARY KEY (table_id, round, seat)
);
CREATE TABLE IF NOT EXISTS left_seats (
    table_id TEXT NOT NULL REFERENCES tables(id),
    seat INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (table_id, seat)
);
"""
#: columns added since the first files: (table, column, its definition)
MIGRATIONS = (("tables", "seed_chosen", "INTEGER NOT NULL DEFAULT 0"),
              ("tables", "creator", "TEXT NOT NULL DEFAULT ''"),
              ("tables", "stand_in", "TEXT NOT NULL DEFAULT 'strategic'"),
              ("tables", "finished_at", "REAL NOT NULL DEFAULT 0"),
              ("tables", "offered", "INTEGER NOT NULL DEFAULT 0"),
              ("actions", "stand_in", "INTEGER NOT NULL DEFAULT 0"))
#: seconds a statement waits for a lock held by another connection before it fails
BUSY_TIMEOUT = 0.25
COLUMNS = "id, created, rules, seats, seed, pace_ms, token_digests, finished, seed_chosen, creator, stand_in, offered"


@dataclass
class TableRow:
    """One stored table (``token_digests``: per seat, ``None`` for an agent seat)."""

    id: str
    created: float
    rules: str
    seats: List[str]
    seed: int
    pace_ms: int
    token_digests: List[Optional[str]]
    finished: bool
    seed_chosen: bool = False
    creator: str = ""
    stand_in: str = "strategic"
    offered: bool = False


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/handfoot/tables.sqlite`` (``~/.local/share/handfoot/tables.sqlite``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "handfoot" / "tables.sqlite"


class Store:
    """The tables of one server in one SQLite file (one connection, one call at a time from any thread)."""

    def __init__(self, path, durable: bool = False):
        self.path = str(path)
        self.lock = threading.Lock()
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                      timeout=BUSY_TIMEOUT)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self.db.executescript(SCHEMA)
            for table, column, kind in MIGRATIONS:      # a file written before the column was added
                if column not in {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.DatabaseError as e:
            raise ValueError(f"{self.path}: not a handfoot table database ({e})") from None

    def close(self) -> None:
        with self._turn():
            self.db.close()

    def _turn(self):
        """This thread's turn at the connection (``sqlite3.OperationalError`` after :data:`BUSY_TIMEOUT`)."""
        return _Turn(self.lock)

    def _read(self, sql: str, args: tuple = ()) -> list:
        with self._turn():
            return self.db.execute(sql, args).fetchall()

    def add_table(self, row: TableRow) -> None:
        with self._transaction():
            self.db.execute(
                f"INSERT INTO tables ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.created, row.rules, json.dumps(row.seats), row.seed, row.pace_ms,
                 json.dumps(row.token_digests), int(row.finished), int(row.seed_chosen), row.creator, row.stand_in,
                 int(row.offered)))

    def add_action(self, table_id: str, seq: int, player: int, action: str, stand_in: bool = False) -> None:
        """Append action number ``seq`` (0-based) of a table, in one transaction (``stand_in``: a stand-in
        agent made it for the person at ``player``)."""
        with self._transaction():
            self.db.execute("INSERT INTO actions (table_id, seq, player, action, at, stand_in) "
                            "VALUES (?, ?, ?, ?, ?, ?)", (table_id, seq, player, action, time.time(), int(stand_in)))

    def mark_finished(self, table_id: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE tables SET finished = 1, finished_at = ? WHERE id = ?", (time.time(), table_id))

    def add_seen(self, table_id: str, round: int, seat: int) -> None:
        """The person at ``seat`` has seen the score sheet of ``round``."""
        with self._transaction():
            self.db.execute("INSERT OR IGNORE INTO seen (table_id, round, seat) VALUES (?, ?, ?)",
                            (table_id, round, seat))

    def seen(self, table_id: str, round: int) -> Set[int]:
        return {r[0] for r in self._read("SELECT seat FROM seen WHERE table_id = ? AND round = ?", (table_id, round))}

    def add_left(self, table_id: str, seat: int) -> None:
        """The person at ``seat`` left the table (the table's stand-in plays the seat from now on)."""
        with self._transaction():
            self.db.execute("INSERT OR IGNORE INTO left_seats (table_id, seat, at) VALUES (?, ?, ?)",
                            (table_id, seat, time.time()))

    def left(self, table_id: str) -> Set[int]:
        return {r[0] for r in self._read("SELECT seat FROM left_seats WHERE table_id = ?", (table_id,))}

    def stand_in_seqs(self, table_id: str) -> Set[int]:
        """The action numbers a stand-in made for a person."""
        return {r[0] for r in self._read("SELECT seq FROM actions WHERE table_id = ? AND stand_in = 1", (table_id,))}

    def tables(self, damaged: Optional[List[Tuple[str, str]]] = None) -> List[TableRow]:
        """Every stored table, oldest first.  A row that cannot be read raises ``ValueError``, or with
        ``damaged`` (a list) is skipped and listed there as ``(id, reason)``."""
        out = []
        for r in self._read(f"SELECT {COLUMNS} FROM tables ORDER BY created"):
            try:
                row = TableRow(str(r[0]), float(r[1]), str(r[2]), json.loads(r[3]), int(r[4]), int(r[5]),
                               json.loads(r[6]), bool(r[7]), bool(r[8]), str(r[9]), str(r[10]), bool(r[11]))
                if not isinstance(row.seats, list) or not isinstance(row.token_digests, list):
                    raise ValueError("seats and token digests must be lists")
            except (TypeError, ValueError) as e:
                if damaged is None:
                    raise ValueError(f"table {r[0]}: unreadable row ({e})") from None
                damaged.append((str(r[0]), f"unreadable row ({e})"))
                continue
            out.append(row)
        return out

    def last_activity(self) -> Dict[str, float]:
        """Per table not finished, when a person last acted there (an action, or leaving; at a table of agents
        only, any seat), or its creation."""
        out: Dict[str, float] = {}
        people: Dict[str, Set[int]] = {}
        for tid, created, seats in self._read("SELECT id, created, seats FROM tables WHERE finished = 0"):
            out[tid] = float(created)
            try:
                people[tid] = {p for p, s in enumerate(json.loads(seats)) if s == "human"}
            except (TypeError, ValueError):
                people[tid] = set()
        rows = self._read("SELECT table_id, player, MAX(at) FROM actions WHERE stand_in = 0 AND table_id IN "
                          "(SELECT id FROM tables WHERE finished = 0) GROUP BY table_id, player")
        rows += self._read("SELECT table_id, seat, MAX(at) FROM left_seats GROUP BY table_id, seat")
        for tid, player, at in rows:
            if tid in out and (player in people[tid] or not people[tid]):
                out[tid] = max(out[tid], float(at))
        return out

    def actions(self, table_id: str) -> List[Tuple[int, str]]:
        """``(player, action name)`` of every applied action of a table, in order."""
        rows = self._read("SELECT seq, player, action FROM actions WHERE table_id = ? ORDER BY seq", (table_id,))
        for i, (seq, _, _) in enumerate(rows):
            if seq != i:
                raise ValueError(f"table {table_id}: action {i} is missing")
        return [(p, a) for _, p, a in rows]

    def prune_finished(self, keep: int) -> List[str]:
        """Delete the finished tables beyond the newest ``keep`` (by the time they finished) with their
        actions; returns their ids, oldest first."""
        with self._transaction():
            ids = [r[0] for r in self.db.execute(
                "SELECT id FROM tables WHERE finished = 1 ORDER BY finished_at DESC, created DESC LIMIT -1 OFFSET ?",
                (max(0, int(keep)),)).fetchall()][::-1]
            for sql in ("DELETE FROM actions WHERE table_id = ?", "DELETE FROM seen WHERE table_id = ?",
                        "DELETE FROM left_seats WHERE table_id = ?", "DELETE FROM tables WHERE id = ?"):
                self.db.executemany(sql, [(i,) for i in ids])
        return ids

    def _transaction(self):
        return _Transaction(self.db, self.lock)


class _Turn:
    def __init__(self, lock: threading.Lock):
        self.lock = lock

    def __enter__(self):
        if not self.lock.acquire(timeout=BUSY_TIMEOUT):
            raise sqlite3.OperationalError("database is busy (too many requests wait for it)")
        return self

    def __exit__(self, kind, value, tb):
        self.lock.release()
        return False


class _Transaction:
    def __init__(self, db: sqlite3.Connection, lock: threading.Lock):
        self.db = db
        self.turn = _Turn(lock)

    def __enter__(self):
        self.turn.__enter__()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.turn.__exit__(None, None, None)
            raise
        return self.db

    def __exit__(self, kind, value, tb):
        try:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                except sqlite3.Error:
                    self.db.execute("ROLLBACK")
                    raise
            else:
                self.db.execute("ROLLBACK")
        finally:
            self.turn.__exit__(None, None, None)
        return False


__all__ = ["Store", "TableRow", "default_db_path", "BUSY_TIMEOUT"]
