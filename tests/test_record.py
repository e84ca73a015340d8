"""Game records: save, load, replay and verify; tampered records are rejected (CLI exit status 2)."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.registry import make_agent
from experiments.apps.replay import replay_main
from handfoot_env.actions import ACTION_NAMES
from handfoot_env.cards import deck_counts
from handfoot_env.engine import Game
from handfoot_env.record import (
    FORMAT,
    VERSION,
    RecordError,
    RecordMismatchError,
    check_record,
    load_record,
    make_record,
    positions,
    replay_record,
    save_record,
)
from handfoot_env.view import seat_view

ROOT = Path(__file__).resolve().parent.parent
HANDFOOT = [sys.executable, "-m", "experiments.apps.cli"]


def play_out(g: Game, specs=("greedy", "random", "greedy", "random"), max_actions=None) -> Game:
    agents = [make_agent(s, p) for p, s in enumerate(specs)]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, p)
    n = 0
    while not g.game_over and (max_actions is None or n < max_actions):
        g.step(agents[g.current].act(None, seat_view(g, g.current)))
        n += 1
    return g


@pytest.fixture(scope="module")
def finished():
    g = Game("pagat")
    g.reset(seed=21)
    return play_out(g)


@pytest.fixture()
def record_file(finished, tmp_path):
    path = tmp_path / "game.json"
    save_record(finished, path, players=["greedy", "random", "greedy", "random"], meta={"why": "test"})
    return path


def test_record_fields(finished, record_file):
    rec = json.loads(record_file.read_text())
    assert rec["format"] == FORMAT and rec["version"] == VERSION
    assert rec["rules"] == finished.rules.to_dict()
    assert rec["seed"] == 21
    assert rec["options"] == {"shoe": None, "round": 1, "scores": [0, 0]}
    assert rec["actions"][0] == [finished.history[0][0], ACTION_NAMES[finished.history[0][1]]]
    assert len(rec["actions"]) == len(finished.history)
    assert rec["round_scores"] == finished.round_scores and len(rec["round_scores"]) == 4
    assert rec["scores"] == finished.scores and rec["winner"] == finished.winner and rec["game_over"] is True
    assert rec["players"] == ["greedy", "random", "greedy", "random"] and rec["meta"]["why"] == "test"


def test_round_trip(finished, record_file):
    g = replay_record(load_record(record_file))
    assert g.history == finished.history
    assert g.scores == finished.scores and g.round_scores == finished.round_scores
    assert g.winner == finished.winner
    assert g.state_dict() == finished.state_dict()


def test_positions_step_through(finished, record_file):
    pos = positions(load_record(record_file))
    n = len(finished.history)
    assert len(pos) == n + 1
    assert pos[0].action is None and pos[0].game.history == []
    for k in (1, 17, n // 2, n):
        assert pos[k].index == k
        assert pos[k].game.history == finished.history[:k]
        assert pos[k].action == (finished.history[k - 1][0], ACTION_NAMES[finished.history[k - 1][1]])
    ends = [p for p in pos if p.round_end is not None]
    assert [p.round_scores for p in ends] == finished.round_scores
    full = deck_counts(finished.rules.decks)
    for p in ends:           # the board at the round's end: no card lost, not yet redealt
        assert p.round_end.card_locations() == full
        assert p.round_end.round == p.game.round - 1 or p.game.game_over


def test_stacked_shoe_start_round_and_scores_are_kept(tmp_path):
    shoe = ["K", "K", "K", "2", "JK"]
    g = Game("bicycle")
    g.reset(seed=5, shoe=shoe, round=3, scores=[1000, -50])
    play_out(g)
    path = tmp_path / "shoe.json"
    rec = save_record(g, path, options={"shoe": shoe})
    assert rec["options"] == {"shoe": shoe, "round": 3, "scores": [1000, -50]}
    g2 = replay_record(load_record(path))
    assert g2.scores == g.scores and g2.history == g.history
    # without the shoe the deal differs and the replay does not follow the record
    bad = dict(rec, options={"shoe": None, "round": 3, "scores": [1000, -50]})
    with pytest.raises(RecordMismatchError):
        replay_record(bad)


def test_unfinished_game_record(tmp_path):
    g = Game("pagat")
    g.reset(seed=8)
    play_out(g, max_actions=50)
    rec = make_record(g)
    assert rec["game_over"] is False and rec["winner"] is None and len(rec["actions"]) == 50
    assert replay_record(rec).history == g.history


def _tampered(rec, edit):
    r = json.loads(json.dumps(rec))
    edit(r)
    return r


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["round_scores"][1].__setitem__(0, r["round_scores"][1][0] + 10),
     "round 2 score of team 0: record says"),
    (lambda r: r["scores"].__setitem__(1, r["scores"][1] - 5), "final score of team 1: record says"),
    (lambda r: r.__setitem__("winner", 1 - r["winner"]), "winner: record says team"),
    (lambda r: r["actions"][3].__setitem__(1, "discard:JK"), "action 4 "),
    (lambda r: r["actions"][0].__setitem__(0, 2), "action 1 (player_2 "),
    (lambda r: r.__setitem__("actions", r["actions"][:-40]), "round 4 score"),
    (lambda r: r.__setitem__("seed", r["seed"] + 1), "action "),
])
def test_tampered_records_are_rejected(finished, edit, message):
    rec = _tampered(make_record(finished), edit)
    with pytest.raises(RecordMismatchError) as e:
        replay_record(rec)
    assert message in str(e.value)
    with pytest.raises(RecordMismatchError):
        positions(rec)


def test_every_round_score_of_every_team_is_verified(finished):
    """A record whose score of any one round (the last one included) is off by 10 is rejected,
    both by ``replay_record`` and by ``positions``, with the round and team named."""
    rec = make_record(finished)
    assert len(rec["round_scores"]) >= 2
    for r, round_scores in enumerate(rec["round_scores"]):
        for t in range(len(round_scores)):
            bad = _tampered(rec, lambda x: x["round_scores"][r].__setitem__(t, x["round_scores"][r][t] + 10))
            message = f"round {r + 1} score of team {t}: record says {round_scores[t] + 10}"
            for check in (replay_record, positions):
                with pytest.raises(RecordMismatchError) as e:
                    check(bad)
                assert message in str(e.value), (r, t, check.__name__)


def test_extra_and_missing_round_scores_are_rejected(finished):
    rec = make_record(finished)
    n = len(rec["round_scores"])
    extra = _tampered(rec, lambda x: x["round_scores"].append([0, 0]))
    with pytest.raises(RecordMismatchError) as e:
        replay_record(extra)
    assert f"round {n + 1} score: record says [0, 0], but that round does not end in the replay" in str(e.value)
    short = _tampered(rec, lambda x: x["round_scores"].pop())
    with pytest.raises(RecordMismatchError) as e:
        replay_record(short)
    assert f"round {n} ends in the replay" in str(e.value)
    assert f"the record lists only {n - 1} finished rounds" in str(e.value)
    bad_shape = _tampered(rec, lambda x: x["round_scores"].__setitem__(0, [1, 2, 3]))
    with pytest.raises(RecordMismatchError, match="round 1 scores: record has"):
        replay_record(bad_shape)


def test_game_over_flag_is_verified(finished):
    bad = _tampered(make_record(finished), lambda x: x.__setitem__("game_over", False))
    with pytest.raises(RecordMismatchError, match="game over: record says False, replay gives True"):
        replay_record(bad)


@pytest.mark.parametrize("data, message", [
    ({"format": "x"}, "not a game record"),
    ({"format": FORMAT, "version": 99}, "version 99 is not supported"),
    ("text", "JSON object"),
])
def test_malformed_records(data, message):
    with pytest.raises(RecordError) as e:
        check_record(data)
    assert message in str(e.value)


def test_unknown_action_name(finished):
    rec = _tampered(make_record(finished), lambda r: r["actions"][2].__setitem__(1, "fly"))
    with pytest.raises(RecordError) as e:
        check_record(rec)
    assert "action 3: unknown action name 'fly'" in str(e.value)


@pytest.mark.subprocess
def test_cli_rejects_tampered_record_with_status_2(finished, tmp_path):
    rec = _tampered(make_record(finished), lambda r: r["round_scores"][1].__setitem__(0, r["round_scores"][1][0] + 10))
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(rec))
    p = subprocess.run(HANDFOOT + ["replay", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       input="q\n")
    assert p.returncode == 2
    assert "does not verify" in p.stderr and "round 2 score of team 0: record says" in p.stderr
    assert "Traceback" not in p.stderr
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    p = subprocess.run(HANDFOOT + ["replay", str(junk)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2 and "not a JSON file" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.subprocess
def test_cli_check_and_interactive_replay(record_file, finished):
    p = subprocess.run(HANDFOOT + ["replay", str(record_file), "--check"], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0 and "Verified" in p.stdout
    n = len(finished.history)
    cmds = iter(["n", "", "p", "10", "bogus", "r 2", "s 1", "+3", "-1", "a", "end", "n", "q"])
    out = io.StringIO()
    rc = replay_main([str(record_file)], input_fn=lambda prompt: next(cmds), stdout=out)
    text = out.getvalue()
    assert rc == 0
    for k in (0, 1, 2, 10, n):
        assert f"Position {k}/{n}" in text
    assert "Unknown command 'bogus'" in text
    assert "Round 1 ends" in text and "Round 2: the deal" in text
    assert "This is the last position" in text
    # seat view hides the other hands, the full view shows them
    assert "Your hand" in text and "player_0 hand:" in text


@pytest.mark.subprocess
def test_cli_replay_seat_view_and_eof(record_file):
    p = subprocess.run(HANDFOOT + ["replay", str(record_file), "--seat", "2", "--at", "5"], input="n\n",
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr
    assert "Position 5/" in p.stdout and "Position 6/" in p.stdout and "Your hand" in p.stdout


def test_evaluate_records_replay(tmp_path):
    """Per-game records written by ``handfoot evaluate --records`` can be verified and replayed too."""
    from experiments.evaluation import harness as evaluate
    from handfoot_env.config import load_rules
    res = evaluate.play_game(load_rules("pagat"), ["greedy", "random", "greedy", "random"], 3, record=True)
    rec = res["record"]
    g = replay_record(rec)
    assert g.scores == res["scores"]
    path = tmp_path / "eval.json"
    path.write_text(json.dumps(rec))
    assert replay_record(load_record(path)).scores == res["scores"]


def test_evaluate_records_are_converted_field_by_field():
    from experiments.evaluation import harness
    from handfoot_env.config import load_rules
    rec = harness.play_game(load_rules("pagat"), ["greedy", "random", "greedy", "random"], 5, record=True)["record"]
    rec.update(deal=3, game=1, pair=[0, 2], other="not kept")
    out = check_record(rec)
    assert out["format"] == FORMAT and out["version"] == VERSION and out["rules"] == rec["rules"]
    assert out["seed"] == 5 and out["options"] == {"shoe": None, "round": 1, "scores": [0, 0]}
    assert out["players"] == ["greedy", "random", "greedy", "random"] and out["actions"] == rec["action_log"]
    assert out["round_scores"] == rec["round_scores"] and out["scores"] == rec["scores"]
    assert out["winner"] == rec["winner"] and out["game_over"] is True
    assert out["meta"] == {"deal": 3, "game": 1, "pair": [0, 2], "converted_from": "evaluate"}
    assert replay_record(out).scores == rec["scores"]
    three = dict(rec, scores=[0, 0, 0])
    assert check_record(three)["options"]["scores"] == [0, 0, 0]
    assert check_record(dict(rec, scores=[]))["options"]["scores"] == [0, 0]     # two teams unless told
    assert "format" not in rec                                                   # the input is left alone
