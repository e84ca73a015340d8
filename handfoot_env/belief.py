"""Worlds a seat cannot tell apart: the hidden cards dealt again from what a seat knows.

:func:`sample_worlds` turns one :class:`~handfoot_env.view.SeatView` into ``n`` full reference
:class:`~handfoot_env.engine.Game` states (a *world* each) such that ``seat_view(world, seat) ==
view``: the public table, the seat's own cards and the round's action record are those of the view,
and only what the seat has not seen (the other hands, every foot not picked up, the seat's own
foot among them, and the stock's order) is dealt again.  This is the primitive of determinized
search (PIMC, ISMCTS, SPARTA): play or search in each world, average over them.

What the seat knows, beyond its own cards and the table, is what the whole table knows of the
round: the cards each player is known to hold, which hands may hold a red three, every size
(:mod:`handfoot_env.public`; each game keeps it as actions apply, and the view carries it as
``view.public``; :func:`public_round` reads it, :func:`known_cards` its known cards).

The unseen cards are dealt uniformly over every assignment that keeps these constraints (the
default, ``weight_by=None``): the known cards go to their holders, the red threes to places that
may hold one, and the rest is one uniform shuffle.  This treats every consistent *current* state
as equally likely; it ignores what the other players' choices say about their cards (a player
who discarded a seven probably holds no pair of sevens).  ``weight_by=AGENT`` takes that into
account for the one choice that can be replayed exactly from a world: when the last action of the
round was another player's discard that ended a turn, each of ``oversample * n`` uniform worlds is
weighted by the probability that ``AGENT`` makes that discard in that world's state just before it
(:func:`discard_likelihood`), and ``n`` worlds are drawn by those weights (policy-based inference,
as Skat programs do it, restricted to the move whose state a world determines).

A world also holds what the view does not decide and no seat can see: the seeds of later deals
(drawn from ``rng``), the game seed, and nothing of earlier rounds but their scores
(``round_details`` is empty; ``history`` is this round's actions).  A world converts to a row of
the compiled core with :func:`handfoot_env.compiled.batch.state_row`.

>>> from handfoot_env.engine import Game
>>> from handfoot_env.view import seat_view
>>> g = Game("pagat"); g.reset(seed=3)
>>> v = seat_view(g, 0)
>>> all(seat_view(w, 0) == v for w in sample_worlds(v, 4, rng=1))
True
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from .actions import (ANSWER_NO, ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DISCARD_BASE, DISCARD_KINDS, MELD_BASE)
from .cards import JOKER, NUM_KINDS, NUM_RANKS, RED3, TWO, deck_counts
from .engine import ANSWER_PHASE, DRAW_PHASE, GAME_OVER, MELD_PHASE, Game
from .melds import meld_points
from .public import InconsistentView, PublicRound, check_view, follow
from .view import SeatView

Counts = Tuple[int, ...]
RngLike = Union[np.random.Generator, int, None]


def _rng(rng: RngLike) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator or an integer seed, got {type(rng).__name__}")


def public_round(view: SeatView) -> PublicRound:
    """What the whole table knows of ``view``'s round: the :class:`PublicRound` its game kept
    (``view.public``), or, for a view built by hand, the one its record gives from ``view.up_card``
    (:func:`handfoot_env.public.follow`).  Raises :class:`InconsistentView` when it does not agree
    with the view's pile, stock, feet, hand sizes and openings (a view that no game produces)."""
    if view.up_card < 0:
        raise InconsistentView("the view has no up card (up_card is -1): the round's piles cannot be rebuilt")
    pub = view.public
    if pub is None:
        pub = follow(None, None, view.rules, view.team_of, view.num_teams, view.up_card, view.minimum,
                     view.round_history).snapshot()
    return check_view(view, pub)


def known_cards(view: SeatView) -> Tuple[Counts, ...]:
    """Per player, 15 counts by card kind: cards that player must hold now (taken from the pile, or back
    from the table with ``cancel_melds``, and not melded or discarded since).  For the viewing seat they
    are a part of ``view.hand``."""
    return public_round(view).known


