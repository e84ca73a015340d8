"""The shipped ``champion`` agent: its weights are in the package and match their record in
docs/results/champion/, it plays legal moves wherever a spec is accepted, and a missing file is
one clear error."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from agents import registry
from agents.policy import PolicyAgent, load_actor
from agents.registry import make_agent, shipped_weights
from experiments.evaluation.cli import evaluate_main
from experiments.evaluation.harness import play_game
from handfoot_env import handfoot_v0
from handfoot_env.config import load_rules

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "docs" / "results" / "champion"


def test_the_shipped_weights_are_the_recorded_ones():
    path = shipped_weights("champion")
    assert path.is_file() and path.parent == ROOT / "agents" / "weights"
    info = json.loads((RECORD / "champion.json").read_text())
    assert hashlib.sha256(path.read_bytes()).hexdigest() == info["sha256"]
    assert info["weights"] == "agents/weights/champion.npz"
    for name in ("config.yaml", "run.json", "metrics.jsonl", "learning_curve.png"):
        assert (RECORD / name).is_file(), name
    load_actor(path)                      # arrays only, checked


def test_champion_plays_whole_games_legally():
    """The harness raises on an illegal action; the champion holds one team, strategic the other."""
    agent = make_agent("champion", 5)
    assert isinstance(agent, PolicyAgent) and agent.name == "champion"
    for seed, seats in ((21, ["champion", "strategic"] * 2), (22, ["random", "champion"] * 2)):
        out = play_game(load_rules("pagat"), seats, seed)
        assert out["winner"] in (0, 1, None) and out["rounds"] >= 1


def test_champion_is_deterministic_and_ignores_its_seed():
    obs_env = handfoot_v0.env()
    obs_env.reset(seed=3)
    obs, *_ = obs_env.last()
    a, b = make_agent("champion", 1), make_agent("champion", 2)
    rules = obs_env.unwrapped.game.rules
    a.reset(0, rules, 1)
    b.reset(0, rules, 2)
    assert a.act(obs, None) == b.act(obs, None)


def test_evaluate_accepts_champion(tmp_path, capsys):
    assert evaluate_main(["--agents", "champion", "random", "--games", "1", "--workers", "1",
                          "--no-plots", "--no-progress", "--out", str(tmp_path / "ev")]) == 0
    assert "champion" in capsys.readouterr().out


def test_missing_weights_are_one_error_naming_the_spec(monkeypatch, tmp_path):
    monkeypatch.setitem(registry.SHIPPED, "champion", "weights/not_there.npz")
    with pytest.raises(ValueError, match="agent spec 'champion': its weights .* are not in this installation"):
        make_agent("champion", 0)


def _ship_script():
    spec = importlib.util.spec_from_file_location("ship_champion", ROOT / "scripts" / "ship_champion.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ship_script_copies_the_checkpoint_and_replaces_the_old_record(tmp_path, capsys):
    ship = _ship_script()
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    shutil.copyfile(shipped_weights("champion"), run / "best" / "actor.npz")
    (run / "best" / "trainer.json").write_text(json.dumps({"num_timesteps": 1234, "backend": "batched"}))
    (run / "config.yaml").write_text("seed: 1\n")
    (run / "experiment_eval" / "best").mkdir(parents=True)
    (run / "experiment_eval" / "best" / "results.csv").write_text("a,b\n")
    docs, dest = tmp_path / "docs", tmp_path / "w" / "champion.npz"
    (docs / "experiment_eval" / "final").mkdir(parents=True)          # left by an earlier champion
    (docs / "experiment_eval" / "final" / "results.csv").write_text("old\n")
    (docs / "report.md").write_text("old report\n")
    assert ship.main([str(run), "--docs", str(docs), "--weights", str(dest)]) == 0
    info = json.loads((docs / "champion.json").read_text())
    assert info["timesteps"] == 1234 and info["backend"] == "batched" and info["network"] == "policy"
    assert info["sha256"] == hashlib.sha256(dest.read_bytes()).hexdigest()
    assert (docs / "config.yaml").read_text() == "seed: 1\n"
    assert (docs / "experiment_eval" / "best" / "results.csv").is_file()
    assert not (docs / "report.md").exists() and not (docs / "experiment_eval" / "final").exists()
    capsys.readouterr()
    (run / "best" / "trainer.json").write_text("{not json")
    assert ship.main([str(run), "--docs", str(docs), "--weights", str(dest)]) == 2
    (run / "best" / "actor.npz").write_bytes(b"not an archive")
    assert ship.main([str(run), "--docs", str(docs), "--weights", str(dest)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("ship_champion: error: ") for line in err)
