"""Applying actions and playing rounds, as :mod:`handfoot_env.engine` does, on one flat game row.

:func:`apply_legal` is ``Game.apply_legal`` (an action from the legal list of the state);
:func:`reset` is ``Game.reset`` with checked arguments; :func:`end_round` scores a round
(``Game._end_round``) and :func:`settle` deals the next one and ends rounds whose player to act
is stuck (``Game._settle``), in a loop rather than by recursion.
"""
from __future__ import annotations

import numpy as np
from . import kernel

from .layout import (ACOUNT, ASKED, BC, BOOKS, CANCELS, CURRENT, DEALER, DECK1, DISC, DISC_LEN, EXTRA, F_J, F_N,
                     F_S, F_T, FEET, FOOTUP, FORCED, HANDS, HSIZE, INCOMPLETE, MAXB, MAXC, MAXP, MAXT, MELDS,
                     MINIMUM, MVAL, NBOOKS, NEED_DEAL, NRS, OPENED, OVER, PEND, PERM, PHASE, PILEC, PLAYED, PROV,
                     PROV_VALUE, R_CB, R_DB, R_DECKS, R_EXTRA, R_FOOT, R_GOB, R_HAND, R_MIN, R_N, R_R3B, R_R3L,
                     R_ROUNDS, R_T, R_TM, R_WB, RACTIONS, RDET, RDET_W, RED3S, ROUND, RSC, RSEEDS, SCORES, SEED,
                     SPECS, STOCK, STOCK_LEN, TURN, UP_CARD, VALS, WENT_OUT, WINNER)
from .intrinsics import unowned
from .rng import randbelow, seeded, shuffle
from .rules import (ANSWER_NO, ANSWER_PHASE, ANSWER_YES, ASK_GO_OUT, CANCEL_MELDS, CLEAN, DIRTY, DISCARD_BASE, DRAW,
                    DRAW_PHASE, GAME_OVER, JOKER, LAY_RED_THREE, MELD_BASE, MELD_PHASE, NK, NR, PICKUP, RED3, TWO,
                    WILD, WILD_SLOT, hand_at, hand_size, legal_into, meld_at, pickup_ok, points, taken_count,
                    top_unit)
@kernel
def _add_to_meld(s, team, slot, n, t, j):
    s[MVAL + team] += points(slot, n, t, j)
    m = meld_at(team, slot)
    s[m] += n
    s[m + 1] += t
    s[m + 2] += j
    if s[m] + s[m + 1] + s[m + 2] == 7:
        w = s[m + 1] + s[m + 2]
        kind = WILD if s[m] == 0 else (CLEAN if w == 0 else DIRTY)
        s[BC + 3 * team + kind] += 1
        nb = s[NBOOKS + team]
        s[BOOKS + MAXB * team + nb] = slot * 512 + s[m] * 64 + s[m + 1] * 8 + s[m + 2]
        s[NBOOKS + team] = nb + 1
        s[m] = s[m + 1] = s[m + 2] = 0


@kernel
def _open(s, R, p):
    team = p % R[R_T]
    s[OPENED + team] = 1
    h = hand_at(p)
    for k in range(NK):
        s[h + k] += s[PEND + k]
        s[HSIZE + p] += s[PEND + k]
        s[PEND + k] = 0
        s[PROV + k] = 0
    s[PROV_VALUE] = 0
    s[FORCED] = s[F_S] = s[F_N] = s[F_T] = s[F_J] = 0


@kernel
def _pick_up_foot(s, p):
    h, f = hand_at(p), FEET + NK * p
    size = 0
    for k in range(NK):
        s[h + k] = s[f + k]
        size += s[f + k]
        s[f + k] = 0
    s[HSIZE + p] = size
    s[FOOTUP + p] = 1


@kernel
def _after_hand_change(s, R, p, ro, wo):
    if hand_size(s, p):
        return
    if not s[FOOTUP + p]:
        _pick_up_foot(s, p)
    else:
        s[WENT_OUT] = p
        end_round(s, R)


@kernel
def _apply_meld(s, R, p, slot, n, t, j, ro, wo):
    h = hand_at(p)
    team = p % R[R_T]
    if slot < NR:
        s[h + slot] -= n
    s[h + TWO] -= t
    s[h + JOKER] -= j
    s[HSIZE + p] -= n + t + j
    if s[FOOTUP + p]:
        s[PLAYED + p] = 1
    _add_to_meld(s, team, slot, n, t, j)
    if slot == s[INCOMPLETE]:
        s[INCOMPLETE] = -1
    if not s[OPENED + team]:
        if slot < NR:
            s[PROV + slot] += n
        s[PROV + TWO] += t
        s[PROV + JOKER] += j
        s[PROV_VALUE] += points(slot, n, t, j)
        if s[PROV_VALUE] >= s[MINIMUM]:
            _open(s, R, p)
    _after_hand_change(s, R, p, ro, wo)


