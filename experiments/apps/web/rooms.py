"""Tables in play: one :class:`Room` per table (its game, agents and seat tokens), :class:`Tables` for all.

Nothing here knows about HTTP: the server (:mod:`experiments.apps.web.server`)
turns a :class:`TableError` into a status and ``{"error": ...}``.  Every change
goes through :meth:`Room.apply`: the action is checked against the game, written
to the store in its own transaction, then applied; a failure at any step leaves
the table as it was.  A table's state is rebuilt from its deal and its action
log when the server starts again.

Seat tokens come from :mod:`secrets`; only their SHA-256 digests are kept and a
presented token is compared with every seat's digest in constant time.

Deals come from secret seeds drawn from the whole seed range, ``0 .. 2**63 - 1``
(:func:`draw_seed`).  A seed chosen by the creator is shown to everyone at the
table, and a table with more than one person refuses one unless the server's
operator allows it: whoever chose it knows every hand.

When a round ends, the table waits until every person at it has seen the
round's score sheet (:data:`~experiments.apps.web.messages.NEXT_ROUND`); agents
wait too.  A finished table leaves memory (:meth:`Tables.get` rebuilds it from
its log when someone asks for it), and a table nobody has played at for
``abandon_after`` seconds stops counting against the limit of tables in play.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from agents.base import agent_action
from agents.registry import BUILTIN, SHIPPED, make_agent
from experiments.apps.web.messages import NEXT_ROUND, seat_message
from experiments.apps.web.public import action_text, discard_reason, round_summary
from experiments.apps.web.store import Store, TableRow
from handfoot_env.actions import ACTION_INDEX, ACTION_NAMES
from handfoot_env.config import PRESETS, load_rules
from handfoot_env.engine import Game
from handfoot_env.record import board_after, dumps_record, make_record
from handfoot_env.view import seat_view

HUMAN = "human"
#: agent specs any client may seat; ``handfoot serve --agent SPEC`` adds more (policy:PATH, py:...)
DEFAULT_AGENTS: Tuple[str, ...] = tuple(BUILTIN) + tuple(SHIPPED)
DEFAULT_PACE_MS = 700
MAX_PACE_MS = 10_000
CREATE_FIELDS = ("rules", "seats", "seed", "pace_ms")
#: deal seeds are drawn from ``0 .. SEED_RANGE - 1``; each round's deal comes from a 62-bit round seed
SEED_RANGE = 2 ** 63
#: a table nobody has played at for this many seconds no longer counts as in play (default)
ABANDON_AFTER = 6 * 3600.0
#: finished tables kept rebuilt in memory at once (the others are rebuilt from their log when asked for)
FINISHED_CACHE = 8


class TableError(ValueError):
    """A request the table refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def new_token() -> str:
    return secrets.token_urlsafe(24)


def draw_seed() -> int:
    """A secret deal seed from the whole range ``0 .. 2**63 - 1``."""
    return secrets.randbelow(SEED_RANGE)


