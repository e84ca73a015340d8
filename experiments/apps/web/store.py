"""The browser table's SQLite file: every table and every action applied at it.

A table is its deal (rules preset, seed), its seats (``human`` or an agent spec),
its pace and the SHA-256 digests of its seat tokens (a stolen file does not hand
out seats).  Its state is the action log: one row per applied action, each
written in its own transaction before the game moves on, so a server killed at
any moment restarts with every action it acknowledged.  The file runs in WAL
mode with ``synchronous=NORMAL``: a killed process loses nothing committed (a
power cut may lose the last commits; ``--durable`` syncs every commit).
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    rules TEXT NOT NULL,
    seats TEXT NOT NULL,
    seed INTEGER NOT NULL,
    pace_ms INTEGER NOT NULL,
    token_digests TEXT NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS actions (
    table_id TEXT NOT NULL REFERENCES tables(id),
    seq INTEGER NOT NULL,
    player INTEGER NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (table_id, seq)
);
"""


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


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/handfoot/tables.sqlite`` (``~/.local/share/handfoot/tables.sqlite``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "handfoot" / "tables.sqlite"


class Store:
    """The tables of one server in one SQLite file (one connection, used from one thread)."""

    def __init__(self, path, durable: bool = False):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as e:
            raise ValueError(f"{self.path}: not a handfoot table database ({e})") from None

    def close(self) -> None:
        self.db.close()

    def add_table(self, row: TableRow) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT INTO tables (id, created, rules, seats, seed, pace_ms, token_digests, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.created, row.rules, json.dumps(row.seats), row.seed, row.pace_ms,
                 json.dumps(row.token_digests), int(row.finished)))

    def add_action(self, table_id: str, seq: int, player: int, action: str) -> None:
        """Append action number ``seq`` (0-based) of a table, in one transaction."""
        with self._transaction():
            self.db.execute("INSERT INTO actions (table_id, seq, player, action, at) VALUES (?, ?, ?, ?, ?)",
                            (table_id, seq, player, action, time.time()))

    def mark_finished(self, table_id: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE tables SET finished = 1 WHERE id = ?", (table_id,))

    def tables(self) -> List[TableRow]:
        rows = self.db.execute("SELECT id, created, rules, seats, seed, pace_ms, token_digests, finished "
                               "FROM tables ORDER BY created").fetchall()
        return [TableRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5], json.loads(r[6]), bool(r[7])) for r in rows]

    def actions(self, table_id: str) -> List[Tuple[int, str]]:
        """``(player, action name)`` of every applied action of a table, in order."""
        rows = self.db.execute("SELECT seq, player, action FROM actions WHERE table_id = ? ORDER BY seq",
                               (table_id,)).fetchall()
        for i, (seq, _, _) in enumerate(rows):
            if seq != i:
                raise ValueError(f"{self.path}: table {table_id}: action {i} is missing")
        return [(p, a) for _, p, a in rows]

    def _transaction(self):
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, value, tb):
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
        return False


__all__ = ["Store", "TableRow", "default_db_path"]
