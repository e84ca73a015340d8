"""The duplicate-format evaluation harness: statistics, determinism across worker counts,
outputs, records and the CLI's error handling."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import agents
from experiments.evaluation import harness as ev
from experiments.evaluation.stats import bradley_terry_elo
from experiments.evaluation.harness import EvalConfig, run_evaluation
from experiments.evaluation.stats import deal_interval, mean_ci, pair_stats, t975, win_rate_ci, wilson_ci
from handfoot_env import Game, load_rules
from handfoot_env.actions import ACTION_INDEX
from experiments.apps.cli import main as cli_main
from handfoot_env.compiled import available as compiled_available


def _strip(res):
    res = dict(res)
    res.pop("timing", None)
    res.pop("out", None)
    return res


# ----------------------------------------------------------------------------- statistics
def test_t_quantiles():
    assert t975(1) == 12.706 and t975(3) == 3.182 and t975(30) == 2.042
    assert abs(t975(60) - 2.0003) < 1e-3
    assert abs(t975(120) - 1.9799) < 1e-3
    assert abs(t975(10 ** 6) - 1.95997) < 1e-4


def test_ci_known_case():
    # four deals, pair means of A's outcomes 1, 1/2, 1, 3/4 (by hand):
    # mean 0.8125; squared deviations 0.03515625 + 0.09765625 + 0.03515625 + 0.00390625 = 0.171875;
    # var = 0.171875 / 3 = 0.0572917; se = sqrt(var / 4) = 0.1196784; t(0.975, 3) = 3.182;
    # half-width 0.380817 -> [0.431683, 1.193317], clipped to [0.431683, 1]
    m, ci = mean_ci([1.0, 0.5, 1.0, 0.75], 0.0, 1.0)
    assert m == pytest.approx(0.8125)
    assert ci[0] == pytest.approx(0.431683, abs=1e-6)
    assert ci[1] == 1.0
    m, ci = mean_ci([1.0, 0.5, 1.0, 0.75])
    assert ci[1] == pytest.approx(1.193317, abs=1e-6)
    # degenerate cases
    assert mean_ci([0.5]) == (0.5, None)
    assert mean_ci([1.0, 1.0, 1.0]) == (1.0, [1.0, 1.0])


def test_win_rate_ci_stays_honest_at_a_perfect_record():
    # 100 deals all won: the exact bound, 0.025 ** (1 / 100) = exp(log(0.025) / 100) = 0.963783
    m, ci = win_rate_ci([1.0] * 100)
    assert m == 1.0
    assert ci[0] == pytest.approx(0.963783, abs=1e-6) and ci[1] == 1.0
    # the win rate's interval is the per-deal interval, whatever the record
    m, ci = win_rate_ci([1.0, 0.5, 1.0, 0.75])
    assert m == 0.8125 and ci == list(deal_interval([1.0, 0.5, 1.0, 0.75]))
    assert win_rate_ci([])[1] is None
    assert wilson_ci(0.5, 0) is None


def _deal(outcomes, diffs):
    stats = {"books": [1, 0, 0], "went_out": 0, "rounds": 4, "actions": 100, "pickups": 2}
    return {"games": [{"outcome": o, "diff": d, "score": [d, 0.0], "stats": [stats, stats]}
                      for o, d in zip(outcomes, diffs)]}


def test_pair_stats_uses_per_deal_pair_means():
    deals = [_deal([1, 1], [100, 300]), _deal([1, 0], [50, -50]), _deal([1, 1], [200, 0]),
             _deal([0.5, 1], [0, 100])]
    st = pair_stats(deals)
    assert st["games"] == 8 and st["deals"] == 4
    assert st["wins"] == [6, 1] and st["draws"] == 1
    assert st["win_rate"] == pytest.approx(0.8125)
    assert st["win_rate_ci"] == list(deal_interval([1.0, 0.5, 1.0, 0.75]))
    # ADP: pair means 200, 0, 100, 50 -> mean 87.5, sd 85.39126, se 42.69563, half 135.8575
    assert st["adp"] == pytest.approx(87.5)
    assert st["adp_ci"][0] == pytest.approx(87.5 - 3.182 * math.sqrt(21875 / 3 / 4), abs=1e-6)
    assert st["per_side"][0]["clean_books_per_game"] == 1.0
    assert st["per_side"][0]["going_out_rate"] == 0.0


def test_bradley_terry_ratings():
    names = ["a", "b", "c"]
    even = bradley_terry_elo(names, {(0, 1): 5, (0, 2): 5, (1, 2): 5}, {(0, 1): 10, (0, 2): 10, (1, 2): 10})
    assert all(abs(x - 1500) < 1e-6 for x in even)
    r = bradley_terry_elo(names, {(0, 1): 10, (0, 2): 10, (1, 2): 8}, {(0, 1): 10, (0, 2): 10, (1, 2): 10})
    assert r[0] > r[1] > r[2] and all(math.isfinite(x) for x in r)
    assert abs(sum(r) / 3 - 1500) < 1e-6


def test_deal_seeds_and_lineups():
    assert ev.deal_seed(0, 1) == ev.deal_seed(0, 1) != ev.deal_seed(0, 2)
    assert ev.deal_seed(1, 0) != ev.deal_seed(0, 0)
    assert ev.lineup(2, False) == [0, 1] and ev.lineup(2, True) == [1, 0]
    assert ev.lineup(3, False) == [0, 1, 0] and ev.lineup(3, True) == [1, 0, 1]


# ----------------------------------------------------------------------------- tournaments
def test_small_round_robin(tmp_path):
    cfg = EvalConfig(agents=["random", "greedy", "strategic"], games=2, seed=3, workers=1, out=str(tmp_path),
                     progress=False)
    res = run_evaluation(cfg)
    assert res["mode"] == "round_robin" and res["games"] == 12
    assert len(res["pairs"]) == 3
    m = res["win_rate_matrix"]
    assert m[0][0] is None and m[0][1] + m[1][0] == pytest.approx(1.0)
    assert set(res["ratings"]) == {"random", "greedy", "strategic"}
    for name in ("results.json", "results.csv", "winrate.png", "ratings.png", "matrix.png"):
        assert (tmp_path / name).is_file()
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["agents"] == ["random", "greedy", "strategic"]
    for pr in saved["pairs"]:
        for key in ("agents", "games", "win_rate", "win_rate_ci", "adp", "adp_ci", "per_agent"):
            assert key in pr


def test_duel_outputs_and_keys(tmp_path):
    cfg = EvalConfig(agents=["strategic", "random"], games=3, seed=1, out=str(tmp_path), progress=False)
    res = run_evaluation(cfg)
    for key in ("agents", "games", "win_rate", "win_rate_ci", "adp", "adp_ci", "rules", "seed", "versions",
                "per_agent", "timing"):
        assert key in res
    assert res["games"] == 6 and res["deals"] == 3
    assert res["rules"]["decks"] == 5
    st = res["per_agent"]["strategic"]
    for key in ("clean_books_per_game", "dirty_books_per_game", "wild_books_per_game", "going_out_rate",
                "pickups_per_game", "actions_per_game"):
        assert key in st
    assert res["win_rate"] > 0.5
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert rows[0].startswith("agent_a,agent_b") and len(rows) == 2
    assert (tmp_path / "winrate.png").stat().st_size > 1000


def test_results_identical_with_one_and_two_workers(tmp_path):
    runs = []
    for w in (1, 2):
        cfg = EvalConfig(agents=["greedy", "random"], games=4, seed=5, workers=w, out=str(tmp_path / f"w{w}"),
                         progress=False, plots=False)
        run_evaluation(cfg)
        runs.append(json.loads((tmp_path / f"w{w}" / "results.json").read_text()))
    assert runs[0]["timing"]["workers"] == 1 and runs[1]["timing"]["workers"] == 2
    assert _strip(runs[0]) == _strip(runs[1])


def test_sequential_test_stops_at_the_same_deal_however_the_deals_are_played(tmp_path):
    """greedy wins every deal against random: H1 (0.9 against 0.5) is accepted after a handful of deals.
    One worker plays batches of 4 deals, two workers batches of 8, a task runner (the path of --ray)
    runs the chunks in reverse: the deals kept, the LLR and the records are the same."""
    runs = []
    for name, workers, runner in (("w1", 1, None), ("w2", 2, None),
                                  ("ray", 1, lambda fn, tasks: [fn(t) for t in tasks[::-1]][::-1])):
        cfg = EvalConfig(agents=["greedy", "random"], games=30, seed=3, workers=workers, out=str(tmp_path / name),
                         progress=False, plots=False, records=True, sprt={"h0": 0.5, "h1": 0.9})
        run_evaluation(cfg, task_runner=runner)
        runs.append(json.loads((tmp_path / name / "results.json").read_text()))
    sprt = runs[0]["sprt"]
    assert sprt["decision"] == "H1" and 3 <= sprt["deals"] < 8 and sprt["llr"] >= sprt["upper"]
    assert set(sprt) >= {"llr", "lower", "upper", "decision", "deals"}
    assert sprt["upper"] == pytest.approx(math.log(19)) and sprt["lower"] == pytest.approx(-math.log(19))
    assert runs[0]["deals"] == runs[0]["deals_per_pair"] == sprt["deals"] and runs[0]["games"] == 2 * sprt["deals"]
    assert _strip(runs[0]) == _strip(runs[1]) == _strip(runs[2])
    for name in ("w1", "w2", "ray"):
        rows = (tmp_path / name / "deals.csv").read_text().splitlines()
        assert rows[0].split(",")[:5] == ["agent_a", "agent_b", "deal", "seed", "result_g0"]
        assert len(rows) == 1 + sprt["deals"]
        assert len(list((tmp_path / name / "records").glob("*.json"))) == 2 * sprt["deals"]
    scores = [float(r.split(",")[-1]) for r in rows[1:]]
    assert runs[0]["win_rate_ci"] == list(deal_interval(scores))


def test_sprt_from_an_evaluation_config_and_a_sweep(tmp_path):
    from experiments.sweeps.config import evaluate_config
    cfg_file = tmp_path / "e.yaml"
    cfg_file.write_text("agents: [strategic, greedy]\ndeals: 500\nsprt: {elo0: 0, elo1: 50, beta: 0.1}\n")
    cfg = ev.load_config(cfg_file).validate()
    assert cfg.games == 500 and cfg.sprt == {"elo0": 0, "elo1": 50, "beta": 0.1}
    swept = evaluate_config(cfg_file, {"sprt": True}, seed=3)        # a sweep's override of the base config
    assert swept.sprt is True and swept.seed == 3


def test_cli_sprt(tmp_path, capsys):
    rc = cli_main(["evaluate", "--agents", "greedy", "random", "--sprt", "elo0=0", "elo1=400", "--deals", "12",
                   "--seed", "2", "--no-progress", "--no-plots", "--out", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert rc == 0 and "SPRT (H0 vs H1: Elo 0 vs 400" in out and "accepts H1" in out
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["sprt"]["elo1"] == 400 and res["sprt"]["h1"] == pytest.approx(1 / 1.1)
    assert "profile-likelihood" in res["method"] and "profile-likelihood" in out
    assert cli_main(["evaluate", "--agents", "greedy", "random", "--sprt", "h0=0.5", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "need both" in err and not (tmp_path / "x").exists()


def test_six_player_and_individual_duels(tmp_path):
    for rules in ("six_player", "individual"):
        cfg = EvalConfig(agents=["greedy", "random"], games=1, rules=rules, out=str(tmp_path / rules),
                         progress=False, plots=False)
        res = run_evaluation(cfg)
        assert res["games"] == 2 and 0.0 <= res["win_rate"] <= 1.0


def test_records_replay(tmp_path):
    cfg = EvalConfig(agents=["strategic", "greedy"], games=1, seed=2, out=str(tmp_path), records=True,
                     progress=False, plots=False)
    run_evaluation(cfg)
    files = sorted((tmp_path / "records").glob("*.json"))
    assert len(files) == 2
    for f in files:
        rec = json.loads(f.read_text())
        g = Game(load_rules(rec["rules"]))
        g.reset(seed=rec["seed"])
        for (p, name), a in zip(rec["action_log"], rec["actions"]):
            assert g.current == p and ACTION_INDEX[name] == a
            g.step(a)
        assert g.game_over and g.scores == rec["scores"]
        assert [list(x) for x in g.round_scores] == rec["round_scores"]


# ----------------------------------------------------------------------------- cores
CHAMPION = Path(agents.__file__).parent / "weights" / "champion_v1.npz"
needs_numba = pytest.mark.skipif(not compiled_available(), reason="the compiled core needs Numba")


@needs_numba
@pytest.mark.parametrize("rules, agents", [
    ("pagat", ["champion", "strategic"]),
    ("pagat", ["champion", f"policy:{CHAMPION}?sample"]),
    ("bicycle", ["random", "greedy", "strategic"]),
    ("six_player", ["greedy", "strategic"]),
    ("individual", ["random", "strategic"]),
])
def test_both_cores_play_the_same_evaluation(tmp_path, rules, agents):
    """The same results, game statistics (books, pickups, rounds, went out) and records on both cores:
    a network seat on the compiled core reads its observation and mask from the compiled call."""
    res = {}
    for core in ("reference", "compiled"):
        cfg = EvalConfig(agents=agents, games=2, seed=3, rules=rules, core=core, records=True,
                         out=str(tmp_path / core), progress=False, plots=False)
        res[core] = run_evaluation(cfg)
        assert res[core]["timing"]["core"] == core
    assert _strip(res["reference"]) == _strip(res["compiled"])
    ref = sorted((tmp_path / "reference" / "records").glob("*.json"))
    assert ref and [f.name for f in ref] == sorted(f.name for f in (tmp_path / "compiled" / "records").glob("*.json"))
    for f in ref:
        assert f.read_text() == (tmp_path / "compiled" / "records" / f.name).read_text(), f.name


@pytest.mark.parametrize("core", ["reference", pytest.param("compiled", marks=needs_numba)])
def test_books_statistics_count_every_round(core):
    """A game's book counts are the sum over its rounds of each round's books as the round ended,
    derived here by replaying the recorded game (the compiled core deals the next round inside the
    action that ends one, so it reports the books before that deal)."""
    rules = load_rules("pagat")
    for seed in (11, 12, 13):
        res = ev.play_game(rules, ["strategic", "greedy", "strategic", "greedy"], seed, 0, record=True, core=core)
        g = Game(rules)
        g.reset(seed=seed)
        per_round = []
        for a in res["record"]["actions"]:
            books, rounds = g.book_counts, len(g.round_details)
            g.step(a)
            if len(g.round_details) > rounds:
                per_round.append([list(x) for x in books])      # the finished round's list, kept at its end
        assert g.game_over and len(per_round) == res["rounds"] >= 2
        assert res["books"] == [[sum(r[t][k] for r in per_round) for k in range(3)] for t in range(2)]
        assert sum(map(sum, res["books"])) > 0


def test_auto_core_is_compiled_for_pairings_with_a_network_seat():
    net = "compiled" if compiled_available() else "reference"
    assert ev.eval_core("auto", ["champion", f"policy:{CHAMPION}?sample"]) == net
    assert ev.eval_core("auto", ["champion", "strategic"]) == net
    assert ev.eval_core("auto", ["strategic", "greedy"]) == "reference"
    assert ev.eval_core("reference", ["champion", "champion"]) == "reference"


def test_a_round_robin_runs_each_pairing_on_its_core(tmp_path):
    """``core: auto`` is decided per pairing: the champion's games on the compiled core (when Numba is
    installed), the heuristics' game with each other on the reference; results.json names both."""
    cfg = EvalConfig(agents=["champion", "greedy", "random"], games=1, seed=3, workers=1, plots=False,
                        progress=False, out=str(tmp_path / "rr"))
    res = run_evaluation(cfg)
    if not compiled_available():
        assert res["timing"]["core"] == "reference"
        return
    assert res["timing"]["core"] == "mixed"
    assert res["timing"]["core_by_pair"] == [["champion", "greedy", "compiled"], ["champion", "random", "compiled"],
                                             ["greedy", "random", "reference"]]
    saved = json.loads((tmp_path / "rr" / "results.json").read_text())
    assert saved["timing"]["core_by_pair"] == res["timing"]["core_by_pair"]


