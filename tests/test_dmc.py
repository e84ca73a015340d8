"""``backend: dmc``: action features, the NumPy and torch action-value networks, epsilon-greedy
choice, Monte-Carlo targets across rollouts, determinism, checkpoints, resume and ``policy:PATH``.

Tiny real runs (a few games, tiny networks), no mocks.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch as th

from agents.policy import QPolicy, check_actor, load_actor, load_policy_agent, make_policy, save_actor
from agents.policy import TorchQPolicy as QActor
from experiments.training.sampler import Sampler
from experiments.training.sampler_group import merge_rollouts
from experiments.training.cli import train_main
from experiments.training.dmc import DMCLearner, EpisodeReturns, QNetwork, q_weights
from experiments.training.trainer import train
from handfoot_env import handfoot_v0
from handfoot_env.actions import (
    ACTION_FEATURE_NAMES,
    ACTION_FEATURES,
    NUM_ACTIONS,
    action_index,
)
from handfoot_env.observation import encode_observation
from tests.test_batched_ppo import RecordingSampler, tiny_config


def dmc_config(tmp_path, **over):
    base = {"backend": "dmc", "dmc": {"rollout": 128, "batch_size": 64}, "network": {"pi": [32, 16], "vf": [8]},
            "ppo": {"n_steps": 8}, "batched": {"games": 2, "samplers": 0, "pipeline": False}}
    for k, v in over.items():
        base[k] = {**base[k], **v} if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return tiny_config(tmp_path, **base)


def tiny_q(seed: int = 0, activation: str = "relu") -> dict:
    th.manual_seed(seed)
    net = QNetwork(4, 2, [24, 12], activation)
    for p in net.parameters():                     # spread the outputs so argmax ties are rare
        p.data.normal_(0.0, 0.3)
    return q_weights(net), net


def random_positions(n: int, seed: int = 0):
    """``n`` (observation, legal actions) pairs from random play."""
    env = handfoot_v0.env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.reset(seed=int(rng.integers(1 << 30)))
            continue
        legal = np.flatnonzero(obs["action_mask"])
        out.append((obs["observation"].copy(), legal))
        env.step(int(rng.choice(legal)))
    return out


# ------------------------------------------------------------------------------ action features
def test_action_features_tell_every_action_apart():
    f = ACTION_FEATURES
    assert f.shape == (NUM_ACTIONS, len(ACTION_FEATURE_NAMES))
    assert len(np.unique(f, axis=0)) == NUM_ACTIONS
    assert not f.flags.writeable
    col = {n: i for i, n in enumerate(ACTION_FEATURE_NAMES)}
    row = f[action_index("meld:7:2:1:0")]
    assert row[col["kind:meld"]] == 1 and row[col["card:7"]] == 1 and row[col["wild_meld"]] == 0
    assert np.isclose(row[col["naturals"]] * 7, 2) and np.isclose(row[col["twos"]] * 7, 1)
    assert np.isclose(row[col["cards"]] * 7, 3)
    row = f[action_index("discard:JK")]
    assert row[col["kind:discard"]] == 1 and row[col["card:JK"]] == 1 and row[col["cards"]] == 0
    assert f[action_index("meld:W:0:0:3")][col["wild_meld"]] == 1
    # every action has exactly one kind
    kinds = [i for n, i in col.items() if n.startswith("kind:")]
    assert (f[:, kinds].sum(1) == 1).all()


# ------------------------------------------------------------------------------ networks
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_numpy_q_policy_equals_the_torch_network(activation):
    w, net = tiny_q(1, activation)
    pol = QPolicy(w)
    for obs, legal in random_positions(20, seed=2):
        with th.no_grad():
            ref = net(th.from_numpy(np.repeat(obs[None], len(legal), 0)), th.from_numpy(legal)).numpy()
        np.testing.assert_allclose(pol.q_values(obs, legal), ref, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(pol.logits(obs)[legal], ref, rtol=1e-4, atol=1e-5)
        mask = np.zeros(NUM_ACTIONS, bool)
        mask[legal] = True
        assert pol.act(obs, mask) == legal[int(np.argmax(ref))]


def test_q_actor_is_greedy_at_epsilon_0_and_uniform_at_1():
    w, _ = tiny_q(2)
    pos = random_positions(40, seed=3)
    obs = np.stack([o for o, _ in pos])
    mask = np.zeros((len(pos), NUM_ACTIONS), bool)
    for j, (_, legal) in enumerate(pos):
        mask[j, legal] = True
    pol = QPolicy(w)
    greedy = [pol.act(o, m) for o, m in zip(obs, mask)]
    a, logp = QActor(w, 0.0).choose(obs, mask, np.random.default_rng(0))
    assert a.tolist() == greedy and (logp == 0).all()
    # epsilon 1: always legal, and spread over the legal actions of a wide row
    wide = int(np.argmax(mask.sum(1)))
    seen = []
    for s in range(300):
        a, _ = QActor(w, 1.0).choose(obs, mask, np.random.default_rng(s))
        assert mask[np.arange(len(a)), a].all()
        seen.append(int(a[wide]))
    assert len(set(seen)) == int(mask[wide].sum()) or len(set(seen)) >= 5


def test_q_actor_breaks_ties_by_the_lowest_action_id():
    w, _ = tiny_q(3)
    w = dict(w, out=(np.zeros_like(w["out"][0]), np.zeros_like(w["out"][1])))   # Q = 0 everywhere
    obs, legal = random_positions(1, seed=4)[0]
    mask = np.zeros((1, NUM_ACTIONS), bool)
    mask[0, legal] = True
    a, _ = QActor(w).choose(obs[None], mask, np.random.default_rng(0))
    assert a[0] == legal.min()


def test_q_actor_refuses_non_finite_values_in_one_line():
    w, _ = tiny_q(7)
    w = dict(w, out=(w["out"][0], np.array([np.nan], np.float32)))
    obs, legal = random_positions(1, seed=6)[0]
    mask = np.zeros((1, NUM_ACTIONS), bool)
    mask[0, legal] = True
    with pytest.raises(ValueError, match="non-finite Q values"):
        QActor(w).choose(obs[None], mask, np.random.default_rng(0))


def test_q_actor_files_round_trip_and_are_checked(tmp_path):
    w, _ = tiny_q(4)
    save_actor(w, tmp_path / "actor.npz")
    back = load_actor(tmp_path / "actor.npz")
    assert isinstance(make_policy(back), QPolicy)
    obs, legal = random_positions(1, seed=5)[0]
    np.testing.assert_array_equal(QPolicy(back).q_values(obs, legal), QPolicy(w).q_values(obs, legal))
    with pytest.raises(ValueError, match="action features"):
        check_actor(dict(w, features=np.zeros((7, 3), np.float32)))
    with pytest.raises(ValueError, match="expected one"):
        check_actor(dict(w, out=(np.zeros((2, 12), np.float32), np.zeros(2, np.float32))))
    with pytest.raises(ValueError, match="unknown network kind"):
        check_actor(dict(w, kind="v"))
    with pytest.raises(ValueError, match="one integer"):
        check_actor(dict(w, visible=np.array([3, 4])))
    with pytest.raises(ValueError, match="input scale"):
        check_actor(dict(w, scale=np.full_like(w["scale"], np.inf)))
    with pytest.raises(ValueError, match="non-finite"):
        w0, b0 = w["layers"][0]
        check_actor(dict(w, layers=[(np.full_like(w0, np.nan), b0)] + list(w["layers"][1:])))
    (tmp_path / "garbage.npz").write_bytes(b"PK\x03\x04 not a zip archive")
    (tmp_path / "cut.npz").write_bytes((tmp_path / "actor.npz").read_bytes()[:200])
    for bad in ("garbage.npz", "cut.npz"):
        with pytest.raises(ValueError, match=f"{bad}: not a readable .npz file"):
            load_actor(tmp_path / bad)


def test_q_policy_refuses_finite_weights_that_overflow():
    w, _ = tiny_q(4)
    (w1, b1), = w["layers"][1:]
    huge = dict(w, layers=[w["layers"][0], (w1, np.full_like(b1, 3e38))],
                out=(np.ones_like(w["out"][0]), np.zeros_like(w["out"][1])))
    check_actor(huge)                                   # every weight is finite...
    obs, legal = random_positions(1, seed=5)[0]
    mask = np.zeros(NUM_ACTIONS, bool)
    mask[legal] = True
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match="non-finite Q values"):
        QPolicy(huge).act(obs, mask, deterministic=True)          # ...but the values are not


# ------------------------------------------------------------------------------ Monte-Carlo targets
def _run_sampler(sampler: Sampler, targets: EpisodeReturns, rollouts: int, size: int):
    ready, finished = [], []
    for _ in range(rollouts):
        out = sampler.rollout(size)
        ready.append(targets.add(out))
        finished.extend(out["games"])
    keys = ("obs", "act", "ret", "trace")
    return {k: np.concatenate([r[k] for r in ready]) for k in keys}, finished


def seat_rewards_and_rounds(game_seed: int, history, seat: int):
    """Replay ``history`` in the AEC env: per decision of ``seat``, the rewards the env gives it up to
    its next decision, and the rounds finished before the decision."""
    env = handfoot_v0.raw_env(reward="round_score_diff")
    env.reset(seed=game_seed)
    name = f"player_{seat}"
    segments, rounds = [], []
    for p, a in history:
        if p == seat:
            segments.append(0.0)
            rounds.append(len(env.game.round_scores))
        env.step(a)
        if segments:
            segments[-1] += env.rewards[name]
    return np.asarray(segments), np.asarray(rounds)


def to_go(segments: np.ndarray, rounds: np.ndarray, per_round: bool) -> np.ndarray:
    out = np.zeros(len(segments))
    g = 0.0
    for j in range(len(segments) - 1, -1, -1):
        if per_round and j + 1 < len(segments) and rounds[j + 1] != rounds[j]:
            g = 0.0
        g += segments[j]
        out[j] = g
    return out


def check_targets(ready, finished, histories, horizon) -> int:
    """Compare every complete game's targets with the AEC env's rewards; the number of seats checked."""
    complete = [g for g in finished if not g["truncated"]]
    assert len(complete) >= 2
    checked = 0
    for g in complete:
        hist = histories[(g["slot"], g["episode"])]
        seats = sorted({int(t[2]) for t in ready["trace"] if t[0] == g["slot"] and t[1] == g["episode"]})
        assert len(seats) == 2
        for seat in seats:
            rows = np.flatnonzero((ready["trace"][:, 0] == g["slot"]) & (ready["trace"][:, 1] == g["episode"])
                                  & (ready["trace"][:, 2] == seat))
            seg, rounds = seat_rewards_and_rounds(g["seed"], hist, seat)
            assert len(set(rounds.tolist())) >= 2            # the game has several rounds: the cut matters
            assert ready["trace"][rows, 3].tolist() == list(range(len(seg)))
            np.testing.assert_allclose(ready["ret"][rows], to_go(seg, rounds, horizon == "round"),
                                       rtol=1e-5, atol=1e-5)
            # the recorded actions are the seat's, in order
            assert ready["act"][rows].tolist() == [a for p, a in hist if p == seat]
            checked += 1
    return checked


@pytest.mark.parametrize("horizon", ["game", "round"])
def test_returns_are_each_seats_rewards_to_the_end_of_its_round_or_game(horizon):
    """Against the AEC env: a decision's target is the sum of the rewards the env gives the seat
    from that decision to the end of its round (or game), whatever rollout the decision and the
    game's end fell in."""
    w, _ = tiny_q(5)
    s = RecordingSampler(rules="pagat", games=3, seed=11, opponents={"self": 0.5, "random": 0.5}, epsilon=0.3)
    s.set_policies(w)
    targets = EpisodeReturns(gamma=1.0, horizon=horizon)
    ready, finished = _run_sampler(s, targets, rollouts=40, size=97)
    assert check_targets(ready, finished, s.histories, horizon) >= 4


