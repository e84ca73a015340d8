"""Interrupts and faults in training: Ctrl-C writes a checkpoint and exits 130, a resume continues
without repeating metric rows and restores the exact model, agent specs are checked before any
worker starts, workers die with their parent, and checkpoint folders are swapped in atomically.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch as th

from experiments import runs
from experiments.config import ConfigError
from experiments.runs import replace_dir, truncate_metrics
from experiments.training import sb3 as sb3_mod
from experiments.training import trainer as trainer_mod
from experiments.training.cli import train_main
from experiments.training.trainer import train
from tests.test_train import tiny_config

ROOT = Path(__file__).resolve().parents[1]


def _rows(run: Path):
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


def _write_config(tmp_path: Path, cfg) -> Path:
    import yaml

    from experiments.config import config_to_dict
    p = tmp_path / "train.yaml"
    p.write_text(yaml.safe_dump(config_to_dict(cfg)))
    return p


# ----------------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_writes_a_checkpoint_exits_130_and_resume_continues(tmp_path, monkeypatch, capsys):
    cfg = tiny_config(tmp_path, total_timesteps=384, checkpoint_every=0,
                      evaluation={"every_timesteps": 0, "final_deals": 0})
    path = _write_config(tmp_path, cfg)
    calls = {"n": 0}
    original = sb3_mod._Hooks._on_step

    def on_step(self):
        calls["n"] += 1
        if calls["n"] == 64 + 20:          # 20 steps into the second rollout (64 steps each)
            os.kill(os.getpid(), signal.SIGINT)
        return original(self)

    monkeypatch.setattr(sb3_mod._Hooks, "_on_step", on_step)
    before = signal.getsignal(signal.SIGINT)
    assert train_main([str(path), "--quiet"]) == 130
    assert signal.getsignal(signal.SIGINT) is before           # the handler is put back
    err = capsys.readouterr().err.strip().splitlines()
    run = tmp_path / "runs" / "tiny-s3"
    assert len(err) == 1 and "interrupted at 128 timesteps" in err[0] and f"--resume {run}" in err[0]
    ck = run / "checkpoints" / "step_000000128"
    assert (run / "checkpoints" / "latest.txt").read_text().strip() == ck.name
    for name in ("actor.npz", "model_state.npz", "snapshots.npz", "trainer.json"):
        assert (ck / name).exists(), name
    assert json.loads((ck / "trainer.json").read_text())["num_timesteps"] == 128
    assert not (run / "final").exists()
    assert [r["timesteps"] for r in _rows(run) if r["kind"] == "rollout"] == [128]
    info = json.loads((run / "run.json").read_text())
    assert info["sessions"][-1]["wall_s"] > 0

    monkeypatch.setattr(sb3_mod._Hooks, "_on_step", original)
    assert train_main(["--resume", str(run), "--quiet"]) == 0
    assert json.loads((run / "final" / "trainer.json").read_text())["num_timesteps"] == 384
    rows = _rows(run)
    assert [r["timesteps"] for r in rows if r["kind"] == "rollout"] == [128, 256, 384]
    assert [r["update"] for r in rows if r["kind"] == "update"] == [1, 2, 3]


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT")
def test_ctrl_c_in_a_handfoot_train_process_with_worker_processes(tmp_path):
    """Ctrl-C as a terminal sends it: SIGINT to the trainer and its workers at once."""
    cfg = tiny_config(tmp_path, total_timesteps=10_000_000, vec_env="subproc", checkpoint_every=0,
                      evaluation={"every_timesteps": 0, "final_deals": 0})
    path = _write_config(tmp_path, cfg)
    proc = subprocess.Popen([sys.executable, "-m", "experiments.apps.cli", "train", str(path), "--quiet"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    run = tmp_path / "runs" / "tiny-s3"
    try:
        deadline = time.monotonic() + 120
        while not ((run / "metrics.jsonl").exists() and any(r["kind"] == "update" for r in _rows(run))):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no update in 120 s"
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("handfoot train: interrupted at") and "Traceback" not in err
    latest = (run / "checkpoints" / "latest.txt").read_text().strip()
    assert (run / "checkpoints" / latest / "model_state.npz").exists()


# ----------------------------------------------------------------------------- resume
def test_resume_from_an_earlier_checkpoint_does_not_repeat_metric_rows(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=384, checkpoint_every=128, keep_checkpoints=0,
                      evaluation={"every_timesteps": 128, "final_deals": 0})
    run = Path(train(cfg, quiet=True)["run"])
    first = _rows(run)
    assert [r["timesteps"] for r in first if r["kind"] == "eval"] == [128, 256, 384]
    # as if the run had been killed after 384 steps with its last good checkpoint at 128
    assert train_main(["--resume", str(run / "checkpoints" / "step_000000128"), "--quiet"]) == 0
    rows = _rows(run)
    for kind in ("rollout", "update", "eval"):
        steps = [r["timesteps"] for r in rows if r["kind"] == kind]
        assert steps == sorted(set(steps)), (kind, steps)
    assert [r["timesteps"] for r in rows if r["kind"] == "rollout"] == [128, 256, 384]


def test_resume_restores_policy_and_optimizer_exactly(tmp_path):
    from sb3_contrib import MaskablePPO

    from experiments.runs import checkpoint_run
    cfg = tiny_config(tmp_path, total_timesteps=256, evaluation={"every_timesteps": 0, "final_deals": 0})
    run = Path(train(cfg, quiet=True)["run"])
    ck = run / "final"
    saved = MaskablePPO.load(str(ck / "model.zip"), device="cpu")      # the test trusts its own file
    t = trainer_mod.Trainer(cfg, checkpoint_run(ck), resume=ck, quiet=True)
    try:
        t.setup()
        got, want = t.learner.model.policy.state_dict(), saved.policy.state_dict()
        assert got.keys() == want.keys()
        for k in want:
            assert th.equal(got[k], want[k]), k
        go, wo = t.learner.model.policy.optimizer.state_dict(), saved.policy.optimizer.state_dict()
        assert go["state"].keys() == wo["state"].keys() and len(wo["state"]) > 0
        for i in wo["state"]:
            for k, v in wo["state"][i].items():
                assert th.equal(th.as_tensor(go["state"][i][k]), th.as_tensor(v)), (i, k)
        assert [g["lr"] for g in go["param_groups"]] == [g["lr"] for g in wo["param_groups"]]
        assert t.learner.model.num_timesteps == 256 and t.learner.model._n_updates == saved._n_updates
        assert len(t.snapshots) == len(t.state["snapshot_updates"]) > 0
    finally:
        t.close()


def test_truncate_metrics_drops_rows_past_the_step_and_broken_lines(tmp_path):
    rows = [{"kind": "rollout", "timesteps": s} for s in (128, 256, 384)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"kind": "rol')
    assert truncate_metrics(tmp_path, 256) == 2
    assert [r["timesteps"] for r in _rows(tmp_path)] == [128, 256]
    assert truncate_metrics(tmp_path, 256) == 0


# ----------------------------------------------------------------------------- agent specs
@pytest.mark.parametrize("over,field", [
    ({"opponents": {"random": 0.5, "policy:/does/not/exist": 0.5}}, "opponents.policy:/does/not/exist"),
    ({"evaluation": {"opponents": ["random", "rllib:/does/not/exist"]}}, "evaluation.opponents"),
])
def test_bad_agent_path_is_one_error_before_any_worker(tmp_path, capsys, over, field):
    cfg = tiny_config(tmp_path, vec_env="subproc", **over)
    with pytest.raises(ConfigError, match="does not exist") as e:
        train(cfg, quiet=True)
    assert str(e.value).startswith(field)
    assert not (tmp_path / "runs").exists()              # nothing started, no run folder
    assert train_main([str(_write_config(tmp_path, cfg)), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0] and "does not exist" in err[0]


def test_untrusted_model_zip_as_opponent_is_refused_before_training(tmp_path, monkeypatch):
    monkeypatch.delenv("HANDFOOT_TRUST_PICKLE", raising=False)
    d = tmp_path / "other"
    d.mkdir()
    (d / "model.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    with pytest.raises(ConfigError, match="HANDFOOT_TRUST_PICKLE=1"):
        train(tiny_config(tmp_path, opponents={f"policy:{d}": 1.0}), quiet=True)


# ----------------------------------------------------------------------------- workers and their parent
CHILD = """
import sys, time
import experiments.processes as P
if sys.argv[1] == "poll":
    P._pdeathsig = lambda sig: False        # the portable fallback: a thread polling os.getppid()
