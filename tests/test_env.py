"""The PettingZoo AEC environment: API conformance, mask exactness, no leaks, determinism."""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from handfoot_env import ENV_ID, IllegalActionError, handfoot_v0
from handfoot_env.actions import ACTION_NAMES, NUM_ACTIONS, action_index
from handfoot_env.cards import NUM_KINDS
from handfoot_env.observation import encode_observation, observation_names, observation_size

from .oracle import Ledger, describe, oracle_legal

# the two warnings api_test emits for every Dict-observation env outside its own list
EXPECTED_WARNINGS = ("Observation is not a NumPy array",
                     "Observation space for each agent probably should be gymnasium.spaces.box")


def _unexpected(records):
    return [str(w.message) for w in records if not str(w.message).startswith(EXPECTED_WARNINGS)]


@pytest.mark.parametrize("rules", ["pagat", "bicycle", "six_player", "individual"])
def test_api_test_passes_without_unexpected_warnings(rules):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        api_test(handfoot_v0.env(rules=rules), num_cycles=400, verbose_progress=False)
    assert _unexpected(rec) == []


def test_seed_test_passes():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        seed_test(handfoot_v0.env, num_cycles=300)
    assert _unexpected(rec) == []


def test_registered_in_pettingzoo_registry():
    import pettingzoo
    e = pettingzoo.make("aec", ENV_ID)
    assert e.unwrapped.metadata["name"] == "handfoot_v0"


def test_factories_accept_preset_yaml_config_and_overrides():
    from handfoot_env import load_rules
    assert handfoot_v0.raw_env(rules="configs/rules/bicycle.yaml").rules.decks == 6
    assert handfoot_v0.raw_env(rules=load_rules("six_player")).possible_agents[-1] == "player_5"
    assert handfoot_v0.env(decks=6).unwrapped.rules.decks == 6


def test_action_names_and_index_round_trip():
    e = handfoot_v0.env().unwrapped
    assert len(e.action_names) == NUM_ACTIONS == e.action_space("player_0").n
    for i in (0, 1, 2, 3, 4, 5, 6, 7, 20, 21, NUM_ACTIONS - 1):
        assert e.action_index(e.action_names[i]) == i
    assert e.action_names[e.action_index("meld:K:3:0:0")] == "meld:K:3:0:0"
    with pytest.raises(KeyError):
        e.action_index("meld:3:3:0:0")


def _random_states(n_games, rules="pagat", max_steps=400, seed=0, ledger=False):
    """Yield envs (with ``ledger``: (env, oracle ledger) pairs) at states sampled along random legal play
    (on the reference engine, which these tests examine; tests/test_compiled_core.py holds the compiled
    core to it)."""
    rng = random.Random(seed)
    env = handfoot_v0.raw_env(rules=rules, core="reference")
    for g in range(n_games):
        env.reset(seed=1000 + g)
        stops = sorted(rng.sample(range(1, max_steps), 3))
        steps = 0
        game = env.game
        led = Ledger(game.rules)
        while not game.game_over and stops:
            if steps == stops[0]:
                stops.pop(0)
                yield (env, led) if ledger else env
            legal = game.legal_actions()
            a = rng.choice(legal)
            rounds = len(game.round_scores)
            nxt = led.after(game, a)
            env.step(a)
            led = nxt if len(game.round_scores) == rounds else Ledger(game.rules, led.round + 1)
            steps += 1


def test_mask_equals_the_rules_oracle_on_random_states():
    """Over states of 60 random games of each preset, the env's mask for the agent to act is the set
    of actions tests/oracle.py derives from docs/rules.md (no legality code shared with the engine),
    and every other agent's mask is all zero."""
    checked = 0
    for rules, games in (("pagat", 60), ("bicycle", 15), ("six_player", 15), ("individual", 15)):
        for env, led in _random_states(games, rules=rules, ledger=True):
            game = env.game
            want = oracle_legal(game, led)
            for agent in env.possible_agents:
                mask = env.observe(agent)["action_mask"]
                if agent != env.agent_selection:
                    assert not mask.any()
                    continue
                got = set(np.flatnonzero(mask).tolist())
                assert got == want, (rules, f"mask only: {describe(got - want)}; rules only: {describe(want - got)}",
                                     game.state_dict())
            checked += 1
    assert checked >= 250


