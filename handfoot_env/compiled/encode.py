"""Observations and masks of the compiled core, and the batch kernels.

:func:`observe_into` writes the vector of :func:`handfoot_env.observation.encode_observation`
(same layout, same float32 values) for one seat; :func:`step_batch` plays one action in
each game of a batch and writes the next observation and mask of the player to act, in one
call for the whole batch.
"""
from __future__ import annotations

import numpy as np
from . import kernel

from .layout import (ASKED, BC, CANCELS, CURRENT, DISC, DISC_LEN, FOOTUP, FORCED, INCOMPLETE, MELDS,
                     MINIMUM, MVAL, NRS, OPENED, PEND, PERM, PHASE, PILEC, PLAYED, PROV, PROV_VALUE, R_CB, R_DB,
                     R_N, R_NTM, R_PIF, R_R3B, R_ROUNDS, R_T, R_TAKE, R_TM, R_WB, RED3S, ROUND,
                     SCORES, STOCK, STOCK_LEN, TURN, MAXP, ACOUNT, OVER)
from .play import apply_legal, reset
from .intrinsics import prefetch, unowned
from .rules import (ANSWER_PHASE, BLACK3, DRAW_PHASE, GAME_OVER, NK, RED3, going_out_at, hand_at, hand_size,
                    legal_into, pickup_ok)


@kernel(inline="always")
def _seats_into(s, R, seat, team, obs):
    """:func:`observe_into`'s first blocks: the seat's hand, foot and played flags, the others' sizes and
    flags from its left, and each team's table from its own; where the next block starts."""
    n, nt = R[R_N], R[R_T]
    h = hand_at(seat)
    hand, out = s[h:h + NK], obs[:NK]
    for k in range(NK):
        out[k] = hand[k]
    obs[NK] = s[FOOTUP + seat]
    obs[NK + 1] = s[PLAYED + seat]
    pos = NK + 2
    q = seat
    for _ in range(1, n):
        q = q + 1 if q + 1 < n else 0
        obs[pos] = hand_size(s, q)
        obs[pos + 1] = s[FOOTUP + q]
        obs[pos + 2] = s[PLAYED + q]
        pos += 3
    t = team
    for _ in range(nt):
        m = MELDS + 36 * t
        melds, out = s[m:m + 36], obs[pos:pos + 36]
        for i in range(36):
            out[i] = melds[i]
        pos += 36
        obs[pos], obs[pos + 1], obs[pos + 2] = s[BC + 3 * t], s[BC + 3 * t + 1], s[BC + 3 * t + 2]
        obs[pos + 3] = s[RED3S + t]
        obs[pos + 4] = s[OPENED + t]
        pos += 5
        t = t + 1 if t + 1 < nt else 0
    return pos


@kernel(inline="always")
def _going_out_into(s, R, seat, team, tp, obs, pos):
    """:func:`observe_into`'s last blocks: the provisional melds of an unopened team's turn, and going out
    (the question, the books still owed, the partners' feet); the observation's length."""
    own_turn = tp % R[R_T] == team
    if own_turn and not s[OPENED + team]:
        pend = 0
        anyp = False
        for k in range(NK):
            pend += s[PEND + k]
            if s[PROV + k]:
                anyp = True
        obs[pos] = s[PROV_VALUE] / 100.0
        obs[pos + 1] = 1.0 if s[FORCED] else 0.0
        obs[pos + 2] = pend
        obs[pos + 3] = 1.0 if s[INCOMPLETE] >= 0 else 0.0
        obs[pos + 4] = 1.0 if (s[CANCELS] < 1 and anyp) else 0.0
    else:
        obs[pos] = obs[pos + 1] = obs[pos + 2] = obs[pos + 4] = 0.0
        obs[pos + 3] = 1.0 if (own_turn and s[INCOMPLETE] >= 0) else 0.0
    pos += 5
    obs[pos] = 1.0 if s[PHASE] == ANSWER_PHASE else 0.0
    obs[pos + 1] = s[ASKED]
    obs[pos + 2] = 1.0 if s[PERM] == 1 else 0.0
    obs[pos + 3] = 1.0 if s[PERM] == 0 else 0.0
    b = BC + 3 * team
    g = going_out_at(s, R)
    obs[pos + 4] = max(R[g] - s[b], 0)
    obs[pos + 5] = max(R[g + 1] - s[b + 1], 0)
    obs[pos + 6] = max(R[g + 2] - s[b + 2], 0)
    ok = 1.0
    if R[R_PIF]:
        for i in range(R[R_NTM + seat]):
            if not s[PLAYED + R[R_TM + MAXP * seat + i]]:
                ok = 0.0
                break
    obs[pos + 7] = ok
    return pos + 8


