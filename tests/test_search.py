"""The search agent (agents/search.py, spec ``search(...)``): its spec, its rollouts against the reference
engine, its value estimate against the reference scoring, and reproducible play."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from agents.base import agent_action
from agents.registry import make_agent
from handfoot_env.actions import DISCARD_BASE, MELD_BASE
from handfoot_env.belief import sample_worlds
from handfoot_env.engine import Game
from handfoot_env.observation import action_mask, encode_observation
from handfoot_env.view import seat_view

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]


def _position(seed: int = 3, actions: int = 40) -> Game:
    g = Game("pagat")
    g.reset(seed=seed)
    champs = [make_agent("champion_v1") for _ in range(4)]
    for p, a in enumerate(champs):
        a.reset(p, g.rules, p)
    while g.round_actions < actions:
        p = g.current
        g.step(agent_action(champs[p], g, p))
    return g


def test_spec_arguments_and_errors():
    a = make_agent("search(worlds=4, candidates=2)", seed=1)
    assert a.name == "search(worlds=4, candidates=2)" and a.worlds == 4 and a.candidates == 2
    assert make_agent("search").name == "search"
    for spec, words in [("search(worlds=0)", "worlds"), ("search(depth=3)", "depth"),
                        ("search(base=strategic)", "not a trained policy"), ("search(confident=2)", "confident"),
                        ("search(weighted=3)", "weighted")]:
        with pytest.raises(ValueError, match=words) as e:
            make_agent(spec)
        assert "\n" not in str(e.value) and spec in str(e.value)


def test_params_are_the_agents_defaults():
    """``agents.search.PARAMS`` (what the docs and the registry quote) is what ``search`` builds."""
    import inspect

    from agents.search import PARAMS, SearchAgent
    sig = inspect.signature(SearchAgent.__init__).parameters
    assert {k: sig[k].default for k in PARAMS} == PARAMS
    a = make_agent("search")
    assert (a.worlds, a.candidates, a.confident, a.z, a.horizon, a.confirm, a.weighted) == (
        PARAMS["worlds"], PARAMS["candidates"], PARAMS["confident"], PARAMS["z"], PARAMS["horizon"],
        PARAMS["confirm"], PARAMS["weighted"])


def test_standing_is_the_reference_round_score_without_going_out():
    from handfoot_env.compiled.batch import standing
    from handfoot_env.compiled.batch import CoreBatch, state_row
    rng = random.Random(0)
    for preset in ("pagat", "six_player"):
        g = Game(preset)
        g.reset(seed=4)
        states = []
        while len(states) < 12:
            for _ in range(23):
                g.apply_legal(rng.choice(g.legal_actions()))
            states.append(g.clone())
        b = CoreBatch(preset, len(states))
        for i, s in enumerate(states):
            state_row(s, b.S[i])
        got = standing(b.S, b.R, g.num_teams)
        for i, s in enumerate(states):
            assert got[i].tolist() == [s.team_round_score(t)["total"] for t in range(s.num_teams)]


def test_rollouts_score_what_the_reference_engine_plays():
    g = _position()
    p = g.current
    agent = make_agent("search(worlds=3, candidates=2, confident=1.0)", seed=0)
    agent.reset(p, g.rules, 0)
    view = seat_view(g, p)
    worlds = sample_worlds(view, 3, rng=5)
    agent._worlds = lambda v, n: [w.clone() for w in worlds[:n]]
    legal = list(view.legal_actions)
    cands = legal[:2]
    values = agent._evaluate(view, cands, 3)
    assert values.shape == (3, 2)
    champs = [make_agent("champion_v1") for _ in range(4)]
    for q, a in enumerate(champs):
        a.reset(q, g.rules, q)
    rows = one_legal = 0
    for c, first in enumerate(cands):
        for w, world in enumerate(worlds):
            x = world.clone()
            x.step(first)
            rounds = len(x.round_scores)
            while len(x.round_scores) == rounds:
                q = x.current
                rows += 1
                one_legal += len(x.legal_actions()) == 1
                x.step(agent_action(champs[q], x, q))
            team = x.team_of[p]
            got = x.round_scores[rounds]
            assert values[w, c] == got[team] - max(v for t, v in enumerate(got) if t != team), (c, w)
    # the rows played without the network are those whose player had one legal action
    assert (agent.stats["rows"], agent.stats["one_legal"]) == (rows, one_legal) and 0 < one_legal < rows


def test_search_plays_legal_reproducible_moves_and_counts_its_searches():
    def run(seed):
        g = _position(seed=5, actions=10)
        agent = make_agent("search(worlds=2, candidates=2, horizon=12)", seed=0)
        champ = make_agent("champion_v1")
        for q in range(4):
            champ.reset(q, g.rules, q)
        agent.reset(0, g.rules, seed)
        moves = []
        while len(moves) < 12 and not g.game_over:
            q = g.current
            if q in (0, 2):
                obs = {"observation": encode_observation(g, q), "action_mask": action_mask(g, q)}
                a = agent.act(obs, seat_view(g, q))
                assert a in g.legal_actions()
                moves.append(a)
            else:
                a = agent_action(champ, g, q)
            g.step(a)
        return moves, dict(agent.stats)

    m1, s1 = run(7)
    m2, s2 = run(7)
    assert m1 == m2 and s1["searched"] == s2["searched"]
    assert s1["decisions"] == 12 and s1["searched"] >= 1 and s1["ticks"] <= 12 * s1["searched"]


def test_confirm_departs_only_where_the_first_test_did_and_fresh_worlds_agree():
    """``confirm=N`` runs the first test exactly as without it (same worlds from the same generator) and
    then tests the departure again in N fresh worlds: it departs to the same action or withdraws."""
    searched = departed = withdrawn = 0
    for seed, actions in [(5, 10), (6, 30), (7, 55), (8, 80), (9, 20), (11, 45)]:
        g = _position(seed=seed, actions=actions)
        q = g.current
        obs = {"observation": encode_observation(g, q), "action_mask": action_mask(g, q)}
        picks = []
        for spec in ("search(worlds=3, candidates=3, z=0, confident=1.0, horizon=10)",
                     "search(worlds=3, candidates=3, z=0, confident=1.0, horizon=10, confirm=3)"):
            agent = make_agent(spec, seed=0)
            agent.reset(q, g.rules, 4)
            picks.append((agent.act(obs, seat_view(g, q)), dict(agent.stats)))
        (a, sa), (b, sb) = picks
        assert sa["withdrawn"] == 0 and sb["deviated"] + sb["withdrawn"] == sa["deviated"]
        if sb["deviated"]:
            assert b == a
        elif sb["withdrawn"]:                 # withdrawn: the base policy's own choice
            champ = make_agent("champion_v1")
            champ.reset(q, g.rules, 0)
            assert b == agent_action(champ, g, q) != a
        searched += sb["searched"]
        departed += sb["deviated"]
        withdrawn += sb["withdrawn"]
    assert searched >= 4 and departed >= 1 and withdrawn >= 1, (searched, departed, withdrawn)
    with pytest.raises(ValueError, match="confirm"):
        make_agent("search(confirm=-1)")


@pytest.mark.parametrize("spec", ["search", f"search(base=policy:{ROOT / 'docs/results/dmc/actor.npz'})"])
def test_rollout_choices_are_the_base_policys_masked_argmax(spec):
    """The rollouts' forward pass runs a policy network's last layer only for the actions legal in some
    row (an action-value network scores through its own ``logits``): each row's choice is still the
    legal action of highest logit by the base policy's own ``logits``."""
    import numpy as np

    from handfoot_env.actions import NUM_ACTIONS

    agent = make_agent(spec, seed=0)
    policy = agent.policy
    rng = np.random.default_rng(0)
    positions = [_position(seed=s, actions=a) for s, a in [(1, 5), (2, 40), (3, 90), (4, 150)]]
    obs = np.stack([encode_observation(g, g.current) for g in positions] * 8).astype(np.float32)
    obs[4:] += rng.normal(0, 0.3, size=obs[4:].shape).astype(np.float32)
    mask = np.zeros((len(obs), NUM_ACTIONS), dtype=np.int8)
    for i in range(len(obs)):
        mask[i, rng.choice(NUM_ACTIONS, size=int(rng.integers(1, 40)), replace=False)] = 1
    mask[:4] = [action_mask(g, g.current) for g in positions]
    want = np.argmax(np.where(mask > 0, np.asarray(policy.logits(obs), dtype=np.float64), -np.inf), axis=1)
    got = agent.forward.best(obs, mask)
    assert got.tolist() == want.tolist()
    assert all(mask[i, a] for i, a in enumerate(got))


