"""Observation, action-mask and global-state encoding (the env's hot path).

The observation is a flat ``float32`` vector seen from one seat.  Seats are
relative: offset 0 is the observing seat, 1 the player to its left (next to
act), and so on; teams are relative too (0 = own team, then the others in seat
order).  Its layout depends only on the numbers of players and teams, and
:func:`observation_layout` names every index (see also docs/observation.md).

Blocks, in order (4 players, 2 teams: 170 entries)::

    hand            15  own hand (or picked-up foot) as counts by kind (CODES order)
    self            2   own foot picked up, own played-from-foot
    others          3 x (players-1)  per other seat (left first): hand size,
                        foot picked up, played from foot
    teams           41 x teams  per team (own first): for each of the 12 meld slots
                        (4..A, W) the naturals, twos and jokers of the unfinished
                        meld (36); clean, dirty and wild books (3); red threes laid;
                        opened this round
    pile_top        15  one-hot kind of the pile's top card (all zero if empty)
    pile            4   pile size, pile blocked (three on top or empty), pile
                        takeable by the observer now, cards the pickup takes
    pile_counts     15  counts by kind of all cards in the pile (public under
                        perfect recall: every card in it was seen face up)
    table           4   stock size, round (1-based), first-meld minimum / 100,
                        game progress (rounds finished / rounds)
    scores          2 x teams  per team: cumulative score / 1000, this round's
                        points on the table (melds, books, red threes) / 1000
    phase           4   one-hot draw, meld, answer, game over
    turn            3   it is the observer's turn, the observer must answer,
                        relative seat of the player whose turn it is / players
    provisional     5   own team's provisional meld value / 100, cards forced by a
                        pickup wait (0/1), pile cards held until the opening,
                        incomplete pickup meld present, cancel_melds still available
    going_out       8   question pending, asked this turn, permission yes, no,
                        own team clean/dirty/wild books still missing for going out
                        in this round (RuleConfig.going_out_books), teammates have all played from the foot

Nothing hidden is encoded: other players' cards, unseen feet and the stock
order never enter the vector (tests/test_env.py checks it).
"""
from __future__ import annotations

import struct
from itertools import chain as _chain
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .actions import NUM_ACTIONS, PICKUP
from .cards import BLACK3, CODES, NUM_KINDS, NUM_SLOTS, RED3, SLOT_CODES
from .engine import ANSWER_PHASE, DRAW_PHASE, GAME_OVER, MAX_CANCELS_PER_TURN, Game
from .scoring import table_score

_EYE = [tuple(1.0 if i == k else 0.0 for i in range(NUM_KINDS)) for k in range(NUM_KINDS)]
_ZERO15 = (0.0,) * NUM_KINDS
_PHASES = [tuple(1.0 if i == k else 0.0 for i in range(4)) for k in range(4)]
_F32 = np.float32
_I8 = np.int8
_frombuffer = np.frombuffer      # positional dtype: keyword parsing costs more than the call


def observation_layout(players: int, teams: int) -> List[Tuple[str, int, int]]:
    """(block name, start, length) of every block of the observation."""
    blocks = [("hand", NUM_KINDS), ("self", 2), ("others", 3 * (players - 1)), ("teams", 41 * teams),
              ("pile_top", NUM_KINDS), ("pile", 4), ("pile_counts", NUM_KINDS), ("table", 4),
              ("scores", 2 * teams), ("phase", 4), ("turn", 3), ("provisional", 5), ("going_out", 8)]
    out, pos = [], 0
    for name, n in blocks:
        out.append((name, pos, n))
        pos += n
    return out


def observation_size(players: int, teams: int) -> int:
    name, start, n = observation_layout(players, teams)[-1]
    return start + n


