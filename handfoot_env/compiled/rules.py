"""The turn structure of :mod:`handfoot_env.engine` in compiled code, on one flat game row.

Every function takes ``s`` (a game's row of the state matrix, :mod:`.layout`), ``R`` (the
rule vector) and, where a search may run, the option tables ``ro``, ``wo``
(:func:`.searches.option_tables`).  Each mirrors the method of ``Game`` with the same name,
in the same order of checks; the legal list comes out in id order, as the reference's.
"""
from __future__ import annotations

import numpy as np
from . import kernel

from .layout import (ASKED, BC, CANCELS, CURRENT, DISC, DISC_ACT, DISC_LEN, FOOTUP, FORCED, HANDS, HSIZE, INCOMPLETE,
                     MAXP, MELDS, MINIMUM, OPENED, PEND, PERM, PHASE, PLAYED, PROV, PROV_VALUE, R_ASK, R_DOUBLE, R_GO,
                     R_NTM, R_PIF, R_PNO, R_ROUNDS, R_T, R_TAKE, R_TM, R_WM, RANK_BITS, ROUND, SPECS, STOCK_LEN, VALS,
                     WILD_BITS)
from .intrinsics import trailing_zeros, unowned
from .searches import completable, go_out_search, max_meld_value, opening_bounds

DRAW_PHASE, MELD_PHASE, ANSWER_PHASE, GAME_OVER = 0, 1, 2, 3
DRAW, PICKUP, LAY_RED_THREE, CANCEL_MELDS, ASK_GO_OUT, ANSWER_YES, ANSWER_NO = 0, 1, 2, 3, 4, 5, 6
DISCARD_BASE, MELD_BASE = 7, 21
NK, NR, TWO, JOKER, RED3, BLACK3, WILD_SLOT = 15, 11, 11, 12, 13, 14, 11
CLEAN, DIRTY, WILD = 0, 1, 2


@kernel(inline="always")
def hand_at(p):
    return HANDS + NK * p


@kernel(inline="always")
def meld_at(team, slot):
    return MELDS + 36 * team + 3 * slot


@kernel(inline="always")
def hand_size(s, p):
    return s[HSIZE + p]


@kernel(inline="always")
def points(slot, n, t, j):
    return n * (VALS[slot] if slot < NR else 0) + t * 20 + j * 50


@kernel
def partners_ok(s, R, p):
    if not R[R_PIF]:
        return True
    for i in range(R[R_NTM + p]):
        if not s[PLAYED + R[R_TM + MAXP * p + i]]:
            return False
    return True


@kernel
def may_go_out(s, R, p):
    if not s[FOOTUP + p] or not s[OPENED + p % R[R_T]]:
        return False
    if not partners_ok(s, R, p):
        return False
    if R[R_ASK] and R[R_NTM + p] > 0:
        return s[PERM] == 1
    return True


@kernel(inline="always")
def going_out_at(s, R):
    """Offset in ``R`` of this round's (clean, dirty, wild) going-out books
    (``RuleConfig.going_out_books``: a round past the last has the last round's)."""
    rnd = s[ROUND]
    rounds = R[R_ROUNDS]
    return R_GO + 3 * ((rnd if rnd < rounds else rounds) - 1)


@kernel
def books_ok(s, R, team):
    g = going_out_at(s, R)
    return (s[BC + 3 * team] >= R[g] and s[BC + 3 * team + 1] >= R[g + 1] and s[BC + 3 * team + 2] >= R[g + 2])


@kernel
def taken_count(s, R):
    nd = s[DISC_LEN]
    take = R[R_TAKE]
    return nd if take == 0 or take > nd else take


@kernel
def _slots_of(s, team):
    slots = np.empty((12, 3), dtype=np.int64)
    base = MELDS + 36 * team
    for i in range(12):
        slots[i, 0], slots[i, 1], slots[i, 2] = s[base + 3 * i], s[base + 3 * i + 1], s[base + 3 * i + 2]
    return slots


@kernel
def can_go_out(s, R, hand, slots, b0, b1, b2):
    """``Game._can_go_out``."""
    if hand[RED3] or hand[BLACK3] > 1:
        return False
    g = going_out_at(s, R)
    nc, nd, nw = R[g], R[g + 1], R[g + 2]
    return go_out_search(hand, slots, min(b0, nc), min(b1, nd), min(b2, nw), nc, nd, nw, R[R_DOUBLE] == 1,
                         R[R_WM] == 1)


