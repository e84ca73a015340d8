"""The Hand and Foot rules engine (docs/rules.md; no PettingZoo here).

Rules source: docs/rules.md (Pagat's partnership game, contributed by
Bill Whitnack, with the clarifications marked there).  Every rule that groups
vary is a field of :class:`~handfoot_env.config.RuleConfig`.

State is plain Python: every multiset of cards (a hand, a foot, a meld) is a
count list over the 15 card kinds of :mod:`handfoot_env.cards`; the stock and
the pile are lists of kinds.  A :class:`Game` is cheap to :meth:`Game.clone`.

Turn structure (one ``Phase`` at a time):

``DRAW``    the player to act draws two (``draw``) or takes the pile (``pickup``).
``MELD``    melds (``meld:R:N:T:J``), ``cancel_melds``, ``ask_go_out``, and the
            closing ``discard:C``, which ends the turn.
``ANSWER``  the asked teammate says ``answer_yes`` or ``answer_no``; play returns
            to the asker, still in ``MELD``.
``GAME_OVER``

Whenever the player whose turn it is holds a red three, ``lay_red_three`` is the
only legal action (docs/rules.md 4.1).

Engine choices beyond docs/rules.md (documented in docs/rules_engine.md):

* ``cancel_melds`` may be used once per turn.  After it, a provisional meld is
  legal only if the opening can still be completed; this bounds the game
  length and keeps every listed action free of dead ends.
* A meld that leaves an incomplete meld (a pickup overflow) or provisional
  melds must not empty the hand; in the foot, a meld or a pickup must leave two
  cards unless the player may go out this turn with the cards held (then one or
  zero); the books are counted when the last card leaves the foot.
* While a pickup overflow meld is incomplete, other melds are legal only if
  the overflow can still be completed afterwards.
* Asking to go out needs an opened team.
* Round safety net: if the player to act has no legal action at all (a foot of
  only red threes with an empty stock), the round ends as a stock-out.
"""
from __future__ import annotations

import random
from typing import Dict, List, Optional, Sequence, Tuple

from .actions import (
    ACTION_NAMES,
    ANSWER_NO,
    ANSWER_YES,
    ASK_GO_OUT,
    CANCEL_MELDS,
    DISCARD_ACTION,
    DISCARD_BASE,
    DISCARD_KINDS,
    DRAW,
    LAY_RED_THREE,
    MELD_BASE,
    MELD_SPECS,
    NUM_ACTIONS,
    PICKUP,
    action_index,
)
from .cards import (
    BLACK3,
    CODES,
    JOKER,
    NUM_KINDS,
    NUM_RANKS,
    NUM_SLOTS,
    RED3,
    SLOT_CODES,
    TWO,
    VALUES,
    WILD_SLOT,
    codes_of,
    deck_counts,
    kind_of,
)
from .config import RuleConfig, RulesLike, check_seed, load_rules
from .melds import (
    BOOK_SIZE,
    CLEAN,
    DIRTY,
    WILD,
    add_provisional,
    book_type,
    fresh_meld_table,
    max_meld_value,
    meld_points,
    opening_bounds,
    structural_ids,
    wild_ok,
)
from .public import PublicRound, follow
from .scoring import team_round_score
from .melds import go_out_search

DRAW_PHASE, MELD_PHASE, ANSWER_PHASE, GAME_OVER = 0, 1, 2, 3
PHASE_NAMES = ("draw", "meld", "answer", "game_over")
MAX_CANCELS_PER_TURN = 1


class IllegalActionError(ValueError):
    """An action that the rules do not allow now; the message names it and why (``action``, ``reason``).

    It pickles with its fields, and ``IllegalActionError(error)`` is a copy of ``error``: Gymnasium's
    ``AsyncVectorEnv`` raises a worker's exception in the parent as ``type(error)(error)``.
    """

    def __init__(self, action, reason: Optional[str] = None):
        if reason is None and isinstance(action, IllegalActionError):
            action, reason = action.action, action.reason
        self.action = action
        self.reason = reason = "not allowed now" if reason is None else reason
        name = ACTION_NAMES[action] if isinstance(action, int) and 0 <= action < NUM_ACTIONS else repr(action)
        super().__init__(f"illegal action {name!r}: {reason}")

    def __reduce__(self):
        return type(self), (self.action, self.reason)


def shoe_kinds(rules: RuleConfig, shoe: Optional[Sequence[str]], round: int = 1,
               scores: Optional[Sequence[int]] = None) -> Tuple[List[int], int, List[int]]:
    """``Game.reset``'s checks of its arguments: (the stacked shoe top as kinds, the round, the scores).

    ``ValueError`` naming the problem for a bad round, scores list or shoe.
    """
    r = rules
    nt = r.teams
    if isinstance(round, bool) or not isinstance(round, int) or not 1 <= round <= r.rounds:
        raise ValueError(f"round must be an integer from 1 to {r.rounds}, got {round!r}")
    if scores is None:
        scores = [0] * nt
    if isinstance(scores, (str, bytes)) or not isinstance(scores, Sequence):
        raise ValueError(f"scores must be a list of {nt} integers (one per team), "
                         f"got {type(scores).__name__}")
    scores = list(scores)
    if len(scores) != nt or not all(isinstance(s, int) and not isinstance(s, bool) for s in scores):
        raise ValueError(f"scores must be {nt} integers (one per team), got {scores!r}")
    counts = deck_counts(r.decks)
    top: List[int] = []
    if shoe is not None and (isinstance(shoe, (str, bytes)) or not isinstance(shoe, Sequence)):
        raise ValueError(f"shoe must be a list of card codes such as ['K', '3R', 'JK'], got {type(shoe).__name__}")
    if shoe is not None and len(shoe) > sum(counts):
        raise ValueError(f"shoe lists {len(shoe)} cards, but the {r.decks} decks hold {sum(counts)}")
    for i, code in enumerate(shoe or ()):
        if not isinstance(code, str):
            raise ValueError(f"shoe card at position {i} must be a card code string, got {type(code).__name__}")
        k = kind_of(code)
        if counts[k] == 0:
            raise ValueError(
                f"shoe card {code!r} at position {i}: the {r.decks} decks hold only "
                f"{deck_counts(r.decks)[k]} of it")
        counts[k] -= 1
        top.append(k)
    return top, round, scores


