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
from ..public import Later, PublicRecord, PublicRound, follow
from ..view import SeatView
from . import layout as L
from .batch import CoreBatch, _book, game_from_row, state_row
from .encode import observe_seat
from .play import apply_legal, apply_legal_books

_VIEW_PLANS: dict = {}
_NO_PENDING = (0,) * NUM_KINDS
#: every book code of the row (slot * 512 + naturals * 64 + twos * 8 + jokers) decoded, by code
_BOOKS = [_book(c) for c in range(12 * 512)]
(_PHASE, _CURRENT, _TURN, _DISC_LEN, _NRS, _RACTIONS, _STOCK_LEN, _ROUND, _MINIMUM, _PROV_VALUE, _F_S, _F_J, _FORCED,
 _INCOMPLETE, _ASKED, _PERM, _CANCELS, _OVER) = (
    L.PHASE, L.CURRENT, L.TURN, L.DISC_LEN, L.NRS, L.RACTIONS, L.STOCK_LEN, L.ROUND, L.MINIMUM, L.PROV_VALUE, L.F_S,
    L.F_J, L.FORCED, L.INCOMPLETE, L.ASKED, L.PERM, L.CANCELS, L.OVER)
_BOOKS_AT, _MAXB, _DISC, _RSC, _MAXT, _ACOUNT, _SEED = L.BOOKS, L.MAXB, L.DISC, L.RSC, L.MAXT, L.ACOUNT, L.SEED


def _view_plan(n: int, nt: int):
    """The row positions :meth:`CompiledGame.seat_view` gathers in one go for ``n`` players in ``nt``
    teams (scalars, hands, feet, foot flags, pending cards, melds, book counts, red threes, openings,
    scores), and where each part after the scalars starts in the gathered list."""
    got = _VIEW_PLANS.get((n, nt))
    if got is None:
        parts = [(0, L.RSEEDS), (L.HANDS, NUM_KINDS * n), (L.FEET, NUM_KINDS * n), (L.FOOTUP, n), (L.PLAYED, n),
                 (L.PEND, NUM_KINDS), (L.MELDS, 36 * nt), (L.NBOOKS, nt), (L.BC, 3 * nt), (L.RED3S, nt),
                 (L.OPENED, nt), (L.SCORES, nt)]
        idx, starts = [], []
        for start, size in parts:
            starts.append(len(idx))
            idx.extend(range(start, start + size))
        got = _VIEW_PLANS[(n, nt)] = (np.asarray(idx, dtype=np.intp), tuple(starts[1:]))
    return got


