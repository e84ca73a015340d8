"""Tables in play: one :class:`Room` per table (its game, agents and seat tokens), :class:`Tables` for all.

Nothing here knows about HTTP: the server (:mod:`experiments.apps.web.server`)
turns a :class:`TableError` into a status and ``{"error": ...}``.  Every change
goes through :meth:`Room.apply`: the action is checked against the game, written
to the store in its own transaction, then applied; a failure at any step leaves
the table as it was.  A table's state is rebuilt from its deal and its action
log when the server starts again.

Seat tokens come from :mod:`secrets`; only their SHA-256 digests are kept and a
presented token is compared with every seat's digest in constant time.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from agents.base import agent_action
from agents.registry import BUILTIN, SHIPPED, make_agent
from experiments.apps.web.messages import seat_message
from experiments.apps.web.store import Store, TableRow
from handfoot_env.actions import ACTION_INDEX, ACTION_NAMES
from handfoot_env.config import PRESETS
from handfoot_env.engine import Game
from handfoot_env.record import dumps_record, make_record
from handfoot_env.view import seat_view

HUMAN = "human"
#: agent specs any client may seat; ``handfoot serve --agent SPEC`` adds more (policy:PATH, py:...)
DEFAULT_AGENTS: Tuple[str, ...] = tuple(BUILTIN) + tuple(SHIPPED)
DEFAULT_PACE_MS = 700
MAX_PACE_MS = 10_000
CREATE_FIELDS = ("rules", "seats", "seed", "pace_ms")


class TableError(ValueError):
    """A request the table refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def new_token() -> str:
    return secrets.token_urlsafe(24)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Room:
    """One table: its game, its agents, the digests of its seat tokens and who listens to it."""

    def __init__(self, row: TableRow, store: Store, records: Optional[Path] = None):
        self.row = row
        self.records = records
        self.id = row.id
        self.store = store
        self.game = Game(row.rules)
        self.game.reset(seed=row.seed)
        self.labels = list(row.seats)
        self.agents: Dict[int, object] = {}
        for p, spec in enumerate(row.seats):
            if spec != HUMAN:
                agent = make_agent(spec, row.seed * 100 + p)
                agent.reset(p, self.game.rules, row.seed * 100 + p)
                self.agents[p] = agent
        #: called with the room after every change (the server wakes its websockets and agent runner)
        self.listeners: List[Callable[["Room"], None]] = []
        self._cache: Dict[Optional[int], dict] = {}

    # ------------------------------------------------------------------ state
    @property
    def seq(self) -> int:
        return len(self.game.history)

    @property
    def over(self) -> bool:
        return bool(self.game.game_over)

    def human_seats(self) -> List[int]:
        return [p for p, s in enumerate(self.labels) if s == HUMAN]

    def agent_to_act(self) -> bool:
        return not self.over and self.game.current in self.agents

    def seat_of(self, token: Optional[str]) -> Optional[int]:
        """The seat whose token this is, else ``None`` (every seat's digest is compared)."""
        if not token:
            return None
        d = digest(token)
        found = None
        for p, ref in enumerate(self.row.token_digests):
            if ref is not None and hmac.compare_digest(d, ref):
                found = p
        return found

    def message(self, seat: Optional[int]) -> dict:
        """The state ``seat`` is sent (``None``: the spectator's), built from its SeatView only."""
        msg = self._cache.get(seat)
        if msg is None:
            view = seat_view(self.game, 0 if seat is None else seat)
            msg = seat_message(view, self.id, self.row.rules, self.labels, self.seq, spectator=seat is None)
            self._cache[seat] = msg
        return msg

    def record(self) -> dict:
        """The game record (the replay format of docs/interface.md)."""
        return make_record(self.game, players=self.labels,
                           meta={"command": "serve", "table": self.id, "human_seats": self.human_seats(),
                                 "finished": self.over})

    def save_record(self) -> Path:
        """Write the finished game's record to ``RECORDS/ID.json`` (``handfoot serve --records``)."""
        path = self.records / f"{self.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(dumps_record(self.record()))
        tmp.replace(path)
        return path

    # ------------------------------------------------------------------ changes
    def restore(self, actions: Iterable[Tuple[int, str]]) -> None:
        """Apply the stored action log (a log that does not replay is an error naming the action)."""
        for i, (player, name) in enumerate(actions):
            a = ACTION_INDEX.get(name)
            if self.over or player != self.game.current or a is None or self.game.reason_illegal(a):
                raise ValueError(f"table {self.id}: stored action {i + 1} ({name!r} by player_{player}) "
                                 "does not replay")
            self.game.apply_legal(a)

    def act(self, seat: int, name: object, seq: object = None) -> None:
        """The person at ``seat`` plays the action called ``name`` (``seq``: the state it was chosen in)."""
        if not isinstance(name, str) or name not in ACTION_INDEX:
            shown = repr(name)[:60]
            raise TableError(f"unknown action {shown}; legal actions are listed in the state's 'legal'", 400)
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise TableError("'seq' must be an integer (the state's seq)", 400)
        if self.over:
            raise TableError("the game is over", 409)
        if seq is not None and seq != self.seq:
            raise TableError(f"stale action: it was chosen at seq {seq}, the table is at seq {self.seq}", 409)
        g = self.game
        if g.current != seat:
            raise TableError(f"not your turn: player_{g.current} is to act", 409)
        a = ACTION_INDEX[name]
        reason = g.reason_illegal(a)
        if reason is not None:
            raise TableError(f"{name} is not legal now: {reason}", 409)
        self.apply(a)

    def apply(self, a: int) -> None:
        """Write legal action ``a`` of the player to act, then apply it and tell the listeners."""
        g = self.game
        try:
            self.store.add_action(self.id, self.seq, g.current, ACTION_NAMES[a])
        except sqlite3.Error as e:                  # nothing was applied: the table stays as it was
            raise TableError(f"the server could not save the action ({e}); try again", 503) from None
        g.apply_legal(a)
        if g.game_over:
            self.store.mark_finished(self.id)       # a convenience for readers of the file; the log decides
            if self.records is not None:
                self.save_record()
        self._cache.clear()
        for listener in list(self.listeners):
            listener(self)

    def agent_step(self) -> None:
        """The agent to act plays one action."""
        p = self.game.current
        try:
            a = agent_action(self.agents[p], self.game, p)
        except Exception as e:  # noqa: BLE001 - a broken agent must not stall the table
            print(f"handfoot serve: table {self.id}: agent {self.labels[p]!r} failed ({type(e).__name__}: {e}); "
                  "it plays the first legal action", file=sys.stderr)
            a = -1
        if self.game.reason_illegal(a) is not None:
            a = self.game.legal_actions()[0]
        self.apply(a)

    def run_agents(self, limit: int = 100_000) -> int:
        """Agents play until a person is to act or the game is over; returns how many actions."""
        n = 0
        while n < limit and self.agent_to_act():
            self.agent_step()
            n += 1
        return n


