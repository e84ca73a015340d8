"""The small print a person reads: the evaluation's interval footnote whole, the red three's points
from the rules, a meld's points toward the opening minimum, and the round-end panel's score named."""
from __future__ import annotations

import io

from handfoot_env.actions import DRAW, LAY_RED_THREE, MELD_BASE, PICKUP
from handfoot_env.config import load_rules
from handfoot_env.engine import Game

from experiments.apps.table import describe_action, make_console


def test_the_interval_footnote_is_printed_whole():
    from experiments.evaluation.harness import EvalConfig, run_evaluation
    from experiments.evaluation.report import print_results
    from experiments.evaluation.stats import DEAL_INTERVAL_METHOD
    assert ";" in DEAL_INTERVAL_METHOD               # the case that cut it
    res = run_evaluation(EvalConfig(agents=["random", "random"], games=2, seed=0, workers=1, progress=False,
                                    plots=False), write=False)
    out = io.StringIO()
    print_results(res, file=out)
    text = " ".join(out.getvalue().split())
    assert f"win-rate interval: {DEAL_INTERVAL_METHOD}" in text
    assert "ADP 95% CI" not in text.split("win-rate interval:")[1]


def _first(game: Game, want) -> int:
    return next(a for a in game.legal_actions() if want(a))


def test_red_three_label_reads_the_rule():
    for bonus in (100, 300):
        rules = load_rules("pagat", red_three_bonus=bonus)
        for seed in range(200):
            g = Game(rules)
            g.reset(seed=seed)
            if LAY_RED_THREE in g.legal_actions():
                assert describe_action(g, LAY_RED_THREE) == f"lay a red three (+{bonus}) and draw a replacement"
                break
        else:
            raise AssertionError("no deal with a red three to lay")


def test_a_meld_by_a_team_that_has_not_opened_shows_its_points_toward_the_minimum():
    rules = load_rules("pagat")
    for seed in range(200):
        g = Game(rules)
        g.reset(seed=seed)
        while LAY_RED_THREE in g.legal_actions():
            g.step(LAY_RED_THREE)
        if DRAW in g.legal_actions():
            g.step(DRAW)
        melds = [a for a in g.legal_actions() if a >= MELD_BASE]
        if melds:
            break
    assert not g.opened[g.team_of[g.current]]
    from handfoot_env.actions import MELD_SPECS
    from handfoot_env.melds import meld_points
    a = melds[0]
    pts = meld_points(*MELD_SPECS[a - MELD_BASE])
    text = describe_action(g, a)
    opens = ", opens" if pts >= g.minimum else ""
    assert text.endswith(f"({pts} points: {pts} of the opening minimum {g.minimum}{opens})"), text
    g.step(a)                                        # the turn's provisional melds count too
    if not g.opened[g.team_of[g.current]]:
        more = [b for b in g.legal_actions() if b >= MELD_BASE]
        if more:
            p2 = meld_points(*MELD_SPECS[more[0] - MELD_BASE])
            assert f"{p2} points: {pts + p2} of the opening minimum" in describe_action(g, more[0])
    assert PICKUP not in g.legal_actions() or "of the opening minimum" in describe_action(g, PICKUP)


def test_the_round_end_panel_names_its_score_as_the_one_before_the_round():
    from experiments.apps.demo import run_demo
    out = io.StringIO()
    run_demo(["greedy", "random"], "pagat", 1, make_console(out, 160))
    text = out.getvalue()
    assert "score before this round" in text and "End of round 1" in text


def test_the_sequential_tests_prior_is_documented_with_its_effect_on_the_committed_runs(capsys):
    """docs/baselines.md's table of the prior against fishtest's rule is what scripts/sprt_prior.py
    prints on the committed deals, and results.json's method names the prior."""
    import importlib.util
    from pathlib import Path
    from experiments.evaluation.sprt import Sprt, result
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("sprt_prior", root / "scripts" / "sprt_prior.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main() == 0
    table = [x for x in capsys.readouterr().out.splitlines() if x.startswith("|")]
    doc = (root / "docs" / "baselines.md").read_text()
    assert len(table) >= 8 and all(row in doc for row in table), table
    assert any("pooled_champion_w96_41800.json` | 200 | H1 at deal 51 | H1 at deal 49 |" in row for row in table)
    assert any("pooled_champion_z1.5c16_40000.json` | 58 | H0 at deal 58 | H0 at deal 28 |" in row for row in table)
    assert "LLR_PRIOR" in doc and "no maximum-likelihood answer" in doc
    method = result(Sprt(), 0.0, 3)["method"]
    assert "prior of one virtual deal" in method and "fishtest" in method
