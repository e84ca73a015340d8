"""A long soak of the env: many whole games over every preset, the invariants checked at every step.

    python -m tests.soak --games 2000            # about 2,000 games, a few minutes per core

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    presets = list(PRESETS)
    t0 = time.perf_counter()
    total = 0
    for i in range(args.games):
        total += soak_game(presets[i % len(presets)], rng.randrange(2 ** 31), rng)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} games, {total:,} steps, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"soak passed: {args.games} games over {', '.join(presets)}, {total:,} steps checked "
          f"in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