def log(message: str) -> None:
    """One line on the server's standard error."""
    print(f"handfoot serve: {message}", file=sys.stderr, flush=True)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Room:
    """One table: its game, its agents, the digests of its seat tokens and who listens to it."""

    def __init__(self, row: TableRow, store: Store, records: Optional[Path] = None, agents: bool = True,
                 clock: Callable[[], float] = time.time):
        self.row = row
        self.clock = clock
        self.records = records
        self.id = row.id
        self.store = store
        self.game = Game(row.rules)
        self.game.reset(seed=row.seed)
        self.labels = list(row.seats)
        self.agents: Dict[int, object] = {}
        for p, spec in enumerate(row.seats):
            if spec != HUMAN and agents:
                agent = make_agent(spec, row.seed * 100 + p)
                agent.reset(p, self.game.rules, row.seed * 100 + p)
                self.agents[p] = agent
        #: called with the room after every change (the server wakes its websockets and agent runner)
        self.listeners: List[Callable[["Room"], None]] = []
        self._cache: Dict[Optional[int], dict] = {}
        #: per applied action of this round, what it did in words (public)
        self.texts: List[str] = []
        #: the sheet and board of the last finished round (``None`` before the first round ends)
        self.round_end: Optional[dict] = None
        #: the persons who have not yet seen ``round_end``; nobody plays on until it is empty
        self.waiting: Set[int] = set()
        #: why the agents cannot move now (a failing database), shown to everyone until it is mended
        self.trouble: Optional[str] = None
        #: when someone last played or opened a seat here (``clock()``)
        self.touched = clock()
        #: open websockets of this table
        self.sockets = 0

    # ------------------------------------------------------------------ state
    def touch(self) -> None:
        """Someone plays or looks at a seat here: the table is not abandoned."""
        self.touched = self.clock()

    @property
    def seq(self) -> int:
        return len(self.game.history)

    @property
    def over(self) -> bool:
        return bool(self.game.game_over)

    def human_seats(self) -> List[int]:
        return [p for p, s in enumerate(self.labels) if s == HUMAN]

    def agent_to_act(self) -> bool:
        return not self.over and not self.waiting and self.game.current in self.agents

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

    def facts(self, seat: Optional[int]) -> dict:
        """The table's own facts for ``seat``'s message (messages.FACTS)."""
        out = {"texts": self.texts, "round_end": self.round_end, "waiting": sorted(self.waiting),
               "seed": str(self.row.seed) if self.row.seed_chosen else None, "trouble": self.trouble}
        if seat is not None and not self.waiting:
            out["discard_reason"] = discard_reason(self.game, seat)
        return out

    def message(self, seat: Optional[int]) -> dict:
        """The state ``seat`` is sent (``None``: the spectator's), built from its SeatView only."""
        msg = self._cache.get(seat)
        if msg is None:
            view = seat_view(self.game, 0 if seat is None else seat)
            msg = seat_message(view, self.id, self.row.rules, self.labels, self.seq, spectator=seat is None,
                               facts=self.facts(seat))
            self._cache[seat] = msg
        return msg

    def record(self) -> dict:
        """The game record (the replay format of docs/interface.md)."""
        return make_record(self.game, players=self.labels,
                           meta={"command": "serve", "table": self.id, "human_seats": self.human_seats(),
                                 "finished": self.over, "seed_chosen": self.row.seed_chosen})

    def save_record(self) -> Path:
        """Write the finished game's record to ``RECORDS/ID.json`` (``handfoot serve --records``)."""
        path = self.records / f"{self.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(dumps_record(self.record()))
        tmp.replace(path)
        return path

    # ------------------------------------------------------------------ changes
    def _advance(self, a: int) -> None:
        """Apply legal action ``a``, keeping its words and, at a round's end, the round's sheet and board."""
        g = self.game
        text = action_text(g, a)
        before = g.clone()
        rounds = len(g.round_details)
        g.apply_legal(a)
        if g.round_actions == 0 or len(g.round_details) > rounds:
            self.texts = []
        else:
            self.texts.append(text)
        if len(g.round_details) > rounds:
            self.round_end = round_summary(board_after(before, a), g, self.labels)
            self.round_end["last"] = {"player": int(before.current), "action": ACTION_NAMES[a], "text": text}
            self.waiting = set() if g.game_over else set(self.human_seats())

    def restore(self, actions: Iterable[Tuple[int, str]]) -> None:
        """Apply the stored action log (a log that does not replay is an error naming the action)."""
        for i, (player, name) in enumerate(actions):
            a = ACTION_INDEX.get(name)
            if self.over or player != self.game.current or a is None or self.game.reason_illegal(a):
                raise ValueError(f"table {self.id}: stored action {i + 1} ({name!r} by player_{player}) "
                                 "does not replay")
            self._advance(a)
        if self.waiting:
            self.waiting -= self.store.seen(self.id, self.round_end["round"])

    def act(self, seat: int, name: object, seq: object = None) -> None:
        """The person at ``seat`` plays the action called ``name`` (``seq``: the state it was chosen in)."""
        if not isinstance(name, str) or (name not in ACTION_INDEX and name != NEXT_ROUND):
            shown = repr(name)[:60]
            raise TableError(f"unknown action {shown}; legal actions are listed in the state's 'legal'", 400)
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise TableError("'seq' must be an integer (the state's seq)", 400)
        if self.over:
            raise TableError("the game is over", 409)
        if seq is not None and seq != self.seq:
            raise TableError(f"stale action: it was chosen at seq {seq}, the table is at seq {self.seq}", 409)
        self.touch()
        if name == NEXT_ROUND:
            self.seen(seat)
            return
        if self.waiting:
            who = ", ".join(f"player_{p}" for p in sorted(self.waiting))
            raise TableError(f"the table waits until everyone has seen the score sheet of round "
                             f"{self.round_end['round']} (still to see it: {who})", 409)
        g = self.game
        if g.current != seat:
            raise TableError(f"not your turn: player_{g.current} is to act", 409)
        a = ACTION_INDEX[name]
        reason = g.reason_illegal(a)
        if reason is not None:
            raise TableError(f"{name} is not legal now: {reason}", 409)
        self.apply(a)

    def seen(self, seat: int) -> None:
        """The person at ``seat`` has seen the last round's sheet (the next deal starts once all have)."""
        if seat not in self.waiting:
            raise TableError(f"{NEXT_ROUND} is not legal now: there is no score sheet waiting for you", 409)
        try:
            self.store.add_seen(self.id, self.round_end["round"], seat)
        except sqlite3.Error as e:
            raise TableError(f"the server could not save that ({e}); try again", 503) from None
        self.waiting.discard(seat)
        self._changed()

    def apply(self, a: int) -> None:
        """Write legal action ``a`` of the player to act, then apply it and tell the listeners."""
        g = self.game
        try:
            self.store.add_action(self.id, self.seq, g.current, ACTION_NAMES[a])
        except sqlite3.Error as e:                  # nothing was applied: the table stays as it was
            raise TableError(f"the server could not save the action ({e}); try again", 503) from None
        self._advance(a)
        self.touch()
        if g.game_over:
            self.finish()
        self._changed()

    def finish(self) -> None:
        """The game is over: its record goes to the records folder, the file marks it finished (each
        failure is logged: the action log decides, and both are done again at the next start)."""
        if self.records is not None:
            try:
                self.save_record()
            except OSError as e:
                log(f"table {self.id}: could not write its record ({e})")
        try:
            self.store.mark_finished(self.id)
        except sqlite3.Error as e:
            log(f"table {self.id}: could not mark it finished ({e}); the next start does")

    def _changed(self) -> None:
        self._cache.clear()
        for listener in list(self.listeners):
            listener(self)

    def set_trouble(self, trouble: Optional[str]) -> None:
        if trouble != self.trouble:
            self.trouble = trouble
            self._changed()

    def agent_step(self) -> None:
        """The agent to act plays one action."""
        p = self.game.current
        try:
            a = agent_action(self.agents[p], self.game, p)
        except Exception as e:  # noqa: BLE001 - a broken agent must not stall the table
            log(f"table {self.id}: agent {self.labels[p]!r} failed ({type(e).__name__}: {e}); "
                "it plays the first legal action")
            a = -1
        if self.game.reason_illegal(a) is not None:
            a = self.game.legal_actions()[0]
        self.apply(a)

    def run_agents(self, limit: int = 100_000) -> int:
        """Agents play until a person is to act (or has a sheet to see) or the game is over; returns how
        many actions (a failed write raises :class:`TableError` with status 503)."""
        n = 0
        while n < limit and self.agent_to_act():
            self.agent_step()
            n += 1
        return n


