"""Agent specs with keyword arguments (``NAME(key=value, ...)``, agents/registry.py) and
StrategicAgent's strategic choices as such arguments (today's play is the default)."""
from __future__ import annotations

import json

import pytest

from agents.registry import make_agent, spec_arguments
from agents.strategic import PARAMS, StrategicAgent
from experiments.evaluation.cli import evaluate_main
from experiments.evaluation.harness import play_game
from handfoot_env.config import load_rules


def test_spec_arguments_parse():
    assert spec_arguments("strategic") == ("strategic", {})
    assert spec_arguments("strategic()") == ("strategic", {})
    assert spec_arguments(" strategic(draw_worth=1.5, wilds=spend, late_stock=8, x=true) ") == (
        "strategic", {"draw_worth": 1.5, "wilds": "spend", "late_stock": 8, "x": True})
    assert spec_arguments("py:pkg.mod:Cls(name='a, b (c)')") == ("py:pkg.mod:Cls", {"name": "a, b (c)"})
    # paths are never parsed for arguments
    assert spec_arguments("policy:runs/x (copy)/best") == ("policy:runs/x (copy)/best", {})


@pytest.mark.parametrize("spec, message", [
    ("strategic(draw_worth=1.5", "parentheses at the end"),
    ("strategic(draw_worth)", "expected key=value"),
    ("strategic(1x=2)", "expected key=value"),
    ("strategic(a=1, a=2)", "given twice"),
    ("strategic(draw_worth=)", "needs a number"),
    ("strategic(draw_worth=[1])", "needs a number"),
    ("strategic(speed=3)", "unknown parameter 'speed'"),
    ("strategic(draw_worth=fast)", "draw_worth must be a number"),
    ("strategic(late_stock=1.5)", "late_stock must be an integer"),
    ("strategic(wilds=hoard)", "wilds must be one of save, spend"),
    ("strategic(wild_meld_at=2)", "between 3 and 7"),
    ("random(x=1)", "random takes no arguments"),
    ("greedy(x=1)", "greedy takes no arguments"),
    ("py:agents.heuristics:GreedyAgent(depth=2)", "unexpected keyword argument 'depth'"),
    ("strategic(name='x)", "unterminated quote"),
])
def test_bad_spec_arguments_are_one_clear_error(spec, message):
    with pytest.raises(ValueError) as e:
        make_agent(spec, 0)
    text = str(e.value)
    assert message in text and "\n" not in text
    assert repr(spec.strip()) in text or spec.startswith("py:")


def test_the_spec_string_names_the_agent():
    assert make_agent("strategic", 0).name == "strategic"
    a = make_agent("strategic(draw_worth=1.5, wilds=spend)", 0)
    assert a.name == "strategic(draw_worth=1.5, wilds=spend)"
    assert a.p["draw_worth"] == 1.5 and a.p["wilds"] == "spend" and a.p["go_out"] == "ready"


def _actions(specs, seed=5):
    res = play_game(load_rules("pagat"), specs, seed=seed, record=True)
    return res["record"]["actions"] if "record" in res else json.dumps(res, sort_keys=True, default=str)


def test_defaults_are_todays_play_and_each_setting_changes_play():
    defaults = ", ".join(f"{k}={v}" for k, v in ((k, v[0]) for k, v in PARAMS.items()))
    spelled = f"strategic({defaults})"
    base = [_actions(["strategic"] * 4, seed=s) for s in (1, 2)]
    assert [_actions([spelled] * 4, seed=s) for s in (1, 2)] == base
    assert StrategicAgent(0).p == make_agent(spelled, 0).p
    changed = {"draw_worth=1.0", "wilds=spend", "wild_meld_at=6", "go_out=ahead", "answer_margin=-3000",
               "late_stock=30", "risk_weight=0.0"}
    for arg in changed:
        spec = f"strategic({arg})"
        games = [_actions([spec, "strategic", spec, "strategic"], seed=s) for s in (1, 2, 3, 4)]
        ref = [_actions(["strategic"] * 4, seed=s) for s in (1, 2, 3, 4)]
        assert games != ref, f"{spec} plays exactly like the default in four games"


def test_evaluate_accepts_and_reports_spec_strings(tmp_path, capsys):
    out = tmp_path / "ev"
    rc = evaluate_main(["--agents", "strategic(draw_worth=1.5)", "greedy", "--games", "2", "--no-plots",
                        "--no-progress", "--out", str(out), "--json"])
    assert rc == 0
    res = json.loads((out / "results.json").read_text())
    assert res["agents"][0] == "strategic(draw_worth=1.5)" and res["specs"][0] == "strategic(draw_worth=1.5)"
    capsys.readouterr()
    assert evaluate_main(["--agents", "strategic(draw_worth=x)", "greedy", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "draw_worth must be a number" in err


def test_training_configs_check_specs_with_arguments():
    from experiments.config import ConfigError
    from experiments.training.config import check_spec
    check_spec("opponents.strategic(draw_worth=1.5)", "strategic(draw_worth=1.5)")
    with pytest.raises(ConfigError, match="unknown parameter"):
        check_spec("evaluation.opponents", "strategic(nope=1)")