class Tables:
    """Every table of a server, loaded from and written to one :class:`Store`."""

    def __init__(self, store: Store, agents: Sequence[str] = DEFAULT_AGENTS, max_tables: int = 100,
                 records: Optional[Path] = None):
        self.store = store
        self.records = Path(records) if records is not None else None
        self.allowed = tuple(dict.fromkeys(list(DEFAULT_AGENTS) + list(agents)))
        self.max_tables = int(max_tables)
        self.rooms: Dict[str, Room] = {}
        for row in store.tables():
            room = Room(row, store, self.records)
            room.restore(store.actions(row.id))
            if room.over and self.records is not None and not (self.records / f"{room.id}.json").exists():
                room.save_record()                      # killed between the last action and the file
            self.rooms[row.id] = room

    def get(self, table_id: str) -> Room:
        room = self.rooms.get(table_id)
        if room is None:
            raise TableError("no such table", 404)
        return room

    def in_play(self) -> int:
        return sum(1 for r in self.rooms.values() if not r.over)

    def create(self, body: object) -> Tuple[Room, Dict[int, str]]:
        """A new table from a create request; returns it and the token of each human seat."""
        rules, seats, seed, pace = self.check_create(body)
        if self.in_play() >= self.max_tables:
            raise TableError(f"the server has {self.max_tables} tables in play, its limit; try again later", 503)
        tokens = {p: new_token() for p, s in enumerate(seats) if s == HUMAN}
        row = TableRow(id=secrets.token_urlsafe(9), created=time.time(), rules=rules, seats=seats, seed=seed,
                       pace_ms=pace, token_digests=[digest(tokens[p]) if p in tokens else None
                                                    for p in range(len(seats))], finished=False)
        room = Room(row, self.store, self.records)       # agents are made before anything is stored
        self.store.add_table(row)
        self.rooms[row.id] = room
        return room, tokens

    def check_create(self, body: object) -> Tuple[str, List[str], int, int]:
        if not isinstance(body, dict):
            raise TableError("the request body must be a JSON object with rules, seats, seed, pace_ms")
        unknown = sorted(set(body) - set(CREATE_FIELDS))
        if unknown:
            raise TableError(f"unknown field {unknown[0]!r}; expected {', '.join(CREATE_FIELDS)}")
        rules = body.get("rules", "pagat")
        if not isinstance(rules, str) or rules not in PRESETS:
            raise TableError(f"rules must be one of the presets {', '.join(PRESETS)}, got {str(rules)[:40]!r}")
        players = Game(rules).n
        seats = body.get("seats", [HUMAN] + ["strategic"] * (players - 1))
        if not isinstance(seats, list) or len(seats) != players:
            raise TableError(f"seats must be a list of {players} entries for {rules} (human or an agent spec)")
        for p, s in enumerate(seats):
            if not isinstance(s, str) or (s != HUMAN and s not in self.allowed):
                raise TableError(f"seat {p}: {str(s)[:60]!r} is not a seat kind here; choose human or one of "
                                 f"{', '.join(self.allowed)}")
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(2 ** 31)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 31:
            raise TableError("seed must be an integer from 0 to 2147483647")
        pace = body.get("pace_ms", DEFAULT_PACE_MS)
        if isinstance(pace, bool) or not isinstance(pace, int) or not 0 <= pace <= MAX_PACE_MS:
            raise TableError(f"pace_ms must be an integer from 0 to {MAX_PACE_MS}")
        return rules, list(seats), seed, pace


__all__ = ["Room", "Tables", "TableError", "HUMAN", "DEFAULT_AGENTS", "DEFAULT_PACE_MS", "digest", "new_token"]