def observation_names(players: int, teams: int) -> List[str]:
    """A name for every index of the observation, e.g. ``team0.K.naturals``."""
    names: List[str] = [f"hand.{c}" for c in CODES] + ["self.foot_picked_up", "self.played_foot"]
    for o in range(1, players):
        names += [f"seat+{o}.hand_size", f"seat+{o}.foot_picked_up", f"seat+{o}.played_foot"]
    for t in range(teams):
        for s in SLOT_CODES:
            names += [f"team{t}.{s}.naturals", f"team{t}.{s}.twos", f"team{t}.{s}.jokers"]
        names += [f"team{t}.books.clean", f"team{t}.books.dirty", f"team{t}.books.wild",
                  f"team{t}.red_threes", f"team{t}.opened"]
    names += [f"pile_top.{c}" for c in CODES]
    names += ["pile.size", "pile.blocked", "pile.takeable", "pile.take_count"]
    names += [f"pile_counts.{c}" for c in CODES]
    names += ["stock_size", "round", "minimum/100", "rounds_finished_frac"]
    for t in range(teams):
        names += [f"team{t}.score/1000", f"team{t}.round_table_points/1000"]
    names += ["phase.draw", "phase.meld", "phase.answer", "phase.game_over"]
    names += ["turn.mine", "turn.must_answer", "turn.seat_offset"]
    names += ["prov.value/100", "prov.forced", "prov.pending_pile_cards", "prov.incomplete_meld",
              "prov.cancel_available"]
    names += ["go_out.question_pending", "go_out.asked", "go_out.permission_yes", "go_out.permission_no",
              "go_out.clean_missing", "go_out.dirty_missing", "go_out.wild_missing", "go_out.teammates_ready"]
    return names


def table_points(game: Game, team: int) -> int:
    """Public round points of a team: card values melded, book bonuses, red threes laid."""
    return table_score(game, team)


def _packer(count: int):
    """``struct`` packer of ``count`` native float32 values (cached per size)."""
    packer = _PACKERS.get(count)
    if packer is None:
        packer = _PACKERS[count] = struct.Struct(f"={count}f").pack
    return packer


_PACKERS: dict = {}
_PACK1 = _packer(1)
_ONE_F = _PACK1(1.0)
_ZERO_F = _PACK1(0.0)
_PACK15 = _packer(NUM_KINDS)
_EYE_F = [_PACK15(*row) for row in _EYE]          # pile top one-hot, packed
_ZERO15_F = _PACK15(*_ZERO15)
_PACK2 = _packer(2)
_PACK_TEAM = _packer(3 * NUM_SLOTS + 5)
_PACK16 = _packer(1 + NUM_KINDS)
_PACK3 = _packer(3)
_PACK5 = _packer(5)
_PROV_NONE = _PACK5(0.0, 0.0, 0.0, 0.0, 0.0)         # provisional block outside the own unopened turn ...
_PROV_INCOMPLETE = _PACK5(0.0, 0.0, 0.0, 1.0, 0.0)   # ... with a pickup meld still incomplete
# going out: question pending, asked this turn, permission yes, permission no, by
# [answer phase * 6 + asked * 3 + (0 no answer, 1 yes, 2 no)]
_GO_FLAGS = [_packer(4)(float(a), float(k), float(p == 1), float(p == 2))
             for a in (0, 1) for k in (0, 1) for p in (0, 1, 2)]
_PERM_CODE = {None: 0, True: 1, False: 2}
_PHASE_TURN: dict = {}


_CONTEXTS: dict = {}


def _context(n: int, nt: int) -> tuple:
    """Per table size: head packer, other seats in order from each seat, teams in order from
    each team, tail packer, phase/turn table."""
    ctx = _CONTEXTS[n * 64 + nt] = (
        _packer(NUM_KINDS + 2 + 3 * (n - 1)),
        [tuple((seat + o) % n for o in range(1, n)) for seat in range(n)],
        [tuple((team + o) % nt for o in range(nt)) for team in range(nt)],
        _packer(4 + 2 * nt),
        _phase_turn_table(n))
    return ctx


def _phase_turn_table(n: int) -> List[bytes]:
    """Packed phase one-hot + turn block for ``n`` players, by [(phase * 2 + mine) * n + offset]."""
    table = _PHASE_TURN.get(n)
    if table is None:
        table = _PHASE_TURN[n] = [
            _packer(7)(*_PHASES[ph], float(mine and ph != ANSWER_PHASE), float(mine and ph == ANSWER_PHASE), off / n)
            for ph in range(4) for mine in (0, 1) for off in range(n)]
    return table


