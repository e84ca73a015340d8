"""``backend: batched``: per-seat rewards against the AEC env, GAE, masked sampling, determinism,
checkpoints without pickle, resume, ``policy:PATH`` and the experiment pipeline.

Tiny real runs (a few games, tiny networks), no mocks.
"""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import torch as th

from agents.policy import load_policy_agent
from experiments.config import ConfigError
from experiments.runs import compare_runs
from experiments.training.config import TrainConfig
from experiments.training.trainer import train
from experiments.training.trainer import load_snapshots
from tests.test_train import _aec_segments, tiny_config as train_tiny_config
from experiments.training.cli import train_main
from experiments.training.batched_ppo import ActorCritic, actor_weights, gae
from experiments.training.learner import RunContext
from agents.policy import sample_masked
from experiments.training.sampler import Sampler
from handfoot_env.observation import action_mask, encode_observation
from handfoot_env.view import seat_view


def tiny_config(tmp_path: Path, **over) -> TrainConfig:
    """tests/test_train.py's tiny run on the batched backend (256 decisions, 6 games, no evaluation)."""
    data = {"total_timesteps": 256, "backend": "batched", "batched": {"games": 6, "samplers": 0, "pipeline": False},
            "ppo": {"n_epochs": 2}, "evaluation": {"every_timesteps": 0, "final_deals": 0}}
    for k, v in over.items():
        data[k] = {**data[k], **v} if isinstance(v, dict) and isinstance(data.get(k), dict) else v
    return train_tiny_config(tmp_path, **data)


def tiny_actor(seed: int = 0, centralised: bool = False) -> dict:
    th.manual_seed(seed)
    return actor_weights(ActorCritic(4, 2, [16], [16], centralised_critic=centralised))


# ------------------------------------------------------------------------------ per-seat rewards
class RecordingSampler(Sampler):
    """A Sampler that also keeps each finished game's action history (for the replay below)."""

    def _end_game(self, i: int, truncated: bool) -> None:
        self.histories = getattr(self, "histories", {})
        self.histories[(self.slot_offset + i, self.episode[i])] = list(self.games[i].history)
        super()._end_game(i, truncated)


def aec_segments(game_seed: int, history, seat: int, reward: str):
    """Replay ``history`` in the AEC env: ``seat``'s rewards summed from each of its decisions to its next."""
    return _aec_segments(game_seed, history, seat, reward)[0]


@pytest.mark.parametrize("reward,opponents", [
    ("round_score_diff", {"random": 1.0, "greedy": 1.0, "self": 1.0, "self_snapshots": 1.0}),
    ("game_win", {"random": 1.0, "self_snapshots": 1.0}),
])
def test_each_learning_seat_gets_exactly_its_aec_rewards(reward, opponents):
    """Both seats of the learning team, across rollout boundaries (carried rows), step by step."""
    s = RecordingSampler("pagat", games=4, seed=7, opponents=opponents, reward=reward)
    learner, snap = tiny_actor(1), tiny_actor(2)
    rows = {}                  # (slot, episode, seat) -> {decision number: (reward, done)}
    obs_checked = 0
    games = []
    first = True
    while len(games) < 6:
        out = s.rollout(300, learner, [snap] if first else None)
        first = False
        games += out["games"]
        for k in np.flatnonzero(~out["open"]):
            slot, ep, seat, step = out["trace"][k].tolist()
            key = (slot, ep, seat)
            assert step not in rows.setdefault(key, {}), "a decision trained twice"
            rows[key][step] = (float(out["rew"][k]), bool(out["done"][k]))
            assert out["mask"][k, out["act"][k]], "a sampled action outside the mask"
            assert np.isfinite(out["logp"][k]) and out["logp"][k] <= 0
    for g in games:
        history = s.histories[(g["slot"], g["episode"])]
        seats = sorted({p for p, _ in history if p % 2 == g["team"]})
        assert len(seats) == 2                       # both seats of the learning team produce samples
        for seat in seats:
            got = rows[(g["slot"], g["episode"], seat)]
            segments = aec_segments(g["seed"], history, seat, reward)
            assert sorted(got) == list(range(len(segments)))
            np.testing.assert_allclose([got[i][0] for i in range(len(segments))], segments, rtol=0, atol=1e-9)
            assert [got[i][1] for i in range(len(segments))] == [False] * (len(segments) - 1) + [True]
            obs_checked += 1
        assert g["returns"][0] == pytest.approx(sum(aec_segments(g["seed"], history, seats[0], reward)), abs=1e-9)
    assert obs_checked >= 12
    assert {g["opponent"] for g in games} <= set(opponents)


