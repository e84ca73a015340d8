"""``handfoot leaderboard``: the field, the anchored ratings and their bootstrap intervals, the page."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents import GreedyAgent
from experiments.apps.cli import main
from experiments.evaluation import leaderboard as lb
from experiments.evaluation.stats import bradley_terry_elo, bradley_terry_elo_batch

ROOT = Path(__file__).resolve().parents[1]


def test_batch_fit_matches_the_single_fit():
    pairs = [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)]
    wins = [3, 40, 80, 0, 30, 55.5]
    single = bradley_terry_elo("abcd", dict(zip(pairs, wins)), {p: 100 for p in pairs})
    batch = bradley_terry_elo_batch(4, pairs, [wins, wins], 100)
    assert np.allclose(batch, [single, single])


def test_bootstrap_resamples_deals_jointly_and_is_seeded():
    pairs = [(0, 1), (0, 2), (1, 2)]
    rng = np.random.default_rng(0)
    rates = rng.choice([0.0, 0.5, 1.0], size=(3, 40), p=[0.3, 0.2, 0.5])
    a = lb.bootstrap_ratings(3, pairs, rates, anchor=2, samples=200, seed=5)
    assert a.shape == (200, 3) and np.all(a[:, 2] == 1000.0)
    assert np.array_equal(a, lb.bootstrap_ratings(3, pairs, rates, anchor=2, samples=200, seed=5))
    assert not np.array_equal(a, lb.bootstrap_ratings(3, pairs, rates, anchor=2, samples=200, seed=6))
    assert a[:, 0].std() > 0
    same = lb.bootstrap_ratings(3, pairs, np.ones((3, 40)), anchor=2, samples=50, seed=5)
    assert np.allclose(same, same[0])          # every deal alike: every resample alike


def test_field_has_champion_only_when_the_registry_builds_it(monkeypatch):
    def fake(spec, seed=0):
        if spec == "champion":
            return GreedyAgent(seed)
        raise ValueError("unknown")
    assert lb.field_specs(["greedy", "policy:x"], champion=False) == ["random", "greedy", "strategic", "policy:x"]
    monkeypatch.setattr(lb, "make_agent", fake)
    assert lb.champion_available() and lb.field_specs()[-1] == "champion"
    assert lb.field_specs(["champion"]).count("champion") == 1
    monkeypatch.setattr(lb, "make_agent", lambda spec, seed=0: (_ for _ in ()).throw(ValueError("no")))
    assert not lb.champion_available() and "champion" not in lb.field_specs()
    monkeypatch.setattr(lb, "BUILTIN", ("random", "greedy", "strategic", "champion"))   # if it becomes a built-in
    assert lb.field_specs(champion=True).count("champion") == 1


def test_leaderboard_writes_page_plot_and_json(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin_agent"))
    monkeypatch.setattr(lb, "champion_available", lambda: False)
    out = tmp_path / "board"
    argv = ["--games", "3", "--seed", "2", "--bootstrap", "100", "--out", str(out), "--no-progress",
            "--agents", "py:natural_agent:NaturalAgent"]
    assert lb.leaderboard_main(argv) == 0
    data = json.loads((out / "leaderboard.json").read_text())
    board = data["board"]
    assert board["specs"] == ["random", "greedy", "strategic", "py:natural_agent:NaturalAgent"]
    assert board["rating"]["random"] == 1000.0 and board["rating_ci"]["random"] == [1000.0, 1000.0]
    res = data["results"]
    raw = res["ratings"]
    for name in board["agents"]:        # the harness's ratings, shifted so that random = 1000
        assert board["rating"][name] == pytest.approx(raw[name] - raw["random"] + 1000.0)
        lo, hi = board["rating_ci"][name]
        assert lo <= hi
    assert len(res["pairs"]) == 6 and all(len(p["deal_win_rates"]) == 3 for p in res["pairs"])
    assert board["order"] == sorted(board["agents"], key=lambda n: -board["rating"][n])
    page = (out / "leaderboard.md").read_text()
    assert "handfoot leaderboard --games 3 --seed 2 --bootstrap 100" in page and "random = 1000" in page
    for name in board["agents"]:
        assert f"`{name}`" in page
    assert (out / "leaderboard.png").stat().st_size > 1000
    assert "Leaderboard (3 duplicate deals per pair; random = 1000)" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["--games", "0"], "--games must be at least 1"),
    (["--bootstrap", "-1"], "--bootstrap must be between"),
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--agents", "nobody"], "unknown agent spec 'nobody'"),
    (["--seed", "x"], "a seed is an integer"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_input_is_one_line(argv, words, capsys, tmp_path):
    assert main(["leaderboard", "--out", str(tmp_path / "o")] + argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot leaderboard: error:") and words in err and "\n" not in err
    assert not (tmp_path / "o" / "leaderboard.md").exists()


def test_out_must_be_a_folder(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["leaderboard", "--games", "1", "--out", str(f)]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "leaderboard.md").write_text("a curated board")
    assert main(["leaderboard", "--games", "1", "--out", str(tmp_path / "full")]) == 2
    assert "the folder is not empty" in capsys.readouterr().err
    assert (tmp_path / "full" / "leaderboard.md").read_text() == "a curated board"


def test_shipped_page_records_its_command():
    page = (ROOT / "docs" / "leaderboard.md").read_text()
    data = json.loads((ROOT / "docs" / "leaderboard.json").read_text())
    assert data["info"]["command"] in page and data["info"]["command"].startswith("handfoot leaderboard")
    assert data["board"]["rating"]["random"] == 1000.0