class Tables:
    """Every table of a server, loaded from and written to one :class:`Store`.

    ``rooms`` holds the tables in play; finished tables and tables nobody has
    played at for ``abandon_after`` seconds stay in the file only (their rows in
    ``rows``) and are rebuilt from their log when asked for.  A table whose log
    does not replay is reported on standard error and skipped (``damaged``).
    """

    def __init__(self, store: Store, agents: Sequence[str] = DEFAULT_AGENTS, max_tables: int = 100,
                 records: Optional[Path] = None, allow_chosen_seeds: bool = False,
                 abandon_after: float = ABANDON_AFTER, clock: Callable[[], float] = time.time):
        self.store = store
        self.records = Path(records) if records is not None else None
        self.allowed = tuple(dict.fromkeys(list(DEFAULT_AGENTS) + list(agents)))
        self.max_tables = int(max_tables)
        self.allow_chosen_seeds = bool(allow_chosen_seeds)
        self.abandon_after = float(abandon_after)
        self.clock = clock
        self.rooms: Dict[str, Room] = {}
        self.rows: Dict[str, TableRow] = {}
        self.damaged: Dict[str, str] = {}
        self.finished: "OrderedDict[str, Room]" = OrderedDict()
        self._kinds: Dict[str, List[str]] = {}
        #: called with a room when it is loaded into play (the server starts its agents) and unloaded
        self.on_load: Callable[[Room], None] = lambda room: None
        self.on_unload: Callable[[Room], None] = lambda room: None
        bad: List[Tuple[str, str]] = []
        rows = store.tables(damaged=bad)
        for tid, reason in bad:
            self._damaged(tid, reason)
        active = store.last_activity()
        now = self.clock()
        for row in rows:
            self.rows[row.id] = row
            if row.finished:
                if self.records is not None and not (self.records / f"{row.id}.json").exists():
                    room = self._build(row, agents=False)     # killed between the last action and the file
                    if room is not None:
                        room.save_record()
                continue
            if now - active.get(row.id, row.created) > self.abandon_after:
                continue                                     # abandoned: loaded again if someone comes back
            self._load(row, started=False)

    # ------------------------------------------------------------------ loading
    def _damaged(self, tid: str, reason: str) -> None:
        self.damaged[tid] = reason
        self.rows.pop(tid, None)
        log(f"table {tid} skipped: {reason}")

    def _build(self, row: TableRow, agents: bool) -> Optional[Room]:
        """The room of a stored table rebuilt from its log, or ``None`` (reported) when it does not replay."""
        try:
            room = Room(row, self.store, self.records, agents=agents, clock=self.clock)
            room.restore(self.store.actions(row.id))
        except sqlite3.Error:
            raise
        except Exception as e:  # noqa: BLE001 - one damaged table must not stop the others
            self._damaged(row.id, str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}")
            return None
        return room

    def _load(self, row: TableRow, started: bool = True) -> Optional[Room]:
        room = self._build(row, agents=True)
        if room is None:
            return None
        if room.over:                                        # killed before it was marked finished
            room.finish()
            row.finished = True
            self._remember(room)
            return room
        room.touch()
        room.listeners.append(self._changed)
        self.rooms[row.id] = room
        if started:
            self.on_load(room)
        return room

    def _remember(self, room: Room) -> None:
        self.finished[room.id] = room
        self.finished.move_to_end(room.id)
        while len(self.finished) > FINISHED_CACHE:
            self.finished.popitem(last=False)

    def _changed(self, room: Room) -> None:
        if room.over and self.rooms.get(room.id) is room:   # finished: out of play, out of memory
            del self.rooms[room.id]
            self.rows[room.id].finished = True
            room.agents.clear()
            self._remember(room)

    # ------------------------------------------------------------------ lookups
    def get(self, table_id: str) -> Room:
        room = self.rooms.get(table_id)
        if room is not None:
            return room
        if table_id in self.damaged:
            raise TableError(f"this table's stored log is damaged and it cannot be played: "
                             f"{self.damaged[table_id]}", 410)
        row = self.rows.get(table_id)
        if row is None:
            raise TableError("no such table", 404)
        if table_id in self.finished:
            self.finished.move_to_end(table_id)
            return self.finished[table_id]
        if row.finished:
            room = self._build(row, agents=False)
            if room is not None:
                self._remember(room)
        else:
            room = self._load(row)                           # an abandoned table someone came back to
        if room is None:
            return self.get(table_id)
        return room

    def exists(self, table_id: str) -> bool:
        return table_id in self.rows or table_id in self.damaged

    def abandoned(self, room: Room) -> bool:
        return not room.sockets and self.clock() - room.touched > self.abandon_after

    def sweep(self) -> int:
        """Unload the tables in play that are abandoned; returns how many."""
        gone = [room for room in self.rooms.values() if self.abandoned(room)]
        for room in gone:
            del self.rooms[room.id]
            room.listeners.remove(self._changed)
            self.on_unload(room)
        return len(gone)

    def in_play(self) -> int:
        self.sweep()
        return sum(1 for r in self.rooms.values() if not r.over)

    # ------------------------------------------------------------------ creating
    def create(self, body: object) -> Tuple[Room, Dict[int, str]]:
        """A new table from a create request; returns it and the token of each human seat."""
        rules, seats, seed, pace, chosen = self.check_create(body)
        if self.in_play() >= self.max_tables:
            raise TableError(f"the server has {self.max_tables} tables in play, its limit; try again later", 503)
        tokens = {p: new_token() for p, s in enumerate(seats) if s == HUMAN}
        row = TableRow(id=secrets.token_urlsafe(9), created=self.clock(), rules=rules, seats=seats, seed=seed,
                       pace_ms=pace, token_digests=[digest(tokens[p]) if p in tokens else None
                                                    for p in range(len(seats))], finished=False,
                       seed_chosen=chosen)
        try:
            room = Room(row, self.store, self.records, clock=self.clock)   # agents made before anything is stored
        except Exception as e:  # noqa: BLE001 - an agent that cannot sit at these rules: the request's fault
            raise TableError(f"these seats cannot play {rules}: {type(e).__name__}: {e}", 400) from None
        try:
            self.store.add_table(row)
        except sqlite3.Error as e:
            raise TableError(f"the server could not save the table ({e}); try again", 503) from None
        room.listeners.append(self._changed)
        self.rows[row.id] = row
        self.rooms[row.id] = room
        return room, tokens

    def seat_kinds(self, rules: str) -> List[str]:
        """The agent specs that can sit at a table of the preset ``rules`` (``human`` first)."""
        kinds = self._kinds.get(rules)
        if kinds is None:
            cfg = load_rules(rules)
            kinds = self._kinds[rules] = [HUMAN] + [spec for spec in self.allowed if _plays(spec, cfg)]
        return list(kinds)

    def check_create(self, body: object) -> Tuple[str, List[str], int, int, bool]:
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
        kinds = self.seat_kinds(rules)
        for p, s in enumerate(seats):
            if not isinstance(s, str) or (s != HUMAN and s not in self.allowed):
                raise TableError(f"seat {p}: {str(s)[:60]!r} is not a seat kind here; choose human or one of "
                                 f"{', '.join(self.allowed)}")
            if s not in kinds:
                raise TableError(f"seat {p}: {s} cannot play {rules}; choose human or one of "
                                 f"{', '.join(kinds[1:])}")
        seed = body.get("seed")
        chosen = seed is not None
        if seed is None:
            seed = draw_seed()
        elif isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 19:
            seed = int(seed)                                 # a string keeps every digit of a large seed in JSON
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_RANGE:
            raise TableError(f"seed must be an integer from 0 to {SEED_RANGE - 1} (or a string of its digits)")
        if chosen and sum(1 for s in seats if s == HUMAN) > 1 and not self.allow_chosen_seeds:
            raise TableError("a chosen seed is refused at a table of more than one person (whoever chose it "
                             "knows every hand); leave it empty, or the server's operator allows it with "
                             "--allow-chosen-seeds", 403)
        pace = body.get("pace_ms", DEFAULT_PACE_MS)
        if isinstance(pace, bool) or not isinstance(pace, int) or not 0 <= pace <= MAX_PACE_MS:
            raise TableError(f"pace_ms must be an integer from 0 to {MAX_PACE_MS}")
        return rules, list(seats), seed, pace, chosen


def _plays(spec: str, rules) -> bool:
    """Whether the agent ``spec`` can sit at a table of ``rules`` (it is made and seated once)."""
    try:
        make_agent(spec, 0).reset(0, rules, 0)
        return True
    except Exception:  # noqa: BLE001 - any refusal means: not offered at these rules
        return False


__all__ = ["Room", "Tables", "TableError", "HUMAN", "DEFAULT_AGENTS", "DEFAULT_PACE_MS", "SEED_RANGE", "draw_seed",
           "digest", "new_token"]
