"""The browser table's SQLite file: every table and every action applied at it.

A table is its deal (rules preset, seed), its seats (``human`` or an agent spec),
its pace and the SHA-256 digests of its seat tokens (a stolen file does not hand
out seats).  Its state is the action log: one row per applied action, each
written in its own transaction before the game moves on, so a server killed at
any moment restarts with every action it acknowledged.  The file runs in WAL
mode with ``synchronous=NORMAL``: a killed process loses nothing committed (a
power cut may lose the last commits; ``--durable`` syncs every commit).

A locked or failing file raises :class:`sqlite3.Error` after at most
:data:`BUSY_TIMEOUT` seconds (the server answers 503 and retries the agents'
moves); it never stalls a request for long.  ``seen`` remembers which persons
have seen a round's score sheet (the table waits for them between rounds).
"""
from __future__ import annotations

import json
import os
import sqlite3
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
    seed_chosen INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS actions (
    table_id TEXT NOT NULL REFERENCES tables(id),
    seq INTEGER NOT NULL,
    player INTEGER NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE IF NOT EXISTS seen (
    table_id TEXT NOT NULL REFERENCES tables(id),
    round INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    PRIMARY KEY (table_id, round, seat)
);
"""
#: seconds a statement waits for a lock held by another connection before it fails
BUSY_TIMEOUT = 0.25
COLUMNS = "id, created, rules, seats, seed, pace_ms, token_digests, finished, seed_chosen"


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
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                      timeout=BUSY_TIMEOUT)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self.db.executescript(SCHEMA)
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(tables)")}
            if "seed_chosen" not in columns:            # a file written before seeds were marked chosen
                self.db.execute("ALTER TABLE tables ADD COLUMN seed_chosen INTEGER NOT NULL DEFAULT 0")
        except sqlite3.DatabaseError as e:
            raise ValueError(f"{self.path}: not a handfoot table database ({e})") from None

    def close(self) -> None:
        self.db.close()

    def add_table(self, row: TableRow) -> None:
        with self._transaction():
            self.db.execute(
                f"INSERT INTO tables ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.created, row.rules, json.dumps(row.seats), row.seed, row.pace_ms,
                 json.dumps(row.token_digests), int(row.finished), int(row.seed_chosen)))

    def add_action(self, table_id: str, seq: int, player: int, action: str) -> None:
        """Append action number ``seq`` (0-based) of a table, in one transaction."""
        with self._transaction():
            self.db.execute("INSERT INTO actions (table_id, seq, player, action, at) VALUES (?, ?, ?, ?, ?)",
                            (table_id, seq, player, action, time.time()))

    def mark_finished(self, table_id: str) -> None:
        with self._transaction():
            self.db.execute("UPDATE tables SET finished = 1 WHERE id = ?", (table_id,))

    def add_seen(self, table_id: str, round: int, seat: int) -> None:
        """The person at ``seat`` has seen the score sheet of ``round``."""
        with self._transaction():
            self.db.execute("INSERT OR IGNORE INTO seen (table_id, round, seat) VALUES (?, ?, ?)",
                            (table_id, round, seat))

    def seen(self, table_id: str, round: int) -> Set[int]:
        rows = self.db.execute("SELECT seat FROM seen WHERE table_id = ? AND round = ?", (table_id, round))
        return {r[0] for r in rows.fetchall()}

    def tables(self, damaged: Optional[List[Tuple[str, str]]] = None) -> List[TableRow]:
        """Every stored table, oldest first.  A row that cannot be read raises ``ValueError``, or with
        ``damaged`` (a list) is skipped and listed there as ``(id, reason)``."""
        out = []
        for r in self.db.execute(f"SELECT {COLUMNS} FROM tables ORDER BY created").fetchall():
            try:
                row = TableRow(str(r[0]), float(r[1]), str(r[2]), json.loads(r[3]), int(r[4]), int(r[5]),
                               json.loads(r[6]), bool(r[7]), bool(r[8]))
                if not isinstance(row.seats, list) or not isinstance(row.token_digests, list):
                    raise ValueError("seats and token digests must be lists")
            except (TypeError, ValueError) as e:
                if damaged is None:
                    raise ValueError(f"{self.path}: table {r[0]}: unreadable row ({e})") from None
                damaged.append((str(r[0]), f"unreadable row ({e})"))
                continue
            out.append(row)
        return out

    def last_activity(self) -> Dict[str, float]:
        """Per table, the time of its last action (its creation when it has none)."""
        rows = self.db.execute("SELECT id, MAX(created, COALESCE((SELECT MAX(at) FROM actions "
                               "WHERE table_id = tables.id), 0)) FROM tables").fetchall()
        return {r[0]: float(r[1]) for r in rows}

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


__all__ = ["Store", "TableRow", "default_db_path", "BUSY_TIMEOUT"]
