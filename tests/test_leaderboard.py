"""``handfoot leaderboard``: the field, the anchored ratings and their bootstrap intervals, the page."""
from __future__ import annotations

import json
import math
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


def test_two_agent_rating_is_the_logit_of_the_score_with_one_virtual_draw():
    # 29.5 of 39 games, plus the virtual draw: 30 of 40 = 0.75, odds 3: 400 log10(3) = 190.85 apart
    a, b = bradley_terry_elo("ab", {(0, 1): 29.5}, {(0, 1): 39})
    assert a - b == pytest.approx(190.848501, abs=1e-4) and a + b == pytest.approx(3000.0)
    # three agents in a cycle of equal results: all level at 1500
    cyc = bradley_terry_elo("abc", {(0, 1): 7, (1, 2): 7, (0, 2): 3}, {(0, 1): 10, (1, 2): 10, (0, 2): 10})
    assert cyc == pytest.approx([1500.0] * 3, abs=1e-6)


def _result(deal_rates, ratings=None):
    """A two-agent round-robin result as the harness writes it: ``x`` against ``random``."""
    ratings = ratings or {"x": 1620.0, "random": 1380.0}
    return {"agents": ["x", "random"], "specs": ["policy:x", "random"], "ratings": ratings,
            "pairs": [{"agents": ["x", "random"], "deal_win_rates": deal_rates, "adp": 250.0}],
            "overall": {}, "win_rate_matrix": [[None, 0.75], [0.25, None]]}


def test_board_shifts_ratings_to_random_1000_and_bootstraps_hand_computed_intervals():
    board = lb.build_board(_result([0.75] * 4), samples=300, seed=1)
    assert board["rating"] == {"x": 1240.0, "random": 1000.0} and board["order"] == ["x", "random"]
    assert board["adp_matrix"] == [[None, 250.0], [-250.0, None]]
    # every deal alike: every resample is the whole set, 6 of 8 games (+ the virtual draw: 6.5 of 9)
    lo, hi = board["rating_ci"]["x"]
    assert lo == pytest.approx(1000 + 400 * math.log10(6.5 / 2.5), abs=1e-6) and hi == pytest.approx(lo)
    assert board["rating_ci"]["random"] == [1000.0, 1000.0]
    # two deals, one won and one lost: a resample holds both (p 1/2), two wins (1/4) or two losses (1/4),
    # so the 2.5% and 97.5% points are the two extremes, 4.5 of 5 and 0.5 of 5: 1000 -+ 400 log10(9)
    board = lb.build_board(_result([1.0, 0.0]), samples=1000, seed=3)
    lo, hi = board["rating_ci"]["x"]
    assert lo == pytest.approx(1000 - 400 * math.log10(9), abs=1e-6)
    assert hi == pytest.approx(1000 + 400 * math.log10(9), abs=1e-6)
    assert lb.build_board(_result([1.0, 0.0]), samples=0, seed=3)["rating_ci"] == {"x": None, "random": None}


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


def test_field_has_each_shipped_champion_the_registry_builds(monkeypatch):
    def fake(spec, seed=0):
        if spec == "champion_v2":
            return GreedyAgent(seed)
        raise ValueError("unknown")
    assert lb.field_specs(["greedy", "policy:x"], champion=False) == ["random", "greedy", "strategic", "policy:x"]
    assert lb.field_specs(champion=True) == ["random", "greedy", "strategic", "champion_v1", "champion_v2"]
    monkeypatch.setattr(lb, "make_agent", fake)
    assert lb.champion_available("champion_v2") and not lb.champion_available("champion_v1")
    assert lb.field_specs() == ["random", "greedy", "strategic", "champion_v2"]
    assert lb.field_specs(["champion_v2", "champion"]) == ["random", "greedy", "strategic", "champion_v2", "champion"]
    monkeypatch.setattr(lb, "make_agent", lambda spec, seed=0: (_ for _ in ()).throw(ValueError("no")))
    assert lb.field_specs() == ["random", "greedy", "strategic"]
    monkeypatch.setattr(lb, "BUILTIN", ("random", "greedy", "strategic", "champion_v1"))   # if it becomes a built-in
    assert lb.field_specs(champion=True).count("champion_v1") == 1


def test_leaderboard_writes_page_plot_and_json(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin_agent"))
    monkeypatch.setattr(lb, "champion_available", lambda name: False)
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


def test_help_names_the_folder_the_command_writes(capsys):
    """``handfoot --help`` says where the page goes: the default folder (a run without --out writes
    there: tests/test_first_day.py), never docs/."""
    assert main(["--help"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("leaderboard "))
    assert f"{lb.DEFAULT_OUT}/" in line and "docs/" not in line

def test_shipped_page_records_its_command():
    page = (ROOT / "docs" / "leaderboard.md").read_text()
    data = json.loads((ROOT / "docs" / "leaderboard.json").read_text())
    assert data["info"]["command"] in page and data["info"]["command"].startswith("handfoot leaderboard")
    assert data["board"]["rating"]["random"] == 1000.0
