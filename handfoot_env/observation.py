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
                        own team clean/dirty/wild books still missing for going out,
                        teammates have all played from the foot

Nothing hidden is encoded: other players' cards, unseen feet and the stock
order never enter the vector (tests/test_env.py checks it).
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from .actions import NUM_ACTIONS, PICKUP
from .cards import CODES, NUM_KINDS, NUM_RANKS, NUM_SLOTS, SLOT_CODES, VALUES
from .engine import ANSWER_PHASE, GAME_OVER, MAX_CANCELS_PER_TURN, Game

_EYE = [tuple(1.0 if i == k else 0.0 for i in range(NUM_KINDS)) for k in range(NUM_KINDS)]
_ZERO15 = (0.0,) * NUM_KINDS
_PHASES = [tuple(1.0 if i == k else 0.0 for i in range(4)) for k in range(4)]


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
    """Public round points of a team: card values melded, book bonuses, red threes."""
    r = game.rules
    pts = 0
    for s, n, t, j in game.books[team]:
        pts += n * (VALUES[s] if s < NUM_RANKS else 0) + 20 * t + 50 * j
    for s, (n, t, j) in enumerate(game.melds[team]):
        if n or t or j:
            pts += n * (VALUES[s] if s < NUM_RANKS else 0) + 20 * t + 50 * j
    c = game.book_counts[team]
    return pts + c[0] * r.clean_book + c[1] * r.dirty_book + c[2] * r.wild_book + game.red3[team] * r.red_three_bonus


def encode_observation(game: Game, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (see the module docstring)."""
    n, nt = game.n, game.num_teams
    r = game.rules
    team = game.team_of[seat]
    v: List[float] = list(game.hands[seat])
    v.append(1.0 if game.feet[seat] is None else 0.0)
    v.append(1.0 if game.played_foot[seat] else 0.0)
    for o in range(1, n):
        q = (seat + o) % n
        v.append(float(sum(game.hands[q])))
        v.append(1.0 if game.feet[q] is None else 0.0)
        v.append(1.0 if game.played_foot[q] else 0.0)
    for ot in range(nt):
        t = (team + ot) % nt
        for m in game.melds[t]:
            v.extend(m)
        v.extend(game.book_counts[t])
        v.append(game.red3[t])
        v.append(1.0 if game.opened[t] else 0.0)
    disc = game.discard
    if disc:
        top = disc[-1]
        v.extend(_EYE[top])
    else:
        v.extend(_ZERO15)
    v.append(len(disc))
    v.append(1.0 if game.pile_blocked() else 0.0)
    mine = game.current == seat and game.phase != GAME_OVER
    v.append(1.0 if mine and game.phase == 0 and game._pickup_reason(seat) is None and not game.hands[seat][13]
             else 0.0)
    take = game._take
    v.append(float(min(len(disc), take) if take else len(disc)))
    pc = [0] * NUM_KINDS
    for k in disc:
        pc[k] += 1
    v.extend(pc)
    v.append(len(game.stock))
    v.append(game.round)
    v.append(game.minimum / 100.0)
    v.append(len(game.round_scores) / r.rounds)
    for ot in range(nt):
        t = (team + ot) % nt
        v.append(game.scores[t] / 1000.0)
        v.append(table_points(game, t) / 1000.0)
    v.extend(_PHASES[game.phase])
    v.append(1.0 if mine and game.phase != ANSWER_PHASE else 0.0)
    v.append(1.0 if mine and game.phase == ANSWER_PHASE else 0.0)
    v.append(((game.turn_player - seat) % n) / n)
    own_turn = game.team_of[game.turn_player] == team
    opened = game.opened[team]
    if own_turn and not opened:
        v.append(game.prov_value / 100.0)
        v.append(1.0 if game.forced is not None else 0.0)
        v.append(float(sum(game.pending)))
    else:
        v.extend((0.0, 0.0, 0.0))
    v.append(1.0 if own_turn and game.incomplete >= 0 else 0.0)
    v.append(1.0 if own_turn and not opened and game.cancels < MAX_CANCELS_PER_TURN and any(game.prov) else 0.0)
    v.append(1.0 if game.phase == ANSWER_PHASE else 0.0)
    v.append(1.0 if game.asked else 0.0)
    v.append(1.0 if game.permission is True else 0.0)
    v.append(1.0 if game.permission is False else 0.0)
    bc = game.book_counts[team]
    v.append(max(0, r.go_out_clean - bc[0]))
    v.append(max(0, r.go_out_dirty - bc[1]))
    v.append(max(0, r.go_out_wild - bc[2]))
    v.append(1.0 if game.partners_ok(seat) else 0.0)
    return np.asarray(v, dtype=np.float32)


def action_mask(game: Game, seat: int) -> np.ndarray:
    """int8 mask over the action table: 1 exactly for the legal actions of ``seat``."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if game.current == seat and game.phase != GAME_OVER:
        mask[game.legal_actions()] = 1
    return mask


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


__all__ = ["encode_observation", "action_mask", "encode_state", "observation_layout", "observation_names",
           "observation_size", "state_size", "table_points", "NUM_SLOTS", "PICKUP"]