def test_mask_agrees_with_step_and_reason_illegal():
    """The engine's two views of legality agree with the mask: ``step`` accepts exactly the masked
    actions (on a clone) and ``reason_illegal`` names a reason for every other one.  This checks the
    fast path against the checked path, not the rules (that is the oracle test above)."""
    checked = 0
    for rules, games in (("pagat", 40), ("bicycle", 10), ("six_player", 10)):
        for env in _random_states(games, rules=rules, seed=1):
            game = env.game
            mask = env.observe(env.agent_selection)["action_mask"]
            for a in range(NUM_ACTIONS):
                clone = game.clone()
                try:
                    clone.step(a)
                    accepted = True
                except IllegalActionError:
                    accepted = False
                assert bool(mask[a]) == accepted == (game.reason_illegal(a) is None), (ACTION_NAMES[a], rules)
            checked += 1
    assert checked >= 150


def _rehide(game, seat, rng):
    """Re-deal every card ``seat`` cannot see, keeping all sizes."""
    g = game.clone()
    pool = []
    hidden_hands = [q for q in range(g.n) if q != seat]
    for q in hidden_hands:
        for k in range(NUM_KINDS):
            pool += [k] * g.hands[q][k]
    feet = [q for q in range(g.n) if g.feet[q] is not None]
    for q in feet:
        for k in range(NUM_KINDS):
            pool += [k] * g.feet[q][k]
    pool += g.stock
    sizes_h = {q: sum(g.hands[q]) for q in hidden_hands}
    sizes_f = {q: sum(g.feet[q]) for q in feet}
    rng.shuffle(pool)
    pos = 0
    for q in hidden_hands:
        h = [0] * NUM_KINDS
        for k in pool[pos:pos + sizes_h[q]]:
            h[k] += 1
        g.hands[q] = h
        pos += sizes_h[q]
    for q in feet:
        f = [0] * NUM_KINDS
        for k in pool[pos:pos + sizes_f[q]]:
            f[k] += 1
        g.feet[q] = f
        pos += sizes_f[q]
    g.stock = pool[pos:]
    return g


def test_observation_does_not_leak_hidden_cards():
    rng = random.Random(5)
    n = 0
    for env in _random_states(60, seed=3):
        game = env.game
        for seat in range(game.n):
            before = encode_observation(game, seat)
            other = _rehide(game, seat, rng)
            assert other.hands[seat] == game.hands[seat]
            np.testing.assert_array_equal(before, encode_observation(other, seat))
            n += 1
    assert n > 100


def test_rehiding_does_change_the_state_vector():
    """The leak test above can fail: the perfect-information state sees the re-deal."""
    from handfoot_env.observation import encode_state
    rng = random.Random(1)
    env = handfoot_v0.raw_env()
    env.reset(seed=2)
    other = _rehide(env.game, 0, rng)
    assert not np.array_equal(encode_state(env.game), encode_state(other))


def _play(env, seed, choose_seed):
    rng = random.Random(choose_seed)
    env.reset(seed=seed)
    trace = []
    for agent in env.agent_iter(max_iter=3000):
        obs, rew, term, trunc, info = env.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), rew))
        if term or trunc:
            env.step(None)
            continue
        env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return trace, env.unwrapped.state_dict()


def test_same_seed_and_actions_give_identical_observations_rewards_and_record():
    a = _play(handfoot_v0.env(), 11, 4)
    b = _play(handfoot_v0.env(), 11, 4)
    assert a == b
    c = _play(handfoot_v0.env(), 12, 4)
    assert c[1] != a[1]


def test_observation_layout_is_documented_index_by_index():
    for players, teams in ((4, 2), (6, 2), (3, 3)):
        assert len(observation_names(players, teams)) == observation_size(players, teams)
    e = handfoot_v0.raw_env()
    e.reset(seed=0)
    assert e.observe("player_0")["observation"].shape == e.observation_space("player_0")["observation"].shape


