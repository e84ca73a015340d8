"""One game on the compiled core behind the interface of :class:`handfoot_env.engine.Game`.

:class:`CompiledGame` is what ``handfoot_v0.env(core="compiled")`` plays on: ``reset``,
``legal_actions``, ``apply_legal``, ``step`` (with the reference's reasons for an illegal
action), ``current``, ``phase``, the scores and round results are read from the compiled
row.  Everything else a ``Game`` has (``hands``, ``melds``, ``state_dict()``, ``clone()``,
the scoring and the record) comes from a reference ``Game`` built from the row when first
asked for after a change (:meth:`CompiledGame.reference`), so renderers, seat views,
records and heuristic agents work unchanged.  The state lives in the row; an edit of it
(``g.stock = [...]``, ``g.hands[0][k] -= 1``, as scripted tests do) is made on that
reference ``Game`` and written back into the row before the next call that reads it.
"""
from __future__ import annotations

import random
from typing import List, Optional, Sequence

import numpy as np

from ..actions import NUM_ACTIONS, action_index
from ..config import RulesLike
from ..cards import BLACK3, NUM_KINDS, RED3
from ..engine import PHASE_NAMES, Game, IllegalActionError
from ..view import SeatView
from . import layout as L
from .batch import CoreBatch, _book, game_from_row, state_row
from .play import apply_legal

_OWN = frozenset(("_batch", "_index", "_row", "_ref", "_ref_version", "_version", "_handed", "history", "rules", "n",
                  "num_teams", "team_of", "teammates"))