def test_decisions_are_those_recorded_before_confirm_existed():
    """With ``confirm=0`` (the default) a search draws the same worlds and decides as the agent did
    before the second test was added: actions, departures and the generator's next draw at four
    positions, recorded with that agent."""
    got = []
    for seed, actions in [(5, 10), (6, 30), (7, 55), (8, 80)]:
        g = _position(seed=seed, actions=actions)
        q = g.current
        agent = make_agent("search(worlds=4, candidates=3, z=0.5, confident=1.0, horizon=15)", seed=0)
        agent.reset(q, g.rules, 9)
        obs = {"observation": encode_observation(g, q), "action_mask": action_mask(g, q)}
        a = agent.act(obs, seat_view(g, q))
        got.append((a, int(agent.stats["deviated"]), int(agent.np_rng.integers(1 << 30))))
    assert got == [(11, 1, 339485714), (1, 0, 731279587), (11, 0, 375986673), (258, 1, 772052064)]


def test_bench_search_row_counts_games_and_searches(tmp_path):
    import json

    from experiments.bench.bench import bench_main
    cfg = tmp_path / "search.yaml"
    cfg.write_text("presets: [pagat]\ngrowth_presets: []\nrows: [search]\ngames: 1\ninterleave: 1\n"
                   "warmup_seconds: 0\nmemory: {instances: 1}\nclone: {states: 2, repeats: 1}\n"
                   "search: {spec: 'search(worlds=2, candidates=2, horizon=4, confident=0.3)', "
                   "opponent: champion, core: compiled}\n")
    assert bench_main([str(cfg), "--out", str(tmp_path / "out"), "--json"]) == 0
    row = json.loads((tmp_path / "out" / "bench.json").read_text())["rows"][0]
    assert row["status"] == "ok" and row["games"] == 1, row
    assert 0 < row["searched_per_game"] < row["search_decisions_per_game"]
    assert row["search_median_s"] > 0 and "per searched decision" in row["label"]
    assert row["rollout_rows_per_game"] > 0 and 0 < row["one_legal_fraction"] < 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("rows: [search]\nsearch: {spec: 'search(worlds=0)', opponent: champion, core: compiled}\n")
    assert bench_main([str(bad)]) == 2