def test_rows_hold_the_seat_observation_and_mask():
    """Each row is the acting seat's own observation and legal mask, played in the same game."""
    from handfoot_env.engine import Game
    s = RecordingSampler("pagat", games=2, seed=3, opponents={"greedy": 1.0})
    w = tiny_actor(0)
    rows, games = {}, []
    while not games:
        out = s.rollout(300, w)
        games += out["games"]
        for k in np.flatnonzero(~out["open"]):
            rows[tuple(out["trace"][k].tolist())] = (out["obs"][k], out["mask"][k], int(out["act"][k]))
    g = games[0]
    history = s.histories[(g["slot"], g["episode"])]
    replay = Game("pagat")
    replay.reset(seed=g["seed"])
    counts = {0: 0, 1: 0, 2: 0, 3: 0}
    checked = 0
    for p, a in history:
        key = (g["slot"], g["episode"], p, counts[p])
        if p % 2 == g["team"]:
            obs, mask, act = rows[key]
            np.testing.assert_array_equal(obs, encode_observation(replay, p))
            np.testing.assert_array_equal(mask, action_mask(replay, p).astype(bool))
            assert act == a
            checked += 1
        else:
            assert key not in rows                  # heuristic seats give no samples
        counts[p] += 1
        replay.step(a)
    assert checked > 100


def test_truncated_games_are_bootstrapped_not_finished():
    s = Sampler("pagat", games=3, seed=1, opponents={"random": 1.0}, max_actions=60)
    out = s.rollout(200, tiny_actor(0))
    trunc = [g for g in out["games"] if g["truncated"]]
    assert trunc and all(g["result"] == 0.0 for g in trunc)
    assert not out["done"].any()                      # no game reached its end
    # every row that ends a truncated trajectory links to an open bootstrap row
    linked = out["next"][out["next"] >= 0]
    assert out["open"][linked].sum() > 0


# ------------------------------------------------------------------------------ GAE, sampling
def test_gae_follows_each_seat_trajectory():
    # two interleaved trajectories: A = rows 0, 2, 4 (done); B = rows 1, 3 then open row 5 (bootstrap)
    v = np.array([0.5, 0.1, 0.4, 0.2, 0.3, 0.7], np.float32)
    r = np.array([0.0, 1.0, 0.5, 0.0, 2.0, 9.0])
    done = np.array([False, False, False, False, True, False])
    nxt = np.array([2, 3, 4, 5, -1, -1])
    op = np.array([False, False, False, False, False, True])
    g, lam = 0.9, 0.8
    adv = gae(v, r, done, nxt, op, g, lam)
    a4 = 2.0 - 0.3
    a2 = 0.5 + g * 0.3 - 0.4 + g * lam * a4
    a0 = 0.0 + g * 0.4 - 0.5 + g * lam * a2
    a3 = 0.0 + g * 0.7 - 0.2                       # cut at the open row: its value, not its advantage
    a1 = 1.0 + g * 0.2 - 0.1 + g * lam * a3
    np.testing.assert_allclose(adv[:5], [a0, a1, a2, a3, a4], rtol=1e-6)
    assert adv[5] == 0.0


