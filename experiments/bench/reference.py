"""Reference rows: the same timing loop on OpenSpiel's and RLCard's card games, when those optional
packages are installed (``pip install -e .[bench]``; a row says "not installed" otherwise).
"""
from __future__ import annotations

import random
from typing import Any, Dict, Optional

from experiments.bench.timing import _GameRunner


def bench_openspiel(cfg: Dict[str, Any]) -> Any:
    try:
        import pyspiel
    except ImportError:
        return {"status": "not installed", "hint": "pip install open_spiel  (or: pip install -e .[bench])"}
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        state = game.new_initial_state()
        n = 0
        rr = rng.randrange
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                acts, probs = zip(*outcomes)
                state.apply_action(rng.choices(acts, probs)[0])
                continue
            state.observation_tensor()
            legal = state.legal_actions()
            state.apply_action(legal[rr(len(legal))])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("open_spiel"))


def bench_openspiel_rl(cfg: Dict[str, Any]) -> Any:
    """OpenSpiel's RL-facing API: ``rl_environment.Environment("gin_rummy")`` (a TimeStep with the
    observation of every player and the legal actions after each step; chance nodes inside)."""
    try:
        from open_spiel.python import rl_environment
    except ImportError:
        return {"status": "not installed", "hint": "pip install open_spiel  (or: pip install -e .[bench])"}
    env = rl_environment.Environment("gin_rummy")
    env.seed(cfg["seed"])
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        ts = env.reset()
        n = 0
        rr = rng.randrange
        while not ts.last():
            obs = ts.observations
            legal = obs["legal_actions"][obs["current_player"]]
            ts = env.step([legal[rr(len(legal))]])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("open_spiel"))


def bench_rlcard(cfg: Dict[str, Any]) -> Any:
    try:
        import rlcard
    except ImportError:
        return {"status": "not installed", "hint": "pip install rlcard  (or: pip install -e .[bench])"}
    env = rlcard.make("gin-rummy", config={"seed": cfg["seed"]})
    rng = random.Random(cfg["seed"])

    def play(seed: int):
        state, _pid = env.reset()
        n = 0
        rr = rng.randrange
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _pid = env.step(legal[rr(len(legal))])
            n += 1
        return n, n

    return _GameRunner(play, cfg, cfg["seed"], version=_version("rlcard"))


def _version(dist: str) -> Optional[str]:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001
        return None
