"""Game records: save, load, replay and verify; tampered records are rejected (CLI exit status 2)."""
from __future__ import annotations

import datetime
import io
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from agents.registry import make_agent
from experiments.apps.replay import replay_main
from handfoot_env.actions import ACTION_NAMES
from handfoot_env.cards import deck_counts
from handfoot_env import record as record_mod
from handfoot_env.engine import GAME_OVER, Game
from handfoot_env.record import (
    FORMAT,
    VERSION,
    RecordError,
    RecordMismatchError,
    check_record,
    dumps_record,
    load_record,
    make_record,
    new_game,
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


# --------------------------------------------------------------------------- exact messages and edge cases
@pytest.fixture(scope="module")
def unfinished():
    g = Game("pagat")
    g.reset(seed=8)
    return play_out(g, max_actions=50)


@pytest.fixture(scope="module")
def fresh_record():
    g = Game("pagat")
    g.reset(seed=3)
    return make_record(g, players=["a", "b", "c", "d"])


def _set(key, value):
    return lambda r: r.__setitem__(key, value)


def _drop(key):
    return lambda r: r.pop(key)


def _actions(*entries):
    return _set("actions", [[0, "draw"], [0, "discard:9"], *entries])


def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("edit, message", [
    (_drop("rules"), "record has no 'rules' field (a mapping of rule fields)"),
    (_set("rules", []), "record field 'rules' must be a mapping of rule fields, got []"),
    (_drop("seed"), "record has no 'seed' field (an integer)"),
    (_set("seed", "7"), "record field 'seed' must be an integer, got '7'"),
    (_set("seed", True), "record field 'seed' must be an integer, got True"),
    (_drop("options"), "record has no 'options' field (a mapping of reset options)"),
    (_set("options", [1]), "record field 'options' must be a mapping of reset options, got [1]"),
    (_set("options", {"zeta": 1, "round": 1, "alpha": 2}), "record field 'options' has unknown key 'alpha'"),
    (_drop("actions"), "record has no 'actions' field (a list of [player, action name])"),
    (_set("actions", {}), "record field 'actions' must be a list of [player, action name], got {}"),
    (_actions(["0", "draw"]), "action 3: expected [player, action name], got ['0', 'draw']"),
    (_actions([True, "draw"]), "action 3: expected [player, action name], got [True, 'draw']"),
    (_actions([0, "draw", 1]), "action 3: expected [player, action name], got [0, 'draw', 1]"),
    (_actions([0]), "action 3: expected [player, action name], got [0]"),
    (_actions([0, 5]), "action 3: expected [player, action name], got [0, 5]"),
    (_actions(5), "action 3: expected [player, action name], got 5"),
    (_actions({0: 0, 1: "draw"}), "action 3: expected [player, action name], got {0: 0, 1: 'draw'}"),
    (_actions([1, "fly"]), "action 3: unknown action name 'fly'"),
    (_drop("round_scores"), "record has no 'round_scores' field (a list of per-team round scores)"),
    (_set("round_scores", None), "record field 'round_scores' must be a list of per-team round scores, got None"),
    (_drop("scores"), "record has no 'scores' field (a list of team scores)"),
    (_set("scores", "0"), "record field 'scores' must be a list of team scores, got '0'"),
    (_set("players", ["a", "b", "c", 4]), "record field 'players' must be a list of labels, got ['a', 'b', 'c', 4]"),
    (_set("players", "abcd"), "record field 'players' must be a list of labels, got 'abcd'"),
    (_set("format", "x"), "not a game record: field 'format' is 'x', expected 'handfoot-record'"),
    (lambda r: r.update(format="x", action_log=[]),
     "not a game record: field 'format' is 'x', expected 'handfoot-record'"),
    (_drop("format"), "not a game record: field 'format' is None, expected 'handfoot-record'"),
    (_set("version", 2), "record format version 2 is not supported (this version reads 1)"),
])
def test_malformed_record_messages(fresh_record, edit, message):
    """Each structural fault of a record is refused with its whole message, naming the field or action."""
    with pytest.raises(RecordError) as e:
        check_record(_tampered(fresh_record, edit))
    assert str(e.value) == message


@pytest.mark.parametrize("data, name", [("text", "str"), ([1], "list"), (None, "NoneType"), (3, "int")])
def test_non_object_record_message(data, name):
    """A record that is not a JSON object is refused naming the type it is."""
    with pytest.raises(RecordError) as e:
        check_record(data)
    assert str(e.value) == f"a record is a JSON object, got {name}"


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "none.json", "record file {q} does not exist"),
    (lambda d: d, "record file {q} is not a file"),
    (lambda d: _write(d / "x.json", "{not json"),
     "{p}: not a JSON file: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (lambda d: _write(d / "x.json", b'{"a": "\xff"}'),
     "{p}: not a JSON file: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte"),
    (lambda d: _write(d / "x.json", "[" * 100_000), "{p}: not a record: JSON nested too deeply"),
    (lambda d: _write(d / "x.json", "[]"), "{p}: a record is a JSON object, got list"),
    (lambda d: _write(d / "x.json", '{"format": "x"}'),
     "{p}: not a game record: field 'format' is 'x', expected 'handfoot-record'"),
])
def test_load_record_messages(tmp_path, make, message):
    """A path that is not a readable record file is refused with a message naming the path."""
    path = make(tmp_path)
    with pytest.raises(RecordError) as e:
        load_record(path)
    assert str(e.value) == message.format(p=path, q=repr(str(path)))