def test_bad_core_is_one_line(tmp_path, capsys):
    assert cli_main(["evaluate", "--agents", "greedy", "random", "--core", "fast", "--out", str(tmp_path / "r")]) == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err
    cfg = tmp_path / "e.yaml"
    cfg.write_text("agents: [greedy, random]\ncore: fast\n")
    assert cli_main(["evaluate", str(cfg), "--out", str(tmp_path / "r")]) == 2
    assert "'core': core must be" in capsys.readouterr().err


# ----------------------------------------------------------------------------- CLI
def test_cli_quick_flags(tmp_path, capsys):
    rc = cli_main(["evaluate", "--agents", "greedy", "random", "--games", "1", "--seed", "4", "--workers", "1",
                   "--out", str(tmp_path), "--no-progress", "--no-plots"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "win rate" in out
    assert json.loads((tmp_path / "results.json").read_text())["seed"] == 4


def test_cli_config_file(tmp_path, capsys):
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(f"agents: [strategic, greedy]\ngames: 1\nseed: 2\nworkers: 1\nrules: bicycle\n"
                   f"out: {tmp_path / 'run'}\nplots: false\nprogress: false\n")
    assert cli_main(["evaluate", str(cfg)]) == 0
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["rules"]["decks"] == 6 and res["games"] == 2


@pytest.mark.parametrize("text, msg", [
    ("agents: [strategic, greedy]\nbogus: 1\n", "unknown field 'bogus'"),
    ("agents: [strategic]\n", "at least two"),
    ("agents: [strategic, chess_master]\n", "unknown agent spec"),
    ("agents: [strategic, greedy]\ngames: 0\n", "'games'"),
    ("agents: [strategic, greedy]\ngames: many\n", "'games' must be an integer"),
    ("agents: [strategic, greedy]\nrules: no_such_preset\n", "'rules'"),
    ("agents: [strategic, greedy]\nrules: {decks: 0}\n", "decks"),
    ("agents: [strategic, greedy]\nworkers: -1\n", "'workers'"),
    ("- just a list\n", "expected a mapping"),
    ("agents: [strategic, greedy, random]\nsprt: true\n", "'sprt': a sequential test compares two agents"),
    ("agents: [strategic, greedy]\nsprt: {h0: 0.6, h1: 0.5}\n", "H0 must be below H1"),
    ("agents: [strategic, greedy]\nsprt: {p1: 0.6}\n", "unknown key 'p1'"),
])
def test_cli_bad_config_exits_2(tmp_path, capsys, text, msg):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    assert cli_main(["evaluate", str(cfg), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert msg in err
    assert not (tmp_path / "run").exists()


def test_cli_bad_flags_exit_2(tmp_path, capsys):
    assert cli_main(["evaluate", "--agents", "greedy", "--out", str(tmp_path)]) == 2
    assert cli_main(["evaluate", "--agents", "greedy", "random", "--workers", "x"]) == 2
    assert cli_main(["evaluate", str(tmp_path / "missing.yaml")]) == 2
    assert cli_main(["evaluate"]) == 2
    assert cli_main(["evaluate", "--games", "abc"]) == 2
