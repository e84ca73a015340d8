"""Bad input, as a new user or an attacker would give it: one clear line, bounded work, no half-done state."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from experiments.apps.cli import main as handfoot
from handfoot_env import handfoot_v0
from handfoot_env.config import RuleConfigError, load_rules
from handfoot_env.safe_yaml import MAX_YAML_BYTES, parse_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[1]

ALIAS_BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


# ----------------------------------------------------------------------------- reset is atomic
def _played_env(seed=3, actions=40):
    env = handfoot_v0.env()
    env.reset(seed=seed)
    rng = random.Random(0)
    for _ in range(actions):
        obs, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return env


@pytest.mark.parametrize("bad", [
    {"seed": 6, "options": {"shoe": ["JK"] * 11}},          # more jokers than the decks hold
    {"seed": 6, "options": {"shoe": "KQJ"}},                # a string is not a list of cards
    {"seed": 6, "options": {"shoe": [7, 8]}},               # card codes are strings
    {"seed": 6, "options": {"round": 9}},
    {"seed": 6, "options": {"scores": [1, 2, 3]}},
    {"seed": 6, "options": {"scores": "12"}},
    {"seed": -1},
    {"seed": 2 ** 64},
    {"seed": "7"},
])
def test_a_failed_reset_leaves_the_env_exactly_as_it_was(bad):
    env = _played_env()
    raw = env.unwrapped
    before = json.dumps(raw.state_dict(), sort_keys=True, default=str)
    agent, rewards = raw.agent_selection, dict(raw._cumulative_rewards)
    with pytest.raises(ValueError):
        env.reset(**bad)
    assert json.dumps(raw.state_dict(), sort_keys=True, default=str) == before
    assert raw.agent_selection == agent and raw._cumulative_rewards == rewards
    obs, *_ = env.last()                                    # play goes on where it was
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))


def test_a_shoe_string_is_refused_not_read_letter_by_letter():
    env = handfoot_v0.raw_env()
    with pytest.raises(ValueError, match="list of card codes"):
        env.reset(seed=1, options={"shoe": "JK"})


# ----------------------------------------------------------------------------- partners share rewards
def test_an_illegal_move_under_env_costs_the_whole_team():
    env = handfoot_v0.env()
    env.reset(seed=5)
    obs, *_ = env.last()
    offender = env.agent_selection
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)
    raw = env.unwrapped
    team_of = {a: raw.game.team_of[raw.agent_name_mapping[a]] for a in raw.possible_agents}
    got = dict(raw._cumulative_rewards)
    for a in raw.possible_agents:
        want = -1.0 if team_of[a] == team_of[offender] else 0.0
        assert got[a] == want, (a, got)


# ----------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("argv", [["demo", "--seed", "-1"], ["play", "--seed", "-3"],
                                  ["evaluate", "--agents", "random", "greedy", "--seed", "-2"],
                                  ["bench", "--seed", "x"]])
def test_one_seed_rule_everywhere(argv, capsys):
    assert handfoot(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"handfoot {argv[0]}: error:") and "\n" not in err and "seed" in err


def test_workers_zero_is_an_error_not_a_silent_auto(tmp_path, capsys):
    assert handfoot(["evaluate", "--agents", "random", "greedy", "--workers", "0", "--out", str(tmp_path)]) == 2
    assert "--workers" in capsys.readouterr().err
    cfg = tmp_path / "e.yaml"
    cfg.write_text("agents: [random, greedy]\nworkers: 0\n")
    assert handfoot(["evaluate", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "'workers'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- YAML
def test_alias_bomb_is_refused_quickly_under_a_memory_cap(tmp_path):
    sheet = tmp_path / "bomb.yaml"
    sheet.write_text(ALIAS_BOMB)
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
            "from experiments.apps.cli import main\n"
            f"sys.exit(main(['score', {str(sheet)!r}]))\n")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    took = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "aliases" in proc.stderr
    assert took < 30          # an interpreter start; the refusal itself takes milliseconds (below)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="aliases"):
        parse_yaml(ALIAS_BOMB)
    assert time.perf_counter() - t0 < 1.0


def test_yaml_limits(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        parse_yaml("a: 1\na: 2\n")
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_yaml("[" * 100_000 + "]" * 100_000)
    big = tmp_path / "big.yaml"
    big.write_text("x: " + "a" * (MAX_YAML_BYTES + 1))
    with pytest.raises(ValueError, match="larger than"):
        read_yaml(big)
    with pytest.raises(ValueError, match="not valid YAML"):
        parse_yaml("!!python/object/apply:os.system ['touch pwned']")
    assert not (Path.cwd() / "pwned").exists()


def test_set_with_a_yaml_tag_is_one_line(tmp_path, capsys):
    rc = handfoot(["train", "configs/train/quickstart.yaml", "--set",
                   "seed=!!python/object/apply:os.system ['touch pwned']", "--run-dir", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot train: error: --set seed") and "\n" not in err
    assert not (Path.cwd() / "pwned").exists() and not any(tmp_path.iterdir())


@pytest.mark.parametrize("field,value", [("decks", 100_000_000), ("hand_size", 10 ** 6), ("players", 9),
                                         ("minimums", [50] * 1000), ("go_out_bonus", 10 ** 12)])
def test_rule_fields_are_bounded(field, value):
    t0 = time.perf_counter()
    with pytest.raises(RuleConfigError, match=field):
        load_rules("pagat", **{field: value})
    assert time.perf_counter() - t0 < 1.0


def test_a_huge_score_sheet_is_refused_before_work(tmp_path, capsys):
    sheet = tmp_path / "long.yaml"
    sheet.write_text("teams: [Us, Them]\nrounds:\n" + "  - {Us: {melded_points: 5}, Them: {melded_points: 5}}\n"
                     * 20_000)
    t0 = time.perf_counter()
    assert handfoot(["score", str(sheet)]) == 2
    assert time.perf_counter() - t0 < 5.0
    assert capsys.readouterr().err.startswith("handfoot score: error:")


# ----------------------------------------------------------------------------- the command line
def test_version(capsys):
    assert handfoot(["--version"]) == 0
    assert capsys.readouterr().out.startswith("handfoot ")


def test_import_registers_the_env_in_a_fresh_interpreter():
    code = ("import pettingzoo, handfoot_env\n"
            "env = pettingzoo.make('aec', 'handfoot/hand_and_foot-v0')\n"
            "env.reset(seed=1)\nprint(env.unwrapped.metadata['name'])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "handfoot_v0"


BAD_INPUTS = [
    ["evaluate", "--agents", "policy:/no/such/run", "random"],
    ["evaluate", "--agents", "rllib:/no/such/run", "random"],
    ["evaluate", "no_such.yaml"],
    ["replay", "no_such.json"],
    ["score", "no_such.yaml"],
    ["bench", "no_such.yaml"],
    ["train", "no_such.yaml"],
    ["experiment", "no_such.yaml"],
    ["demo", "--agents", "chess_master", "random"],
    ["demo", "--rules", "no_such_preset"],
    ["play", "--rules", "no_such_preset"],
    ["play", "--save", "/no/such/folder/game.json", "--seed", "1"],
    ["train", "--bogus-flag"],
]


@pytest.mark.parametrize("argv", BAD_INPUTS, ids=[" ".join(a) for a in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(argv, capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": "q")
    rc = handfoot(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert err.startswith(f"handfoot {argv[0]}: error:"), err
    assert "\n" not in err and "Traceback" not in err


def test_hostile_records_are_one_line(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert handfoot(["replay", str(deep)]) == 2
    assert "nested too deeply" in capsys.readouterr().err
    assert handfoot(["demo", "--seed", "1", "--save", str(tmp_path / "g.json")]) == 0
    capsys.readouterr()
    rec = json.loads((tmp_path / "g.json").read_text())
    for shoe in ("KQJ", [1, 2], {"K": 1}):
        rec.setdefault("options", {})["shoe"] = shoe
        (tmp_path / "bad.json").write_text(json.dumps(rec))
        assert handfoot(["replay", str(tmp_path / "bad.json"), "--check"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("handfoot replay: error:") and "shoe" in err and "\n" not in err


def _actor(n_out=705, n_in=170, visible=170):
    rng = np.random.default_rng(0)
    return {"scale": np.ones(n_in, np.float32), "visible": visible, "activation": "tanh",
            "layers": [(rng.normal(size=(8, n_in)).astype(np.float32), np.zeros(8, np.float32))],
            "out": (rng.normal(size=(n_out, 8)).astype(np.float32), np.zeros(n_out, np.float32))}


@pytest.mark.parametrize("change,words", [
    (lambda a: a.pop("out_w"), "no array out_w"),
    (lambda a: a.update(out_w=np.zeros((12, 8), np.float32), out_b=np.zeros(12, np.float32)), "705"),
    (lambda a: a.update(w0=np.zeros((8, 3), np.float32)), "layer 0"),
    (lambda a: a.update(activation=np.asarray("sigmoid")), "activation"),
    (lambda a: a.update(w0=np.full((8, 170), np.nan, np.float32)), "non-finite"),
])
def test_a_broken_actor_file_is_one_line(tmp_path, capsys, change, words):
    from agents.policy import actor_arrays
    arrays = actor_arrays(_actor())
    change(arrays)
    np.savez(tmp_path / "actor.npz", **arrays)
    assert handfoot(["evaluate", "--agents", f"policy:{tmp_path}", "random", "--games", "1",
                     "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot evaluate: error:") and words in err and "\n" not in err, err


def test_an_actor_for_other_rules_is_refused_when_seated(tmp_path, capsys):
    from agents.policy import save_actor
    save_actor(_actor(n_in=200, visible=200), tmp_path / "actor.npz")
    assert handfoot(["evaluate", "--agents", f"policy:{tmp_path}", "random", "--games", "1",
                     "--out", str(tmp_path / "o")]) == 2
    assert "observation entries" in capsys.readouterr().err


def test_fuzzed_files_never_give_a_traceback(tmp_path, capsys):
    """Random and mutated YAML, JSON records and score sheets thrown at every command that reads a file."""
    rng = random.Random(7)
    seeds = [(ROOT / "configs/scoresheets/example.yaml").read_text(), (ROOT / "configs/eval/smoke.yaml").read_text(),
             (ROOT / "configs/train/quickstart.yaml").read_text(), (ROOT / "configs/bench/quick.yaml").read_text(),
             json.dumps({"format": "handfoot-record", "version": 1, "rules": "pagat", "seed": 1, "actions": []})]
    alphabet = list("{}[]:,-&*!|>'\"#\n \t") + ["null", "1e999", "-1", "~", "[[[[", "&a", "*a", "\x00", "é"]
    commands = ["score", "evaluate", "train", "replay"]
    extra = {"evaluate": ["--games", "1", "--no-plots", "--out", str(tmp_path / "eval")],
             "train": ["--set", "total_timesteps=0", "--run-dir", str(tmp_path / "runs")],  # refused after parsing
             "replay": ["--check"], "score": []}
    for i in range(48):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 6)):
            pos = rng.randrange(len(text) + 1)
            if rng.random() < 0.5:
                text = text[:pos] + rng.choice(alphabet) + text[pos:]
            else:
                text = text[:pos] + text[pos + rng.randint(1, 20):]
        f = tmp_path / f"in{i}.yaml"
        f.write_text(text)
        cmd = commands[i % len(commands)]
        rc = handfoot([cmd, str(f)] + extra[cmd])
        err = capsys.readouterr().err.strip()
        assert "Traceback" not in err
        assert rc in (0, 2), (cmd, text, err)
        if rc == 2:
            assert err.startswith(f"handfoot {cmd}: error:") and "\n" not in err, (cmd, text, err)