def test_masked_sampling_stays_legal_and_follows_the_softmax():
    rng = np.random.default_rng(0)
    logits = np.tile(np.linspace(-3, 3, 705, dtype=np.float32), (20000, 1))
    mask = np.zeros_like(logits, dtype=bool)
    legal = [3, 100, 704]
    mask[:, legal] = True
    a, logp = sample_masked(logits, mask, rng)
    assert set(np.unique(a)) <= set(legal)
    z = logits[0, legal].astype(np.float64)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    freq = np.array([(a == x).mean() for x in legal])
    np.testing.assert_allclose(freq, p, atol=0.02)
    np.testing.assert_allclose(np.exp(logp[:3]), p[[legal.index(x) for x in a[:3]]], rtol=1e-5)


# ------------------------------------------------------------------------------ training runs
def _arrays(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("batched", [{"samplers": 0, "pipeline": False}, {"samplers": 1, "pipeline": True}])
def test_same_seed_gives_identical_weights_and_metrics(tmp_path, batched):
    runs = [Path(train(tiny_config(tmp_path / str(i), batched=batched), quiet=True)["run"]) for i in range(2)]
    a0, a1 = _arrays(runs[0] / "final" / "learner.npz"), _arrays(runs[1] / "final" / "learner.npz")
    assert a0.keys() == a1.keys()
    for k in a0:
        np.testing.assert_array_equal(a0[k], a1[k], err_msg=k)
    m0 = (runs[0] / "metrics.jsonl").read_text()
    assert m0 == (runs[1] / "metrics.jsonl").read_text()
    ups = [json.loads(x) for x in m0.splitlines() if json.loads(x)["kind"] == "update"]
    assert len(ups) >= 2 and all(np.isfinite(u["loss"]) for u in ups)
    other = Path(train(tiny_config(tmp_path / "x", seed=4, batched=batched), quiet=True)["run"])
    a2 = _arrays(other / "final" / "learner.npz")
    assert any(not np.array_equal(a0[k], a2[k]) for k in a0 if k.startswith("model/"))
    # the check a user runs on a seed's run done again (scripts/same_run.py)
    same, line = compare_runs(runs[0], runs[1])
    assert same and "rows in common equal and the final actor's" in line, line
    same, line = compare_runs(runs[0], other)
    assert not same and line.startswith("the runs part at the "), line


def test_same_run_names_where_two_runs_part_and_refuses_a_folder_without_metrics(tmp_path, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("same_run", Path(__file__).parents[1] / "scripts" / "same_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    same_run = module.main
    a, b = tmp_path / "a", tmp_path / "b"
    rows = [{"kind": kind, "timesteps": 10 * u, "update": u, **({"loss": 0.5 / u} if kind == "update" else {})}
            for u in (1, 2, 3) for kind in ("rollout", "update")]
    for run, second in ((a, 0.25), (b, 0.2500001)):
        (run / "final").mkdir(parents=True)
        (run / "metrics.jsonl").write_text("".join(json.dumps({**r, "loss": second} if r.get("update") == 2 and
                                                              r["kind"] == "update" else r) + "\n" for r in rows))
        np.savez(run / "final" / "actor.npz", w=np.arange(3, dtype=np.float32))
    assert same_run([str(a), str(b)]) == 1
    assert capsys.readouterr().out.strip() == ("the runs part at the update row of update 2 (20 decisions): "
                                               "loss 0.25 against 0.2500001")
    thinned = tmp_path / "published"                      # a published copy: thinned rows, actor.npz on top
    thinned.mkdir()
    (thinned / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["update"] != 2))
    np.savez(thinned / "actor.npz", w=np.arange(3, dtype=np.float32))
    assert same_run([str(a), str(thinned)]) == 0
    assert "4 metrics rows in common equal and the final actor's 1 arrays" in capsys.readouterr().out
    np.savez(thinned / "actor.npz", w=np.arange(1, 4, dtype=np.float32))
    assert same_run([str(a), str(thinned)]) == 1
    assert "the final actors differ in w" in capsys.readouterr().out
    short = tmp_path / "stopped"                          # a run stopped after its second update
    (short / "final").mkdir(parents=True)
    (short / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:4]))
    np.savez(short / "final" / "actor.npz", w=np.arange(3, dtype=np.float32))
    assert same_run([str(a), str(short)]) == 1
    assert f"{short} stops at the update row of update 2 (20 decisions)" in capsys.readouterr().out
    nan = [tmp_path / "nan1", tmp_path / "nan2"]          # NaN equals NaN in a row
    for run in nan:
        (run / "final").mkdir(parents=True)
        (run / "metrics.jsonl").write_text(json.dumps({"kind": "update", "timesteps": 5, "update": 1,
                                                       "explained_variance": float("nan")}) + "\n")
        np.savez(run / "final" / "actor.npz", w=np.zeros(2, np.float32))
    assert same_run([str(p) for p in nan]) == 0
    capsys.readouterr()
    np.savez(nan[1] / "final" / "actor.npz", w=np.zeros(2, np.float64)[:1].view(np.float32))   # same bytes, other dtype
    np.save(nan[1] / "final" / "w.npy", np.zeros(2, np.float32))
    (nan[1] / "final" / "actor.npz").write_bytes((nan[1] / "final" / "w.npy").read_bytes())   # a bare .npy
    bad = {"no metrics": (tmp_path, None), "not JSON": (b, b"{oops\n"), "cannot be read": (b, b"\xff\xfe{}\n"),
           "repeats the update row of update 1": (b, (json.dumps(rows[1]) + "\n") * 2),
           "not a metrics row": (b, json.dumps({"kind": "update", "timesteps": "ten"}) + "\n")}
    for needle, (run, text) in bad.items():
        if text is not None:
            (run / "metrics.jsonl").write_bytes(text if isinstance(text, bytes) else text.encode())
        assert same_run([str(a), str(run)]) == 2, needle
        err = capsys.readouterr().err.strip()
        assert err.startswith("same_run: error: ") and needle in err and "\n" not in err, err
    assert same_run([str(nan[0]), str(nan[1])]) == 2
    err = capsys.readouterr().err.strip()
    assert "not an .npz archive of arrays" in err and "\n" not in err, err


