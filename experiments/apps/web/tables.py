"""Every table of a server (:class:`Tables`): the ones in play, the finished and abandoned ones in the file,
creating a table and each client's share.

A table is in play (``Tables.rooms``) until it finishes or nobody has acted at it
for ``abandon_after`` seconds (a table of agents only: any seat); then it stays
in the SQLite file only and is rebuilt from its log when someone asks for it
(read only, a few kept in memory), and a person of an abandoned table who comes
back brings it into play again.  Each client (its address, kept in the file as a
digest only) holds at most ``per_client`` tables in play, and the server at most
``max_tables``; the newest ``keep_finished`` finished tables stay in the file, the
older ones are deleted (their records stay in ``--records``).  See
:mod:`experiments.apps.web.rooms` for one table and the locks.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from agents.registry import make_agent
from experiments.apps.web.rooms import (ABANDON_AFTER, CREATE_FIELDS, DEFAULT_AGENTS, DEFAULT_PACE_MS, FINISHED_CACHE,
                                        HUMAN, KEEP_FINISHED, MAX_PACE_MS, PER_CLIENT, SEED_RANGE, STAND_IN,
                                        TURN_TIMEOUT, Room, TableError, digest, draw_seed, log, new_token)
from experiments.apps.web.store import Store, TableRow
from handfoot_env.config import PRESETS, load_rules
from handfoot_env.engine import Game


def creator_of(client: str) -> str:
    """What the file keeps of the client that created a table (its share is counted by it): a digest."""
    return hashlib.sha256(f"handfoot-client:{client}".encode("utf-8", "surrogatepass")).hexdigest()[:32]



class Tables:
    """Every table of a server, loaded from and written to one :class:`Store`.

    ``rooms`` holds the tables in play; finished tables and tables where nobody
    has acted for ``abandon_after`` seconds stay in the file only (their rows in
    ``rows``) and are rebuilt from their log when asked for (read only, a few kept
    in ``finished``); a person's own request brings an abandoned table back into
    play.  A table whose log does not replay is reported on standard error and
    skipped (``damaged``).
    """

    def __init__(self, store: Store, agents: Sequence[str] = DEFAULT_AGENTS, max_tables: int = 100,
                 records: Optional[Path] = None, allow_chosen_seeds: bool = False,
                 abandon_after: float = ABANDON_AFTER, clock: Callable[[], float] = time.time,
                 turn_timeout: float = TURN_TIMEOUT, per_client: int = PER_CLIENT,
                 keep_finished: int = KEEP_FINISHED, offer_games: bool = True):
        self.store = store
        self.offer_games = bool(offer_games)      # new tables' finished games may be offered for datasets
        self.lock = threading.RLock()
        self.records = Path(records) if records is not None else None
        self.allowed = tuple(dict.fromkeys(list(DEFAULT_AGENTS) + list(agents)))
        self.max_tables = int(max_tables)
        self.per_client = int(per_client)
        self.keep_finished = int(keep_finished)
        self.allow_chosen_seeds = bool(allow_chosen_seeds)
        self.abandon_after = float(abandon_after)
        self.turn_timeout = float(turn_timeout)
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
                continue                                     # abandoned: loaded again if its person comes back
            room = self._load(row, started=False)
            if room is not None and room.live:
                room.active_at = active.get(row.id, row.created)
        self.prune()

    # ------------------------------------------------------------------ loading
    def _damaged(self, tid: str, reason: str) -> None:
        self.damaged[tid] = reason
        self.rows.pop(tid, None)
        log(f"table {tid} skipped: {reason}")

    def _build(self, row: TableRow, agents: bool) -> Optional[Room]:
        """The room of a stored table rebuilt from its log (read only), or ``None`` (reported) when it does
        not replay."""
        try:
            room = Room(row, self.store, self.records, agents=agents, clock=self.clock,
                        turn_timeout=self.turn_timeout)
            room.left = self.store.left(row.id)
            room.restore(self.store.actions(row.id), self.store.stand_in_seqs(row.id))
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
        resting = self.finished.pop(row.id, None)
        if resting is not None:                              # its read-only copy: its sockets reconnect
            resting.retire()
        if room.over:                                        # killed before it was marked finished
            room.finish()
            row.finished = True
            room.agents.clear()
            self._remember(room)
            return room
        room.live = True
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
            with self.lock:
                del self.rooms[room.id]
                self.rows[room.id].finished = True
                room.live = False
                room.agents.clear()
                room.stand_ins.clear()
                self._remember(room)
            try:
                self.prune()
            except sqlite3.Error as e:                       # the next finished game prunes again
                log(f"could not prune finished tables ({e})")

    def prune(self) -> int:
        """Delete the finished tables beyond the newest ``keep_finished`` from the file; returns how many."""
        gone = self.store.prune_finished(self.keep_finished)
        with self.lock:
            for tid in gone:
                self.rows.pop(tid, None)
                old = self.finished.pop(tid, None)
                if old is not None:
                    old.retired = True
        return len(gone)

    # ------------------------------------------------------------------ lookups
    def get(self, table_id: str, revive: bool = False) -> Room:
        """The table: in play, or rebuilt read only from the file; ``revive``: a table abandoned but not
        finished comes back into play (a person of it asks)."""
        room = self.rooms.get(table_id)
        if room is not None:
            return room
        with self.lock:
            room = self.rooms.get(table_id)
            if room is not None:
                return room
            if table_id in self.damaged:
                raise TableError("this table's stored log is damaged and it cannot be played (the server's "
                                 "log says why)", 410)
            row = self.rows.get(table_id)
            if row is None:
                raise TableError("no such table", 404)
            if table_id in self.finished and (row.finished or not revive):
                self.finished.move_to_end(table_id)
                return self.finished[table_id]
            if row.finished or not revive:
                room = self._build(row, agents=False)
                if room is not None:
                    self._remember(room)
            else:
                room = self._load(row)                       # an abandoned table its person came back to
            if room is None:
                return self.get(table_id)
            return room

    def seat_of(self, table_id: str, token: Optional[str]) -> Optional[int]:
        """The seat of ``token`` at a stored table (read from its row: nothing is rebuilt)."""
        row = self.rows.get(table_id)
        if row is None or not token:
            return None
        d = digest(token)
        found = None
        for p, ref in enumerate(row.token_digests):
            if ref is not None and hmac.compare_digest(d, ref):
                found = p
        return found

    def exists(self, table_id: str) -> bool:
        return table_id in self.rows or table_id in self.damaged

    def abandoned(self, room: Room) -> bool:
        """Nobody has acted here for ``abandon_after`` seconds (open pages do not count)."""
        return self.clock() - room.active_at > self.abandon_after

    def sweep(self) -> int:
        """Take the abandoned tables out of play (a table busy at this moment is not abandoned); returns how
        many."""
        n = 0
        with self.lock:
            for room in [r for r in self.rooms.values() if self.abandoned(r)]:
                if not room.lock.acquire(blocking=False):
                    continue
                try:
                    del self.rooms[room.id]
                    room.listeners.remove(self._changed)
                    room.retire()
                finally:
                    room.lock.release()
                self.on_unload(room)
                n += 1
        return n

    def in_play(self, creator: Optional[str] = None) -> int:
        """Tables in play (``creator``: of that creator only)."""
        self.sweep()
        return sum(1 for r in list(self.rooms.values())
                   if not r.over and (creator is None or r.row.creator == creator))

    # ------------------------------------------------------------------ creating
    def create(self, body: object, client: str = "") -> Tuple[Room, Dict[int, str]]:
        """A new table from a create request of ``client`` (its address); returns it and the token of each
        human seat."""
        rules, seats, seed, pace, chosen, stand_in = self.check_create(body)
        creator = creator_of(client)
        with self.lock:
            if self.in_play(creator) >= self.per_client:
                raise TableError(f"you have {self.per_client} tables in play, your share of this server; finish "
                                 "or leave one first", 429)
            if self.in_play() >= self.max_tables:
                raise TableError(f"the server has {self.max_tables} tables in play, its limit; try again later",
                                 503)
            tokens = {p: new_token() for p, s in enumerate(seats) if s == HUMAN}
            row = TableRow(id=secrets.token_urlsafe(9), created=self.clock(), rules=rules, seats=seats, seed=seed,
                           pace_ms=pace, token_digests=[digest(tokens[p]) if p in tokens else None
                                                        for p in range(len(seats))], finished=False,
                           seed_chosen=chosen, creator=creator, stand_in=stand_in, offered=self.offer_games)
            try:                                                   # agents made before anything is stored
                room = Room(row, self.store, self.records, clock=self.clock, turn_timeout=self.turn_timeout)
            except Exception as e:  # noqa: BLE001 - an agent that cannot sit at these rules: the request's fault
                raise TableError(f"these seats cannot play {rules}: {type(e).__name__}: {e}", 400) from None
            try:
                self.store.add_table(row)
            except sqlite3.Error as e:
                raise TableError(f"the server could not save the table ({e}); try again", 503) from None
            room.live = True
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

    def check_create(self, body: object) -> Tuple[str, List[str], int, int, bool, str]:
        if not isinstance(body, dict):
            raise TableError("the request body must be a JSON object with rules, seats, seed, pace_ms, stand_in")
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
        stand_in = body.get("stand_in", STAND_IN)
        if not isinstance(stand_in, str) or stand_in not in kinds[1:]:
            raise TableError(f"stand_in: {str(stand_in)[:60]!r} cannot play for a person here; choose one of "
                             f"{', '.join(kinds[1:])}")
        return rules, list(seats), seed, pace, chosen, stand_in


def _plays(spec: str, rules) -> bool:
    """Whether the agent ``spec`` can sit at a table of ``rules`` (it is made and seated once)."""
    try:
        make_agent(spec, 0).reset(0, rules, 0)
        return True
    except Exception:  # noqa: BLE001 - any refusal means: not offered at these rules
        return False


__all__ = ["Tables", "creator_of"]
