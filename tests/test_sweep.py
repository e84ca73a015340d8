"""``handfoot sweep``: config checks before any trial, the statistics across seeds against known
cases, and the runner (same numbers with 1 or 2 trials at once, a report written again from the
folder, a killed sweep of tiny experiments resumed without running finished trials again)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from experiments.sweeps import stats
from experiments.sweeps.cli import sweep_main
from experiments.sweeps.config import load_sweep

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "eval" / "smoke.yaml"
QUICK = ROOT / "configs" / "experiments" / "quickstart.yaml"


def _write(tmp_path: Path, text: str, name: str = "sweep.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


EVAL_SWEEP = f"""
name: duel
kind: evaluate
base: {SMOKE}
variants:
  rg: {{agents: [random, greedy]}}
  gr: {{agents: [greedy, random]}}
  sg: {{agents: ["strategic(draw_worth=1.5)", greedy]}}
  mirror: {{agents: [greedy, greedy]}}
seeds: [3, 4, 5]
overrides: {{games: 3}}
"""


# ------------------------------------------------------------------------------ config errors
@pytest.mark.parametrize("body, message", [
    ("kind: evaluate\nbase: {b}\nseeds: 2\nfoo: 1\n", "unknown key 'foo'"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\ngrid: {{gamez: [1, 2]}}\n",
     "'gamez' is not a field of the evaluate config; did you mean 'games'?"),
    ("kind: experiment\nbase: {q}\nseeds: 2\ngrid: {{train.ppo.learning_rat: [0.1]}}\n",
     "'train.ppo.learning_rat' is not a field of the experiment config; did you mean 'train.ppo.learning_rate'?"),
    ("kind: experiment\nbase: {q}\nseeds: 2\ngrid: {{train.total_timesteps.x: [1]}}\n", "is not a section"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\ngrid: {{}}\n", "grid: empty"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\ngrid: {{games: []}}\n", "grid.games: expected a non-empty list"),
    ("kind: evaluate\nbase: {b}\nseeds: [1, two]\n", "seeds: every seed must be an integer"),
    ("kind: evaluate\nbase: {b}\nseeds: [1, 1.5]\n", "seeds: every seed must be an integer"),
    ("kind: evaluate\nbase: {b}\nseeds: [1, 1]\n", "listed twice"),
    ("kind: evaluate\nbase: {b}\nseeds: 0\n", "seeds: a count must be between 1"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nmetric: elo_rating\n", "metric: unknown metric 'elo_rating'"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nmetric: win_rate:champion\n", "'champion' is not one of"),
    ("kind: experiment\nbase: {q}\nseeds: 2\nmetric: adp:random\n", "'random' is not one of"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nvariants: {{x: {{games: 0}}}}\n", "'games'"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nvariants: {{x: {{agents: [strategic(foo=1), greedy]}}}}\n",
     "unknown parameter 'foo'"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nvariants: {{'a/b': {{}}}}\n", "not a usable name"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\ngrid: {{games: [1]}}\nvariants: {{a: {{}}}}\n", "not grid and variants"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\ngrid: {{seed: [1, 2]}}\n", "set by the sweep"),
    ("kind: evaluate\nbase: nowhere.yaml\nseeds: 2\n", "no such file"),
    ("kind: tournament\nbase: {b}\nseeds: 2\n", "kind: expected experiment or evaluate"),
    ("kind: evaluate\nbase: {b}\n", "seeds: missing"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nscheduler: {{name: asha}}\n", "kind: experiment"),
    ("kind: experiment\nbase: {q}\nseeds: 2\nmetric: win_rate:greedy\nscheduler: {{name: asha}}\n",
     "train.evaluation.opponents"),
    ("kind: evaluate\nbase: {b}\nseeds: 2\nsearch: {{samples: 2, space: {{games: {{normal: [1, 2]}}}}}}\n",
     "search.space.games"),
])
def test_bad_sweep_configs_are_one_line_before_any_trial(tmp_path, capsys, body, message):
    cfg = _write(tmp_path, body.format(b=SMOKE, q=QUICK))
    out = tmp_path / "out"
    rc = sweep_main([str(cfg), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("handfoot sweep: error:"), err
    assert message in err, err
    assert not out.exists(), "nothing may start before the config is checked"


def test_command_line_errors(tmp_path, capsys):
    assert sweep_main([]) == 2
    assert "a sweep config is needed" in capsys.readouterr().err
    assert sweep_main(["--out", str(tmp_path / "none"), "--resume"]) == 2
    assert "not a sweep folder" in capsys.readouterr().err
    cfg = _write(tmp_path, EVAL_SWEEP)
    assert sweep_main([str(cfg), "--parallel", "0"]) == 2
    assert "--parallel" in capsys.readouterr().err
    assert sweep_main(["--report", str(tmp_path / "none")]) == 2
    assert "not a sweep folder" in capsys.readouterr().err


def test_grid_search_and_seed_expansion(tmp_path):
    cfg = _write(tmp_path, f"kind: evaluate\nbase: {SMOKE}\nseeds: 2\n"
                           "grid: {games: [2, 3], agents: [[random, greedy], [greedy, random]]}\n")
    sw = load_sweep(cfg)
    assert [v.name for v in sw.variants] == ["games=2,agents=random_greedy", "games=2,agents=greedy_random",
                                             "games=3,agents=random_greedy", "games=3,agents=greedy_random"]
    assert [t.name for t in sw.trials()][:4] == [f"{v.name}-s0" for v in sw.variants]
    assert len(sw.trials()) == 8
    s1 = load_sweep(_write(tmp_path, f"kind: evaluate\nbase: {SMOKE}\nseeds: [7]\n"
                                     "search: {samples: 3, seed: 1, space: {games: {randint: [2, 9]}}}\n", "r.yaml"))
    s2 = load_sweep(tmp_path / "r.yaml")
    assert [v.overrides for v in s1.variants] == [v.overrides for v in s2.variants]     # seeded: same samples
    assert all(2 <= v.overrides["games"] <= 9 for v in s1.variants)


# ------------------------------------------------------------------------------ statistics
def test_iqm_of_known_arrays():
    assert stats.iqm([1, 2, 3, 4, 5, 6, 7, 8]) == pytest.approx(4.5)          # mean of 3..6
    assert stats.iqm([100, 1, 2, 3]) == pytest.approx(2.5)                   # one trimmed each end
    assert stats.iqm([0, 0, 1, 1, 1, 1, 1, 1, 50, 50]) == pytest.approx(1.0)  # int(10/4) = 2 off each end
    assert stats.iqm([3, 1, 2]) == pytest.approx(2.0)                        # nothing trimmed below 4
    x = np.random.default_rng(0).normal(size=41)
    s = np.sort(x)
    assert stats.iqm(x) == pytest.approx(s[10:31].mean())


def test_probability_of_improvement_known_cases():
    same = stats.probability_of_improvement([0.1, 0.4, 0.7], [0.1, 0.4, 0.7])
    assert same["probability_of_improvement"] == pytest.approx(0.5)
    assert same["ci"][0] < 0.5 < same["ci"][1]
    sep = stats.probability_of_improvement([0.8, 0.9, 0.95], [0.1, 0.2, 0.3])
    assert sep["probability_of_improvement"] == 1.0 and sep["ci"] == [1.0, 1.0]
    rev = stats.probability_of_improvement([0.1, 0.2, 0.3], [0.8, 0.9, 0.95])
    assert rev["probability_of_improvement"] == 0.0
    # ties count half; P(X>Y) + P(Y>X) = 1
    a, b = [1, 2, 2, 3], [2, 2, 4]
    p = stats.probability_of_improvement(a, b)["probability_of_improvement"]
    q = stats.probability_of_improvement(b, a)["probability_of_improvement"]
    assert p + q == pytest.approx(1.0)
    assert p == pytest.approx(4 / 12)      # 1: nothing; each 2: two ties; 3: two wins
    assert stats.probability_of_improvement([1.0], [0.0])["ci"] is None


def test_bootstrap_intervals_cover_the_true_value_at_about_the_stated_rate():
    """Synthetic runs from known distributions: the 95% intervals over 40 runs must contain the true
    mean / median / IQM 92-97.5% of the time (400 repetitions: a 90% interval covers about 88%)."""
    rng = np.random.default_rng(12345)
    n_rep, n = 400, 40
    hits = {"mean": 0, "median": 0, "iqm": 0}
    # normal(0.5, 0.1): mean, median and IQM are all 0.5 (symmetric)
    for r in range(n_rep):
        x = rng.normal(0.5, 0.1, size=n)
        for stat in hits:
            lo, hi = stats.bootstrap_ci(x, stat, reps=1000, seed=r)
            hits[stat] += lo <= 0.5 <= hi
    for stat, h in hits.items():
        assert 0.92 <= h / n_rep <= 0.975, (stat, h / n_rep)


def test_bootstrap_interval_is_the_2_5_and_97_5_percentiles_of_its_resamples():
    x = np.random.default_rng(4).normal(size=(12, 3))
    boot = stats.resample(x, 2000, np.random.default_rng(9))
    for stat, f in (("mean", lambda a: a.mean(axis=1)), ("median", lambda a: np.median(a, axis=1)),
                    ("iqm", lambda a: stats.iqm(a, axis=1))):
        want = np.percentile(f(boot), [2.5, 97.5])
        assert stats.bootstrap_ci(x, stat, reps=2000, seed=9) == pytest.approx(list(want))
    # many runs: the 95% interval of a mean is mean +- 1.96 standard errors (a 90% one is 16% narrower)
    big = np.random.default_rng(5).normal(size=400)
    lo, hi = stats.bootstrap_ci(big, "mean")
    assert (hi - lo) == pytest.approx(2 * 1.96 * big.std(ddof=1) / 20, rel=0.04)


def test_bootstrap_resamples_runs_within_each_task():
    # task 0 scores 0..4, task 1 scores 10..14: every resample draws each task's runs from that task
    x = np.stack([np.arange(5.0), np.arange(10.0, 15.0)], axis=1)
    boot = stats.resample(x, 500, np.random.default_rng(1)).reshape(500, 5, 2)
    assert set(np.unique(boot[:, :, 0])) <= set(x[:, 0]) and set(np.unique(boot[:, :, 1])) <= set(x[:, 1])
    # a run that scores 0 on one task and 1 on the other: every stratified resample has mean 1/2
    split = np.tile([0.0, 1.0], (6, 1))
    assert stats.bootstrap_ci(split, "mean") == [0.5, 0.5]
    assert stats.summarize(split)["mean_ci"] == [0.5, 0.5]


def test_probability_of_improvement_interval_resamples_both_sides():
    spread = [0.1, 0.3, 0.45, 0.55, 0.7, 0.9, 0.2, 0.8]
    flat = [0.5] * 8
    for x, y in ((flat, spread), (spread, flat)):
        r = stats.probability_of_improvement(x, y)
        assert r["probability_of_improvement"] == 0.5
        lo, hi = r["ci"]
        # the uncertainty comes from the side that varies: resampling it gives about +-0.3
        assert lo < 0.3 and hi > 0.7


def test_summaries_are_deterministic_and_consistent():
    x = [0.2, 0.35, 0.4, 0.5, 0.9]
    s1, s2 = stats.summarize(x), stats.summarize(list(x))
    assert s1 == s2
    assert s1["n"] == 5 and s1["mean"] == pytest.approx(np.mean(x)) and s1["median"] == 0.4
    assert s1["iqm"] == pytest.approx(np.mean([0.35, 0.4, 0.5]))
    for k in ("mean", "median", "iqm"):
        lo, hi = s1[f"{k}_ci"]
        assert min(x) <= lo <= s1[k] <= hi <= max(x)
    one = stats.summarize([0.3])
    assert one["mean"] == 0.3 and one["mean_ci"] is None and one["iqm_ci"] is None
    assert stats.summarize([])["n"] == 0


def test_performance_profile_and_curve_band():
    p = stats.performance_profile([0.1, 0.5, 0.9, 0.9], [0.0, 0.5, 0.95])
    assert p["fraction"] == [1.0, 0.5, 0.0]
    assert all(lo <= f <= hi for lo, f, hi in zip(p["lo"], p["fraction"], p["hi"]))
    band = stats.curve_band([[0, 1, 2], [0, 1, 4], [0, 3, 2], [0, 1, 2]])
    assert band["iqm"] == pytest.approx([0, 1, 2])
    assert all(lo <= m <= hi for lo, m, hi in zip(band["lo"], band["iqm"], band["hi"]))


# ------------------------------------------------------------------------------ runner
def _numbers(path: Path):
    d = json.loads((path / "sweep.json").read_text())
    vs = [(v["name"], v["summary"], [(t["seed"], t["status"], t["value"], t.get("ci")) for t in v["trials"]])
          for v in d["variants"]]
    return vs, d["comparisons"], d["performance_profile"]


def test_evaluate_sweep_same_numbers_with_1_or_2_at_once_and_report_again(tmp_path, capsys):
    cfg = _write(tmp_path, EVAL_SWEEP)
    a, b = tmp_path / "a", tmp_path / "b"
    assert sweep_main([str(cfg), "--out", str(a), "--parallel", "1", "--quiet"]) == 0
    assert sweep_main([str(cfg), "--out", str(b), "--parallel", "2", "--quiet"]) == 0
    assert _numbers(a) == _numbers(b)
    d = json.loads((a / "sweep.json").read_text())
    assert [v["name"] for v in d["variants"]] == ["rg", "gr", "sg", "mirror"]
    assert [t["value"] for t in d["variants"][3]["trials"]] == [0.5, 0.5, 0.5]   # a spec twice: labels greedy, greedy#2
    assert d["kind"] == "evaluate" and d["metric"] == "win_rate"
    for v in d["variants"]:
        assert set(v["summary"]) >= {"n", "mean", "mean_ci", "median", "iqm", "iqm_ci"}
        assert v["summary"]["n"] == 3
        for t in v["trials"]:
            assert t["status"] == "done" and (a / t["run"] / "results.json").is_file()
            res = json.loads((a / t["run"] / "results.json").read_text())
            assert res["seed"] == t["seed"] and res["deals_per_pair"] == 3        # the seed is the deal seed
    rg, gr = d["variants"][0]["trials"], d["variants"][1]["trials"]
    for x, y in zip(rg, gr):                      # the same deals with the agents listed the other way round
        assert x["value"] == pytest.approx(1.0 - y["value"])
    names = ("rg", "gr", "sg", "mirror")
    assert {(c["a"], c["b"]) for c in d["comparisons"]} == {(x, y) for x in names for y in names if x != y}
    assert d["variants"][2]["trials"][0]["opponent"] == "greedy"
    assert json.loads((a / "trials" / "sg-s3" / "results.json").read_text())["specs"][0] == "strategic(draw_worth=1.5)"
    for f in ("summary.csv", "trials.csv", "report.md", "variants.png", "profile.png"):
        assert (a / f).is_file(), f
    assert any((a / "tb").rglob("events.out.tfevents.*"))
    report = (a / "report.md").read_text()
    assert "bootstrap" in report and "not an interval over seeds" in report
    # a finished sweep resumed runs nothing; --report writes the same numbers again
    mtime = (a / "trials" / "rg-s3" / "results.json").stat().st_mtime
    assert sweep_main(["--out", str(a), "--resume", "--quiet"]) == 0
    assert (a / "trials" / "rg-s3" / "results.json").stat().st_mtime == mtime
    before = _numbers(a)
    (a / "sweep.json").unlink()
    assert sweep_main(["--report", str(a)]) == 0
    assert _numbers(a) == before
    capsys.readouterr()
    # the same folder again without --resume is refused; a changed config with --resume too
    assert sweep_main([str(cfg), "--out", str(a)]) == 2
    assert "--resume" in capsys.readouterr().err
    cfg2 = _write(tmp_path, EVAL_SWEEP.replace("games: 3", "games: 4"), "other.yaml")
    assert sweep_main([str(cfg2), "--out", str(a), "--resume"]) == 2
    assert "differs" in capsys.readouterr().err
    # a config that only adds a variant and a seed extends the sweep: the finished trials are kept, the new run
    wider = EVAL_SWEEP.replace("seeds: [3, 4, 5]", "seeds: [3, 4, 5, 6]").replace(
        "  mirror:", "  rr: {agents: [random, random]}\n  mirror:")
    cfg3 = _write(tmp_path, wider, "wider.yaml")
    assert sweep_main([str(cfg3), "--out", str(a), "--resume", "--quiet"]) == 0
    assert "extended with variant rr and seed 6" in capsys.readouterr().err
    assert (a / "trials" / "rg-s3" / "results.json").stat().st_mtime == mtime
    d = json.loads((a / "sweep.json").read_text())
    assert [v["name"] for v in d["variants"]] == ["rg", "gr", "sg", "rr", "mirror"]
    assert all(v["summary"]["n"] == 4 and [t["seed"] for t in v["trials"]] == [3, 4, 5, 6] for v in d["variants"])
    assert _numbers(a)[0][0][2][:3] == before[0][0][2]                          # rg's first three trials as they were
    assert sweep_main(["--out", str(a), "--resume", "--quiet"]) == 0             # the stored config is the wider one
    # a variant whose overrides changed is not an extension
    changed = wider.replace("rr: {agents: [random, random]}", "rr: {agents: [random, greedy]}")
    assert sweep_main([str(_write(tmp_path, changed, "changed.yaml")), "--out", str(a), "--resume"]) == 2
    assert "more than added variants or seeds" in capsys.readouterr().err


def test_failed_trial_is_reported_and_the_rest_completes(tmp_path, capsys):
    # a policy file that passes the config check's load (it exists) but breaks in the trial: a folder
    cfg = _write(tmp_path, f"kind: evaluate\nbase: {SMOKE}\nseeds: 1\noverrides: {{games: 2}}\n"
                           "variants: {ok: {agents: [random, greedy]}}\n")
    out = tmp_path / "out"
    assert sweep_main([str(cfg), "--out", str(out), "--quiet"]) == 0
    # break the finished trial's result file: the summary says so instead of crashing
    (out / "trials" / "ok-s0" / "results.json").write_text("{not json")
    assert sweep_main(["--report", str(out)]) == 0
    d = json.loads((out / "sweep.json").read_text())
    t = d["variants"][0]["trials"][0]
    assert t["status"] == "failed" and "unreadable" in t["error"]
    assert d["variants"][0]["summary"]["n"] == 0


TINY = ROOT / "configs" / "sweeps" / "tiny.yaml"


def _sweep_proc(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "experiments.apps.cli", "sweep", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:       # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _children(pid: int):
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int(p.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc to find the trial processes")
def test_tiny_experiment_sweep_killed_then_resumed(tmp_path):
    """2 variants x 2 seeds of a tiny experiment, 2 at once: kill the sweep (SIGKILL) once a trial has
    finished; its trials die with it; --resume completes the sweep without running finished trials again."""
    out = tmp_path / "tiny"
    proc = _sweep_proc([str(TINY), "--out", str(out), "--parallel", "2"], cwd=tmp_path)
    state = out / "state.json"
    deadline = time.time() + 600
    trials = []
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the sweep ended before it was killed: {proc.stdout.read()}")
        trials = trials or _children(proc.pid)
        try:
            st = json.loads(state.read_text())
        except (OSError, ValueError):
            st = {}
        done = [k for k, v in st.get("trials", {}).items() if v.get("status") == "done"]
        if done:
            break
        time.sleep(0.2)
    else:
        pytest.fail("no trial finished in time")
    running = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    t_end = time.time() + 30
    while any(_alive(p) for p in running) and time.time() < t_end:
        time.sleep(0.2)
    assert not any(_alive(p) for p in running), "a killed sweep leaves no trial running"
    finished = {d.name: (d / "experiment.json").stat().st_mtime for d in (out / "trials").iterdir()
                if (d / "experiment.json").is_file()}
    assert finished
    proc = _sweep_proc(["--out", str(out), "--resume", "--parallel", "2"], cwd=tmp_path)
    text, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, text
    d = json.loads((out / "sweep.json").read_text())
    assert d["status"] == {"done": 4}
    for name, mtime in finished.items():       # finished trials were not run again
        assert (out / "trials" / name / "experiment.json").stat().st_mtime == mtime
        run = json.loads((out / "trials" / name / "run.json").read_text())
        assert len(run["sessions"]) == 1
    for v in d["variants"]:
        assert v["summary"]["n"] == 2
        for t in v["trials"]:
            assert 0.0 <= t["value"] <= 1.0 and t["curve"], t
    assert "win_rate:random" == d["metric"] and (out / "curves.png").is_file()


def test_sweep_on_a_local_ray_gives_the_same_numbers(tmp_path, capsys):
    """The same sweep as Ray Tune trials (a private local Ray) and on this machine: the same sweep.json numbers."""
    pytest.importorskip("ray.tune")
    cfg = _write(tmp_path, EVAL_SWEEP.replace("seeds: [3, 4, 5]", "seeds: [3, 4]"))
    local, ray_out = tmp_path / "local", tmp_path / "ray"
    assert sweep_main([str(cfg), "--out", str(local), "--parallel", "2", "--quiet"]) == 0
    assert sweep_main([str(cfg), "--out", str(ray_out), "--ray", "--quiet"]) == 0
    assert _numbers(local) == _numbers(ray_out)
    assert (ray_out / "tune").is_dir()                 # Tune's experiment state
    d = json.loads((ray_out / "sweep.json").read_text())
    assert d["status"] == {"done": 8} and d["timing"]["sessions"][-1]["ray"] is True


def test_ctrl_c_stops_the_sweep_and_resume_completes_it(tmp_path):
    # 8 trials: the Ctrl-C after the first one cannot miss all seven others, even on a loaded machine
    cfg = _write(tmp_path, f"kind: evaluate\nbase: {SMOKE}\nseeds: 4\noverrides: {{games: 20}}\n"
                           "variants: {a: {agents: [greedy, random]}, b: {agents: [random, greedy]}}\n")
    out = tmp_path / "out"
    proc = _sweep_proc([str(cfg), "--out", str(out), "--parallel", "1"], cwd=tmp_path)
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            st = json.loads((out / "state.json").read_text())
        except (OSError, ValueError):
            st = {}
        if any(v.get("status") == "done" for v in st.get("trials", {}).values()):
            break
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.1)
    # at once: the runner is then starting the next trial, and a Ctrl-C that lands in its fork still stops it
    proc.send_signal(signal.SIGINT)
    text, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, text
    assert "--resume" in text.splitlines()[-1]
    d = json.loads((out / "sweep.json").read_text())
    assert d["status"].get("done", 0) >= 1 and d["status"].get("done", 0) < 8
    proc = _sweep_proc(["--out", str(out), "--resume"], cwd=tmp_path)
    text, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, text
    d = json.loads((out / "sweep.json").read_text())
    assert d["status"] == {"done": 8}
    assert len(d["timing"]["sessions"]) == 2 and d["timing"]["sessions"][0]["stopped"] is True


def test_compare_sweeps_agrees_with_a_sweeps_own_comparison(tmp_path, capsys):
    """scripts/compare_sweeps.py on two variants of one published sweep gives that sweep's own P(X > Y)
    and summaries; a missing variant is one clear line."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import compare_sweeps
    finally:
        sys.path.pop(0)
    folder = ROOT / "docs" / "results" / "sweeps" / "learners"
    sweep = json.loads((folder / "sweep.json").read_text())
    out = tmp_path / "cmp.json"
    assert compare_sweeps.main([f"{folder}:ppo", f"{folder}:dmc", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    own = next(c for c in sweep["comparisons"] if (c["a"], c["b"]) == ("ppo", "dmc"))
    assert got["p_x_better"]["probability_of_improvement"] == pytest.approx(own["probability_of_improvement"])
    assert got["p_x_better"]["ci"] == pytest.approx(own["ci"])
    ppo = next(v for v in sweep["variants"] if v["name"] == "ppo")
    assert got["x"]["summary"]["iqm"] == pytest.approx(ppo["summary"]["iqm"])
    with pytest.raises(SystemExit, match="has no variant 'nope' \\(it has ppo, dmc\\)"):
        compare_sweeps.main([f"{folder}:nope", f"{folder}:dmc"])


def test_a_resumed_folder_keeps_what_its_sweep_json_knew_of_published_trials(tmp_path):
    """The published trial folders keep results but not metrics.jsonl or the evaluation folder: the
    rows read from them again keep the curves and going-out rates of the sweep.json written before."""
    import shutil
    from experiments.sweeps.report import collect
    out = tmp_path / "main_job"
    shutil.copytree(ROOT / "docs/results/sweeps/main_job", out)
    published = {(v["name"], r["seed"]): r for v in json.loads((out / "sweep.json").read_text())["variants"]
                 for r in v["trials"]}
    assert not list((out / "trials").glob("*/metrics.jsonl"))
    sweep = load_sweep(ROOT / "configs/sweeps/main_job.yaml")
    rows = {(v["name"], r["seed"]): r for v in collect(sweep, out) for r in v["trials"]}
    assert rows.keys() == published.keys()
    for key, r in rows.items():
        old = published[key]
        assert r["status"] == "done" and r["value"] == old["value"] and r["curve"] == old["curve"] and r["curve"]
        assert r["evaluation"]["strategic"]["going_out_rate"] == old["evaluation"]["strategic"]["going_out_rate"]
    (out / "sweep.json").unlink()                # without it, the folders alone lose them
    rows = [r for v in collect(sweep, out) for r in v["trials"]]
    assert all(not r["curve"] for r in rows)
    # another result for a trial (here its value) is not given the old row's curve
    (out / "sweep.json").write_text(json.dumps({"variants": [{"name": k[0], "trials": [{**old, "value": 0.1}]}
                                                             for k, old in published.items()]}))
    assert all(not r["curve"] for v in collect(sweep, out) for r in v["trials"])
