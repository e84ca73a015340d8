"""``handfoot bench`` runs and prints every row; the env's step and observe paths keep the
PettingZoo behaviour; the batched runner (``experiments.bench.sb3_vecenv.BatchedVecEnv``) works as an SB3 VecEnv.

No timed assertions: speed is measured by ``handfoot bench``, not tested.  That the hot paths equal
their plain definitions is tests/test_hot_paths.py.
"""
from __future__ import annotations

import json
import random
import sys

import numpy as np
import pytest

from handfoot_env.compiled import available as compiled_available

from handfoot_env import IllegalActionError, handfoot_v0
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.engine import GAME_OVER
from handfoot_env.observation import encode_observation, observation_size

PRESETS = ["pagat", "bicycle", "six_player", "individual"]
ROW_IDS = ["openspiel/gin_rummy", "openspiel_rl/gin_rummy", "rlcard/gin-rummy",
           "engine/pagat", "engine_obs/pagat", "core/pagat", "aec/pagat", "aec_compiled/pagat", "vecenv/pagat",
           "selfplay/pagat", "engine/bicycle", "engine_obs/bicycle", "core/bicycle", "aec/bicycle",
           "aec_compiled/bicycle", "vecenv/bicycle", "selfplay/bicycle",
           "engine/six_player", "engine_obs/six_player", "aec/six_player", "aec_compiled/six_player"]