@kernel
def _apply_pickup(s, R, p, ro, wo):
    h = hand_at(p)
    team = p % R[R_T]
    nd = s[DISC_LEN]
    top = s[DISC + nd - 1]
    k = taken_count(s, R)
    s[DISC_LEN] = nd - k
    s[h + top] -= 2
    s[HSIZE + p] -= 2
    taken = s[DISC + nd - k:DISC + nd].copy()
    s[DISC + nd - k:DISC + nd] = 0
    for i in range(k):
        s[PILEC + taken[i]] -= 1
    slot = WILD_SLOT if top >= NR else top
    un, ut, uj = top_unit(top)
    if s[FOOTUP + p]:
        s[PLAYED + p] = 1
    if s[OPENED + team]:
        for i in range(k - 1):
            s[h + taken[i]] += 1
        s[HSIZE + p] += k - 1
        m = meld_at(team, slot)
        room = 7 - (s[m] + s[m + 1] + s[m + 2])
        first = 3 if room > 3 else room
        over = 3 - first
        _add_to_meld(s, team, slot, un * first, ut * first, uj * first)
        if over:
            _add_to_meld(s, team, slot, un * over, ut * over, uj * over)
            s[INCOMPLETE] = slot
    else:
        for i in range(k - 1):
            s[PEND + taken[i]] += 1
        _add_to_meld(s, team, slot, 3 * un, 3 * ut, 3 * uj)
        s[FORCED], s[F_S], s[F_N], s[F_T], s[F_J] = 1, slot, 3 * un, 3 * ut, 3 * uj
        s[PROV_VALUE] += 3 * VALS[top]
        if s[PROV_VALUE] >= s[MINIMUM]:
            _open(s, R, p)
    s[PHASE] = MELD_PHASE
    _after_hand_change(s, R, p, ro, wo)


@kernel
def _clear_table(s, team):
    """Every meld and book of ``team`` off the table, with their counts and value."""
    for i in range(36):
        s[MELDS + 36 * team + i] = 0
    for i in range(s[NBOOKS + team]):
        s[BOOKS + MAXB * team + i] = 0
    s[NBOOKS + team] = 0
    s[BC + 3 * team] = s[BC + 3 * team + 1] = s[BC + 3 * team + 2] = 0
    s[MVAL + team] = 0


@kernel
def _cancel(s, R, p):
    team = p % R[R_T]
    h = hand_at(p)
    for k in range(NK):
        s[h + k] += s[PROV + k]
        s[HSIZE + p] += s[PROV + k]
        s[PROV + k] = 0
    _clear_table(s, team)
    s[PROV_VALUE] = 0
    if s[FORCED]:
        _add_to_meld(s, team, s[F_S], s[F_N], s[F_T], s[F_J])
        s[PROV_VALUE] = points(s[F_S], s[F_N], s[F_T], s[F_J])
    s[CANCELS] += 1


@kernel
def _next_turn(s, R):
    s[TURN] = (s[TURN] + 1) % R[R_N]
    s[CURRENT] = s[TURN]
    s[PHASE] = DRAW_PHASE
    s[ASKED] = 0
    s[PERM] = -1
    s[CANCELS] = 0


@kernel
def _apply_discard(s, R, p, kind, ro, wo):
    h = hand_at(p)
    s[h + kind] -= 1
    s[HSIZE + p] -= 1
    s[DISC + s[DISC_LEN]] = kind
    s[DISC_LEN] += 1
    s[PILEC + kind] += 1
    in_foot = s[FOOTUP + p] == 1
    if in_foot:
        s[PLAYED + p] = 1
    if not hand_size(s, p):
        if in_foot:
            s[WENT_OUT] = p
            end_round(s, R)
            return
        _pick_up_foot(s, p)
    _next_turn(s, R)


@kernel
def _pop_stock(s):
    n = s[STOCK_LEN] - 1
    s[STOCK_LEN] = n
    k = s[STOCK + n]
    s[STOCK + n] = 0                  # rows hold nothing past the lists' ends (whole rows compare)
    return k


@kernel
def apply_legal(s, R, a, ro, wo):
    """``Game.apply_legal``: ``a`` must be in the legal list of this state."""
    s, R, ro, wo = unowned(s), unowned(R), unowned(ro), unowned(wo)
    apply_action(s, R, a, ro, wo)
    settle(s, R, ro, wo)


