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
wait too.  Nobody can hold a table up: a person who has not acted (or confirmed
the sheet) ``turn_timeout`` seconds after it became their turn is *away*: the
table's stand-in agent (chosen at creation, ``strategic`` by default) plays the
rest of that turn (or confirms the sheet) and their seat from then on, without
waiting, until they say they are back (:meth:`Room.back`, or they act); a person
may also leave the table for good.  A stalled person thus costs the others one
turn timeout, not one per turn.  The table says so to everyone (``notice``,
``away``, ``left``, and each stand-in move's words in the log) and the record
lists the stand-in's actions.

A finished table leaves memory (:meth:`Tables.get` rebuilds it from its log when
someone asks for it, and only the newest ``keep_finished`` stay in the file), and
a table where no person (no agent at a table of agents only) has acted for
``abandon_after`` seconds stops counting against the limit of tables in play,
whatever is open on it.  Each client holds at most ``per_client`` tables in play.

Every table is used from the server's worker threads: a room's changes and
messages happen under its ``lock``, the list of tables under the :class:`Tables`
lock (a room's lock is never waited for while the list's is held).  A room taken
out of play is ``retired``: an action still in flight for it is refused (409),
never written behind the back of the room that replaced it.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from agents.base import agent_action
from agents.registry import BUILTIN, SHIPPED, make_agent
from experiments.apps.web.messages import NEXT_ROUND, seat_message
from experiments.apps.web.public import action_text, discard_reason, round_summary
from experiments.apps.web.store import Store, TableRow
from handfoot_env.actions import ACTION_INDEX, ACTION_NAMES
from handfoot_env.engine import Game
from handfoot_env.record import board_after, dumps_record, make_record
from handfoot_env.view import seat_view

HUMAN = "human"
#: agent specs any client may seat; ``handfoot serve --agent SPEC`` adds more (policy:PATH, py:...)
DEFAULT_AGENTS: Tuple[str, ...] = tuple(BUILTIN) + tuple(SHIPPED)
DEFAULT_PACE_MS = 700
MAX_PACE_MS = 10_000
CREATE_FIELDS = ("rules", "seats", "seed", "pace_ms", "stand_in")
#: deal seeds are drawn from ``0 .. SEED_RANGE - 1``; each round's deal comes from a 62-bit round seed
SEED_RANGE = 2 ** 63
#: a table nobody has played at for this many seconds no longer counts as in play (default)
ABANDON_AFTER = 6 * 3600.0
#: finished tables kept rebuilt in memory at once (the others are rebuilt from their log when asked for)
FINISHED_CACHE = 8
#: seconds a person has for each move (or to confirm a round's sheet) before the stand-in makes it (default)
TURN_TIMEOUT = 120.0
#: the agent that plays for a person who is too slow or has left (default; a table may choose another)
STAND_IN = "strategic"
#: tables in play one client may hold at once (default)
PER_CLIENT = 10
#: finished tables kept in the file (default); the oldest go first
KEEP_FINISHED = 2000
#: extra keys of a seat's message (besides messages.seat_message's): the table's public facts about stand-ins
ROOM_FACTS = ("stand_in", "left", "away", "notice", "turn_timeout", "act_by")
STALE = "this table was reloaded meanwhile; fetch its state and try again"


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
                 clock: Callable[[], float] = time.time, turn_timeout: float = TURN_TIMEOUT):
        self.row = row
        self.lock = threading.RLock()
        #: in play: actions may be written (a finished, resting or retired room is read only)
        self.live = False
        #: taken out of play and replaced (or pruned): its websockets are closed, the page reconnects
        self.retired = False
        self.turn_timeout = float(turn_timeout)
        self.stand_ins: Dict[int, object] = {}
        #: seats whose person left (the stand-in plays them); the seat the stand-in covers this turn
        self.left: Set[int] = set()
        self.covering: Optional[int] = None
        #: seats whose person let their time run out and has not said they are back (not kept in the file:
        #: after a restart they have their time again)
        self.away: Set[int] = set()
        #: the last stand-in event in words (shown to everyone), and the action numbers stand-ins made
        self.notice: Optional[str] = None
        self.stand_in_moves: Set[int] = set()
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
        #: when a person last acted here (any seat at a table of agents only), when the table last changed
        #: (a person's time to act runs from it) and when the last round ended (the sheet's time runs from it)
        self.active_at = self.changed_at = self.sheet_at = clock()
        self.people = HUMAN in row.seats
        #: open websockets of this table
        self.sockets = 0

    # ------------------------------------------------------------------ state
    def touch(self) -> None:
        """A person acted here: the table is not abandoned."""
        self.active_at = self.clock()

    @property
    def seq(self) -> int:
        return len(self.game.history)

    @property
    def over(self) -> bool:
        return bool(self.game.game_over)

    def human_seats(self) -> List[int]:
        return [p for p, s in enumerate(self.labels) if s == HUMAN]

    def agent_to_act(self) -> bool:
        """Whether an agent (or the stand-in, for a person who left or is too slow this turn) is to act."""
        if self.over or self.waiting:
            return False
        p = self.game.current
        return (p in self.agents or p in self.left or p in self.away
                or (p == self.covering and self.game.turn_player == p))

    def deadline(self) -> Optional[float]:
        """When (``clock()``) the stand-in acts for the person the table waits for; ``None``: nobody."""
        if self.over or self.turn_timeout <= 0 or not self.live:
            return None
        if self.waiting:                         # a person away confirms at once, through the stand-in
            return self.sheet_at if self.waiting & self.away else self.sheet_at + self.turn_timeout
        p = self.game.current
        if self.labels[p] == HUMAN and not self.agent_to_act():
            return self.changed_at + self.turn_timeout
        return None

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
        """The state ``seat`` is sent (``None``: the spectator's), built from its SeatView only, and the
        table's public facts about stand-ins (:data:`ROOM_FACTS`)."""
        msg = self._cache.get(seat)
        if msg is None:
            with self.lock:
                view = seat_view(self.game, 0 if seat is None else seat)
                msg = seat_message(view, self.id, self.row.rules, self.labels, self.seq, spectator=seat is None,
                                   facts=self.facts(seat))
                deadline = self.deadline()
                msg.update(stand_in=self.row.stand_in, left=sorted(self.left), away=sorted(self.away),
                           notice=self.notice,
                           turn_timeout=self.turn_timeout or None,
                           act_by=None if deadline is None else round(deadline, 3))
                self._cache[seat] = msg
        return msg

    def record(self) -> dict:
        """The game record (the replay format of docs/interface.md; ``meta.stand_in_actions``: the action
        numbers a stand-in made for a person)."""
        with self.lock:
            return make_record(self.game, players=self.labels,
                               meta={"command": "serve", "table": self.id, "human_seats": self.human_seats(),
                                     "finished": self.over, "seed_chosen": self.row.seed_chosen,
                                     "stand_in": self.row.stand_in, "left": sorted(self.left),
                                     "stand_in_actions": sorted(self.stand_in_moves)})

    def save_record(self) -> Path:
        """Write the finished game's record to ``RECORDS/ID.json`` (``handfoot serve --records``)."""
        path = self.records / f"{self.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(dumps_record(self.record()))
        tmp.replace(path)
        return path

    # ------------------------------------------------------------------ changes
    def _advance(self, a: int, stand_in: bool = False) -> None:
        """Apply legal action ``a``, keeping its words and, at a round's end, the round's sheet and board."""
        g = self.game
        text = action_text(g, a) + (" (stand-in)" if stand_in else "")
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
            self.waiting = set() if g.game_over else set(self.human_seats()) - self.left
            self.sheet_at = self.clock()
        if self.covering is not None and g.turn_player != self.covering:
            self.covering = None                     # the covered turn is over: the person has the next one

    def restore(self, actions: Iterable[Tuple[int, str]], stand_in: Set[int] = frozenset()) -> None:
        """Apply the stored action log (a log that does not replay is an error naming the action);
        ``stand_in``: the numbers of the actions a stand-in made."""
        for i, (player, name) in enumerate(actions):
            a = ACTION_INDEX.get(name)
            if self.over or player != self.game.current or a is None or self.game.reason_illegal(a):
                raise ValueError(f"table {self.id}: stored action {i + 1} ({name!r} by player_{player}) "
                                 "does not replay")
            self._advance(a, i in stand_in)
        self.stand_in_moves = set(stand_in)
        if self.waiting:
            self.waiting -= self.store.seen(self.id, self.round_end["round"])

    def act(self, seat: int, name: object, seq: object = None) -> None:
        """The person at ``seat`` plays the action called ``name`` (``seq``: the state it was chosen in)."""
        if not isinstance(name, str) or (name not in ACTION_INDEX and name != NEXT_ROUND):
            shown = repr(name)[:60]
            raise TableError(f"unknown action {shown}; legal actions are listed in the state's 'legal'", 400)
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise TableError("'seq' must be an integer (the state's seq)", 400)
        with self.lock:
            if self.over:
                raise TableError("the game is over", 409)
            if not self.live:
                raise TableError(STALE, 409)
            if seq is not None and seq != self.seq:
                raise TableError(f"stale action: it was chosen at seq {seq}, the table is at seq {self.seq}", 409)
            if seat in self.left:
                raise TableError(f"you left this table; the stand-in ({self.row.stand_in}) plays your seat", 409)
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
            if self.covering == seat:                # back in time: the person plays the rest of the turn
                self.covering = None
            self.away.discard(seat)
            self.apply(a, person=True)

    def seen(self, seat: int, stand_in: bool = False) -> None:
        """The person at ``seat`` has seen the last round's sheet (the next deal starts once all have)."""
        with self.lock:
            if seat not in self.waiting:
                raise TableError(f"{NEXT_ROUND} is not legal now: there is no score sheet waiting for you", 409)
            if not self.live:
                raise TableError(STALE, 409)
            try:
                self.store.add_seen(self.id, self.round_end["round"], seat)
            except sqlite3.Error as e:
                raise TableError(f"the server could not save that ({e}); try again", 503) from None
            self.waiting.discard(seat)
            if not stand_in:
                self.touch()
            self._changed()

    def leave(self, seat: int) -> None:
        """The person at ``seat`` leaves: the table's stand-in plays the seat from now on (said to everyone)."""
        with self.lock:
            if self.over:
                raise TableError("the game is over", 409)
            if not self.live:
                raise TableError(STALE, 409)
            if seat in self.left:
                raise TableError("you have left this table already", 409)
            try:
                self.store.add_left(self.id, seat)
            except sqlite3.Error as e:
                raise TableError(f"the server could not save that ({e}); try again", 503) from None
            self.left.add(seat)
            self.away.discard(seat)
            self.waiting.discard(seat)
            self.notice = f"player_{seat} left the table; the stand-in ({self.row.stand_in}) plays their seat"
            self.touch()
            self._changed()

    def time_out(self) -> bool:
        """If the person the table waits for is past their time, the stand-in takes over: it confirms the
        waiting sheets (at once for a person away), or plays the rest of the turn and the seat from then on
        (the person is away until :meth:`back`); returns whether it did (said to everyone)."""
        with self.lock:
            deadline = self.deadline()
            if deadline is None or self.clock() < deadline:
                return False
            spec = self.row.stand_in
            if self.waiting:
                late = self.clock() >= self.sheet_at + self.turn_timeout
                who = sorted(self.waiting if late else self.waiting & self.away)
                for seat in who:
                    self.seen(seat, stand_in=True)
                if late:
                    self.away |= set(who)
                    names = ", ".join(f"player_{p}" for p in who)
                    self.notice = (f"{names} did not confirm the sheet of round {self.round_end['round']} within "
                                   f"{self.turn_timeout:g} s; the stand-in ({spec}) confirmed it and plays for them "
                                   "until they are back")
            else:
                self.covering = p = self.game.current
                self.away.add(p)
                self.notice = (f"player_{p} did not act within {self.turn_timeout:g} s; the stand-in ({spec}) plays "
                               "for them until they are back")
            self._changed()
            return True

    def back(self, seat: int) -> None:
        """The person at ``seat``, away, is back: the table waits for them again (said to everyone)."""
        with self.lock:
            if not self.live:
                raise TableError(STALE, 409)
            if seat not in self.away:
                raise TableError("you are not away: the table waits for you already", 409)
            self.away.discard(seat)
            if self.covering == seat:
                self.covering = None
            self.notice = f"player_{seat} is back"
            self.touch()
            self._changed()

    def apply(self, a: int, person: bool = False, stand_in: bool = False) -> None:
        """Write legal action ``a`` of the player to act, then apply it and tell the listeners (``person``:
        a person chose it; ``stand_in``: the stand-in made it for a person)."""
        with self.lock:
            if not self.live:
                raise TableError(STALE, 409)
            g = self.game
            try:
                self.store.add_action(self.id, self.seq, g.current, ACTION_NAMES[a], stand_in)
            except sqlite3.IntegrityError:            # written by another server on this file: reload, never overwrite
                raise TableError(STALE, 409) from None
            except sqlite3.Error as e:                # nothing was applied: the table stays as it was
                raise TableError(f"the server could not save the action ({e}); try again", 503) from None
            if stand_in:
                self.stand_in_moves.add(self.seq)
            self._advance(a, stand_in)
            if person or not self.people:
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
        self.changed_at = self.clock()
        for listener in list(self.listeners):
            listener(self)

    def retire(self) -> None:
        """Out of play for good (replaced or pruned): read only, and its listeners are told."""
        self.live = False
        self.retired = True
        self._changed()

    def set_trouble(self, trouble: Optional[str]) -> None:
        with self.lock:
            if trouble != self.trouble:
                self.trouble = trouble
                self._changed()

    def _player(self, p: int):
        """The agent of seat ``p``, or the stand-in that plays it for its person (made when first needed)."""
        agent = self.agents.get(p) or self.stand_ins.get(p)
        if agent is None:
            seed = self.row.seed * 100 + 50 + p
            agent = self.stand_ins[p] = make_agent(self.row.stand_in, seed)
            agent.reset(p, self.game.rules, seed)
        return agent

    def agent_step(self) -> bool:
        """The agent (or stand-in) to act plays one action; returns whether one was to act.  It thinks on a
        copy of the game without the table's lock (reading the table never waits for a slow agent); a move
        chosen for a state that changed meanwhile is dropped (the next step chooses again)."""
        with self.lock:
            if not self.live or not self.agent_to_act():
                return False
            p, seq, game = self.game.current, self.seq, self.game.clone()
            agent = self._player(p)
        try:
            a = agent_action(agent, game, p)
        except Exception as e:  # noqa: BLE001 - a broken agent must not stall the table
            log(f"table {self.id}: agent {self.labels[p]!r} failed ({type(e).__name__}: {e}); "
                "it plays the first legal action")
            a = -1
        with self.lock:
            if not self.live or not self.agent_to_act() or self.seq != seq or self.game.current != p:
                return True
            if self.game.reason_illegal(a) is not None:
                a = self.game.legal_actions()[0]
            self.apply(a, stand_in=p not in self.agents)
            return True

    def run_agents(self, limit: int = 100_000) -> int:
        """Agents play until a person is to act (or has a sheet to see) or the game is over; returns how
        many actions (a failed write raises :class:`TableError` with status 503)."""
        n = 0
        while n < limit and self.agent_step():
            n += 1
        return n


__all__ = ["Room", "TableError", "HUMAN", "DEFAULT_AGENTS", "DEFAULT_PACE_MS", "SEED_RANGE", "draw_seed",
           "digest", "new_token", "log", "TURN_TIMEOUT", "STAND_IN", "PER_CLIENT", "KEEP_FINISHED", "ROOM_FACTS",
           "STALE", "ABANDON_AFTER", "CREATE_FIELDS", "MAX_PACE_MS"]
