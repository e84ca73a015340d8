"""The first minute is never silent: the warm-up (what the set-up runs) reaches every kernel that a
game in the AEC env, the single-seat env, an evaluation and the batched sampler call, and a kernel
that still compiles later says so on standard error."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parent.parent

_PATHS = r"""
import importlib, sys
import numba, numpy as np
from handfoot_env import compiled
game = compiled.load()
compiled.warm_up(game)
mods = [importlib.import_module(f"handfoot_env.compiled.{m}") for m in compiled._MODULES + ("batch", "game")]

def signatures():
    return {f"{m.__name__}.{k}": len(v.signatures) for m in mods for k, v in vars(m).items()
            if isinstance(v, numba.core.registry.CPUDispatcher)}

base = signatures()
assert len(base) > 20, base
rng = np.random.default_rng(0)
from handfoot_env import handfoot_v0
env = handfoot_v0.env(rules="pagat", render_mode="ansi")
env.reset(seed=7)
for i, agent in enumerate(env.agent_iter()):
    obs, r, te, tr, info = env.last()
    env.step(None if te or tr else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    if i == 50:
        env.render()
        env.unwrapped.state()
import gymnasium as gym
import handfoot_env.single_seat_v0
e = gym.make("handfoot/SingleSeat-v0", opponents="strategic")
e.reset(seed=1)
for _ in range(300):
    o, r, te, tr, _ = e.step(int(rng.choice(np.flatnonzero(e.unwrapped.action_masks()))))
    if te or tr:
        e.reset()
from experiments.evaluation.harness import EvalConfig, run_evaluation
run_evaluation(EvalConfig(agents=["strategic", "greedy"], games=1, seed=0, workers=1, progress=False,
                          plots=False), write=False)
new = {k: (base.get(k, 0), v) for k, v in signatures().items() if v != base.get(k, 0)}
print("NEW", new)
numba.njit(lambda x: x + 1)(3)          # a kernel compiled now: said on standard error
"""


def test_warm_up_reaches_every_kernel_and_a_later_compile_says_so():
    proc = subprocess.run([sys.executable, "-c", _PATHS], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "NEW {}" in proc.stdout, proc.stdout
    err = [x for x in proc.stderr.splitlines() if "compil" in x and "the cache lacks" in x]
    assert len(err) == 1 and "<lambda>" in err[0], proc.stderr
    assert "handfoot: compiled in" in proc.stderr
