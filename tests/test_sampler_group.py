"""The sampler group on every transport: the same numbers in-process, in processes and as Ray actors;
rollouts in flight (``max_lag``); a sampler killed mid-run replaced; a lost transport checkpointed."""
from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import numpy as np
import pytest

from experiments.config import ConfigError
from experiments.training import sampler_group
from experiments.training.cli import train_main
from experiments.training.sampler_group import SamplerGroup, SamplerLost, SamplersLost
from experiments.training.trainer import train
from tests.test_batched_ppo import _arrays, tiny_actor, tiny_config

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    """One private local Ray for the module (each run's transport joins it and leaves it running)."""
    from experiments.ray_cluster import init_ray, shutdown_ray
    started = init_ray(None, num_cpus=2, quiet=True)
    yield
    if started:
        shutdown_ray()


def _same_run(a: Path, b: Path) -> None:
    x, y = _arrays(a / "final" / "learner.npz"), _arrays(b / "final" / "learner.npz")
    assert x.keys() == y.keys()
    for k in x:
        np.testing.assert_array_equal(x[k], y[k], err_msg=k)
    assert (a / "metrics.jsonl").read_text() == (b / "metrics.jsonl").read_text()


@pytest.mark.parametrize("backend,batched", [
    ("batched", {"samplers": 2, "pipeline": False}),
    ("batched", {"samplers": 2, "pipeline": True, "max_lag": 2}),
    ("dmc", {"samplers": 2, "pipeline": False, "games": 2}),
])
def test_samplers_on_ray_give_the_runs_of_sampler_processes_bit_for_bit(tmp_path, local_ray, backend, batched):
    over = {"backend": backend}
    if backend == "dmc":                  # tests/test_dmc.py's tiny run: its two games end within 1,400
        over.update(dmc={"rollout": 128, "batch_size": 64}, network={"pi": [32, 16], "vf": [8]}, total_timesteps=1400)
    runs = {}
    for where in ("processes", "ray"):
        b = dict(batched, ray="local") if where == "ray" else batched
        runs[where] = Path(train(tiny_config(tmp_path / where, batched=b, **over), quiet=True)["run"])
    _same_run(runs["processes"], runs["ray"])
    rows = [json.loads(x) for x in (runs["ray"] / "metrics.jsonl").read_text().splitlines()]
    assert sum(r["kind"] == "update" for r in rows) >= 2
    info = json.loads((runs["ray"] / "run.json").read_text())
    assert info["sessions"][-1]["batched"]["ray"] == "local"


def test_with_max_lag_the_samplers_run_ahead_by_at_most_that_many_rollouts():
    """Pipelined with ``max_lag`` k: the first call plays one rollout and starts k, every later call takes
    the oldest and starts one with the newest weights, and none is started past the decisions remaining."""
    group = SamplerGroup(0, 4, seed=1, max_lag=3, rules="pagat", opponents={"random": 1.0})
    w = [tiny_actor(s) for s in range(6)]
    seen = []
    real = group.request

    def request(decisions, learner, snapshots):
        seen.append(next(i for i, x in enumerate(w) if x is learner))
        real(decisions, learner, snapshots)
    group.request = request
    total = 0
    for u in range(5):
        batch = group.next_rollout(40, w[u], None, pipeline=True, remaining=200 - total)
        total += batch["decisions"]
        assert len(group.queue) <= 3
        assert group.in_flight <= max(0, 200 - total) + 40
    # weights 0 play the first rollout and the three then in flight; each update adds one with its weights
    assert seen[:4] == [0, 0, 0, 0] and seen[4:] == list(range(1, len(seen) - 3))
    assert total >= 200 - 40
    group.close()


def test_a_config_with_ray_names_its_problems_in_one_line(tmp_path):
    for batched, problem in (
            ({"samplers": 0, "pipeline": False, "ray": "local"}, "batched.ray: needs batched.samplers >= 1"),
            ({"samplers": 1, "max_lag": 0}, "batched.max_lag: must be an integer from 1"),
            ({"device": "tpu"}, "batched.device: expected one of auto, cpu, cuda"),
            ({"samplers": 1, "cpus_per_sampler": 0}, "batched.cpus_per_sampler: must be a number")):
        with pytest.raises(ConfigError, match=re.escape(problem)):
            tiny_config(tmp_path, batched=batched)


