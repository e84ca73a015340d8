"""What a new user meets on the first day: seeds, documented API statements, output folders, wording,
error messages and the install scripts."""
from __future__ import annotations

import json
import re
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

from experiments.apps.cli import main
from handfoot_env import handfoot_v0
from handfoot_env.config import MAX_SEED

ROOT = Path(__file__).resolve().parents[1]
INTERFACE = (ROOT / "docs" / "interface.md").read_text()
README = (ROOT / "README.md").read_text()


# ------------------------------------------------------------------ the env
def test_reset_after_the_largest_seed_wraps_to_zero():
    env = handfoot_v0.env()
    env.reset(seed=MAX_SEED)
    env.reset()
    assert env.unwrapped.game.seed == 0
    env.reset()
    assert env.unwrapped.game.seed == 1


def test_interface_lists_exactly_the_warnings_api_test_gives():
    from pettingzoo.test import api_test
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(handfoot_v0.env(), num_cycles=30)
    messages = {str(w.message) for w in caught}
    assert len(messages) == 2
    for m in messages:
        assert f'"{m}"' in " ".join(INTERFACE.split()), m
    assert "gives two warnings" in INTERFACE


def _illegal_step(env):
    env.reset(seed=1)
    agent = env.agent_selection
    bad = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(bad)
    return agent, dict(env.rewards)


def test_illegal_action_rewards_are_as_documented():
    from pettingzoo.utils.wrappers import TerminateIllegalWrapper
    agent, team = _illegal_step(handfoot_v0.env())
    assert agent == "player_0" and team == {"player_0": -1, "player_1": 0, "player_2": -1, "player_3": 0}
    _, alone = _illegal_step(TerminateIllegalWrapper(handfoot_v0.raw_env(), illegal_reward=-1))
    assert alone == {"player_0": -1, "player_1": 0, "player_2": 0, "player_3": 0}
    assert "the offender **and its partners** get -1" in INTERFACE
    assert "gives -1 to the offender only" in INTERFACE


def test_no_parallel_api_and_the_docs_say_why():
    from pettingzoo.utils.conversions import aec_to_parallel
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(handfoot_v0.env())
    assert "There is no parallel API, by design" in INTERFACE and "turn-based" in INTERFACE


