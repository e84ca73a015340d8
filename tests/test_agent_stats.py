"""results.json's ``agent_stats``: per side label, the counts each agent keeps (the search agent's
searched decisions and searches cut by ``max_seconds``), summed over the deals and the workers; empty
for agents that keep none; the two sides of a mirror match apart."""
from __future__ import annotations

import json

import pytest

from experiments.evaluation.harness import EvalConfig, run_evaluation

SEARCH = "search(worlds=4, candidates=2, horizon=8, max_seconds=3600)"   # no search cut, even compiling
TIMED = ("seconds",)                    # wall time: the one count that differs from run to run


def _stats(agents, workers, games=2, out=None):
    res = run_evaluation(EvalConfig(agents=agents, games=games, seed=5, workers=workers, progress=False,
                                    plots=False, out=out), write=out is not None)
    return res


def test_search_counts_are_the_same_whatever_the_workers_and_written(tmp_path):
    one = _stats([SEARCH, "random"], 1, out=str(tmp_path / "one"))["agent_stats"]
    two = _stats([SEARCH, "random"], 2)["agent_stats"]
    assert set(one) == {SEARCH, "random"} and one["random"] == {} == two["random"]
    mine = one[SEARCH]
    assert mine["decisions"] > 0 and 0 < mine["searched"] <= mine["decisions"] and mine["cut"] == 0
    assert {k: v for k, v in mine.items() if k not in TIMED} == \
        {k: v for k, v in two[SEARCH].items() if k not in TIMED}
    written = json.loads((tmp_path / "one" / "results.json").read_text())
    assert written["agent_stats"][SEARCH]["searched"] == mine["searched"]


def test_a_mirror_match_keeps_each_side_apart_and_cut_searches_are_counted():
    spec = "search(worlds=4, candidates=2, max_seconds=0.001)"
    res = _stats([spec, spec], 1, games=1)
    st = res["agent_stats"]
    assert set(st) == {spec, f"{spec}#2"}
    a, b = st[spec], st[f"{spec}#2"]
    assert a["decisions"] > 0 and b["decisions"] > 0
    assert a["cut"] + b["cut"] > 0 and a["cut"] <= a["searched"] and b["cut"] <= b["searched"]
    # each side's count is its own seats' decisions over both games of the deal, not the other side's
    per = res["per_agent"]
    sides = per if isinstance(per, list) else [per[spec], per[f"{spec}#2"]]
    assert [a["decisions"], b["decisions"]] == [round(s["actions_per_game"] * res["games"]) for s in sides]


@pytest.mark.parametrize("agents", [["strategic", "greedy", "random"]])
def test_agents_that_keep_no_counts_have_an_empty_entry(agents):
    st = _stats(agents, 1, games=1)["agent_stats"]
    assert st == {"strategic": {}, "greedy": {}, "random": {}}
