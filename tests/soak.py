"""A long soak of the env: many whole games over every preset, the invariants checked at every step.

    python -m tests.soak --games 2000            # about 2,000 games, a few minutes per core
    python -m tests.soak --compare --steps 1000000   # the compiled core against the reference
    python -m tests.soak --compare-env --games 200   # the same through both AEC envs

``--compare`` plays every game on a reference ``Game`` and on the compiled core
(``CoreBatch``) at once, same seed, same actions, and stops at the first difference in the
legal action list, the acting seat's observation and mask, or the full game state (every
field, the round scores included, written into the compiled core's row layout).
``--compare-env`` does it through ``handfoot_v0.env(core="reference")`` and
``core="compiled"`` and also compares the rewards, terminations, truncations and infos, and
every seat's observation every tenth step (slower: two env layers).  Seats are random, greedy
and strategic (those choose from the reference's seat view).

Each game runs through ``handfoot_v0.env()`` (the wrapped AEC env) with a mix of random,
greedy and strategic seats, and after every step checks that

* every card is in exactly one place (hands, feet, stock, pile, melds, books, red threes),
* the mask is exactly the engine's legal list, and the chosen action is legal,
* partners receive identical rewards at every step,
* the game ends (termination or truncation) within the action cap,

and at the end that the record replays to the same scores.  The pytest suite runs a short
version of the same checks (tests/test_properties.py); this script is the long one.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Optional

import numpy as np

from agents.registry import make_agent
from handfoot_env import handfoot_v0
from handfoot_env.cards import deck_counts
from handfoot_env.config import PRESETS
from handfoot_env.observation import mask_of
from handfoot_env.record import make_record, replay_record
from handfoot_env.view import seat_view

SPECS = ("random", "greedy", "strategic")


def soak_game(preset: str, seed: int, rng: random.Random) -> int:
    """Play one checked game; the number of steps."""
    env = handfoot_v0.env(rules=preset)
    env.reset(seed=seed)
    raw = env.unwrapped
    game = raw.game
    deck = deck_counts(game.rules.decks)
    agents = {}
    for p, name in enumerate(raw.possible_agents):
        a = make_agent(rng.choice(SPECS), rng.randrange(2 ** 31))
        a.reset(p, game.rules, rng.randrange(2 ** 31))
        agents[name] = a
    steps = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = raw.agent_name_mapping[name]
        legal = game.legal_actions()
        if not np.array_equal(obs["action_mask"], mask_of(legal)):
            raise AssertionError(f"{preset} seed {seed} step {steps}: mask differs from the legal list")
        agent = agents[name]
        o = obs if getattr(agent, "needs_observation", False) else None
        action = int(agent.act(o, seat_view(game, seat)))
        if action not in legal:
            raise AssertionError(f"{preset} seed {seed} step {steps}: agent chose an illegal action {action}")
        env.step(action)
        steps += 1
        if game.card_locations() != deck:
            raise AssertionError(f"{preset} seed {seed} step {steps}: cards not conserved")
        by_team = {}
        for a in raw.agents:
            team = game.team_of[raw.agent_name_mapping[a]]
            if by_team.setdefault(team, raw.rewards[a]) != raw.rewards[a]:
                raise AssertionError(f"{preset} seed {seed} step {steps}: partners' rewards differ")
    if game.game_over:
        again = replay_record(make_record(game))
        if again.scores != game.scores:
            raise AssertionError(f"{preset} seed {seed}: the record replays to other scores")
    return steps


def compare_engine_game(rules, seed: int, rng: random.Random, specs=SPECS, round: int = 1,
                        max_steps: Optional[int] = None) -> int:
    """One game on a reference ``Game`` and a one-game ``CoreBatch``, everything compared at every
    step (see the module docstring); ``AssertionError`` naming the first difference.  The game
    starts at ``round`` and stops after ``max_steps`` actions when given.  The steps."""
    from handfoot_env.compiled import load
    from handfoot_env.engine import Game
    from handfoot_env.observation import encode_observation
    batch = load()
    g = Game(rules)
    g.reset(seed=seed, round=round)
    b = batch.CoreBatch(g.rules, 1)
    if round == 1:
        b.reset([seed])
    else:
        b.reset_one(0, seed, round=round)
        b.step(np.full(1, -1, dtype=np.int64))            # observe the deal
    agents = []
    for p in range(g.n):
        a = make_agent(rng.choice(specs), rng.randrange(2 ** 31))
        a.reset(p, g.rules, rng.randrange(2 ** 31))
        agents.append(a)
    where = f"rules {rules if isinstance(rules, str) else g.rules.to_dict()} seed {seed} round {round}"
    row = np.zeros_like(b.S[0])
    act = np.zeros(1, dtype=np.int64)
    steps = 0
    while True:
        if not np.array_equal(batch.state_row(g, row), b.S[0]):
            raise AssertionError(f"{where} step {steps}: game state differs at row index "
                                 f"{np.flatnonzero(row != b.S[0])[:8].tolist()}")
        legal = g.legal_actions()
        if legal != b.legal_ids[0, :b.counts[0]].tolist():
            raise AssertionError(f"{where} step {steps}: legal lists differ: {legal} vs {b.legal(0)}")
        if g.game_over:
            if b.counts[0] != 0 or b.mask[0].any():
                raise AssertionError(f"{where}: the compiled core offers actions after the game's end")
            return steps
        if not np.array_equal(mask_of(legal), b.mask[0]):
            raise AssertionError(f"{where} step {steps}: masks differ")
        obs = encode_observation(g, g.current, legal)
        if not np.array_equal(obs, b.obs[0]):
            raise AssertionError(f"{where} step {steps}: observations differ at {np.flatnonzero(obs != b.obs[0])}")
        if max_steps is not None and steps >= max_steps:
            return steps
        agent = agents[g.current]
        if getattr(agent, "needs_observation", False):
            a = legal[rng.randrange(len(legal))]
        else:
            a = int(agent.act(None, seat_view(g, g.current)))
        g.apply_legal(a)
        act[0] = a
        if b.step(act):
            raise AssertionError(f"{where} step {steps}: the compiled core refused legal action {a}")
        steps += 1


def compare_game(rules, seed: int, rng: random.Random, specs=SPECS, **env_kwargs) -> int:
    """Play one game on both cores in lockstep, comparing everything at every step (see the
    module docstring); ``AssertionError`` naming the first difference.  The number of steps."""
    from handfoot_env.compiled.game import state_row

    ref = handfoot_v0.env(rules=rules, core="reference", **env_kwargs)
    com = handfoot_v0.env(rules=rules, core="compiled", **env_kwargs)
    ref.reset(seed=seed)
    com.reset(seed=seed)
    rraw, craw = ref.unwrapped, com.unwrapped
    rgame, cgame = rraw.game, craw.game
    agents = {}
    for p, name in enumerate(rraw.possible_agents):
        a = make_agent(rng.choice(specs), rng.randrange(2 ** 31))
        a.reset(p, rgame.rules, rng.randrange(2 ** 31))
        agents[name] = a
    where = f"rules {rules if isinstance(rules, str) else rgame.rules.to_dict()} seed {seed}"
    steps = 0
    row = np.zeros_like(cgame._row)
    for name in ref.agent_iter():
        if com.agent_selection != name:
            raise AssertionError(f"{where} step {steps}: {name} to act on the reference, {com.agent_selection} "
                                 f"on the compiled core")
        robs, rrew, rterm, rtrunc, rinfo = ref.last()
        cobs, crew, cterm, ctrunc, cinfo = com.last()
        if (rrew, rterm, rtrunc, rinfo) != (crew, cterm, ctrunc, cinfo):
            raise AssertionError(f"{where} step {steps}: last() differs: reference {(rrew, rterm, rtrunc, rinfo)}, "
                                 f"compiled {(crew, cterm, ctrunc, cinfo)}")
        for key in ("observation", "action_mask"):
            if robs[key].dtype != cobs[key].dtype or not np.array_equal(robs[key], cobs[key]):
                bad = np.flatnonzero(robs[key] != cobs[key])[:8].tolist()
                raise AssertionError(f"{where} step {steps}: {key} of {name} differs at {bad}")
        if state_row(rgame, row) is not None and not np.array_equal(row, cgame._row):
            bad = np.flatnonzero(row != cgame._row)[:8].tolist()
            raise AssertionError(f"{where} step {steps}: game state differs at row index {bad}")
        if rterm or rtrunc:
            ref.step(None)
            com.step(None)
            continue
        legal = rgame.legal_actions()
        if legal != cgame.legal_actions():
            raise AssertionError(f"{where} step {steps}: legal lists differ: {legal} vs {cgame.legal_actions()}")
        if steps % 10 == 0:
            for other in rraw.possible_agents:
                if not np.array_equal(rraw.observe(other)["observation"], craw.observe(other)["observation"]):
                    raise AssertionError(f"{where} step {steps}: observation of {other} differs")
        seat = rraw.agent_name_mapping[name]
        agent = agents[name]
        o = robs if getattr(agent, "needs_observation", False) else None
        action = int(agent.act(o, seat_view(rgame, seat)))
        ref.step(action)
        com.step(action)
        steps += 1
    if rraw.rewards != craw.rewards or rgame.round_scores != cgame.round_scores:
        raise AssertionError(f"{where}: final rewards or round scores differ")
    return steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", action="store_true", help="the compiled core against the reference engine")
    ap.add_argument("--compare-env", action="store_true", help="the AEC env on both cores")
    ap.add_argument("--steps", type=int, default=0, help="play until this many steps (instead of --games)")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    presets = list(PRESETS)
    t0 = time.perf_counter()
    total = 0
    play = compare_engine_game if args.compare else compare_game if args.compare_env else soak_game
    i = 0
    while (total < args.steps) if args.steps else (i < args.games):
        total += play(presets[i % len(presets)], rng.randrange(2 ** 31), rng)
        i += 1
        if i % 100 == 0:
            print(f"{i} games, {total:,} steps, {time.perf_counter() - t0:.0f} s", flush=True)
    what = "compiled core equal to the reference" if args.compare or args.compare_env else "soak passed"
    print(f"{what}: {i} games over {', '.join(presets)}, {total:,} steps checked, 0 differences, "
          f"in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
