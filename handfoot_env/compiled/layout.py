"""The flat state of the compiled core: one int64 row per game, fixed offsets.

Every game of a batch is one row of an ``int64`` matrix ``S``; the offsets below
are compile-time constants (sized for the largest table the rule limits allow:
8 players, 8 teams, 12 decks, 20 rounds), so the kernels index a row directly.
The rule fields are one ``int64`` vector ``R`` (offsets ``R_*``).  Cards are the
15 kinds of :mod:`handfoot_env.cards`; the stock and the pile are kind lists
(top of the stock last, as in :class:`handfoot_env.engine.Game`).
"""
from __future__ import annotations

import numpy as np

from ..actions import DISCARD_ACTION, MELD_SPECS
from ..cards import NUM_KINDS, PER_DECK, VALUES
from ..config import LIMITS, MAX_ROUNDS, RULE_FIELDS, RuleConfig

MAXP = LIMITS["players"][1]
MAXT = LIMITS["teams"][1]
MAXC = sum(PER_DECK) * LIMITS["decks"][1]
MAXRD = MAX_ROUNDS + 2                 # rounds, the extra round, and the round seeds' spare
MAXB = MAXC // 7 + 1                   # books of one team
MAXW = (PER_DECK[11] + PER_DECK[12]) * LIMITS["decks"][1]   # wild cards in the largest shoe

# scalars
(ROUND, DEALER, MINIMUM, CURRENT, TURN, PHASE, ASKED, PERM, CANCELS, RACTIONS, WENT_OUT, OVER, WINNER, EXTRA,
 ACOUNT, PROV_VALUE, FORCED, F_S, F_N, F_T, F_J, INCOMPLETE, STOCK_LEN, DISC_LEN, NRS, SEED, NEED_DEAL) = range(27)
HSIZE = 27                             # per player: cards in hand (the sum of its HANDS counts)
PILEC = HSIZE + MAXP                   # counts by kind of the pile's cards (16, 15 used)
UP_CARD = PILEC + 15                   # the round's up card (the 16th entry of PILEC's block)
RSEEDS = PILEC + 16                    # MAXRD round seeds
HANDS = RSEEDS + MAXRD                 # per player 15 counts
FEET = HANDS + MAXP * NUM_KINDS        # per player 15 counts (zero once picked up)
FOOTUP = FEET + MAXP * NUM_KINDS       # per player: foot picked up
PLAYED = FOOTUP + MAXP                 # per player: played from the foot
RED3S = PLAYED + MAXP                  # per team
OPENED = RED3S + MAXT
MVAL = OPENED + MAXT                   # card values on the table (melds and books)
BC = MVAL + MAXT                       # per team: clean, dirty, wild books
MELDS = BC + 3 * MAXT                  # per team, per slot: naturals, twos, jokers
NBOOKS = MELDS + 36 * MAXT
BOOKS = NBOOKS + MAXT                  # per team MAXB books, each slot*512 + n*64 + t*8 + j
PROV = BOOKS + MAXB * MAXT             # 16 (15 used)
PEND = PROV + 16
SCORES = PEND + 16
RSC = SCORES + MAXT                    # round scores: MAXRD x MAXT
STOCK = RSC + MAXRD * MAXT
DISC = STOCK + MAXC
RDET = DISC + MAXC                     # round details: round, went out, actions, 8 items per team
RDET_W = 3 + 8 * MAXT
WIDTH = RDET + MAXRD * RDET_W

# rule vector.  Its scalar part: one entry per rule field that names a slot (``Rule.slot`` in
# handfoot_env/config.py: R_N, R_T, R_DECKS, R_HAND, R_FOOT, R_DOUBLE, R_WM, R_CB, R_DB, R_WB, R_R3B,
# R_R3L, R_GOB, R_ASK, R_PIF, R_TAKE, R_EXTRA, ...), in the order of the fields, holding ``Rule.code``
# of its value; then the derived entries.  Each name is an offset of this module (the kernels import
# them as constants).
SCALARS = tuple((spec.slot, name) for name, spec in RULE_FIELDS.items() if spec.slot)
DERIVED = ("R_ROUNDS", "R_TOTAL")      # the number of rounds, the cards of the decks
R_SLOTS = {slot: i for i, slot in enumerate([slot for slot, _ in SCALARS] + list(DERIVED))}
globals().update(R_SLOTS)
R_MIN = 32                             # minimums, one per round
assert len(R_SLOTS) <= R_MIN, "the rule vector's scalar part outgrew R_MIN"
R_GO = R_MIN + MAX_ROUNDS              # books going out needs: per round clean, dirty, wild (3 each)
R_TM = R_GO + 3 * MAX_ROUNDS           # teammates of each player, in turn order (MAXP each)
R_NTM = R_TM + MAXP * MAXP
R_LEN = R_NTM + MAXP

