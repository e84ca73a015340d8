"""Self-play training: per-seat rewards, determinism, checkpoints, resume, the train/experiment pipeline.

Tiny real runs (DummyVecEnv, n_steps 64, tiny networks), no mocks.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch as th

from agents.policy import NumpyPolicy, load_policy_agent
from agents.sb3_model import extract_weights
from experiments.training import sb3, sb3_env as selfplay
from handfoot_env.observation import observation_scale
from experiments.config import ConfigError, config_from_dict
from experiments.training.config import TrainConfig
from experiments.training.trainer import train
from experiments.training.cli import train_main
from handfoot_env import handfoot_v0
from handfoot_env.observation import action_mask, encode_observation
from handfoot_env.view import seat_view


def tiny_config(tmp_path: Path, **over) -> TrainConfig:
    data = {
        "name": "tiny", "seed": 3, "total_timesteps": 128, "n_envs": 2, "vec_env": "dummy",
        "opponents": {"self_snapshots": 0.5, "random": 0.5},
        "snapshots": {"every_updates": 1, "keep": 2},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "network": {"pi": [32], "vf": [32]},
        "evaluation": {"every_timesteps": 128, "deals": 2, "final_deals": 2, "workers": 1},
        "checkpoint_every": 128, "run_dir": str(tmp_path / "runs"), "progress": False,
    }
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k] = {**data[k], **v}
        else:
            data[k] = v
    return config_from_dict(TrainConfig, data)


def random_weights(seed: int = 0, hidden=(32,)) -> dict:
    """Actor weights of a freshly initialised HandFootPolicy (no training needed)."""
    from sb3_contrib import MaskablePPO
    venv = selfplay.make_vec_env({"opponents": {"random": 1.0}}, 1, seed, subprocess=False)
    scale = observation_scale(4, 2)
    model = MaskablePPO(sb3.HandFootPolicy, venv, n_steps=16, batch_size=16, seed=seed, device="cpu",
                        policy_kwargs=dict(net_arch=dict(pi=list(hidden), vf=list(hidden)),
                                           features_extractor_kwargs=dict(scale=scale.tolist())))
    w = extract_weights(model.policy)
    venv.close()
    return w


# ------------------------------------------------------------------------------ per-seat rewards
def _aec_segments(game_seed: int, history, seat: int, reward: str):
    """Replay ``history`` in the AEC env; the learner seat's rewards summed between its own decisions."""
    env = handfoot_v0.raw_env(reward=reward)
    env.reset(seed=game_seed)
    name = f"player_{seat}"
    segments, acc, decisions = [], 0.0, 0
    for p, a in history:
        assert env.agent_selection == f"player_{p}"
        if p == seat:
            if decisions > 0:
                segments.append(acc)
                acc = 0.0
            decisions += 1
        env.step(a)
        acc += env.rewards[name]
    segments.append(acc)
    return segments, env


@pytest.mark.parametrize("seat,opponent,reward", [(0, "random", "round_score_diff"), (1, "greedy", "round_score_diff"),
                                                  (3, "self", "round_score_diff"), (2, "random", "game_win")])
def test_each_seat_gets_exactly_its_own_rewards(seat, opponent, reward):
    env = selfplay.SeatEnv(opponents={opponent: 1.0}, reward=reward, seed=11)
    env.set_learner(random_weights(1))
    obs, info = env.reset(seed=5, options={"seat": seat})
    assert info["seat"] == seat and info["opponent"] == opponent
    rng = np.random.default_rng(0)
    rewards, done, steps = [], False, 0
    while not done:
        assert env.game.current == seat
        np.testing.assert_array_equal(obs["action_mask"], action_mask(env.game, seat))
        np.testing.assert_array_equal(obs["observation"], encode_observation(env.game, seat))
        legal = np.flatnonzero(obs["action_mask"])
        obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
        rewards.append(r)
        done = term or trunc
        steps += 1
    assert term and not trunc
    segments, _ = _aec_segments(env.game.seed, env.game.history, seat, reward)
    assert len(segments) == len(rewards) == steps
    np.testing.assert_allclose(rewards, segments, rtol=0, atol=1e-9)
    # the episode return is the seat's team result, never the opponents'
    if reward == "round_score_diff":
        team = env.game.team_of[seat]
        diff = sum(rs[team] - rs[1 - team] for rs in env.game.round_scores) * 0.001
        assert sum(rewards) == pytest.approx(diff, abs=1e-9)
    else:
        w = env.game.winner
        assert sum(rewards) == (0.0 if w is None else (1.0 if w == env.game.team_of[seat] else -1.0))
    assert info["selfplay"]["seat"] == seat