from experiments.training.sb3_env import make_vec_env
venv = make_vec_env({"opponents": {"random": 1.0}}, 2, 0, subprocess=True)
venv.reset()
print(" ".join(str(p.pid) for p in venv.venv.processes), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("mode", ["pdeathsig", "poll"])
def test_vec_env_workers_exit_when_their_parent_is_killed(mode):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        pids = [int(x) for x in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"


# ----------------------------------------------------------------------------- atomic replacement
@pytest.mark.parametrize("exchange", [True, False])
def test_replace_dir_puts_the_new_folder_in_place_before_deleting_the_old(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(runs, "_exchange", lambda a, b: False)
    target, new = tmp_path / "best", tmp_path / "best.tmp"
    for d, text in ((target, "old"), (new, "new")):
        d.mkdir()
        (d / "marker").write_text(text)
    deleted = []
    real = runs.shutil.rmtree

    def rmtree(p, *a, **k):
        assert (target / "marker").read_text() == "new"          # the new folder is already in place
        deleted.append((Path(p) / "marker").read_text())
        real(p, *a, **k)

    monkeypatch.setattr(runs.shutil, "rmtree", rmtree)
    replace_dir(new, target)
    assert deleted == ["old"] and (target / "marker").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]


def test_replace_dir_keeps_the_old_folder_when_the_new_cannot_move_in(tmp_path, monkeypatch):
    monkeypatch.setattr(runs, "_exchange", lambda a, b: False)
    target = tmp_path / "final"
    target.mkdir()
    (target / "marker").write_text("old")
    with pytest.raises(OSError):
        replace_dir(tmp_path / "missing.tmp", target)
    assert (target / "marker").read_text() == "old"


def test_checkpoints_leave_no_temporary_folders(tmp_path):
    cfg = tiny_config(tmp_path, total_timesteps=384, checkpoint_every=128, keep_checkpoints=2,
                      evaluation={"every_timesteps": 128, "final_deals": 0})
    run = Path(train(cfg, quiet=True)["run"])
    ck = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ck == ["latest.txt", "step_000000256", "step_000000384"]
    assert (run / "checkpoints" / "latest.txt").read_text() == "step_000000384\n"
    names = {p.name for p in run.iterdir()}
    assert {"best", "final"} <= names and not any(n.endswith((".tmp", ".old")) or ".old-" in n for n in names)
    assert np.load(run / "best" / "actor.npz", allow_pickle=False)["visible"] > 0
    assert (run / "best" / "eval.json").exists()             # written inside the folder before the swap


def test_old_checkpoint_format_resumes_with_the_trust_switch(tmp_path, monkeypatch):
    """A checkpoint of an older version (snapshots.pkl, model.zip) still resumes when the user trusts it."""
    import pickle

    cfg = tiny_config(tmp_path, total_timesteps=256, checkpoint_every=128,
                      evaluation={"every_timesteps": 0, "final_deals": 0})
    run = Path(train(cfg, quiet=True)["run"])
    ck = run / "checkpoints" / "step_000000256"
    pool = trainer_mod.load_snapshots(ck / "snapshots.npz")
    assert pool
    (ck / "snapshots.pkl").write_bytes(pickle.dumps(pool))
    (ck / "snapshots.npz").unlink()
    (ck / "model_state.npz").unlink()
    monkeypatch.delenv("HANDFOOT_TRUST_PICKLE", raising=False)
    assert train_main(["--resume", str(run), "--set", "total_timesteps=384", "--quiet"]) == 2
    monkeypatch.setenv("HANDFOOT_TRUST_PICKLE", "1")
    assert train_main(["--resume", str(run), "--set", "total_timesteps=384", "--quiet"]) == 0
    assert json.loads((run / "final" / "trainer.json").read_text())["num_timesteps"] == 384


def test_resume_with_another_network_is_one_clear_error(tmp_path, capsys):
    cfg = tiny_config(tmp_path, total_timesteps=128, evaluation={"every_timesteps": 0, "final_deals": 0})
    run = Path(train(cfg, quiet=True)["run"])
    assert train_main(["--resume", str(run), "--set", "network.pi=[16]", "--set", "total_timesteps=256",
                       "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model_state.npz does not fit the model" in err[0]


def test_thin_metrics_keeps_every_evaluation_and_the_first_and_every_nth_update(tmp_path):
    rows = []
    for u in range(1, 46):
        rows += [{"kind": "rollout", "timesteps": 10 * u, "update": u}, {"kind": "update", "timesteps": 10 * u,
                                                                         "update": u, "loss": 0.5}]
        if u % 7 == 0:
            rows.append({"kind": "eval", "timesteps": 10 * u, "elo": 1000 + u})
    src = tmp_path / "metrics.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert runs.thin_metrics(src, tmp_path / "thin.jsonl", every=20, head=3) == (len(rows), 6 + 4 + 6)
    kept = [json.loads(x) for x in (tmp_path / "thin.jsonl").read_text().splitlines()]
    assert [r for r in kept if r["kind"] == "eval"] == [r for r in rows if r["kind"] == "eval"]
    assert sorted({r["update"] for r in kept if r["kind"] != "eval"}) == [1, 2, 3, 20, 40]
    assert kept == [r for r in rows if r in kept]          # in the order of the run
