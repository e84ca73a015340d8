"""What the whole table knows of a round: the public record kept as actions apply.

Beyond the cards on the table, every seat knows (from the round's record since the deal):

* **the pile at every moment**, and so every card each pickup took: cards a player took from the
  pile and has not melded or discarded since are still in that player's hand (``known``, a lower
  bound per card kind; a meld or discard of a kind first uses up the known copies; cards taken back
  with ``cancel_melds`` are known too).  Pile cards of an unopened team's pickup that wait for the
  opening (``Game.pending``) are known exactly;
* **red threes**: a player holding a red three must lay it before anything else in a turn, so a
  hand that has been played from since it last took in unseen cards (the deal, a draw, a red
  three's replacement, the foot) holds none;
* **sizes**: every hand, foot and the stock have public sizes.

Each game (both cores) keeps a :class:`PublicRecord` of its round and brings it up to date when a
seat's view is read; the view carries its :class:`PublicRound` (``SeatView.public``), which
determinized search samples worlds from (:mod:`handfoot_env.belief`).  As OpenSpiel's gin rummy
keeps the cards each player is known to hold as actions apply.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from .actions import (ANSWER_NO, ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DISCARD_BASE, DISCARD_KINDS, DRAW,
                      LAY_RED_THREE, MELD_BASE, MELD_SPECS, PICKUP)
from .cards import JOKER, NUM_KINDS, NUM_RANKS, TWO, VALUES
from .melds import add_provisional

Counts = Tuple[int, ...]


class InconsistentView(ValueError):
    """A view that no deal can produce (edited by hand, or from another rule set); the message says why."""


@dataclass(frozen=True)
class PublicRound:
    """What the round's public record says about the hidden cards (see :func:`public_round`)."""

    #: per player, cards that player must hold (taken from the pile or back from the table, not played since)
    known: Tuple[Counts, ...]
    #: pile cards waiting for the turn player's opening (``Game.pending``), exactly
    pending: Counts
    #: the turn player's provisional melds from hand (``Game.prov``)
    prov: Counts
    #: per player, whether the cards held may include a red three
    may_hold_red_three: Tuple[bool, ...]
    #: per player, hand size replayed from the record (checked against the view)
    hand_sizes: Tuple[int, ...]
    #: the player who went out this round, or None
    went_out: Optional[int]
    #: per player, played from the foot before the round's last action
    played_foot_before_last: Tuple[bool, ...] = ()
    #: the round's last action was a discard that emptied a hand and so picked up the foot
    last_picked_up_foot: bool = False
    #: the pile, the stock's size, the feet picked up and the teams opened, as the record gives them
    #: (:func:`check_view` holds a view to them)
    pile: Tuple[int, ...] = ()
    stock_size: int = 0
    foot_picked_up: Tuple[bool, ...] = ()
    opened: Tuple[bool, ...] = ()


