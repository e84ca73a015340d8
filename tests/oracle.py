"""A slow legality oracle written from docs/rules.md, for checking the engine's action mask.

The engine decides legality with shared helper functions (meld tables, an opening
program, completability checks); a bug in one of them would be invisible to both
``legal_actions`` and ``reason_illegal``.  This module decides legality from the
rules text instead, sharing no legality code with the engine:

1. **The rules' bookkeeping from the history.**  A :class:`Ledger` follows the
   actions played (:func:`track`) and derives from the rules alone what the
   legality of the next action depends on beyond the cards: the round and its
   opening minimum (``minimums``), which teams have opened, the value melded
   toward an opening this turn, the cards melded from the hand while unopened,
   the pile cards held aside until the opening (``pile_take``), the ask, the
   partner's answer and the cancel of the turn.  None of these is read from
   the engine; :func:`check_ledger` compares the engine's own fields with it.
2. **Immediate conditions.**  :func:`rule_ok` checks what the rules say about an
   action in the position at hand (phase, cards held, meld sizes and the wild
   limit, the foot rule, going-out conditions), reading the cards as plain data
   and everything else from the ledger.
3. **No dead end.**  A legal action must leave the player a legal way to finish
   the turn (docs/rules.md section 8): :func:`allowed` tries the action on a clone
   (``Game.clone`` and ``Game.apply_legal`` move the cards; the ledger moves
   along by its own rules) and :func:`finishable` searches the continuations,
   using only :func:`rule_ok`, for a discard or a going out.  The partner's
   answer is not the player's to choose, so after an ask both answers must leave
   a way out.
4. **The result is checked.**  :func:`check_state` verifies a position against the
   rules (every card in one place, melds of at most seven cards within the wild
   limit, books of exactly seven).

It is exhaustive and slow (a search per action); tests run it on sampled positions.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from handfoot_env.actions import (ACTION_NAMES, ANSWER_NO, ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DISCARD_BASE,
                                  DISCARD_KINDS, DRAW, LAY_RED_THREE, MELD_BASE, MELD_SPECS, NUM_ACTIONS, PICKUP)
from handfoot_env.engine import Game

# Card kinds as in docs/rules.md section 1 (the action table's numbering)
RANKS = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
TWO, JOKER, RED3, BLACK3 = 11, 12, 13, 14
W = 11                                   # the wild meld's slot in the action table
VALUE = (5, 5, 5, 5, 10, 10, 10, 10, 10, 10, 20, 20, 50, 0, 5)
PER_DECK = (4,) * 11 + (4, 2, 2, 2)


def wild_limit_ok(naturals: int, wilds: int, rule: str) -> bool:
    """docs/rules.md 4.4: ``double`` naturals >= 2 x wilds; ``majority`` naturals > wilds."""
    return naturals >= 2 * wilds if rule == "double" else naturals > wilds



class Ledger:
    """The rules' bookkeeping of one round, derived from the actions played (docs/rules.md 3, 4.2, 4.3, 5).

    ``round`` counts the rounds from the game's start (1 unless given); the opening
    minimum and the books going out needs are that round's (``RuleConfig.round_minimum``,
    ``RuleConfig.going_out_books``: the last round's for an extra round).
    """

    __slots__ = ("rules", "round", "opened", "value", "forced", "hand_melded", "pending", "asked", "permission",
                 "cancels")

    def __init__(self, rules, round: int = 1):
        self.rules = rules
        self.round = round
        self.opened = [False] * rules.teams
        self.value = 0               # card value melded toward the opening this turn (unopened team)
        self.forced = 0              # value of a pickup's three cards this turn (they cannot be taken back)
        self.hand_melded = 0         # cards melded from the hand this turn while unopened
        self.pending = 0             # pile cards held aside until the opening
        self.asked = False
        self.permission: Optional[bool] = None
        self.cancels = 0

    @property
    def minimum(self) -> int:
        return self.rules.round_minimum(self.round)

    @property
    def going_out(self) -> tuple:
        return self.rules.going_out_books(self.round)

    def copy(self) -> "Ledger":
        c = Ledger.__new__(Ledger)
        for k in Ledger.__slots__:
            setattr(c, k, getattr(self, k))
        c.opened = list(self.opened)
        return c

    def key(self) -> tuple:
        return (self.round, tuple(self.opened), self.value, self.forced, self.hand_melded, self.pending, self.asked,
                self.permission, self.cancels)

    def _end_turn(self) -> None:
        self.value = self.forced = self.hand_melded = self.pending = self.cancels = 0
        self.asked = False
        self.permission = None

    def _add(self, team: int, value: int) -> None:
        self.value += value
        if self.value >= self.minimum:
            self.opened[team] = True
            self.value = self.forced = self.hand_melded = self.pending = 0

    def after(self, g: Game, a: int) -> "Ledger":
        """The ledger after the player to act in ``g`` plays ``a`` (read before it is applied).

        A round's end is not seen here: :func:`track` starts the next round's ledger."""
        led = self.copy()
        p = g.current
        team = p % self.rules.teams
        if a == PICKUP:
            if not led.opened[team]:
                take = self.rules.pile_take
                taken = len(g.discard) if take == "all" else min(int(take), len(g.discard))
                led.pending += taken - 1
                led.forced = 3 * VALUE[g.discard[-1]]
                led._add(team, led.forced)
        elif a == CANCEL_MELDS:
            led.value = led.forced
            led.hand_melded = 0
            led.cancels += 1
        elif a == ASK_GO_OUT:
            led.asked = True
        elif a in (ANSWER_YES, ANSWER_NO):
            led.permission = a == ANSWER_YES
        elif DISCARD_BASE <= a < MELD_BASE:
            led._end_turn()
        elif a >= MELD_BASE and not led.opened[team]:
            s, n, t, j = MELD_SPECS[a - MELD_BASE]
            led.hand_melded += n + t + j
            led._add(team, n * (VALUE[s] if s < 11 else 0) + 20 * t + 50 * j)
        return led


def track(g: Game, led: Ledger, a: int) -> Ledger:
    """Play ``a`` on ``g`` (``Game.step``) and return the ledger after it; a round's end starts the next round's."""
    rounds = len(g.round_scores)
    nxt = led.after(g, a)
    g.step(a)
    if len(g.round_scores) > rounds:
        nxt = Ledger(g.rules, led.round + 1)
    return nxt


def check_ledger(g: Game, led: Ledger) -> None:
    """The engine's bookkeeping agrees with the rules' (the round's minimum, openings, held pile cards, the ask)."""
    if g.game_over:
        return
    assert g.minimum == led.minimum, f"round {led.round}: engine minimum {g.minimum}, rules {led.minimum}"
    assert tuple(g.going_out) == led.going_out, \
        f"round {led.round}: engine going-out books {g.going_out}, rules {led.going_out}"
    assert list(g.opened) == led.opened, f"openings: engine {g.opened}, rules {led.opened}"
    assert sum(g.pending) == led.pending, f"held pile cards: engine {sum(g.pending)}, rules {led.pending}"
    assert sum(g.prov) == led.hand_melded, f"cards melded from the hand: engine {sum(g.prov)}, rules {led.hand_melded}"
    engine, rules = (g.asked, g.permission, g.cancels), (led.asked, led.permission, led.cancels)
    assert engine == rules, f"ask/answer/cancels: engine {engine}, rules {rules}"


class Position:
    """The position as data: the player to act, their cards, their team's table."""

    def __init__(self, g: Game, led: Ledger):
        r = g.rules
        self.g = g
        self.rules = r
        self.phase = ("draw", "meld", "answer", "game_over")[g.phase]
        self.p = g.current
        self.team = self.p % r.teams
        self.hand = list(g.hands[self.p])
        self.in_foot = g.feet[self.p] is None
        self.mates = [q for q in range(r.players) if q != self.p and q % r.teams == self.team]
        self.melds = [list(m) for m in g.melds[self.team]]          # unfinished melds by slot: [n, twos, jokers]
        self.books = {"clean": 0, "dirty": 0, "wild": 0}
        for s, n, t, j in g.books[self.team]:
            assert n + t + j == 7
            self.books["wild" if s == W else ("clean" if t + j == 0 else "dirty")] += 1
        self.opened = led.opened[self.team]
        self.minimum = led.minimum
        self.going_out = led.going_out                # (clean, dirty, wild) books this round
        self.stock = len(g.stock)
        self.pile = list(g.discard)
        self.asked = led.asked
        self.permission = led.permission
        self.played_foot = list(g.played_foot)
        self.pending = led.pending
        self.hand_melded = led.hand_melded            # cards melded from the hand while unopened
        self.cancels = led.cancels

    # --- derived from the rules -------------------------------------------------
    def table_value(self) -> int:
        """Card value of the team's table (for an unopened team: this turn's melds)."""
        v = 0
        for s, (n, t, j) in enumerate(self.melds):
            v += n * (VALUE[s] if s < 11 else 0) + 20 * t + 50 * j
        for s, n, t, j in self.g.books[self.team]:
            v += n * (VALUE[s] if s < 11 else 0) + 20 * t + 50 * j
        return v

    def short_melds(self, melds=None) -> bool:
        """A meld of one or two cards: the overflow of a pickup, still to be made legal."""
        return any(0 < sum(m) < 3 for m in (melds if melds is not None else self.melds))

    def books_enough(self, books=None) -> bool:
        b = books or self.books
        nc, nd, nw = self.going_out
        return b["clean"] >= nc and b["dirty"] >= nd and b["wild"] >= nw

    def may_go_out(self) -> bool:
        """docs/rules.md 5: in the foot, teammates in their feet, a yes if the rules ask."""
        r = self.rules
        if not self.in_foot or not self.opened:
            return False
        if r.partner_in_foot and not all(self.played_foot[q] for q in self.mates):
            return False
        if r.ask_partner and self.mates and self.permission is not True:
            return False
        return True


def rule_ok(g: Game, a: int, pos: Position) -> bool:
    """The immediate conditions of docs/rules.md for action ``a`` (no look-ahead)."""
    r = pos.rules
    hand = pos.hand
    if pos.phase == "game_over":
        return False
    if pos.phase == "answer":
        return a in (ANSWER_YES, ANSWER_NO)
    if a in (ANSWER_YES, ANSWER_NO):
        return False
    if hand[RED3]:                                   # 4.1: a red three is laid first
        return a == LAY_RED_THREE
    if a == LAY_RED_THREE:
        return False
    if pos.phase == "draw":
        if a == DRAW:
            return pos.stock >= 2
        if a == PICKUP:
            if not pos.pile:
                return False
            top = pos.pile[-1]
            if top in (RED3, BLACK3) or hand[top] < 2:
                return False
            if r.pile_needs_opening and not pos.opened:   # 4.3: only a team that has opened
                return False
            return top < 11 or r.wild_melds
        return False
    # meld phase
    if a in (DRAW, PICKUP):
        return False
    if a == CANCEL_MELDS:
        return not pos.opened and pos.hand_melded > 0 and pos.cancels < 1
    if a == ASK_GO_OUT:
        if not r.ask_partner or not pos.mates or pos.asked or not pos.in_foot or not pos.opened:
            return False
        return not r.partner_in_foot or all(pos.played_foot[q] for q in pos.mates)
    if a < MELD_BASE:
        kind = DISCARD_KINDS[a - DISCARD_BASE]
        if not hand[kind] or pos.short_melds():
            return False
        if not pos.opened and pos.table_value() > 0:   # melds under the minimum are taken back first
            return False
        if pos.in_foot and sum(hand) == 1:             # the last card of the foot: going out
            return pos.may_go_out() and pos.books_enough()
        return True
    s, n, t, j = MELD_SPECS[a - MELD_BASE]
    if s == W and not r.wild_melds:
        return False
    if (s < 11 and hand[s] < n) or hand[TWO] < t or hand[JOKER] < j:
        return False
    n0, t0, j0 = pos.melds[s]
    size = n0 + t0 + j0 + n + t + j
    if size < 3 or size > 7:
        return False
    if s < 11 and not wild_limit_ok(n0 + n, t0 + j0 + t + j, r.wild_limit):
        return False
    # after the meld
    melds = [m[:] for m in pos.melds]
    books = dict(pos.books)
    melds[s] = [n0 + n, t0 + t, j0 + j]
    if size == 7:
        books["wild" if s == W else ("clean" if t0 + j0 + t + j == 0 else "dirty")] += 1
        melds[s] = [0, 0, 0]
    left = sum(hand) - n - t - j
    opened = pos.opened or pos.table_value() + n * (VALUE[s] if s < 11 else 0) + 20 * t + 50 * j >= pos.minimum
    if not pos.opened and opened:
        left += pos.pending                            # the held pile cards arrive at the opening
    if pos.in_foot and left < 2 and not pos.may_go_out():
        return False                                   # 4.6: two cards stay in the foot unless going out
    if left == 0:
        if not opened or pos.short_melds(melds):       # nothing unfinished when the hand empties
            return False
        if pos.in_foot and not pos.books_enough(books):
            return False                               # 5: the books, when the last card leaves
    return True


def _key(g: Game, led: Ledger) -> tuple:
    p = g.current
    t = p % g.rules.teams
    return (g.phase, p, g.turn_player, tuple(g.hands[p]), g.feet[p] is None, tuple(map(tuple, g.melds[t])),
            len(g.books[t]), tuple(g.book_counts[t]), len(g.stock), led.key())


def _after(g: Game, a: int, led: Ledger) -> Tuple[Game, Ledger, bool, Optional[int]]:
    """(clone after ``a``, the ledger after it, whether the round ended, who went out)."""
    h = g.clone()
    rounds = len(h.round_details)
    h.apply_legal(a)
    if len(h.round_details) > rounds:
        return h, led, True, h.round_details[-1]["went_out"]
    return h, led.after(g, a), False, None


def _candidates(g: Game, pos: Position) -> List[int]:
    """Actions worth trying in the meld phase: discards first, then melds (biggest first)."""
    hand = pos.hand
    out = [DISCARD_BASE + i for i, k in enumerate(DISCARD_KINDS) if hand[k]]
    wilds = hand[TWO] + hand[JOKER]
    melds = []
    for i, (s, n, t, j) in enumerate(MELD_SPECS):
        if s < 11 and not (hand[s] or (wilds and sum(pos.melds[s]))):
            continue
        if s == W and not wilds:
            continue
        melds.append((-(n + t + j), MELD_BASE + i))
    out += [a for _, a in sorted(melds)]
    out += [CANCEL_MELDS, ASK_GO_OUT, LAY_RED_THREE]
    return out


def _must_open(g: Game, pos: Position) -> bool:
    """An unopened team whose table cannot be taken back any more (a pickup's three cards,
    or the one cancel of the turn spent) must reach the minimum before discarding."""
    if pos.opened:
        return False
    table_cards = sum(map(sum, pos.melds)) + 7 * len(g.books[pos.team])
    from_pile = table_cards - pos.hand_melded
    return from_pile > 0 or (pos.cancels >= 1 and table_cards > 0)


def finishable(g: Game, led: Ledger, memo: Dict[tuple, bool]) -> bool:
    """Whether the player to act can still end the turn legally (a discard or going out)."""
    k = _key(g, led)
    if k in memo:
        return memo[k]
    memo[k] = False                                   # a cycle is no way out
    pos = Position(g, led)
    if pos.phase == "answer":
        res = all(finishable(*_after(g, a, led)[:2], memo) for a in (ANSWER_YES, ANSWER_NO))
        memo[k] = res
        return res
    if pos.phase != "meld":
        memo[k] = True
        return True
    if _must_open(g, pos):
        # admissible bound: every card in hand melded cannot reach the minimum
        reach = pos.table_value() + sum(c * v for c, v in zip(pos.hand[:13], VALUE[:13]))
        if reach < pos.minimum:
            return False
    res = False
    for a in _candidates(g, pos):
        if not rule_ok(g, a, pos):
            continue
        if DISCARD_BASE <= a < MELD_BASE:
            res = True
            break
        h, led2, ended, out = _after(g, a, led)
        if ended:
            if out is not None or a == LAY_RED_THREE:
                res = True
                break
            continue                                  # the engine's no-action safety net: no way out
        if finishable(h, led2, memo):
            res = True
            break
    memo[k] = res
    return res


def allowed(g: Game, a: int, led: Ledger, memo: Dict[tuple, bool], pos: Optional[Position] = None) -> bool:
    """Whether the rules allow ``a`` now: the immediate conditions and no dead end after it."""
    pos = pos or Position(g, led)
    if not rule_ok(g, a, pos):
        return False
    if a in (LAY_RED_THREE, ANSWER_YES, ANSWER_NO) or DISCARD_BASE <= a < MELD_BASE:
        return True                                   # forced, the partner's word, or the end of the turn
    h, led2, ended, out = _after(g, a, led)
    if ended:
        return out is not None                        # going out (its conditions are in rule_ok)
    return finishable(h, led2, memo)


def oracle_legal(g: Game, led: Ledger, memo: Optional[Dict[tuple, bool]] = None) -> Set[int]:
    """Every action id the rules allow the player to act, by trying each one."""
    memo = {} if memo is None else memo
    pos = Position(g, led)
    return {a for a in range(NUM_ACTIONS) if allowed(g, a, led, memo, pos)}


def check_state(g: Game) -> None:
    """Assert that a position satisfies the rules' invariants (docs/rules.md 1, 4.4)."""
    r = g.rules
    sd = g.state_dict()
    total = [c * r.decks for c in PER_DECK]
    seen = [0] * 15
    codes = {c: i for i, c in enumerate(RANKS + ("2", "JK", "3R", "3B"))}
    for group in sd["hands"] + sd["feet"] + [sd["discard"], sd["stock"], sd["pending_pile_cards"]]:
        for c in group:
            seen[codes[c]] += 1
    for t in range(r.teams):
        seen[RED3] += sd["red_threes"][t]
        for m in sd["melds"][t]:
            n, tw, j = m["naturals"], m["twos"], m["jokers"]
            size = n + tw + j
            assert 1 <= size <= 7 and m["book"] == (size == 7), m
            if m["rank"] == "W":
                assert n == 0, m
            else:
                seen[codes[m["rank"]]] += n
                if size >= 3:
                    assert wild_limit_ok(n, tw + j, r.wild_limit), m
                else:
                    assert n == 0 or tw + j == 0, m       # a pickup overflow: one kind of card
            seen[TWO] += tw
            seen[JOKER] += j
    assert seen == total, (seen, total)


def describe(actions) -> str:
    return ", ".join(ACTION_NAMES[a] for a in sorted(actions))