@kernel
def _add_to_slot(slots, books, slot, n, t, j):
    slots[slot, 0] += n
    slots[slot, 1] += t
    slots[slot, 2] += j
    if slots[slot, 0] + slots[slot, 1] + slots[slot, 2] == 7:
        if slot == WILD_SLOT:
            books[WILD] += 1
        elif slots[slot, 1] + slots[slot, 2] == 0:
            books[CLEAN] += 1
        else:
            books[DIRTY] += 1
        slots[slot, 0] = slots[slot, 1] = slots[slot, 2] = 0


@kernel
def meld_goes_out(s, R, p, slot, n, t, j):
    """``Game._meld_goes_out``."""
    team = p % R[R_T]
    hand = s[hand_at(p):hand_at(p) + NK].copy()
    if slot < NR:
        hand[slot] -= n
    hand[TWO] -= t
    hand[JOKER] -= j
    slots = _slots_of(s, team)
    books = s[BC + 3 * team:BC + 3 * team + 3].copy()
    _add_to_slot(slots, books, slot, n, t, j)
    return can_go_out(s, R, hand, slots, books[0], books[1], books[2])


@kernel(inline="always")
def top_unit(top):
    """One card of kind ``top`` (a pile's top card) as a meld's (naturals, twos, jokers)."""
    if top < NR:
        return 1, 0, 0
    if top == TWO:
        return 0, 1, 0
    return 0, 0, 1


@kernel
def _hand_after_pickup(s, R, p, top):
    h2 = s[hand_at(p):hand_at(p) + NK].copy()
    h2[top] -= 2
    nd = s[DISC_LEN]
    k = taken_count(s, R)
    for i in range(nd - k, nd - 1):
        h2[s[DISC + i]] += 1
    return h2


@kernel
def pickup_goes_out(s, R, p, h2, slot, top, room):
    """``Game._pickup_goes_out`` (``h2`` already computed)."""
    if not may_go_out(s, R, p):
        return False
    team = p % R[R_T]
    slots = _slots_of(s, team)
    books = s[BC + 3 * team:BC + 3 * team + 3].copy()
    un, ut, uj = top_unit(top)
    first = 3 if room > 3 else room
    _add_to_slot(slots, books, slot, un * first, ut * first, uj * first)
    second = 3 - first
    _add_to_slot(slots, books, slot, un * second, ut * second, uj * second)
    return can_go_out(s, R, h2, slots, books[0], books[1], books[2])


@kernel
def pickup_ok(s, R, p, ro, wo):
    """``Game._pickup_reason(p) is None`` in the draw phase."""
    nd = s[DISC_LEN]
    if nd == 0:
        return False
    top = s[DISC + nd - 1]
    if top == BLACK3 or top == RED3:
        return False
    h = hand_at(p)
    if s[h + top] < 2:
        return False
    wild = top >= NR
    if wild and not R[R_WM]:
        return False
    slot = WILD_SLOT if wild else top
    team = p % R[R_T]
    extra = taken_count(s, R) - 1
    in_foot = s[FOOTUP + p] == 1
    size = hand_size(s, p)
    double = R[R_DOUBLE] == 1
    if s[OPENED + team]:
        m = meld_at(team, slot)
        room = 7 - (s[m] + s[m + 1] + s[m + 2])
        over = 3 - room if 3 - room > 0 else 0
        after = size - 2 + extra
        if over:
            h2 = _hand_after_pickup(s, R, p, top)
            if not completable(h2, slot, 0 if wild else over, over if wild else 0,
                               after - (2 if in_foot else 0), double):
                if not (in_foot and pickup_goes_out(s, R, p, h2, slot, top, room)):
                    return False
        elif in_foot and after < 2:
            if not pickup_goes_out(s, R, p, _hand_after_pickup(s, R, p, top), slot, top, room):
                return False
        return True
    if R[R_PNO]:                        # pile_needs_opening: the pile only for a team that has opened
        return False
    value3 = 3 * VALS[top]
    minimum = s[MINIMUM]
    need = minimum - value3
    if need <= 0:
        return True
    h2 = s[h:h + NK].copy()
    h2[top] -= 2
    avail = size - 2 - (2 if in_foot else 0)
    low, used = 0, 0
    for r in range(NR - 1, -1, -1):
        k = h2[r]
        if r == slot:
            k = k if k < 4 else 4
        elif k < 3 or k > 7:
            continue
        if k and used + k <= avail:
            used += k
            low += k * VALS[r]
    if low >= need:
        return True
    high = 0
    left = avail
    for i in range(14):
        k = JOKER if i == 0 else (TWO if i == 1 else (BLACK3 if i == 13 else 12 - i))
        c = h2[k] if h2[k] < left else left
        high += c * VALS[k]
        left -= c
        if not left:
            break
    if high < need:
        return False
    slots = np.zeros((12, 3), dtype=np.int64)
    if not wild:
        slots[slot, 0] = 3
    elif top == TWO:
        slots[slot, 1] = 3
    else:
        slots[slot, 2] = 3
    return value3 + max_meld_value(h2, slots, double, R[R_WM] == 1, avail, ro, wo) >= minimum