def unseen_cards(view: SeatView, public: Optional[PublicRound] = None) -> List[int]:
    """Counts by kind of the cards the seat has not seen and whose holder is not known: the decks
    less the seat's own cards, the table, the pile, the laid red threes and every player's known cards."""
    pub = public_round(view) if public is None else public
    left = deck_counts(view.rules.decks)

    def take(k: int, c: int, where: str) -> None:
        left[k] -= c
        if left[k] < 0:
            raise InconsistentView(f"the view shows more cards of kind {k} than the decks hold ({where})")

    for k in range(NUM_KINDS):
        take(k, view.hand[k] + view.pending[k], "the seat's hand")
    for k in view.discard:
        take(k, 1, "the pile")
    for t in range(view.num_teams):
        for s, (nn, tw, j) in enumerate(view.melds[t]):
            if s < NUM_RANKS:
                take(s, nn, "the melds")
            take(TWO, tw, "the melds")
            take(JOKER, j, "the melds")
        for s, nn, tw, j in view.books[t]:
            if s < NUM_RANKS:
                take(s, nn, "the books")
            take(TWO, tw, "the books")
            take(JOKER, j, "the books")
        take(RED3, view.red_threes[t], "the laid red threes")
    others_pending = view.turn_player != view.seat
    for k in range(NUM_KINDS):
        if others_pending:
            take(k, pub.pending[k], "the pile cards of the turn player's pickup")
        for p in range(view.num_players):
            if p != view.seat:
                take(k, pub.known[p][k], f"player {p}'s known cards")
    return left


def _skeleton(view: SeatView, pub: PublicRound, rng: np.random.Generator) -> Game:
    """A Game holding the view's public state and the seat's cards (the hidden places still empty)."""
    r = view.rules
    n, nt = view.num_players, view.num_teams
    g = Game(r)
    g.seed = int(rng.integers(2 ** 31))
    g.round_seeds = [int(x) for x in rng.integers(0, 2 ** 62, size=r.rounds + 2)]
    g.scores = list(view.scores)
    g.round_scores = [list(x) for x in view.round_scores]
    g.round_details = []
    g.game_over = view.game_over
    g.extra_round = view.round > r.rounds
    g.winner = None
    if view.game_over:
        best = max(view.scores)
        leaders = [t for t in range(nt) if view.scores[t] == best]
        g.winner = leaders[0] if len(leaders) == 1 else None
    g.history = list(view.round_history)
    g.round_actions = len(view.round_history)
    g.action_count = len(view.round_history)
    g.round = view.round
    g.dealer = (n - 1 + view.round - 1) % n
    g.minimum = view.minimum
    g.hands = [[0] * NUM_KINDS for _ in range(n)]
    g.hands[view.seat] = list(view.hand)
    g.feet = [None if view.foot_picked_up[p] else [0] * NUM_KINDS for p in range(n)]
    g.stock = []
    g.discard = list(view.discard)
    g.up_card = view.up_card
    g.pile_cache = None
    g.melds = [[list(m) for m in view.melds[t]] for t in range(nt)]
    g.books = [list(view.books[t]) for t in range(nt)]
    g.book_counts = [list(view.book_counts[t]) for t in range(nt)]
    g.meld_value = [sum(meld_points(s, *m) for s, m in enumerate(view.melds[t]))
                    + sum(meld_points(*b) for b in view.books[t]) for t in range(nt)]
    g.red3 = list(view.red_threes)
    g.opened = list(view.opened)
    g.table_cache = [None] * nt
    g.played_foot = list(view.played_foot)
    g.prov = list(pub.prov)
    g.prov_value = view.prov_value
    g.forced = tuple(view.forced) if view.forced is not None else None
    g.pending = list(view.pending) if view.turn_player == view.seat else list(pub.pending)
    g.incomplete = view.incomplete
    g.turn_player = view.turn_player
    g.current = view.current
    g.phase = view.phase
    g.asked = view.asked
    g.permission = view.permission
    g.cancels = view.cancels_used
    g.went_out = pub.went_out if view.game_over else None
    return g


def _viable(g: Game, seat: int) -> bool:
    """Whether the world's turn player (another seat) can go on as the record says it did: a turn
    player who must complete an opening or a pickup's meld can still do it, after the answer too
    when the seat itself is the partner asked to let them go out."""
    if g.phase in (GAME_OVER, DRAW_PHASE) or g.turn_player == seat:
        return True
    if g.phase == ANSWER_PHASE:
        g2 = g.clone()
        g2.current, g2.phase = g2.turn_player, MELD_PHASE
        g = g2
    legal = g.legal_actions()
    if not legal:
        return False
    if g.forced is not None or g.incomplete >= 0:
        return legal[-1] >= MELD_BASE
    return True