# ------------------------------------------------------------------ records
def test_replay_check_refuses_a_players_list_of_the_wrong_length(tmp_path, capsys):
    from handfoot_env.record import save_record
    env = handfoot_v0.raw_env()
    env.reset(seed=3)
    for _ in range(5):
        env.step(env.game.legal_actions()[0])
    path = tmp_path / "game.json"
    save_record(env.game, path, players=["a", "b", "c", "d"])
    assert main(["replay", str(path), "--check"]) == 0
    rec = json.loads(path.read_text())
    rec["players"] = ["only one"]
    path.write_text(json.dumps(rec))
    capsys.readouterr()
    assert main(["replay", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert "players: 1 labels for 4 seats" in err and err.count("\n") == 1


# ------------------------------------------------------------------ output folders
def test_leaderboard_never_writes_into_docs_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    argv = ["leaderboard", "--deals", "1", "--bootstrap", "0", "--no-progress"]
    assert main(argv) == 0
    assert main(argv) == 0
    assert list((tmp_path / "docs").iterdir()) == []
    boards = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert boards[0] == "leaderboard" and re.fullmatch(r"leaderboard-\d{8}-\d{6}(-\d+)?", boards[1])
    assert (tmp_path / "runs" / "leaderboard" / "leaderboard.md").exists()
    assert "1 duplicate deals per pair" in capsys.readouterr().out


def test_evaluate_follows_the_output_folder_rule(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "--agents", "greedy", "random", "--deals", "1", "--no-plots", "--no-progress"]
    assert main(argv) == 0
    assert main(argv) == 0                                     # a default folder: a fresh one each time
    runs = sorted(p.name for p in (tmp_path / "runs" / "eval").iterdir())
    assert len(runs) == 2 and runs[1].startswith(runs[0] + "-")
    out = tmp_path / "mine"
    assert main(argv + ["--out", str(out)]) == 0
    before = (out / "results.json").read_text()
    capsys.readouterr()
    assert main(argv + ["--out", str(out)]) == 2               # named on the command line: refused
    assert "the folder is not empty" in capsys.readouterr().err
    assert (out / "results.json").read_text() == before


def test_evaluate_into_the_folder_that_holds_its_config(tmp_path, capsys):
    run = tmp_path / "trial"                                   # as a sweep's trial folder: its config, then results
    run.mkdir()
    cfg = run / "config.yaml"
    cfg.write_text("agents: [greedy, random]\ndeals: 1\nplots: false\nprogress: false\n")
    assert main(["evaluate", str(cfg), "--out", str(run)]) == 0
    assert (run / "results.json").is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["trial"]
    capsys.readouterr()
    assert main(["evaluate", str(cfg), "--out", str(run)]) == 2   # results there now: refused
    assert "the folder is not empty" in capsys.readouterr().err


def test_bench_follows_the_output_folder_rule(tmp_path, capsys):
    out = tmp_path / "b"
    out.mkdir()
    (out / "bench.md").write_text("kept")
    assert main(["bench", "--quick", "--rows", "engine", "--out", str(out)]) == 2
    assert "the folder is not empty" in capsys.readouterr().err and (out / "bench.md").read_text() == "kept"


# ------------------------------------------------------------------ deals and games
def test_deals_and_games_flags_play_the_same_and_say_so(tmp_path, capsys):
    results = []
    for flag in ("--deals", "--games"):
        out = tmp_path / flag.strip("-")
        assert main(["evaluate", "--agents", "greedy", "random", flag, "3", "--no-plots", "--no-progress",
                     "--out", str(out)]) == 0
        text = capsys.readouterr().out
        assert "3 duplicate deals per pair (6 games" in text
        results.append(json.loads((out / "results.json").read_text()))
    assert results[0]["games"] == results[1]["games"] == 6 and results[0]["win_rate"] == results[1]["win_rate"]


def test_eval_configs_say_deals(tmp_path, capsys):
    from experiments.evaluation.harness import EvalConfigError, load_config
    for p in sorted((ROOT / "configs" / "eval").glob("*.yaml")):
        assert re.search(r"^deals:", p.read_text(), re.M), p
        load_config(p)
    both = tmp_path / "both.yaml"
    both.write_text("agents: [greedy, random]\ndeals: 2\ngames: 2\n")
    with pytest.raises(EvalConfigError, match="name the same field"):
        load_config(both)
    old = tmp_path / "old.yaml"
    old.write_text("agents: [greedy, random]\ngames: 2\n")
    assert load_config(old).games == 2


def test_evaluate_sweeps_take_deals_as_in_evaluation_configs():
    from experiments.sweeps.config import sweep_from_dict, trial_config
    smoke = str(ROOT / "configs" / "eval" / "smoke.yaml")
    sweep = sweep_from_dict({"kind": "evaluate", "base": smoke, "seeds": 1, "overrides": {"deals": 3},
                             "grid": {"agents": [["greedy", "random"]]}})
    (trial,) = sweep.trials()
    assert trial_config(sweep, trial).games == 3
    grid = sweep_from_dict({"kind": "evaluate", "base": smoke, "seeds": 1, "grid": {"deals": [2, 4]}})
    assert [v.name for v in grid.variants] == ["deals=2", "deals=4"]
    assert [trial_config(grid, t).games for t in grid.trials()] == [2, 4]


# ------------------------------------------------------------------ wording of training outputs
def test_eval_line_says_how_many_deals_and_shows_the_interval():
    from experiments.evaluation.report import eval_line
    s = {"deals": 20, "elo": None,
         "per_opponent": {"strategic": {"win_rate": 0.48, "win_rate_ci": [0.26, 0.70], "adp": -1301.0}}}
    line = eval_line(s, 502321, seconds=3.1)
    assert line == ("[eval @ 502,321] 20 duplicate deals (40 games) per opponent: win rate vs strategic 48.0% "
                    "[26.0%, 70.0%] (ADP -1,301) (3.1 s)")
    assert ";  " not in line and "; (" not in line
    s["elo"] = 2512.4
    assert eval_line(s, 10, final=True).endswith("(ADP -1,301); Elo 2512")


def test_learning_curve_says_what_a_point_is(tmp_path):
    from experiments.evaluation.report import curve_caption, plot_learning_curve
    recs = [{"kind": "eval", "timesteps": t, "deals": 20, "win_rate_vs_strategic": w,
             "win_rate_ci_vs_strategic": [w - 0.2, w + 0.2]} for t, w in ((1000, 0.3), (2000, 0.5))]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    caption = curve_caption(tmp_path, recs)
    assert "each point is 20 duplicate deals (40 games) per opponent" in caption and "95% CI" in caption
    assert "+-22 points" in caption
    assert plot_learning_curve(tmp_path).exists()
    (tmp_path / "config.yaml").write_text("evaluation: {deals: 40}\n")
    assert "40 duplicate deals" in curve_caption(tmp_path, [{k: v for k, v in r.items() if k != "deals"}
                                                            for r in recs])


def test_one_interval_format_everywhere():
    from experiments.evaluation.report import fmt_ci_num, fmt_ci_pct
    assert fmt_ci_pct([0.557, 0.9172]) == "[55.7%, 91.7%]"
    assert fmt_ci_num([973.2, 1843.0], signed=True) == "[+973, +1,843]"
    code = "".join(p.read_text() for p in (ROOT / "experiments").rglob("*.py"))
    assert not re.search(r"\[\{100 \* \w+\[0\]:\.1f\}, ", code)      # a rate's interval without its % signs
    assert not re.search(r"\[\{\w+\[0\]:\.1%\}", code)                  # a second spelling of the same format


def test_every_table_prints_adp_the_same_way(tmp_path):
    """ADP and its interval read `+1,530` and `[+1,048, +2,012]` in the experiment's terminal table
    as in evaluate's lines (one formatter, experiments.evaluation.report.fmt_adp / fmt_ci_num)."""
    import io

    from experiments.apps.experiment import print_summary
    from experiments.evaluation.report import eval_line, fmt_adp, fmt_ci_num

    assert fmt_adp(1530.15) == "+1,530" and fmt_adp(-12.4) == "-12" and fmt_adp(None) == "-"
    assert fmt_ci_num([1048.3, 2011.9], signed=True) == "[+1,048, +2,012]"
    r = {"games": 400, "win_rate": 0.6125, "win_rate_ci": [0.5435, 0.6773], "adp": 1530.15,
         "adp_ci": [1048.3, 2011.9]}
    out = io.StringIO()
    timings = {"train_s": 1.0, "eval_s": 1.0, "total_s": 2.0}
    print_summary(tmp_path, {"best": {"per_opponent": {"strategic": r}}}, timings, file=out)
    assert "+1,530" in out.getvalue() and "[+1,048, +2,012]" in out.getvalue()
    assert "(ADP +1,530)" in eval_line({"deals": 200, "per_opponent": {"strategic": r}}, 100)
    code = "".join(p.read_text() for p in (ROOT / "experiments").rglob("*.py"))
    assert not re.search(r"""adp['"]\]:\+""", code)                     # an ADP formatted outside fmt_adp


def test_time_budget_is_not_called_a_failure():
    from experiments.apps.experiment import budget_note
    assert budget_note(275, 600) == "time budget 600 s: within"
    over = budget_note(640, 600)
    assert "OVER" not in over and "40 s more" in over and "shared" in over


# ------------------------------------------------------------------ configs
def test_unknown_config_field_names_the_file_and_the_near_field(tmp_path, capsys):
    cfg = tmp_path / "my_train.yaml"
    cfg.write_text("total_timestep: 100\n")
    assert main(["train", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert str(cfg) in err and "unknown field 'total_timestep'; did you mean 'total_timesteps'?" in err
    cfg.write_text("total_timesteps: 100\n")
    assert main(["train", str(cfg), "--set", "evaluation.dealz=3"]) == 2
    err = capsys.readouterr().err
    assert "unknown field" in err and "did you mean" in err
    exp = tmp_path / "exp.yaml"
    exp.write_text("train: {total_timesteps: 10}\nevalution: {deals: 2}\n")
    assert main(["experiment", str(exp)]) == 2
    err = capsys.readouterr().err
    assert str(exp) in err and "did you mean 'evaluation'?" in err


# ------------------------------------------------------------------ install and README
def test_main_job_install_takes_no_extras_and_shows_progress():
    quick = (ROOT / "scripts" / "quickstart.sh").read_text()
    tests = (ROOT / "scripts" / "test.sh").read_text()
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert re.search(r"^bash scripts/setup.sh\s*(#.*)?$", quick, re.M)
    assert re.search(r"^bash scripts/setup.sh dev,ray,web,examples,data$", tests, re.M)
    installs = [line for line in setup.splitlines() if '"${PIP[@]}"' in line and "pip" not in line.split()[-1]]
    assert installs and not any(" -q" in line for line in installs if "torch" in line or "TARGET" in line)
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    main_deps = " ".join(meta["project"]["dependencies"])
    for heavy in ("ray", "playwright", "pytest", "torchrl", "tianshou"):
        assert heavy not in main_deps
    assert "torchrl==0.14.1" in meta["project"]["optional-dependencies"]["examples"]


def test_pyproject_license_is_an_spdx_string_without_a_deprecation_warning():
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    assert "setuptools>=77" in meta["build-system"]["requires"][0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert not [w for w in caught if "license" in str(w.message)]


def test_readme_environment_snippet_runs_as_written():
    block = README.split("## The environment", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert "def policy" in block or "policy =" in block
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)      # a whole game with the snippet's own policy
    assert namespace["env"].unwrapped.game.phase == 3


def test_the_published_quickstart_sweep_trials_are_the_quickstart_at_their_seeds():
    """Each published trial of the quickstart's sweep is `quickstart.yaml` at that seed, field for field
    and in the same order (the opponents' order decides which opponent a game draws): a change to the
    main job's config that its published sweep did not run fails here."""
    import dataclasses

    import yaml
    from experiments.apps.experiment import load_experiment_config
    from experiments.config import config_to_dict
    from experiments.training.config import TrainConfig
    trials = sorted((ROOT / "docs/results/sweeps/quickstart_anneal/trials").iterdir())
    assert len(trials) >= 5
    for t in trials:
        seed = int(t.name.rsplit("-s", 1)[1])
        published = yaml.safe_load((t / "config.yaml").read_text())
        mine = config_to_dict(load_experiment_config(str(ROOT / "configs/experiments/quickstart.yaml"),
                                                     [f"seed={seed}"]).train)
        for d in (published, mine):
            d.pop("run_dir"), d.pop("run_name")
        # a field added since (a new section such as league:, bc:, init) holds its default: the same run
        defaults = config_to_dict(TrainConfig())
        added = [k for k in mine if k not in published]
        assert all(mine[k] == defaults[k] for k in added), (t.name, added)
        mine = {k: v for k, v in mine.items() if k in published}
        assert list(published.items()) == list(mine.items()), t.name
        assert list(published["opponents"]) == list(mine["opponents"]), t.name
        # and the same evaluation after training
        evaluation = json.loads((t / "experiment.json").read_text())["evaluation"]
        cfg = load_experiment_config(str(ROOT / "configs/experiments/quickstart.yaml"))
        assert evaluation == dataclasses.asdict(cfg.evaluation), t.name


def test_readme_first_screen_has_the_two_commands_the_quick_run_and_the_tour():
    """What it is and the two set-up commands within the first 30 lines; the smoke run, the way to
    the commands (not on the PATH after the set-up) and the notebook the tests execute are named."""
    first = README.splitlines()[:30]
    assert any(x.startswith("bash scripts/quickstart.sh ") for x in first)
    assert any(x.startswith("bash scripts/test.sh ") for x in first)
    assert "Hand and Foot" in "\n".join(first[:5])
    assert "bash scripts/quickstart.sh --quick" in README
    assert "source .venv/bin/activate" in README and (ROOT / "notebooks" / "tour.ipynb").is_file()
    assert "[notebooks/tour.ipynb](notebooks/tour.ipynb)" in README
    assert "bash scripts/setup.sh web" in README


def test_the_web_extra_is_installed_by_one_command_everywhere_the_docs_say():
    for page in ("README.md", "docs/playing.md", "docs/interface.md"):
        text = (ROOT / page).read_text()
        assert "bash scripts/setup.sh web" in text, page
        assert "pip install -e '.[web]'" not in text and "pip install 'handfoot[web]'" not in text, page