def test_rollouts_of_several_samplers_merged_keep_their_games_apart():
    """Two samplers of one group (as SamplerGroup runs them in two processes) number their game
    slots from their own offset; merged, every game's targets are still its own."""
    w, _ = tiny_q(6)
    parts = [RecordingSampler(rules="pagat", games=2, seed=seed, opponents={"self": 0.5, "random": 0.5},
                              epsilon=0.3, slot_offset=offset) for seed, offset in ((21, 0), (22, 2))]
    for s in parts:
        s.set_policies(w)
    targets = EpisodeReturns(gamma=1.0, horizon="round")
    ready, finished = [], []
    for _ in range(40):
        outs = [s.rollout(53) for s in parts]
        ready.append(targets.add(merge_rollouts(outs)))
        finished.extend(g for o in outs for g in o["games"])
    ready = {k: np.concatenate([r[k] for r in ready]) for k in ("obs", "act", "ret", "trace")}
    assert {g["slot"] for g in finished} == {0, 1, 2, 3}
    assert set(ready["trace"][:, 0].tolist()) <= {0, 1, 2, 3}
    histories = {**parts[0].histories, **parts[1].histories}
    assert check_targets(ready, finished, histories, "round") >= 4


def test_discounted_returns_and_cut_games_are_dropped():
    t = EpisodeReturns(gamma=0.5, horizon="game")
    n_obs = 3

    def batch(rows):   # rows: (slot, ep, seat, n, rew, done, open)
        return {"obs": np.zeros((len(rows), n_obs), np.float32), "act": np.arange(len(rows)),
                "rew": np.array([r[4] for r in rows]), "done": np.array([r[5] for r in rows]),
                "open": np.array([r[6] for r in rows]), "trace": np.array([r[:4] for r in rows]),
                "round": np.zeros(len(rows), np.int64)}
    out = t.add(batch([(0, 1, 0, 1, 1.0, False, False), (0, 1, 0, 2, 0.0, False, True),   # 2 is open here
                       (1, 1, 2, 1, 5.0, False, False)]))
    assert len(out["act"]) == 0 and t.waiting == 2
    out = t.add(batch([(0, 1, 0, 2, 2.0, False, False), (0, 1, 0, 3, 4.0, True, False)]))
    np.testing.assert_allclose(out["ret"], [1 + 0.5 * (2 + 0.5 * 4), 2 + 0.5 * 4, 4])
    assert out["trace"][:, 3].tolist() == [1, 2, 3]
    # slot 1 starts its episode 2: the unfinished trajectory of episode 1 was cut, and goes
    out = t.add(batch([(1, 2, 2, 1, 1.0, True, False)]))
    assert out["ret"].tolist() == [1.0] and t.dropped == 1 and t.waiting == 0