class WorldSampler:
    """The fixed part of :func:`sample_worlds` for one view (replay, unseen cards, the places to fill),
    built once and sampled many times."""

    def __init__(self, view: SeatView):
        if not isinstance(view, SeatView):
            raise ValueError(f"sample_worlds needs a SeatView, got {type(view).__name__}")
        self.view = view
        self.public = pub = public_round(view)
        left = unseen_cards(view, pub)
        # the places to fill: other players' hands (less their known cards), unpicked feet, the stock
        places: List[Tuple[str, int, int, bool]] = []     # (kind of place, player, free slots, may hold a red three)
        for p in range(view.num_players):
            if p == view.seat:
                continue
            free = view.hand_sizes[p] - sum(pub.known[p])
            if free < 0:
                raise InconsistentView(f"player {p} holds {view.hand_sizes[p]} cards but is known to hold "
                                       f"{sum(pub.known[p])}")
            places.append(("hand", p, free, pub.may_hold_red_three[p]))
        for p in range(view.num_players):
            if not view.foot_picked_up[p]:
                places.append(("foot", p, view.foot_sizes[p], True))
        places.append(("stock", -1, view.stock_size, True))
        slots = sum(x[2] for x in places)
        if slots != sum(left):
            raise InconsistentView(f"{sum(left)} cards are unseen but the hidden places hold {slots}")
        self.places = places
        self.owner = np.repeat(np.arange(len(places)), [x[2] for x in places])
        self.red_ok = np.flatnonzero(np.repeat([x[3] for x in places], [x[2] for x in places]))
        self.red = left[RED3]
        if self.red > len(self.red_ok):
            raise InconsistentView(f"{self.red} red threes are unseen but only {len(self.red_ok)} hidden cards "
                                   "may be one")
        self.others = np.repeat([k for k in range(NUM_KINDS) if k != RED3],
                                [left[k] for k in range(NUM_KINDS) if k != RED3]).astype(np.int64)
        self.starts = np.concatenate([[0], np.cumsum([x[2] for x in places])]).astype(np.int64)

    def one(self, rng: np.random.Generator) -> Game:
        """One world drawn uniformly over the consistent deals (no viability check)."""
        view, pub = self.view, self.public
        cards = np.empty(len(self.owner), dtype=np.int64)
        is_red = np.zeros(len(self.owner), dtype=bool)
        if self.red:
            is_red[self.red_ok[rng.choice(len(self.red_ok), size=self.red, replace=False)]] = True
        cards[is_red] = RED3
        cards[~is_red] = rng.permutation(self.others)
        g = _skeleton(view, pub, rng)
        for i, (kind, p, free, _) in enumerate(self.places):
            part = cards[self.starts[i]:self.starts[i + 1]]
            if kind == "stock":
                g.stock = part.tolist()
                continue
            counts = np.bincount(part, minlength=NUM_KINDS).tolist()
            if kind == "hand":
                g.hands[p] = [a + b for a, b in zip(counts, pub.known[p])]
            else:
                g.feet[p] = counts
        return g

    def sample(self, rng: np.random.Generator, tries: int = 64) -> Game:
        """One world in which the turn player can go on (:func:`_viable`), drawn by rejection
        (after ``tries`` refusals the last draw is kept)."""
        g = self.one(rng)
        for _ in range(tries):
            if _viable(g, self.view.seat):
                break
            g = self.one(rng)
        return g


def _this_turn(history: Sequence[Tuple[int, int]], p: int) -> List[Tuple[int, int]]:
    """The trailing actions of ``history`` that belong to ``p``'s turn (``p``'s own and the answers)."""
    out: List[Tuple[int, int]] = []
    for q, x in reversed(history):
        if q != p and x not in (ANSWER_YES, ANSWER_NO):
            break
        out.append((q, x))
    return out[::-1]