def test_seat_env_rejects_illegal_and_stale_actions_and_counts_every_action():
    """step() applies a listed action directly; anything else goes through Game.step's checks."""
    from handfoot_env.engine import IllegalActionError
    env = selfplay.SeatEnv(opponents={"random": 1.0}, seed=3)
    env.set_learner(random_weights(3))
    obs, _ = env.reset(seed=1, options={"seat": 0})
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    before = env.game.action_count
    env.game.step(env.game.legal_actions()[0])      # the state moves on outside step(): the cached list is stale
    a = env.game.legal_actions()[0]
    env.step(a)                                      # validated by Game.step, still legal
    assert env.game.action_count > before + 1
    assert env.actions_applied == env.game.action_count - 1   # every action but the one made outside step()


def test_rewards_of_the_two_learner_seats_of_one_game_are_their_own():
    """Same deal, learner in seat 0 vs seat 1 (opposite teams): each gets its own team's signed rewards."""
    out = {}
    for seat in (0, 1):
        env = selfplay.SeatEnv(opponents={"self": 1.0}, seed=2)
        env.set_learner(random_weights(2))
        obs, _ = env.reset(seed=9, options={"seat": seat, "game_seed": 1234})
        rng = np.random.default_rng(seat)
        rs, done = [], False
        while not done:
            obs, r, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            rs.append(r)
            done = term or trunc
        seg, _ = _aec_segments(1234, env.game.history, seat, "round_score_diff")
        np.testing.assert_allclose(rs, seg, atol=1e-9)
        out[seat] = rs
    assert len(out[0]) > 10 and len(out[1]) > 10


def test_shaping_is_potential_based_and_off_by_default():
    env = selfplay.SeatEnv(opponents={"random": 1.0}, seed=4, shaping_books=0.1, shaping_points=0.5)
    base = selfplay.SeatEnv(opponents={"random": 1.0}, seed=4)
    assert base.shaping_books == 0.0 and base.shaping_points == 0.0
    w = random_weights(3)
    totals = []
    for e in (env, base):
        e.set_learner(w)
        obs, _ = e.reset(seed=1, options={"seat": 0})
        rng = np.random.default_rng(0)
        tot, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            tot += r
            done = term or trunc
        totals.append(tot)
    # the potential is zero at the start and at the end, so the shaping telescopes away
    assert totals[0] == pytest.approx(totals[1], abs=1e-6)


def test_numpy_actor_matches_torch_policy():
    from sb3_contrib import MaskablePPO
    venv = selfplay.make_vec_env({"opponents": {"random": 1.0}, "centralised_critic": True}, 2, 0, subprocess=False)
    from handfoot_env.observation import observation_size
    scale = observation_scale(4, 2, with_state=True)
    model = MaskablePPO(sb3.HandFootPolicy, venv, n_steps=16, batch_size=16, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=dict(pi=[16, 16], vf=[8]), features_extractor_kwargs=dict(
                            scale=scale.tolist(), actor_visible=observation_size(4, 2))))
    w = extract_weights(model.policy)
    venv.env_method("set_learner", w)
    obs = venv.reset()
    masks = venv.action_masks()
    pol = NumpyPolicy(w)
    with th.no_grad():
        acts, _ = model.predict(obs, deterministic=True, action_masks=masks)
        feats = model.policy.pi_features_extractor(th.as_tensor(obs))
        logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(feats)).numpy()
    np.testing.assert_allclose(pol.logits(obs), logits, atol=1e-5)
    assert [pol.act(o, m) for o, m in zip(obs, masks)] == list(acts)
    # the actor of a centralised critic never sees the state part
    obs2 = obs.copy()
    obs2[:, observation_size(4, 2):] = 123.0
    with th.no_grad():
        f2 = model.policy.pi_features_extractor(th.as_tensor(obs2))
    assert th.equal(f2, feats)
    venv.close()


# ------------------------------------------------------------------------------ training runs
def _params(run: Path, which: str = "final"):
    from sb3_contrib import MaskablePPO
    m = MaskablePPO.load(str(run / which / "model.zip"), device="cpu")
    return {k: v.clone() for k, v in m.policy.state_dict().items()}