class CompiledGame:
    """A :class:`~handfoot_env.engine.Game` whose state is a row of the compiled core."""

    def __init__(self, rules: RulesLike = None, *, batch: Optional[CoreBatch] = None, index: int = 0, **overrides):
        """A game of its own, or (``batch``) the game in row ``index`` of a :class:`CoreBatch` whose
        kernels may also step it; who steps the row that way calls :meth:`applied` for each action."""
        if batch is None:
            batch, index = CoreBatch(rules, 1, **overrides), 0
        self._batch, self._index = batch, int(index)
        self._row = batch.S[self._index]
        r = self.rules = self._batch.rules
        self.n, self.num_teams = r.players, r.teams
        self.team_of = tuple(p % r.teams for p in range(r.players))
        self.teammates = tuple(r.teammates(p) for p in range(r.players))
        self.history: List[tuple] = []
        self._version = 0
        self._ref: Optional[Game] = None
        self._ref_version = -1
        self._handed = False        # the reference was handed out through an attribute: may be edited
        self._row[L.PHASE] = 3
        self._row[L.SEED] = -1

    def __setattr__(self, name, value):
        if name in _OWN:
            object.__setattr__(self, name, value)
            return
        ref = self.reference()              # an edit of the state: made on the reference, written back
        setattr(ref, name, value)
        self._handed = True

    def __getattr__(self, name):
        if name.startswith("__") or name in _OWN:
            raise AttributeError(name)
        ref = self.reference()
        self._handed = True
        return getattr(ref, name)

    def _sync(self) -> None:
        """Write edits made through the reference handed out by ``__getattr__`` back into the row."""
        if self._handed:
            self._handed = False
            state_row(self._ref, self._row)

    # ------------------------------------------------------------------ play
    def reset(self, seed: Optional[int] = None, shoe: Optional[Sequence[str]] = None, round: int = 1,
              scores: Optional[Sequence[int]] = None) -> None:
        if seed is None:
            seed = random.SystemRandom().randrange(2 ** 31)
        self._batch.reset_one(self._index, seed, round, scores, shoe)
        self.history = []
        self._handed = False
        self._version += 1

    def legal_actions(self) -> List[int]:
        self._sync()
        return self._batch.legal(self._index)

    def apply_legal(self, a: int) -> None:
        """Apply ``a``, an action of :meth:`legal_actions` of this very state, unchecked (as ``Game``)."""
        self._sync()
        b = self._batch
        self.history.append((int(self._row[L.CURRENT]), a))
        apply_legal(self._row, b.R, a, b.ro, b.wo)
        self._version += 1

    def applied(self, player: int, a: int) -> None:
        """Record action ``a`` of ``player``, applied to the row by a batch kernel (history, and the
        reference rebuilt when next asked for)."""
        self.history.append((player, a))
        self._version += 1

    def step(self, action) -> None:
        """Apply ``action``; :class:`IllegalActionError` with the reference's reason if not allowed."""
        action = int(action) if not isinstance(action, bool) and hasattr(action, "__index__") else action
        if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < NUM_ACTIONS \
                and action in self.legal_actions():
            self.apply_legal(action)
            return
        reason = self.reference().reason_illegal(action)
        raise IllegalActionError(action, reason or "not in the legal list of this state")

    def step_name(self, name: str) -> None:
        self.step(action_index(name))

    def observe(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> int:
        """Observation and mask of ``seat`` into ``obs`` (float32) and ``mask`` (int8); the legal count."""
        self._sync()
        return self._batch.observe(self._index, seat, obs, mask)

    # --------------------------------------------------------------- reading
    @property
    def current(self) -> int:
        self._sync()
        return int(self._row[L.CURRENT])

    current_player = current

    @property
    def phase(self) -> int:
        self._sync()
        return int(self._row[L.PHASE])

    @property
    def turn_player(self) -> int:
        return int(self._row[L.TURN])

    @property
    def action_count(self) -> int:
        return int(self._row[L.ACOUNT])

    @property
    def seed(self) -> Optional[int]:
        s = int(self._row[L.SEED])
        return None if s < 0 else s

    @property
    def game_over(self) -> bool:
        return bool(self._row[L.OVER])

    @property
    def winner(self) -> Optional[int]:
        w = int(self._row[L.WINNER])
        return None if w < 0 else w

    @property
    def round(self) -> int:
        return int(self._row[L.ROUND])

    @property
    def scores(self) -> List[int]:
        return self._batch.scores(self._index)

    @property
    def rounds_finished(self) -> int:
        return int(self._row[L.NRS])

    @property
    def round_scores(self) -> List[List[int]]:
        return self._batch.round_scores(self._index)

    def reference(self) -> Game:
        """A reference :class:`Game` in this state (with the history), rebuilt after each change."""
        self._sync()
        if self._ref_version != self._version:
            g = game_from_row(self.rules, self._row)
            g.history = list(self.history)
            self._ref = g
            self._ref_version = self._version
        return self._ref

    def seat_view(self, seat: int, legal: Optional[Sequence[int]] = None) -> SeatView:
        """``seat_view(self, seat, legal)`` read from the row directly (what heuristic seats of the batched
        samplers see; tests/test_compiled_sampler.py holds it to the reference's view)."""
        self._sync()
        s, r = self._row, self.rules
        n, nt = r.players, r.teams
        if not 0 <= seat < n:
            raise ValueError(f"seat must be between 0 and {n - 1}, got {seat!r}")
        sc = s[:L.RSEEDS].tolist()
        phase, current, turn = sc[L.PHASE], sc[L.CURRENT], sc[L.TURN]
        over = phase == 3
        to_act = (not over) and current == seat
        hands = s[L.HANDS:L.HANDS + NUM_KINDS * n].reshape(n, NUM_KINDS)
        feet = s[L.FEET:L.FEET + NUM_KINDS * n].reshape(n, NUM_KINDS).sum(1).tolist()
        up = s[L.FOOTUP:L.FOOTUP + n].tolist()
        pend = s[L.PEND:L.PEND + NUM_KINDS].tolist()
        disc = tuple(s[L.DISC:L.DISC + sc[L.DISC_LEN]].tolist())
        melds = s[L.MELDS:L.MELDS + 36 * nt].reshape(nt, 12, 3).tolist()
        nb = s[L.NBOOKS:L.NBOOKS + nt].tolist()
        books = tuple(tuple(_book(c) for c in s[L.BOOKS + L.MAXB * t:L.BOOKS + L.MAXB * t + nb[t]].tolist())
                      for t in range(nt))
        ra = sc[L.RACTIONS]
        hist = self.history[len(self.history) - ra:] if ra else []
        if to_act and legal is None:
            legal = self.legal_actions()
        return SeatView(
            seat=seat, team=self.team_of[seat], num_players=n, num_teams=nt, rules=r, team_of=tuple(self.team_of),
            teammates=tuple(self.teammates[seat]), hand=tuple(hands[seat].tolist()), in_foot=bool(up[seat]),
            pending=tuple(pend) if (turn == seat and any(pend)) else (0,) * NUM_KINDS,
            hand_sizes=tuple(hands.sum(1).tolist()), foot_picked_up=tuple(bool(u) for u in up),
            foot_sizes=tuple(0 if up[p] else feet[p] for p in range(n)),
            played_foot=tuple(bool(x) for x in s[L.PLAYED:L.PLAYED + n].tolist()),
            melds=tuple(tuple(tuple(m) for m in t) for t in melds), books=books,
            book_counts=tuple(tuple(s[L.BC + 3 * t:L.BC + 3 * t + 3].tolist()) for t in range(nt)),
            red_threes=tuple(s[L.RED3S:L.RED3S + nt].tolist()),
            opened=tuple(bool(x) for x in s[L.OPENED:L.OPENED + nt].tolist()),
            discard=disc, discard_top=disc[-1] if disc else -1, pile_blocked=not disc or disc[-1] in (RED3, BLACK3),
            stock_size=sc[L.STOCK_LEN], round=sc[L.ROUND], minimum=sc[L.MINIMUM], scores=tuple(self.scores),
            round_scores=tuple(tuple(x) for x in self.round_scores), phase=phase, phase_name=PHASE_NAMES[phase],
            current=current, turn_player=turn, prov_value=sc[L.PROV_VALUE],
            forced=tuple(sc[L.F_S:L.F_J + 1]) if sc[L.FORCED] else None, incomplete=sc[L.INCOMPLETE],
            asked=bool(sc[L.ASKED]), permission=None if sc[L.PERM] < 0 else bool(sc[L.PERM]),
            cancels_used=sc[L.CANCELS], round_history=tuple(hist), game_over=bool(sc[L.OVER]),
            legal_actions=tuple(legal) if to_act else ())

    def clone(self) -> "CompiledGame":
        self._sync()
        c = CompiledGame(self.rules)
        c._row[:] = self._row
        c.history = list(self.history)
        return c


__all__ = ["CompiledGame", "CoreBatch", "state_row", "game_from_row"]