def discard_likelihood(agent: Any, world: Game, public: PublicRound) -> Optional[float]:
    """The probability that ``agent`` makes the round's last action in ``world`` (``public``: the
    :func:`public_round` of the view the world came from), when that action is a discard that ended
    another player's turn; else ``None``.  The state just before it is the world with the card put
    back in hand (and the foot put back when that discard emptied the hand).

    A policy agent (``agent.policy.logits``, as the trained agents have) gives its softmax
    probability over the legal actions; any other agent 1.0 if it plays the discard, else 0.05.
    """
    if not world.history or world.phase != DRAW_PHASE:
        return None
    p, a = world.history[-1]
    if not DISCARD_BASE <= a < MELD_BASE or world.turn_player != (p + 1) % world.n:
        return None
    k = DISCARD_KINDS[a - DISCARD_BASE]
    before = world.clone()
    before.history.pop()
    before.round_actions -= 1
    before.action_count -= 1
    before.discard.pop()
    before.pile_cache = None
    if public.last_picked_up_foot:
        before.feet[p] = before.hands[p]
        before.hands[p] = [0] * NUM_KINDS
    before.hands[p][k] += 1
    before.played_foot = list(public.played_foot_before_last)
    before.turn_player = before.current = p
    before.phase = MELD_PHASE
    turn = _this_turn(before.history, p)
    before.asked = any(x == ASK_GO_OUT for _, x in turn)
    before.permission = None
    for _, x in turn:
        if x in (ANSWER_YES, ANSWER_NO):
            before.permission = x == ANSWER_YES
    before.cancels = sum(1 for _, x in turn if x == CANCEL_MELDS)
    legal = before.legal_actions()
    if a not in legal:
        return 0.0
    from .observation import encode_observation, mask_of
    obs = encode_observation(before, p, legal)
    policy = getattr(agent, "policy", None)
    if policy is not None and hasattr(policy, "logits"):
        z = np.asarray(policy.logits(obs), dtype=np.float64)[legal]
        z = np.exp(z - z.max())
        return float(z[legal.index(a)] / z.sum())
    from .view import seat_view
    choice = agent.act({"observation": obs, "action_mask": mask_of(legal)}, seat_view(before, p, legal))
    return 1.0 if int(choice) == a else 0.05


def sample_worlds(view: SeatView, n: int, rng: RngLike = None, *, weight_by: Any = None, oversample: int = 4,
                  tries: int = 64) -> List[Game]:
    """``n`` reference ``Game`` states that ``view``'s seat cannot tell apart from the real one
    (``seat_view(world, view.seat) == view`` for each; see the module docstring).

    ``rng``: a ``numpy.random.Generator`` or an integer seed (the same seed gives the same worlds).
    ``weight_by``: an agent (with ``reset`` done for the seats it models) whose probability of the
    last discard weights ``oversample * n`` uniform worlds, from which ``n`` are drawn with
    replacement by weight; ``None`` (the default): uniform over the consistent deals.  ``tries``:
    redraws of a world in which the turn player could not go on as recorded (an opening or a
    pickup's meld that the drawn hand cannot complete).  :class:`InconsistentView` (a
    ``ValueError``) for a view that no game produces.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"sample_worlds needs a number of worlds n >= 0, got {n!r}")
    if isinstance(oversample, bool) or not isinstance(oversample, int) or oversample < 1:
        raise ValueError(f"oversample must be a positive integer, got {oversample!r}")
    gen = _rng(rng)
    sampler = WorldSampler(view)
    if weight_by is None or n == 0:
        return [sampler.sample(gen, tries) for _ in range(int(n))]
    pool = [sampler.sample(gen, tries) for _ in range(int(n) * oversample)]
    w = [discard_likelihood(weight_by, g, sampler.public) for g in pool]
    if w[0] is None:
        return pool[:n]
    weights = np.asarray(w, dtype=np.float64)
    if not weights.sum() > 0:
        return pool[:n]
    pick = gen.choice(len(pool), size=int(n), replace=True, p=weights / weights.sum())
    out, used = [], set()
    for i in pick.tolist():
        out.append(pool[i].clone() if i in used else pool[i])
        used.add(i)
    return out


__all__ = ["sample_worlds", "known_cards", "public_round", "unseen_cards", "discard_likelihood", "WorldSampler",
           "PublicRound", "InconsistentView"]
