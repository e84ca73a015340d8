"""Team specs ``team(A,B)``: a side of different agents, A in each of its teams' first seat and B in the
second; parsing, seats, the duplicate swap, records and refusals."""
from __future__ import annotations

import json

import pytest

from agents.registry import check_side, make_agent, side_specs, team_members
from experiments.apps.cli import main
from experiments.evaluation.harness import EvalConfig, EvalConfigError, run_evaluation
from handfoot_env.config import load_rules

PAGAT, SIX, INDIVIDUAL = load_rules("pagat"), load_rules("six_player"), load_rules("individual")


def test_members_in_seat_order_with_arguments_and_spaces():
    assert team_members("team(champion,strategic)") == ["champion", "strategic"]
    assert team_members(" team( strategic(draw_worth=1.5, wilds=spend) , greedy ) ") == \
        ["strategic(draw_worth=1.5, wilds=spend)", "greedy"]
    assert team_members("team(random,greedy,random)") == ["random", "greedy", "random"]
    for spec in ("strategic", "strategic(draw_worth=1.5)", "policy:runs/team(a,b)", "champion"):
        assert team_members(spec) is None


def test_a_side_is_one_spec_per_seat_of_a_team():
    assert side_specs("team(champion,strategic)", PAGAT) == ["champion", "strategic"]
    assert side_specs("strategic", PAGAT) == ["strategic", "strategic"]
    assert side_specs("team(random,greedy,random)", SIX) == ["random", "greedy", "random"]
    assert side_specs("greedy", INDIVIDUAL) == ["greedy"]
    assert check_side("team(greedy,random)", PAGAT) == ["greedy", "random"]