@kernel
def observe_into(s, R, seat, obs, takeable_known, takeable, ro, wo):
    """The observation of ``seat`` into ``obs`` (float32).  ``takeable_known``: ``takeable`` is whether
    PICKUP is legal now (saves the pickup search when the legal list is at hand).  Blocks are copied
    through slices indexed from zero, which compile to plain vector loads and stores."""
    n, nt = R[R_N], R[R_T]
    team = seat % nt
    h = hand_at(seat)
    pos = _seats_into(s, R, seat, team, obs)
    nd = s[DISC_LEN]
    out = obs[pos:pos + NK]
    for k in range(NK):
        out[k] = 0.0
    top = s[DISC + nd - 1] if nd else -1
    if nd:
        out[top] = 1.0
    pos += NK
    obs[pos] = nd
    obs[pos + 1] = 1.0 if (nd == 0 or top == RED3 or top == BLACK3) else 0.0
    phase = s[PHASE]
    mine = s[CURRENT] == seat and phase != GAME_OVER
    tk = False
    if mine and phase == DRAW_PHASE:
        if takeable_known:
            tk = takeable
        else:
            tk = s[h + RED3] == 0 and nd > 0 and pickup_ok(s, R, seat, ro, wo)
    obs[pos + 2] = 1.0 if tk else 0.0
    take = R[R_TAKE]
    obs[pos + 3] = nd if (take == 0 or nd < take) else take
    pos += 4
    out, counts = obs[pos:pos + NK], s[PILEC:PILEC + NK]
    for k in range(NK):
        out[k] = counts[k]
    pos += NK
    obs[pos] = s[STOCK_LEN]
    obs[pos + 1] = s[ROUND]
    obs[pos + 2] = s[MINIMUM] / 100.0
    obs[pos + 3] = s[NRS] / R[R_ROUNDS]
    pos += 4
    t = team
    for _ in range(nt):
        b = BC + 3 * t
        pts = (s[MVAL + t] + s[b] * R[R_CB] + s[b + 1] * R[R_DB] + s[b + 2] * R[R_WB] + s[RED3S + t] * R[R_R3B])
        obs[pos] = s[SCORES + t] / 1000.0
        obs[pos + 1] = pts / 1000.0
        pos += 2
        t = t + 1 if t + 1 < nt else 0
    out = obs[pos:pos + 4]
    for i in range(4):
        out[i] = 1.0 if i == phase else 0.0
    pos += 4
    tp = s[TURN]
    obs[pos] = 1.0 if (mine and phase != ANSWER_PHASE) else 0.0
    obs[pos + 1] = 1.0 if (mine and phase == ANSWER_PHASE) else 0.0
    obs[pos + 2] = ((tp - seat if tp >= seat else tp - seat + n)) / n
    pos += 3
    return _going_out_into(s, R, seat, team, tp, obs, pos)


@kernel
def observe_acting(s, R, obs, mask, legal, ro, wo):
    """Observation and mask of the player to act (all-zero mask when the game is over); returns the
    number of legal actions, listed in ``legal``."""
    cnt = legal_into(s, R, legal, ro, wo)
    mask[:] = 0
    takeable = False
    for i in range(cnt):
        mask[legal[i]] = 1
        if legal[i] == 1:
            takeable = True
    observe_into(s, R, s[CURRENT], obs, True, takeable, ro, wo)
    return cnt


@kernel(inline="always")
def _prefetch_fixed(s):
    """Prefetch the parts of a row that every step reads: the scalars, the per-seat and per-team
    blocks with the melds, the provisional meld and the scores."""
    for i in range(0, PILEC + NK, 8):
        prefetch(s, i)
    for i in range(FOOTUP, MELDS + 72, 8):
        prefetch(s, i)
    for i in range(PROV, SCORES + 8, 8):
        prefetch(s, i)