_OWN = frozenset(("_batch", "_index", "_row", "_books", "_ref", "_ref_version", "_version", "_handed", "history",
                  "_public", "rules", "n", "num_teams", "team_of", "teammates"))


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
        self._public: Optional[PublicRecord] = None
        self._version = 0
        self._ref: Optional[Game] = None
        self._ref_version = -1
        self._handed = False        # the reference was handed out through an attribute: may be edited
        self._books = np.zeros(3 * L.MAXT, dtype=np.int64)
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
            state_row(self._ref, self._row)   # (a state the core cannot hold is refused, the row kept)
            self._handed = False

    # ------------------------------------------------------------------ play
    def reset(self, seed: Optional[int] = None, shoe: Optional[Sequence[str]] = None, round: int = 1,
              scores: Optional[Sequence[int]] = None) -> None:
        if seed is None:
            seed = random.SystemRandom().randrange(2 ** 31)
        self._batch.reset_one(self._index, seed, round, scores, shoe)
        self.history = []
        self._public = None
        self._handed = False
        self._version += 1

    def legal_actions(self) -> List[int]:
        self._sync()
        return self._batch.legal(self._index)

    def apply_legal(self, a: int) -> None:
        """Apply ``a``, an action of :meth:`legal_actions` of this very state, unchecked (as ``Game``)."""
        if self._handed:
            self._sync()
        b = self._batch
        self.history.append((self._row.item(_CURRENT), a))
        apply_legal(self._row, b.R, a, b.ro, b.wo)
        self._version += 1

    def apply_legal_books(self, a: int) -> Optional[List[List[int]]]:
        """:meth:`apply_legal`; when ``a`` ends a round, each team's book counts (clean, dirty, wild)
        of that round (the reference keeps them in ``book_counts`` until the next deal), else None."""
        if self._handed:
            self._sync()
        b = self._batch
        self.history.append((self._row.item(_CURRENT), a))
        ended = apply_legal_books(self._row, b.R, a, b.ro, b.wo, self._books)
        self._version += 1
        if not ended:
            return None
        nt = self.num_teams
        c = self._books[:3 * nt].tolist()
        return [c[3 * t:3 * t + 3] for t in range(nt)]

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

    def observe_legal(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> List[int]:
        """:meth:`observe`, returning the legal list of ``seat`` (empty unless it is to act)."""
        n = self.observe(seat, obs, mask)
        return self._batch._legal[:n].tolist()

    def observe(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> int:
        """Observation and mask of ``seat`` into ``obs`` (float32) and ``mask`` (int8); the legal count."""
        if self._handed:
            self._sync()
        b = self._batch
        return observe_seat(self._row, b.R, seat, obs, mask, b._legal, b.ro, b.wo)

    def encode_state(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """:func:`handfoot_env.observation.encode_state` of this game, read from the row (no reference
        built): player 0's observation, then every player's hand and foot counts, then the stock's counts
        by kind; into ``out`` (float32, ``state_size`` long) when given.  The batched samplers' centralised
        critic reads it at every decision; tests/test_compiled_sampler.py holds it to the reference's."""
        if self._handed:
            self._sync()
        b, s = self._batch, self._row
        n, K = self.n, NUM_KINDS
        size = b.obs.shape[1]
        if out is None:
            out = np.empty(size + 2 * K * n + K, dtype=np.float32)
        observe_seat(s, b.R, 0, out[:size], b._spare_mask, b._legal, b.ro, b.wo)
        hf = out[size:size + 2 * K * n].reshape(n, 2, K)
        hf[:, 0] = s[L.HANDS:L.HANDS + K * n].reshape(n, K)
        hf[:, 1] = s[L.FEET:L.FEET + K * n].reshape(n, K)
        out[size + 2 * K * n:] = np.bincount(s[L.STOCK:L.STOCK + s.item(L.STOCK_LEN)], minlength=K)
        return out

    # --------------------------------------------------------------- reading
    # (the AEC env reads these several times a step: ``ndarray.item`` and an inline test of
    # ``_handed`` keep them cheap)
    @property
    def current(self) -> int:
        if self._handed:
            self._sync()
        return self._row.item(_CURRENT)

    current_player = current

    @property
    def phase(self) -> int:
        if self._handed:
            self._sync()
        return self._row.item(_PHASE)

    @property
    def turn_player(self) -> int:
        return int(self._row[L.TURN])

    @property
    def action_count(self) -> int:
        return self._row.item(_ACOUNT)

    @property
    def seed(self) -> Optional[int]:
        s = self._row.item(_SEED)
        return None if s < 0 else s

    @property
    def game_over(self) -> bool:
        return bool(self._row.item(_OVER))

    @property
    def winner(self) -> Optional[int]:
        w = int(self._row[L.WINNER])
        return None if w < 0 else w

    @property
    def round(self) -> int:
        return self._row.item(_ROUND)

    @property
    def scores(self) -> List[int]:
        return self._batch.scores(self._index)

    @property
    def rounds_finished(self) -> int:
        return self._row.item(_NRS)

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
        samplers and the evaluation harness see; tests/test_compiled_sampler.py holds it to the
        reference's view).  The fixed-size fields come out of the row in one gather (:func:`_view_plan`)."""
        self._sync()
        s, r = self._row, self.rules
        n, nt = r.players, r.teams
        if not 0 <= seat < n:
            raise ValueError(f"seat must be between 0 and {n - 1}, got {seat!r}")
        idx, (o_hands, o_feet, o_up, o_played, o_pend, o_melds, o_nb, o_bc, o_red3, o_opened, o_scores) = \
            _view_plan(n, nt)
        v = s[idx].tolist()
        phase, current, turn = v[_PHASE], v[_CURRENT], v[_TURN]
        to_act = phase != 3 and current == seat
        K = NUM_KINDS
        hands = [v[o_hands + K * p:o_hands + K * p + K] for p in range(n)]
        up = v[o_up:o_up + n]
        pend = v[o_pend:o_pend + K]
        m = v[o_melds:o_melds + 36 * nt]
        slots = tuple(zip(m[0::3], m[1::3], m[2::3]))
        bc = v[o_bc:o_bc + 3 * nt]
        nb = v[o_nb:o_nb + nt]
        books = tuple(tuple(map(_BOOKS.__getitem__, s[_BOOKS_AT + _MAXB * t:_BOOKS_AT + _MAXB * t + nb[t]].tolist()))
                      if nb[t] else () for t in range(nt))
        nd = v[_DISC_LEN]
        disc = tuple(s[_DISC:_DISC + nd].tolist()) if nd else ()
        nrs = v[_NRS]
        if nrs:
            rsc = s[_RSC:_RSC + _MAXT * nrs].tolist()
            round_scores = tuple(tuple(rsc[_MAXT * i:_MAXT * i + nt]) for i in range(nrs))
        else:
            round_scores = ()
        ra = v[_RACTIONS]
        hist = tuple(self.history[len(self.history) - ra:]) if ra else ()
        if to_act and legal is None:
            legal = self.legal_actions()
        return SeatView(
            seat=seat, team=self.team_of[seat], num_players=n, num_teams=nt, rules=r, team_of=self.team_of,
            teammates=self.teammates[seat], hand=tuple(hands[seat]), in_foot=bool(up[seat]),
            pending=tuple(pend) if (turn == seat and any(pend)) else _NO_PENDING,
            hand_sizes=tuple(map(sum, hands)), foot_picked_up=tuple(map(bool, up)),
            foot_sizes=tuple(0 if up[p] else sum(v[o_feet + K * p:o_feet + K * p + K]) for p in range(n)),
            played_foot=tuple(map(bool, v[o_played:o_played + n])),
            melds=tuple(slots[12 * t:12 * t + 12] for t in range(nt)), books=books,
            book_counts=tuple(tuple(bc[3 * t:3 * t + 3]) for t in range(nt)),
            red_threes=tuple(v[o_red3:o_red3 + nt]), opened=tuple(map(bool, v[o_opened:o_opened + nt])),
            discard=disc, discard_top=disc[-1] if disc else -1, pile_blocked=not disc or disc[-1] in (RED3, BLACK3),
            stock_size=v[_STOCK_LEN], round=v[_ROUND], minimum=v[_MINIMUM], scores=tuple(v[o_scores:o_scores + nt]),
            round_scores=round_scores, phase=phase, phase_name=PHASE_NAMES[phase],
            current=current, turn_player=turn, prov_value=v[_PROV_VALUE],
            forced=tuple(v[_F_S:_F_J + 1]) if v[_FORCED] else None, incomplete=v[_INCOMPLETE],
            asked=bool(v[_ASKED]), permission=None if v[_PERM] < 0 else bool(v[_PERM]),
            cancels_used=v[_CANCELS], round_history=hist, game_over=bool(v[_OVER]),
            legal_actions=tuple(legal) if to_act else (), up_card=s.item(L.UP_CARD),
            _public=Later(self, (v[_SEED], v[_ROUND], len(self.history) - ra)))

    def public_round(self) -> PublicRound:
        """What the whole table knows of this round (:mod:`handfoot_env.public`), as ``Game.public_round``:
        the game's record of it, brought up to date with the actions since it was last asked."""
        self._sync()
        s, h = self._row, self.history
        start = len(h) - s.item(_RACTIONS)
        rec = self._public = follow(self._public, (s.item(_SEED), s.item(_ROUND), start), self.rules, self.team_of,
                                    self.num_teams, s.item(L.UP_CARD), s.item(_MINIMUM), h, start)
        return rec.snapshot()

    def clone(self) -> "CompiledGame":
        self._sync()
        c = CompiledGame(self.rules)
        c._row[:] = self._row
        c.history = list(self.history)
        return c


__all__ = ["CompiledGame", "CoreBatch", "state_row", "game_from_row"]