def test_checkpoints_resume_and_policy_play_without_pickle(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=128, evaluation={"every_timesteps": 128, "deals": 2})
    first = train(cfg, quiet=True)
    run = Path(first["run"])
    ck = sorted((run / "checkpoints").glob("step_*"))[-1]
    assert (ck / "trainer.json").exists() and (ck / "learner.npz").exists() and (ck / "actor.npz").exists()
    assert not list(run.rglob("*.pkl")) and not list(run.rglob("*.zip"))
    for p in run.rglob("*.npz"):
        _arrays(p)                                   # every array file loads without pickle
    before = json.loads((run / "final" / "trainer.json").read_text())
    assert before["backend"] == "batched" and before["num_timesteps"] == first["timesteps"] >= 128
    rc = train_main(["--resume", str(run), "--set", "total_timesteps=400", "--quiet"])
    assert rc == 0
    state = json.loads((run / "final" / "trainer.json").read_text())
    assert len(load_snapshots(run / "final" / "snapshots.npz")) == 2      # snapshots.keep
    assert state["num_timesteps"] >= 400 and state["state"]["updates"] > before["state"]["updates"]
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["timesteps"] for r in recs if r["kind"] == "rollout"]
    assert steps == sorted(steps) and steps[-1] == state["num_timesteps"]
    assert len([r for r in recs if r["kind"] == "eval"]) >= 2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ea = EventAccumulator(str(run / "tb"))
    ea.Reload()
    for tag in ("eval/elo", "train/value_loss", "train/approx_kl", "selfplay/snapshots", "time/fps"):
        assert tag in ea.Tags()["scalars"], tag
    info = json.loads((run / "run.json").read_text())
    assert len(info["sessions"]) == 2 and info["sessions"][1]["resumed_from"]
    # policy:PATH plays the actor: the argmax of the torch learner's masked logits
    learner = _arrays(run / "final" / "learner.npz")
    model = ActorCritic(4, 2, [32], [32])
    model.load_state_dict({k[len("model/"):]: th.from_numpy(v) for k, v in learner.items() if k.startswith("model/")})
    agent = load_policy_agent(str(run / "final"), seed=0)
    agent_run = load_policy_agent(str(run), seed=0)
    from handfoot_env.engine import Game
    g = Game("pagat")
    g.reset(seed=21)
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = g.current
        obs = {"observation": encode_observation(g, p), "action_mask": action_mask(g, p)}
        view = seat_view(g, p)
        a = agent.act(obs, view)
        with th.no_grad():
            z = model.forward_logits(th.from_numpy(obs["observation"][None]))[0].numpy()
        legal = np.flatnonzero(obs["action_mask"])
        assert a == int(legal[np.argmax(z[legal])])
        agent_run.act(obs, view)
        g.step(int(rng.choice(view.legal_actions)))


