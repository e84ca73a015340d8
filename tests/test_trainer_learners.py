"""The Trainer runs any learner of the registry: a learner defined in this file, registered here,
trains through the same Trainer (checkpoints, resume, metrics, evaluation) with no change to the
package; a batched or DMC run loads neither SB3 nor Ray.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np
import pytest

from agents.registry import make_agent
from experiments.config import ConfigError, config_from_dict
from experiments.training.cli import train_main
from experiments.training.config import BUILTIN_BACKENDS, TrainConfig
from experiments.training.learner import (
    Learner,
    RolloutLearner,
    SamplingLearner,
    backend_names,
    register_backend,
    unregister_backend,
)
from experiments.training.trainer import train
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.config import load_rules
from handfoot_env.observation import observation_scale, observation_size

ROOT = Path(__file__).resolve().parents[1]


class PreferenceLearner:
    """A policy with no hidden layer: one preference (logit) per action id, raised a little for every
    action played and more for those followed by a positive reward (lowered for a negative one).
    Enough to show every part of the Learner interface."""

    FILE = "preferences.npz"

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.rollout_size = int(cfg.ppo.n_steps) * int(cfg.n_envs)
        self.prefs = np.zeros(NUM_ACTIONS, np.float32)
        self.updates = 0

    def setup(self, trainer: Any, checkpoint: Optional[Dict[str, Any]]) -> None:
        r = load_rules(self.cfg.rules)
        self.scale = observation_scale(r.players, r.teams)
        self.visible = observation_size(r.players, r.teams)
        if checkpoint is not None:
            with np.load(trainer.resume / self.FILE, allow_pickle=False) as z:
                self.prefs, self.updates = z["prefs"].copy(), int(z["updates"])

    def sampler_options(self) -> Dict[str, Any]:
        return {}

    def actor(self) -> Dict[str, Any]:
        return {"scale": self.scale, "visible": self.visible, "layers": [], "activation": "tanh",
                "out": (np.zeros((NUM_ACTIONS, self.visible), np.float32), self.prefs.copy())}

    def update(self, batch: Dict[str, Any]) -> Dict[str, float]:
        rows = np.flatnonzero(~batch["open"])
        np.add.at(self.prefs, batch["act"][rows], (0.01 + 0.1 * np.sign(batch["rew"][rows])).astype(np.float32))
        self.updates += 1
        return {"samples": float(len(rows)), "n_updates": float(self.updates)}

    def save(self, folder: Path) -> Dict[str, Any]:
        with open(folder / self.FILE, "wb") as f:
            np.savez(f, prefs=self.prefs, updates=np.asarray(self.updates))
        return {"learner": "preferences"}

    def describe(self, info: Dict[str, Any]) -> str:
        return "action preferences"

    def close(self) -> None:
        pass


@pytest.fixture
def preferences():
    register_backend("preferences", PreferenceLearner, "rollout")
    yield "preferences"
    unregister_backend("preferences")


def tiny(tmp_path: Path, **over: Any) -> TrainConfig:
    data = {"name": "tiny", "seed": 5, "total_timesteps": 256, "n_envs": 2, "backend": "preferences",
            "batched": {"games": 4, "samplers": 0, "pipeline": False},
            "opponents": {"self_snapshots": 0.5, "random": 0.5}, "snapshots": {"every_updates": 1, "keep": 2},
            "ppo": {"n_steps": 32, "batch_size": 64},
            "evaluation": {"every_timesteps": 128, "deals": 1, "final_deals": 1, "workers": 1,
                           "opponents": ["random"]},
            "checkpoint_every": 128, "run_dir": str(tmp_path / "runs"), "progress": False}
    data.update(over)
    return config_from_dict(TrainConfig, data)


def test_the_builtin_learners_follow_the_protocol():
    from experiments.training.batched_ppo import BatchedPPO
    from experiments.training.dmc import DMCLearner
    from experiments.training.sb3 import SB3Learner
    cfg = TrainConfig()
    for cls in (BatchedPPO, DMCLearner):
        assert isinstance(cls(cfg), RolloutLearner)
    assert isinstance(SB3Learner(cfg), SamplingLearner)
    if importlib.util.find_spec("minari") is not None:       # backend: bc needs the data extra
        from experiments.training.bc import BCLearner
        assert isinstance(BCLearner(cfg), SamplingLearner)
    assert isinstance(PreferenceLearner(cfg), Learner) and isinstance(PreferenceLearner(cfg), RolloutLearner)
    assert {"sb3", "rllib", "batched", "dmc", "bc"} == set(BUILTIN_BACKENDS) <= set(backend_names())


def test_a_learner_defined_here_trains_checkpoints_resumes_and_is_evaluated(tmp_path, preferences):
    res = train(tiny(tmp_path), quiet=True)
    run = Path(res["run"])
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    kinds = [r["kind"] for r in rows]
    assert kinds.count("rollout") == kinds.count("update") == res["iterations"] >= 4
    assert "eval" in kinds and kinds[-1] == "final_eval"
    assert all("result_vs_random" in r or "result_vs_self_snapshots" in r for r in rows if r.get("games"))
    assert res["timesteps"] >= 256 and (run / "final_eval.json").exists() and (run / "learning_curve.png").exists()
    for ck in [run / "final", run / "best", *sorted((run / "checkpoints").glob("step_*"))]:
        names = {p.name for p in ck.iterdir()}
        assert {"actor.npz", "snapshots.npz", "trainer.json", PreferenceLearner.FILE} <= names, ck
    tj = json.loads((run / "final" / "trainer.json").read_text())
    assert tj["backend"] == "preferences" and tj["learner"] == "preferences"
    assert tj["state"]["snapshot_updates"] and tj["num_timesteps"] == res["timesteps"]
    with np.load(run / "final" / PreferenceLearner.FILE) as z:
        assert int(z["updates"]) == res["iterations"] and np.any(z["prefs"] != 0)   # it did learn something
    agent = make_agent(f"policy:{run}", 0)                 # the actor plays as any checkpoint does
    assert agent is not None

    # resume from the first periodic checkpoint: the rows after it are written again, the count goes on
    first = sorted((run / "checkpoints").glob("step_*"))[0]
    first_state = json.loads((first / "trainer.json").read_text())
    at = first_state["num_timesteps"]
    assert train_main(["--resume", str(first), "--set", "total_timesteps=512", "--quiet"]) == 0
    rows2 = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["timesteps"] for r in rows2 if r["kind"] == "rollout"]
    assert steps == sorted(set(steps)) and steps[-1] >= 512
    assert [r for r in rows2 if r["timesteps"] <= at and r["kind"] != "final_eval"] == \
        [r for r in rows if r["timesteps"] <= at and r["kind"] != "final_eval"]
    with np.load(run / "final" / PreferenceLearner.FILE) as z:
        later = sum(1 for r in rows2 if r["kind"] == "update" and r["timesteps"] > at)
        assert int(z["updates"]) == first_state["state"]["updates"] + later


def test_an_unknown_backend_is_one_config_error(tmp_path):
    with pytest.raises(ConfigError, match="backend: expected one of"):
        tiny(tmp_path, backend="nonesuch")


@pytest.mark.parametrize("backend", ["batched", "dmc"])
def test_a_batched_or_dmc_run_loads_neither_sb3_nor_ray(tmp_path, backend):
    code = f"""
import sys
from experiments.config import config_from_dict
from experiments.training.config import BUILTIN_BACKENDS, TrainConfig
from experiments.training.trainer import train
cfg = config_from_dict(TrainConfig, {{"backend": "{backend}", "total_timesteps": 64, "n_envs": 1,
    "batched": {{"games": 2, "samplers": 0, "pipeline": False}}, "dmc": {{"rollout": 64, "batch_size": 32}},
    "ppo": {{"n_steps": 64, "batch_size": 32}}, "network": {{"pi": [8], "vf": [8]}},
    "evaluation": {{"every_timesteps": 0, "final_deals": 0, "workers": 1}}, "checkpoint_every": 0,
    "run_dir": {str(tmp_path)!r}, "progress": False}})
train(cfg, quiet=True)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("sb3_contrib", "stable_baselines3", "ray")))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