@kernel
def _any_prov(s):
    for k in range(NK):
        if s[PROV + k]:
            return True
    return False


@kernel
def cancel_ok(s, R, p):
    if s[PHASE] != MELD_PHASE or s[OPENED + p % R[R_T]]:
        return False
    return _any_prov(s) and s[CANCELS] < 1


@kernel
def ask_ok(s, R, p):
    if s[PHASE] != MELD_PHASE:
        return False
    if not R[R_ASK] or R[R_NTM + p] == 0:
        return False
    if s[ASKED] or not s[FOOTUP + p] or not s[OPENED + p % R[R_T]]:
        return False
    if R[R_PIF] and not partners_ok(s, R, p):
        return False
    return True


@kernel
def meld_post_ok(s, R, p, size, in_foot, opened, go_ok, cancel_left, slot, n, t, j, book, ro, wo):
    """``Game._meld_post_reason(...) is None``."""
    team = p % R[R_T]
    double = R[R_DOUBLE] == 1
    used = n + t + j
    left = size - used
    inc = s[INCOMPLETE]
    h = hand_at(p)
    if inc >= 0 and inc != slot:
        h2 = s[h:h + NK].copy()
        if slot < NR:
            h2[slot] -= n
        h2[TWO] -= t
        h2[JOKER] -= j
        m = meld_at(team, inc)
        if not completable(h2, inc, s[m], s[m + 1] + s[m + 2], left - (2 if in_foot else 0), double):
            if not (in_foot and go_ok and meld_goes_out(s, R, p, slot, n, t, j)):
                return False
    if not opened:
        value = s[PROV_VALUE] + points(slot, n, t, j)
        if value >= s[MINIMUM]:
            for k in range(NK):
                left += s[PEND + k]
        else:
            if left == 0:
                return False
            if not cancel_left:
                h2 = s[h:h + NK].copy()
                if slot < NR:
                    h2[slot] -= n
                h2[TWO] -= t
                h2[JOKER] -= j
                sizes = np.empty(12, dtype=np.int64)
                base = MELDS + 36 * team
                for i in range(12):
                    sizes[i] = s[base + 3 * i] + s[base + 3 * i + 1] + s[base + 3 * i + 2]
                sizes[slot] = 0 if book else sizes[slot] + used
                max_cards = left - (2 if in_foot else 0)
                need = s[MINIMUM] - value
                reach = opening_bounds(h2, sizes, R[R_WM] == 1, max_cards, need, wo)
                if reach < 0:
                    slots = _slots_of(s, team)
                    if book:
                        slots[slot, 0] = slots[slot, 1] = slots[slot, 2] = 0
                    else:
                        slots[slot, 0] += n
                        slots[slot, 1] += t
                        slots[slot, 2] += j
                    reach = 1 if max_meld_value(h2, slots, double, R[R_WM] == 1, max_cards, ro, wo) >= need else 0
                if not reach:
                    return False
    if in_foot and left < 2:
        if not go_ok:
            return False
        if not meld_goes_out(s, R, p, slot, n, t, j):
            return False
    return True