class PublicRecord:
    """What the whole table knows of a round, kept one action at a time from the deal (:meth:`action`);
    :meth:`snapshot` gives it as a :class:`PublicRound`.  Each game keeps one and brings it up to date
    when a seat's view is read (``Game.public_round``, ``CompiledGame.public_round``)."""

    def __init__(self, rules: Any, team_of: Sequence[int], num_teams: int, up_card: int, minimum: int):
        r = self.rules = rules
        n = self.n = len(team_of)
        self.minimum = minimum
        self.team_of = tuple(team_of)
        self.at = 0                                 # actions of the round applied
        self.key: Any = None                        # the round it follows (see follow)
        self._snap: Optional[PublicRound] = None
        self.take = None if r.pile_take == "all" else int(r.pile_take)
        self.pile: List[int] = [up_card]
        self.stock = r.total_cards - n * (r.hand_size + r.foot_size) - 1
        self.hs = [r.hand_size] * n
        self.foot_up = [False] * n
        self.known = [[0] * NUM_KINDS for _ in range(n)]
        self.may_red = [True] * n
        self.opened = [False] * num_teams
        self.prov = [0] * NUM_KINDS
        self.prov_value = 0
        self.forced_value = 0
        self.pending = [0] * NUM_KINDS
        self.went_out: Optional[int] = None
        self.played = [False] * n
        self.played_before = tuple(self.played)
        self.foot_at_last = False

    # ------------------------------------------------------------------ helpers
    def use(self, p: int, k: int, c: int) -> None:
        """``p`` played ``c`` cards of kind ``k``: known cards first."""
        self.known[p][k] = max(0, self.known[p][k] - c)

    def emptied(self, p: int) -> bool:
        """The hand is empty: pick up the foot (True) or go out."""
        if self.hs[p]:
            return False
        if not self.foot_up[p]:
            self.foot_up[p] = True
            self.hs[p] = self.rules.foot_size
            return True
        self.went_out = p
        return False

    def open_team(self, p: int) -> None:
        """``p``'s team opens: the pending pile cards go to ``p``'s hand, the provisional melds stand."""
        self.opened[self.team_of[p]] = True
        self.hs[p] += sum(self.pending)
        for k in range(NUM_KINDS):
            self.known[p][k] += self.pending[k]
        self.pending = [0] * NUM_KINDS
        self.prov = [0] * NUM_KINDS
        self.prov_value = self.forced_value = 0

    # ------------------------------------------------------------------ actions
    def action(self, p: int, a: int) -> None:
        """Player ``p`` played action ``a`` (InconsistentView when no game could have)."""
        self.at += 1
        self._snap = None
        if not 0 <= p < self.n:
            raise InconsistentView(f"round_history names player {p}, outside 0 to {self.n - 1}")
        self.played_before = tuple(self.played)
        if self.foot_up[p] and (a >= DISCARD_BASE or a == PICKUP):
            self.played[p] = True
        if a >= MELD_BASE:
            refreshed = self.meld(p, a)
        elif a >= DISCARD_BASE:
            refreshed = self.discard(p, a)
        elif a == DRAW:
            self.hs[p] += 2
            self.stock -= 2
            refreshed = True
        elif a == LAY_RED_THREE:
            self.hs[p] -= 1
            if self.stock:
                self.hs[p] += 1
                self.stock -= 1
            self.emptied(p)
            refreshed = True
        elif a == PICKUP:
            refreshed = self.pickup(p)
        elif a == CANCEL_MELDS:
            self.hs[p] += sum(self.prov)
            for k in range(NUM_KINDS):
                self.known[p][k] += self.prov[k]
            self.prov = [0] * NUM_KINDS
            self.prov_value = self.forced_value
            refreshed = False
        elif a in (ASK_GO_OUT, ANSWER_YES, ANSWER_NO):
            refreshed = False
        else:
            raise InconsistentView(f"round_history holds action id {a}, which is no action")
        if a not in (ANSWER_YES, ANSWER_NO):
            # an action of the turn player: legal only without a red three in hand (but laying one)
            self.may_red[p] = refreshed or a == DRAW or a == LAY_RED_THREE

    def meld(self, p: int, a: int) -> bool:
        s, nn, t, j = MELD_SPECS[a - MELD_BASE]
        if s < NUM_RANKS:
            self.use(p, s, nn)
        self.use(p, TWO, t)
        self.use(p, JOKER, j)
        self.hs[p] -= nn + t + j
        self.played[p] = self.played[p] or self.foot_up[p]
        if not self.opened[self.team_of[p]]:
            self.prov_value += add_provisional(self.prov, s, nn, t, j)
            if self.prov_value >= self.minimum:
                self.open_team(p)
        return self.emptied(p)

    def discard(self, p: int, a: int) -> bool:
        k = DISCARD_KINDS[a - DISCARD_BASE]
        self.use(p, k, 1)
        self.hs[p] -= 1
        self.pile.append(k)
        refreshed = self.emptied(p)
        self.foot_at_last = refreshed
        self.prov, self.prov_value, self.forced_value = [0] * NUM_KINDS, 0, 0
        return refreshed

    def pickup(self, p: int) -> bool:
        if not self.pile:
            raise InconsistentView("round_history takes an empty pile")
        pile, take = self.pile, self.take
        top = pile[-1]
        if take and len(pile) > take:
            taken, self.pile = pile[-take:], pile[:-take]
        else:
            taken, self.pile = pile, []
        self.use(p, top, 2)
        self.hs[p] -= 2
        if self.opened[self.team_of[p]]:
            self.hs[p] += len(taken) - 1
            for k in taken[:-1]:
                self.known[p][k] += 1
        else:
            for k in taken[:-1]:
                self.pending[k] += 1
            self.forced_value = 3 * VALUES[top]
            self.prov_value += self.forced_value
            if self.prov_value >= self.minimum:
                self.open_team(p)
        return self.emptied(p)

    # ------------------------------------------------------------------ the end
    def snapshot(self) -> PublicRound:
        """The round as the table knows it after the actions applied so far."""
        snap = self._snap
        if snap is None:
            snap = self._snap = PublicRound(
                known=tuple(map(tuple, self.known)), pending=tuple(self.pending), prov=tuple(self.prov),
                may_hold_red_three=tuple(self.may_red), hand_sizes=tuple(self.hs), went_out=self.went_out,
                played_foot_before_last=self.played_before, last_picked_up_foot=self.foot_at_last,
                pile=tuple(self.pile), stock_size=self.stock, foot_picked_up=tuple(self.foot_up),
                opened=tuple(self.opened))
        return snap


