"""The observation's declared contract against hand-written expectations: the block layout and the
name of every index (the tables of docs/observation.md, also for other table sizes), the fixed input
scale every learner and the shipped champion read their input with, and the global state of
``env.state()`` built plainly from the game.

The values of the observation itself are held to a plain encoding in tests/test_hot_paths.py.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from handfoot_env.cards import CODES, SLOT_CODES
from handfoot_env.engine import Game
from handfoot_env.observation import (encode_observation, encode_state, observation_layout, observation_names,
                                      observation_scale, observation_size, state_size)

# (players, teams) -> every block's (name, start, length), added up by hand:
# hand 15, self 2, others 3 per other seat, teams 41 each (12 slots x 3 + 3 book counts + red threes
# + opened), pile_top 15, pile 4, pile_counts 15, table 4, scores 2 per team, phase 4, turn 3,
# provisional 5, going_out 8
LAYOUTS = {
    (4, 2): [("hand", 0, 15), ("self", 15, 2), ("others", 17, 9), ("teams", 26, 82), ("pile_top", 108, 15),
             ("pile", 123, 4), ("pile_counts", 127, 15), ("table", 142, 4), ("scores", 146, 4),
             ("phase", 150, 4), ("turn", 154, 3), ("provisional", 157, 5), ("going_out", 162, 8)],
    (6, 3): [("hand", 0, 15), ("self", 15, 2), ("others", 17, 15), ("teams", 32, 123), ("pile_top", 155, 15),
             ("pile", 170, 4), ("pile_counts", 174, 15), ("table", 189, 4), ("scores", 193, 6),
             ("phase", 199, 4), ("turn", 203, 3), ("provisional", 206, 5), ("going_out", 211, 8)],
    (2, 2): [("hand", 0, 15), ("self", 15, 2), ("others", 17, 3), ("teams", 20, 82), ("pile_top", 102, 15),
             ("pile", 117, 4), ("pile_counts", 121, 15), ("table", 136, 4), ("scores", 140, 4),
             ("phase", 144, 4), ("turn", 148, 3), ("provisional", 151, 5), ("going_out", 156, 8)],
}
SIZES = {(4, 2): 170, (6, 3): 219, (2, 2): 164}


@pytest.mark.parametrize("table", sorted(LAYOUTS))
def test_layout_and_size_by_hand(table):
    players, teams = table
    assert observation_layout(players, teams) == LAYOUTS[table]
    assert observation_size(players, teams) == SIZES[table]
    # the global state: the observation, then hand and foot counts of every player, then the stock's
    assert state_size(players, teams) == SIZES[table] + 30 * players + 15


@pytest.mark.parametrize("table", sorted(LAYOUTS))
def test_every_index_is_named_in_its_block(table):
    players, teams = table
    names = observation_names(players, teams)
    assert len(names) == len(set(names)) == SIZES[table]
    blocks = {name: (start, n) for name, start, n in LAYOUTS[table]}

    def block(name):
        start, n = blocks[name]
        return names[start:start + n]

    assert block("hand") == [f"hand.{c}" for c in CODES]
    assert block("self") == ["self.foot_picked_up", "self.played_foot"]
    others = block("others")
    for o in range(1, players):
        assert others[3 * (o - 1):3 * o] == [f"seat+{o}.hand_size", f"seat+{o}.foot_picked_up",
                                             f"seat+{o}.played_foot"]
    teams_block = block("teams")
    for t in range(teams):
        one = teams_block[41 * t:41 * (t + 1)]
        assert one[0:3] == [f"team{t}.4.naturals", f"team{t}.4.twos", f"team{t}.4.jokers"]
        assert one[33:36] == [f"team{t}.W.naturals", f"team{t}.W.twos", f"team{t}.W.jokers"]
        assert one[30] == f"team{t}.A.naturals" and one[13] == f"team{t}.8.twos"
        assert one[36:] == [f"team{t}.books.clean", f"team{t}.books.dirty", f"team{t}.books.wild",
                            f"team{t}.red_threes", f"team{t}.opened"]
    assert block("pile_top")[0] == "pile_top.4" and block("pile_top")[-1] == "pile_top.3B"
    assert block("pile") == ["pile.size", "pile.blocked", "pile.takeable", "pile.take_count"]
    assert block("pile_counts")[7] == "pile_counts.J" and block("pile_counts")[13] == "pile_counts.3R"
    assert block("table") == ["stock_size", "round", "minimum/100", "rounds_finished_frac"]
    assert block("scores")[-2:] == [f"team{teams - 1}.score/1000", f"team{teams - 1}.round_table_points/1000"]
    assert block("phase") == ["phase.draw", "phase.meld", "phase.answer", "phase.game_over"]
    assert block("turn") == ["turn.mine", "turn.must_answer", "turn.seat_offset"]
    assert block("provisional") == ["prov.value/100", "prov.forced", "prov.pending_pile_cards",
                                    "prov.incomplete_meld", "prov.cancel_available"]
    assert block("going_out") == ["go_out.question_pending", "go_out.asked", "go_out.permission_yes",
                                  "go_out.permission_no", "go_out.clean_missing", "go_out.dirty_missing",
                                  "go_out.wild_missing", "go_out.teammates_ready"]
    assert len(SLOT_CODES) == 12


# the input scale by name, written out; every name not listed has scale 1
SCALE_4x2 = {**{f"hand.{c}": 0.25 for c in CODES},
             **{f"seat+{o}.hand_size": 1 / 13 for o in (1, 2, 3)},
             **{f"team{t}.{s}.{k}": 1 / 7 for t in (0, 1) for s in SLOT_CODES for k in ("naturals", "twos", "jokers")},
             **{f"team{t}.books.{b}": 1 / 3 for t in (0, 1) for b in ("clean", "dirty", "wild")},
             "team0.red_threes": 1 / 3, "team1.red_threes": 1 / 3,
             "pile.size": 1 / 30, "pile.take_count": 1 / 7, "prov.pending_pile_cards": 1 / 7,
             **{f"pile_counts.{c}": 1 / 5 for c in CODES},
             "stock_size": 1 / 150, "round": 1 / 4,
             "team0.score/1000": 1 / 5, "team1.score/1000": 1 / 5,
             "team0.round_table_points/1000": 1 / 2, "team1.round_table_points/1000": 1 / 2}


def test_input_scale_by_name():
    names = observation_names(4, 2)
    scale = observation_scale(4, 2)
    assert scale.dtype == np.float32 and scale.shape == (170,)
    expected = np.asarray([SCALE_4x2.get(name, 1.0) for name in names], dtype=np.float32)
    assert np.array_equal(scale, expected), [names[i] for i in np.flatnonzero(scale != expected)]
    assert sum(1 for name in names if name in SCALE_4x2) == len(SCALE_4x2) == 15 + 3 + 72 + 6 + 2 + 3 + 15 + 2 + 4
    # with the global state (the centralised critic's input: the observation, then env.state()):
    # the observation's scale twice (the state opens with player 0's observation), hands and feet
    # by 4, the stock's counts by 20
    full = observation_scale(4, 2, with_state=True)
    assert full.shape == (170 + state_size(4, 2),) and full.dtype == np.float32
    assert np.array_equal(full[:170], scale) and np.array_equal(full[170:340], scale)
    assert np.all(full[340:340 + 120] == np.float32(0.25)) and np.all(full[460:] == np.float32(1 / 20))
    assert len(full) - 460 == 15


def test_input_scale_keeps_played_observations_small():
    """Over random games of three table sizes, scaled entries stay within [-4, 4] and 95% of them within
    [-1, 1] (measured: at most 3.6, a round's table points in a six-player game, and 1.7-4.6% beyond 1:
    table points, large piles, many red threes or books)."""
    for preset in ("pagat", "six_player", "individual"):
        g = Game(preset)
        scale = observation_scale(g.n, g.num_teams)
        rng = random.Random(4)
        worst, big, total = 0.0, 0, 0
        for seed in range(2):
            g.reset(seed=seed)
            while not g.game_over:
                x = np.abs(encode_observation(g, g.current) * scale)
                worst = max(worst, float(x.max()))
                big += int((x > 1).sum())
                total += x.size
                g.step(rng.choice(g.legal_actions()))
        assert worst <= 4.0, (preset, worst)
        assert big / total < 0.05, (preset, big / total)


def _plain_state(game: Game) -> np.ndarray:
    v = list(encode_observation(game, 0))
    for p in range(game.n):
        v += list(game.hands[p])
        v += list(game.feet[p]) if game.feet[p] is not None else [0] * 15
    v += [sum(1 for k in game.stock if k == kind) for kind in range(15)]
    return np.asarray(v, dtype=np.float32)


@pytest.mark.parametrize("preset", ["pagat", "six_player"])
def test_global_state_is_the_observation_then_every_hand_foot_and_the_stock(preset):
    g = Game(preset)
    rng = random.Random(9)
    g.reset(seed=3)
    checked = 0
    while not g.game_over and checked < 400:
        got = encode_state(g)
        assert got.dtype == np.float32 and got.shape == (state_size(g.n, g.num_teams),)
        assert np.array_equal(got, _plain_state(g))
        checked += 1
        g.step(rng.choice(g.legal_actions()))
    assert checked >= 200