@kernel
def apply_legal_books(s, R, a, ro, wo, books):
    """:func:`apply_legal`, writing into ``books`` each team's book counts (clean, dirty, wild) as the
    action left them, before a round it ended is followed by the next deal; returns the number of
    rounds the action ended (a round dealt and ended at once by a stuck player has no books)."""
    s, R, ro, wo, books = unowned(s), unowned(R), unowned(ro), unowned(wo), unowned(books)
    rounds = s[NRS]
    apply_action(s, R, a, ro, wo)
    for i in range(3 * R[R_T]):
        books[i] = s[BC + i]
    settle(s, R, ro, wo)
    return s[NRS] - rounds


@kernel
def apply_action(s, R, a, ro, wo):
    """The action itself (``Game.apply_legal`` before its ``_settle``)."""
    p = s[CURRENT]
    s[ACOUNT] += 1
    s[RACTIONS] += 1
    h = hand_at(p)
    if a >= MELD_BASE:
        q = a - MELD_BASE
        _apply_meld(s, R, p, SPECS[q, 0], SPECS[q, 1], SPECS[q, 2], SPECS[q, 3], ro, wo)
    elif a >= DISCARD_BASE:
        k = a - DISCARD_BASE
        _apply_discard(s, R, p, k if k < RED3 else k + 1, ro, wo)
    elif a == DRAW:
        s[h + _pop_stock(s)] += 1
        s[h + _pop_stock(s)] += 1
        s[HSIZE + p] += 2
        s[PHASE] = MELD_PHASE
    elif a == LAY_RED_THREE:
        s[h + RED3] -= 1
        s[HSIZE + p] -= 1
        s[RED3S + p % R[R_T]] += 1
        if s[STOCK_LEN]:
            s[h + _pop_stock(s)] += 1
            s[HSIZE + p] += 1
        if not hand_size(s, p) and not s[FOOTUP + p]:
            _pick_up_foot(s, p)
    elif a == PICKUP:
        _apply_pickup(s, R, p, ro, wo)
    elif a == CANCEL_MELDS:
        _cancel(s, R, p)
    elif a == ASK_GO_OUT:
        s[ASKED] = 1
        s[PHASE] = ANSWER_PHASE
        s[CURRENT] = R[R_TM + MAXP * p]
    elif a == ANSWER_YES or a == ANSWER_NO:
        s[PERM] = 1 if a == ANSWER_YES else 0
        s[PHASE] = MELD_PHASE
        s[CURRENT] = s[TURN]


@kernel
def stuck(s, R, ro, wo):
    """``Game._settle``'s test: the player to act cannot go on (the round ends as a stock-out)."""
    if s[PHASE] != DRAW_PHASE:
        if s[PHASE] == MELD_PHASE and hand_size(s, s[CURRENT]) <= 1:
            buf = np.empty(800, dtype=np.int64)
            return legal_into(s, R, buf, ro, wo) == 0
        return False
    p = s[CURRENT]
    if s[hand_at(p) + RED3]:
        return False
    return not (s[STOCK_LEN] >= 2 or pickup_ok(s, R, p, ro, wo))


@kernel
def settle(s, R, ro, wo):
    """Deal the round that an ended round left pending, and end rounds while the player to act
    is stuck: ``Game._end_round``'s deal and ``Game._settle``, as a loop (no recursion, which
    compiled code caches badly)."""
    while True:
        if s[NEED_DEAL]:
            s[NEED_DEAL] = 0
            deal(s, R, np.zeros(0, dtype=np.int64))
        if not stuck(s, R, ro, wo):
            return
        end_round(s, R)


# ---------------------------------------------------------------- rounds
@kernel
def end_round(s, R):
    """``Game._end_round``: score the round, then end the game or leave the next deal to :func:`settle`."""
    n, nt = R[R_N], R[R_T]
    i = s[NRS]
    d = RDET + RDET_W * i
    s[d], s[d + 1], s[d + 2] = s[ROUND], s[WENT_OUT], s[RACTIONS]
    for team in range(nt):
        left = red_left = 0
        for q in range(team, n, nt):
            for k in range(NK):
                c = s[HANDS + NK * q + k] + s[FEET + NK * q + k]
                if k == RED3:
                    red_left += c
                else:
                    left += c * VALS[k]
        b = BC + 3 * team
        went = s[WENT_OUT] >= 0 and s[WENT_OUT] % nt == team
        e = d + 3 + 8 * team
        s[e] = s[MVAL + team]
        s[e + 1] = s[b] * R[R_CB]
        s[e + 2] = s[b + 1] * R[R_DB]
        s[e + 3] = s[b + 2] * R[R_WB]
        s[e + 4] = s[RED3S + team] * R[R_R3B]
        s[e + 5] = R[R_GOB] if went else 0
        s[e + 6] = -left
        s[e + 7] = red_left * R[R_R3L]
        total = 0
        for x in range(8):
            total += s[e + x]
        s[RSC + MAXT * i + team] = total
        s[SCORES + team] += total
    s[NRS] = i + 1
    if s[ROUND] >= R[R_ROUNDS]:
        best = s[SCORES]
        for t in range(1, nt):
            if s[SCORES + t] > best:
                best = s[SCORES + t]
        leaders, leader = 0, -1
        for t in range(nt):
            if s[SCORES + t] == best:
                leaders += 1
                leader = t
        if leaders == 1:
            s[WINNER] = leader
            s[OVER] = 1
        elif R[R_EXTRA] and not s[EXTRA]:
            s[EXTRA] = 1
        else:
            s[WINNER] = -1
            s[OVER] = 1
    if s[OVER]:
        s[PHASE] = GAME_OVER
        return
    s[ROUND] += 1
    s[NEED_DEAL] = 1