def follow(record: Optional[PublicRecord], key: Any, rules: Any, team_of: Sequence[int], num_teams: int,
           up_card: int, minimum: int, history: Sequence[Tuple[int, int]], start: int = 0) -> PublicRecord:
    """``record`` brought up to the end of ``history[start:]`` (the round's actions so far); a new record
    from the deal when ``record`` is None, kept for another round (``key``: what names the round in its
    game) or ahead of the history."""
    if record is None or record.key != key or start + record.at > len(history):
        record = PublicRecord(rules, team_of, num_teams, up_card, minimum)
        record.key = key
    for i in range(start + record.at, len(history)):
        p, a = history[i]
        record.action(p, a)
    return record


class Later:
    """A game's record of a round as a view of it will read it, when first asked (``SeatView.public``):
    most views are never asked, so a view costs nothing more for it.  ``key`` names the round as
    :func:`follow` does; the record is followed through the view's own ``round_history``."""

    __slots__ = ("game", "key")

    def __init__(self, game: Any, key: Any):
        self.game, self.key = game, key

    def __call__(self, view: Any) -> PublicRound:
        rec = follow(self.game._public, self.key, view.rules, view.team_of, view.num_teams, view.up_card,
                     view.minimum, view.round_history)
        self.game._public = rec
        return rec.snapshot()


def check_view(view: Any, pub: PublicRound) -> PublicRound:
    """``pub`` when it agrees with ``view``'s public fields; InconsistentView naming the first that does not
    (a view edited by hand, or from another game)."""
    if tuple(pub.pile) != tuple(view.discard):
        raise InconsistentView("the round's record, replayed from the up card, does not give the view's pile")
    if pub.stock_size != view.stock_size:
        raise InconsistentView(f"the round's record leaves {pub.stock_size} cards in the stock, the view shows "
                               f"{view.stock_size}")
    if tuple(pub.foot_picked_up) != tuple(view.foot_picked_up):
        raise InconsistentView("the round's record and the view disagree on which feet were picked up")
    if tuple(pub.hand_sizes) != tuple(view.hand_sizes):
        raise InconsistentView(f"the round's record gives hand sizes {list(pub.hand_sizes)}, the view "
                               f"{list(view.hand_sizes)}")
    if tuple(pub.opened) != tuple(view.opened):
        raise InconsistentView("the round's record and the view disagree on which teams have opened")
    return pub


__all__ = ["PublicRecord", "PublicRound", "InconsistentView", "Later", "follow", "check_view"]
