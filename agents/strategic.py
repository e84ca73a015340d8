"""``StrategicAgent``: a rule-based Hand and Foot player built from the view alone.

It sees only its :class:`~handfoot_env.view.SeatView` (its own cards, everything
face up on the table, public sizes, the public action history) and chooses only
among ``view.legal_actions``; its plans use its own card counting, never the
engine's hidden state.

Strategy, per decision:

**Red three.** Lay it (the only legal action).

**Draw: take the pile or draw two.**  Take the pile when its cards are worth more
to the team than two unknown stock cards: the top seven are scored card by card
(naturals of ranks the team melds or the agent holds, wild cards high, black
threes as nearly worthless) and compared with the value of a draw.  It does not
take the pile when it is about to go out from the foot (the cards would only be
left over), nor late in a round when the stock is nearly gone and the cards would
be caught in hand at the end.

**Opening (first meld of the round).**  Open as soon as the hand reaches the
minimum, with naturals alone when possible.  Wild cards are added only to cover
the shortfall, jokers first (one joker covers more points than two twos), and by
the cheapest route: a natural pair plus one wild before a wild added to a full
meld, a wild meld only as the last resort.  Provisional melds are never started
unless the whole opening is planned; a pickup's forced meld is completed the same
way (or, failing that, with the highest-value legal meld).

**Melding once open.**
* Naturals go onto the team's unfinished melds and start new natural melds,
  largest first: clean books (500) need naturals only, and every card melded is
  a card not lost at the end of the round.  Getting the hand melded out as fast
  as possible also gets the agent into its foot quickly (13 more cards to meld).
* Wild cards are saved: they go to the wild meld (a wild book is 1,500, three
  clean books' worth), started as soon as three are held.  Wilds are put into
  natural melds only to finish dirty books the team still needs for going out
  (a meld of five or six naturals gets the one or two wilds that make it a book),
  for the opening, or to dump them at the end of a round (when the stock is
  nearly out a wild left in hand costs 20 or 50).  A pickup's overflow meld is
  completed with as few wilds as possible.
* Under rules without wild melds (``bicycle``) wild cards have no better use and
  the round is a race to go out: after the naturals, the meld that sheds the
  most cards, wilds included, comes first.

**Discard.**  Every candidate is scored as (what keeping it is worth to the agent)
+ (risk that it hands the next opponent the pile).  Keeping: wild cards and
naturals the team melds or the agent holds pairs of are worth a lot; lone
naturals little.  Risk: the chance that the next player, if an opponent, holds a
pair of that kind (estimated from the cards not yet seen: the agent counts the
whole discard pile, all melds and books and its own hand, with fewer expected if
that opponent discarded the kind this round), times the value of the seven cards
it would take; a kind the opponents have an unfinished meld of counts as riskier
(so it is avoided when the pile is valuable).  A black three (which blocks the next player from the pile)
is thrown when the pile is valuable, or when nothing else is cheap.

**Going out.**  From the foot, when its own plan says every card but at most one
(the discard) can be melded and the team's required books will then be there,
it asks (or goes out directly under rules without asking).  It then melds
everything, naturals first, and discards the last card.

**Answering the partner.**  The answerer knows only its own cards and public
sizes.  It says no while the cards the team still holds would cost more than
going out gains: the agent's own hand value (plus 100 for a red three, and an
estimate for an unplayed foot or for other teammates' cards from their sizes)
against the go-out bonus plus what the opponents' held cards (estimated from
their public sizes) would cost them.  Otherwise yes.

**Settings.**  The main strategic choices are parameters (:data:`PARAMS`), given as spec
arguments (``strategic(draw_worth=1.5, wilds=spend, go_out=ahead)``, see
:mod:`agents.registry`): how eagerly it takes the pile (``draw_worth``), how it answers about going
out (``answer_margin``) and when it asks (``go_out``), how it spends wild cards (``wild_meld_at``,
``wilds``), and the weights of its discard.  The defaults are the behaviour described above.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from handfoot_env.actions import (ANSWER_NO, ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, DISCARD_ACTION, DRAW,
                                  MELD_ACTION, PICKUP)
from handfoot_env.cards import BLACK3, JOKER, NUM_KINDS, NUM_RANKS, PER_DECK, RED3, TWO, VALUES, WILD_SLOT
from handfoot_env.view import SeatView

from .base import RuleAgent
from .heuristics import books_ok, discard_options, meld_options
from handfoot_env.melds import meld_points, wild_ok

BOOK = 7
AVG_CARD = 9.0          # average card value of an unknown card (for public-size estimates)


def plan_meld_out(hand: Sequence[int], melds: Sequence[Sequence[int]], rules) -> Tuple[int, List[int]]:
    """How many cards of ``hand`` could *not* be melded onto ``melds``, and the books that would form.

    A quick, slightly pessimistic plan: every natural rank first (filling the
    unfinished meld, then new melds of three or more), wild cards covering small
    remainders, then the rest of the wilds into the wild meld or into natural melds
    with room under the wild limit.  Black threes are never melded.
    """
    double = rules.wild_limit == "double"
    left = hand[BLACK3]
    books = [0, 0, 0]
    wilds = hand[TWO] + hand[JOKER]
    demands: List[Tuple[int, int, int]] = []        # (wilds needed, naturals saved, rank)
    state: Dict[int, Tuple[int, int]] = {}            # rank -> (naturals, wilds) of its final unfinished meld
    for r in range(NUM_RANKS):
        c = hand[r]
        n0, t0, j0 = melds[r]
        w0 = t0 + j0
        if c == 0:
            if n0 + w0:
                state[r] = (n0, w0)
            continue
        s = n0 + w0
        nat, w = n0, w0
        while c > 0:
            room = BOOK - s
            if s == 0:
                if c >= 3:
                    add = min(c, BOOK)
                else:
                    # one or two naturals need wilds to start a meld
                    need = 3 - c
                    if wild_ok(c, need, double):
                        demands.append((need, c, r))
                    else:
                        left += c
                    c = 0
                    nat, w, s = 0, 0, 0
                    break
            else:
                add = min(c, room)
            c -= add
            nat += add
            s += add
            if s == BOOK:
                books[0 if w == 0 else 1] += 1
                nat, w, s = 0, 0, 0
        if s:
            state[r] = (nat, w)
    demands.sort()
    for need, c, r in demands:
        if wilds >= need:
            wilds -= need
            state[r] = (c, need)
        else:
            left += c
    if wilds and rules.wild_melds:
        s = melds[WILD_SLOT][1] + melds[WILD_SLOT][2]
        if s + wilds >= 3:
            tot = s + wilds
            books[2] += tot // BOOK
            rem = tot % BOOK
            # one or two wilds over a wild book cannot start a new wild meld: try the natural melds
            wilds = rem if (tot >= BOOK and 0 < rem < 3) else 0
    if wilds:
        # the rest into natural melds with room under the wild limit, fullest first
        for _r, (nat, w) in sorted(state.items(), key=lambda x: -x[1][0]):
            while wilds and nat + w < BOOK and wild_ok(nat, w + 1, double):
                w += 1
                wilds -= 1
            if nat + w == BOOK:
                books[1] += 1
        left += wilds
    return left, books


#: StrategicAgent's strategic choices, given as spec arguments (``strategic(draw_worth=1.5, wilds=spend)``,
#: agents.registry) or keyword arguments: name -> (default, type or choices, what it decides).
PARAMS: Dict[str, Tuple[Any, Any, str]] = {
    "draw_worth": (2.0, float, "how eagerly it takes the pile: it takes it when the cards are worth at least this "
                               "many useful cards (a draw of two is worth about 2; lower takes the pile more often)"),
    "late_stock": (12, int, "stock size under which the round is treated as ending (pile taking discounted, "
                            "everything melded)"),
    "answer_margin": (0.0, float, "how it answers 'may I go out?': yes when the team's held cost minus the gain of "
                                  "going out is at most this (higher says yes more often)"),
    "opp_weight": (0.5, float, "weight of the opponents' held cards in the gain of going out (when answering)"),
    "risk_weight": (1.0, float, "weight of the risk that a discard hands the next opponent the pile"),
    "block_weight": (0.05, float, "how much a valuable pile favours throwing a black three"),
    "wild_meld_at": (3, int, "how it spends wild cards (1): the wild meld is started once this many wilds are "
                             "held (3 to 7; higher keeps them in hand longer)"),
    "wilds": ("save", ("save", "spend"), "how it spends wild cards (2): save puts them into natural melds only to "
                                         "finish dirty books the team still needs; spend finishes any natural "
                                         "meld into a book with them"),
    "go_out": ("ready", ("ready", "ahead"), "how it asks about going out: ready asks (or goes out) as soon as its "
                                            "plan says it can; ahead only when its team has at least as many books "
                                            "as every other team"),
}
_RANGES = {"draw_worth": (0.0, 100.0), "late_stock": (0, 500), "opp_weight": (0.0, 100.0), "risk_weight": (0.0, 100.0),
           "block_weight": (0.0, 100.0), "wild_meld_at": (3, 7), "answer_margin": (-1e6, 1e6)}


def check_params(params: Dict[str, Any]) -> Dict[str, Any]:
    """The full set of strategic choices: :data:`PARAMS`' defaults with ``params`` over them, each checked
    (``ValueError`` naming the parameter)."""
    out = {k: v[0] for k, v in PARAMS.items()}
    for k, v in params.items():
        if k not in PARAMS:
            raise ValueError(f"StrategicAgent: unknown parameter {k!r}; known: {', '.join(PARAMS)}")
        _, kind, _ = PARAMS[k]
        if isinstance(kind, tuple):
            if v not in kind:
                raise ValueError(f"StrategicAgent: {k} must be one of {', '.join(kind)}, got {v!r}")
        else:
            ok = not isinstance(v, bool) and isinstance(v, (int, float) if kind is float else int)
            if not ok:
                raise ValueError(f"StrategicAgent: {k} must be {'a number' if kind is float else 'an integer'}, "
                                 f"got {v!r}")
            lo, hi = _RANGES[k]
            if not lo <= v <= hi or v != v:
                raise ValueError(f"StrategicAgent: {k} must be between {lo:g} and {hi:g}, got {v!r}")
            v = float(v) if kind is float else int(v)
        out[k] = v
    return out


class StrategicAgent(RuleAgent):
    """A strong rule-based player (strategy per decision in the module docstring)."""

    name = "strategic"

    def __init__(self, seed: int = 0, **params: Any):
        super().__init__(seed)
        #: the strategic choices (:data:`PARAMS`; the defaults are the tuned values)
        self.p = check_params(params)

    # ------------------------------------------------------------ helpers
    def _unseen(self, view: SeatView) -> List[int]:
        """Cards of each kind not visible to this seat (other hands, feet, stock)."""
        decks = view.rules.decks
        u = [c * decks for c in PER_DECK]
        for k in range(NUM_KINDS):
            u[k] -= view.hand[k] + view.pending[k]
        for k in view.discard:
            u[k] -= 1
        for t in range(view.num_teams):
            for s, (n, tw, j) in enumerate(view.melds[t]):
                if s < NUM_RANKS:
                    u[s] -= n
                u[TWO] -= tw
                u[JOKER] -= j
            for s, n, tw, j in view.books[t]:
                if s < NUM_RANKS:
                    u[s] -= n
                u[TWO] -= tw
                u[JOKER] -= j
            u[RED3] -= view.red_threes[t]
        return [max(0, x) for x in u]

    def _out_allowed(self, view: SeatView) -> bool:
        """Whether emptying the foot is allowed now (books aside)."""
        r = view.rules
        if not view.in_foot or not view.opened[view.team]:
            return False
        if r.partner_in_foot and not all(view.played_foot[q] for q in view.teammates):
            return False
        if r.ask_partner and view.teammates:
            return view.permission is True
        return True

    def _late(self, view: SeatView) -> bool:
        return view.stock_size <= self.p["late_stock"]

    def _pick(self, legal: Sequence[int], specs: Sequence[Tuple[int, int, int, int]]) -> Optional[int]:
        s = set(legal)
        for spec in specs:
            a = MELD_ACTION.get(tuple(spec))
            if a is not None and a in s:
                return a
        return None

    # ------------------------------------------------------------ draw
    def _card_use(self, view: SeatView, k: int) -> float:
        """Worth of one more card of kind ``k`` to this seat, in 'useful cards'."""
        if k == BLACK3:
            return 0.2
        if k == RED3:
            return 1.0
        if k in (TWO, JOKER):
            return 2.5
        team_m = view.melds[view.team][k]
        c = view.hand[k]
        if sum(team_m) or c >= 2:
            return 1.3
        return 0.8 if c == 1 else 0.6

    def _draw(self, view: SeatView, legal: Sequence[int]) -> int:
        if PICKUP not in legal:
            return DRAW if DRAW in legal else legal[0]
        if DRAW not in legal:
            return PICKUP
        take = view.rules.pile_take
        pile = view.discard if take == "all" else view.discard[-int(take):]
        worth = sum(self._card_use(view, k) for k in pile[:-1]) + 1.5  # the top trio goes down at once
        if view.in_foot and books_ok(view) and view.hand_size <= 4:
            # about to go out: extra cards would only be left over
            return DRAW
        if self._late(view):
            # little time left to meld what the pile brings
            worth -= 0.15 * len(pile) * (self.p["late_stock"] - view.stock_size + 2) / 2
        return PICKUP if worth >= self.p["draw_worth"] else DRAW

    # ------------------------------------------------------------ answer
    def _answer(self, view: SeatView) -> int:
        r = view.rules
        cost = sum(VALUES[k] * view.hand[k] for k in range(NUM_KINDS) if k != RED3)
        cost += view.hand[RED3] * (-r.red_three_left)
        if not view.in_foot:
            cost += view.foot_sizes[view.seat] * AVG_CARD
        asker = view.turn_player
        for q in view.teammates:
            if q != asker:
                cost += (view.hand_sizes[q] + view.foot_sizes[q]) * AVG_CARD
        opp = sum((view.hand_sizes[q] + view.foot_sizes[q]) for q in range(view.num_players)
                  if view.team_of[q] != view.team) * AVG_CARD / max(1, view.num_teams - 1)
        gain = r.go_out_bonus + self.p["opp_weight"] * opp
        return ANSWER_YES if cost - gain <= self.p["answer_margin"] else ANSWER_NO

    # ------------------------------------------------------------ meld phase
    def _meld_phase(self, view: SeatView, legal: Sequence[int]) -> int:
        team = view.team
        melds = meld_options(legal)
        if view.incomplete >= 0:
            a = self._complete_overflow(view, melds)
            if a is not None:
                return a
        if not view.opened[team]:
            a = self._opening(view, legal, melds)
            if a is not None:
                return a
        else:
            if view.in_foot:
                a = self._going_out(view, legal, melds)
                if a is not None:
                    return a
            a = self._regular_meld(view, legal, melds)
            if a is not None:
                return a
        discards = discard_options(legal)
        if discards:
            return self._discard(view, discards)
        if melds:
            return max(melds, key=lambda m: (meld_points(*m[1:]), m[2], -m[0]))[0]
        if CANCEL_MELDS in legal:
            return CANCEL_MELDS
        return legal[0]

    def _complete_overflow(self, view: SeatView, melds) -> Optional[int]:
        s = view.incomplete
        cands = [m for m in melds if m[1] == s]
        if not cands:
            return None
        # as few wilds as possible, then as many naturals as possible
        return min(cands, key=lambda m: (m[3] + m[4], -m[2], m[0]))[0]

    # ---- opening
    def _opening_plan(self, view: SeatView) -> Optional[List[Tuple[int, int, int, int]]]:
        """Meld specs that take the team past the minimum, naturals first; ``None`` if impossible."""
        hand = view.hand
        M = view.melds[view.team]
        double = view.rules.wild_limit == "double"
        need = view.minimum - view.prov_value
        plan: List[Tuple[int, int, int, int]] = []
        nat_after: Dict[int, Tuple[int, int]] = {}
        total = 0
        for r in range(NUM_RANKS):
            c = hand[r]
            n0, t0, j0 = M[r]
            s = n0 + t0 + j0
            if c == 0:
                continue
            if s and s + c >= 3:
                add = min(c, BOOK - s)
            elif s == 0 and c >= 3:
                add = min(c, BOOK)
            else:
                continue
            plan.append((r, add, 0, 0))
            total += add * VALUES[r]
            nat_after[r] = (n0 + add, t0 + j0)
        plan.sort(key=lambda x: -x[1] * VALUES[x[0]])
        deficit = need - total
        jokers, twos = hand[JOKER], hand[TWO]
        while deficit > 0 and jokers + twos > 0:
            use_j = jokers > 0
            wv = 50 if use_j else 20
            best = None
            # a natural pair (or single with an existing provisional meld) plus one wild
            for r in range(NUM_RANKS):
                if r in nat_after:
                    continue
                c = hand[r]
                n0, t0, j0 = M[r]
                if n0 + t0 + j0 == 0 and c == 2 and wild_ok(2, 1, double):
                    gain = 2 * VALUES[r] + wv
                    if best is None or gain > best[0]:
                        best = (gain, r, 2)
            if best is None:
                for r, (n, w) in nat_after.items():
                    if n + w < BOOK and wild_ok(n, w + 1, double):
                        gain = wv
                        if best is None or gain > best[0]:
                            best = (gain, r, 0)
            if best is None:
                break
            gain, r, n = best
            spec = (r, n, 0, 1) if use_j else (r, n, 1, 0)
            plan.append(spec)
            if use_j:
                jokers -= 1
            else:
                twos -= 1
            prev = nat_after.get(r, (0, 0))
            nat_after[r] = (prev[0] + n, prev[1] + 1)
            deficit -= gain
        if deficit > 0 and view.rules.wild_melds:
            t0, j0 = M[WILD_SLOT][1], M[WILD_SLOT][2]
            if t0 + j0 + jokers + twos >= 3 and meld_points(WILD_SLOT, 0, twos, jokers) >= deficit:
                j = min(jokers, BOOK - t0 - j0)
                t = min(twos, BOOK - t0 - j0 - j)
                plan.append((WILD_SLOT, 0, t, j))
                deficit -= meld_points(WILD_SLOT, 0, t, j)
        if deficit > 0:
            return None
        # merge repeated specs on one slot into single actions where possible
        return plan

    def _opening(self, view: SeatView, legal: Sequence[int], melds) -> Optional[int]:
        plan = self._opening_plan(view)
        committed = view.prov_value > 0 or view.forced is not None
        if plan is not None:
            for slot, n, t, j in plan:
                # the planned meld, or (naturals only) a smaller one: the foot must keep cards
                specs = [(slot, n, t, j)]
                if not (t or j):
                    specs += [(slot, k, 0, 0) for k in range(n - 1, 0, -1)]
                a = self._pick(legal, specs)
                if a is not None:
                    return a
        if committed:
            if melds:
                return max(melds, key=lambda m: (meld_points(*m[1:]), -(m[3] + m[4]), -m[0]))[0]
            if CANCEL_MELDS in legal:
                return CANCEL_MELDS
        return None

    # ---- going out
    def _going_out(self, view: SeatView, legal: Sequence[int], melds) -> Optional[int]:
        team = view.team
        left, books = plan_meld_out(view.hand, view.melds[team], view.rules)
        feasible = left <= 1 and books_ok(view, books)
        if not feasible:
            return None
        if ASK_GO_OUT in legal and not view.asked:
            return ASK_GO_OUT if self._want_out(view) else None
        if not self._out_allowed(view):
            return None
        if not self._want_out(view):
            return None
        # meld everything: naturals first, then wild-using melds, the most cards first
        if melds:
            return max(melds, key=lambda m: (m[3] + m[4] == 0, m[2] + m[3] + m[4], -m[0]))[0]
        return None

    def _want_out(self, view: SeatView) -> bool:
        if self.p["go_out"] == "ready":
            return True
        mine = sum(view.book_counts[view.team])
        return all(mine >= sum(view.book_counts[t]) for t in range(view.num_teams) if t != view.team)

    # ---- regular melding (team open)

    @staticmethod
    def _race_meld(melds, late: bool) -> Optional[int]:
        """The meld of a round that is a race: ``late``, the round is ending: whatever sheds the most
        points; else, without wild melds, wild cards only ever go into natural melds and the round is
        a race to go out (docs/rules.md 7: bicycle): naturals first, then whatever melds the most cards."""
        if not melds:
            return None
        if late:
            return max(melds, key=lambda m: (meld_points(*m[1:]), -m[0]))[0]
        nat = [m for m in melds if m[3] + m[4] == 0]
        if nat:
            return max(nat, key=lambda m: (m[2], VALUES[m[1]], -m[0]))[0]
        return max(melds, key=lambda m: (m[2] + m[3] + m[4], meld_points(*m[1:]), -m[0]))[0]

    def _regular_meld(self, view: SeatView, legal: Sequence[int], melds) -> Optional[int]:
        hand = view.hand
        team = view.team
        M = view.melds[team]
        rules = view.rules
        double = rules.wild_limit == "double"
        late = self._late(view)
        if not rules.wild_melds or late:
            return self._race_meld(melds, late and rules.wild_melds)
        # 1. naturals onto unfinished melds, then new natural melds
        best = None
        for r in range(NUM_RANKS):
            c = hand[r]
            if c == 0:
                continue
            s = sum(M[r])
            if s:
                add = min(c, BOOK - s)
                pri = (2, add + s == BOOK, add * VALUES[r])
            elif c >= 3:
                add = min(c, BOOK)
                pri = (1, add == BOOK, add * VALUES[r])
            else:
                continue
            if best is None or pri > best[0]:
                best = (pri, r, add)
        if best is not None:
            _, r, add = best
            for k in range(add, 0, -1):
                a = self._pick(legal, [(r, k, 0, 0)])
                if a is not None:
                    return a
        # 2. wilds: the wild meld
        wilds = hand[TWO] + hand[JOKER]
        if wilds and rules.wild_melds:
            t0, j0 = M[WILD_SLOT][1], M[WILD_SLOT][2]
            s = t0 + j0
            if s or wilds >= self.p["wild_meld_at"]:
                room = BOOK - s
                j = min(hand[JOKER], room)
                t = min(hand[TWO], room - j)
                specs = []
                for tot in range(t + j, 0, -1):
                    jj = min(j, tot)
                    specs.append((WILD_SLOT, 0, tot - jj, jj))
                a = self._pick(legal, specs)
                if a is not None:
                    return a
        # 3. wilds into natural melds: dirty books the team needs
        need_dirty = (view.book_counts[team][1] < rules.going_out_books(view.round)[1]
                      or self.p["wilds"] == "spend")
        if wilds and need_dirty:
            cands = []
            for r in range(NUM_RANKS):
                n0, t0, j0 = M[r]
                s = n0 + t0 + j0
                if not s:
                    continue
                w_needed = BOOK - s
                if w_needed <= wilds and wild_ok(n0, t0 + j0 + w_needed, double):
                    cands.append((w_needed, -n0, r))
            if cands:
                w_needed, _, r = min(cands)
                t = min(hand[TWO], w_needed)
                j = w_needed - t
                a = self._pick(legal, [(r, 0, t, j), (r, 0, w_needed - min(hand[JOKER], w_needed),
                                                      min(hand[JOKER], w_needed))])
                if a is not None:
                    return a
        return None

    # ------------------------------------------------------------ discard
    def _keep_value(self, view: SeatView, k: int) -> float:
        hand = view.hand
        if k in (TWO, JOKER):
            return 10.0
        if k == BLACK3:
            return 0.1
        c = hand[k]
        team_m = view.melds[view.team][k]
        v = 0.3 + VALUES[k] / 200.0 if not view.opened[view.team] else 0.3 - VALUES[k] / 400.0
        if sum(team_m):
            v += 1.5
        if c >= 3:
            v += 1.5
        elif c == 2:
            v += 0.8
        return v

    def _discard(self, view: SeatView, discards) -> int:
        n = view.num_players
        nxt = (view.turn_player + 1) % n
        opp_next = view.team_of[nxt] != view.team
        unseen = self._unseen(view)
        U = max(1, sum(unseen))
        H = view.hand_sizes[nxt]
        take = view.rules.pile_take
        # kinds the next player discarded this round (unlikely to be held in pairs)
        thrown = set()
        for p, a in view.round_history:
            if p == nxt and 7 <= a < 21:
                thrown.add(a)
        opp_team = view.team_of[nxt]
        opp_melds = view.melds[opp_team]
        best = None
        for a, k in discards:
            keep = self._keep_value(view, k)
            risk = 0.0
            pile_after = list(view.discard) + [k]
            taken = pile_after if take == "all" else pile_after[-int(take):]
            pile_worth = sum(1.0 if x < NUM_RANKS else (2.5 if x in (TWO, JOKER) else 0.2) for x in taken)
            if opp_next and k != BLACK3:
                lam = H * unseen[k] / U
                p2 = 1.0 - math.exp(-lam) * (1.0 + lam)
                if DISCARD_ACTION[k] in thrown:
                    p2 *= 0.5
                if k < NUM_RANKS and sum(opp_melds[k]):
                    p2 = min(1.0, p2 * 1.3)
                if not view.opened[opp_team]:
                    p2 *= 0.6
                risk = self.p["risk_weight"] * p2 * pile_worth
            elif k == BLACK3 and opp_next:
                keep -= self.p["block_weight"] * pile_worth
            score = keep + risk
            if best is None or score < best[0]:
                best = (score, a)
        return best[1]


__all__ = ["StrategicAgent", "plan_meld_out", "PARAMS", "check_params"]
