"""The examples under examples/ run: CleanRL-style PPO on the single-seat env, TorchRL and Tianshou on the AEC env.

TorchRL and Tianshou come with the ``examples`` extra (scripts/test.sh installs it); the main job's
install has neither, so their tests are skipped there.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cleanrl_ppo_trains_on_the_single_seat_env():
    ex = _load("cleanrl_ppo")
    torch.manual_seed(0)
    before = [p.detach().clone() for p in ex.Agent(170, 705).parameters()]
    out = ex.train(total_timesteps=128, num_envs=2, num_steps=32, partner="random", opponents="random",
                   num_minibatches=2, update_epochs=1, verbose=False)
    assert out["steps"] == 128 and len(out["history"]) == 2
    assert all(abs(h["v_loss"]) < 1e6 and h["entropy"] > 0 for h in out["history"])
    assert any(not torch.equal(a, b) for a, b in zip(before, out["agent"].parameters()))


def test_torchrl_pettingzoo_wrapper_with_a_masked_policy():
    pytest.importorskip("torchrl")
    ex = _load("torchrl_pettingzoo")
    s = ex.main(steps=150, seed=0)
    assert s["steps"] == 150 and s["decisions"] == 150      # one player acts per step
    assert s["illegal"] == 0


def test_tianshou_pettingzoo_env_collects_whole_games_with_masked_policies():
    pytest.importorskip("tianshou")
    ex = _load("tianshou_pettingzoo")
    s = ex.main(games=1, seed=0, updates=2)
    assert s["games"] == 1 and s["steps"] > 100
    assert s["illegal"] == 0 and s["weights_changed"]
