"""The Ray backend: RLlib env wrapper rewards, the masking RLModule, a tiny RLlib self-play
training whose checkpoint plays through the evaluation harness, and Ray-distributed
evaluation giving the same results as the local path.

Needs the ``ray`` extra (``pip install -e '.[dev,ray]'``); skipped without it.  The Ray
parts live in one test so that pytest-xdist never starts two Ray instances on a small
CI machine; Ray is local (``address="local", num_cpus=2``) and shut down at the end.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from agents.rllib_policy import LEARNER  # noqa: E402
from experiments.training.rllib_env import agent_to_module, spaces_for  # noqa: E402
from handfoot_env.env import raw_env  # noqa: E402


# ----------------------------------------------------------------------------- env wrapper
def _play_wrapper(opponent: str, seed: int, max_actions=None):
    """Play one game through the wrapper with uniformly random legal actions; record every AEC action."""
    from experiments.training.rllib_env import HandFootMultiAgentEnv
    env = HandFootMultiAgentEnv({"opponents": {opponent: 1.0}, "pool_size": 2, "seed": seed,
                                 "max_actions": max_actions})
    actions = []
    step = env.env.step

    def recording_step(a):
        actions.append(int(a))
        step(a)

    env.env.step = recording_step
    rng = np.random.default_rng(seed)
    obs, _ = env.reset()
    game_seed = env.game.seed
    totals = {}
    n_steps = 0
    while True:
        assert len(obs) == 1, "turn-based: exactly one agent observes between steps"
        (aid, o), = obs.items()
        assert aid in env.agents and o["action_mask"].any()
        a = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rew, term, trunc, _ = env.step({aid: a})
        n_steps += 1
        assert aid in rew, "the acting agent always gets a reward entry"
        for k, v in rew.items():
            totals[k] = totals.get(k, 0.0) + v
        if term["__all__"] or trunc["__all__"]:
            break
    return env, game_seed, actions, totals, n_steps, term["__all__"], trunc["__all__"]


@pytest.mark.parametrize("opponent", ["self", "self_snapshots", "greedy"])
def test_wrapper_rewards_are_exactly_the_aec_rewards(opponent):
    env, game_seed, actions, totals, n_steps, term, trunc = _play_wrapper(opponent, seed=11)
    assert term and not trunc
    # replay the same actions in a fresh AEC env and add up what it assigns to every seat
    ref = raw_env()
    ref.reset(seed=game_seed)
    expected = {a: 0.0 for a in ref.possible_agents}
    for a in actions:
        ref.step(a)
        for name in ref.possible_agents:
            expected[name] += ref.rewards[name]
    assert all(ref.terminations.values())
    seats = {aid: p for p, aid in enumerate(env.seat_ids) if aid is not None}
    assert set(totals) == set(seats)
    for aid, p in seats.items():
        assert totals[aid] == pytest.approx(expected[ref.possible_agents[p]], abs=1e-12)
    # partners get identical returns, and the module mapping follows the agent ids
    g = env.game
    for aid, p in seats.items():
        for aid2, q in seats.items():
            if g.team_of[p] == g.team_of[q]:
                assert totals[aid] == pytest.approx(totals[aid2], abs=1e-12)
    modules = {agent_to_module(a) for a in seats}
    if opponent == "self":
        assert modules == {LEARNER} and len(seats) == 4
    elif opponent == "self_snapshots":
        assert LEARNER in modules and len(modules) == 2 and len(seats) == 4
    else:  # heuristics are played inside the wrapper: only the learner team's seats are agents
        assert modules == {LEARNER} and len(seats) == 2 and n_steps < len(actions)
    assert env.last_result["opponent"] == opponent
    assert env.last_result["learner_return"] == pytest.approx(
        totals[next(a for a, p in seats.items() if g.team_of[p] == env.learner_team and "@" not in a)])


def test_wrapper_truncation_gives_every_agent_a_last_observation():
    env, _, actions, totals, _, term, trunc = _play_wrapper("self", seed=5, max_actions=60)
    assert trunc and not term and len(actions) == 60
    assert math.isnan(env.last_result["result"]) and env.last_result["truncated"]


def test_masked_module_never_puts_mass_on_illegal_actions():
    import torch
    from ray.rllib.core.columns import Columns

    from agents.rllib_policy import MASKED_LOGIT
    from experiments.training.rllib_module import MaskedActorCritic
    obs_space, act_space = spaces_for("pagat")
    full = MaskedActorCritic(observation_space=obs_space, action_space=act_space, inference_only=False,
                             model_config={"hidden": [32], "activation": "relu"})
    inf = MaskedActorCritic(observation_space=obs_space, action_space=act_space, inference_only=True,
                            model_config={"hidden": [32], "activation": "relu"})
    assert hasattr(full, "vf") and not hasattr(inf, "vf")     # env runners carry the actor only
    env = raw_env()
    env.reset(seed=3)
    batch_obs, masks = [], []
    for _ in range(6):
        o = env.observe(env.agent_selection)
        batch_obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(int(np.flatnonzero(o["action_mask"])[0]))
    batch = {Columns.OBS: {"observation": torch.as_tensor(np.stack(batch_obs)),
                           "action_mask": torch.as_tensor(np.stack(masks))}}
    mask = torch.as_tensor(np.stack(masks)).bool()
    for fwd in (full.forward_train, full.forward_exploration, full.forward_inference):
        logits = fwd(dict(batch))[Columns.ACTION_DIST_INPUTS]
        assert torch.all(logits[~mask] == MASKED_LOGIT)
        dist = full.get_train_action_dist_cls().from_logits(logits)
        for _ in range(20):
            a = dist.sample()
            assert bool(mask[torch.arange(len(a)), a].all())
        assert torch.isfinite(dist.entropy()).all() and torch.isfinite(dist.logp(a)).all()
    v = full.compute_values(dict(batch))
    assert v.shape == (6,)


# ----------------------------------------------------------------------------- Ray
def _results_without_timing(res):
    return {k: v for k, v in res.items() if k not in ("timing", "out")}


def test_rllib_training_checkpoint_agent_and_ray_evaluation(tmp_path, monkeypatch):
    import os
    import signal

    import ray

    from agents.registry import make_agent
    from experiments.evaluation.harness import EvalConfig, run_evaluation
    from experiments.ray_cluster import ray_task_runner
    from experiments.training.config import TrainConfig
    from experiments.config import config_from_dict
    from experiments.training.trainer import train

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    try:
        # -- a tiny RLlib self-play run through `handfoot train`'s Python API
        cfg = config_from_dict(TrainConfig, {
            "backend": "rllib", "name": "tiny", "seed": 1, "total_timesteps": 200, "max_actions": 400,
            "opponents": {"self": 1, "self_snapshots": 1, "greedy": 1},
            "snapshots": {"every_updates": 1, "keep": 2},
            "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
            "network": {"pi": [16], "vf": [16]},
            "evaluation": {"every_timesteps": 0, "deals": 1, "final_deals": 1, "workers": 1,
                           "opponents": ["random"]},
            "checkpoint_every": 100, "run_dir": str(tmp_path / "runs"), "progress": False,
            "rllib": {"num_env_runners": 1, "num_envs_per_env_runner": 2}})
        result = train(cfg, quiet=True)
        run = tmp_path / "runs" / "tiny-s1"
        assert result["run"] == str(run) and result["timesteps"] >= 200 and result["iterations"] >= 2
        for name in ("config.yaml", "run.json", "metrics.jsonl", "final_eval.json", "final/actor.npz",
                     "final/trainer.json", "final/algorithm/rllib_checkpoint.json", "best/actor.npz",
                     "checkpoints/latest.txt"):
            assert (run / name).exists(), name
        assert list((run / "tb").iterdir()), "TensorBoard event file"
        info = json.loads((run / "run.json").read_text())
        assert info["backend"] == "rllib" and info["versions"]["ray"] == "2.60.0" and info["seed"] == 1
        rollouts = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        assert [r["update"] for r in rollouts if r["kind"] == "rollout"][:2] == [1, 2]
        final_eval = json.loads((run / "final_eval.json").read_text())
        assert "random" in final_eval["per_opponent"]
        assert ray.is_initialized(), "a Ray the caller started is left running"

        # -- the checkpoint as an agent: the NumPy actor equals the trained torch module
        agent = make_agent(f"rllib:{run}", 0)
        assert agent.needs_observation
        import torch
        from ray.rllib.core.columns import Columns
        from ray.rllib.core.rl_module.rl_module import RLModule

        from agents.rllib_policy import find_module_dir
        module = RLModule.from_checkpoint(str(find_module_dir(run / "final")))
        env = raw_env()
        env.reset(seed=2)
        o = env.observe(env.agent_selection)
        out = module.forward_inference({Columns.OBS: {k: torch.as_tensor(v[None]) for k, v in o.items()}})
        legal = o["action_mask"].astype(bool)
        torch_logits = out[Columns.ACTION_DIST_INPUTS][0].numpy()[legal]
        final_agent = make_agent(f"rllib:{run / 'final'}", 0)
        np.testing.assert_allclose(final_agent.policy.logits(o["observation"])[legal], torch_logits,
                                   rtol=1e-4, atol=1e-5)

        # -- a match through the evaluation harness, local and as Ray tasks: identical results
        ecfg = dict(agents=[f"rllib:{run}", "random", "greedy"], games=3, seed=7, workers=1, plots=False,
                    progress=False)
        local = run_evaluation(EvalConfig(out=str(tmp_path / "ev_local"), **ecfg))
        runner, workers = ray_task_runner(None, 0)
        assert workers == 2
        ecfg["workers"] = workers            # finer chunks than the local run: results must not change
        remote = run_evaluation(EvalConfig(out=str(tmp_path / "ev_ray"), **ecfg), task_runner=runner)
        assert remote["games"] == local["games"] == 18
        assert _results_without_timing(remote) == _results_without_timing(local)
        assert ray.is_initialized()

        # -- the CLI: `handfoot evaluate ... --ray` (joins the running Ray, leaves it running)
        from experiments.evaluation.cli import evaluate_main
        args = ["--agents", f"rllib:{run}", "random", "greedy", "--games", "3", "--seed", "7", "--no-plots",
                "--no-progress", "--out", str(tmp_path / "ev_cli"), "--json"]
        assert evaluate_main(args + ["--ray"]) == 0
        cli = json.loads((tmp_path / "ev_cli" / "results.json").read_text())
        assert _results_without_timing(cli) == _results_without_timing(
            json.loads((tmp_path / "ev_local" / "results.json").read_text()))
        assert ray.is_initialized()

        # -- Ctrl-C between iterations writes a checkpoint; --resume (RLlib's pickles: the trust switch) goes on
        from experiments.config import ConfigError
        from experiments.training import rllib as rllib_backend
        from experiments.training.trainer import TrainingInterrupted
        cfg.total_timesteps = 600
        monkeypatch.delenv("HANDFOOT_TRUST_PICKLE", raising=False)
        with pytest.raises(ConfigError, match="HANDFOOT_TRUST_PICKLE=1"):
            train(cfg, resume=run, quiet=True)
        monkeypatch.setenv("HANDFOOT_TRUST_PICKLE", "1")
        iterate = rllib_backend.RLlibLearner.iterate

        def interrupting(self, remaining, snapshots):
            out = iterate(self, remaining, snapshots)
            os.kill(os.getpid(), signal.SIGINT)
            return out

        def latest_steps():
            latest = (run / "checkpoints" / "latest.txt").read_text().strip()
            return json.loads((run / "checkpoints" / latest / "trainer.json").read_text())["num_timesteps"]

        before = latest_steps()
        monkeypatch.setattr(rllib_backend.RLlibLearner, "iterate", interrupting)
        with pytest.raises(TrainingInterrupted, match="--resume"):
            train(cfg, resume=run, quiet=True)
        assert before < latest_steps() < 600       # one iteration past the checkpoint it resumed from
        monkeypatch.setattr(rllib_backend.RLlibLearner, "iterate", iterate)
        assert train(cfg, resume=run, quiet=True)["timesteps"] >= 600
        rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        steps = [r["timesteps"] for r in rows if r["kind"] == "rollout"]
        assert steps == sorted(set(steps)) and steps[-1] >= 600
    finally:
        ray.shutdown()
