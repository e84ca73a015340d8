"""What one seat may see: a read-only, structured view of a :class:`~handfoot_env.engine.Game`.

Heuristic agents are handed a :class:`SeatView` and nothing else.  It holds
exactly the information a player at a real table has (with perfect recall of
everything that was played face up):

======================  =====================================================
field                   meaning
======================  =====================================================
``seat``, ``team``      the viewing player and its team
``hand``                counts over the 15 card kinds of the cards this seat
                        holds now (its hand, or its foot once picked up)
``in_foot``             whether this seat has picked up its foot
``pending``             pile cards this seat took before its team opened (they
                        join the hand when the opening is complete)
``hand_sizes``          cards held by every player (public)
``foot_picked_up``      per player; ``foot_sizes`` per player (0 once picked up)
``played_foot``         per player: has played from the foot (public)
``melds``               per team, per slot (11 = wild meld), the unfinished meld
                        as ``(naturals, twos, jokers)``
``books``               per team, the books as ``(slot, naturals, twos, jokers)``
``book_counts``         per team ``(clean, dirty, wild)``
``red_threes``          per team, red threes laid; ``opened`` per team
``discard``             the whole discard pile, bottom to top (every card in it
                        was seen face up); ``discard_top`` (-1 if empty),
                        ``pile_blocked``
``up_card``             the card turned face up at the deal to start this
                        round's pile (it may since have been taken with the
                        pile; with ``round_history`` it gives every pile
                        this round, and so every card each pickup took)
``stock_size``          cards left in the stock (its order is never shown)
``round``, ``minimum``  round number (1-based) and its first-meld minimum
``scores``              cumulative team scores; ``round_scores`` per finished round
``phase``               0 draw, 1 meld, 2 answer, 3 game over (``phase_name``)
``current``             the player to act; ``turn_player`` whose turn it is
``prov_value``          value of the provisional melds of the unopened turn
                        player's team; ``forced`` the pickup trio of an unopened
                        team (or ``None``); ``incomplete`` slot of an unfinished
                        pickup overflow meld (-1 if none)
``asked``, ``permission`` the go-out question this turn and its answer
``cancels_used``        ``cancel_melds`` used this turn
``round_history``       ``(player, action id)`` of every action this round; every
                        action in Hand and Foot is public (a draw shows no card)
``legal_actions``       the legal action ids when this seat is to act, else ``()``
``legal_names``         their names
======================  =====================================================

It never holds another player's cards, any unseen foot, or the stock order.
:func:`seat_view` builds one; ``SeatView`` objects compare equal exactly when
they show the same information.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Tuple

from .actions import ACTION_NAMES
from .cards import NUM_KINDS, NUM_SLOTS
from .config import RuleConfig
from .engine import PHASE_NAMES, Game
from .public import Later, PublicRound

Counts = Tuple[int, ...]
Meld = Tuple[int, int, int]


@dataclass(frozen=True)
class SeatView:
    """Everything ``seat`` may know about the game (see the module docstring)."""

    seat: int
    team: int
    num_players: int
    num_teams: int
    rules: RuleConfig
    team_of: Tuple[int, ...]
    teammates: Tuple[int, ...]
    # own cards
    hand: Counts
    in_foot: bool
    pending: Counts
    # public per player
    hand_sizes: Tuple[int, ...]
    foot_picked_up: Tuple[bool, ...]
    foot_sizes: Tuple[int, ...]
    played_foot: Tuple[bool, ...]
    # public per team
    melds: Tuple[Tuple[Meld, ...], ...]
    books: Tuple[Tuple[Tuple[int, int, int, int], ...], ...]
    book_counts: Tuple[Tuple[int, int, int], ...]
    red_threes: Tuple[int, ...]
    opened: Tuple[bool, ...]
    # table
    discard: Tuple[int, ...]
    discard_top: int
    pile_blocked: bool
    stock_size: int
    round: int
    minimum: int
    scores: Tuple[int, ...]
    round_scores: Tuple[Tuple[int, ...], ...]
    phase: int
    phase_name: str
    current: int
    turn_player: int
    prov_value: int
    forced: Optional[Tuple[int, int, int, int]]
    incomplete: int
    asked: bool
    permission: Optional[bool]
    cancels_used: int
    round_history: Tuple[Tuple[int, int], ...]
    game_over: bool
    # decisions
    legal_actions: Tuple[int, ...]
    # table (added after the fields above, so that positional construction keeps its meaning)
    up_card: int = -1
    #: the game's public record of the round (see :attr:`public`): a PublicRound, a
    #: :class:`~handfoot_env.public.Later` that reads it when first asked, or None (a view built by hand).
    #: Not part of a view's equality: it follows from the fields above.
    _public: Any = field(default=None, compare=False, repr=False)

    @property
    def public(self) -> Optional[PublicRound]:
        """What the whole table knows of the round (:class:`~handfoot_env.public.PublicRound`), as the game
        keeps it; None for a view built by hand (:func:`handfoot_env.belief.public_round` follows its
        record then)."""
        p = self._public
        if p is not None and not isinstance(p, PublicRound):
            p = p(self)
            object.__setattr__(self, "_public", p)
        return p

    @property
    def to_act(self) -> bool:
        """Whether this seat is the player to act now."""
        return bool(self.legal_actions)

    @property
    def legal_names(self) -> Tuple[str, ...]:
        return tuple(ACTION_NAMES[a] for a in self.legal_actions)

    @property
    def hand_size(self) -> int:
        return sum(self.hand)

    @property
    def discard_size(self) -> int:
        return len(self.discard)

    def opponents(self) -> Tuple[int, ...]:
        """Players of other teams, in turn order starting after this seat."""
        n = self.num_players
        return tuple((self.seat + k) % n for k in range(1, n)
                     if self.team_of[(self.seat + k) % n] != self.team)


def seat_view(game: Game, seat: int, legal: Optional[Sequence[int]] = None) -> SeatView:
    """The :class:`SeatView` of ``seat`` (0-based player index) in ``game``; ``legal``: the legal list of
    the player to act when the caller has it at hand (``game.legal_actions()`` otherwise)."""
    g = game
    if not 0 <= seat < g.n:
        raise ValueError(f"seat must be between 0 and {g.n - 1}, got {seat!r}")
    team = g.team_of[seat]
    n = g.n
    # pending pile cards belong to the turn player of an unopened team
    pending = tuple(g.pending) if (g.turn_player == seat and any(g.pending)) else (0,) * NUM_KINDS
    feet = g.feet
    over = g.phase == 3
    to_act = (not over) and g.current == seat
    hist = g.history[len(g.history) - g.round_actions:] if g.round_actions else []
    return SeatView(
        seat=seat,
        team=team,
        num_players=n,
        num_teams=g.num_teams,
        rules=g.rules,
        team_of=tuple(g.team_of),
        teammates=tuple(g.teammates[seat]),
        hand=tuple(g.hands[seat]),
        in_foot=feet[seat] is None,
        pending=pending,
        hand_sizes=tuple(sum(h) for h in g.hands),
        foot_picked_up=tuple(f is None for f in feet),
        foot_sizes=tuple(0 if f is None else sum(f) for f in feet),
        played_foot=tuple(g.played_foot),
        melds=tuple(tuple(tuple(m) for m in t) for t in g.melds),
        books=tuple(tuple(b) for b in g.books),
        book_counts=tuple(tuple(b) for b in g.book_counts),
        red_threes=tuple(g.red3),
        opened=tuple(g.opened),
        discard=tuple(g.discard),
        discard_top=g.discard[-1] if g.discard else -1,
        pile_blocked=g.pile_blocked(),
        stock_size=len(g.stock),
        round=g.round,
        minimum=g.minimum,
        scores=tuple(g.scores),
        round_scores=tuple(tuple(r) for r in g.round_scores),
        phase=g.phase,
        phase_name=PHASE_NAMES[g.phase],
        current=g.current,
        turn_player=g.turn_player,
        prov_value=g.prov_value,
        forced=tuple(g.forced) if g.forced is not None else None,
        incomplete=g.incomplete,
        asked=g.asked,
        permission=g.permission,
        cancels_used=g.cancels,
        round_history=tuple(hist),
        game_over=bool(g.game_over),
        legal_actions=(tuple(g.legal_actions()) if legal is None else tuple(legal)) if to_act else (),
        up_card=g.up_card,
        _public=Later(g, (g.seed, g.round, len(g.history) - g.round_actions)),
    )


__all__ = ["SeatView", "seat_view", "NUM_SLOTS"]