def test_tiny_train_then_experiment_end_to_end(tmp_path, capsys):
    from experiments.apps.experiment import load_experiment_config, run_experiment
    cfg = load_experiment_config(None, data={
        "name": "e2e", "seed": 1, "run_dir": str(tmp_path / "runs"),
        "train": {"total_timesteps": 128, "n_envs": 2, "vec_env": "dummy", "progress": False,
                  "opponents": {"random": 0.5, "self_snapshots": 0.5},
                  "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "network": {"pi": [32], "vf": [32]},
                  "evaluation": {"every_timesteps": 128, "deals": 2, "final_deals": 0, "workers": 1}},
        "evaluation": {"opponents": ["random", "greedy"], "deals": 2, "model": "both", "workers": 1}})
    summary = run_experiment(cfg, quiet=True)
    run = Path(summary["run"])
    for name in ("config.yaml", "run.json", "metrics.jsonl", "learning_curve.png", "report.md", "experiment.json",
                 "best/actor.npz", "final/model.zip", "tb"):
        assert (run / name).exists(), name
    info = json.loads((run / "run.json").read_text())
    assert {"python", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "pettingzoo", "numpy"} <= set(
        info["versions"])
    assert "git_commit" in info and info["seed"] == 1
    res = summary["results"]
    assert set(res) == {"best", "final"}
    for m in res.values():
        assert set(m["per_opponent"]) == {"random", "greedy"}
        for r in m["per_opponent"].values():
            assert 0.0 <= r["win_rate"] <= 1.0 and len(r["win_rate_ci"]) == 2 and r["games"] == 4
        assert m["elo"] is not None
    report = (run / "report.md").read_text()
    assert "| best | random |" in report and "learning_curve.png" in report
    assert summary["timesteps"] == 128
    assert "Changed from the config file" not in report

    # the report made again from the run's files, after the folder moved, names the --set overrides
    from experiments.apps.experiment import experiment_main
    moved = tmp_path / "moved"
    shutil.copytree(run, moved)
    info["argv"] = ["handfoot", "experiment", "e2e.yaml", "--set", "evaluation.deals=2", "--set=seed=1",
                    "--set", "train.run_name=x"]
    (moved / "run.json").write_text(json.dumps(info))
    (moved / "report.md").unlink()
    assert experiment_main(["--report", str(moved)]) == 0
    again = (moved / "report.md").read_text()
    assert f"- run folder: `{moved}`" in again and "| best | random |" in again
    assert "Changed from the config file (`--set`; the description above is the file's): " \
           "`evaluation.deals=2`, `seed=1`." in again
    assert "(experiment_eval/final/winrate.png)" in again and (moved / "experiment_eval/final/winrate.png").exists()
    assert experiment_main(["--report", str(tmp_path / "runs")]) == 2
    assert "is not an experiment's run folder (no experiment.yaml)" in capsys.readouterr().err


def test_same_seed_gives_identical_first_update_and_metrics(tmp_path):
    runs = []
    for i in range(2):
        cfg = tiny_config(tmp_path / str(i), total_timesteps=256,
                          evaluation={"every_timesteps": 0, "final_deals": 0})
        runs.append(Path(train(cfg, quiet=True)["run"]))
    p0, p1 = _params(runs[0]), _params(runs[1])
    assert p0.keys() == p1.keys()
    for k in p0:
        assert th.equal(p0[k], p1[k]), k
    m0 = [json.loads(x) for x in (runs[0] / "metrics.jsonl").read_text().splitlines()]
    m1 = [json.loads(x) for x in (runs[1] / "metrics.jsonl").read_text().splitlines()]
    assert m0 == m1
    ups = [r for r in m0 if r["kind"] == "update"]
    assert [u["update"] for u in ups] == [1, 2] and all(np.isfinite(u["loss"]) for u in ups)
    # a different seed gives different parameters
    other = Path(train(tiny_config(tmp_path / "x", seed=4, evaluation={"every_timesteps": 0, "final_deals": 0}),
                       quiet=True)["run"])
    p2 = _params(other)
    assert any(not th.equal(p0[k], p2[k]) for k in p0)


