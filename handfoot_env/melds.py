"""Melds: card points, the wild limit, the legal meld tables and the opening search.

The rule arithmetic of melds lives here and nowhere else:

* :func:`meld_points` is the card value of ``n`` naturals of a rank plus ``t``
  twos and ``j`` jokers (docs/rules.md section 1: twos 20, jokers 50);
* :func:`wild_ok` is the wild limit (``double``: naturals at least twice the
  wilds; ``majority``: more naturals than wilds);
* the structural meld tables list, per rank slot and hand shape, every meld the
  table of action ids allows (:data:`handfoot_env.actions.MELDS_BY_SLOT`);
* :func:`max_meld_value` and its cheap bounds answer "can this hand still reach
  the opening minimum", used for pickups by unopened teams and for provisional
  melds after ``cancel_melds``.

The engine (:mod:`handfoot_env.engine`) calls these on its hot path, so they are
plain functions over ints and count lists, cached where the inputs repeat.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .actions import MELDS_BY_SLOT
from .cards import JOKER, NUM_RANKS, NUM_SLOTS, TWO, VALUES, WILD_SLOT

BOOK_SIZE = 7
CLEAN, DIRTY, WILD = 0, 1, 2
BOOK_TYPE_NAMES = ("clean", "dirty", "wild")
#: card value of a two and of a joker
TWO_POINTS, JOKER_POINTS = VALUES[TWO], VALUES[JOKER]
#: card value of one natural of each rank slot (0 for the wild slot)
NATURAL_POINTS = tuple(VALUES[s] if s < NUM_RANKS else 0 for s in range(NUM_RANKS + 1))


def meld_points(slot: int, naturals: int, twos: int, jokers: int) -> int:
    """Card value of ``naturals`` cards of rank slot ``slot`` plus ``twos`` twos and ``jokers`` jokers."""
    return naturals * NATURAL_POINTS[slot] + twos * TWO_POINTS + jokers * JOKER_POINTS


def add_provisional(prov: List[int], slot: int, naturals: int, twos: int, jokers: int) -> int:
    """Count a meld laid before the team has opened into ``prov`` (cards by kind, taken back by
    ``cancel_melds``); its points toward the opening minimum."""
    if slot < NUM_RANKS:
        prov[slot] += naturals
    prov[TWO] += twos
    prov[JOKER] += jokers
    return meld_points(slot, naturals, twos, jokers)


def wild_ok(naturals: int, wilds: int, double: bool) -> bool:
    """The wild limit: ``double`` (naturals >= 2 x wilds) or, if false, majority (naturals > wilds)."""
    return naturals >= 2 * wilds if double else naturals > wilds


def book_type(naturals: int, wilds: int) -> int:
    """:data:`CLEAN`, :data:`DIRTY` or :data:`WILD` for a completed book."""
    return WILD if naturals == 0 else (CLEAN if wilds == 0 else DIRTY)


@lru_cache(maxsize=None)
def structural_melds(slot: int, hn: int, ht: int, hj: int, n0: int, t0: int, j0: int,
                      double: bool) -> Tuple[Tuple[int, int, int, int, int], ...]:
    """Meld actions that are valid for the meld itself: (id, N, T, J, makes_book).

    ``hn/ht/hj`` are the naturals of the slot's rank, twos and jokers in hand
    (capped by the caller), ``n0/t0/j0`` the slot's current unfinished meld.
    """
    size0 = n0 + t0 + j0
    out = []
    for aid, n, t, j in MELDS_BY_SLOT[slot]:
        if n > hn or t > ht or j > hj:
            continue
        total = size0 + n + t + j
        if total < 3 or total > BOOK_SIZE:
            continue
        if slot != WILD_SLOT and not wild_ok(n0 + n, t0 + j0 + t + j, double):
            continue
        out.append((aid, n, t, j, total == BOOK_SIZE))
    return tuple(out)


@lru_cache(maxsize=None)
def structural_ids(slot: int, hn: int, ht: int, hj: int, n0: int, t0: int, j0: int,
                    double: bool) -> Tuple[tuple, Tuple[int, ...]]:
    """``structural_melds`` with the tuple of their action ids (for the hot path).

    Computed from slot 0 with the ids shifted (every natural slot has the same
    meld table) and hand counts capped at the meld's room (more change nothing),
    so that its many keys share few ``structural_melds`` computations.
    """
    if slot == WILD_SLOT:
        cand = structural_melds(slot, hn, ht, hj, n0, t0, j0, double)
    else:
        room = BOOK_SIZE - n0 - t0 - j0
        base = structural_melds(0, min(hn, room), min(ht, room), min(hj, room), n0, t0, j0, double)
        shift = MELDS_BY_SLOT[slot][0][0] - MELDS_BY_SLOT[0][0][0]
        cand = tuple((aid + shift, n, t, j, book) for aid, n, t, j, book in base)
    return cand, tuple(c[0] for c in cand)


@lru_cache(maxsize=None)
def fresh_meld_table(double: bool) -> list:
    """``structural_melds`` for an empty natural meld as a table ``[ht][hj][slot][hn]``
    of (candidates, their ids), hn capped at 7 and ht, hj at 3 (the hot path's lookup)."""
    return [[[[structural_ids(s, hn, ht, hj, 0, 0, 0, double) for hn in range(8)]
              for s in range(NUM_RANKS)] for hj in range(4)] for ht in range(4)]


@lru_cache(maxsize=None)
def rank_options(hn: int, n0: int, w0: int, wmax: int, double: bool) -> Tuple[Tuple[int, int], ...]:
    """(naturals, wilds) additions to one rank that leave all its melds legal.

    The rank's unfinished meld holds ``n0`` naturals and ``w0`` wilds; every
    meld but the last must become a book before the next one starts.
    """
    res = set()

    def rec(k: int, x: int, nc: int, wc: int, depth: int) -> None:
        # place (a, b) more cards into the current meld; k, x already used
        s = nc + wc
        if s == 0 or (s >= 3 and wild_ok(nc, wc, double)):
            res.add((k, x))
        if depth > 4:
            return
        for a in range(0, min(hn - k, BOOK_SIZE - s) + 1):
            for b in range(0, min(wmax - x, BOOK_SIZE - s - a) + 1):
                if a == 0 and b == 0:
                    continue
                ns, nn, nw = s + a + b, nc + a, wc + b
                if ns == BOOK_SIZE:
                    if wild_ok(nn, nw, double):
                        rec(k + a, x + b, 0, 0, depth + 1)
                elif ns >= 3 and wild_ok(nn, nw, double):
                    res.add((k + a, x + b))

    rec(0, 0, n0, w0, 0)
    return tuple(sorted(res))


@lru_cache(maxsize=None)
def wild_meld_options(w_hand: int, w0: int) -> Tuple[int, ...]:
    """Numbers of wilds that can go into wild melds given an unfinished one of ``w0``."""
    res = set()

    def rec(used: int, s: int, depth: int) -> None:
        if s == 0 or s >= 3:
            res.add(used)
        if depth > 3:
            return
        for a in range(1, min(w_hand - used, BOOK_SIZE - s) + 1):
            ns = s + a
            if ns == BOOK_SIZE:
                rec(used + a, 0, depth + 1)
            elif ns >= 3:
                res.add(used + a)

    rec(0, w0, 0)
    return tuple(sorted(res))


# natural ranks, highest card value first
_RANKS_BY_VALUE = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)


