"""``handfoot play`` and ``handfoot demo``: scripted full games, bad input, EOF, presets."""
from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.apps.demo import demo_main
from experiments.apps.play import action_order, parse_choice, play_main
from experiments.apps.table import describe_action
from handfoot_env.actions import ACTION_INDEX, ANSWER_NO, ANSWER_YES, DRAW
from handfoot_env.engine import ANSWER_PHASE, Game
from handfoot_env.record import load_record, replay_record
from handfoot_env.view import seat_view

ROOT = Path(__file__).resolve().parent.parent
HANDFOOT = [sys.executable, "-m", "experiments.apps.cli"]
LISTED = re.compile(r"^\s*(\d+)\)\s+(\S+)", re.M)
#: going out needs no books: partners ask early and often, so the question reaches the person
EASY_OUT = ["--rule", "go_out_clean=0", "--rule", "go_out_dirty=0", "--rule", "go_out_wild=0"]


class ScriptedPlayer:
    """Plays the human seat by reading the legal actions that ``handfoot play`` listed.

    Types the action name or its number (alternately), answers a partner's
    question with ``y`` then ``no`` alternately, presses Enter between rounds,
    and types the ``bad`` entries first.
    """

    def __init__(self, out: io.StringIO, bad=()):
        self.out = out
        self.bad = list(bad)
        self.prompts = []
        self.answers = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if "Press Enter" in prompt:
            return ""
        text = self.out.getvalue()
        block = text[text.rindex("Legal actions:"):]
        names = [name for _, name in LISTED.findall(block)]
        assert names, "no legal actions were listed before the prompt"
        assert all(name in ACTION_INDEX for name in names), f"a listed action name is garbled: {names}"
        if self.bad:
            return self.bad.pop(0)
        n = len(self.prompts)
        if "answer_yes" in names:
            word = "y" if len(self.answers) % 2 == 0 else "no"
            self.answers.append(word)
            return word
        for want in ("lay_red_three", "pickup", "draw", "ask_go_out"):
            if want in names:
                return want if n % 2 else str(names.index(want) + 1)
        melds = [m for m in names if m.startswith("meld:")]
        if melds:
            return max(melds, key=lambda m: sum(int(x) for x in m.split(":")[2:]))
        discards = [d for d in names if d.startswith("discard:")]
        plain = [d for d in discards if d not in ("discard:2", "discard:JK")]
        pick = (plain or discards or names)[0]
        return str(names.index(pick) + 1)


def _play(args, bad=()):
    out = io.StringIO()
    player = ScriptedPlayer(out, bad)
    rc = play_main(list(args), input_fn=player, stdout=out)
    return rc, out.getvalue(), player


def test_full_game_with_invalid_entry_and_going_out_question(tmp_path):
    """A whole game against greedy bots: bad entries are re-asked, the partner's question is answered."""
    found = None
    for seed in range(2, 12):
        save = tmp_path / f"game{seed}.json"
        rc, text, player = _play(["--seed", str(seed), "--save", str(save)] + EASY_OUT,
                                 bad=["banana", "99", "discard:JK"])
        assert rc == 0
        assert "Game over:" in text
        if player.answers:
            found = (seed, save, text, player)
            break
    assert found is not None, "no seed in 2..11 made the partner ask the person to go out"
    seed, save, text, player = found
    # the invalid entries were rejected with a message and asked again
    assert "Not accepted: 'banana' is not an action" in text
    assert "Not accepted: there is no action number 99" in text
    assert "Not accepted: discard:JK is not legal now" in text
    # the going-out question was put to the person at its own prompt and answered there
    assert "(your partner) asks: \"May I go out?\"" in text
    assert any(p.startswith("Your answer") for p in player.prompts)
    assert re.search(r"player_2 \(greedy\): ask you \(partner\): may I go out\?", text)
    # score sheets between rounds; Enter to continue; the final result
    assert text.count("Score sheet") >= 4
    assert sum("Press Enter" in p for p in player.prompts) == 3
    # the saved record replays to the same result
    rec = load_record(save)
    g = replay_record(rec)
    assert g.game_over and rec["game_over"] and rec["players"] == ["human", "greedy", "greedy", "greedy"]
    assert rec["meta"]["human_seat"] == 0
    answers = [name for p, name in rec["actions"] if name in ("answer_yes", "answer_no") and p == 0]
    assert answers and answers[0] == "answer_yes"


@pytest.mark.parametrize("args", [["--rules", "individual", "--seat", "1", "--opponents", "random"],
                                  ["--rules", "six_player", "--seat", "3", "--partner", "random",
                                   "--rule", "hand_size=9", "--rule", "foot_size=9", "--no-pause"]])
