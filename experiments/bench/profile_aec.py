"""The AEC loop of ``handfoot bench`` as a script to profile.

    python -m experiments.bench.profile_aec --rules pagat --games 60            # plain run, prints actions/s
    python -m experiments.bench.profile_aec --cprofile 25                       # top 25 functions by own time
    py-spy record -f raw -o aec.txt -- python -m experiments.bench.profile_aec  # sampling profile (pip install py-spy)

Uniform random legal play through the wrapped env ``handfoot_v0.env()``:
``env.last()`` (observation and mask), a random legal id from the mask, ``env.step``.
"""
from __future__ import annotations

import argparse
import random
import time
from typing import List, Optional

from experiments.bench.bench import play_aec_game
from experiments.config import seed_arg


def play(env, games: int, seed: int) -> int:
    """``games`` whole games of the bench's AEC loop; returns the actions played."""
    rng = random.Random(seed)
    return sum(play_aec_game(env, seed + g, rng) for g in range(games))


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.profile_aec", description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="pagat", help="rules preset (default pagat)")
    p.add_argument("--games", type=int, default=60, help="games to play (default 60)")
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--warmup", type=int, default=5, help="untimed games first, to fill the caches (default 5)")
    p.add_argument("--cprofile", type=int, metavar="N", help="run under cProfile and print the top N functions")
    args = p.parse_args(argv)
    if args.games < 1:
        p.error(f"--games must be positive, got {args.games}")
    if args.warmup < 0:
        p.error(f"--warmup must be 0 or more, got {args.warmup}")
    from handfoot_env import handfoot_v0
    env = handfoot_v0.env(rules=args.rules)
    if args.warmup:
        play(env, args.warmup, args.seed + 10 ** 6)
    if args.cprofile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        n = play(env, args.games, args.seed)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.cprofile)
        print(f"{n} actions (timing distorted by cProfile)")
        return 0
    t = time.process_time()
    n = play(env, args.games, args.seed)
    el = time.process_time() - t
    print(f"{args.rules}: {n} actions in {el:.2f} s CPU = {n / el:,.0f} actions/s (AEC loop, random legal play)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