def test_checkpoint_round_trip_gives_identical_actions(tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO
    run = Path(train(tiny_config(tmp_path, evaluation={"final_deals": 0}), quiet=True)["run"])
    model = MaskablePPO.load(str(run / "final" / "model.zip"), device="cpu")
    agent = load_policy_agent(str(run / "final"), seed=0)
    monkeypatch.setenv("HANDFOOT_TRUST_PICKLE", "1")          # a model.zip on its own is an SB3 pickle
    agent_zip = load_policy_agent(str(run / "final" / "model.zip"), seed=0)
    agent_run = load_policy_agent(str(run), seed=0)            # a run folder: its best checkpoint
    assert agent.needs_observation
    from handfoot_env.engine import Game
    g = Game("pagat")
    g.reset(seed=21)
    rng = np.random.default_rng(0)
    n = 0
    while g.phase != 3 and n < 300:
        p = g.current
        obs = {"observation": encode_observation(g, p), "action_mask": action_mask(g, p)}
        view = seat_view(g, p)
        a = agent.act(obs, view)
        assert a in view.legal_actions
        assert agent_zip.act(obs, view) == a
        with th.no_grad():
            ta, _ = model.predict(obs["observation"][None], deterministic=True,
                                  action_masks=obs["action_mask"][None].astype(bool))
        assert int(ta[0]) == a
        agent_run.act(obs, view)
        g.step(int(rng.choice(view.legal_actions)))
        n += 1
    # through the registry spec as well
    from agents.registry import make_agent
    b = make_agent(f"policy:{run / 'final'}", 5)
    g.reset(seed=21)
    obs = {"observation": encode_observation(g, g.current), "action_mask": action_mask(g, g.current)}
    assert b.act(obs, seat_view(g, g.current)) == agent.act(obs, seat_view(g, g.current))


def test_resume_continues_step_count_and_logs(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=128, checkpoint_every=128,
                      evaluation={"every_timesteps": 128, "final_deals": 0})
    first = train(cfg, quiet=True)
    run = Path(first["run"])
    assert first["timesteps"] == 128
    ck = run / "checkpoints" / "step_000000128"
    for name in ("trainer.json", "model_state.npz", "snapshots.npz", "actor.npz"):
        assert (ck / name).exists(), name
    assert not list(ck.glob("*.pkl"))
    rc = train_main(["--resume", str(run), "--set", "total_timesteps=384", "--quiet"])
    assert rc == 0
    state = json.loads((run / "final" / "trainer.json").read_text())
    assert state["num_timesteps"] == 384 and state["state"]["updates"] == 3
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["timesteps"] for r in recs if r["kind"] == "rollout"]
    assert steps == [128, 256, 384]
    evals = [r["timesteps"] for r in recs if r["kind"] == "eval"]
    assert evals == [128, 256, 384]
    # the same TensorBoard run folder holds both sessions' scalars, steps continuing
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(str(run / "tb"))
    ea.Reload()
    tb_steps = [e.step for e in ea.Scalars("eval/elo")]
    assert tb_steps == [128, 256, 384]
    info = json.loads((run / "run.json").read_text())
    assert len(info["sessions"]) == 2 and info["sessions"][1]["resumed_from"].endswith("step_000000128")


# ------------------------------------------------------------------------------ config errors
@pytest.mark.parametrize("content,needle", [
    ("total_timesteps: 100\nbogus_field: 1\n", "bogus_field"),
    ("ppo:\n  n_stepz: 3\n", "ppo.n_stepz"),
    ("n_envs: two\n", "n_envs"),
    ("network:\n  pi: [64, x]\n", "network.pi[1]"),
    ("opponents: {random: 1.0, nobody: 1.0}\n", "opponents.nobody"),
])
def test_bad_config_names_the_field_and_exits_2(tmp_path, capsys, content, needle):
    p = tmp_path / "bad.yaml"
    p.write_text(content)
    assert train_main([str(p)]) == 2
    err = capsys.readouterr().err
    assert needle in err
    from experiments.apps.experiment import experiment_main
    q = tmp_path / "bad_exp.yaml"
    q.write_text("train:\n" + "".join("  " + line + "\n" for line in content.splitlines()))
    assert experiment_main([str(q)]) == 2
    assert needle in capsys.readouterr().err


def test_shipped_configs_are_valid():
    from experiments.apps.experiment import load_experiment_config
    from experiments.training.config import load_train_config
    root = Path(__file__).resolve().parent.parent / "configs"
    trains = sorted((root / "train").glob("*.yaml"))
    exps = sorted((root / "experiments").glob("*.yaml"))
    assert trains and exps
    for p in trains:
        load_train_config(p)
    for p in exps:
        load_experiment_config(str(p))
    with pytest.raises(ConfigError):
        config_from_dict(TrainConfig, {"evaluation": {"best_by": "win_rate:strategic"}})
