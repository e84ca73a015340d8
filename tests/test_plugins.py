"""Plug-in agents: ``py:package.module:ClassName`` specs and the ``handfoot.agents`` entry-point group,
played by evaluate, demo, play and training; every failure is one ValueError line."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from agents import GreedyAgent
from agents.registry import ENTRY_POINT_GROUP, make_agent, plugin_agents
from experiments.config import ConfigError
from experiments.evaluation.harness import EvalConfig, run_evaluation
from experiments.training.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "plugin_agent"
SPEC = "py:natural_agent:NaturalAgent"


@pytest.fixture
def example_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))


def test_example_agent_plays_a_duplicate_match(example_on_path):
    res = run_evaluation(EvalConfig(agents=[SPEC, "random"], games=2, seed=3, progress=False, plots=False),
                         write=False)
    assert res["games"] == 4 and res["specs"] == [SPEC, "random"]
    assert res["per_agent"][SPEC]["actions_per_game"] > 0
    agent = make_agent(SPEC, 5)
    assert type(agent).__name__ == "NaturalAgent" and agent.seed == 5


def test_example_agent_is_short():
    code = [ln for ln in (EXAMPLE / "natural_agent.py").read_text().splitlines() if ln.strip()]
    assert len(code) <= 30


@pytest.mark.parametrize("spec, words", [
    ("py:", "expected py:package.module:ClassName"),
    ("py:natural_agent", "expected py:package.module:ClassName"),
    ("py:no_such_module_xyz:Agent", "module 'no_such_module_xyz' not found"),
    ("py:natural_agent:Missing", "has no attribute 'Missing'"),
    ("py:natural_agent:ANSWER_YES", "is not a subclass of agents.base.Agent"),
    ("py:json:JSONDecoder", "is not a subclass of agents.base.Agent"),
    ("py:agents.base:Agent", "does not implement act"),
    ("py:broken_plugin:Broken", "Broken(0) failed: RuntimeError: no weights"),
    ("py:broken_import:Anything", "importing 'broken_import' failed: ZeroDivisionError"),
])
def test_bad_plugin_specs_are_one_value_error(spec, words, example_on_path, tmp_path, monkeypatch):
    (tmp_path / "broken_plugin.py").write_text(
        "from agents.base import Agent\n"
        "class Broken(Agent):\n"
        "    def __init__(self, seed=0):\n"
        "        raise RuntimeError('no weights')\n"
        "    def act(self, observation, view):\n"
        "        return view.legal_actions[0]\n")
    (tmp_path / "broken_import.py").write_text("x = 1 / 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as e:
        make_agent(spec, 0)
    msg = str(e.value)
    assert words in msg and spec.strip() in msg and "\n" not in msg


def test_cli_reports_a_bad_plugin_in_one_line(capsys):
    from experiments.apps.cli import main
    assert main(["evaluate", "--agents", "py:no_such_module_xyz:X", "greedy", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot evaluate: error:") and "no_such_module_xyz" in err and "\n" not in err


def _dist(root: Path, name: str, entries: str) -> None:
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entries}\n")


def test_entry_point_names_a_spec_and_builtins_win(tmp_path, monkeypatch, example_on_path):
    _dist(tmp_path, "hf_test_plugins", "natural_ep = natural_agent:NaturalAgent\n"
                                       "greedy = natural_agent:NaturalAgent\n"
                                       "bad_ep = natural_agent:Missing")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = plugin_agents()
    assert found["natural_ep"] == {"target": "natural_agent:NaturalAgent", "dist": "hf_test_plugins", "shadowed": "no"}
    assert found["greedy"]["shadowed"] == "yes"
    assert type(make_agent("natural_ep", 2)).__name__ == "NaturalAgent"
    assert isinstance(make_agent("greedy", 2), GreedyAgent)        # the built-in wins
    with pytest.raises(ValueError, match="entry point handfoot.agents of hf_test_plugins.*no attribute 'Missing'"):
        make_agent("bad_ep", 0)
    res = run_evaluation(EvalConfig(agents=["natural_ep", "greedy"], games=1, progress=False, plots=False),
                         write=False)
    assert res["games"] == 2


def test_unknown_name_without_entry_point():
    with pytest.raises(ValueError, match="entry-point group handfoot.agents"):
        make_agent("no_such_agent_name", 0)


def test_training_config_accepts_plugin_opponents(example_on_path):
    cfg = TrainConfig(opponents={SPEC: 1.0})
    cfg.evaluation.opponents = [SPEC]
    cfg.validate()
    bad = TrainConfig(opponents={"py:natural_agent:Missing": 1.0})
    with pytest.raises(ConfigError, match="opponents.py:natural_agent:Missing: .*no attribute"):
        bad.validate()


def test_training_env_plays_a_plugin_opponent(example_on_path):
    from experiments.training.sb3_env import SeatEnv
    from tests.test_train import random_weights
    env = SeatEnv(opponents={SPEC: 1.0}, seed=4)
    env.set_learner(random_weights(4))
    obs, info = env.reset(seed=4)
    assert info["opponent"] == SPEC
    for _ in range(200):
        legal = [i for i, m in enumerate(obs["action_mask"]) if m]
        obs, _, done, trunc, _ = env.step(legal[0])
        if done or trunc:
            break
    opponents = [a for kind, a in env.players if kind == "agent"]
    assert opponents and all(type(a).__name__ == "NaturalAgent" for a in opponents)


def test_demo_and_play_accept_plugin_specs(example_on_path):
    from rich.console import Console

    from experiments.apps.demo import run_demo
    from experiments.apps.play import play_main
    out = io.StringIO()
    g = run_demo([SPEC, "greedy"], seed=1, console=Console(file=out, width=120))
    assert g.game_over and SPEC in out.getvalue()
    buf = io.StringIO()
    status = play_main(["--seed", "1", "--opponents", SPEC, "--partner", SPEC, "--no-pause"],
                       input_fn=lambda prompt="": "q", stdout=buf)
    assert status == 0 and SPEC in buf.getvalue()
