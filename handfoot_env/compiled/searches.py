"""The meld searches of :mod:`handfoot_env.melds` in compiled code.

Each function here mirrors one of the reference, and answers exactly what it answers:

* :func:`completable` is ``Game._completable``;
* :func:`opening_bounds` is ``melds.opening_bounds`` (-1 for None, 0, 1);
* :func:`max_meld_value` is ``melds.max_meld_value``, its dictionary of
  (wilds used, cards used) replaced by an array with a list of the live keys;
* :func:`go_out_search` is ``melds.go_out_search``, its sets replaced by flag arrays;
* the option tables of ``rank_options`` and ``wild_meld_options`` are built once
  (:func:`option_tables`) by the same recursions, run with explicit stacks.

Hands and melds are count arrays: ``hand`` 15 kinds, ``slots`` 12 x 3 (naturals,
twos, jokers).
"""
from __future__ import annotations

import numpy as np
from . import kernel

from .layout import MAXW, VALS

TWO, JOKER, WILD_SLOT, NUM_RANKS = 11, 12, 11, 11
RANKS_BY_VALUE = np.arange(10, -1, -1, dtype=np.int64)
RO_HN, RO_K = 15, 7            # rank_options: hn 0..14, n0/w0/wmax 0..6


@kernel
def wild_ok(n, w, double):
    return n >= 2 * w if double else n > w


@kernel
def _rank_options_into(hn, n0, w0, wmax, double, res):
    """``melds.rank_options``: res[k, x] = 1 for each (naturals, wilds) option."""
    stack = np.zeros((512, 5), dtype=np.int64)      # k, x, nc, wc, depth
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3], stack[0, 4] = 0, 0, n0, w0, 0
    top = 1
    while top > 0:
        top -= 1
        k, x, nc, wc, depth = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3], stack[top, 4]
        s = nc + wc
        if s == 0 or (s >= 3 and wild_ok(nc, wc, double)):
            res[k, x] = 1
        if depth > 4:
            continue
        amax = hn - k if hn - k < 7 - s else 7 - s
        for a in range(0, amax + 1):
            bmax = wmax - x if wmax - x < 7 - s - a else 7 - s - a
            for b in range(0, bmax + 1):
                if a == 0 and b == 0:
                    continue
                ns, nn, nw = s + a + b, nc + a, wc + b
                if ns == 7:
                    if wild_ok(nn, nw, double):
                        stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3], stack[top, 4] = (
                            k + a, x + b, 0, 0, depth + 1)
                        top += 1
                elif ns >= 3 and wild_ok(nn, nw, double):
                    res[k + a, x + b] = 1


@kernel
def _wild_options_into(w_hand, w0, res):
    """``melds.wild_meld_options``: res[u] = 1 for each number of wilds."""
    stack = np.zeros((512, 3), dtype=np.int64)      # used, s, depth
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, w0, 0
    top = 1
    while top > 0:
        top -= 1
        used, s, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == 0 or s >= 3:
            res[used] = 1
        if depth > 3:
            continue
        amax = w_hand - used if w_hand - used < 7 - s else 7 - s
        for a in range(1, amax + 1):
            ns = s + a
            if ns == 7:
                stack[top, 0], stack[top, 1], stack[top, 2] = used + a, 0, depth + 1
                top += 1
            elif ns >= 3:
                res[used + a] = 1


@kernel
def option_tables():
    """(rank options [double, hn, n0, w0, wmax, k, x], wild options [w_hand, w0, used]) as uint8 flags."""
    ro = np.zeros((2, RO_HN, RO_K, RO_K, RO_K, RO_HN, RO_K), dtype=np.uint8)
    for d in range(2):
        for hn in range(RO_HN):
            for n0 in range(RO_K):
                for w0 in range(RO_K - n0):
                    for wmax in range(RO_K):
                        _rank_options_into(hn, n0, w0, wmax, d == 1, ro[d, hn, n0, w0, wmax])
    wo = np.zeros((MAXW + 1, RO_K, MAXW + 1), dtype=np.uint8)
    for wh in range(MAXW + 1):
        for w0 in range(RO_K):
            _wild_options_into(wh, w0, wo[wh, w0])
    return ro, wo


@kernel
def completable(hand, slot, n0, w0, max_cards, double):
    """``Game._completable``: can ``hand`` make the slot's meld of n0 naturals, w0 wilds legal?"""
    wilds = hand[TWO] + hand[JOKER]
    if slot == WILD_SLOT:
        need = 3 - w0
        return need <= 0 or (wilds >= need and need <= max_cards)
    hn = hand[slot]
    amax = min(hn, 7 - n0 - w0, max_cards)
    for a in range(0, amax + 1):
        bmax = min(wilds, 7 - n0 - w0 - a, max_cards - a)
        for b in range(0, bmax + 1):
            if n0 + w0 + a + b >= 3 and wild_ok(n0 + a, w0 + b, double):
                return True
    return False