@kernel(inline="always")
def _prefetch_moving(s):
    """Prefetch the parts of a row whose place moves: the hand to act, the stock's and the pile's tops
    (the row's scalars already fetched)."""
    h = hand_at(s[CURRENT])
    prefetch(s, h)
    prefetch(s, h + NK - 1)
    if s[STOCK_LEN]:
        prefetch(s, STOCK + s[STOCK_LEN] - 1)
    if s[DISC_LEN]:
        prefetch(s, DISC + s[DISC_LEN] - 1)


@kernel
def step_batch(S, R, actions, obs, mask, counts, legal_ids, legal, ro, wo):
    """For each game g with ``actions[g] >= 0``: check the action against ``mask[g]`` (the mask
    written by the previous call), apply it, then write the new observation, mask, legal
    count and legal ids (``legal_ids[g, :counts[g]]``) of the player to act; with
    ``actions[g] == -1`` only write them; with ``actions[g] < -1`` leave game g alone.  Returns the
    number of games whose action was not legal (they are left unchanged, ``counts[g]`` set
    to -1).  ``legal``: scratch space for one legal list (int64, ``mask.shape[1]`` long)."""
    S, R, actions, obs, mask = unowned(S), unowned(R), unowned(actions), unowned(obs), unowned(mask)
    counts, legal_ids, legal, ro, wo = unowned(counts), unowned(legal_ids), unowned(legal), unowned(ro), unowned(wo)
    bad = 0
    ng = S.shape[0]
    for g in range(ng):
        if g + 2 < ng:                       # the rows of the next games, fetched while this one plays
            _prefetch_fixed(S[g + 2])
        if g + 1 < ng:
            _prefetch_moving(S[g + 1])
        a = actions[g]
        if a < -1:
            continue
        s = S[g]
        if a >= 0:
            if a >= mask.shape[1] or not mask[g, a] or s[OVER]:
                counts[g] = -1
                bad += 1
                continue
            apply_legal(s, R, a, ro, wo)
        c = observe_acting(s, R, obs[g], mask[g], legal, ro, wo)
        counts[g] = c
        for i in range(c):
            legal_ids[g, i] = legal[i]
    return bad


@kernel
def reset_batch(S, R, games, seeds, obs, mask, counts, legal_ids, legal, ro, wo):
    """Deal game ``games[i]`` from ``seeds[i]`` (round 1, scores 0, no stacked shoe: the seeds checked
    by the caller), then write its observation, mask, legal count and legal ids as :func:`step_batch`."""
    S, R, games, seeds, obs, mask = unowned(S), unowned(R), unowned(games), unowned(seeds), unowned(obs), unowned(mask)
    counts, legal_ids, legal, ro, wo = unowned(counts), unowned(legal_ids), unowned(legal), unowned(ro), unowned(wo)
    scores = np.zeros(R[R_T], dtype=np.int64)
    top = np.zeros(0, dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        s = S[g]
        reset(s, R, seeds[i], 1, scores, top, ro, wo)
        c = observe_acting(s, R, obs[g], mask[g], legal, ro, wo)
        counts[g] = c
        for k in range(c):
            legal_ids[g, k] = legal[k]


@kernel
def pick_uniform(u, counts, legal_ids, out):
    """``out[g]``: the legal id at ``floor(u[g] * counts[g])`` of game g (``u`` uniform in [0, 1)), or
    -2 for a game with no legal action (finished); returns the number of those."""
    u, counts, legal_ids, out = unowned(u), unowned(counts), unowned(legal_ids), unowned(out)
    done = 0
    for g in range(counts.shape[0]):
        c = counts[g]
        if c > 0:
            out[g] = legal_ids[g, int(u[g] * c)]
        else:
            out[g] = -2
            done += 1
    return done


@kernel
def observe_seat(s, R, seat, obs, mask, legal, ro, wo):
    """Observation of any ``seat`` and its mask (zero unless it is to act); returns the legal count."""
    s, R, obs, mask, legal = unowned(s), unowned(R), unowned(obs), unowned(mask), unowned(legal)
    ro, wo = unowned(ro), unowned(wo)
    mask[:] = 0
    if s[CURRENT] == seat and s[PHASE] != GAME_OVER:
        return observe_acting(s, R, obs, mask, legal, ro, wo)
    observe_into(s, R, seat, obs, False, False, ro, wo)
    return 0


@kernel
def action_count(s):
    return s[ACOUNT]
