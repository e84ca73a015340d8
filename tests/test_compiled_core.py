"""The compiled core against the reference engine (docs/compiled_core.md).

Same deals, same actions on both; at every step the legal action lists, the acting seat's
observation and mask, and the whole game state (every field, written into the compiled
core's row layout by ``state_row``) must be equal; at env level also the rewards.  The long
version is ``python -m tests.soak --compare`` (docs/compiled_core.md records its last run).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from handfoot_env import handfoot_v0
from handfoot_env.compiled import available, resolve_core

from handfoot_env.config import PRESETS, load_rules
from handfoot_env.turns import ReferenceGame
from handfoot_env.engine import Game, IllegalActionError

from .soak import compare_engine_game, compare_game

pytestmark = pytest.mark.skipif(not available(), reason="the compiled core needs Numba")
if available():
    from handfoot_env.compiled import load
    load()
    from handfoot_env.compiled import rng as crng
    from handfoot_env.compiled.game import CompiledGame, CoreBatch, state_row

#: rule sets that move every rule field away from the presets
VARIANTS = {
    "take_all_majority": dict(pile_take="all", wild_limit="majority"),
    "no_wild_melds": dict(wild_melds=False, go_out_wild=0, go_out_clean=1, go_out_dirty=1),
    "no_asking_extra_round": dict(ask_partner=False, partner_in_foot=False, tie_break="extra_round",
                                  minimums=[0, 0]),
    "small_shoe": dict(decks=2, hand_size=7, foot_size=7, minimums=[50, 120], pile_take=3),
    "scores": dict(clean_book=-50, dirty_book=700, wild_book=0, red_three_bonus=-300, red_three_left=250,
                   go_out_bonus=-20, go_out_clean=0, go_out_dirty=0, go_out_wild=0),
    "two_players": dict(players=2, teams=2, decks=2, minimums=[50]),
    "books_by_round": dict(go_out_clean=[0, 1, 2, 1], go_out_dirty=[1, 0, 1, 2], go_out_wild=[0, 0, 1, 0],
                           tie_break="extra_round"),
    "eight_in_four_teams": dict(players=8, teams=4, decks=8, hand_size=9, foot_size=9, minimums=[90, 50, 150]),
    "pile_needs_opening": dict(pile_needs_opening=True, minimums=[50, 150]),
}


def _play_compare(rules, seed: int, specs=("random",)) -> int:
    return compare_engine_game(rules, seed, random.Random(seed), specs)


def test_the_random_generator_is_pythons_draw_for_draw():
    for seed in (0, 1, 2 ** 31 - 1, 2 ** 32, 2 ** 45 + 11, 2 ** 62 + 5, 2 ** 63 - 1):
        st, r = crng.seeded(seed), random.Random(seed)
        assert [crng.randbelow(st, 2 ** 62) for _ in range(6)] == [r.randrange(2 ** 62) for _ in range(6)]
        assert [crng.randbelow(st, n) for n in (1, 2, 3, 7, 100, 271)] == [r.randrange(n) for n in
                                                                          (1, 2, 3, 7, 100, 271)]
        a, b = np.arange(300, dtype=np.int64), list(range(300))
        crng.shuffle(st, a, 0, 300)
        r.shuffle(b)
        assert a.tolist() == b


@pytest.mark.parametrize("chunk", range(6))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_plays_the_same_games_on_both_cores(preset, chunk):
    """Random play and the heuristics: 25 whole games per chunk, 150 per preset."""
    steps = 0
    for i in range(25):
        seed = 1000 * chunk + 17 * i + len(preset)
        specs = ("random",) if i % 2 else ("random", "greedy", "strategic")
        steps += _play_compare(preset, seed, specs)
    assert steps > 5000


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_rule_field_plays_the_same_games_on_both_cores(name):
    rules = load_rules("pagat", **VARIANTS[name])
    for i in range(6):
        _play_compare(rules, 31 * i + 5, ("random", "greedy", "strategic") if i % 2 else ("random",))


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_env_on_both_cores_gives_the_same_rewards_and_observations(preset):
    for seed in (3, 4):
        assert compare_game(preset, seed, random.Random(seed)) > 100
    assert compare_game(preset, 9, random.Random(9), episode="round", reward="game_win") > 10


def test_stacked_shoe_round_and_scores_reset_like_the_reference():
    shoe = ["K", "K", "3R", "JK", "2", "A"]
    g = Game("pagat")
    g.reset(seed=8, shoe=shoe, round=3, scores=[120, -40])
    c = CompiledGame("pagat")
    c.reset(seed=8, shoe=shoe, round=3, scores=[120, -40])
    assert np.array_equal(state_row(g), c._row)
    assert c.state_dict() == g.state_dict()
    with pytest.raises(ValueError, match="round must be"):
        c.reset(seed=1, round=9)
    with pytest.raises(ValueError, match="shoe card"):
        c.reset(seed=1, shoe=["JK"] * 20)


def test_compiled_game_names_the_reason_of_an_illegal_action_and_keeps_its_state():
    c = CompiledGame("pagat")
    c.reset(seed=2)
    before = c._row.copy()
    with pytest.raises(IllegalActionError, match="discard"):
        c.step_name("discard:K")
    assert np.array_equal(before, c._row)


def test_an_edit_of_a_compiled_games_state_is_written_back_into_its_row():
    g, c = Game("pagat"), CompiledGame("pagat")
    g.reset(seed=4)
    c.reset(seed=4)
    for game in (g, c):
        game.step_name("draw")
        game.hands[game.current][0] += 3          # three more 4s
        game.discard = [5, 5]
    assert c.legal_actions() == g.legal_actions()
    assert np.array_equal(state_row(g), c._row)
    row = c._row.copy()
    c.melds[0][3] = [5, 2, 0]                     # seven cards in an unfinished meld: a state no game reaches
    for _ in range(2):                            # refused with one line, every time, the row kept
        with pytest.raises(ValueError, match="slot 3 holds \\[5, 2, 0\\].*0 to 6 cards"):
            c.legal_actions()
        assert np.array_equal(row, c._row)


def test_a_batch_rejects_an_action_outside_the_mask_and_leaves_the_game_alone():
    b = CoreBatch("pagat", 3)
    b.reset([1, 2, 3])
    before = b.S.copy()
    acts = np.array([b.legal_ids[0, 0], 400, -2])
    assert b.step(acts) == 1
    assert b.counts[1] == -1 and np.array_equal(before[1], b.S[1]) and np.array_equal(before[2], b.S[2])
    assert not np.array_equal(before[0], b.S[0])


def test_a_batch_deals_the_games_it_is_given_and_draws_random_legal_actions():
    from handfoot_env.engine import Game
    b = CoreBatch("pagat", 4)
    b.reset([11, 12, 13, 14])
    before = b.S.copy()
    b.reset([21, 23], games=[1, 3])
    for g, seed in ((1, 21), (3, 23)):
        ref = Game("pagat")
        ref.reset(seed=seed)
        assert np.array_equal(state_row(ref), b.S[g])
        assert b.legal(g) == ref.legal_actions() == b.legal_ids[g, :b.counts[g]].tolist()
    assert np.array_equal(before[0], b.S[0]) and np.array_equal(before[2], b.S[2])
    b.counts[2] = 0                                   # as a finished game's
    acts, done = b.random_actions(np.random.default_rng(5))
    assert done == 1 and acts[2] == -2
    assert all(acts[g] in b.legal_ids[g, :b.counts[g]] for g in (0, 1, 3))
    for games, seeds, word in (([4], [1], "indices"), ([0, 1], [1], "one seed per game"), ([0], [-1], "seed"),
                               (3, [1], "indices"), ([[0], [1]], [1, 2], "indices"), ([[0], [1, 2]], [1], "indices"),
                               ([0.5], [1], "indices"), ([True], [1], "indices"), ([0], 7, "seeds")):
        with pytest.raises(ValueError, match=word):
            b.reset(seeds, games=games)
    assert np.array_equal(before[0], b.S[0])                # a refused reset changes nothing


def test_the_batched_loop_and_the_one_game_loop_play_the_same_games():
    """turns.play_batch over a CoreBatch (a game stops at its first round's end, the others play on) and
    turns.play_until over one reference game each, the same moves drawn per game: the same round."""
    from handfoot_env.turns import play_batch, play_until
    seeds = [31, 32, 33, 34, 35]
    b = CoreBatch("pagat", len(seeds))
    b.reset(seeds)
    rngs = [random.Random(s) for s in seeds]
    acts = np.full(len(seeds), -2, np.int64)
    asked = []

    def rows(t):
        asked.append(t)
        return np.flatnonzero(b.in_round(0))

    def act(r):
        acts[:] = -2
        for i in r:
            acts[i] = rngs[i].choice(b.legal_ids[i, :b.counts[i]].tolist())
        return acts

    ticks = play_batch(rows, act, lambda r, a: b.step(a))
    assert asked == list(range(ticks + 1)) and not b.in_round(0).any()
    lengths = []
    for i, seed in enumerate(seeds):
        g, rng = Game("pagat"), random.Random(seed)
        g.reset(seed=seed)
        n = play_until(g, None, lambda p, legal: rng.choice(legal), stop=lambda: g.rounds_finished > 0)
        assert np.array_equal(state_row(g), b.S[i])
        assert b.round_score(0)[i].tolist() == g.round_scores[0]
        lengths.append(n)
    assert ticks == max(lengths) and min(lengths) < ticks          # as long as the longest game, no longer


def test_core_names_resolve():
    assert resolve_core("reference") == "reference"
    assert resolve_core(None) == "compiled" == resolve_core("auto")
    with pytest.raises(ValueError, match="core must be"):
        resolve_core("fast")
    env = handfoot_v0.env(core="reference")
    # the reference engine's Game with the interface's reading methods (turns.ReferenceGame)
    assert env.unwrapped.core == "reference" and type(env.unwrapped.game) is ReferenceGame
    assert isinstance(env.unwrapped.game, Game)
    assert handfoot_v0.env().unwrapped.core == "compiled"


def test_handfoot_core_names_what_auto_means(monkeypatch):
    monkeypatch.setenv("HANDFOOT_CORE", "reference")
    assert resolve_core("auto") == resolve_core(None) == "reference" and resolve_core("compiled") == "compiled"
    assert handfoot_v0.env().unwrapped.core == "reference"
    monkeypatch.setenv("HANDFOOT_CORE", "compiled")
    assert resolve_core("auto") == "compiled"
    monkeypatch.setenv("HANDFOOT_CORE", "fast")
    with pytest.raises(ValueError, match="HANDFOOT_CORE must be 'reference' or 'compiled', got 'fast'"):
        resolve_core("auto")


def test_the_first_load_after_an_install_says_it_compiles_and_later_loads_say_nothing(monkeypatch, tmp_path, capsys):
    """A cold cache (no marker in the cache folder): one line before the compile, one after, and the
    marker written; a warm cache, or a second load in the process: silence."""
    import handfoot_env.compiled as compiled
    calls = []
    monkeypatch.setattr(compiled, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(compiled, "warm_up", lambda game: calls.append(game))
    monkeypatch.setattr(compiled, "_LOADED", [])
    compiled.load()
    compiled.load()
    err = capsys.readouterr().err.splitlines()
    assert len(calls) == 1 and len(err) == 2, err
    assert err[0].startswith("handfoot: compiling the rules core, once per install") and str(tmp_path) in err[0]
    assert err[1].startswith("handfoot: rules core compiled in ")
    assert (tmp_path / compiled._WARM).exists()
    monkeypatch.setattr(compiled, "_LOADED", [])          # a later process: the marker is there
    compiled.load()
    assert capsys.readouterr().err == "" and len(calls) == 1


def test_warm_up_reaches_the_kernels_without_error():
    from handfoot_env.compiled import warm_up
    warm_up(load(), "bicycle")