def _table_entry(game: Game, t: int) -> Tuple[bytes, int, bytes]:
    """(packed teams block, table points, packed books missing to go out) of team
    ``t``; cached in ``game.table_cache``."""
    r = game.rules
    c = game.book_counts[t]
    red3 = game.red3[t]
    need = game.going_out                     # this round's books (RuleConfig.going_out_books)
    missing = (need[0] - c[0], need[1] - c[1], need[2] - c[2])
    entry = (_PACK_TEAM(*_chain(_chain.from_iterable(game.melds[t]), c, (red3, 1.0 if game.opened[t] else 0.0))),
             game.meld_value[t] + c[0] * r.clean_book + c[1] * r.dirty_book + c[2] * r.wild_book
             + red3 * r.red_three_bonus,
             _PACK3(*[x if x > 0 else 0 for x in missing]))     # books still missing to go out
    game.table_cache[t] = entry
    return entry


def _pile_entry(game: Game, prev: Optional[tuple]) -> tuple:
    """Packed pile blocks around the seat-dependent ``takeable`` entry, cached in
    ``game.pile_cache`` with the pile's length and identity.  The engine resets it to None
    when a pickup takes cards; a longer pile with the same identity is ``prev`` plus
    discards, so one more card updates its counts."""
    disc = game.discard
    nd = len(disc)
    if disc:
        top = disc[-1]
        before = _EYE_F[top] + _PACK2(nd, 1.0 if top == RED3 or top == BLACK3 else 0.0)
    else:
        before = _ZERO15_F + _PACK2(0, 1.0)
    if prev is not None and prev[0] == nd - 1 and prev[1] == id(disc):
        pc = prev[4][:]
        pc[top] += 1
    else:
        pc = [0] * NUM_KINDS
        for k in disc:
            pc[k] += 1
    take = game._take
    entry = (nd, id(disc), before, _PACK16(nd if not take or nd < take else take, *pc), pc)
    game.pile_cache = entry
    return entry


def encode_observation(game: Game, seat: int, legal: Optional[Sequence[int]] = None) -> np.ndarray:
    """The observation vector of ``seat`` (see the module docstring).

    ``legal``, optional, is ``game.legal_actions()`` when ``seat`` is to act
    (saves recomputing whether the pile may be taken).  The env's hot path:
    the teams' table blocks and the pile blocks change rarely and are kept
    packed as float32 bytes between changes (``game.table_cache``,
    ``game.pile_cache``); the rest is gathered into two short lists and packed
    with ``struct``; one join makes the (writable) array.  tests/test_hot_paths.py
    checks it against a straightforward encoding.
    """
    n, nt = game.n, game.num_teams
    ctx = _CONTEXTS.get(n * 64 + nt) or _context(n, nt)
    r = game.rules
    team_of = game.team_of
    team = team_of[seat]
    hands, feet, played = game.hands, game.feet, game.played_foot
    # hand, self, others
    v = hands[seat][:]
    v.append(1.0 if feet[seat] is None else 0.0)
    v.append(1.0 if played[seat] else 0.0)
    for q in ctx[1][seat]:
        v.append(sum(hands[q]))
        v.append(1.0 if feet[q] is None else 0.0)
        v.append(1.0 if played[q] else 0.0)
    parts = [ctx[0](*v)]
    # teams (cached per team)
    cache = game.table_cache
    teams = ctx[2][team]
    points = []
    for t in teams:
        entry = cache[t]
        if entry is None:
            entry = _table_entry(game, t)
        parts.append(entry[0])
        points.append(entry[1])
    # pile (cached), with the observer's takeable flag in the middle
    disc = game.discard
    pile = game.pile_cache
    if pile is None or pile[0] != len(disc) or pile[1] != id(disc):
        pile = _pile_entry(game, pile)
    parts.append(pile[2])
    phase = game.phase
    mine = game.current == seat and phase != GAME_OVER
    if mine and phase == DRAW_PHASE:    # PICKUP is listed iff no red three and _pickup_reason is None
        takeable = (PICKUP in legal) if legal is not None else (
            not hands[seat][RED3] and game._pickup_reason(seat) is None)
        parts.append(_ONE_F if takeable else _ZERO_F)
    else:
        parts.append(_ZERO_F)
    parts.append(pile[3])
    # table, scores
    v = [len(game.stock), game.round, game.minimum / 100.0, len(game.round_scores) / r.rounds]
    scores = game.scores
    for t, pts in zip(teams, points):
        v.append(scores[t] / 1000.0)
        v.append(pts / 1000.0)
    parts.append(ctx[3](*v))
    # phase, turn (one table lookup)
    tp = game.turn_player
    parts.append(ctx[4][(phase * 2 + mine) * n + (tp - seat) % n])
    # provisional
    own_turn = team_of[tp] == team
    if own_turn and not game.opened[team]:
        parts.append(_PACK5(game.prov_value / 100.0, 1.0 if game.forced is not None else 0.0, sum(game.pending),
                            1.0 if game.incomplete >= 0 else 0.0,
                            1.0 if game.cancels < MAX_CANCELS_PER_TURN and any(game.prov) else 0.0))
    else:
        parts.append(_PROV_INCOMPLETE if own_turn and game.incomplete >= 0 else _PROV_NONE)
    # going out
    parts.append(_GO_FLAGS[(phase == ANSWER_PHASE) * 6 + game.asked * 3 + _PERM_CODE[game.permission]])
    parts.append(cache[team][2])
    ok = _ONE_F
    if r.partner_in_foot:               # game.partners_ok(seat), inline
        for q in game.teammates[seat]:
            if not played[q]:
                ok = _ZERO_F
                break
    parts.append(ok)
    return _frombuffer(_JOIN(parts), _F32)