def opening_bounds(hand: Sequence[int], sizes: Sequence[int], wild_melds: bool, max_cards: int,
                    need: int) -> Optional[bool]:
    """Cheap exact answer to ``max_meld_value(hand, slots, rules, max_cards) >= need``, if any.

    ``sizes`` are the card counts of the unfinished melds in ``slots``, each 0 or
    at least 3 (true for an unopened team: only an opened team's pickup overflow
    is shorter; otherwise None).  Returns False when an upper bound on the value
    stays under ``need``, True when melds that the dynamic program certainly
    considers reach it, None when only the program can tell.
    """
    if sizes[WILD_SLOT] in (1, 2):
        return None
    wilds = hand[TWO] + hand[JOKER]
    # Upper bound: the best ``max_cards`` card values among the cards that could be melded.
    # Not meldable: threes, a single natural of a rank without an unfinished meld, and a
    # pair of such a rank without a wild (a new meld of two naturals needs exactly one
    # wild, so at most ``wilds`` such pairs).
    counts = [0, 0, 0]                     # cards of value 5, 10 and 20 (aces), pairs included
    pairs: List[int] = []
    for r in _RANKS_BY_VALUE:
        sz = sizes[r]
        if sz in (1, 2):
            return None
        k = hand[r]
        if sz or k >= 3:
            counts[VALUES[r] // 10] += k
        elif k == 2 and len(pairs) < wilds:
            pairs.append(VALUES[r])
    for v in pairs:
        counts[v // 10] += 2
    high, left = 0, max_cards
    for c, v in ((hand[JOKER], 50), (hand[TWO] + counts[2], 20), (counts[1], 10), (counts[0], 5)):
        if left <= 0:
            break
        if c > left:
            c = left
        high += c * v
        left -= c
    if high < need:
        return False
    # Lower bound from options that rank_options and wild_meld_options certainly list
    # (all unfinished melds being legal): the biggest wild meld addition, then per rank
    # naturals only (onto the unfinished meld up to a book, which naturals never make
    # illegal, or a new meld of 3-7; after a book a new meld of 3-7), then new melds of a
    # pair and one wild.  The program counts wilds by the best ones, jokers first.
    budget, nat, used_w = max_cards, 0, 0
    if wild_melds and wilds:
        used_w = max(o for o in wild_meld_options(wilds, sizes[WILD_SLOT]) if o <= budget)  # 0 is one
        budget -= used_w
    for r in _RANKS_BY_VALUE:
        k = hand[r]
        if not k or budget <= 0:
            continue
        sz = sizes[r]
        room = BOOK_SIZE - sz
        c = min(k, room, budget)
        if not sz and c < 3:
            continue
        if c == room:                       # a book: a new meld may follow
            rest = min(k - c, BOOK_SIZE, budget - c)
            if rest >= 3:
                c += rest
        nat += c * VALUES[r]
        budget -= c
    for r in _RANKS_BY_VALUE:
        if used_w >= wilds or budget < 3:
            break
        if hand[r] == 2 and not sizes[r]:
            nat += 2 * VALUES[r]
            used_w += 1
            budget -= 3
    jokers = hand[JOKER] if hand[JOKER] < used_w else used_w
    return True if nat + 50 * jokers + 20 * (used_w - jokers) >= need else None


def max_meld_value(hand: Sequence[int], slots: Sequence[Sequence[int]], rules: Any,
                   max_cards: int) -> int:
    """Highest card value that ``hand`` can add to the team's melds ``slots``.

    At most ``max_cards`` cards may be used.  Used for the first-meld minimum:
    a pickup by an unopened team, and provisional melds once ``cancel_melds`` is
    spent, are only legal when the opening can still be reached.
    """
    double = rules.wild_limit == "double"
    wilds = hand[TWO] + hand[JOKER]
    # dp: (wilds used in natural melds, cards used) -> best natural value
    dp: Dict[Tuple[int, int], int] = {(0, 0): 0}
    for r in range(NUM_RANKS):
        n0, t0, j0 = slots[r]
        hn = hand[r]
        if hn == 0 and n0 + t0 + j0 == 0:
            continue
        opts = rank_options(min(hn, 14), n0, t0 + j0, min(wilds, 6), double)
        v = VALUES[r]
        ndp: Dict[Tuple[int, int], int] = {}
        for (x, c), val in dp.items():
            for k, b in opts:
                nx, nc = x + b, c + k + b
                if nx > wilds or nc > max_cards:
                    continue
                key = (nx, nc)
                nv = val + k * v
                if ndp.get(key, -1) < nv:
                    ndp[key] = nv
        dp = ndp
    # wild values, best first
    wvals = [50] * hand[JOKER] + [20] * hand[TWO]
    prefix = [0]
    for w in wvals:
        prefix.append(prefix[-1] + w)
    wild_opts = (0,)
    if rules.wild_melds:
        w0 = slots[WILD_SLOT][1] + slots[WILD_SLOT][2]
        wild_opts = wild_meld_options(wilds, w0)
    best = 0
    for (x, c), val in dp.items():
        for y in wild_opts:
            if x + y <= wilds and c + y <= max_cards:
                tot = val + prefix[x + y]
                if tot > best:
                    best = tot
    return best


@lru_cache(maxsize=4096)
def go_out_search(naturals: Tuple[int, ...], wilds: int, discard_free: bool,
                   slots: Tuple[Tuple[int, int, int], ...], have: Tuple[int, int, int],
                   need: Tuple[int, int, int], double: bool, wild_melds: bool) -> bool:
    """Whether these cards can all be melded, but for at most one discard, meeting the going-out books.

    Exact; the engine asks it (``Game._can_go_out``) only when a meld or pickup would leave
    fewer than two cards in the foot.

    Slot by slot, every natural of the rank goes onto its meld chain (fill the unfinished
    meld to a book, then start the next), except at most one card kept for the final
    discard (``discard_free``); the ``wilds`` (twos and jokers alike) are spread over
    the chains and the wild meld.  ``have`` counts books per type, capped at ``need``.
    """
    def chain(n0: int, w0: int, nat: int, wmax: int, wild_slot: bool):
        # (wilds used, clean, dirty, wild books) for placing all ``nat`` naturals and some wilds
        out = set()

        def rec(n: int, w: int, nat_left: int, used: int, c: int, d: int, wb: int) -> None:
            size = n + w
            if nat_left == 0 and (size == 0 or (size >= 3 and (wild_slot or wild_ok(n, w, double)))):
                out.add((used, c, d, wb))
            room = BOOK_SIZE - size
            # complete a book with ``a`` naturals and ``b`` wilds, then go on with an empty meld
            for a in range(min(nat_left, room) + 1):
                b = room - a
                if b > wmax - used:
                    continue
                if wild_slot:
                    rec(0, 0, nat_left, used + b, c, d, wb + 1)
                elif wild_ok(n + a, w + b, double):
                    if w + b:
                        rec(0, 0, nat_left - a, used + b, c, d + 1, wb)
                    else:
                        rec(0, 0, nat_left - a, used + b, c + 1, d, wb)
            # or end the chain here: all remaining naturals and ``b`` more wilds in this meld,
            # short of a book
            for b in range(0, min(wmax - used, BOOK_SIZE - 1 - size - nat_left) + 1):
                nn, ww = n + nat_left, w + b
                if nn + ww >= 3 and (wild_slot or wild_ok(nn, ww, double)):
                    out.add((used + b, c, d, wb))

        rec(n0, w0, nat, 0, 0, 0, 0)
        return out

    # states: (wilds left, discard still free, books capped) after each slot
    states = {(wilds, discard_free, have)}
    for s in range(NUM_SLOTS):
        n0, t0, j0 = slots[s]
        nat = naturals[s] if s < NUM_RANKS else 0
        if s == WILD_SLOT and not wild_melds:
            continue
        if nat == 0 and n0 + t0 + j0 == 0 and (s < NUM_RANKS or not any(st[0] for st in states)):
            continue
        nxt = set()
        for wl, free, bk in states:
            options = [(nat, free)]
            if free and nat:
                options.append((nat - 1, False))        # keep one natural of this rank for the discard
            for k, free2 in options:
                for used, c, d, wb in chain(n0, t0 + j0, k, wl, s == WILD_SLOT):
                    nb = (min(bk[0] + c, need[0]), min(bk[1] + d, need[1]), min(bk[2] + wb, need[2]))
                    nxt.add((wl - used, free2, nb))
        states = nxt
        if not states:
            return False
    for wl, free, bk in states:
        if bk == need and (wl == 0 or (wl == 1 and free)):
            return True
    return False
