"""The timing loop every bench row shares: a CPU or wall clock, and a runner that plays whole games
in slices and counts actions, observations and games.
"""
from __future__ import annotations

import gc
import time
from typing import Any, Callable, Dict, Optional


class _Clock:
    """Process CPU time and wall time, summed over the timed slices."""

    def __init__(self, kind: str):
        self.kind = kind
        self.wall_total = self.cpu_total = 0.0

    def start(self) -> None:
        self.w0, self.c0 = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.wall_total += time.perf_counter() - self.w0
        self.cpu_total += time.process_time() - self.c0

    def wall(self) -> float:
        return self.wall_total

    def cpu(self) -> float:
        return self.cpu_total

    def running(self) -> float:
        """Seconds in the current slice on the configured clock."""
        return (time.process_time() - self.c0) if self.kind == "cpu" else (time.perf_counter() - self.w0)


class _GameRunner:
    """A row measured slice by slice: ``play_one(seed)`` plays one whole game and returns
    (actions, observations); each slice plays whole games until its budget is spent."""

    def __init__(self, play_one: Callable[[int], Any], cfg: Dict[str, Any], seed0: int,
                 version: Optional[str] = None):
        self.play_one, self.cfg, self.seed0 = play_one, cfg, seed0
        self.clock = _Clock(cfg["clock"])
        self.actions = self.obs = self.games = 0
        self.extra: Dict[str, Any] = {} if version is None else {"version": version}

    def warmup(self) -> None:
        warm = float(self.cfg.get("warmup_seconds") or 0)
        t0 = time.perf_counter()
        s = 10 ** 6
        while time.perf_counter() - t0 < warm:
            self.play_one(self.seed0 + s)
            s += 1

    def run_slice(self, k: int, slices: int) -> None:
        games_target = self.cfg["games"]
        goal = -(-int(games_target) * (k + 1) // slices) if games_target is not None else None
        budget = float(self.cfg["seconds"]) / slices
        clock = self.clock
        gc.collect()
        clock.start()
        while True:
            if goal is not None and self.games >= goal:
                break
            a, o = self.play_one(self.seed0 + self.games)
            self.actions += a
            self.obs += o
            self.games += 1
            if goal is None and clock.running() >= budget:
                break
        clock.stop()

    def result(self) -> Dict[str, Any]:
        return {**_rates(self.actions, self.obs, self.games, self.clock), **self.extra}


def _rates(actions: int, obs: int, games: float, clock: _Clock) -> Dict[str, Any]:
    wall, cpu = clock.wall(), clock.cpu()
    el = cpu if clock.kind == "cpu" else wall
    el = max(el, 1e-9)
    return {"status": "ok", "actions": actions, "observations": obs, "games": games,
            "seconds_wall": round(wall, 4), "seconds_cpu": round(cpu, 4),
            "actions_per_s": actions / el, "games_per_s": games / el, "obs_per_s": obs / el,
            "actions_per_game": actions / games if games else None}