def test_train_ray_flag_is_refused_for_a_backend_that_does_not_run_on_ray(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("backend: sb3\ntotal_timesteps: 64\n")
    assert train_main([str(cfg), "--ray", "--run-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--ray: backend sb3 does not run on Ray" in err[0]


# ------------------------------------------------------------------------------ faults
def _kill_a_sampler_once(monkeypatch, pid_of):
    """Make the group's first rollout wait lose sampler 0 to SIGKILL, just before it is awaited."""
    killed = []
    real = SamplerGroup.result

    def result(self):
        if not killed and self.queue:
            os.kill(pid_of(self), signal.SIGKILL)
            killed.append(True)
        return real(self)
    monkeypatch.setattr(SamplerGroup, "result", result)
    return killed


@pytest.mark.parametrize("where", ["processes", "ray"])
def test_a_sampler_killed_mid_run_is_replaced_and_the_run_ends_with_its_decisions(tmp_path, capsys, monkeypatch,
                                                                                   where, request):
    if where == "ray":
        request.getfixturevalue("local_ray")
        pid_of = lambda g: g.transport.pids()[0]        # noqa: E731
        batched = {"samplers": 2, "pipeline": True, "ray": "local"}
    else:
        pid_of = lambda g: g.transport.procs[0].pid     # noqa: E731
        batched = {"samplers": 2, "pipeline": True}
    killed = _kill_a_sampler_once(monkeypatch, pid_of)
    cfg = tiny_config(tmp_path, batched=batched, total_timesteps=384)
    cfg.progress = False
    result = train(cfg, quiet=False)
    assert killed and result["timesteps"] >= 384
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "replaced by a new sampler" in x]
    assert len(lines) == 1 and "samplers: sampler" in lines[0]


def test_a_replacement_sampler_plays_other_games_than_its_predecessor():
    """A replacement gets a seed and game numbers of its own: its games are new, and their numbers
    cannot be taken for the dead sampler's (DMC keeps decisions by game number)."""
    group = SamplerGroup(2, 4, seed=1, rules="pagat", opponents={"random": 1.0})
    try:
        first = group.next_rollout(60, tiny_actor(0), None, pipeline=False)
        os.kill(group.transport.procs[1].pid, signal.SIGKILL)
        again = group.next_rollout(60, tiny_actor(0), None, pipeline=False)
        assert group.replaced == 1 and again["decisions"] >= 60
        slots = again["trace"][:, 0] >= 2                          # sampler 1's game slots
        assert (again["trace"][slots, 1] >= 1 << sampler_group.EPISODE_SHIFT).all()
        assert (again["trace"][~slots, 1] < 1 << sampler_group.EPISODE_SHIFT).all()
        assert first["trace"][:, 1].max() < 1 << sampler_group.EPISODE_SHIFT
    finally:
        group.close()


def test_a_lost_transport_leaves_a_checkpoint_that_resume_continues(tmp_path, capsys, monkeypatch):
    from experiments.training.sampler_group import ProcessTransport
    calls = []
    real = ProcessTransport.receive

    def receive(self, handle):
        calls.append(handle)
        if len(calls) == 5:
            raise SamplersLost("Ray is not reachable (test)")
        return real(self, handle)
    monkeypatch.setattr(ProcessTransport, "receive", receive)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("backend: batched\ntotal_timesteps: 512\nn_envs: 1\nppo: {n_steps: 64, n_epochs: 1}\n"
                   "batched: {games: 4, samplers: 2, pipeline: false}\nprogress: false\n"
                   "evaluation: {every_timesteps: 0, final_deals: 0}\nrun_name: lost\n")
    assert train_main([str(cfg), "--run-dir", str(tmp_path), "--quiet"]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "Ray is not reachable (test) at " in err[0] and "handfoot train --resume" in err[0]
    steps = int(re.search(r"at ([0-9,]+) timesteps", err[0]).group(1).replace(",", ""))
    assert 128 <= steps < 192                       # two rollouts learnt from, the third lost
    run = tmp_path / "lost"
    assert (run / "checkpoints" / "latest.txt").read_text().strip() == f"step_{steps:09d}"
    monkeypatch.setattr(ProcessTransport, "receive", real)
    assert train_main(["--resume", str(run), "--quiet"]) == 0
    trainer = json.loads((run / "final" / "trainer.json").read_text())
    assert trainer["num_timesteps"] >= 512


def test_a_sampler_that_keeps_dying_stops_the_run_with_one_line(monkeypatch):
    group = SamplerGroup(1, 2, seed=1, rules="pagat", opponents={"random": 1.0})

    def receive(handle):
        raise SamplerLost("sampler process 0 is gone (test)")
    monkeypatch.setattr(group.transport, "receive", receive)
    try:
        group.request(20, tiny_actor(0), None)
        with pytest.raises(SamplersLost, match="lost 4 times in one rollout"):
            group.result()
    finally:
        group.close()