@kernel(inline="always")
def _opening_high(hand, sizes, max_cards):
    """:func:`opening_bounds`' upper bound: the most points ``max_cards`` cards of ``hand`` could meld
    (the highest cards first, pairs only with a wild each); -1 when a meld of 1 or 2 cards stands (only
    the program can tell)."""
    wilds = hand[TWO] + hand[JOKER]
    c0 = c1 = c2 = 0
    npairs = 0
    pairs = np.zeros(NUM_RANKS, dtype=np.int64)
    for r in RANKS_BY_VALUE:
        sz = sizes[r]
        if sz == 1 or sz == 2:
            return -1
        k = hand[r]
        if sz or k >= 3:
            v = VALS[r] // 10
            if v == 0:
                c0 += k
            elif v == 1:
                c1 += k
            else:
                c2 += k
        elif k == 2 and npairs < wilds:
            pairs[npairs] = VALS[r]
            npairs += 1
    for i in range(npairs):
        v = pairs[i] // 10
        if v == 0:
            c0 += 2
        elif v == 1:
            c1 += 2
        else:
            c2 += 2
    high, left = 0, max_cards
    for step in range(4):
        if left <= 0:
            break
        if step == 0:
            c, v = hand[JOKER], 50
        elif step == 1:
            c, v = hand[TWO] + c2, 20
        elif step == 2:
            c, v = c1, 10
        else:
            c, v = c0, 5
        if c > left:
            c = left
        high += c * v
        left -= c
    return high


@kernel
def opening_bounds(hand, sizes, wild_melds, max_cards, need, wo):
    """``melds.opening_bounds``: 1 (True), 0 (False) or -1 (None: only the program can tell)."""
    if sizes[WILD_SLOT] == 1 or sizes[WILD_SLOT] == 2:
        return -1
    high = _opening_high(hand, sizes, max_cards)
    if high < 0:
        return -1
    if high < need:
        return 0
    wilds = hand[TWO] + hand[JOKER]
    budget, nat, used_w = max_cards, 0, 0
    if wild_melds and wilds:
        best = -1
        row = wo[wilds, sizes[WILD_SLOT]]
        for o in range(wilds + 1):
            if row[o] and o <= budget and o > best:
                best = o
        used_w = best
        budget -= used_w
    for r in RANKS_BY_VALUE:
        k = hand[r]
        if not k or budget <= 0:
            continue
        sz = sizes[r]
        room = 7 - sz
        c = min(k, room, budget)
        if not sz and c < 3:
            continue
        if c == room:
            rest = min(k - c, 7, budget - c)
            if rest >= 3:
                c += rest
        nat += c * VALS[r]
        budget -= c
    for r in RANKS_BY_VALUE:
        if used_w >= wilds or budget < 3:
            break
        if hand[r] == 2 and not sizes[r]:
            nat += 2 * VALS[r]
            used_w += 1
            budget -= 3
    jokers = hand[JOKER] if hand[JOKER] < used_w else used_w
    return 1 if nat + 50 * jokers + 20 * (used_w - jokers) >= need else -1


@kernel
def max_meld_value(hand, slots, double, wild_melds, max_cards, ro, wo):
    """``melds.max_meld_value``: the highest card value ``hand`` can add to ``slots`` with at most
    ``max_cards`` cards."""
    if max_cards < 0:
        return 0
    wilds = hand[TWO] + hand[JOKER]
    nc = max_cards + 1
    size = (wilds + 1) * nc
    dp = np.full(size, -1, dtype=np.int64)
    ndp = np.full(size, -1, dtype=np.int64)
    keys = np.zeros(size, dtype=np.int64)
    nkeys_ = np.zeros(size, dtype=np.int64)
    dp[0] = 0
    keys[0] = 0
    nk = 1
    d = 1 if double else 0
    wmax = wilds if wilds < 6 else 6
    for r in range(NUM_RANKS):
        n0, t0, j0 = slots[r, 0], slots[r, 1], slots[r, 2]
        hn = hand[r]
        if hn == 0 and n0 + t0 + j0 == 0:
            continue
        opts = ro[d, hn if hn < 14 else 14, n0, t0 + j0, wmax]
        v = VALS[r]
        nnk = 0
        for i in range(nk):
            key = keys[i]
            x, c = key // nc, key % nc
            val = dp[key]
            for k in range(RO_HN):
                for b in range(RO_K):
                    if not opts[k, b]:
                        continue
                    nx, ncc = x + b, c + k + b
                    if nx > wilds or ncc > max_cards:
                        continue
                    nkey = nx * nc + ncc
                    nv = val + k * v
                    if ndp[nkey] < 0:
                        nkeys_[nnk] = nkey
                        nnk += 1
                    if ndp[nkey] < nv:
                        ndp[nkey] = nv
        for i in range(nk):
            dp[keys[i]] = -1
        dp, ndp = ndp, dp
        keys, nkeys_ = nkeys_, keys
        nk = nnk
    prefix = np.zeros(wilds + 1, dtype=np.int64)
    for i in range(wilds):
        prefix[i + 1] = prefix[i] + (50 if i < hand[JOKER] else 20)
    best = 0
    w0 = slots[WILD_SLOT, 1] + slots[WILD_SLOT, 2]
    for i in range(nk):
        key = keys[i]
        x, c = key // nc, key % nc
        val = dp[key]
        for y in range(wilds + 1):
            if (y and not wild_melds) or (wild_melds and not wo[wilds, w0, y]):
                continue
            if x + y <= wilds and c + y <= max_cards:
                tot = val + prefix[x + y]
                if tot > best:
                    best = tot
    return best