def test_centralised_critic_and_shaping_run(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=128, opponents={"greedy": 1.0},
                      network={"pi": [16], "vf": [16], "centralised_critic": True},
                      shaping={"books": 0.1, "points": 0.5}, checkpoint_every=0)
    run = Path(train(cfg, quiet=True)["run"])
    w = load_policy_agent(str(run / "final")).policy
    assert w.visible == 170                     # the actor never sees the state part


def test_experiment_runs_on_the_batched_backend(tmp_path):
    from experiments.apps.experiment import load_experiment_config, run_experiment
    cfg = load_experiment_config(None, data={
        "name": "e2e", "seed": 1, "run_dir": str(tmp_path / "runs"),
        "train": {"backend": "batched", "batched": {"games": 4, "samplers": 0, "pipeline": False},
                  "total_timesteps": 128, "n_envs": 2, "progress": False,
                  "opponents": {"random": 0.5, "self_snapshots": 0.5},
                  "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "network": {"pi": [32], "vf": [32]},
                  "evaluation": {"every_timesteps": 128, "deals": 2, "final_deals": 0, "workers": 1}},
        "evaluation": {"opponents": ["random", "greedy"], "deals": 2, "model": "both", "workers": 1}})
    summary = run_experiment(cfg, quiet=True)
    run = Path(summary["run"])
    for name in ("report.md", "experiment.json", "best/actor.npz", "final/learner.npz", "learning_curve.png"):
        assert (run / name).exists(), name
    assert set(summary["results"]) == {"best", "final"}