def test_full_game_other_presets(args):
    rc, text, _ = _play(["--seed", "5"] + args)
    assert rc == 0 and "Game over:" in text


def test_eof_exits_cleanly():
    p = subprocess.run(HANDFOOT + ["play", "--seed", "1"], input="banana\n", capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "Not accepted" in p.stdout and "Game abandoned: input ended" in p.stdout
    assert "Traceback" not in p.stderr + p.stdout


def test_quit_saves_partial_record(tmp_path):
    save = tmp_path / "partial.json"
    p = subprocess.run(HANDFOOT + ["play", "--seed", "4", "--save", str(save)], input="1\nq\n",
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "You left the game." in p.stdout and "Game record saved" in p.stdout
    rec = load_record(save)
    assert rec["game_over"] is False and len(rec["actions"]) >= 1
    replay_record(rec)
    check = subprocess.run(HANDFOOT + ["replay", str(save), "--check"], capture_output=True, text=True, cwd=ROOT,
                           timeout=120)
    assert check.returncode == 0 and "not finished" in check.stdout


@pytest.mark.parametrize("args, message", [
    (["--opponents", "nonsense"], "cannot create agent 'nonsense'"),
    (["--partner", "policy:/does/not/exist"], "cannot create agent 'policy:/does/not/exist'"),
    (["--seat", "7"], "--seat must be between 0 and 3"),
    (["--rules", "nope"], "unknown rules 'nope'"),
    (["--rule", "decks=1"], "impossible rules"),
])
def test_bad_arguments_exit_2(args, message, capsys):
    rc = play_main(args + ["--seed", "1"], input_fn=lambda p: "q", stdout=io.StringIO())
    assert rc == 2
    assert message in capsys.readouterr().err


def test_parse_choice():
    g = Game("pagat")
    g.reset(seed=3)
    while g.legal_actions() != [DRAW]:           # red threes first
        g.step(g.legal_actions()[0])
    listed = action_order(g.legal_actions())
    assert parse_choice("1", listed, g) == (DRAW, None)
    assert parse_choice(" DRAW ", listed, g) == (DRAW, None)
    a, msg = parse_choice("2", listed, g)
    assert a is None and "choose 1 to 1" in msg
    a, msg = parse_choice("discard:K", listed, g)
    assert a is None and "not legal now" in msg and "draw" in msg
    a, msg = parse_choice("banana", listed, g)
    assert a is None and "not an action" in msg
    a, msg = parse_choice("y", listed, g)
    assert a is None
    # the answer words work when answering
    g.phase = ANSWER_PHASE
    assert parse_choice("y", [ANSWER_YES, ANSWER_NO], g) == (ANSWER_YES, None)
    assert parse_choice("No", [ANSWER_YES, ANSWER_NO], g) == (ANSWER_NO, None)
    assert parse_choice("answer_no", [ANSWER_YES, ANSWER_NO], g) == (ANSWER_NO, None)


def test_every_legal_action_has_a_description():
    from agents.heuristics import GreedyAgent
    g = Game("pagat")
    g.reset(seed=11)
    agents = [GreedyAgent(p) for p in range(4)]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, p)
    seen = 0
    while not g.game_over:
        legal = g.legal_actions()
        listed = action_order(legal)
        assert sorted(listed) == sorted(legal)
        for a in listed:
            d = describe_action(g, a, viewer=0)
            assert d and d != ""
            seen += 1
        g.step(agents[g.current].act(None, seat_view(g, g.current)))
    assert seen > 1000


def test_demo_prints_rounds_and_final_scores(tmp_path):
    out = io.StringIO()
    save = tmp_path / "demo.json"
    rc = demo_main(["--seed", "1", "--save", str(save)], stdout=out)
    text = out.getvalue()
    assert rc == 0
    for k in range(1, 5):
        assert f"End of round {k}" in text
    assert "Final scores: team 0" in text and "Score sheet" in text
    g = replay_record(load_record(save))
    assert g.game_over


def test_demo_cli_agents_and_bad_spec():
    p = subprocess.run(HANDFOOT + ["demo", "--agents", "greedy", "random", "--seed", "2", "--rules", "bicycle"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "team 0: greedy" in p.stdout and "Final scores" in p.stdout
    bad = subprocess.run(HANDFOOT + ["demo", "--agents", "greedy", "bogus"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "bogus" in bad.stderr and "Traceback" not in bad.stderr