# constant tables
VALS = np.asarray(VALUES, dtype=np.int64)
SPECS = np.asarray(MELD_SPECS, dtype=np.int64)
DISC_ACT = np.asarray(DISCARD_ACTION, dtype=np.int64)
DECK1 = np.asarray(PER_DECK, dtype=np.int64)


def _rank_meld_bits() -> np.ndarray:
    """``RANK_BITS[double, n0, w0, min(hn, 7), min(ht, 3), min(hj, 3)]``: bit ``i`` set when the
    ``i``-th meld id of a rank slot (``MELD_SPECS[i]``: naturals, twos, jokers added) fits a meld
    holding ``n0`` naturals and ``w0`` wilds and a hand holding ``hn`` of the rank, ``ht`` twos and
    ``hj`` jokers: 3 to 7 cards after it, and the wild limit kept.  The rules' other conditions
    (the opening, the foot, an incomplete meld) are checked per id by the kernels."""
    d, n0, w0, hn, ht, hj = np.ix_(range(2), range(7), range(7), range(8), range(4), range(4))
    bits = np.zeros((2, 7, 7, 8, 4, 4), dtype=np.int64)
    for i, (_, n, t, j) in enumerate(MELD_SPECS[:59]):
        nn, ww, size = n0 + n, w0 + t + j, n0 + w0 + n + t + j
        ok = (n <= hn) & (t <= ht) & (j <= hj) & (size >= 3) & (size <= 7) & np.where(d == 1, nn >= 2 * ww, nn > ww)
        bits |= np.where(ok, np.int64(1) << i, np.int64(0))
    return bits


def _wild_meld_bits() -> np.ndarray:
    """``WILD_BITS[size0, min(ht, 7), min(hj, 7)]``: bit ``i`` set when the wild slot's ``i``-th meld id
    fits a wild meld of ``size0`` cards and a hand of ``ht`` twos and ``hj`` jokers (3 to 7 after it)."""
    size0, ht, hj = np.ix_(range(7), range(8), range(8))
    bits = np.zeros((7, 8, 8), dtype=np.int64)
    for i, (_, _, t, j) in enumerate(MELD_SPECS[59 * 11:]):
        ok = (t <= ht) & (j <= hj) & (size0 + t + j >= 3) & (size0 + t + j <= 7)
        bits |= np.where(ok, np.int64(1) << i, np.int64(0))
    return bits


RANK_BITS = _rank_meld_bits()
WILD_BITS = _wild_meld_bits()


def rule_vector(rules: RuleConfig) -> np.ndarray:
    """The ``R`` vector of a rule config: every field reaches it (``tests/test_rule_fields.py``
    changes each field and checks the vector changes); the scalar part from the fields' slots, the
    per-round rules as tables, one entry per round, read through the config's accessors
    (``round_minimum``, ``going_out_books``)."""
    r = rules
    v = np.zeros(R_LEN, dtype=np.int64)
    for slot, name in SCALARS:
        v[R_SLOTS[slot]] = RULE_FIELDS[name].code(getattr(r, name))
    v[R_SLOTS["R_ROUNDS"]] = r.rounds
    v[R_SLOTS["R_TOTAL"]] = r.total_cards
    for i in range(r.rounds):
        v[R_MIN + i] = r.round_minimum(i + 1)
        v[R_GO + 3 * i:R_GO + 3 * i + 3] = r.going_out_books(i + 1)
    for p in range(r.players):
        mates = r.teammates(p)
        v[R_NTM + p] = len(mates)
        v[R_TM + MAXP * p:R_TM + MAXP * p + len(mates)] = mates
    return v
