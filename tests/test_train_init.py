"""``init`` of a training config: a run that starts from a policy's weights (the actor and its shape from
the policy, a fresh critic), and what is refused in one line."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch as th
import yaml

from agents.policy import actor_arrays, load_actor, save_actor
from agents.registry import policy_weights, shipped_weights
from experiments.apps.cli import main
from experiments.config import ConfigError, config_from_dict
from experiments.training.batched_ppo import ActorCritic, BatchedPPO, actor_weights
from experiments.training.config import TrainConfig, init_weights
from experiments.training.learner import RunContext
from experiments.training.trainer import train


def config_data(tmp_path: Path, **over) -> dict:
    """A tiny batched run (128 decisions, 4 games in the learner process, no evaluation), no network section."""
    data = {"name": "tiny", "seed": 3, "total_timesteps": 128, "backend": "batched",
            "opponents": {"random": 1.0}, "ppo": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
            "n_envs": 2, "batched": {"games": 4, "samplers": 0, "pipeline": False},
            "evaluation": {"every_timesteps": 0, "final_deals": 0}, "checkpoint_every": 0,
            "run_dir": str(tmp_path / "runs"), "progress": False}
    data.update(over)
    return data


def small_policy(tmp_path: Path, hidden=(24, 12), activation: str = "relu", seed: int = 5) -> Path:
    """An ``actor.npz`` of a network of shape ``hidden`` with random weights (a policy: 705 logits)."""
    th.manual_seed(seed)
    weights = actor_weights(ActorCritic(4, 2, list(hidden), [8], activation))
    path = tmp_path / f"policy-{seed}" / "actor.npz"
    path.parent.mkdir(parents=True)
    save_actor(weights, path)
    return path


def same_arrays(a: dict, b: dict) -> bool:
    x, y = actor_arrays(a), actor_arrays(b)
    return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


def learner_for(cfg: TrainConfig) -> BatchedPPO:
    learner = BatchedPPO(cfg)
    learner.setup(RunContext(seed=cfg.seed), None)
    return learner


@pytest.mark.parametrize("form", ["path", "folder", "policy"])
def test_the_actor_is_the_policys_and_the_critic_starts_fresh(tmp_path, form):
    path = small_policy(tmp_path)
    spec = {"path": str(path), "folder": str(path.parent), "policy": f"policy:{path.parent}?sample"}[form]
    cfg = config_from_dict(TrainConfig, config_data(tmp_path, init=spec))
    init_weights(cfg)
    assert cfg.network.pi == [24, 12] and cfg.network.activation == "relu"   # the policy's shape, not the default
    learner = learner_for(cfg)
    assert same_arrays(learner.actor(), load_actor(path))
    # the critic is the one a run of the same shape and seed without init starts with
    fresh = learner_for(config_from_dict(TrainConfig, config_data(tmp_path, network={"pi": [24, 12],
                                                                                     "activation": "relu"})))
    assert not same_arrays(fresh.actor(), learner.actor())
    for name in ("critic", "value_head"):
        ours, theirs = getattr(learner.model, name).state_dict(), getattr(fresh.model, name).state_dict()
        assert all(th.equal(ours[k], theirs[k]) for k in ours)


def test_champion_by_name_gives_its_shape():
    cfg = config_from_dict(TrainConfig, {"backend": "batched", "init": "champion"})
    weights = init_weights(cfg)
    assert cfg.network.pi == [512, 256] and cfg.network.activation == "tanh"
    assert same_arrays(weights, load_actor(shipped_weights("champion")))
    assert same_arrays(policy_weights("champion"), weights)


def test_a_run_from_a_policy_trains_writes_its_shape_and_resumes_without_it(tmp_path):
    path = small_policy(tmp_path)
    cfg = config_from_dict(TrainConfig, config_data(tmp_path, init=str(path), total_timesteps=64,
                                                    checkpoint_every=64))
    first = train(cfg, quiet=True)
    run = Path(first["run"])
    written = yaml.safe_load((run / "config.yaml").read_text())
    assert written["init"] == str(path) and written["network"]["pi"] == [24, 12]
    trained = load_actor(run / "final" / "actor.npz")
    assert [np.shape(w) for w, _ in trained["layers"]] == [(24, 170), (12, 24)]
    assert not same_arrays(trained, load_actor(path))                  # it learned from there
    path.unlink()                                                        # a resumed run has its own weights
    assert main(["train", "--resume", str(run), "--set", "total_timesteps=128", "--quiet"]) == 0
    assert json.loads((run / "final" / "trainer.json").read_text())["num_timesteps"] >= 128


def test_an_explicit_network_must_fit_the_policy(tmp_path):
    path = small_policy(tmp_path)
    fits = config_from_dict(TrainConfig, config_data(tmp_path, init=str(path),
                                                     network={"pi": [24, 12], "vf": [16]}))
    init_weights(fits)
    assert fits.network.vf == [16]                                       # the critic's shape stays the config's
    for network, words in (({"pi": [256, 256]}, r"network.pi: \[256, 256\] does not fit init"),
                           ({"activation": "tanh"}, "network.activation: tanh does not fit init")):
        cfg = config_from_dict(TrainConfig, config_data(tmp_path, init=str(path), network=network))
        with pytest.raises(ConfigError, match=words):
            init_weights(cfg)


def test_what_is_not_a_policy_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    from experiments.training.dmc import QNetwork, q_weights
    q = tmp_path / "q" / "actor.npz"
    q.parent.mkdir()
    save_actor(q_weights(QNetwork(4, 2, [8], "relu")), q)
    for spec, words in (("strategic", "is an agent without network weights"),
                        ("search", "is an agent without network weights"),
                        ("nobody", "no such file or folder, nor a shipped policy"),
                        (str(tmp_path / "notes.txt"), "is neither an actor.npz"),
                        (str(tmp_path / "other.npz"), "not a handfoot actor"),
                        (f"policy:{tmp_path / 'missing'}", "does not exist"),
                        (str(q), "is an action-value network")):
        cfg = config_from_dict(TrainConfig, config_data(tmp_path, init=spec))
        with pytest.raises(ConfigError, match="^init: .*" + words.replace(".", r"\.")):
            init_weights(cfg)


def test_the_six_player_rules_refuse_a_four_player_policy(tmp_path):
    cfg = config_from_dict(TrainConfig, config_data(tmp_path, init="champion", rules="six_player"))
    with pytest.raises(ConfigError, match="reads 170 observation entries, but the rules 'six_player'"):
        init_weights(cfg)


@pytest.mark.parametrize("backend", ["sb3", "dmc", "rllib"])
def test_other_backends_refuse_init_in_one_line(tmp_path, backend):
    with pytest.raises(ConfigError, match=f"init: .* backend: batched only, not {backend}"):
        config_from_dict(TrainConfig, config_data(tmp_path, init="champion", backend=backend))


def test_the_command_line_refuses_in_one_line_and_writes_nothing(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(config_data(tmp_path, init="strategic")))
    assert main(["train", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot train: error: init: 'strategic' is an agent without network weights") \
        and "\n" not in err
    assert not (tmp_path / "runs").exists()
    assert main(["train", str(cfg), "--set", "init=champion", "--set", "network.pi=[64]"]) == 2
    assert "network.pi: [64] does not fit init 'champion'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
