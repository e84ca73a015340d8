"""How often a policy's greedy legal action is the dataset's action, on a BC run's held-out games, by kind
of action (docs/datasets.md):

    MINARI_DATASETS_PATH=runs/minari python scripts/bc_agreement.py handfoot/strategic-v0 runs/bc-s0/final

The held-out games are those of ``backend: bc`` (``--holdout``, ``--split-seed``: bc.holdout and
bc.split_seed of the run); the overall figure over decisions with at least two legal actions is the run's
``heldout_agreement``.
"""
from __future__ import annotations

import argparse
import collections
import sys

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="Minari dataset id")
    ap.add_argument("policy", help="a checkpoint folder or actor.npz (what policy:PATH takes)")
    ap.add_argument("--holdout", type=float, default=0.05)
    ap.add_argument("--split-seed", type=int, default=0)
    args = ap.parse_args(argv)
    from agents.registry import make_agent
    from experiments.datasets.minari_store import decisions, load
    from experiments.training.bc import BCLearner, held_out_games, unpack
    from handfoot_env.actions import ACTION_NAMES
    ds = load(args.dataset)
    game_of = BCLearner.episode_games(ds)
    held = held_out_games(game_of, args.holdout, args.split_seed)
    data = decisions(ds, np.flatnonzero(held[game_of]))
    policy = make_agent(f"policy:{args.policy}", 0).policy
    mask = unpack(data["mask"])
    choice = np.where(mask, policy.logits(data["obs"]), -np.inf).argmax(axis=1)
    hit = choice == data["action"]
    several = data["legal"] >= 2
    print(f"{args.dataset}: {int(held.sum())} held-out games, {len(hit):,} decisions, {int(several.sum()):,} with "
          f"two or more legal actions; agreement {hit[several].mean():.2%} on those, {hit.mean():.2%} on all")
    count: collections.Counter = collections.Counter()
    agree: collections.Counter = collections.Counter()
    for a, ok in zip(data["action"][several], hit[several]):
        kind = ACTION_NAMES[a].split(":")[0]
        count[kind] += 1
        agree[kind] += int(ok)
    print("| the dataset's action | decisions | agreement |\n|---|---:|---:|")
    for kind, n in count.most_common():
        print(f"| `{kind}` | {n:,} | {agree[kind] / n:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