# ------------------------------------------------------------------------------ runs
def _arrays(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("batched", [{"samplers": 0, "pipeline": False}, {"samplers": 1, "pipeline": True}])
def test_dmc_same_seed_gives_identical_weights_and_metrics(tmp_path, batched):
    outs = []
    for k in range(2):
        cfg = dmc_config(tmp_path / str(k), total_timesteps=1400, batched={"games": 2, **batched})
        res = train(cfg, quiet=True)
        run = Path(res["run"])
        rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        outs.append((_arrays(run / "final" / "actor.npz"), [r for r in rows if r["kind"] in ("update", "rollout")]))
    (a, ra), (b, rb) = outs
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert ra == rb
    assert any(r["kind"] == "update" and r["samples"] > 0 for r in ra)     # games ended and were learned from


def _learner_arrays(ck: Path) -> dict:
    with np.load(ck / "learner.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def test_dmc_checkpoints_resume_and_play_as_policy(tmp_path):
    cfg = dmc_config(tmp_path, total_timesteps=1400, checkpoint_every=700)
    res = train(cfg, quiet=True)
    run = Path(res["run"])
    tj = json.loads((run / "final" / "trainer.json").read_text())
    assert tj["backend"] == "dmc"
    info = json.loads((run / "run.json").read_text())
    assert info["sessions"][-1]["backend"] == "dmc"
    ck = max(p for p in (run / "checkpoints").iterdir() if p.is_dir())
    saved = _learner_arrays(ck)
    assert int(saved["n_updates"]) >= 1 and any(k.startswith("adam/") for k in saved)   # a real learner state
    learner = DMCLearner(cfg)                     # what resume loads is what was saved, Adam state included
    learner.setup(SimpleNamespace(seed=1, resume=ck), checkpoint={})
    learner.save(tmp_path)
    back = _learner_arrays(tmp_path)
    assert back.keys() == saved.keys() and all(np.array_equal(back[k], saved[k]) for k in saved)
    assert train_main(["--resume", str(ck), "--set", "total_timesteps=2800"]) == 0
    final = _learner_arrays(run / "final")
    assert json.loads((run / "final" / "trainer.json").read_text())["num_timesteps"] >= 2800
    assert int(final["n_updates"]) > int(saved["n_updates"])        # the count went on from the checkpoint
    agent = load_policy_agent(str(run))
    assert isinstance(agent.policy, QPolicy)
    env = handfoot_v0.env()
    env.reset(seed=9)
    agent.reset(0, env.unwrapped.game.rules, 9)
    for _ in range(300):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        a = agent.act(obs, None)
        assert obs["action_mask"][a]
        env.step(a)


def test_resuming_with_another_backend_is_one_error_and_leaves_the_run_alone(tmp_path, capsys):
    res = train(tiny_config(tmp_path, total_timesteps=256), quiet=True)          # backend: batched (PPO)
    run = Path(res["run"])
    before = (run / "metrics.jsonl").read_text()
    ck = sorted(p for p in (run / "checkpoints").iterdir() if p.is_dir())[0]
    capsys.readouterr()
    assert train_main(["--resume", str(ck), "--set", "backend=dmc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "checkpoint of backend: batched, the config says backend: dmc" in err[0]
    assert (run / "metrics.jsonl").read_text() == before


def test_a_learner_state_that_does_not_fit_the_network_is_one_error(tmp_path, capsys):
    res = train(tiny_config(tmp_path, total_timesteps=256), quiet=True)
    ck = sorted(p for p in (Path(res["run"]) / "checkpoints").iterdir() if p.is_dir())[0]
    capsys.readouterr()
    assert train_main(["--resume", str(ck), "--set", "network.pi=[48]"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "learner.npz' does not fit this config" in err[0]


@pytest.mark.parametrize("field,value,needle", [
    ("dmc", {"epsilon": 1.5}, "dmc.epsilon"),
    ("dmc", {"rollout": 0}, "dmc.rollout"),
    ("dmc", {"learning_rate": 0}, "dmc.learning_rate"),
    ("network", {"centralised_critic": True}, "network.centralised_critic"),
    ("shaping", {"books": 0.1}, "shaping"),
    ("dmc", {"horizon": "hand"}, "dmc.horizon"),
    ("reward", "game_win", "dmc.horizon: round needs reward: round_score_diff"),
])
def test_bad_dmc_settings_name_the_field(tmp_path, capsys, field, value, needle):
    cfg_path = tmp_path / "c.yaml"
    cfg_path.write_text(f"backend: dmc\n{field}: {json.dumps(value)}\nrun_dir: {tmp_path}\n")
    assert train_main([str(cfg_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_sampler_rows_observe_the_acting_seat_under_a_q_learner():
    w, _ = tiny_q(6)
    s = Sampler(rules="pagat", games=2, seed=3, opponents={"random": 1.0}, epsilon=0.0)
    s.set_policies(w)
    out = s.rollout(50)
    pol = QPolicy(w)
    for k in np.flatnonzero(~out["open"])[:30]:
        # greedy learner: every recorded action is the policy's choice on the recorded observation
        assert out["act"][k] == pol.act(out["obs"][k], out["mask"][k])
    assert out["obs"].shape[1] == len(encode_observation(s.games[0], 0))


def test_the_experiment_report_describes_the_learner_that_trained(tmp_path):
    from experiments.apps.experiment import training_setup
    dmc = "\n".join(training_setup(dmc_config(tmp_path)))
    ppo = "\n".join(training_setup(tiny_config(tmp_path)))
    assert "backend `dmc`" in dmc and "Deep Monte-Carlo: " in dmc and '"epsilon": 0.05' in dmc and "PPO:" not in dmc
    assert "backend `batched`" in ppo and "PPO: " in ppo and "Deep Monte-Carlo" not in ppo
