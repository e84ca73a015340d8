"""Many games at once on the compiled core: :class:`CoreBatch`.

>>> b = CoreBatch("pagat", 4); b.reset([1, 2, 3, 4])
>>> b.legal(0)[:1]
[0]

A batch holds ``num_games`` games of one rule config as rows of an int64 matrix
(:mod:`.layout`).  :meth:`CoreBatch.reset` deals them (exactly the deals of
``Game.reset`` with the same seeds); :meth:`CoreBatch.step` plays one action in every
game whose entry is >= 0 and writes the observation and action mask of each game's
player to act into :attr:`CoreBatch.obs` and :attr:`CoreBatch.mask`, in one compiled
call.  :func:`state_row` writes a reference :class:`~handfoot_env.engine.Game` into the
same layout (the differential tests compare whole states with it) and
:meth:`CoreBatch.to_game` builds a reference ``Game`` from a row.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..actions import NUM_ACTIONS
from ..cards import NUM_KINDS, NUM_RANKS, RED3
from ..config import RulesLike, check_seed, load_rules
from ..engine import Game, shoe_kinds
from ..observation import observation_size
from . import layout as L
from .encode import observe_seat, pick_uniform, reset_batch, step_batch
from .play import reset as reset_row
from .rules import legal_into
from .searches import option_tables

_TABLES: list = []


def tables():
    """The option tables of the searches (built once per process)."""
    if not _TABLES:
        _TABLES.extend(option_tables())
    return _TABLES[0], _TABLES[1]


class CoreBatch:
    """``num_games`` games under one rule config, held in arrays (see the module docstring)."""

    def __init__(self, rules: RulesLike = "pagat", num_games: int = 1, **overrides):
        self.rules = load_rules(rules, **overrides)
        if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        r = self.rules
        self.num_games = num_games
        self.R = L.rule_vector(r)
        self.ro, self.wo = tables()
        self.S = np.zeros((num_games, L.WIDTH), dtype=np.int64)
        self.obs = np.zeros((num_games, observation_size(r.players, r.teams)), dtype=np.float32)
        self.mask = np.zeros((num_games, NUM_ACTIONS), dtype=np.int8)
        self.counts = np.zeros(num_games, dtype=np.int64)
        #: legal ids of each game's player to act: ``legal_ids[g, :counts[g]]``, in id order
        self.legal_ids = np.zeros((num_games, NUM_ACTIONS), dtype=np.int16)
        self._legal = np.zeros(NUM_ACTIONS, dtype=np.int64)
        #: a mask written and thrown away by readers that want only an observation
        self._spare_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._one = np.zeros(1, dtype=np.int64)
        self._one_rows: Optional[list] = None

    # ---------------------------------------------------------------- play
    def reset(self, seeds: Sequence[int], games: Optional[Sequence[int]] = None) -> None:
        """Deal game ``games[i]`` (default: every game) from ``seeds[i]`` and observe it, in one compiled
        call; the other games are left as they are."""
        where = f"reset's games must be a list of game indices from 0 to {self.num_games - 1}, got {games!r}"
        try:
            idx = np.arange(self.num_games) if games is None else np.asarray(games)
        except (TypeError, ValueError):
            raise ValueError(where) from None
        if idx.ndim != 1 or (len(idx) and (idx.dtype.kind not in "iu" or idx.min() < 0
                                           or idx.max() >= self.num_games)):
            raise ValueError(where)
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
            raise ValueError(f"reset's seeds must be a list of integers, got {seeds!r}")
        seeds = list(seeds)
        if len(seeds) != len(idx):
            raise ValueError(f"reset needs one seed per game: {len(idx)} games, {len(seeds)} seeds")
        values = np.fromiter((check_seed(x) for x in seeds), dtype=np.int64, count=len(seeds))
        reset_batch(self.S, self.R, idx.astype(np.int64), values, self.obs, self.mask, self.counts,
                    self.legal_ids, self._legal, self.ro, self.wo)

    def reset_one(self, g: int, seed: int, round: int = 1, scores: Optional[Sequence[int]] = None,
                  shoe: Optional[Sequence[str]] = None) -> None:
        """``Game.reset(seed, shoe, round, scores)`` for game ``g`` (arguments checked as there);
        observations are written by the next :meth:`step`."""
        seed = check_seed(seed)
        top, round, scores = shoe_kinds(self.rules, shoe, round, scores)
        reset_row(self.S[g], self.R, seed, round, np.asarray(scores, dtype=np.int64),
                  np.asarray(top, dtype=np.int64), self.ro, self.wo)

    def step(self, actions: np.ndarray) -> int:
        """Play ``actions[g]`` in game g, then write its observation, mask, legal count and legal
        ids; ``-1``: only write them; below ``-1``: leave game g alone.  Returns the number of
        games whose action was not in the mask written last (those games are left as they were,
        ``counts[g] == -1``)."""
        return step_batch(self.S, self.R, np.asarray(actions, dtype=np.int64), self.obs, self.mask, self.counts,
                          self.legal_ids, self._legal, self.ro, self.wo)

    def random_actions(self, rng: np.random.Generator) -> Tuple[np.ndarray, int]:
        """A uniformly random legal action of every game (one ``rng.random()`` draw each) and the number
        of games with no legal action (finished, or whose last action :meth:`step` refused), whose entry
        is -2 (:meth:`step` leaves them alone)."""
        acts = np.empty(self.num_games, dtype=np.int64)
        done = pick_uniform(rng.random(self.num_games), self.counts, self.legal_ids, acts)
        return acts, done

    def step_one(self, g: int, action: int) -> bool:
        """:meth:`step` for game ``g`` alone (``action`` -1: only write its observation, mask and legal
        list); False when the action was not in its mask (the game is left as it was)."""
        rows = self._one_rows
        if rows is None:
            rows = self._one_rows = [(self.S[i:i + 1], self.obs[i:i + 1], self.mask[i:i + 1], self.counts[i:i + 1],
                                      self.legal_ids[i:i + 1]) for i in range(self.num_games)]
        S, obs, mask, counts, legal_ids = rows[g]
        one = self._one
        one[0] = action
        return not step_batch(S, self.R, one, obs, mask, counts, legal_ids, self._legal, self.ro, self.wo)

    def load_worlds(self, games: Sequence[Game], copies: int = 1) -> None:
        """Rows ``0 .. len(games) - 1`` in the states of the reference ``games`` (worlds sampled from a
        seat's view, say), repeated ``copies`` times in blocks: row ``c * len(games) + w`` is world ``w``.
        Their observations and legal lists are written by the next :meth:`step`."""
        n = len(games)
        if n * copies > self.num_games:
            raise ValueError(f"{n} worlds x {copies} copies do not fit {self.num_games} games")
        for w, g in enumerate(games):
            state_row(g, self.S[w])
        for c in range(1, copies):
            self.S[c * n:(c + 1) * n] = self.S[:n]

    def observe(self, g: int, seat: int, obs: np.ndarray, mask: np.ndarray) -> int:
        """Any seat's observation and mask of game ``g`` into ``obs`` and ``mask``."""
        return observe_seat(self.S[g], self.R, seat, obs, mask, self._legal, self.ro, self.wo)

    def legal(self, g: int) -> List[int]:
        """The legal actions of game ``g``'s player to act, in id order."""
        n = legal_into(self.S[g], self.R, self._legal, self.ro, self.wo)
        return self._legal[:n].tolist()

    # ------------------------------------------------------------ reading
    def current(self, g: int) -> int:
        return int(self.S[g, L.CURRENT])

    def currents(self) -> np.ndarray:
        """The player to act of every game."""
        return self.S[:, L.CURRENT]

    def rounds_scored(self) -> np.ndarray:
        """How many rounds every game has scored (its round is this plus one while it runs)."""
        return self.S[:, L.NRS]

    def in_round(self, scored: int) -> np.ndarray:
        """Which games are still playing the round after their ``scored`` first: not over, and no more
        rounds scored."""
        S = self.S
        return (S[:, L.OVER] == 0) & (S[:, L.NRS] == scored)

    def round_score(self, index: int) -> np.ndarray:
        """Every game's scores per team of round ``index`` (from 0; zeros where it is not scored yet):
        ``(games, teams)``."""
        at = L.RSC + L.MAXT * index
        return self.S[:, at:at + self.rules.teams]

    def standing(self) -> np.ndarray:
        """Every game's round score per team as it stands (:func:`standing`)."""
        return standing(self.S, self.R, self.rules.teams)

    def done(self, g: int) -> bool:
        return bool(self.S[g, L.OVER])

    def scores(self, g: int) -> List[int]:
        return self.S[g, L.SCORES:L.SCORES + self.rules.teams].tolist()

    def round_scores(self, g: int) -> List[List[int]]:
        s, nt = self.S[g], self.rules.teams
        return [s[L.RSC + L.MAXT * i:L.RSC + L.MAXT * i + nt].tolist() for i in range(int(s[L.NRS]))]

    def to_game(self, g: int) -> Game:
        """A reference :class:`Game` in the state of game ``g`` (history empty)."""
        return game_from_row(self.rules, self.S[g])


def standing(S: np.ndarray, R: np.ndarray, teams: int) -> np.ndarray:
    """Each row's round score per team as it stands, were the round to end now with no one going out:
    ``(rows, teams)`` in float64, the items of :func:`handfoot_env.scoring.round_breakdown` (and of the
    compiled ``end_round``) but ``went_out``: melded values, book and red-three bonuses, less the cards
    held in hands and feet."""
    n = int(R[L.R_N])
    out = np.zeros((S.shape[0], teams), dtype=np.float64)
    vals = L.VALS.astype(np.float64).copy()
    vals[RED3] = 0.0
    for t in range(teams):
        b = L.BC + 3 * t
        v = (S[:, L.MVAL + t] + S[:, b] * R[L.R_CB] + S[:, b + 1] * R[L.R_DB] + S[:, b + 2] * R[L.R_WB]
             + S[:, L.RED3S + t] * R[L.R_R3B]).astype(np.float64)
        for q in range(t, n, teams):
            held = (S[:, L.HANDS + NUM_KINDS * q:L.HANDS + NUM_KINDS * (q + 1)]
                    + S[:, L.FEET + NUM_KINDS * q:L.FEET + NUM_KINDS * (q + 1)])
            v -= held @ vals
            v += held[:, RED3] * R[L.R_R3L]
        out[:, t] = v
    return out


def _meld_rows(s: List[int], t: int) -> List[List[int]]:
    base = L.MELDS + 36 * t
    return [s[base + 3 * i:base + 3 * i + 3] for i in range(12)]


def _book(code: int):
    return (code // 512, code // 64 % 8, code // 8 % 8, code % 8)


def state_row(game: Game, out: Optional[np.ndarray] = None) -> np.ndarray:
    """The reference ``game`` written into the compiled core's layout (every field of the game
    state; caches and history apart).  ``ValueError``, ``out`` untouched, for an unfinished meld outside
    0 to 6 cards (at 7 a meld is a book): the kernels' meld tables hold no other."""
    for t, team in enumerate(game.melds):
        for slot, m in enumerate(team):
            if min(m) < 0 or sum(m) > 6:
                raise ValueError(f"team {t}'s meld in slot {slot} holds {list(m)} (naturals, twos, jokers): an "
                                 "unfinished meld has 0 to 6 cards (at 7 it is a book)")
    s = np.zeros(L.WIDTH, dtype=np.int64) if out is None else out
    s[:] = 0
    n, nt = game.n, game.num_teams
    s[L.ROUND], s[L.DEALER], s[L.MINIMUM] = game.round, game.dealer, game.minimum
    s[L.CURRENT], s[L.TURN], s[L.PHASE] = game.current, game.turn_player, game.phase
    s[L.ASKED] = game.asked
    s[L.PERM] = -1 if game.permission is None else int(game.permission)
    s[L.CANCELS], s[L.RACTIONS] = game.cancels, game.round_actions
    s[L.WENT_OUT] = -1 if game.went_out is None else game.went_out
    s[L.OVER] = game.game_over
    s[L.WINNER] = -1 if game.winner is None else game.winner
    s[L.EXTRA], s[L.ACOUNT], s[L.PROV_VALUE] = game.extra_round, game.action_count, game.prov_value
    if game.forced is not None:
        s[L.FORCED] = 1
        s[L.F_S:L.F_J + 1] = game.forced
    s[L.INCOMPLETE] = game.incomplete
    s[L.STOCK_LEN], s[L.DISC_LEN] = len(game.stock), len(game.discard)
    s[L.NRS], s[L.SEED] = len(game.round_scores), game.seed
    s[L.RSEEDS:L.RSEEDS + len(game.round_seeds)] = game.round_seeds
    for p in range(n):
        s[L.HANDS + NUM_KINDS * p:L.HANDS + NUM_KINDS * (p + 1)] = game.hands[p]
        if game.feet[p] is None:
            s[L.FOOTUP + p] = 1
        else:
            s[L.FEET + NUM_KINDS * p:L.FEET + NUM_KINDS * (p + 1)] = game.feet[p]
        s[L.PLAYED + p] = game.played_foot[p]
        s[L.HSIZE + p] = sum(game.hands[p])
    for t in range(nt):
        s[L.RED3S + t], s[L.OPENED + t], s[L.MVAL + t] = game.red3[t], game.opened[t], game.meld_value[t]
        s[L.BC + 3 * t:L.BC + 3 * t + 3] = game.book_counts[t]
        s[L.MELDS + 36 * t:L.MELDS + 36 * (t + 1)] = [x for m in game.melds[t] for x in m]
        s[L.NBOOKS + t] = len(game.books[t])
        for i, (sl, bn, bt, bj) in enumerate(game.books[t]):
            s[L.BOOKS + L.MAXB * t + i] = sl * 512 + bn * 64 + bt * 8 + bj
        s[L.SCORES + t] = game.scores[t]
    s[L.PROV:L.PROV + NUM_KINDS] = game.prov
    s[L.PEND:L.PEND + NUM_KINDS] = game.pending
    for i, row in enumerate(game.round_scores):
        s[L.RSC + L.MAXT * i:L.RSC + L.MAXT * i + nt] = row
    s[L.STOCK:L.STOCK + len(game.stock)] = game.stock
    s[L.DISC:L.DISC + len(game.discard)] = game.discard
    for k in game.discard:
        s[L.PILEC + k] += 1
    s[L.UP_CARD] = game.up_card
    from ..scoring import BREAKDOWN_KEYS
    for i, det in enumerate(game.round_details):
        d = L.RDET + L.RDET_W * i
        s[d], s[d + 1], s[d + 2] = det["round"], -1 if det["went_out"] is None else det["went_out"], det["actions"]
        for t, items in enumerate(det["teams"]):
            s[d + 3 + 8 * t:d + 11 + 8 * t] = [items[k] for k in BREAKDOWN_KEYS]
    return s


def game_from_row(rules, s: np.ndarray) -> Game:
    """A reference :class:`Game` holding the state of row ``s`` (the inverse of :func:`state_row`)."""
    from ..scoring import BREAKDOWN_KEYS
    g = Game(rules)
    r = g.rules
    n, nt = r.players, r.teams
    s = s.tolist() if isinstance(s, np.ndarray) else list(s)
    g.seed = s[L.SEED]
    g.round_seeds = s[L.RSEEDS:L.RSEEDS + r.rounds + 2]
    g.scores = s[L.SCORES:L.SCORES + nt]
    g.round_scores = [s[L.RSC + L.MAXT * i:L.RSC + L.MAXT * i + nt] for i in range(s[L.NRS])]
    g.round_details = []
    for i in range(s[L.NRS]):
        d = L.RDET + L.RDET_W * i
        teams = []
        for t in range(nt):
            items = dict(zip(BREAKDOWN_KEYS, s[d + 3 + 8 * t:d + 11 + 8 * t]))
            items["total"] = sum(items.values())
            teams.append(items)
        g.round_details.append({"round": s[d], "went_out": None if s[d + 1] < 0 else s[d + 1], "teams": teams,
                                "actions": s[d + 2]})
    g.game_over = bool(s[L.OVER])
    g.winner = None if s[L.WINNER] < 0 else s[L.WINNER]
    g.extra_round = bool(s[L.EXTRA])
    g.action_count = s[L.ACOUNT]
    g.history = []
    g.round = s[L.ROUND]
    g.dealer, g.minimum = s[L.DEALER], s[L.MINIMUM]
    g.hands = [s[L.HANDS + NUM_KINDS * p:L.HANDS + NUM_KINDS * (p + 1)] for p in range(n)]
    g.feet = [None if s[L.FOOTUP + p] else s[L.FEET + NUM_KINDS * p:L.FEET + NUM_KINDS * (p + 1)] for p in range(n)]
    g.stock = s[L.STOCK:L.STOCK + s[L.STOCK_LEN]]
    g.discard = s[L.DISC:L.DISC + s[L.DISC_LEN]]
    g.up_card = s[L.UP_CARD]
    g.pile_cache = None
    g.melds = [_meld_rows(s, t) for t in range(nt)]
    g.books = [[_book(c) for c in s[L.BOOKS + L.MAXB * t:L.BOOKS + L.MAXB * t + s[L.NBOOKS + t]]] for t in range(nt)]
    g.book_counts = [s[L.BC + 3 * t:L.BC + 3 * t + 3] for t in range(nt)]
    g.meld_value = s[L.MVAL:L.MVAL + nt]
    g.red3 = s[L.RED3S:L.RED3S + nt]
    g.opened = [bool(x) for x in s[L.OPENED:L.OPENED + nt]]
    g.table_cache = [None] * nt
    g.played_foot = [bool(x) for x in s[L.PLAYED:L.PLAYED + n]]
    g.prov = s[L.PROV:L.PROV + NUM_KINDS]
    g.prov_value = s[L.PROV_VALUE]
    g.forced = tuple(s[L.F_S:L.F_J + 1]) if s[L.FORCED] else None
    g.pending = s[L.PEND:L.PEND + NUM_KINDS]
    g.incomplete = s[L.INCOMPLETE]
    g.turn_player, g.current, g.phase = s[L.TURN], s[L.CURRENT], s[L.PHASE]
    g.asked = bool(s[L.ASKED])
    g.permission = None if s[L.PERM] < 0 else bool(s[L.PERM])
    g.cancels, g.round_actions = s[L.CANCELS], s[L.RACTIONS]
    g.went_out = None if s[L.WENT_OUT] < 0 else s[L.WENT_OUT]
    return g


__all__ = ["CoreBatch", "state_row", "game_from_row", "tables", "NUM_RANKS"]
