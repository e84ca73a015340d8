"""Loading never runs code from a file: pickle-based files need HANDFOOT_TRUST_PICKLE=1, the
project's own checkpoints are arrays and JSON, and paths read from a checkpoint stay inside it.

Each crafted pickle creates a marker file when unpickled; without the trust switch the marker
must not appear.  The same file with the switch does create it, which shows the craft works.
"""
from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.files import TRUST_ENV, UnsafePathError, UntrustedFileError, latest_checkpoint
from agents.policy import resolve_policy_path, save_actor
from agents.registry import make_agent
from agents.rllib_policy import load_module_weights
from experiments.config import ConfigError, config_to_dict
from experiments.runs import open_run, resolve_resume


class _Payload:
    """Unpickling this creates the file ``path`` (what an attacker's code would do, harmlessly)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def evil_pickle(marker: Path) -> bytes:
    return pickle.dumps(_Payload(marker))


def evil_model_zip(path: Path, marker: Path) -> None:
    """An SB3-style model.zip whose ``data`` entry holds a serialized object, as SB3 writes them."""
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>",
                             ":serialized:": base64.b64encode(evil_pickle(marker)).decode()}}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.9.2")


def tiny_weights(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    from handfoot_env.actions import NUM_ACTIONS
    from handfoot_env.observation import observation_scale
    scale = observation_scale(4, 2).astype(np.float32)
    n = scale.shape[0]
    return {"scale": scale, "visible": n, "activation": "tanh",
            "layers": [(rng.normal(size=(8, n)).astype(np.float32), np.zeros(8, np.float32))],
            "out": (rng.normal(size=(NUM_ACTIONS, 8)).astype(np.float32), np.zeros(NUM_ACTIONS, np.float32))}


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)


# ----------------------------------------------------------------------------- SB3 model.zip
def test_model_zip_without_actor_is_refused_and_runs_nothing(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    d = tmp_path / "ck"
    d.mkdir()
    evil_model_zip(d / "model.zip", marker)
    for spec in (f"policy:{d}", f"policy:{d / 'model.zip'}", f"policy:{d / 'model'}"):
        with pytest.raises(UntrustedFileError) as e:
            make_agent(spec, 0)
        msg = str(e.value)
        assert "model.zip" in msg and TRUST_ENV + "=1" in msg and "\n" not in msg
    assert not marker.exists()
    # the switch lets it through: SB3 unpickles the entry (and then fails on the fake zip)
    monkeypatch.setenv(TRUST_ENV, "1")
    with pytest.raises(Exception):
        make_agent(f"policy:{d}", 0)
    assert marker.exists()


def test_actor_npz_next_to_a_model_zip_is_read_without_pickle(tmp_path):
    marker = tmp_path / "pwned"
    d = tmp_path / "ck"
    d.mkdir()
    evil_model_zip(d / "model.zip", marker)
    save_actor(tiny_weights(), d / "actor.npz")
    agent = make_agent(f"policy:{d}", 0)
    assert agent.policy.visible == tiny_weights()["visible"]
    assert not marker.exists()


def test_actor_npz_with_an_object_array_is_not_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    arrays = {k: v for k, v in tiny_weights().items() if k in ("scale",)}
    arrays["visible"] = np.array([_Payload(marker)], dtype=object)
    with open(tmp_path / "actor.npz", "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(ValueError):
        make_agent(f"policy:{tmp_path / 'actor.npz'}", 0)
    assert not marker.exists()


# ----------------------------------------------------------------------------- RLlib checkpoints
def test_rllib_module_state_and_ctor_args_are_refused_and_run_nothing(tmp_path, monkeypatch):
    marker, marker2 = tmp_path / "pwned", tmp_path / "pwned2"
    d = tmp_path / "module"
    d.mkdir()
    (d / "module_state.pkl").write_bytes(evil_pickle(marker))
    (d / "class_and_ctor_args.pkl").write_bytes(evil_pickle(marker2))
    for spec in (f"rllib:{d}", f"rllib:{tmp_path}@module", f"rllib:{d}?sample"):
        with pytest.raises(UntrustedFileError, match="module_state.pkl"):
            make_agent(spec, 0)
    assert not marker.exists() and not marker2.exists()
    monkeypatch.setenv(TRUST_ENV, "1")
    with pytest.raises(Exception):
        load_module_weights(d)
    assert marker.exists()


def test_rllib_run_plays_its_actor_npz_without_pickle(tmp_path):
    """A run of the RLlib backend: rllib:RUN and rllib:RUN/final read actor.npz, never the pickles."""
    marker = tmp_path / "pwned"
    run = tmp_path / "run"
    mod = run / "final" / "algorithm" / "learner_group" / "learner" / "rl_module" / "learner"
    snap = mod.parent / "snapshot_0"
    for d in (mod, snap):
        d.mkdir(parents=True)
        (d / "module_state.pkl").write_bytes(evil_pickle(marker))
    save_actor(tiny_weights(3), run / "final" / "actor.npz")
    for spec in (f"rllib:{run}", f"rllib:{run / 'final'}"):
        agent = make_agent(spec, 0)
        np.testing.assert_array_equal(agent.policy.layers[-1][1], tiny_weights(3)["out"][1])
    assert not marker.exists()
    # another module than the learner has no actor.npz: the pickle, refused
    with pytest.raises(UntrustedFileError):
        make_agent(f"rllib:{run / 'final'}@snapshot_0", 0)


# ----------------------------------------------------------------------------- latest.txt
@pytest.mark.parametrize("content", ["../../outside", "/abs/outside", "..", "a/../../outside", "link"])
def test_latest_txt_must_name_a_folder_inside_checkpoints(tmp_path, content):
    outside = tmp_path / "outside"
    outside.mkdir()
    save_actor(tiny_weights(), outside / "actor.npz")
    (outside / "trainer.json").write_text("{}")
    run = tmp_path / "runs" / "r"
    ck = run / "checkpoints"
    ck.mkdir(parents=True)
    (ck / "link").symlink_to(outside, target_is_directory=True)
    if content.startswith("/abs"):
        content = str(outside)
    (ck / "latest.txt").write_text(content + "\n")
    with pytest.raises(UnsafePathError, match="latest.txt"):
        latest_checkpoint(ck)
    with pytest.raises(UnsafePathError):
        resolve_policy_path(str(run))
    with pytest.raises(ValueError, match="latest.txt"):
        make_agent(f"policy:{run}", 0)
    with pytest.raises(ValueError, match="latest.txt"):
        make_agent(f"rllib:{run}", 0)
    with pytest.raises(ConfigError, match="latest.txt"):
        resolve_resume(run)


def test_latest_txt_with_a_plain_name_is_followed(tmp_path):
    ck = tmp_path / "checkpoints"
    (ck / "step_000000128").mkdir(parents=True)
    save_actor(tiny_weights(), ck / "step_000000128" / "actor.npz")
    (ck / "latest.txt").write_text("step_000000128\n")
    assert latest_checkpoint(ck) == ck / "step_000000128"
    assert resolve_policy_path(str(tmp_path)) == ck / "step_000000128" / "actor.npz"
    assert latest_checkpoint(tmp_path / "nothing") is None


# ----------------------------------------------------------------------------- resume
def _fake_checkpoint(run_dir: Path, name: str = "step_000000128", **trainer) -> Path:
    from experiments.training.config import TrainConfig
    ck = run_dir / "checkpoints" / name
    ck.mkdir(parents=True)
    (run_dir / "run.json").write_text("{}")
    (run_dir / "checkpoints" / "latest.txt").write_text(name + "\n")
    data = {"num_timesteps": 128, "state": {}, "config": config_to_dict(TrainConfig(vec_env="dummy", n_envs=1)),
            **trainer}
    (ck / "trainer.json").write_text(json.dumps(data))
    return ck


def test_resume_output_goes_to_the_checkpoints_own_run_folder(tmp_path):
    from experiments.training.config import TrainConfig
    elsewhere = tmp_path / "elsewhere"
    run = tmp_path / "runs" / "r"
    ck = _fake_checkpoint(run, run=str(elsewhere))
    out, got = open_run(TrainConfig(), ck)
    assert out == run and got == ck and (run / "config.yaml").exists()
    assert not elsewhere.exists()
    # a checkpoint lying outside any run folder is refused
    lone = tmp_path / "lone" / "ck"
    lone.mkdir(parents=True)
    (lone / "trainer.json").write_text("{}")
    with pytest.raises(ConfigError, match="not inside a run folder"):
        open_run(TrainConfig(), lone)
    assert not (tmp_path / "lone" / "config.yaml").exists()


def test_old_checkpoint_with_snapshots_pkl_is_refused_and_runs_nothing(tmp_path, capsys, monkeypatch):
    from experiments.training.cli import train_main
    marker, marker2 = tmp_path / "pwned", tmp_path / "pwned2"
    run = tmp_path / "runs" / "r"
    ck = _fake_checkpoint(run)
    (ck / "snapshots.pkl").write_bytes(evil_pickle(marker))
    evil_model_zip(ck / "model.zip", marker2)
    assert train_main(["--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "snapshots.pkl" in err and TRUST_ENV in err
    assert not marker.exists() and not marker2.exists()
    # a folder with trainer.json but neither format: one clear line as well
    (ck / "snapshots.pkl").unlink()
    assert train_main(["--resume", str(ck), "--quiet"]) == 2
    assert "model_state.npz" in capsys.readouterr().err


def test_rllib_resume_needs_the_trust_switch(tmp_path):
    pytest.importorskip("ray.rllib")
    from experiments.config import config_from_dict
    from experiments.training.config import TrainConfig
    from experiments.training.trainer import train
    marker = tmp_path / "pwned"
    run = tmp_path / "runs" / "r"
    ck = _fake_checkpoint(run, backend="rllib")
    (ck / "algorithm").mkdir()
    (ck / "algorithm" / "class_and_ctor_args.pkl").write_bytes(evil_pickle(marker))
    cfg = config_from_dict(TrainConfig, {"backend": "rllib", "progress": False, "network": {"pi": [8], "vf": [8]},
                                         "evaluation": {"opponents": ["random"]}})
    with pytest.raises(ConfigError, match="HANDFOOT_TRUST_PICKLE=1"):
        train(cfg, resume=ck, quiet=True)
    assert not marker.exists()