@pytest.mark.parametrize("spec, rules, words", [
    ("team(champion)", PAGAT, "expected team(A,B)"),
    ("team(champion,)", PAGAT, "with an empty one"),
    ("team(team(random,greedy),random)", PAGAT, "a team cannot hold a team"),
    ("team(champion,strategic)", INDIVIDUAL, "these rules have no partnerships"),
    ("team(champion,strategic)", SIX, "names 2 agents, but a team of these rules has 3 seats"),
    ("team(random,greedy,random)", PAGAT, "names 3 agents, but a team of these rules has 2 seats"),
    ("team(champion,nobody)", PAGAT, "team spec 'team(champion,nobody)': unknown agent spec 'nobody'"),
    ("team(champion,strategic(depth=3))", PAGAT, "team spec 'team(champion,strategic(depth=3))'"),
])
def test_bad_teams_are_one_line_naming_the_team(spec, rules, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_side(spec, rules)


def test_a_team_is_not_one_agent():
    with pytest.raises(ValueError, match="is a team of 2 seats, not one agent"):
        make_agent("team(random,greedy)")


def _records(tmp_path, agents, rules="pagat", deals=1):
    out = tmp_path / "out"
    res = run_evaluation(EvalConfig(agents=agents, games=deals, seed=11, rules=rules, out=str(out), records=True,
                                    plots=False, progress=False))
    recs = [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]
    return res, recs, out


def test_seats_and_the_duplicate_swap_move_the_whole_team(tmp_path):
    res, recs, _ = _records(tmp_path, ["team(greedy,random)", "random"])
    assert [r["seats"] for r in recs] == [["greedy", "random", "random", "random"],     # the team on seats 0 and 2
                                           ["random", "greedy", "random", "random"]]    # swapped: seats 1 and 3
    assert recs[0]["team_of"] == [0, 1, 0, 1]
    assert res["agents"] == ["team(greedy,random)", "random"] and set(res["per_agent"]) == set(res["agents"])


def test_a_team_of_one_agent_plays_the_games_of_that_agent(tmp_path):
    """team(random,random) against greedy is random against greedy: the same seats, seeds and games."""
    team, recs_t, out_t = _records(tmp_path / "t", ["team(random,random)", "greedy"], deals=2)
    plain, recs_p, out_p = _records(tmp_path / "p", ["random", "greedy"], deals=2)
    assert [r["actions"] for r in recs_t] == [r["actions"] for r in recs_p]
    def rows(out):                         # every column but the side's label
        return [line.rsplit(",", 8)[1:] for line in (out / "deals.csv").read_text().splitlines()[1:]]
    assert rows(out_t) == rows(out_p) and len(rows(out_t)) == 2


def test_a_team_of_three(tmp_path):
    _, recs, _ = _records(tmp_path, ["team(random,greedy,random)", "random"], rules="six_player")
    assert recs[0]["team_of"] == [0, 1, 0, 1, 0, 1]
    assert recs[0]["seats"] == ["random", "random", "greedy", "random", "random", "random"]
    assert recs[1]["seats"] == ["random", "random", "random", "greedy", "random", "random"]


@pytest.mark.parametrize("argv, words", [
    (["--agents", "team(strategic,nobody)", "strategic"], "'agents': team spec 'team(strategic,nobody)': unknown"),
    (["--agents", "team(strategic)", "strategic"], "expected team(A,B)"),
    (["--agents", "team(strategic,greedy)", "strategic", "--rules", "individual"], "no partnerships"),
    (["--agents", "team(strategic,greedy)", "strategic", "--rules", "six_player"], "names 2 agents"),
])
def test_the_command_refuses_in_one_line(tmp_path, argv, words, capsys):
    assert main(["evaluate"] + argv + ["--deals", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot evaluate: error:") and words in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_an_evaluation_config_refuses_a_bad_team():
    with pytest.raises(EvalConfigError, match="names 2 agents"):
        EvalConfig(agents=["team(random,greedy)", "random"], rules="six_player").validate()


def test_training_seats_play_the_members():
    """The seat plan's agents (batched samplers, SeatEnv, the RLlib env): each seat its member."""
    import numpy as np
    from agents.heuristics import GreedyAgent, RandomAgent
    from experiments.training.selfplay import SeatAgents
    agents, rng = SeatAgents(), np.random.default_rng(0)
    kinds = [type(agents.seat((0, p), "team(greedy,random)", p, PAGAT, rng)) for p in range(4)]
    assert kinds == [GreedyAgent, GreedyAgent, RandomAgent, RandomAgent]     # seats 0, 1 first of their teams
    assert type(agents.seat((1, 0), "greedy", 0, PAGAT, rng)) is GreedyAgent


def test_a_best_response_to_a_team(tmp_path):
    from experiments.training.exploit import exploit_main
    out = tmp_path / "br"
    argv = ["--agent", "team(greedy,random)", "--decisions", "128", "--deals", "1", "--curve-points", "1",
            "--out", str(out), "--quiet", "--set", "backend=batched", "--set", "n_envs=2",
            "--set", "ppo.n_steps=32", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1",
            "--set", "batched={games: 4, samplers: 0, pipeline: false}", "--set", "network.pi=[16]",
            "--set", "network.vf=[16]", "--set", "evaluation.deals=1", "--set", "evaluation.workers=1"]
    assert exploit_main(argv) == 0
    s = json.loads((out / "exploit.json").read_text())
    assert s["agent"] == "team(greedy,random)" and s["final"]["games"] == 2


def test_a_training_config_refuses_a_team_that_does_not_fit(capsys):
    from experiments.config import ConfigError, config_from_dict
    from experiments.training.config import TrainConfig
    with pytest.raises(ConfigError, match=r"opponents.team\(greedy,random\): team spec .* no partnerships"):
        config_from_dict(TrainConfig, {"rules": "individual", "opponents": {"team(greedy,random)": 1.0}})
    with pytest.raises(ConfigError, match=r"evaluation.opponents: team spec .* names 2 agents"):
        config_from_dict(TrainConfig, {"rules": "six_player", "evaluation": {"opponents": ["team(greedy,random)"]}})
    with pytest.raises(ConfigError, match=r"opponents.team\(greedy,nobody\): unknown agent spec 'nobody'"):
        config_from_dict(TrainConfig, {"opponents": {"team(greedy,nobody)": 1.0}})
    assert main(["exploit", "--agent", "team(greedy)"]) == 2
    assert "--agent: team spec 'team(greedy)': expected team(A,B)" in capsys.readouterr().err


def test_the_leaderboard_rates_a_team_as_one_entrant(tmp_path, monkeypatch, capsys):
    from experiments.evaluation import leaderboard as lb
    monkeypatch.setattr(lb, "champion_available", lambda name: False)
    out = tmp_path / "board"
    assert lb.leaderboard_main(["--games", "1", "--seed", "2", "--bootstrap", "10", "--out", str(out),
                                "--no-progress", "--agents", "team(greedy,random)"]) == 0
    data = json.loads((out / "leaderboard.json").read_text())
    assert data["board"]["specs"] == ["random", "greedy", "strategic", "team(greedy,random)"]
    pairs = [p for p in data["results"]["pairs"] if "team(greedy,random)" in p["agents"]]
    assert len(pairs) == 3 and all(len(p["deal_win_rates"]) == 1 for p in pairs)
    assert "`team(greedy,random)`" in (out / "leaderboard.md").read_text()
    assert "team(greedy,random)" in capsys.readouterr().out