@kernel
def _melds_into(s, R, p, out, cnt, ro, wo):
    """``Game._add_legal_melds``: append the legal meld ids, slot by slot, in id order.  The ids that
    fit the meld and the hand come from :data:`.layout.RANK_BITS` / :data:`.layout.WILD_BITS`, lowest
    bit first (id order); the other conditions are checked per id only where they can fail."""
    team = p % R[R_T]
    h = hand_at(p)
    double = 1 if R[R_DOUBLE] == 1 else 0
    hand = s[h:h + NK]
    ht, hj = hand[TWO], hand[JOKER]
    opened = s[OPENED + team] == 1
    in_foot = s[FOOTUP + p] == 1
    inc = s[INCOMPLETE]
    all_ok = opened and inc < 0 and not in_foot
    size = hand_size(s, p)
    go_ok = may_go_out(s, R, p) if in_foot else False
    cancel_left = (not opened) and s[CANCELS] < 1
    simple = opened and inc < 0
    melds = s[MELDS + 36 * team:MELDS + 36 * team + 36]
    ht3 = ht if ht < 3 else 3
    hj3 = hj if hj < 3 else 3
    wild_ok = R[R_WM] and (ht or hj)
    for slot in range(NR + 1):                      # the ranks' slots, then the wild slot (its naturals: 0)
        t0, j0 = melds[3 * slot + 1], melds[3 * slot + 2]
        if slot < NR:
            n0, hn = melds[3 * slot], hand[slot]
            if n0 == 0 and hn == 0:
                continue
            bits = RANK_BITS[double, n0, t0 + j0, hn if hn < 7 else 7, ht3, hj3]
        elif wild_ok:
            n0 = 0
            bits = WILD_BITS[t0 + j0, ht if ht < 7 else 7, hj if hj < 7 else 7]
        else:
            break
        size0 = n0 + t0 + j0
        base = MELD_BASE + 59 * slot
        while bits:
            i = trailing_zeros(bits)
            bits &= bits - 1
            if not all_ok:
                q = 59 * slot + i
                n, t, j = SPECS[q, 1], SPECS[q, 2], SPECS[q, 3]
                if not ((simple and size - n - t - j >= 2) or meld_post_ok(
                        s, R, p, size, in_foot, opened, go_ok, cancel_left, slot, n, t, j,
                        size0 + n + t + j == 7, ro, wo)):
                    continue
            out[cnt] = base + i
            cnt += 1
    return cnt


@kernel
def legal_into(s, R, out, ro, wo):
    """``Game.legal_actions`` into ``out``; returns the count."""
    s, R, out, ro, wo = unowned(s), unowned(R), unowned(out), unowned(ro), unowned(wo)
    ph = s[PHASE]
    if ph == GAME_OVER:
        return 0
    if ph == ANSWER_PHASE:
        out[0], out[1] = ANSWER_YES, ANSWER_NO
        return 2
    p = s[CURRENT]
    h = hand_at(p)
    if s[h + RED3]:
        out[0] = LAY_RED_THREE
        return 1
    cnt = 0
    if ph == DRAW_PHASE:
        if s[STOCK_LEN] >= 2:
            out[cnt] = DRAW
            cnt += 1
        nd = s[DISC_LEN]
        if nd and s[h + s[DISC + nd - 1]] >= 2 and pickup_ok(s, R, p, ro, wo):
            out[cnt] = PICKUP
            cnt += 1
        return cnt
    team = p % R[R_T]
    opened = s[OPENED + team] == 1
    in_foot = s[FOOTUP + p] == 1
    if not opened and cancel_ok(s, R, p):
        out[cnt] = CANCEL_MELDS
        cnt += 1
    if opened and in_foot and ask_ok(s, R, p):
        out[cnt] = ASK_GO_OUT
        cnt += 1
    if s[INCOMPLETE] < 0 and (opened or not (s[PROV_VALUE] or s[FORCED])):
        if not in_foot or hand_size(s, p) > 1 or (may_go_out(s, R, p) and books_ok(s, R, team)):
            for k in range(NK):
                if s[h + k]:
                    out[cnt] = DISC_ACT[k]
                    cnt += 1
    return _melds_into(s, R, p, out, cnt, ro, wo)