def _piles(order: Sequence[int], pos: int, n: int, size: int) -> List[List[int]]:
    """``n`` piles of ``size`` cards dealt in turn from ``order[pos:]``, as counts by card kind."""
    piles = []
    for q in range(n):
        c = [0] * NUM_KINDS
        for k in order[pos + q * size:pos + (q + 1) * size]:
            c[k] += 1
        piles.append(c)
    return piles


class Game:
    """One game of Hand and Foot under a :class:`RuleConfig`.

    >>> g = Game("pagat"); g.reset(seed=1)
    >>> g.legal_actions()[:1]
    [0]
    """

    def __init__(self, rules: RulesLike = None, **overrides):
        self.rules: RuleConfig = load_rules(rules, **overrides)
        r = self.rules
        self.n = r.players
        self.num_teams = r.teams
        self.team_of = tuple(p % r.teams for p in range(self.n))
        self.teammates = tuple(r.teammates(p) for p in range(self.n))
        self._double = r.wild_limit == "double"
        self._take = None if r.pile_take == "all" else int(r.pile_take)
        self.seed = None
        self.phase = GAME_OVER
        self._public = None                  # the public record of the round (public_round)

    # ------------------------------------------------------------------ setup
    def reset(self, seed: Optional[int] = None, shoe: Optional[Sequence[str]] = None,
              round: int = 1, scores: Optional[Sequence[int]] = None) -> None:
        """Start a new game.  ``shoe`` stacks the top of the first deal's shoe.

        Atomic: every argument is checked, and the first deal built, before any state
        changes; a ``ValueError`` leaves the game exactly as it was.
        """
        if seed is None:
            seed = random.SystemRandom().randrange(2 ** 31)
        seed = check_seed(seed)
        top, round, scores = shoe_kinds(self.rules, shoe, round, scores)
        r = self.rules
        master = random.Random(seed)
        # one seed per deal, so that a clone needs no random-generator state
        round_seeds = [master.randrange(2 ** 62) for _ in range(r.rounds + 2)]
        order = self._make_shoe(top, random.Random(round_seeds[round - 1]))
        self.seed = seed
        self.round_seeds = round_seeds
        self.scores = scores
        self.round_scores: List[List[int]] = []
        self.round_details: List[dict] = []
        self.game_over = False
        self.winner: Optional[int] = None
        self.extra_round = False
        self.action_count = 0
        self.history: List[Tuple[int, int]] = []
        self._public = None                  # the public record of the round (public_round)
        self.round = round
        self._deal(order)

    def _make_shoe(self, top: List[int], rng: random.Random) -> List[int]:
        """The shoe of a deal: the kinds ``top`` (checked by :func:`shoe_kinds`), then the rest shuffled."""
        counts = deck_counts(self.rules.decks)
        for k in top:
            counts[k] -= 1
        rest = [k for k in range(NUM_KINDS) for _ in range(counts[k])]
        rng.shuffle(rest)
        return list(top) + rest

    def _deal(self, order: List[int]) -> None:
        """Deal a round from a shoe in dealing order (docs/rules.md section 3)."""
        r, n = self.rules, self.n
        rng = random.Random(self.round_seeds[self.round - 1] ^ 0x5EED)
        self.dealer = (n - 1 + self.round - 1) % n
        self.minimum = r.round_minimum(self.round)
        self.hands = _piles(order, 0, n, r.hand_size)
        pos = n * r.hand_size
        self.feet: List[Optional[List[int]]] = _piles(order, pos, n, r.foot_size)
        pos += n * r.foot_size
        up = order[pos]
        stock = order[pos + 1:]
        stock.reverse()                      # top of the stock is the end of the list
        while up in (RED3, TWO, JOKER) and stock:
            stock.insert(rng.randrange(len(stock) + 1), up)
            up = stock.pop()
        self.stock = stock
        self.discard = [up]
        self.up_card = up                    # the round's up card, seen face up by the whole table
        # the observation's cached pile block (handfoot_env.observation), keyed by the pile's length
        # and identity; a pickup (which may shorten the pile) resets it to None
        self.pile_cache: Optional[tuple] = None
        t = self.num_teams
        self.melds = [[[0, 0, 0] for _ in range(NUM_SLOTS)] for _ in range(t)]
        self.books: List[List[Tuple[int, int, int, int]]] = [[] for _ in range(t)]
        self.book_counts = [[0, 0, 0] for _ in range(t)]
        self.meld_value = [0] * t            # card values on the table per team (melds and books)
        self.red3 = [0] * t
        self.opened = [False] * t
        # per team, the observation's cached table block (handfoot_env.observation); every
        # change to a team's melds, books, red threes or opening resets its entry to None
        self.table_cache: List[Optional[tuple]] = [None] * t
        self.played_foot = [False] * n
        self.prov = [0] * NUM_KINDS          # cards melded from hand while unopened (cancellable)
        self.prov_value = 0                  # card value of the unopened team's melds
        self.forced: Optional[Tuple[int, int, int, int]] = None   # pickup cards of an unopened team
        self.pending = [0] * NUM_KINDS       # pile cards held until the opening is complete
        self.incomplete = -1                 # slot of a pickup overflow meld still under 3 cards
        self.turn_player = (self.dealer + 1) % n
        self.current = self.turn_player
        self.phase = DRAW_PHASE
        self.asked = False
        self.permission: Optional[bool] = None
        self.cancels = 0
        self.round_actions = 0
        self.went_out: Optional[int] = None
        self._settle()

    # --------------------------------------------------------------- queries
    @property
    def current_player(self) -> int:
        return self.current

    @property
    def rounds_finished(self) -> int:
        """Rounds of this game scored so far (``len(round_scores)``; the compiled core's name too)."""
        return len(self.round_scores)

    def hand_size(self, p: int) -> int:
        return sum(self.hands[p])

    def in_foot(self, p: int) -> bool:
        return self.feet[p] is None

    @property
    def going_out(self) -> Tuple[int, int, int]:
        """The (clean, dirty, wild) books going out needs in this round (``RuleConfig.going_out_books``)."""
        return self.rules.going_out_books(self.round)

    def books_ok(self, team: int) -> bool:
        """Whether ``team`` holds the books going out needs this round (``RuleConfig.going_out_books``)."""
        clean, dirty, wild = self.book_counts[team]
        nc, nd, nw = self.going_out
        return clean >= nc and dirty >= nd and wild >= nw

    def partners_ok(self, p: int) -> bool:
        """Whether the teammates condition for going out holds (``partner_in_foot``)."""
        if not self.rules.partner_in_foot:
            return True
        return all(self.played_foot[q] for q in self.teammates[p])

    def may_go_out(self, p: int) -> bool:
        """Everything for going out but the books: foot, teammates, permission."""
        if self.feet[p] is not None or not self.opened[self.team_of[p]]:
            return False
        if not self.partners_ok(p):
            return False
        if self.rules.ask_partner and self.teammates[p]:
            return self.permission is True
        return True

    def pile_blocked(self) -> bool:
        return not self.discard or self.discard[-1] in (RED3, BLACK3)

    def answerer(self, p: int) -> int:
        return self.teammates[p][0]

    def reference(self) -> "Game":
        """This game (a compiled game gives a reference ``Game`` in its state: the one name for both)."""
        return self

    # ----------------------------------------------------------- legal list
    def legal_actions(self) -> List[int]:
        """Every action the player to act may take now, in id order."""
        ph = self.phase
        if ph == GAME_OVER:
            return []
        if ph == ANSWER_PHASE:
            return [ANSWER_YES, ANSWER_NO]
        p = self.current
        hand = self.hands[p]
        if hand[RED3]:
            return [LAY_RED_THREE]
        if ph == DRAW_PHASE:
            out = []
            if len(self.stock) >= 2:
                out.append(DRAW)
            pile = self.discard
            # cheap necessary condition first: two cards matching the top card in hand
            if pile and hand[pile[-1]] >= 2 and self._pickup_reason(p) is None:
                out.append(PICKUP)
            return out
        out = []
        team = self.team_of[p]
        opened = self.opened[team]
        in_foot = self.feet[p] is None
        # cheap necessary conditions first: cancelling needs an unopened team, asking an
        # opened one and a player in the foot
        if not opened and self._cancel_reason(p) is None:
            out.append(CANCEL_MELDS)
        if opened and in_foot and self._ask_reason(p) is None:
            out.append(ASK_GO_OUT)
        if self.incomplete < 0 and (opened or not (self.prov_value or self.forced)):
            if not in_foot or sum(hand) > 1 or (self.may_go_out(p) and self.books_ok(team)):
                # DISCARD_ACTION[RED3] is -1, but there is no red three in hand here
                out += [a for c, a in zip(hand, DISCARD_ACTION) if c]
        self._add_legal_melds(p, out)
        return out

    def _add_legal_melds(self, p: int, out: List[int]) -> None:
        """Append the legal meld actions to ``out``: slot by slot, each slot's in id order,
        so that ``out`` stays sorted."""
        hand = self.hands[p]
        team = self.team_of[p]
        slots = self.melds[team]
        double = self._double
        ht, hj = hand[TWO], hand[JOKER]
        ht3 = ht if ht < 3 else 3
        hj3 = hj if hj < 3 else 3
        struct = structural_ids
        # Fast path (keep in step with _meld_post_reason): with the team opened
        # and no pickup meld pending, the only post check is the foot's last two
        # cards, so outside the foot every structural meld is legal, and in the
        # foot every one that leaves at least two cards (_add_checked).
        all_ok = self.opened[team] and self.incomplete < 0 and self.feet[p] is not None
        ctx = None if all_ok else self._meld_context(p)
        # natural slots: fresh[slot][naturals in hand, capped at 7] for an empty meld
        fresh = fresh_meld_table(double)[ht3][hj3]
        for s, hn, (n0, t0, j0), fresh_s in zip(range(NUM_RANKS), hand, slots, fresh):
            if n0:
                cand, ids = struct(s, hn if hn < 7 else 7, ht3, hj3, n0, t0, j0, double)
            elif not hn:
                continue
            elif t0 or j0:
                cand, ids = struct(s, hn if hn < 7 else 7, ht3, hj3, n0, t0, j0, double)
            else:
                cand, ids = fresh_s[hn if hn < 7 else 7]
            if all_ok:
                out += ids
            else:
                self._add_checked(p, ctx, s, cand, out)
        if self.rules.wild_melds and (ht or hj):
            cand, ids = struct(WILD_SLOT, 0, ht if ht < 7 else 7, hj if hj < 7 else 7, *slots[WILD_SLOT], double)
            if all_ok:
                out += ids
            else:
                self._add_checked(p, ctx, WILD_SLOT, cand, out)

    def _add_checked(self, p: int, ctx, s: int, cand, out: List[int]) -> None:
        """Append the structural candidates ``cand`` of slot ``s`` that pass the post checks."""
        simple = ctx[3] and self.incomplete < 0
        size = ctx[1]
        post = self._meld_post_reason
        for aid, n, t, j, book in cand:
            if simple and size - n - t - j >= 2:
                out.append(aid)
            elif post(p, ctx, s, n, t, j, book) is None:
                out.append(aid)

    # ------------------------------------------------------------ legality
    def _pickup_reason(self, p: int) -> Optional[str]:
        if self.phase != DRAW_PHASE:
            return "the pile can only be taken instead of drawing, at the start of a turn"
        if not self.discard:
            return "the discard pile is empty"
        top = self.discard[-1]
        if top == BLACK3 or top == RED3:
            return "a three on top of the pile blocks it"
        hand = self.hands[p]
        if hand[top] < 2:
            return f"taking the pile needs two {CODES[top]} in hand to meld with the top card"
        wild = top >= NUM_RANKS
        if wild and not self.rules.wild_melds:
            return "a wild top card can only be melded into a wild meld, and these rules have none"
        slot = WILD_SLOT if wild else top
        team = self.team_of[p]
        take = self.discard[-self._take:] if self._take else self.discard
        extra = len(take) - 1
        in_foot = self.feet[p] is None
        size = sum(hand)
        if self.opened[team]:
            cur = self.melds[team][slot]
            room = BOOK_SIZE - (cur[0] + cur[1] + cur[2])
            over = max(0, 3 - room)
            after = size - 2 + extra
            if over:
                h2 = hand[:]
                h2[top] -= 2
                for k in take[:-1]:
                    h2[k] += 1
                if not self._completable(h2, slot, over if not wild else 0, over if wild else 0,
                                         after - (2 if in_foot else 0)) and not (
                        in_foot and self._pickup_goes_out(p, h2, slot, top, room)):
                    return "the cards that overflow the meld could not be made into a legal meld"
            elif in_foot and after < 2 and not self._pickup_goes_out(p, None, slot, top, room):
                return ("in the foot, taking the pile must leave two cards in hand, unless the player "
                        "may go out this turn with the cards held")
            return None
        if self.rules.pile_needs_opening:
            return "under pile_needs_opening only a team that has opened may take the pile"
        # unopened: the top card, the pair and melds from the hand must reach the minimum
        value3 = 3 * VALUES[top]
        need = self.minimum - value3
        if need <= 0:
            return None
        h2 = hand[:]
        h2[top] -= 2
        avail = size - 2 - (2 if in_foot else 0)
        # cheap exact shortcuts before the dynamic program: a lower bound (whole groups of 3-7
        # naturals, and up to four more of the pickup's rank) and an upper bound (the best
        # ``avail`` card values in hand)
        low, used = 0, 0
        for r in range(NUM_RANKS - 1, -1, -1):
            k = h2[r]
            if r == slot:
                k = k if k < 4 else 4
            elif k < 3 or k > 7:
                continue
            if k and used + k <= avail:
                used += k
                low += k * VALUES[r]
        if low >= need:
            return None
        high = 0
        left = avail
        for k in (JOKER, TWO, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, BLACK3):
            c = h2[k] if h2[k] < left else left
            high += c * VALUES[k]
            left -= c
            if not left:
                break
        if high < need:
            return (f"the team has not opened and the pickup meld plus melds from hand cannot reach "
                    f"the minimum of {self.minimum}")
        slots = [[0, 0, 0] for _ in range(NUM_SLOTS)]
        slots[slot] = [3, 0, 0] if not wild else [0, 3 if top == TWO else 0, 3 if top == JOKER else 0]
        if value3 + max_meld_value(h2, slots, self.rules, avail) < self.minimum:
            return (f"the team has not opened and the pickup meld plus melds from hand cannot reach "
                    f"the minimum of {self.minimum}")
        return None

    def _completable(self, hand: Sequence[int], slot: int, n0: int, w0: int, max_cards: int) -> bool:
        """Can ``hand`` turn the slot's meld of ``n0`` naturals and ``w0`` wilds into a legal one?"""
        wilds = hand[TWO] + hand[JOKER]
        if slot == WILD_SLOT:
            need = 3 - w0
            return need <= 0 or (wilds >= need and need <= max_cards)
        hn = hand[slot]
        for a in range(0, min(hn, BOOK_SIZE - n0 - w0, max_cards) + 1):
            for b in range(0, min(wilds, BOOK_SIZE - n0 - w0 - a, max_cards - a) + 1):
                s = n0 + w0 + a + b
                if s >= 3 and wild_ok(n0 + a, w0 + b, self._double):
                    return True
        return False

    def _pickup_goes_out(self, p: int, h2: Optional[List[int]], slot: int, top: int, room: int) -> bool:
        """Whether a player in the foot who takes the pile may go out this turn with the cards held.

        ``h2`` is the hand after the pickup (None: computed here), ``room`` the free places
        of the team's unfinished meld of ``slot``.  Rare path: only when the pickup would
        leave fewer than two cards or an overflow that two kept cards cannot complete.
        """
        if not self.may_go_out(p):
            return False
        team = self.team_of[p]
        if h2 is None:
            h2 = self.hands[p][:]
            h2[top] -= 2
            for k in (self.discard[-self._take:] if self._take else self.discard)[:-1]:
                h2[k] += 1
        slots = [m[:] for m in self.melds[team]]
        books = self.book_counts[team][:]
        unit = (1, 0, 0) if slot != WILD_SLOT else ((0, 1, 0) if top == TWO else (0, 0, 1))
        first = min(3, room)
        for count in (first, 3 - first):
            m = slots[slot]
            for i in range(3):
                m[i] += unit[i] * count
            if m[0] + m[1] + m[2] == BOOK_SIZE:
                books[WILD if slot == WILD_SLOT else (CLEAN if m[1] + m[2] == 0 else DIRTY)] += 1
                slots[slot] = [0, 0, 0]
        return self._can_go_out(h2, slots, books)

    def _can_go_out(self, hand: Sequence[int], slots: Sequence[Sequence[int]], books: Sequence[int]) -> bool:
        """Can a player allowed to go out empty ``hand`` this turn: meld all of it, or all
        but one card and discard that one, onto the team's unfinished melds ``slots`` so that
        every meld is legal and the team's books (``books`` plus the ones made) meet the
        going-out requirement when the last card leaves?  Exact; called on rare paths only."""
        if hand[RED3] or hand[BLACK3] > 1:
            return False
        r = self.rules
        need = self.going_out
        have = tuple(min(b, n) for b, n in zip(books, need))
        return go_out_search(tuple(hand[:NUM_RANKS]), hand[TWO] + hand[JOKER], hand[BLACK3] == 0,
                            tuple(tuple(m) for m in slots), have, need, self._double, r.wild_melds)

    def _cancel_reason(self, p: int) -> Optional[str]:
        if self.phase != MELD_PHASE:
            return "melds can only be cancelled during the meld phase"
        if self.opened[self.team_of[p]]:
            return "the team has opened; its melds are no longer provisional"
        if not any(self.prov):
            return "there are no provisional melds from the hand to take back"
        if self.cancels >= MAX_CANCELS_PER_TURN:
            return "cancel_melds has already been used this turn"
        return None

    def _ask_reason(self, p: int) -> Optional[str]:
        r = self.rules
        if self.phase != MELD_PHASE:
            return "asking to go out is only possible in the meld phase"
        if not r.ask_partner or not self.teammates[p]:
            return "these rules have no asking (ask_partner is off or there is no partner)"
        if self.asked:
            return "the partner has already been asked this turn"
        if self.feet[p] is not None:
            return "only a player playing from the foot may ask to go out"
        if not self.opened[self.team_of[p]]:
            return "the team has not made its first meld this round"
        if r.partner_in_foot and not self.partners_ok(p):
            return "the partner has not yet played from the foot"
        return None

    def _meld_context(self, p: int):
        team = self.team_of[p]
        size = sum(self.hands[p])
        in_foot = self.feet[p] is None
        opened = self.opened[team]
        go_ok = self.may_go_out(p) if in_foot else False
        cancel_left = (not opened) and self.cancels < MAX_CANCELS_PER_TURN
        return team, size, in_foot, opened, go_ok, cancel_left

    def _meld_post_reason(self, p: int, ctx, s: int, n: int, t: int, j: int, book: bool) -> Optional[str]:
        """Checks of a structurally valid meld that depend on the rest of the state.

        ``_add_legal_melds`` skips this call when the team has opened, no pickup meld is
        pending and the meld leaves two cards or the player is not in the foot (it
        returns None then): a new check for that case must go there too
        (tests/test_hot_paths.py compares legal_actions with reason_illegal).
        """
        team, size, in_foot, opened, go_ok, cancel_left = ctx
        used = n + t + j
        left = size - used
        inc = self.incomplete
        if inc >= 0 and inc != s:
            h2 = self.hands[p][:]
            if s < NUM_RANKS:
                h2[s] -= n
            h2[TWO] -= t
            h2[JOKER] -= j
            c = self.melds[team][inc]
            if not self._completable(h2, inc, c[0], c[1] + c[2], left - (2 if in_foot else 0)):
                if not (in_foot and go_ok and self._meld_goes_out(p, s, n, t, j)):
                    return "the unfinished meld from the pickup could no longer be completed"
        opens = False
        if not opened:
            value = self.prov_value + meld_points(s, n, t, j)
            opens = value >= self.minimum
            if opens:
                left += sum(self.pending)
            else:
                if left == 0:
                    return f"melds that empty the hand must reach the minimum of {self.minimum}"
                if not cancel_left:
                    h2 = self.hands[p][:]
                    if s < NUM_RANKS:
                        h2[s] -= n
                    h2[TWO] -= t
                    h2[JOKER] -= j
                    melds = self.melds[team]
                    sizes = [a + b + c for a, b, c in melds]
                    sizes[s] = 0 if book else sizes[s] + used
                    max_cards = left - (2 if in_foot else 0)
                    need = self.minimum - value
                    # cheap bounds first; the dynamic program only when they cannot tell
                    reach = opening_bounds(h2, sizes, self.rules.wild_melds, max_cards, need)
                    if reach is None:
                        slots = [list(x) for x in melds]
                        if book:
                            slots[s] = [0, 0, 0]
                        else:
                            slots[s] = [slots[s][0] + n, slots[s][1] + t, slots[s][2] + j]
                        reach = max_meld_value(h2, slots, self.rules, max_cards) >= need
                    if not reach:
                        return f"the opening could no longer reach the minimum of {self.minimum}"
        if in_foot and left < 2:
            if not go_ok:
                return "in the foot, melding must leave two cards (one to discard, one to keep) unless going out"
            if not self._meld_goes_out(p, s, n, t, j):
                return ("going out needs the team's required books when the last card leaves the foot, "
                        "and the cards left could not make them")
        return None

    def _meld_goes_out(self, p: int, s: int, n: int, t: int, j: int) -> bool:
        """Whether after this meld the player (in the foot, allowed to go out) can still go out
        this turn with the cards held.  Rare path: the meld leaves fewer than two cards, or a
        pickup overflow that two kept cards cannot complete."""
        team = self.team_of[p]
        hand = self.hands[p][:]
        if s < NUM_RANKS:
            hand[s] -= n
        hand[TWO] -= t
        hand[JOKER] -= j
        slots = [m[:] for m in self.melds[team]]
        books = self.book_counts[team][:]
        m = slots[s]
        m[0] += n
        m[1] += t
        m[2] += j
        if m[0] + m[1] + m[2] == BOOK_SIZE:
            books[WILD if s == WILD_SLOT else (CLEAN if m[1] + m[2] == 0 else DIRTY)] += 1
            slots[s] = [0, 0, 0]
        return self._can_go_out(hand, slots, books)

    def meld_reason(self, action: int) -> Optional[str]:
        p = self.current
        if self.phase != MELD_PHASE:
            return "melding is only possible after drawing, in the meld phase"
        if self.hands[p][RED3]:
            return "a red three in hand must be laid first"
        s, n, t, j = MELD_SPECS[action - MELD_BASE]
        if s == WILD_SLOT and not self.rules.wild_melds:
            return "these rules do not allow wild melds"
        hand = self.hands[p]
        if (s < NUM_RANKS and hand[s] < n) or hand[TWO] < t or hand[JOKER] < j:
            return "not enough of those cards in hand"
        team = self.team_of[p]
        n0, t0, j0 = self.melds[team][s]
        total = n0 + t0 + j0 + n + t + j
        if total < 3:
            return "a meld needs at least three cards"
        if total > BOOK_SIZE:
            return "a meld cannot exceed seven cards"
        if s < NUM_RANKS and not wild_ok(n0 + n, t0 + j0 + t + j, self._double):
            return f"the meld would break the wild limit ({self.rules.wild_limit})"
        return self._meld_post_reason(p, self._meld_context(p), s, n, t, j, total == BOOK_SIZE)

    def reason_illegal(self, action: int) -> Optional[str]:
        """Why ``action`` is illegal now, or ``None`` when it is legal."""
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
            return f"not an action id (0..{NUM_ACTIONS - 1})"
        if self.phase == GAME_OVER:
            return "the game is over"
        p = self.current
        if self.phase == ANSWER_PHASE:
            return None if action in (ANSWER_YES, ANSWER_NO) else \
                "a teammate asked to go out; the only actions are answer_yes and answer_no"
        if action in (ANSWER_YES, ANSWER_NO):
            return "nobody has asked to go out"
        hand = self.hands[p]
        if action == LAY_RED_THREE:
            return None if hand[RED3] else "there is no red three in hand"
        if hand[RED3]:
            return "a red three in hand must be laid first (lay_red_three)"
        if action == DRAW:
            if self.phase != DRAW_PHASE:
                return "the player has already drawn this turn"
            if len(self.stock) < 2:
                return "the stock holds fewer than two cards"
            return None
        if action == PICKUP:
            return self._pickup_reason(p)
        if action == CANCEL_MELDS:
            return self._cancel_reason(p)
        if action == ASK_GO_OUT:
            return self._ask_reason(p)
        if action < MELD_BASE:
            kind = DISCARD_KINDS[action - DISCARD_BASE]
            if self.phase != MELD_PHASE:
                return "the player must draw or take the pile before discarding"
            if not hand[kind]:
                return f"there is no {CODES[kind]} in hand"
            team = self.team_of[p]
            if self.incomplete >= 0:
                return "the meld started by the pickup must be completed before discarding"
            if not self.opened[team] and (self.prov_value or self.forced):
                return f"provisional melds must reach the minimum of {self.minimum} or be cancelled"
            if sum(hand) == 1 and self.feet[p] is None:
                if not self.may_go_out(p):
                    return "a discard may not empty the foot unless going out is allowed"
                if not self.books_ok(team):
                    return "going out needs the team's required books"
            return None
        return self.meld_reason(action)

    # ------------------------------------------------------------- applying
    def step(self, action: int) -> None:
        """Apply ``action`` for the player to act; :class:`IllegalActionError` if not allowed."""
        action = int(action) if not isinstance(action, bool) and hasattr(action, "__index__") else action
        reason = self.reason_illegal(action)
        if reason is not None:
            raise IllegalActionError(action, reason)
        self.apply_legal(action)

    def step_name(self, name: str) -> None:
        self.step(action_index(name))

    def apply_legal(self, a: int) -> None:
        """Apply ``a``, an int taken from :meth:`legal_actions` of this very state, without checking it.

        The fast path of the envs and batched runners: :meth:`legal_actions` and
        :meth:`reason_illegal` agree on every action id (tests/test_properties.py
        and tests/test_env.py check it over random games), so an action from the
        current legal list needs no second check.  Anything else must go through
        :meth:`step`, which names the reason an action is illegal; an unlisted
        action given here corrupts the game.
        """
        p = self.current
        self.history.append((p, a))
        self.action_count += 1
        self.round_actions += 1
        hand = self.hands[p]
        # the common actions first: melds (ids from MELD_BASE), discards, the draw
        if a >= MELD_BASE:
            s, n, t, j = MELD_SPECS[a - MELD_BASE]
            self._apply_meld(p, s, n, t, j)
        elif a >= DISCARD_BASE:
            self._apply_discard(p, DISCARD_KINDS[a - DISCARD_BASE])
        elif a == DRAW:
            stock = self.stock
            hand[stock.pop()] += 1
            hand[stock.pop()] += 1
            self.phase = MELD_PHASE
        elif a == LAY_RED_THREE:
            hand[RED3] -= 1
            self.red3[self.team_of[p]] += 1
            self.table_cache[self.team_of[p]] = None
            if self.stock:
                hand[self.stock.pop()] += 1
            if not any(hand) and self.feet[p] is not None:
                self._pick_up_foot(p)
        elif a == PICKUP:
            self._apply_pickup(p)
        elif a == CANCEL_MELDS:
            self._cancel(p)
        elif a == ASK_GO_OUT:
            self.asked = True
            self.phase = ANSWER_PHASE
            self.current = self.answerer(p)
        elif a == ANSWER_YES or a == ANSWER_NO:
            self.permission = a == ANSWER_YES
            self.phase = MELD_PHASE
            self.current = self.turn_player
        self._settle()

    def _add_to_meld(self, team: int, s: int, n: int, t: int, j: int) -> None:
        self.table_cache[team] = None
        self.meld_value[team] += meld_points(s, n, t, j)
        m = self.melds[team][s]
        m[0] += n
        m[1] += t
        m[2] += j
        if m[0] + m[1] + m[2] == BOOK_SIZE:
            kind = book_type(m[0], m[1] + m[2])
            self.book_counts[team][kind] += 1
            self.books[team].append((s, m[0], m[1], m[2]))
            self.melds[team][s] = [0, 0, 0]

    def _apply_meld(self, p: int, s: int, n: int, t: int, j: int) -> None:
        hand = self.hands[p]
        team = self.team_of[p]
        if s < NUM_RANKS:
            hand[s] -= n
        hand[TWO] -= t
        hand[JOKER] -= j
        if self.feet[p] is None:
            self.played_foot[p] = True
        self._add_to_meld(team, s, n, t, j)
        if s == self.incomplete:
            self.incomplete = -1
        if not self.opened[team]:
            self.prov_value += add_provisional(self.prov, s, n, t, j)
            if self.prov_value >= self.minimum:
                self._open(p)
        self._after_hand_change(p)

    def _open(self, p: int) -> None:
        team = self.team_of[p]
        self.opened[team] = True
        self.table_cache[team] = None
        hand = self.hands[p]
        for k in range(NUM_KINDS):
            hand[k] += self.pending[k]
        self.pending = [0] * NUM_KINDS
        self.prov = [0] * NUM_KINDS
        self.prov_value = 0
        self.forced = None

    def _after_hand_change(self, p: int) -> None:
        """Empty hand: pick up the foot (turn goes on) or go out."""
        if any(self.hands[p]):
            return
        if self.feet[p] is not None:
            self._pick_up_foot(p)
        else:
            self.went_out = p
            self._end_round()

    def _pick_up_foot(self, p: int) -> None:
        self.hands[p] = self.feet[p]
        self.feet[p] = None

    def _apply_pickup(self, p: int) -> None:
        hand = self.hands[p]
        team = self.team_of[p]
        top = self.discard[-1]
        if self._take and len(self.discard) > self._take:
            taken = self.discard[-self._take:]
            del self.discard[-self._take:]
        else:
            taken = self.discard
            self.discard = []
        self.pile_cache = None
        hand[top] -= 2
        slot = WILD_SLOT if top >= NUM_RANKS else top
        trio = (3, 0, 0) if slot != WILD_SLOT else ((0, 3, 0) if top == TWO else (0, 0, 3))
        if self.feet[p] is None:
            self.played_foot[p] = True
        if self.opened[team]:
            for k in taken[:-1]:
                hand[k] += 1
            m = self.melds[team][slot]
            room = BOOK_SIZE - (m[0] + m[1] + m[2])
            first = min(3, room)
            over = 3 - first
            unit = [x // 3 for x in trio]
            self._add_to_meld(team, slot, *[u * first for u in unit])
            if over:
                self._add_to_meld(team, slot, *[u * over for u in unit])
                self.incomplete = slot
        else:
            for k in taken[:-1]:
                self.pending[k] += 1
            self._add_to_meld(team, slot, *trio)
            self.forced = (slot,) + trio
            self.prov_value += 3 * VALUES[top]
            if self.prov_value >= self.minimum:
                self._open(p)
        self.phase = MELD_PHASE
        self._after_hand_change(p)

    def _cancel(self, p: int) -> None:
        team = self.team_of[p]
        hand = self.hands[p]
        for k in range(NUM_KINDS):
            hand[k] += self.prov[k]
        self.prov = [0] * NUM_KINDS
        self.melds[team] = [[0, 0, 0] for _ in range(NUM_SLOTS)]
        self.books[team] = []
        self.book_counts[team] = [0, 0, 0]
        self.meld_value[team] = 0
        self.table_cache[team] = None
        self.prov_value = 0
        if self.forced is not None:
            s, n, t, j = self.forced
            self._add_to_meld(team, s, n, t, j)
            self.prov_value = meld_points(s, n, t, j)
        self.cancels += 1

    def _apply_discard(self, p: int, kind: int) -> None:
        hand = self.hands[p]
        hand[kind] -= 1
        self.discard.append(kind)      # pile_cache: the observation sees the longer pile and adds the card
        in_foot = self.feet[p] is None
        if in_foot:
            self.played_foot[p] = True
        if not any(hand):
            if in_foot:
                self.went_out = p
                self._end_round()
                return
            self._pick_up_foot(p)
        self._next_turn()

    def _next_turn(self) -> None:
        self.turn_player = (self.turn_player + 1) % self.n
        self.current = self.turn_player
        self.phase = DRAW_PHASE
        self.asked = False
        self.permission = None
        self.cancels = 0

    def _settle(self) -> None:
        """End the round when the player to act cannot go on (stock-out)."""
        if self.phase != DRAW_PHASE:
            if (self.phase == MELD_PHASE and sum(self.hands[self.current]) <= 1
                    and not self.legal_actions()):
                self._end_round()
            return
        p = self.current
        if self.hands[p][RED3]:
            return
        if len(self.stock) >= 2 or self._pickup_reason(p) is None:
            return
        self._end_round()

    # ------------------------------------------------------------- scoring
    def team_round_score(self, team: int) -> Dict[str, int]:
        """The section 6 items of one team for the round as it stands (scoring.team_round_score)."""
        return team_round_score(self, team)

    def _end_round(self) -> None:
        details = [self.team_round_score(t) for t in range(self.num_teams)]
        totals = [d["total"] for d in details]
        self.round_scores.append(totals)
        self.round_details.append({"round": self.round, "went_out": self.went_out, "teams": details,
                                   "actions": self.round_actions})
        for t in range(self.num_teams):
            self.scores[t] += totals[t]
        r = self.rules
        last = self.round >= r.rounds
        if last:
            best = max(self.scores)
            leaders = [t for t in range(self.num_teams) if self.scores[t] == best]
            if len(leaders) == 1:
                self.winner = leaders[0]
                self.game_over = True
            elif r.tie_break == "extra_round" and not self.extra_round:
                self.extra_round = True
            else:
                self.winner = None
                self.game_over = True
        if self.game_over:
            self.phase = GAME_OVER
            return
        self.round += 1
        self._deal(self._make_shoe([], random.Random(self.round_seeds[self.round - 1])))

    # -------------------------------------------------------- copy & record
    def clone(self) -> "Game":
        """An independent copy of the game, of the same class (cheap: count lists and card lists)."""
        g = object.__new__(type(self))
        d = self.__dict__.copy()
        g.__dict__ = d
        d["hands"] = [h[:] for h in self.hands]
        d["feet"] = [f[:] if f is not None else None for f in self.feet]
        d["stock"] = self.stock[:]
        d["discard"] = self.discard[:]
        d["melds"] = [[m[:] for m in t] for t in self.melds]
        d["books"] = [b[:] for b in self.books]
        d["book_counts"] = [b[:] for b in self.book_counts]
        d["meld_value"] = self.meld_value[:]
        d["red3"] = self.red3[:]
        d["opened"] = self.opened[:]
        d["table_cache"] = self.table_cache[:]          # entries are immutable tuples
        d["played_foot"] = self.played_foot[:]
        d["prov"] = self.prov[:]
        d["pending"] = self.pending[:]
        d["scores"] = self.scores[:]
        d["round_scores"] = [x[:] for x in self.round_scores]
        d["round_details"] = self.round_details[:]
        d["history"] = self.history[:]
        d["_public"] = None                              # a copy follows its own record
        return g

    def public_round(self) -> PublicRound:
        """What the whole table knows of this round (:mod:`handfoot_env.public`): the game's record of it,
        brought up to date with the actions since it was last asked."""
        h = self.history
        start = len(h) - self.round_actions
        rec = self._public = follow(self._public, (self.seed, self.round, start), self.rules,
                                    self.team_of, self.num_teams, self.up_card, self.minimum, h, start)
        return rec.snapshot()

    def state_dict(self) -> dict:
        """JSON-serialisable snapshot (docs/interface.md "Game record")."""
        def melds_of(t: int) -> List[dict]:
            out = [{"rank": SLOT_CODES[s], "naturals": n, "twos": tw, "jokers": j, "book": True}
                   for s, n, tw, j in self.books[t]]
            for s, (n, tw, j) in enumerate(self.melds[t]):
                if n + tw + j:
                    out.append({"rank": SLOT_CODES[s], "naturals": n, "twos": tw, "jokers": j, "book": False})
            return out

        return {
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "round": self.round,
            "dealer": self.dealer,
            "minimum": self.minimum,
            "current_player": self.current,
            "turn_player": self.turn_player,
            "phase": PHASE_NAMES[self.phase],
            "scores": self.scores[:],
            "round_scores": [x[:] for x in self.round_scores],
            "opened": self.opened[:],
            "melds": [melds_of(t) for t in range(self.num_teams)],
            "books": [{"clean": b[0], "dirty": b[1], "wild": b[2]} for b in self.book_counts],
            "red_threes": self.red3[:],
            "hands": [codes_of(h) for h in self.hands],
            "feet": [codes_of(f) if f is not None else [] for f in self.feet],
            "foot_picked_up": [f is None for f in self.feet],
            "played_from_foot": self.played_foot[:],
            "stock_size": len(self.stock),
            "stock": [CODES[k] for k in reversed(self.stock)],
            "discard": [CODES[k] for k in self.discard],
            "up_card": CODES[self.up_card],
            "pending_pile_cards": codes_of(self.pending),
            "provisional": codes_of(self.prov),
            "asked": self.asked,
            "permission": self.permission,
            "went_out": self.went_out,
            "game_over": self.game_over,
            "winner": self.winner,
            "actions": self.action_count,
        }

    def card_locations(self) -> List[int]:
        """Count of every kind over all places (for conservation checks)."""
        tot = [0] * NUM_KINDS
        for h in self.hands:
            for k in range(NUM_KINDS):
                tot[k] += h[k]
        for f in self.feet:
            if f is not None:
                for k in range(NUM_KINDS):
                    tot[k] += f[k]
        for k in self.stock:
            tot[k] += 1
        for k in self.discard:
            tot[k] += 1
        for k in range(NUM_KINDS):
            tot[k] += self.pending[k]
        for t in range(self.num_teams):
            for s, (n, tw, j) in enumerate(self.melds[t]):
                if s < NUM_RANKS:
                    tot[s] += n
                tot[TWO] += tw
                tot[JOKER] += j
            for s, n, tw, j in self.books[t]:
                if s < NUM_RANKS:
                    tot[s] += n
                tot[TWO] += tw
                tot[JOKER] += j
            tot[RED3] += self.red3[t]
        return tot


def max_actions_per_round(rules: RuleConfig) -> int:
    """A proven bound on the actions of one round (docs/rules_engine.md).

    Every turn draws two from the stock or takes the pile; every pickup melds
    three cards for good, so turns <= stock / 2 + cards / 3 + 1.  A turn has at
    most one draw or pickup, one ask, one answer, one cancel and one discard;
    melds and red threes each move at least one card out of hand, and a cancel
    returns at most the turn's cards, so they number at most three times the cards.
    """
    cards = rules.total_cards
    stock = cards - rules.players * (rules.hand_size + rules.foot_size) - 1
    turns = stock // 2 + cards // 3 + 1
    return 5 * turns + 3 * cards


def max_actions_per_game(rules: RuleConfig) -> int:
    extra = 1 if rules.tie_break == "extra_round" else 0
    return (rules.rounds + extra) * max_actions_per_round(rules)
