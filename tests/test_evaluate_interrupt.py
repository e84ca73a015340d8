"""Ctrl-C in ``handfoot evaluate``: one line naming how many deals were done and where their per-deal
outcomes are (``deals.csv``, kept), exit 130; a Ctrl-C without a message is one word, never empty."""
from __future__ import annotations

import csv

from experiments.config import command
from experiments.evaluation import harness
from experiments.evaluation.cli import evaluate_main


def test_ctrl_c_keeps_the_finished_deals_and_says_where(tmp_path, monkeypatch, capsys):
    real, calls = harness._play_chunk, {"n": 0}

    def chunk(task):
        calls["n"] += 1
        if calls["n"] == 3:                       # two chunks of two deals done, then Ctrl-C
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(harness, "_play_chunk", chunk)
    out = tmp_path / "ev"
    rc = evaluate_main(["--agents", "greedy", "random", "--deals", "8", "--workers", "1", "--out", str(out),
                        "--no-progress", "--no-plots"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 130 and len(err) == 1, err
    assert err[0] == (f"handfoot evaluate: interrupted after 4 of 8 deals; their per-deal outcomes are in "
                      f"{out / 'deals.csv'} (no results.json: the evaluation did not finish)")
    with (out / "deals.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["deal"]) for r in rows] == [0, 1, 2, 3] and {r["agent_a"] for r in rows} == {"greedy"}
    assert not (out / "results.json").exists()


def test_a_bare_ctrl_c_prints_a_word(capsys):
    @command("demo")
    def stopped(argv=None):
        raise KeyboardInterrupt

    assert stopped() == 130
    assert capsys.readouterr().err.strip() == "handfoot demo: interrupted"
