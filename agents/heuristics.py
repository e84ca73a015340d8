"""Baseline players: :class:`RandomAgent` and :class:`GreedyAgent`, and helpers shared with
:class:`agents.strategic.StrategicAgent`.

Both see only their seat's :class:`~handfoot_env.view.SeatView` and choose among
``view.legal_actions``.

``RandomAgent``
    every decision: uniform over the legal actions (its own seeded ``random.Random``).

``GreedyAgent`` (a simple rule of thumb per phase)
    red three   lay it (the only legal action).
    draw        take the pile whenever it legally can, else draw two.
    meld        ask to go out as soon as asking is legal and the team has the required books;
                then meld whatever it legally can, the meld action that adds the most cards
                first (ties: the most card value); it does not care whether wilds end up in
                natural melds.  Provisional melds that cannot open are taken back.
    discard     the least useful card: a black three first, then a natural it holds fewest of
                with no unfinished team meld of its rank (highest value first, to shed points),
                wild cards last.
    answer      always yes.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

from handfoot_env.actions import (ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DISCARD_BASE, DISCARD_KINDS, DRAW,
                                  MELD_BASE, MELD_SPECS, PICKUP)
from handfoot_env.cards import BLACK3, JOKER, TWO, VALUES
from handfoot_env.view import SeatView

from .base import Agent, RuleAgent
from handfoot_env.melds import meld_points

MeldOption = Tuple[int, int, int, int, int]     # (action id, slot, naturals, twos, jokers)


def meld_options(legal: Iterable[int]) -> List[MeldOption]:
    """The legal meld actions, decoded as (action id, slot, naturals, twos, jokers)."""
    return [(a,) + MELD_SPECS[a - MELD_BASE] for a in legal if a >= MELD_BASE]


def discard_options(legal: Iterable[int]) -> List[Tuple[int, int]]:
    """The legal discards as (action id, card kind)."""
    return [(a, DISCARD_KINDS[a - DISCARD_BASE]) for a in legal if DISCARD_BASE <= a < MELD_BASE]




def books_ok(view: SeatView, extra: Sequence[int] = (0, 0, 0)) -> bool:
    """Whether the viewing seat's team has (with ``extra`` more) the books needed to go out this round."""
    nc, nd, nw = view.rules.going_out_books(view.round)
    c = view.book_counts[view.team]
    return c[0] + extra[0] >= nc and c[1] + extra[1] >= nd and c[2] + extra[2] >= nw


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    name = "random"

    def act(self, observation, view: SeatView) -> int:
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"{self.name}: seat {view.seat} is not to act")
        return legal[self.rng.randrange(len(legal))]


class GreedyAgent(RuleAgent):
    """Takes every pile, melds everything as early as it can, sheds the least useful card."""

    name = "greedy"

    def _answer(self, view: SeatView) -> int:
        legal = view.legal_actions
        return ANSWER_YES if ANSWER_YES in legal else legal[0]

    def _draw(self, view: SeatView, legal) -> int:
        if PICKUP in legal:
            return PICKUP
        return DRAW if DRAW in legal else legal[0]

    def _meld_phase(self, view: SeatView, legal) -> int:
        if ASK_GO_OUT in legal and books_ok(view):
            return ASK_GO_OUT
        melds = meld_options(legal)
        if melds:
            best = max(melds, key=lambda m: (m[2] + m[3] + m[4], meld_points(*m[1:]), -m[0]))
            return best[0]
        discards = discard_options(legal)
        if discards:
            return self._discard(view, discards)
        if CANCEL_MELDS in legal:
            return CANCEL_MELDS
        return legal[0]

    @staticmethod
    def _discard(view: SeatView, discards: List[Tuple[int, int]]) -> int:
        hand = view.hand
        team_melds = view.melds[view.team]

        def usefulness(k: int) -> Tuple[int, int, int]:
            if k == BLACK3:
                return (0, 0, 0)
            if k in (TWO, JOKER):
                return (3, hand[k], VALUES[k])
            has_meld = 1 if sum(team_melds[k]) else 0
            return (1 + has_meld, hand[k], -VALUES[k])

        return min(discards, key=lambda d: (usefulness(d[1]), d[0]))[0]


__all__ = ["RandomAgent", "GreedyAgent", "meld_options", "discard_options", "books_ok"]