@pytest.mark.parametrize("batched,needle", [
    ({"games": 0}, "batched.games"),
    ({"gamez": 3}, "batched.gamez"),
    ({"samplers": 0, "pipeline": True}, "batched.pipeline"),
    ({"pipeline": "yes"}, "batched.pipeline"),
])
def test_bad_batched_settings_name_the_field(tmp_path, capsys, batched, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        tiny_config(tmp_path, batched=batched)
    p = tmp_path / "bad.yaml"
    p.write_text(json.dumps({"backend": "batched", "batched": batched}))
    assert train_main([str(p)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_minibatch_columns_give_the_same_policy_and_gradients():
    """The update computes logits only for actions legal somewhere in the minibatch: same log-probabilities,
    entropy and gradients as the full 705 masked logits."""
    from experiments.training.batched_ppo import MASKED
    s = Sampler("pagat", games=8, seed=2, opponents={"random": 1.0})
    out = s.rollout(200, tiny_actor(0))
    obs, mask, act = (th.from_numpy(out[k][:64]) for k in ("obs", "mask", "act"))
    th.manual_seed(0)
    model = ActorCritic(4, 2, [16], [16])
    results = []
    for cols in (None, mask.any(0).nonzero().squeeze(1)):
        model.zero_grad()
        m = mask if cols is None else mask[:, cols]
        z = model.forward_logits(obs, cols).masked_fill(~m, MASKED)
        lp = th.log_softmax(z, 1)
        a = act if cols is None else th.searchsorted(cols, act)
        logp = lp.gather(1, a[:, None]).squeeze(1)
        ent = -(lp.exp() * lp).sum(1)
        (logp.mean() + 0.1 * ent.mean()).backward()
        results.append((logp.detach(), ent.detach(), model.logits.weight.grad.clone(),
                        model.actor[0].weight.grad.clone()))
    assert len(mask.any(0).nonzero()) < 705 / 2
    for x, y in zip(*results):
        assert th.allclose(x, y, atol=1e-6), (x - y).abs().max()


# ------------------------------------------------------------------------------ the critic beside the actor
@pytest.mark.parametrize("batched,over", [
    ({"samplers": 0, "pipeline": False}, {}),
    ({"samplers": 1, "pipeline": True}, {}),
    ({"samplers": 0, "pipeline": False}, {"ppo": {"n_epochs": 3, "target_kl": 0.002}}),
    ({"samplers": 0, "pipeline": False}, {"network": {"centralised_critic": True}}),
])
def test_the_critic_in_a_second_thread_changes_no_bit(tmp_path, batched, over):
    """``parallel_update`` runs the critic's passes in a helper thread: weights, optimiser state and
    metrics are those of the one-thread update, bit for bit (also with the target_kl early stop
    and the centralised critic)."""
    runs = [Path(train(tiny_config(tmp_path / str(on), batched={**batched, "parallel_update": on}, **over),
                       quiet=True)["run"]) for on in (False, True)]
    a0, a1 = _arrays(runs[0] / "final" / "learner.npz"), _arrays(runs[1] / "final" / "learner.npz")
    assert a0.keys() == a1.keys()
    for k in a0:
        np.testing.assert_array_equal(a0[k], a1[k], err_msg=k)
    assert (runs[0] / "metrics.jsonl").read_text() == (runs[1] / "metrics.jsonl").read_text()


def test_the_update_hands_the_critic_to_the_helper_unless_a_sampler_plays():
    from experiments.training.batched_ppo import BatchedPPO
    from experiments.training.config import load_train_config

    cfg = load_train_config(None, ["backend=batched", "network.pi=[16]", "network.vf=[16]", "ppo.batch_size=64",
                                   "ppo.n_epochs=2"])
    batch = Sampler("pagat", games=8, seed=3, opponents={"random": 1.0}).rollout(300, tiny_actor(0))
    results = []
    for busy in ([False], [True], [False, True]):        # free, playing, free every other minibatch
        learner = BatchedPPO(cfg)
        learner.setup(RunContext(seed=0), None)
        calls = []
        learner.sampler_busy = lambda b=busy: b[len(calls) % len(b)]
        beside = learner.beside
        learner.beside = lambda *a: calls.append(beside(*a)) or calls[-1]
        stats = learner.update(batch)
        assert len(calls) > 5 and [c is None for c in calls] == [busy[k % len(busy)] for k in range(len(calls))]
        grads = [p.grad for p in learner.model.parameters()]
        assert all(g is not None and not g.requires_grad and g.grad_fn is None for g in grads)
        results.append((stats, [p.detach().clone() for p in learner.model.parameters()]))
    for other in results[1:]:
        assert other[0] == results[0][0]
        assert all(th.equal(x, y) for x, y in zip(results[0][1], other[1]))


def test_a_sampler_group_is_busy_only_while_its_rollout_is_played():
    from experiments.training.sampler_group import SamplerGroup
    local = SamplerGroup(0, 4, seed=1, rules="pagat", opponents={"random": 1.0})
    local.request(50, tiny_actor(0), None)
    assert not local.busy()
    local.result()
    group = SamplerGroup(1, 4, seed=1, rules="pagat", opponents={"random": 1.0})
    try:
        assert not group.busy()
        os.kill(group.transport.procs[0].pid, signal.SIGSTOP)       # the sampler cannot finish until it is let go
        try:
            group.request(50, tiny_actor(0), None)     # (a few tens of kB: the pipe's buffer holds it)
            assert group.busy()
        finally:
            os.kill(group.transport.procs[0].pid, signal.SIGCONT)
        assert group.transport.conns[0].poll(60)
        assert not group.busy()
        group.result()
        assert not group.busy()
    finally:
        group.close()


@pytest.mark.parametrize("hidden,activation", [([16, 16], "tanh"), ([8], "relu"), ([], "tanh")])
def test_layer_by_layer_weight_gradients_are_autograds_bit_for_bit(hidden, activation):
    """The update computes the actor's weight gradients itself from each layer's output gradient
    (:meth:`ActorCritic.logits_by_layer`, :func:`hook_weight_gradients`), in the backward pass or in
    a helper thread: the same tensors as autograd through :meth:`ActorCritic.forward_logits`, for
    minibatches of any size, and no autograd history on them."""
    from experiments.training.batched_ppo import MASKED, helper_thread, hook_weight_gradients
    out = Sampler("pagat", games=8, seed=5, opponents={"random": 1.0}).rollout(300, tiny_actor(1))
    obs, mask = th.from_numpy(out["obs"]), th.from_numpy(out["mask"])
    th.manual_seed(2)
    model = ActorCritic(4, 2, hidden, [16], activation)
    rng = np.random.default_rng(0)
    for n in (64, 37, 1, 150):
        rows = th.from_numpy(rng.choice(len(obs), n, replace=False))
        cols = th.from_numpy(np.flatnonzero(out["mask"][rows.numpy()].any(0)))
        weights = th.randn(n, len(cols))
        grads = []
        for way in ("autograd", "in the pass", "helper"):
            model.zero_grad(set_to_none=True)
            with helper_thread() as helper:
                jobs = []
                if way == "autograd":
                    z = model.forward_logits(obs[rows], cols)
                else:
                    z, layers = model.logits_by_layer(obs[rows], cols)
                    jobs = hook_weight_gradients(layers, helper if way == "helper" else None)
                lp = th.log_softmax(z.masked_fill(~mask[rows][:, cols], MASKED), 1)
                ((lp * weights).sum() - (lp.exp() * lp).sum()).backward()
                for job in jobs:
                    job.result()
            assert len(jobs) == (len(hidden) if way == "helper" else 0)
            grads.append([p.grad for name, p in model.named_parameters() if not name.startswith(("critic", "value"))])
        assert len(grads[0]) == 2 * len(hidden) + 2
        for other in grads[1:]:
            for a, b in zip(grads[0], other):
                assert a.shape == b.shape and th.equal(a, b) and b.grad_fn is None


def test_the_helper_threads_first_product_rounds_as_the_learners_thread():
    """OpenMP keeps a thread count per thread, and a new thread starts at the process default
    (``OMP_NUM_THREADS``, else every core) until torch's first parallel loop in it: the update's
    helper thread (:func:`helper_thread`) runs torch on the learner thread's count from its first
    job, so a one-row backward pass through the quickstart's critic sizes, the first job of a fresh
    helper, gives the learner thread's gradients bit for bit (a plain new thread split the pass over
    both cores and differed in the ninth digit)."""
    from concurrent.futures import ThreadPoolExecutor

    from experiments.training.batched_ppo import helper_thread, usable_cores
    if usable_cores() < 2:
        pytest.skip("one core: a new thread's default count is already one")
    threads = th.get_num_threads()
    th.set_num_threads(1)
    try:
        th.manual_seed(0)
        net = th.nn.Sequential(th.nn.Linear(170, 512), th.nn.Tanh(), th.nn.Linear(512, 256), th.nn.Tanh(),
                               th.nn.Linear(256, 1))

        def grads(x: th.Tensor) -> list:
            net.zero_grad(set_to_none=True)
            net(x).sum().backward()
            return [p.grad.clone() for p in net.parameters()]

        xs = [th.randn(1, 170, generator=th.Generator().manual_seed(seed)) for seed in range(3)]
        plain = []
        for x in xs:
            with ThreadPoolExecutor(1) as fresh:              # what the helper was: a plain new thread
                plain.append(all(th.equal(a, b) for a, b in zip(grads(x), fresh.submit(grads, x).result())))
        if all(plain):
            pytest.skip("a plain new thread rounds as this one here (OMP_NUM_THREADS=1 set?): nothing to tell apart")
        for x in xs:
            want = grads(x)
            with helper_thread() as helper:
                got = helper.submit(grads, x).result()
            assert all(th.equal(a, b) for a, b in zip(want, got))
    finally:
        th.set_num_threads(threads)


def test_with_a_core_for_each_the_helper_never_waits_for_the_samplers(monkeypatch):
    from experiments.training import batched_ppo
    from experiments.training.config import load_train_config

    cfg = load_train_config(None, ["backend=batched", "network.pi=[16]", "network.vf=[16]", "batched.samplers=2"])
    for cores, waits in ((3, True), (4, False)):            # 2 sampler processes + the update + its helper
        monkeypatch.setattr(batched_ppo, "usable_cores", lambda c=cores: c)
        learner = batched_ppo.BatchedPPO(cfg)
        learner.setup(RunContext(seed=0, samplers_busy=lambda: True), None)
        assert learner.sampler_busy() is waits


def test_anneal_lr_lowers_the_rate_linearly_over_the_run_and_across_a_resume(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=512, ppo={"n_epochs": 1, "anneal_lr": True, "learning_rate": 1e-3},
                      checkpoint_every=0)
    run = Path(train(cfg, quiet=True)["run"])
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    rollouts = [r["timesteps"] for r in recs if r["kind"] == "rollout"]
    rates = [r["learning_rate"] for r in recs if r["kind"] == "update"]
    assert len(rates) == len(rollouts) >= 3
    # each update's rate: the fraction of the run still to come before its rollout
    before = [0] + rollouts[:-1]
    np.testing.assert_allclose(rates, [1e-3 * (1 - t / 512) for t in before], rtol=1e-6)
    assert rates[0] == pytest.approx(1e-3) and rates == sorted(rates, reverse=True) and rates[-1] < 1e-3 / 2
    # a resume with a longer run goes on from where the checkpoint stood, against the new total
    assert train_main(["--resume", str(run), "--set", "total_timesteps=1024", "--quiet"]) == 0
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    rollouts = [r["timesteps"] for r in recs if r["kind"] == "rollout"]
    later = [r["learning_rate"] for r in recs if r["kind"] == "update"][len(rates):]
    first_after = rollouts[len(rates) - 1]
    assert later[0] == pytest.approx(1e-3 * (1 - first_after / 1024))
    # off (the default): the rate stays the configured one
    flat = Path(train(tiny_config(tmp_path / "flat", total_timesteps=256, checkpoint_every=0), quiet=True)["run"])
    rates = {json.loads(x)["learning_rate"] for x in (flat / "metrics.jsonl").read_text().splitlines()
             if json.loads(x)["kind"] == "update"}
    assert rates == {TrainConfig().ppo.learning_rate}


def test_anneal_lr_is_refused_where_the_backend_cannot_anneal():
    from experiments.config import ConfigError
    from experiments.training.config import validate_rllib
    cfg = TrainConfig()
    cfg.ppo.anneal_lr, cfg.ppo.target_kl = True, None
    with pytest.raises(ConfigError, match="ppo.anneal_lr"):
        validate_rllib(cfg)


def test_sb3_gets_a_linear_schedule_when_annealing(tmp_path):
    from experiments.training.config import env_kwargs
    from experiments.training.sb3 import build_model
    from experiments.training.sb3_env import make_vec_env
    cfg = TrainConfig()
    cfg.ppo.anneal_lr, cfg.ppo.learning_rate = True, 2e-3
    cfg.network.pi, cfg.network.vf = [8], [8]
    venv = make_vec_env(env_kwargs(cfg), 1, 0, subprocess=False)
    try:
        model = build_model(cfg, venv, 0)
        assert model.lr_schedule(1.0) == pytest.approx(2e-3) and model.lr_schedule(0.25) == pytest.approx(5e-4)
        cfg.ppo.anneal_lr = False
        assert build_model(cfg, venv, 0).lr_schedule(0.25) == pytest.approx(2e-3)
    finally:
        venv.close()