def _script(name: str):
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pool_script():
    return _script("pool_evaluations")


def _part(folder, seed, scores=None, agents=("search", "champion"), rate=None, wins=None):
    import json
    folder.mkdir()
    if scores is not None:
        rate = sum(scores) / len(scores)
        wins = [round(2 * sum(scores)), round(2 * (len(scores) - sum(scores)))]     # two games a deal
        lines = ["agent_a,agent_b,deal,seed,result_g0,result_g1,diff_g0,diff_g1,score"]
        lines += [f"{agents[0]},{agents[1]},{i},{seed * 10 + i},0,0,0,0,{x}" for i, x in enumerate(scores)]
        (folder / "deals.csv").write_text("\n".join(lines) + "\n")
    (folder / "results.json").write_text(json.dumps({"mode": "duel", "agents": list(agents), "deals": 2,
                                                     "win_rate": rate, "wins": wins, "draws": 0, "seed": seed}))


def test_pool_evaluations_joins_parts_of_one_duel(tmp_path, capsys):
    import json
    pool = _pool_script()
    # parts that kept only results.json: samples of two deals each
    for i, (rate, wins) in enumerate([(0.75, [3, 1]), (0.5, [2, 2]), (1.0, [4, 0])]):
        _part(tmp_path / f"p{i}", i, rate=rate, wins=wins)
    assert pool.main([str(tmp_path / f"p{i}") for i in range(3)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["deals"] == 6 and out["wins"] == [9, 3] and out["win_rate"] == pytest.approx(0.75)
    assert out["method"] == pool.PARTS_METHOD
    lo, hi = out["win_rate_ci"]
    assert lo < 0.75 < hi
    assert pool.main([str(tmp_path / f"p{i}") for i in range(3)] + ["--sprt"]) == 2
    assert "deals.csv" in capsys.readouterr().err
    (tmp_path / "p1" / "results.json").write_text(json.dumps({"mode": "duel", "agents": ["search", "strategic"],
                                                              "deals": 2, "win_rate": 1, "wins": [4, 0], "draws": 0,
                                                              "seed": 1}))
    assert pool.main([str(tmp_path / f"p{i}") for i in range(3)]) == 2
    assert "differ" in capsys.readouterr().err
    (tmp_path / "p1" / "results.json").write_text(json.dumps({"mode": "duel", "agents": ["search", "champion"],
                                                              "deals": 2, "win_rate": 1, "wins": [4, 0], "draws": 0}))
    assert pool.main([str(tmp_path / f"p{i}") for i in range(3)]) == 2
    assert "p1/results.json: not an evaluation's results.json (no 'seed')" in capsys.readouterr().err


def test_pool_evaluations_gives_the_evaluations_per_deal_interval_and_replays_the_sprt(tmp_path, capsys):
    import json
    import math
    import statistics
    from experiments.evaluation.sprt import llr_path, parse_sprt
    from experiments.evaluation.stats import deal_interval, t975
    pool = _pool_script()
    parts = [[1.0, 0.5], [0.75, 1.0], [0.5, 0.25], [1.0, 1.0], [0.0, 1.0], [1.0, 0.75]] * 4
    folders = []
    for i, scores in enumerate(parts):        # written out of seed order: the pool orders them by seed
        folders.append(tmp_path / f"p{i}")
        _part(folders[-1], 100 - i, scores)
    assert pool.main([str(f) for f in folders]) == 0
    out = json.loads(capsys.readouterr().out)
    in_order = [x for s in reversed(parts) for x in s]
    assert out["deals"] == len(in_order) == 48
    assert out["win_rate"] == pytest.approx(sum(in_order) / 48)
    assert out["win_rate_ci"] == pytest.approx(list(deal_interval(in_order)))
    assert "per-deal" in out["method"] and "sprt" not in out
    # the sequential test, replayed over the deals in seed order, stops where the evaluation's would
    assert pool.main([str(f) for f in folders] + ["--sprt", "h0=0.5", "h1=0.7"]) == 0
    out = json.loads(capsys.readouterr().out)
    path, _ = llr_path(in_order, parse_sprt(["h0=0.5", "h1=0.7"]))
    stop = next(i for i, v in enumerate(path) if v >= out["sprt"]["upper"])
    assert out["sprt"]["decision"] == "H1" and out["sprt"]["deals"] == stop + 1 < 48
    assert out["at_stop"]["win_rate"] == pytest.approx(sum(in_order[:stop + 1]) / (stop + 1))
    assert pool.main([str(f) for f in folders] + ["--sprt", "h0=0.7", "h1=0.5"]) == 2
    assert "H0 must be below H1" in capsys.readouterr().err
    # the same deals played by a baseline: the paired per-deal difference
    base = []
    for i, scores in enumerate(parts):
        base.append(tmp_path / f"b{i}")
        _part(base[-1], 100 - i, [max(0.0, x - 0.25) for x in scores], agents=("champion", "champion"))
    assert pool.main([str(f) for f in folders] + ["--baseline"] + [str(f) for f in base]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"]
    diffs = [x - max(0.0, x - 0.25) for x in in_order]
    assert paired["baseline"] == "champion" and paired["deals"] == 48
    assert paired["difference"] == pytest.approx(sum(diffs) / 48)
    half = t975(47) * statistics.stdev(diffs) / math.sqrt(48)
    assert paired["difference_ci"] == pytest.approx([sum(diffs) / 48 - half, sum(diffs) / 48 + half])
    assert pool.main([str(f) for f in folders] + ["--baseline"] + [str(f) for f in base[:-1]]) == 2
    assert "not the same deals" in capsys.readouterr().err
    other = tmp_path / "other"
    _part(other, 1, [1.0, 1.0], agents=("champion", "strategic"))
    assert pool.main([str(folders[0]), "--baseline", str(other)]) == 2
    assert "opponent is strategic" in capsys.readouterr().err
    # two exploiters, each against its own target, on the same deals: compared only when asked
    theirs = []
    for i, scores in enumerate(parts):
        theirs.append(tmp_path / f"x{i}")
        _part(theirs[-1], 100 - i, [1.0 - x for x in scores], agents=("exploiter", "strategic"))
    assert pool.main([str(f) for f in folders] + ["--baseline"] + [str(f) for f in theirs]) == 2
    assert "opponent is strategic" in capsys.readouterr().err
    assert pool.main([str(f) for f in folders] + ["--baseline"] + [str(f) for f in theirs] + ["--other-opponent"]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"]
    assert paired["baseline_opponent"] == "strategic" and paired["deals"] == 48
    assert paired["difference"] == pytest.approx(sum(2 * x - 1 for x in in_order) / 48)
    assert pool.main([str(folders[0]), "--other-opponent"]) == 2
    assert "--other-opponent compares with a --baseline" in capsys.readouterr().err
    # a part whose deals.csv is another duel's, or not a deals.csv, is named
    (folders[0] / "deals.csv").write_text((folders[0] / "deals.csv").read_text().replace("champion", "greedy"))
    assert pool.main([str(f) for f in folders]) == 2
    assert "p0/deals.csv" in capsys.readouterr().err
    for text in ("a,b\n1,2\n", "agent_a,agent_b,deal,score\nsearch,champion,x,1\n"):
        (folders[0] / "deals.csv").write_text(text)
        assert pool.main([str(f) for f in folders]) == 2
        assert "not an evaluation's deals.csv" in capsys.readouterr().err
    _part(tmp_path / "again", 99, [1.0, 1.0])
    assert pool.main([str(folders[1]), str(tmp_path / "again")]) == 2
    assert "same match seed (99)" in capsys.readouterr().err


def test_weighted_worlds_search_at_the_draw_after_a_discard():
    g = _position(seed=6, actions=30)
    while g.phase != 0 or not g.history or not DISCARD_BASE <= g.history[-1][1] < MELD_BASE:
        champ = make_agent("champion_v1")
        champ.reset(g.current, g.rules, 0)
        g.step(agent_action(champ, g, g.current))
    p = g.current
    agent = make_agent("search(worlds=3, candidates=2, horizon=5, confident=1.0, weighted=true)", seed=0)
    agent.reset(p, g.rules, 1)
    a = agent.act({"observation": encode_observation(g, p), "action_mask": action_mask(g, p)}, seat_view(g, p))
    assert a in g.legal_actions()
    assert agent.stats["searched"] == (1 if len(g.legal_actions()) > 1 else 0)


def _gains_record(top, gain_a, se_a, gain_b, se_b=None):
    return {"top": top, "pickup": False, "candidates": list(range(len(gain_a))), "gain_a": gain_a, "se_a": se_a,
            "gain_b": gain_b, "se_b": se_b or se_a}


def test_search_gains_scores_a_departure_chosen_in_one_half_by_the_other():
    sg = _script("search_gains")
    recs = [
        # A: candidate 2 gains 50 at se 20 (2.5 se); B scores it -30. B: candidate 1 at 40/20 (2 se); A scores it 10
        _gains_record(0.4, [0, 10, 50], [0, 20, 20], [0, 40, -30]),
        # neither half departs at z=1: A's best 5 < 1 x 10, B's best is candidate 0
        _gains_record(0.9, [0, 5, -20], [0, 10, 10], [0, -1, -2]),
    ]
    r = sg.held_out(recs, 1.0)
    assert r["decisions"] == 2 and r["departs"] == 0.5
    assert r["gain"] == pytest.approx((-30 + 10 + 0 + 0) / 4) and r["per_departure"] == pytest.approx(-10)
    # a decision's two ways are averaged first: decisions -10 and 0, their standard error 5
    assert r["gain_se"] == pytest.approx(5.0)
    r = sg.held_out(recs, 2.2)                       # only A's 2.5-se departure is left
    assert r["departs"] == 0.25 and r["gain"] == pytest.approx(-30 / 4)
    zero = sg.held_out([_gains_record(0.4, [0, 30], [0, 10], [0, 0])], 1.0)     # a departure that gains 0
    assert zero["departs"] == 0.5 and zero["per_departure"] == 0.0 and zero["gain"] == 0.0
    rows = sg.report(recs, [1.0])
    assert [(row["band"], row["decisions"]) for row in rows] == [("0.00-0.50", 1), ("0.80-0.95", 1), ("all", 2)]


def test_search_gains_probes_reproducibly_and_names_a_bad_records_file(tmp_path, capsys):
    import json
    sg = _script("search_gains")
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}.jsonl"
        assert sg.main(["--games", "1", "--seed", "3", "--sample", "0.03", "--worlds", "3",
                        "--spec", "search(candidates=2, horizon=6)", "--out", str(out)]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1] and outs[0]
    for line in outs[0].splitlines():
        r = json.loads(line)
        assert len(r["candidates"]) == 2 and r["gain_a"][0] == 0 and r["gain_b"][0] == 0
        assert r["top"] < 0.95 or r["pickup"]
    capsys.readouterr()
    assert sg.main(["--report", str(tmp_path / "r0.jsonl"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["rows"][-1]["band"] == "all" and rep["rows"][-1]["decisions"] == len(outs[0].splitlines())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(outs[0].splitlines()[0] + "\n" + '{"top": 0.3, "candidates": [1, 2]}\n')
    assert sg.main(["--report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl, line 2: not a search_gains record" in err and len(err.strip().splitlines()) == 1
    rest = '"se_a": [0, 1], "gain_b": [0, 1], "se_b": [0, 1]}'
    for line in ['{"top": "0.3", "candidates": [1, 2], "gain_a": [0, 1], ' + rest,
                 '{"top": 0.3, "candidates": [1, 2], "gain_a": [0, null], ' + rest, '[1, 2]']:
        bad.write_text(line + "\n")
        assert sg.main(["--report", str(bad)]) == 2
        err = capsys.readouterr().err
        assert "bad.jsonl, line 1: not a search_gains record" in err and len(err.strip().splitlines()) == 1
    kept = tmp_path / "r0.jsonl"
    for args, words in [(["--spec", "champion"], "must be a search spec"),
                        (["--spec", "search(base='policy:nowhere.npz')"], "nowhere.npz"),
                        (["--worlds", "5000"], "--worlds")]:
        assert sg.main(args + ["--out", str(kept)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1
        assert kept.read_text() == outs[0]                 # a refused run leaves the records it would replace
    assert sg.main(["--games", "1", "--out", str(tmp_path)]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_a_world_with_no_legal_action_stops_its_rollouts_and_is_scored_as_it_stands(monkeypatch):
    """A world kept after the sampler's tries though its turn player cannot go on (here: owing a pickup's
    meld it cannot complete once its partner, the searching seat, has answered) ends its rollouts where
    it stands instead of failing the search."""
    import handfoot_env.belief as belief
    from handfoot_env.compiled.batch import standing
    from handfoot_env.compiled.batch import CoreBatch, state_row
    from tests.helpers import answer_with_a_meld_owed
    g = answer_with_a_meld_owed()
    seat, view = g.current, seat_view(g, g.current)
    monkeypatch.setattr(belief, "_viable", lambda world, s: True)     # the sampler without its rejection
    pool = sample_worlds(view, 200, rng=3)

    def dead_end(w, answer):
        x = w.clone()
        x.apply_legal(answer)
        return not x.legal_actions()
    stuck = [w for w in pool if dead_end(w, view.legal_actions[0]) and dead_end(w, view.legal_actions[1])]
    live = [w for w in pool if not dead_end(w, view.legal_actions[0]) and not dead_end(w, view.legal_actions[1])]
    assert stuck and live
    agent = make_agent("search(worlds=2, candidates=2, confident=1.0)", seed=0)
    agent.reset(seat, g.rules, 0)
    worlds = [stuck[0], live[0]]
    agent._worlds = lambda v, n: [w.clone() for w in worlds[:n]]
    cands = list(view.legal_actions)
    values = agent._evaluate(view, cands, 2)
    assert agent.stats["stuck"] == 2                                 # the stuck world, once per candidate
    b = CoreBatch(g.rules, 1)
    for c, answer in enumerate(cands):
        x = stuck[0].clone()
        x.apply_legal(answer)
        state_row(x, b.S[0])
        own = standing(b.S, b.R, view.num_teams)[0]
        assert values[0, c] == own[view.team] - max(v for t, v in enumerate(own) if t != view.team)