def test_observation_space_contains_observations():
    for rules in ("pagat", "six_player"):
        e = handfoot_v0.raw_env(rules=rules)
        e.reset(seed=1)
        for agent in e.possible_agents:
            assert e.observation_space(agent).contains(e.observe(agent))
        assert e.state().shape == e.state_space.shape


def test_round_rewards_are_score_differences_and_partners_match():
    env = handfoot_v0.raw_env()
    env.reset(seed=21)
    rng = random.Random(0)
    totals = {a: 0.0 for a in env.possible_agents}
    while not env.game.game_over:
        env.step(rng.choice(env.game.legal_actions()))
        for a, r in env.rewards.items():
            totals[a] += r
    rs = env.game.round_scores
    diff0 = sum(r[0] - r[1] for r in rs) / 1000
    assert totals["player_0"] == pytest.approx(diff0)
    assert totals["player_2"] == pytest.approx(diff0)
    assert totals["player_1"] == pytest.approx(-diff0)
    assert totals["player_3"] == totals["player_1"]


def test_game_win_reward_and_single_round_episodes():
    env = handfoot_v0.raw_env(reward="game_win", episode="round")
    env.reset(seed=3)
    rng = random.Random(0)
    while not all(env.terminations.values()):
        env.step(rng.choice(env.game.legal_actions()))
    assert len(env.game.round_scores) == 1
    r = env.game.round_scores[0]
    expected = 0.0 if r[0] == r[1] else (1.0 if r[0] > r[1] else -1.0)
    assert env.rewards["player_0"] == env.rewards["player_2"] == expected
    assert env.rewards["player_1"] == -expected


def test_truncation_cap():
    env = handfoot_v0.raw_env(max_actions=50)
    env.reset(seed=0)
    rng = random.Random(0)
    n = 0
    while not any(env.truncations.values()):
        env.step(rng.choice(env.game.legal_actions()))
        n += 1
    assert n == 50 and all(env.truncations.values())


def test_raw_env_illegal_action_raises_named_error():
    env = handfoot_v0.raw_env()
    env.reset(seed=0, options={"shoe": ["K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "A", "K", "Q"]})
    with pytest.raises(IllegalActionError, match="discard:K.*draw"):
        env.step(action_index("discard:K"))


def test_wrapped_env_terminates_on_illegal_move():
    env = handfoot_v0.env()
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(action_index("answer_yes"))
    assert all(env.unwrapped.terminations.values())
    assert env.unwrapped._cumulative_rewards["player_0"] == -1


def test_reset_options_shoe_round_and_scores():
    env = handfoot_v0.raw_env()
    shoe = ["K", "K", "K"]
    env.reset(seed=4, options={"shoe": shoe, "round": 3, "scores": [1000, -50]})
    sd = env.state_dict()
    assert sd["hands"][0].count("K") >= 3
    assert sd["round"] == 3 and sd["scores"] == [1000, -50]
    assert env.game.minimum == 120
    assert env.agent_selection == "player_2"          # dealer of round 3 is player_1
    with pytest.raises(ValueError, match="JK"):
        env.reset(seed=0, options={"shoe": ["JK"] * 11})


def test_state_dict_has_interface_keys():
    env = handfoot_v0.raw_env()
    env.reset(seed=0)
    keys = {"round", "dealer", "current_player", "phase", "scores", "round_scores", "opened", "melds",
            "red_threes", "hands", "feet", "foot_picked_up", "stock_size", "discard", "game_over", "winner"}
    assert keys <= set(env.state_dict())


def test_render_ansi_shows_the_table_from_the_viewer_seat():
    env = handfoot_v0.raw_env(render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert "Round 1/4" in text and "minimum 50" in text and "Stock" in text and "-> player_0" in text
    assert "foot:" not in text                      # no hidden foot shown
    assert "player_1 (team 1) in hand (foot waiting): 13 cards" in text