_JOIN = bytearray().join        # a fresh bytearray: the array owns writable memory


def mask_of(legal) -> np.ndarray:
    """int8 mask over the action table with 1 at the ids in ``legal``."""
    buf = bytearray(NUM_ACTIONS)        # a bytearray loop beats np.zeros + fancy indexing for short lists
    for a in legal:
        buf[a] = 1
    return _frombuffer(buf, _I8)


def action_mask(game: Game, seat: int) -> np.ndarray:
    """int8 mask over the action table: 1 exactly for the legal actions of ``seat``."""
    if game.current == seat and game.phase != GAME_OVER:
        return mask_of(game.legal_actions())
    return np.zeros(NUM_ACTIONS, dtype=np.int8)


def state_size(players: int, teams: int) -> int:
    return observation_size(players, teams) + 2 * NUM_KINDS * players + NUM_KINDS


def encode_state(game: Game) -> np.ndarray:
    """Perfect-information state: player 0's observation, then every player's hand
    and foot counts (absolute seat order, 15 + 15 each), then the stock's counts
    by kind (order not included)."""
    parts = [encode_observation(game, 0)]
    extra: List[float] = []
    for p in range(game.n):
        extra.extend(game.hands[p])
        extra.extend(game.feet[p] if game.feet[p] is not None else _ZERO15)
    sc = [0] * NUM_KINDS
    for k in game.stock:
        sc[k] += 1
    extra.extend(sc)
    parts.append(np.asarray(extra, dtype=np.float32))
    return np.concatenate(parts)


def observation_scale(players: int, teams: int, with_state: bool = False) -> np.ndarray:
    """Fixed per-index input scale that brings every observation entry to about [-1, 1].

    Chosen from the observation's index names (:func:`observation_names`), so it
    follows the layout; every learner (SB3, RLlib, the batched backend) and every
    policy agent scales its input with it.
    """
    scale = []
    for name in observation_names(players, teams):
        s = 1.0
        if name.startswith("hand."):
            s = 0.25
        elif name.endswith(".hand_size"):
            s = 1 / 13
        elif name.endswith((".naturals", ".twos", ".jokers")):
            s = 1 / 7
        elif ".books." in name or name.endswith(".red_threes"):
            s = 1 / 3
        elif name == "pile.size":
            s = 1 / 30
        elif name in ("pile.take_count", "prov.pending_pile_cards"):
            s = 1 / 7
        elif name.startswith("pile_counts."):
            s = 1 / 5
        elif name == "stock_size":
            s = 1 / 150
        elif name == "round":
            s = 1 / 4
        elif name.endswith(".score/1000"):
            s = 1 / 5
        elif name.endswith(".round_table_points/1000"):
            s = 1 / 2
        scale.append(s)
    if with_state:
        extra = state_size(players, teams) - observation_size(players, teams)
        state_scale = observation_scale(players, teams)            # player 0's observation
        counts = [0.25] * (extra - 15) + [1 / 20] * 15               # hands/feet, then stock counts
        scale += list(state_scale) + counts
    return np.asarray(scale, dtype=np.float32)


__all__ = ["encode_observation", "action_mask", "mask_of", "encode_state", "observation_layout", "observation_names",
           "observation_size", "observation_scale", "state_size", "table_points", "NUM_SLOTS", "PICKUP"]
