"""League training (experiments.training.league): the PFSP weighting, the payoff table, members seated by
the seat plan, exploiters' restarts, ``league.json`` and its round trip through a checkpoint, resume, and
the refusals (unknown spec, a member file that is not a policy, another run's league file)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch as th

from agents.policy import actor_arrays, load_actor, save_actor
from experiments.apps.cli import main
from experiments.config import ConfigError, config_from_dict
from experiments.training.batched_ppo import ActorCritic, actor_weights
from experiments.training.config import TrainConfig
from experiments.training.league import (
    LEAGUE_FILE,
    League,
    Payoff,
    check_league_checkpoint,
    league_pool,
    pfsp_weights,
    read_league,
)
from experiments.training.sampler import Sampler
from experiments.training.selfplay import AGENT, LEARN, SNAP, plan_seats
from experiments.training.trainer import train

#: one short round: games end within a few hundred actions, so a tiny league sees results in seconds
SHORT_RULES = "players: 4\nteams: 2\ndecks: 2\nhand_size: 5\nfoot_size: 5\nminimums: [50]\n"


def small_policy(tmp_path: Path, seed: int = 5) -> Path:
    """An ``actor.npz`` with random weights (hidden layer of 16, relu)."""
    th.manual_seed(seed)
    path = tmp_path / f"policy-{seed}" / "actor.npz"
    path.parent.mkdir(parents=True)
    save_actor(actor_weights(ActorCritic(4, 2, [16], [8], "relu")), path)
    return path


def league_data(tmp_path: Path, **league) -> dict:
    rules = tmp_path / "short.yaml"
    rules.write_text(SHORT_RULES)
    lc = {"enabled": True, "pool": ["greedy"], "self_play": 0.2, "refresh_updates": 1, "exploiter_share": 0.5,
          "exploiter_games": 4, "exploiter_window": 4, "exploiter_threshold": 0.99, "exploiter_budget": 10 ** 9}
    lc.update(league)
    return {"name": "lg", "seed": 3, "rules": str(rules), "backend": "batched", "total_timesteps": 512, "n_envs": 2,
            "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}, "network": {"pi": [16], "vf": [16]},
            "batched": {"games": 4, "samplers": 0, "pipeline": False}, "snapshots": {"every_updates": 2, "keep": 2},
            "evaluation": {"every_timesteps": 0, "final_deals": 0, "opponents": ["greedy"]},
            "checkpoint_every": 256, "keep_checkpoints": 0, "run_dir": str(tmp_path / "runs"), "progress": False,
            "league": lc}


def same_arrays(a: dict, b: dict) -> bool:
    x, y = actor_arrays(a), actor_arrays(b)
    return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


# ---------------------------------------------------------------------------- PFSP and the payoff table
def test_pfsp_weightings():
    rates = [0.0, 0.5, 0.9, None]
    hard = pfsp_weights(rates, "hard", 2.0)
    expect = np.array([1.0, 0.25, 0.01, 0.25])
    assert np.allclose(hard, expect / expect.sum())
    var = pfsp_weights(rates, "variance")
    assert var[0] == 0.0 and np.isclose(var[1], var[3]) and var[1] > var[2] > 0
    assert np.allclose(pfsp_weights(rates, "uniform"), 0.25)
    assert np.allclose(pfsp_weights([1.0, 1.0], "hard"), 0.5)          # every weight 0: uniform
    assert np.allclose(pfsp_weights([0.2, 0.6], "hard", 1.0), np.array([0.8, 0.4]) / 1.2)
    with pytest.raises(ValueError, match="weighting"):
        pfsp_weights([0.5], "greedy")


def test_payoff_counts_both_sides_decays_the_recent_counts_and_round_trips():
    p = Payoff(decay=0.5)
    p.add("main", "greedy", [1.0, 1.0, 0.5, 0.0])
    assert p.rate("main", "greedy") == pytest.approx(2.5 / 4) and p.rate("greedy", "main") == pytest.approx(1.5 / 4)
    p.add("main", "greedy", [0.0, 0.0])
    # recent: (2.5 * 0.5 + 0) / (4 * 0.5 + 2); all games: 6, 2.5 wins
    assert p.rate("main", "greedy") == pytest.approx(1.25 / 4.0)
    m = p.matrices(["main", "greedy", "x"])
    assert m["games"] == [[0, 6, 0], [6, 0, 0], [0, 0, 0]]
    assert m["wins"][0][1] == 2.5 and m["wins"][1][0] == 3.5
    assert m["payoff"][0][2] is None and m["payoff"][0][0] is None
    q = Payoff.from_dict(json.loads(json.dumps(p.to_dict())))
    assert q.to_dict() == p.to_dict() and q.rate("main", "greedy") == p.rate("main", "greedy")
    p.drop("greedy")
    assert p.rate("main", "greedy") is None and p.matrices(["main"])["games"] == [[0]]


def test_plan_seats_seats_a_member_network_by_name_without_a_draw():
    rng = np.random.Generator(np.random.PCG64(1))
    before = rng.bit_generator.state
    plan = plan_seats("main@100", [0, 1, 0, 1], 1, 3, "uniform", rng, named={"main@100": 2, "champion": 0})
    assert plan.roles == [SNAP, LEARN, SNAP, LEARN] and plan.snapshot == 2 and plan.kind == "main@100"
    assert rng.bit_generator.state == before
    plan = plan_seats("greedy", [0, 1, 0, 1], 0, 3, "uniform", rng, named={"main@100": 2})
    assert plan.roles == [LEARN, AGENT, LEARN, AGENT] and plan.snapshot is None


def test_the_sampler_plays_the_mixture_of_a_league_pool_and_names_each_games_member(tmp_path):
    rules = tmp_path / "short.yaml"
    rules.write_text(SHORT_RULES)
    th.manual_seed(0)
    w = actor_weights(ActorCritic(4, 2, [16], [8], "tanh"))
    s = Sampler(str(rules), games=4, seed=2, opponents={"random": 1.0})
    pool = league_pool([w, w], ["main@64", "policy:x"], {"main@64": 0.5, "greedy": 0.5})
    out = s.rollout(600, w, pool)
    seen = {g["opponent"] for g in out["games"]}
    assert seen and seen <= {"main@64", "greedy"}
    assert s.named == {"main@64": 0, "policy:x": 1}


# ---------------------------------------------------------------------------- exploiters
def tiny_league(tmp_path: Path, **league) -> League:
    cfg = config_from_dict(TrainConfig, league_data(tmp_path, **league))
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    lg = League(cfg, run, seed=9)
    lg.setup(None, 0, 0, {})
    return lg


def main_weights() -> dict:
    th.manual_seed(1)
    return actor_weights(ActorCritic(4, 2, [16], [8], "tanh"))


def test_an_exploiter_restarts_from_its_start_weights_after_its_budget(tmp_path):
    start = small_policy(tmp_path)
    lg = tiny_league(tmp_path, exploiter_init=str(start), exploiter_budget=100)
    ex = lg.exploiters[0]
    assert same_arrays(ex.learner.actor(), load_actor(start))
    lg.exploiter_iteration(ex, main_weights(), steps=128)
    assert ex.generation == 1 and ex.decisions == 0 and ex.total >= 128 and ex.resets[0]["why"] == "budget"
    assert ex.resets[0]["step"] == 128 and ex.started == 128
    frozen = [m for m in lg.members() if m.kind == "exploiter"]
    assert [m.name for m in frozen] == ["main_exploiter0@128"] and frozen[0].origin == 128
    assert not same_arrays(lg.frozen_weights["main_exploiter0@128"], load_actor(start))   # it had learned
    assert same_arrays(ex.learner.actor(), load_actor(start))                             # back to its start
    lg.close()


def test_an_exploiter_restarts_when_it_beats_the_main_past_the_threshold(tmp_path):
    lg = tiny_league(tmp_path, exploiter_window=1, exploiter_threshold=0.0, keep_exploiters=1)
    ex = lg.exploiters[0]
    w = main_weights()
    for step in range(40):
        lg.exploiter_iteration(ex, w, steps=step)
        if ex.generation:
            break
    assert ex.generation == 1 and ex.resets[0]["why"] == "threshold" and ex.resets[0]["win_rate"] is not None
    assert list(ex.recent) == []
    # its games against the main went into the payoff table until the restart dropped the moving member
    assert lg.payoff.games("main_exploiter0", "main") == 0
    lg.close()


def test_the_main_pool_weights_members_by_pfsp_and_keeps_self_play(tmp_path):
    lg = tiny_league(tmp_path, pool=["greedy", "random"], self_play=0.2, weighting="hard", p=1.0)
    lg.payoff.add("main", "greedy", [1.0, 0.0])      # x = 0.5: weight 0.5
    lg.payoff.add("main", "random", [1.0, 1.0])      # x = 1: weight 0
    pool = lg.main_pool([], force=True)
    assert pool["names"] == ["main_exploiter0"]
    mix = pool["mixture"]
    assert mix["self"] == pytest.approx(0.2) and "random" not in mix
    assert mix["greedy"] == pytest.approx(0.8 * 0.5 / 1.0) and mix["main_exploiter0"] == pytest.approx(0.8 * 0.5)
    assert lg.main_pool([]) is None                  # nothing changed, no refresh due
    lg.close()


# ---------------------------------------------------------------------------- league.json and resume
def test_league_json_round_trips_through_a_checkpoint(tmp_path):
    lg = tiny_league(tmp_path, exploiter_budget=100)
    w = main_weights()
    lg.snapshot_added(64, 1)
    lg.exploiter_iteration(lg.exploiters[0], w, steps=64)
    lg.payoff.add("main", "greedy", [1.0, 0.5])
    lg.payoff.add("main", "main@64", [0.0])
    folder = tmp_path / "ck"
    folder.mkdir()
    lg.save(folder, 64)
    state = {"league_id": lg.id}
    saved = read_league(folder)
    assert [(m["name"], m["kind"], m["origin"]) for m in saved["members"]] == [
        ("main", "main", 0), ("main@64", "past_main", 64), ("greedy", "agent", 0),
        ("main_exploiter0", "main_exploiter", 64), ("main_exploiter0@64", "exploiter", 64)]
    names = saved["names"]
    assert len(saved["payoff"]) == len(names) and all(len(r) == len(names) for r in saved["payoff"])
    assert saved["games"][0][names.index("greedy")] == 2 and saved["payoff"][0][names.index("main@64")] == 0.0
    again = League(lg.cfg, lg.run, seed=10)
    again.setup(folder, 1, 64, state)
    assert again.to_dict(64) == lg.to_dict(64)
    a, b = lg.exploiters[0], again.exploiters[0]
    assert same_arrays(a.learner.actor(), b.learner.actor())
    for k, v in a.learner.optimizer.state_dict()["state"].items():
        assert all(th.equal(v[n], b.learner.optimizer.state_dict()["state"][k][n]) for n in v if th.is_tensor(v[n]))
    assert same_arrays(again.frozen_weights["main_exploiter0@64"], lg.frozen_weights["main_exploiter0@64"])
    lg.close()
    again.close()


def test_a_league_run_writes_league_json_and_resumes_mid_league(tmp_path):
    cfg = config_from_dict(TrainConfig, league_data(tmp_path, exploiter_budget=150))
    result = train(cfg, quiet=True)
    run = Path(result["run"])
    assert (run / LEAGUE_FILE).is_file() and (run / "league.png").is_file()
    ck = run / "checkpoints" / sorted(p.name for p in (run / "checkpoints").iterdir() if p.name.startswith("step_"))[0]
    mid = read_league(ck)
    assert mid["step"] < result["timesteps"] and mid["exploiters"][0]["total"] > 0
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert any(r["kind"] == "league" for r in rows)
    # resume from the first checkpoint: the league goes on from there (members, payoff, exploiters)
    data = league_data(tmp_path, exploiter_budget=150)
    data["total_timesteps"] = mid["step"] + 128
    out = train(config_from_dict(TrainConfig, data), resume=ck, quiet=True)
    end = read_league(Path(out["run"]) / "final")
    assert end["id"] == mid["id"] and end["start_step"] == mid["start_step"]
    old, new = mid["exploiters"][0], end["exploiters"][0]
    assert new["total"] > old["total"] and new["generation"] >= old["generation"]
    assert new["resets"][:len(old["resets"])] == old["resets"]
    origins = {m["name"]: m["origin"] for m in end["members"]}
    assert origins["greedy"] == 0
    assert all(origins[m["name"]] == m["origin"] for m in mid["members"] if m["name"] in origins)
    g = dict(zip(mid["names"], mid["games"][0]))
    g2 = dict(zip(end["names"], end["games"][0]))
    assert all(g2.get(n, 0) >= c for n, c in g.items() if n in g2)       # the payoff table kept its games


# ---------------------------------------------------------------------------- refusals
def write_config(tmp_path: Path, data: dict) -> Path:
    import yaml
    p = tmp_path / "league.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_an_unknown_spec_in_the_pool_is_one_line_and_writes_nothing(tmp_path, capsys):
    path = write_config(tmp_path, league_data(tmp_path, pool=["greedy", "nosuch"]))
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "league.pool" in err[0] and "nosuch" in err[0]
    assert not (tmp_path / "runs").exists()


def test_a_member_file_that_is_not_a_policy_is_one_line_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad" / "actor.npz"
    bad.parent.mkdir()
    np.savez(bad, hello=np.zeros(3))
    path = write_config(tmp_path, league_data(tmp_path, pool=["greedy", f"policy:{bad}"]))
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "league.pool" in err[0] and "not a handfoot actor" in err[0]
    assert not (tmp_path / "runs").exists()


def test_a_league_file_of_another_run_is_refused_before_anything_is_written(tmp_path, capsys):
    cfg = config_from_dict(TrainConfig, league_data(tmp_path, exploiter_budget=150))
    run = Path(train(cfg, quiet=True)["run"])
    ck = run / "final"
    d = json.loads((ck / LEAGUE_FILE).read_text())
    d["id"] = "another-run"
    (ck / LEAGUE_FILE).write_text(json.dumps(d))
    with pytest.raises(ConfigError, match="league of another run"):
        check_league_checkpoint(ck, cfg)
    before = {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    assert main(["train", "--resume", str(ck), "--set", "total_timesteps=2000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "league of another run" in err[0]
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == before
