"""``handfoot experiment``: Ctrl-C in training or in the evaluation leaves a folder that
``--resume`` takes on to its report and ``--report`` reads once the training finished; ``--quick``
runs the whole pipeline at a smoke budget and says so."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import yaml

from experiments.apps import experiment as exp_mod
from experiments.apps.cli import main
from experiments.training import sb3 as sb3_mod

ROOT = Path(__file__).resolve().parent.parent


def _config(tmp_path: Path) -> Path:
    """A tiny experiment: 384 sb3 decisions in 3 rollouts, 2 deals against random."""
    data = {"name": "tinyexp", "seed": 3, "run_dir": str(tmp_path / "runs"),
            "train": {"name": "tinyexp", "total_timesteps": 384, "n_envs": 2, "vec_env": "dummy",
                      "opponents": {"random": 1.0}, "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                      "network": {"pi": [16], "vf": [16]}, "checkpoint_every": 0, "progress": False,
                      "evaluation": {"every_timesteps": 0, "final_deals": 0, "workers": 1}},
            "evaluation": {"opponents": ["random"], "deals": 2, "workers": 1, "model": "final"}}
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _sessions(run: Path) -> int:
    return len(json.loads((run / "run.json").read_text())["sessions"])


def test_ctrl_c_in_training_prints_a_command_that_finishes_the_experiment(tmp_path, monkeypatch, capsys):
    path = _config(tmp_path)
    calls = {"n": 0}
    original = sb3_mod._Hooks._on_step

    def on_step(self):
        calls["n"] += 1
        if calls["n"] == 64 + 20:          # 20 steps into the second rollout
            os.kill(os.getpid(), signal.SIGINT)
        return original(self)

    monkeypatch.setattr(sb3_mod._Hooks, "_on_step", on_step)
    assert main(["experiment", str(path), "--quiet"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    run = tmp_path / "runs" / "tinyexp-s3"
    assert len(err) == 1, err
    assert "interrupted at 128 timesteps" in err[0]
    assert err[0].endswith(f"continue with: handfoot experiment --resume {run}"), err[0]
    assert "handfoot train" not in err[0]
    assert (run / "experiment.yaml").is_file() and not (run / "report.md").exists()

    # the report of an unfinished training is one line naming the same command
    assert main(["experiment", "--report", str(run)]) == 2
    err = capsys.readouterr().err
    assert "has not finished" in err and f"experiment --resume {run}" in err and "Traceback" not in err

    monkeypatch.setattr(sb3_mod._Hooks, "_on_step", original)
    assert main(["experiment", "--resume", str(run), "--quiet"]) == 0
    summary = json.loads((run / "experiment.json").read_text())
    assert summary["timesteps"] == 384 and summary["results"]["final"]["per_opponent"]["random"]["games"] == 4
    assert summary["timings"]["train_s"] > 0
    assert _sessions(run) == 2
    assert "| final | random | 4 |" in (run / "report.md").read_text()
    assert not (tmp_path / "runs" / "tinyexp-s3-1").exists() and len(list((tmp_path / "runs").iterdir())) == 1


def test_ctrl_c_in_the_evaluation_keeps_the_training_and_report_works_before_it(tmp_path, monkeypatch, capsys):
    path = _config(tmp_path)
    real = exp_mod.evaluate_spec

    def stop(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(exp_mod, "evaluate_spec", stop)
    assert main(["experiment", str(path), "--quiet"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    run = tmp_path / "runs" / "tinyexp-s3"
    assert len(err) == 1 and "interrupted in the evaluation" in err[0]
    assert err[0].endswith(f"continue with: handfoot experiment --resume {run}")

    # the training finished: --report writes the report, saying the evaluation has not run
    assert main(["experiment", "--report", str(run)]) == 0
    report = (run / "report.md").read_text()
    assert "The evaluation has not run yet" in report and f"experiment --resume {run}" in report
    assert "trained for 384 learner timesteps" in report

    monkeypatch.setattr(exp_mod, "evaluate_spec", real)
    assert main(["experiment", "--resume", str(run), "--quiet"]) == 0
    assert _sessions(run) == 1                                  # not trained again
    report = (run / "report.md").read_text()
    assert "has not run yet" not in report and "| final | random | 4 |" in report


def test_resume_and_report_of_a_folder_that_is_not_an_experiment_are_one_line(tmp_path, capsys):
    assert main(["experiment", "--resume", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["experiment", "--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no experiment.yaml" in err and len(err.strip().splitlines()) == 1
    assert main(["experiment", "--report", str(tmp_path)]) == 2
    assert "no experiment.yaml" in capsys.readouterr().err


def test_quick_is_the_same_pipeline_at_a_smoke_budget_and_says_so(tmp_path, capsys):
    cfg = exp_mod.load_experiment_config(str(ROOT / "configs/experiments/quickstart.yaml"))
    full = (cfg.train.total_timesteps, cfg.evaluation.opponents[:], cfg.train.backend)
    exp_mod.make_quick(cfg)
    assert cfg.quick and cfg.train.total_timesteps == exp_mod.QUICK_TIMESTEPS < full[0]
    assert (cfg.evaluation.opponents, cfg.train.backend) == (full[1], full[2])
    assert cfg.evaluation.deals == exp_mod.QUICK_DEALS and cfg.train.run_name == "quickstart-quick-s0"
    assert cfg.evaluation.workers == cfg.train.evaluation.workers == 1 and cfg.time_budget_s == 60

    small = _config(tmp_path)
    assert main(["experiment", str(small), "--quick", "--quiet"]) == 0
    run = tmp_path / "runs" / "tinyexp-quick-s3"
    report = (run / "report.md").read_text()
    assert "**A smoke run** (`--quick`)" in report and "say nothing about what the recipe learns" in report
    assert yaml.safe_load((run / "experiment.yaml").read_text())["quick"] is True


def test_hints_name_the_command_as_it_can_be_run(tmp_path, monkeypatch):
    """``continue with: ...`` names ``handfoot`` only when that is the command on the PATH; after the
    set-up (the venv not active) it names the path the command was started by."""
    import shutil
    import sys

    from experiments.config import handfoot_command
    exe = tmp_path / ".venv" / "bin" / "handfoot"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(exe), "experiment"])
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert handfoot_command() == str(exe)
    assert exp_mod.continue_line(Path("runs/x")) == f"continue with: {exe} experiment --resume runs/x"
    monkeypatch.setattr(shutil, "which", lambda name: str(exe))
    assert handfoot_command() == "handfoot"
    monkeypatch.setattr(sys, "argv", ["/usr/lib/python3/pytest"])
    assert handfoot_command() == "handfoot"


def test_report_of_a_trained_folder_without_experiment_yaml_reads_the_named_config(tmp_path, monkeypatch, capsys):
    """A folder of an experiment stopped before experiment.yaml was kept: --report with its config."""
    path = _config(tmp_path)

    def stop(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(exp_mod, "evaluate_spec", stop)
    assert main(["experiment", str(path), "--quiet"]) == 130
    run = tmp_path / "runs" / "tinyexp-s3"
    (run / "experiment.yaml").unlink()
    capsys.readouterr()
    assert main(["experiment", "--report", str(run)]) == 2
    assert "name its config" in capsys.readouterr().err
    assert main(["experiment", str(path), "--report", str(run)]) == 0
    assert "The evaluation has not run yet" in (run / "report.md").read_text()


def test_the_compiled_core_is_loaded_before_the_training_bar_starts(monkeypatch):
    """The first run after an install compiles the core (with its lines) before training's progress bar
    starts, when the batched samplers play on it; an SB3 run does not load it."""
    import pytest
    pytest.importorskip("numba")
    from experiments.config import config_from_dict
    from experiments.training.config import TrainConfig
    from handfoot_env import compiled
    calls = []
    monkeypatch.setattr(compiled, "load", lambda: calls.append(1))
    exp_mod.warm_core(config_from_dict(TrainConfig, {"backend": "batched", "batched": {"core": "compiled"}}))
    assert calls == [1]
    exp_mod.warm_core(config_from_dict(TrainConfig, {"backend": "batched", "batched": {"core": "reference"}}))
    exp_mod.warm_core(config_from_dict(TrainConfig, {"backend": "sb3"}))
    assert calls == [1]
