"""Draw every position of a game with the rgb_array renderer, and write a GIF or MP4 of it.

    python scripts/record_video.py --record game.json --out game.mp4
    python scripts/record_video.py --seed 3 --agents strategic greedy --out game.gif --fps 8
    python scripts/record_video.py --seed 3                  # only measure: frames per second

The game is a saved record (``handfoot play --save``, ``handfoot evaluate --records``)
or a fresh one between built-in agents played through ``handfoot_v0.env(render_mode="rgb_array")``.
Writing a file needs imageio (``pip install -e '.[video]'``; MP4 also uses imageio-ffmpeg).
Prints the number of frames and how fast they were drawn.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional, Sequence

import numpy as np

_started = 0.0     # when drawing began (after imports, agent set-up and re-simulation)


def env_frames(agents: Sequence[str], seed: int, rules: str = "pagat") -> List[np.ndarray]:
    """Play one game between ``agents`` (team 0, team 1, ...) in the AEC env; one image per action."""
    from agents.registry import make_agent
    from handfoot_env import handfoot_v0

    env = handfoot_v0.env(rules=rules, render_mode="rgb_array")
    env.reset(seed=seed)
    raw = env.unwrapped
    players = {}
    for a in env.possible_agents:
        p = raw.agent_name_mapping[a]
        players[a] = make_agent(agents[raw.game.team_of[p] % len(agents)], seed * 100 + p)
        players[a].reset(p, raw.rules, seed * 100 + p)
    global _started
    _started = time.perf_counter()
    frames = [env.render()]
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(players[agent].act(obs, env.unwrapped.seat_view(agent))))
        frames.append(env.render())
    return frames


def record_frames(path: str) -> List[np.ndarray]:
    """One image per position of a saved record (after re-simulating and verifying it)."""
    from handfoot_env.record import load_record, positions
    from handfoot_env.render_image import render_game
    games = [p.game for p in positions(load_record(path))]
    global _started
    _started = time.perf_counter()
    return [render_game(g) for g in games]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--record", metavar="FILE", help="a saved game record (JSON)")
    src.add_argument("--seed", type=int, default=0, help="play a fresh game with this seed (default 0)")
    ap.add_argument("--agents", nargs="+", default=["strategic", "greedy"], metavar="SPEC",
                    help="agents of team 0, team 1 for a fresh game (default: strategic greedy)")
    ap.add_argument("--rules", default="pagat", help="rules preset for a fresh game")
    ap.add_argument("--out", metavar="FILE", help="write a .gif or .mp4 (needs imageio)")
    ap.add_argument("--fps", type=float, default=10.0, help="frames per second of the video (default 10)")
    args = ap.parse_args(argv)
    try:
        frames = record_frames(args.record) if args.record else env_frames(args.agents, args.seed, args.rules)
    except ValueError as e:          # RecordError, bad rules or agent spec
        print(f"record_video: error: {e}", file=sys.stderr)
        return 2
    dt = time.perf_counter() - _started
    h, w, _ = frames[0].shape
    what = "drawn" if args.record else "played and drawn"
    print(f"{len(frames)} frames of {w}x{h} {what} in {dt:.2f} s ({len(frames) / dt:.0f} frames/s)")
    if args.out:
        try:
            import imageio.v3 as iio
        except ImportError:
            print("record_video: error: writing a video needs imageio: pip install -e '.[video]'", file=sys.stderr)
            return 2
        t1 = time.perf_counter()
        if args.out.lower().endswith(".gif"):
            iio.imwrite(args.out, frames, duration=1000 / args.fps, loop=0)
        else:
            iio.imwrite(args.out, frames, fps=args.fps)
        print(f"wrote {args.out} in {time.perf_counter() - t1:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