@kernel
def deal(s, R, top):
    """``Game._make_shoe`` and ``Game._deal`` for round ``s[ROUND]``; ``top`` stacks the shoe's top."""
    n = R[R_N]
    rnd = s[ROUND]
    seed = s[RSEEDS + rnd - 1]
    counts = DECK1 * R[R_DECKS]
    order = np.empty(MAXC, dtype=np.int64)
    ntop = len(top)
    for i in range(ntop):
        order[i] = top[i]
        counts[top[i]] -= 1
    pos = ntop
    for k in range(NK):
        for _ in range(counts[k]):
            order[pos] = k
            pos += 1
    shuffle(seeded(seed), order, ntop, pos)
    total = pos
    s[DEALER] = (n - 1 + rnd - 1) % n
    rounds = R[R_ROUNDS]
    s[MINIMUM] = R[R_MIN + (rnd if rnd < rounds else rounds) - 1]
    pos = 0
    for p in range(MAXP):
        for k in range(NK):
            s[HANDS + NK * p + k] = 0
            s[FEET + NK * p + k] = 0
        s[FOOTUP + p] = 0
        s[PLAYED + p] = 0
        s[HSIZE + p] = 0
    for p in range(n):
        for i in range(R[R_HAND]):
            s[HANDS + NK * p + order[pos + i]] += 1
        s[HSIZE + p] = R[R_HAND]
        pos += R[R_HAND]
    for p in range(n):
        for i in range(R[R_FOOT]):
            s[FEET + NK * p + order[pos + i]] += 1
        pos += R[R_FOOT]
    up = order[pos]
    ns = total - pos - 1
    for i in range(ns):                      # reversed: the top of the stock is the end
        s[STOCK + i] = order[total - 1 - i]
    if (up == RED3 or up == TWO or up == JOKER) and ns:
        rng = seeded(seed ^ 0x5EED)          # seeded only when the up card goes back (its only use)
    while (up == RED3 or up == TWO or up == JOKER) and ns:
        at = randbelow(rng, ns + 1)
        for i in range(ns, at, -1):
            s[STOCK + i] = s[STOCK + i - 1]
        s[STOCK + at] = up                   # insert, then pop the top: the length stays ns
        up = s[STOCK + ns]
        s[STOCK + ns] = 0
    s[STOCK_LEN] = ns
    s[DISC] = up
    s[DISC_LEN] = 1
    for k in range(16):
        s[PILEC + k] = 0
    s[PILEC + up] = 1
    s[UP_CARD] = up
    for i in range(1, MAXC):
        s[DISC + i] = 0
    for i in range(ns, MAXC):
        s[STOCK + i] = 0
    for t in range(MAXT):
        _clear_table(s, t)
        s[RED3S + t] = 0
        s[OPENED + t] = 0
    for k in range(16):
        s[PROV + k] = 0
        s[PEND + k] = 0
    s[PROV_VALUE] = 0
    s[FORCED] = s[F_S] = s[F_N] = s[F_T] = s[F_J] = 0
    s[INCOMPLETE] = -1
    s[TURN] = (s[DEALER] + 1) % n
    s[CURRENT] = s[TURN]
    s[PHASE] = DRAW_PHASE
    s[ASKED] = 0
    s[PERM] = -1
    s[CANCELS] = 0
    s[RACTIONS] = 0
    s[WENT_OUT] = -1


@kernel
def reset(s, R, seed, start_round, scores, top, ro, wo):
    """``Game.reset`` with checked arguments: ``scores`` one per team, ``top`` the stacked shoe's kinds."""
    s[:] = 0
    s[SEED] = seed
    master = seeded(seed)
    for i in range(R[R_ROUNDS] + 2):
        s[RSEEDS + i] = randbelow(master, 1 << 62)
    s[ROUND] = start_round
    for t in range(R[R_T]):
        s[SCORES + t] = scores[t]
    s[WINNER] = -1
    deal(s, R, top)
    settle(s, R, ro, wo)
