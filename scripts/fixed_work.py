"""A fixed amount of work on one path of the game, for timing two trees against each other as whole
processes (the same work on each: `handfoot bench` rows measure rates over a fixed time instead).

    python scripts/fixed_work.py core 12000     # CoreBatch: 256 games, random legal play, 12000 steps
    python scripts/fixed_work.py aec 150        # the PettingZoo loop on the compiled core, 150 games
    python scripts/fixed_work.py train 40000    # the quickstart recipe on the batched backend, 40k decisions
    python scripts/fixed_work.py eval 40        # handfoot evaluate champion_v1 against greedy, 40 deals

It imports the project from the Python path, so another tree is timed by putting it first:
``PYTHONPATH=/path/to/other/clone python scripts/fixed_work.py core 12000`` (run both from the other
tree's folder for ``train`` and ``eval``, which read its configs).  Prints one number (steps, or the
games played) so that a run that did less work shows.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile

import numpy as np


def core(steps: int) -> int:
    from handfoot_env.compiled import load
    b = load().CoreBatch("pagat", 256)
    b.reset(list(range(256)))
    rng = np.random.default_rng(0)
    seed = 256
    for _ in range(steps):
        acts, done = b.random_actions(rng)
        if done:
            idx = np.flatnonzero(acts == -2)
            b.reset(list(range(seed, seed + len(idx))), idx)
            seed += len(idx)
        b.step(acts)
    return seed


def aec(games: int) -> int:
    from handfoot_env import handfoot_v0
    env = handfoot_v0.env(rules="pagat", core="compiled")
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(games):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
    return steps


def command(args) -> int:
    with tempfile.TemporaryDirectory() as d:
        args = [a.replace("@DIR@", d) for a in args]
        subprocess.run([sys.executable, "-m", "experiments.apps.cli"] + args, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 0


def main(argv) -> int:
    if len(argv) != 2 or argv[0] not in ("core", "aec", "train", "eval") or not argv[1].isdigit():
        print("usage: python scripts/fixed_work.py core|aec|train|eval N", file=sys.stderr)
        return 2
    what, n = argv[0], int(argv[1])
    if what == "core":
        print(core(n))
    elif what == "aec":
        print(aec(n))
    elif what == "train":
        command(["train", "configs/train/quickstart.yaml", "--run-dir", "@DIR@", "--run-name", "t", "--quiet",
                 "--set", "backend=batched", "--set", "batched.core=compiled", "--set", "batched.games=32",
                 "--set", f"total_timesteps={n}", "--set", "evaluation.every_timesteps=100000000",
                 "--set", "evaluation.final_deals=0", "--set", "checkpoint_every=100000000", "--set", "seed=3"])
        print(n)
    else:
        from agents.registry import SHIPPED      # the first champion, by the name the tree gives it
        first = "champion_v1" if "champion_v1" in SHIPPED else "champion"
        command(["evaluate", "--agents", first, "greedy", "--deals", str(n), "--seed", "5", "--workers", "1",
                 "--core", "compiled", "--no-plots", "--no-progress", "--out", "@DIR@/e"])
        print(2 * n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