def test_load_record_size_limit(record_file, monkeypatch):
    """A record file of exactly MAX_RECORD_BYTES bytes is read; one byte more is refused."""
    size = record_file.stat().st_size
    monkeypatch.setattr(record_mod, "MAX_RECORD_BYTES", size)
    assert load_record(record_file)["seed"] == 21
    monkeypatch.setattr(record_mod, "MAX_RECORD_BYTES", size - 1)
    with pytest.raises(RecordError) as e:
        load_record(record_file)
    assert str(e.value) == f"{record_file}: larger than {size - 1:,} bytes (a record of a long game is under 1 MB)"


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["rules"].__setitem__("players", "x"),
     "record rules: rules: rule field 'players' must be an integer, got str 'x'"),
    (_set("players", ["a", "b", "c"]), "players: 3 labels for 4 seats"),
    (lambda r: r["options"].__setitem__("round", 99),
     "record reset options: round must be an integer from 1 to 4, got 99"),
    (lambda r: r["options"].__setitem__("round", 0),
     "record reset options: round must be an integer from 1 to 4, got 0"),
    (lambda r: r["options"].__setitem__("round", False),
     "record reset options: round must be an integer from 1 to 4, got False"),
    (lambda r: r["options"].__setitem__("round", ""),
     "record reset options: round must be an integer from 1 to 4, got ''"),
    (lambda r: r["options"].__setitem__("scores", [0]),
     "record reset options: scores must be 2 integers (one per team), got [0]"),
])
def test_new_game_messages(fresh_record, edit, message):
    """Bad rules, a wrong number of player labels or bad reset options are refused before any replay."""
    bad = _tampered(fresh_record, edit)
    for start in (new_game, replay_record, positions):
        with pytest.raises(RecordError) as e:
            start(bad)
        assert type(e.value) is RecordError and str(e.value) == message, start.__name__


@pytest.mark.parametrize("call, message", [
    (lambda g: make_record(Game("pagat")), "the game has not been reset: nothing to record"),
    (lambda g: make_record(g, options={"deck": 1}), "unknown reset option 'deck'; expected shoe, round or scores"),
    (lambda g: make_record(g, players=["a", "b", "c"]), "players: 3 labels for 4 seats"),
])
def test_make_record_messages(finished, call, message):
    """make_record refuses a game never reset, an unknown reset option and a wrong number of labels."""
    with pytest.raises(RecordError) as e:
        call(finished)
    assert str(e.value) == message


def test_make_record_options_and_saved_time(finished):
    """Reset options given as tuples are stored as lists, other values as given; meta holds the UTC save time."""
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    rec = make_record(finished, options={"shoe": ("K", "JK"), "round": 1, "scores": (0, 0)}, meta={"why": "x"})
    after = datetime.datetime.now(datetime.timezone.utc)
    assert rec["options"] == {"shoe": ["K", "JK"], "round": 1, "scores": [0, 0]}
    assert make_record(finished, options={"shoe": None})["options"]["shoe"] is None
    assert set(rec["meta"]) == {"saved", "why"} and rec["meta"]["why"] == "x"
    saved = rec["meta"]["saved"]
    assert saved.endswith("+00:00")
    assert before <= datetime.datetime.fromisoformat(saved) <= after


def test_dumps_record_layout():
    """One field per line and one action per line; an empty action list stays on its field's line."""
    rec = {"format": FORMAT, "actions": [[0, "draw"], [1, "discard:9"]], "scores": [1, 2]}
    assert dumps_record(rec) == (
        '{\n'
        ' "format": "handfoot-record",\n'
        ' "actions": [\n'
        '  [0, "draw"],\n'
        '  [1, "discard:9"]\n'
        ' ],\n'
        ' "scores": [1, 2]\n'
        '}\n')
    empty = '{\n "format": "handfoot-record",\n "actions": [],\n "scores": [1, 2]\n}\n'
    assert dumps_record(dict(rec, actions=[])) == empty
    assert json.loads(dumps_record(rec)) == rec


def test_save_record_creates_missing_directories(finished, tmp_path, monkeypatch):
    """save_record creates a missing parent two levels deep, and writes into an existing directory."""
    deep = tmp_path / "a" / "b" / "game.json"
    rec = save_record(finished, deep)
    assert deep.read_text() == dumps_record(rec)
    other = tmp_path / "a" / "other.json"
    assert save_record(finished, other) == json.loads(other.read_text())
    monkeypatch.chdir(tmp_path)
    save_record(finished, "here.json")
    assert load_record(tmp_path / "here.json")["seed"] == 21


def test_save_record_under_a_file_is_refused(finished, tmp_path):
    """A path whose parent is a file is not made a directory: the write fails with NotADirectoryError."""
    f = _write(tmp_path / "file", "x")
    with pytest.raises(NotADirectoryError):
        save_record(finished, f / "game.json")
    assert f.read_text() == "x"