@kernel
def _chain(n0, w0, nat, wmax, wild_slot, double, need_c, need_d, need_w, out):
    """``go_out_search``'s chain: out[used, c, d, wb] = 1 (book counts capped at the need)."""
    cap = 64 + 8 * (nat + wmax)
    stack = np.zeros((cap, 7), dtype=np.int64)      # n, w, nat_left, used, c, d, wb
    stack[0, 0], stack[0, 1], stack[0, 2] = n0, w0, nat
    top = 1
    while top > 0:
        top -= 1
        n, w, nat_left, used = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        c, d, wb = stack[top, 4], stack[top, 5], stack[top, 6]
        size = n + w
        if nat_left == 0 and (size == 0 or (size >= 3 and (wild_slot or wild_ok(n, w, double)))):
            out[used, min(c, need_c), min(d, need_d), min(wb, need_w)] = 1
        room = 7 - size
        amax = nat_left if nat_left < room else room
        for a in range(amax + 1):
            b = room - a
            if b > wmax - used:
                continue
            if top + 1 >= cap:
                ns = np.zeros((cap * 2, 7), dtype=np.int64)
                ns[:cap] = stack
                stack = ns
                cap *= 2
            if wild_slot:
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = 0, 0, nat_left, used + b
                stack[top, 4], stack[top, 5], stack[top, 6] = c, d, wb + 1
                top += 1
            elif wild_ok(n + a, w + b, double):
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = 0, 0, nat_left - a, used + b
                if w + b:
                    stack[top, 4], stack[top, 5], stack[top, 6] = c, d + 1, wb
                else:
                    stack[top, 4], stack[top, 5], stack[top, 6] = c + 1, d, wb
                top += 1
        bmax = min(wmax - used, 7 - 1 - size - nat_left)
        for b in range(0, bmax + 1):
            nn, ww = n + nat_left, w + b
            if nn + ww >= 3 and (wild_slot or wild_ok(nn, ww, double)):
                out[used + b, min(c, need_c), min(d, need_d), min(wb, need_w)] = 1


@kernel
def go_out_search(hand, slots, have_c, have_d, have_w, need_c, need_d, need_w, double, wild_melds):
    """``melds.go_out_search`` for ``Game._can_go_out``'s arguments: can every card of ``hand``
    (15 counts, no red three, at most one black three) be melded onto ``slots``, but for at most
    one discard, the team's books reaching the need?"""
    wilds = hand[TWO] + hand[JOKER]
    free0 = 1 if hand[14] == 0 else 0
    shape = (wilds + 1, 2, need_c + 1, need_d + 1, need_w + 1)
    states = np.zeros(shape, dtype=np.uint8)
    states[wilds, free0, have_c, have_d, have_w] = 1
    chain = np.zeros((wilds + 1, need_c + 1, need_d + 1, need_w + 1), dtype=np.uint8)
    for s in range(12):
        n0, t0, j0 = slots[s, 0], slots[s, 1], slots[s, 2]
        nat = hand[s] if s < NUM_RANKS else 0
        if s == WILD_SLOT and not wild_melds:
            continue
        if nat == 0 and n0 + t0 + j0 == 0:
            if s < NUM_RANKS:
                continue
            any_wild = False
            for wl in range(1, wilds + 1):
                if states[wl].any():
                    any_wild = True
                    break
            if not any_wild:
                continue
        nxt = np.zeros(shape, dtype=np.uint8)
        found = False
        for wl in range(wilds + 1):
            for free in range(2):
                for bc in range(need_c + 1):
                    for bd in range(need_d + 1):
                        for bw in range(need_w + 1):
                            if not states[wl, free, bc, bd, bw]:
                                continue
                            for opt in range(2):
                                if opt == 0:
                                    k, free2 = nat, free
                                elif free and nat:
                                    k, free2 = nat - 1, 0
                                else:
                                    break
                                chain[:] = 0
                                _chain(n0, t0 + j0, k, wl, s == WILD_SLOT, double, need_c, need_d, need_w, chain)
                                for used in range(wl + 1):
                                    for c in range(need_c + 1):
                                        for d in range(need_d + 1):
                                            for wb in range(need_w + 1):
                                                if chain[used, c, d, wb]:
                                                    nxt[wl - used, free2, min(bc + c, need_c), min(bd + d, need_d),
                                                        min(bw + wb, need_w)] = 1
                                                    found = True
        states = nxt
        if not found:
            return False
    for wl in range(wilds + 1):
        for free in range(2):
            if states[wl, free, need_c, need_d, need_w] and (wl == 0 or (wl == 1 and free)):
                return True
    return False