# ----------------------------------------------------------------------------- bench CLI
def test_bench_quick_prints_every_row_and_saves_json(tmp_path, capsys):
    from experiments.bench.bench import bench_main
    rc = bench_main(["--quick", "--seconds", "0.05", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    for rid in ROW_IDS:
        assert rid in out, f"row {rid} missing from the table:\n{out}"
    for word in ("memory pagat", "clone pagat", "cost growth", "vs OpenSpiel"):
        assert word in out
    res = json.loads((tmp_path / "bench.json").read_text())
    assert [r["id"] for r in res["rows"]] == ROW_IDS
    for r in res["rows"]:
        assert r["status"] in ("ok", "not installed"), r
        if r["status"] == "ok":
            assert r["actions"] > 0 and r["actions_per_s"] > 0
    assert res["memory"][0]["env_after_reset_bytes"] > 0
    assert res["clone"][0]["clone_us"] > 0
    assert (tmp_path / "bench.md").read_text().startswith("| row |")


def test_bench_via_cli_entry_point(tmp_path, capsys):
    from experiments.apps.cli import main
    rc = main(["bench", "--quick", "--seconds", "0.02", "--rows", "engine", "--presets", "pagat", "--out",
               str(tmp_path)])
    assert rc == 0
    assert "engine/pagat" in capsys.readouterr().out


def test_bench_reports_not_installed(tmp_path, capsys, monkeypatch):
    from experiments.bench.bench import bench_main
    monkeypatch.setitem(sys.modules, "pyspiel", None)     # import raises ImportError
    for name in ("open_spiel", "open_spiel.python", "open_spiel.python.rl_environment"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "rlcard", None)
    rc = bench_main(["--quick", "--rows", "openspiel,openspiel_rl,rlcard,engine", "--presets", "pagat",
                     "--seconds", "0.02", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.count("not installed") >= 3
    for rid in ("openspiel/gin_rummy", "openspiel_rl/gin_rummy", "rlcard/gin-rummy", "engine/pagat"):
        assert rid in out
    res = json.loads((tmp_path / "bench.json").read_text())
    assert {r["id"]: r["status"] for r in res["rows"]}["openspiel/gin_rummy"] == "not installed"


@pytest.mark.skipif(not compiled_available(), reason="the compiled core needs Numba")
def test_core_profile_script_times_every_kernel(capsys):
    from experiments.bench.profile_core import main
    assert main(["--games", "4", "--steps", "21", "--hot", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("8 mid-game states of pagat")
    rows = {ln.split()[0]: [float(x) for x in ln.split()[1:]] for ln in lines[2:]}
    assert sorted(rows) == ["acting", "apply", "legal", "observe"] and all(x > 0 for v in rows.values() for x in v)
    assert main(["--games", "4", "--steps", "21", "--batches", "2,3", "--seconds", "0.01"]) == 0
    steps = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("CoreBatch.step")]
    assert [ln.split(":")[0] for ln in steps] == ["CoreBatch.step x2", "CoreBatch.step x3"]
    assert all(float(ln.split()[2]) > 0 for ln in steps)
    for bad in ("2,x", "0"):
        with pytest.raises(SystemExit) as e:
            main(["--batches", bad])
        assert e.value.code == 2 and "--batches" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:          # (a real --perf-map run compiles afresh: not in CI)
        main(["--perf-map", "-1"])
    assert e.value.code == 2 and "--perf-map" in capsys.readouterr().err


def test_update_profile_times_both_ways_and_finds_them_identical(capsys):
    from experiments.bench.profile_update import main
    small = ["--set", "network.pi=[16]", "--set", "network.vf=[16]", "--set", "ppo.n_steps=16", "--set",
             "batched.games=8", "--set", "ppo.batch_size=32", "--rollouts", "1", "--repeats", "2"]
    assert main(small) == 0
    out = capsys.readouterr().out
    assert "pipelined (with the proximal policy pass)" in out and "weights and Adam state identical" in out
    times = [float(ln.split()[2]) for ln in out.splitlines() if "s per update" in ln]
    assert len(times) == 2 and all(t > 0 for t in times)
    assert main(small + ["--repeats", "1", "--torch-profile", "5"]) == 0
    assert "aten::" in capsys.readouterr().out
    assert main(small + ["--set", "ppo.n_epochs=zero"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("profile_update: ") and "n_epochs" in err[0]
    with pytest.raises(SystemExit) as e:
        main(["--repeats", "0"])
    assert e.value.code == 2 and "--repeats" in capsys.readouterr().err


def test_profile_script_runs(capsys):
    from experiments.bench.profile_aec import main
    assert main(["--games", "1", "--warmup", "0"]) == 0
    assert "actions/s" in capsys.readouterr().out
    assert main(["--games", "1", "--warmup", "0", "--cprofile", "3"]) == 0
    out = capsys.readouterr().out
    assert "function calls" in out and "timing distorted by cProfile" in out


def test_bench_config_errors(tmp_path, capsys):
    from experiments.bench.bench import bench_main
    bad = tmp_path / "bad.yaml"
    bad.write_text("secnds: 3\n")
    assert bench_main([str(bad)]) == 2
    assert "unknown field 'secnds'" in capsys.readouterr().err
    assert bench_main(["--rows", "engine,warp"]) == 2
    assert bench_main(["no/such/file.yaml"]) == 2
    assert bench_main(["--interleave", "0"]) == 2
    assert "interleave must be a positive integer" in capsys.readouterr().err
    bad.write_text("selfplay:\n  train_config: configs/train/nope.yaml\n")
    assert bench_main([str(bad)]) == 2
    assert "selfplay.train_config: file 'configs/train/nope.yaml' not found" in capsys.readouterr().err
    bad.write_text("vecenv:\n  n_envs: 0\n")
    assert bench_main([str(bad)]) == 2
    assert "vecenv.n_envs must be a positive integer" in capsys.readouterr().err


def test_bench_interleaved_slices_play_the_requested_games(tmp_path):
    """With a games target, the round-robin slices together play exactly that many games per row."""
    from experiments.bench.bench import bench_main
    rc = bench_main(["--quick", "--rows", "engine,aec,vecenv,selfplay", "--presets", "pagat", "--games", "3",
                     "--interleave", "2", "--out", str(tmp_path), "--json"])
    assert rc == 0
    res = json.loads((tmp_path / "bench.json").read_text())
    rows = {r["id"]: r for r in res["rows"]}
    assert rows["engine/pagat"]["games"] == 3 and rows["aec/pagat"]["games"] == 3
    assert rows["vecenv/pagat"]["games"] >= 3 and rows["selfplay/pagat"]["games"] >= 3
    # the self-play row counts every seat's actions: about four per learner decision
    sp = rows["selfplay/pagat"]
    assert sp["status"] == "ok" and 2 * sp["observations"] < sp["actions"] < 8 * sp["observations"]
    assert res["config"]["interleave"] == 2


@pytest.mark.skipif(not compiled_available(), reason="the compiled core needs Numba")
def test_evaluation_rows_play_the_same_games_on_both_cores(tmp_path):
    """The evaluation rows play whole harness games; with a games target both cores play the same
    games, so they count the same actions and the same network decisions."""
    from experiments.bench.bench import bench_main
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("eval:\n  pairs: [[champion, greedy]]\n")
    rc = bench_main([str(cfg), "--quick", "--rows", "eval,eval_compiled", "--presets", "pagat", "--games", "2",
                     "--out", str(tmp_path / "out"), "--json"])
    assert rc == 0
    rows = {r["id"]: r for r in json.loads((tmp_path / "out" / "bench.json").read_text())["rows"]}
    ref, comp = rows["eval/pagat:champion+greedy"], rows["eval_compiled/pagat:champion+greedy"]
    assert ref["status"] == comp["status"] == "ok" and ref["games"] == comp["games"] == 2
    assert ref["actions"] == comp["actions"] and ref["observations"] == comp["observations"]
    assert 0 < ref["observations"] < ref["actions"]
    cfg.write_text("eval:\n  pairs: [[champion]]\n")
    assert bench_main([str(cfg), "--rows", "eval"]) == 2


# ----------------------------------------------------------------------------- wrapped env plumbing
def test_wrapped_env_keeps_pettingzoo_wrapper_behaviour():
    from pettingzoo.utils import wrappers
    e = handfoot_v0.env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper)
    assert str(e) == "handfoot_v0"
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            getattr(e, name)
    e.reset(seed=5)
    raw = e.unwrapped
    assert e.agent_selection == raw.agent_selection and e.agents == raw.agents
    assert e.terminations is raw.terminations and e.infos is raw.infos
    assert e.action_space(e.agent_selection).contains(0) and not e.action_space("player_0").contains(NUM_ACTIONS)
    assert e.action_space("player_0").contains(np.int64(1)) and not e.action_space("player_0").contains(1.5)
    with pytest.raises(AssertionError, match="action space"):
        e.step(NUM_ACTIONS + 3)


def test_env_step_with_and_without_observe_and_numpy_actions():
    """step() after observe() uses the listed legal actions; without observe() it validates; same results."""
    def run(observe_first: bool, as_numpy: bool):
        e = handfoot_v0.raw_env()
        e.reset(seed=8)
        rng = random.Random(0)
        trace = []
        while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            legal = e.game.legal_actions()
            if observe_first:
                e.observe(e.agent_selection)
            a = rng.choice(legal)
            e.step(np.int64(a) if as_numpy else a)
            trace.append((a, dict(e._cumulative_rewards)))
            if len(trace) > 600:
                break
        return trace, e.state_dict()
    base = run(False, False)
    assert run(True, False) == base
    assert run(True, True) == base


def test_env_step_rejects_illegal_even_after_observe():
    e = handfoot_v0.raw_env()
    e.reset(seed=2)
    obs = e.observe(e.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        e.step(illegal)
    with pytest.raises(IllegalActionError):
        e.step(True)


# ----------------------------------------------------------------------------- batched runner
def _drive(venv, steps, seed=0):
    rng = np.random.default_rng(seed)
    obs = venv.reset()
    log = [obs.copy()]
    episodes = []
    for _ in range(steps):
        masks = venv.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, dones, infos = venv.step(acts)
        log += [obs.copy(), rew.copy(), dones.copy()]
        episodes += [info["episode"] for info in infos if "episode" in info]
    return log, episodes


def test_batched_vecenv_shapes_masks_and_sb3_api():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecEnv
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    venv = BatchedVecEnv(n_envs=3, rules="pagat", seed=4)
    assert isinstance(venv, VecEnv)
    n_obs = observation_size(4, 2)
    assert venv.observation_space.shape == (n_obs,) and venv.action_space.n == NUM_ACTIONS
    obs = venv.reset()
    assert obs.shape == (3, n_obs) and obs.dtype == np.float32
    assert is_masking_supported(venv)
    for _ in range(30):
        masks = get_action_masks(venv)
        assert masks.shape == (3, NUM_ACTIONS)
        assert np.array_equal(masks, venv.action_masks())
        for i, (g, seat) in enumerate(zip(venv.games, venv.seats)):
            assert g.current == seat and g.phase != GAME_OVER        # the learner is to act
            assert list(np.flatnonzero(masks[i])) == g.legal_actions()
            assert np.array_equal(obs[i], encode_observation(g, seat))
        acts = np.array([np.flatnonzero(m)[-1] for m in masks])
        obs, rew, dones, infos = venv.step(acts)
        assert rew.shape == (3,) and dones.shape == (3,) and len(infos) == 3
    assert venv.get_attr("seat") == venv.seats
    assert venv.env_method("legal_actions", indices=[0])[0] == venv.games[0].legal_actions()


def test_batched_vecenv_episodes_finish_with_score_rewards():
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    venv = BatchedVecEnv(n_envs=2, rules="pagat", seed=1)
    rng = np.random.default_rng(0)
    venv.reset()
    returns = np.zeros(2)
    finished = []
    for _ in range(5000):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        obs, rew, dones, infos = venv.step(acts)
        returns += rew
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert info["terminal_observation"].shape == (observation_size(4, 2),)
            assert not info["TimeLimit.truncated"]
            # round_score_diff rewards add up to the final score difference x 0.001
            assert returns[i] == pytest.approx(info["score_diff"] * 0.001)
            assert info["episode"]["r"] == pytest.approx(returns[i]) and info["episode"]["l"] > 0
            finished.append(i)
            returns[i] = 0.0
        if len(finished) >= 3:
            break
    assert len(finished) >= 3


def test_batched_vecenv_is_deterministic_with_a_seed():
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    a, ea = _drive(BatchedVecEnv(n_envs=3, rules="bicycle", seed=7, episode="round"), 150)
    b, eb = _drive(BatchedVecEnv(n_envs=3, rules="bicycle", seed=7, episode="round"), 150)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert [(e["r"], e["l"]) for e in ea] == [(e["r"], e["l"]) for e in eb] and ea
    c, _ = _drive(BatchedVecEnv(n_envs=3, rules="bicycle", seed=8, episode="round"), 5)
    assert not np.array_equal(a[0], c[0])


def test_batched_vecenv_opponent_callable_illegal_actions_and_game_win():
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    seen = []

    def first_legal(game, seat, legal, rng):
        seen.append(seat)
        return legal[0]

    venv = BatchedVecEnv(n_envs=2, rules="pagat", seed=3, opponent=first_legal, learner_seats=[1],
                         reward="game_win", episode="round")
    venv.reset()
    assert venv.seats == [1, 1] and seen and 1 not in seen
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in venv.action_masks()])
    with pytest.raises(IllegalActionError):
        venv.step(bad)
    t = BatchedVecEnv(n_envs=1, rules="pagat", seed=3, illegal="terminate")
    t.reset()
    obs, rew, dones, infos = t.step(np.array([int(np.flatnonzero(t.action_masks()[0] == 0)[0])]))
    assert rew[0] == -1.0 and dones[0] and infos[0]["illegal_action"]
    # game_win: +1/-1/0 at the end of the (single-round) episode only
    rng = np.random.default_rng(1)
    for _ in range(3000):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        obs, rew, dones, infos = venv.step(acts)
        assert all(r == 0.0 for r, d in zip(rew, dones) if not d)
        if dones.any():
            assert set(rew[dones]) <= {-1.0, 0.0, 1.0}
            break
    else:
        pytest.fail("no episode finished")


def test_batched_vecenv_trains_with_maskable_ppo():
    from sb3_contrib import MaskablePPO
    from experiments.bench.sb3_vecenv import BatchedVecEnv
    venv = BatchedVecEnv(n_envs=2, rules="pagat", seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(total_timesteps=32)
    obs = venv.reset()
    act, _ = model.predict(obs, action_masks=venv.action_masks(), deterministic=True)
    assert all(venv.action_masks()[i][a] for i, a in enumerate(act))


def test_training_rows_time_each_backend_at_the_margin(tmp_path, capsys):
    """The train rows run real (tiny) trainings per backend, short and long, and compare with sb3."""
    from experiments.bench.bench import bench_main
    cfg = tmp_path / "train.yaml"
    cfg.write_text(json.dumps({
        "rows": ["train"], "presets": ["pagat"], "growth_presets": [], "memory": {"instances": 1},
        "clone": {"states": 2, "repeats": 1},
        "train": {"config": "configs/train/quickstart.yaml", "backends": ["sb3", "batched"],
                  "variants": {"batched-1proc": ["backend=batched", "batched.samplers=0", "batched.pipeline=false"]},
                  "short": 128, "long": 384, "repeats": 1,
                  "set": ["n_envs=2", "ppo.n_steps=64", "ppo.batch_size=64", "ppo.n_epochs=1", "network.pi=[16]",
                          "network.vf=[16]", "batched.games=4"]}}))
    assert bench_main([str(cfg), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    res = json.loads((tmp_path / "out" / "bench.json").read_text())
    rows = {r["id"]: r for r in res["train"]}
    assert set(rows) == {"train/sb3", "train/batched", "train/batched-1proc"}
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["long"][0]["timesteps"] >= 384 > r["short"][0]["timesteps"] >= 128
        assert r["end_to_end_per_s"] > 0 and len(r["short"]) == len(r["long"]) == 1
        # tiny runs on a busy machine: a long run may not take longer than the short one, and then
        # there is no margin to report (the row says so rather than invent one)
        assert r["decisions_per_s"] is None or r["decisions_per_s"] > 0
    sb3 = rows["train/sb3"]
    assert sb3["vs_sb3"] == (1.0 if sb3["decisions_per_s"] else None)
    assert "train/batched-1proc" in out and "vs sb3" in out
    with_ratio = rows["train/batched"]["vs_sb3"] is not None
    assert with_ratio == any(t["target"].startswith("training batched") for t in res["targets"])


def test_training_rows_reject_a_bad_section(tmp_path, capsys):
    from experiments.bench.bench import bench_main
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(json.dumps({"rows": ["train"], "train": {"backends": ["tf"]}}))
    assert bench_main([str(cfg)]) == 2
    assert "train.backends" in capsys.readouterr().err


def test_training_margin_rates_and_ratio_on_hand_computed_timings(monkeypatch):
    """The bench's training figure (batched's decisions/s over sb3's at the margin) from fixed timings:
    a wrong margin, median or ratio fails here."""
    from experiments.bench import training
    timings = {   # per backend: (short seconds, long seconds) of each repeat; 1,000 and 5,000 decisions
        "sb3": [(2.0, 6.0), (2.0, 7.0), (3.0, 5.0)],          # margins 1000, 800, 2000 -> median 1000
        "batched": [(1.0, 1.5), (1.0, 1.8), (0.5, 1.0)],      # margins 8000, 5000, 8000 -> median 8000
        "slow": [(2.0, 2.0), (3.0, 2.0), (1.0, 5.0)],         # only the last repeat has a margin: 1000
    }
    calls = {}

    def fake(config, overrides, timesteps, run):
        label = next(o.split("=", 1)[1] for o in overrides if o.startswith("backend="))
        label = "slow" if "slow=1" in overrides else label
        k = calls.setdefault((label, timesteps), 0)
        calls[(label, timesteps)] = k + 1
        short, long = timings[label][k]
        secs = short if timesteps == 1000 else long
        return {"timesteps": timesteps, "seconds": secs, "cpu_seconds": secs / 2, "peak_rss_bytes": 10 * timesteps}

    monkeypatch.setattr(training, "_train_once", fake)
    cfg = {"train": {"config": "configs/train/quickstart.yaml", "backends": ["sb3", "batched"],
                     "variants": {"slow": ["backend=batched", "slow=1"]}, "short": 1000, "long": 5000,
                     "repeats": 3, "set": []}}
    rows = {r["label"]: r for r in training.bench_train(cfg, lambda s: None)}
    assert rows["sb3"]["margins_per_s"] == [1000.0, 800.0, 2000.0] and rows["sb3"]["decisions_per_s"] == 1000.0
    assert rows["batched"]["decisions_per_s"] == 8000.0 and rows["batched"]["vs_sb3"] == 8.0
    assert rows["slow"]["margins_per_s"] == [1000.0] and rows["slow"]["vs_sb3"] == 1.0
    # CPU ms per decision: 2.0 / 4000, 2.5 / 4000 and 1.0 / 4000 s: median 0.5 ms
    assert rows["sb3"]["cpu_ms_per_decision"] == pytest.approx(0.5)
    assert rows["sb3"]["end_to_end_per_s"] == pytest.approx(15000 / 18.0)
    assert rows["batched"]["peak_rss_bytes"] == 50000
    (target,) = training.train_targets(list(rows.values()))
    assert target["value"] == "8.00x" and target["met"] is True
    rows["batched"]["vs_sb3"] = 3.9
    assert training.train_targets([rows["batched"]])[0]["met"] is False


def test_compiled_rows_are_held_to_their_reference_twin_and_to_the_baseline():
    from experiments.bench import training
    rows = [{"label": "x-reference", "decisions_per_s": 8000.0}, {"label": "x-compiled", "decisions_per_s": 10000.0},
            {"label": "before", "decisions_per_s": 6000.0}]
    twin, = training.train_targets(rows)
    assert twin["value"] == "1.25x" and twin["met"] is False and "x-compiled >= 1.5x x-reference" in twin["target"]
    twin, base = training.train_targets(rows, "before")
    assert base["value"] == "1.67x" and base["met"] is True and "the baseline before" in base["target"]


def test_ray_rows_are_held_to_their_processes_twin():
    from experiments.bench import training
    rows = [{"label": "x-processes", "decisions_per_s": 8000.0}, {"label": "x-ray", "decisions_per_s": 7000.0},
            {"label": "y-processes", "decisions_per_s": 8000.0}, {"label": "y-ray", "decisions_per_s": 7500.0}]
    x, y = training.train_targets(rows)
    assert x["value"] == "0.88x" and x["met"] is False and "x-ray >= 0.9x x-processes" in x["target"]
    assert y["value"] == "0.94x" and y["met"] is True


def test_a_baseline_that_is_no_variant_is_one_config_error():
    from experiments.bench.config import BenchConfigError, validate_train
    t = {"config": "configs/train/quickstart.yaml", "backends": [], "variants": {"a": ["seed=1"]}, "short": 1,
         "long": 2, "repeats": 1, "set": [], "baseline": "b"}
    with pytest.raises(BenchConfigError, match="train.baseline: 'b' is not one of train.variants"):
        validate_train(t)
    with pytest.raises(BenchConfigError, match=r"train.baseline: \['a'\] is not one of"):
        validate_train(dict(t, baseline=["a"]))
    validate_train(dict(t, baseline="a"))



def test_ray_rows_measured_once_started_are_held_to_that_rate():
    """Where the bench measured a Ray row and its twin once started (train.steady_updates), the target
    compares those rates (Ray's uneven start-up left out), and says so."""
    from experiments.bench import training
    rows = [{"label": "x-processes", "decisions_per_s": 8000.0, "steady_per_s": 9000.0},
            {"label": "x-ray", "decisions_per_s": 500.0, "steady_per_s": 8820.0}]
    (x,) = training.train_targets(rows)
    assert x["value"] == "0.98x" and x["met"] is True and "once started" in x["target"]


def test_steady_updates_must_be_a_count():
    from experiments.bench.config import BenchConfigError, validate_train
    t = {"config": "configs/train/quickstart.yaml", "backends": [], "variants": {}, "short": 1, "long": 2,
         "repeats": 1, "set": [], "baseline": None}
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(BenchConfigError, match="train.steady_updates must be 0"):
            validate_train(dict(t, steady_updates=bad))
    validate_train(dict(t, steady_updates=20))