def test_mismatch_error_keeps_its_index():
    """RecordMismatchError keeps the index of the action it is about (None when not given)."""
    e = RecordMismatchError("m", 7)
    assert e.index == 7 and str(e) == "m" and isinstance(e, RecordError)
    assert RecordMismatchError("m").index is None


def test_action_mismatches_name_the_action_and_its_index(finished):
    """An action after the game's end, by the wrong player or not legal is refused, naming it and its index."""
    rec = make_record(finished)
    n = len(rec["actions"])
    p5, name5 = rec["actions"][5]
    other = (p5 + 1) % 4
    p3 = rec["actions"][3][0]
    cases = [
        (_tampered(rec, lambda r: r["actions"].append([0, "draw"])),
         f"action {n + 1} (player_0 'draw'): the game was already over after action {n}", n),
        (_tampered(rec, lambda r: r["actions"][5].__setitem__(0, other)),
         f"action 6 (player_{other} {name5!r}): the record says player_{other} acts, "
         f"but player_{p5} is to act in the replay", 5),
        (_tampered(rec, lambda r: r["actions"][3].__setitem__(1, "discard:JK")),
         f"action 4 (player_{p3} 'discard:JK') is not legal in the replay: there is no JK in hand", 3),
    ]
    for bad, message, index in cases:
        for check in (replay_record, positions, lambda r: replay_record(r, verify=False)):
            with pytest.raises(RecordMismatchError) as e:
                check(bad)
            assert str(e.value) == message and e.value.index == index


def test_final_result_mismatch_messages(finished, unfinished):
    """Final scores (of another length too), the game-over flag and the winner are verified, named exactly."""
    fin, unf = make_record(finished), make_record(unfinished)
    s, w = finished.scores, finished.winner
    cases = [
        (_tampered(fin, lambda r: r["scores"].append(0)), "final score of team 2: record says 0, replay gives None"),
        (_tampered(fin, lambda r: r["scores"].pop()), f"final score of team 1: record says None, replay gives {s[1]}"),
        (_tampered(fin, lambda r: r["scores"].__setitem__(0, s[0] + 5)),
         f"final score of team 0: record says {s[0] + 5}, replay gives {s[0]}"),
        (_tampered(fin, _set("game_over", False)), "game over: record says False, replay gives True"),
        (_tampered(unf, _set("game_over", True)), "game over: record says True, replay gives False"),
        (_tampered(fin, _set("winner", None)), f"winner: record says no winner, replay gives team {w}"),
        (_tampered(fin, _set("winner", 1 - w)), f"winner: record says team {1 - w}, replay gives team {w}"),
        (_tampered(unf, _set("winner", 1)), "winner: record says team 1, replay gives no winner"),
    ]
    for bad, message in cases:
        for check in (replay_record, positions):
            with pytest.raises(RecordMismatchError) as e:
                check(bad)
            assert str(e.value) == message and e.value.index is None


def test_each_finished_round_is_verified_once_in_order(finished, monkeypatch):
    """replay_record and positions check each finished round's scores once, in the order the rounds end."""
    real = record_mod._check_round
    seen = []

    def check_once(g, rec, r):
        assert r not in seen, f"round {r + 1} checked again"
        seen.append(r)
        real(g, rec, r)

    monkeypatch.setattr(record_mod, "_check_round", check_once)
    rec = make_record(finished)
    rounds = list(range(len(finished.round_scores)))
    assert replay_record(rec).scores == finished.scores and seen == rounds
    seen.clear()
    assert len(positions(rec)) == len(finished.history) + 1 and seen == rounds


@pytest.mark.parametrize("options", [{"shoe": None, "scores": [0, 0]}, {"shoe": None, "round": None, "scores": [0, 0]}])
def test_options_without_round_start_at_round_one(finished, options):
    """A record whose options give no round (or null) starts the game at round 1."""
    rec = dict(make_record(finished), options=options)
    g = new_game(rec)
    assert g.round == 1 and g.history == []
    assert replay_record(rec).scores == finished.scores


def test_positions_indices_and_round_end_boards(finished):
    """Positions count from 0; an action that ends no round has no round-end board or scores; one that ends a
    round (the last action included) has the board frozen before the deal: unscored, GAME_OVER, picklable."""
    pos = positions(make_record(finished))
    assert [p.index for p in pos] == list(range(len(finished.history) + 1))
    assert pos[0].round_end is None and pos[0].round_scores is None
    plain = [p for p in pos if p.round_end is None]
    assert len(plain) == len(pos) - len(finished.round_scores)
    assert all(p.round_scores is None for p in plain)
    ends = [p for p in pos if p.round_end is not None]
    assert ends[-1] is pos[-1] and pos[-1].round_scores == finished.round_scores[-1]
    for r, p in enumerate(ends):
        b = p.round_end
        assert b.phase == GAME_OVER and b.round == r + 1
        assert b.round_scores == finished.round_scores[:r] and b.history == finished.history[:p.index]
        assert pickle.loads(pickle.dumps(b)).state_dict() == b.state_dict()
