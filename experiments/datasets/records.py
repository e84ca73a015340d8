"""Finished games read for a dataset: game records (an ``evaluate --records`` folder, a folder of
records, one record) or the browser table's SQLite database, every one checked before anything is written.

Each game comes back as a :class:`Game`: its record (the replay format of docs/interface.md), who played
each seat (``person`` or an agent spec) and where it came from.  A record that fails ``handfoot replay
--check`` (:func:`handfoot_env.record.replay_record`), an unfinished game, or a file that is neither a
record nor the table's database is a ValueError of one line naming the file (the command exits 2 and
writes nothing).

From the table's database only finished tables offered for datasets are read: a table's ``offered`` is
set when it is created, from the server's ``--no-offer-games`` (docs/playing.md); a table of a database
written before the column existed was played without the start page's notice and is not offered.  The
file is opened read-only.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Tuple

from handfoot_env.actions import ACTION_INDEX
from handfoot_env.config import load_rules
from handfoot_env.record import FORMAT, VERSION, RecordError, load_record, replay_record

#: who a seat was, for a person (the table's ``human``, a record's ``human`` label)
PERSON = "person"
#: a record's or table's label of a person's seat
HUMAN_LABELS = ("human", "person")
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: the columns :func:`table_games` needs in the table's database
_NEEDED = {"tables": {"id", "rules", "seats", "seed", "finished"}, "actions": {"table_id", "seq", "player", "action"}}


@dataclass
class Game:
    """One finished game: its checked record, who played each seat, and its source."""

    record: Dict[str, Any]
    seats: List[str]
    source: str
    stand_in: Dict[int, int] = field(default_factory=dict)
    """Per person's seat, the actions a stand-in agent made for them (the table's ``stand_in``)."""


def seat_labels(record: Dict[str, Any], n: int) -> List[str]:
    """Who played each seat of a record: ``person`` for a person's seat, else the record's label (an agent
    spec; ``unknown`` where the record has none)."""
    players = record.get("players") or ["unknown"] * n
    humans = set((record.get("meta") or {}).get("human_seats") or [])
    return [PERSON if (p in humans or str(lab).lower() in HUMAN_LABELS) else str(lab) for p, lab in enumerate(players)]


def checked(record: Dict[str, Any], where: str) -> Any:
    """Replay ``record`` as ``handfoot replay --check`` does; the finished game (ValueError if it fails or
    the game is not over)."""
    try:
        game = replay_record(record)
    except RecordError as e:
        raise ValueError(f"{where}: fails handfoot replay --check: {e}") from None
    if not game.game_over:
        raise ValueError(f"{where}: the game is not finished ({len(record['actions'])} actions, round {game.round})")
    return game


def record_games(path: Path) -> List[Game]:
    """The games of a record file, a folder of records or an ``evaluate --records`` run folder (its
    ``records/``), in file-name order; every one replayed and finished."""
    if path.is_dir():
        folder = path / "records" if (path / "records").is_dir() else path
        files = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
        if not files:
            raise ValueError(f"{path}: no game records (*.json) in it")
    else:
        files = [path]
    games = []
    for f in files:
        rec = load_record(f)                  # RecordError (a ValueError) names the file
        checked(rec, str(f))
        n = len(rec["players"]) if rec.get("players") else load_rules(rec["rules"]).players
        games.append(Game(rec, seat_labels(rec, n), str(f)))
    return games


def is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def table_games(path: Path) -> Tuple[List[Game], Dict[str, int]]:
    """The finished, offered games of the browser table's database, oldest first, and counts of the
    tables left out (``in_play``, ``not_offered``)."""
    try:
        db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise ValueError(f"{path}: cannot be opened ({e})") from None
    try:
        try:
            cols = {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in _NEEDED}
        except sqlite3.DatabaseError as e:
            raise ValueError(f"{path}: not the browser table's database ({e})") from None
        missing = [f"{t}.{c}" for t, need in _NEEDED.items() for c in sorted(need - cols[t])]
        if missing:
            raise ValueError(f"{path}: an SQLite file, but not the browser table's database (no {missing[0]})")
        offered = "offered" if "offered" in cols["tables"] else "0"
        rows = db.execute(f"SELECT id, rules, seats, seed, finished, {offered} FROM tables ORDER BY created").fetchall()
        counts = {"in_play": 0, "not_offered": 0}
        games = []
        for tid, rules, seats, seed, finished, ok in rows:
            if not finished:
                counts["in_play"] += 1
                continue
            if not ok:
                counts["not_offered"] += 1
                continue
            acts = db.execute("SELECT seq, player, action, stand_in FROM actions WHERE table_id = ? ORDER BY seq"
                              if "stand_in" in cols["actions"] else
                              "SELECT seq, player, action, 0 FROM actions WHERE table_id = ? ORDER BY seq",
                              (tid,)).fetchall()
            games.append(_table_game(path, tid, rules, seats, seed, acts))
        return games, counts
    except sqlite3.DatabaseError as e:
        raise ValueError(f"{path}: cannot be read as the browser table's database ({e})") from None
    finally:
        db.close()


def _table_game(path: Path, tid: str, rules: str, seats: str, seed: int, acts: List[Tuple]) -> Game:
    where = f"{path}: table {tid}"
    try:
        cfg = load_rules(rules)
        labels = json.loads(seats)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: unreadable table row ({e})") from None
    if not isinstance(labels, list) or len(labels) != cfg.players:
        raise ValueError(f"{where}: its seats are not a list of {cfg.players} labels")
    for i, (seq, player, action, _) in enumerate(acts):
        if seq != i or not isinstance(player, int) or action not in ACTION_INDEX:
            raise ValueError(f"{where}: action {i + 1} is missing or unreadable")
    rec = {"format": FORMAT, "version": VERSION, "rules": cfg.to_dict(), "seed": int(seed),
           "options": {"shoe": None, "round": 1, "scores": [0] * cfg.teams}, "players": [str(s) for s in labels],
           "actions": [[int(p), str(a)] for _, p, a, _ in acts], "round_scores": [], "scores": [0] * cfg.teams,
           "winner": None, "game_over": True, "meta": {"command": "serve", "table": tid}}
    try:
        game = replay_record(rec, verify=False)         # the database keeps the actions, not the scores
    except RecordError as e:
        raise ValueError(f"{where}: fails handfoot replay --check: {e}") from None
    rec.update(round_scores=[list(r) for r in game.round_scores], scores=list(game.scores), winner=game.winner,
               game_over=bool(game.game_over))
    checked(rec, where)
    stand_in: Dict[int, int] = {}
    for _, p, _, by in acts:
        if by:
            stand_in[int(p)] = stand_in.get(int(p), 0) + 1
    return Game(rec, seat_labels(rec, cfg.players), where, stand_in)


def read_games(path: Path) -> Tuple[List[Game], Dict[str, int]]:
    """The games at ``path`` (records, or the table's database) and the counts of tables left out."""
    if not path.exists():
        raise ValueError(f"{path}: does not exist")
    if path.is_file() and is_sqlite(path):
        return table_games(path)
    if path.is_file() and path.suffix != ".json":
        raise ValueError(f"{path}: neither a game record (.json), a folder of records nor the browser table's "
                         f"database")
    return record_games(path), {}


__all__ = ["Game", "PERSON", "read_games", "record_games", "table_games", "seat_labels", "checked", "is_sqlite"]
