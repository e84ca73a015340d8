"""Tests of the score keeper (experiments.apps.scoresheet and score, ``handfoot score``).

Expected numbers are worked out by hand from docs/rules.md section 6 with the pagat
values unless a test says otherwise: card values 4-7: 5, 8-K: 10, A: 20, 2: 20,
joker: 50, black three: 5; clean / dirty / wild book +500 / +300 / +1500; red
three laid +100, left -100; going out +100; cards left -value.

The docs/interface.md example sheet (configs/scoresheets/example.yaml), by hand:

  Us (totals form): melded 120 + 1 clean book 500 + 1 red three 100
                    - 35 left                                            =  685
  Them (cards form): [K x 7] = 7 x 10 = 70, a clean book: +500
                     [9, 9, 2] = 10 + 10 + 20 = 40 (2 naturals >= 2 x 1 wild)
                     went out +100; left A: -20, left 3R: -100
                     70 + 40 + 500 + 100 - 20 - 100                      =  590
  winner: Us (685 > 590)
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from handfoot_env.config import load_rules
from experiments.apps.score import score_sheet
from handfoot_env.scoring import BREAKDOWN_KEYS
from experiments.apps.scoresheet import ScoreSheetError, check_meld, score_cards, score_entry, score_round, score_totals
from experiments.apps.score import score_main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "configs" / "scoresheets" / "example.yaml"
FULL_GAME = ROOT / "configs" / "scoresheets" / "full_game.yaml"

# The sheet exactly as printed in docs/interface.md ("Score keeper").
INTERFACE_SHEET = """\
rules: pagat            # optional, default pagat
teams: [Us, Them]
rounds:
  - Us:                 # a round described by totals, as on a paper sheet
      clean_books: 1
      dirty_books: 0
      wild_books: 0
      melded_points: 120     # card values of everything melded, books included
      red_threes: 1          # laid down
      red_threes_left: 0     # left in hands and unplayed feet
      went_out: false
      left_points: 35        # card values left in hands and feet
    Them:               # or by the cards themselves
      melds: [[K, K, K, K, K, K, K], [9, 9, 2]]
      red_threes: 0
      went_out: true
      left: [A, 3R]
"""


def write(tmp_path: Path, text: str, name: str = "sheet.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def run_json(capsys, path) -> dict:
    assert score_main([str(path), "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def run_error(capsys, path, *extra) -> str:
    rc = score_main([str(path), *extra])
    captured = capsys.readouterr()
    assert rc == 2, captured
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("handfoot score: error: ") and "\n" not in err, err
    assert "Traceback" not in err
    return err


# --------------------------------------------------------------------------- the example, by hand


def test_interface_example_scored_by_hand(tmp_path):
    result = score_sheet(write(tmp_path, INTERFACE_SHEET))
    us, them = result.breakdowns[0]["Us"], result.breakdowns[0]["Them"]
    assert us == {"melded": 120, "clean_books": 500, "dirty_books": 0, "wild_books": 0, "red_threes": 100,
                  "went_out": 0, "left": -35, "red_threes_left": 0, "total": 685}
    assert them == {"melded": 110, "clean_books": 500, "dirty_books": 0, "wild_books": 0, "red_threes": 0,
                    "went_out": 100, "left": -20, "red_threes_left": -100, "total": 590}
    assert result.to_json() == {"rounds": [{"Us": 685, "Them": 590}], "totals": {"Us": 685, "Them": 590},
                                "complete": False, "winner": None, "leader": "Us"}


def test_example_file_matches_interface(capsys):
    assert run_json(capsys, EXAMPLE) == {"rounds": [{"Us": 685, "Them": 590}],
                                         "totals": {"Us": 685, "Them": 590}, "complete": False,
                                         "winner": None, "leader": "Us"}


def test_both_forms_agree():
    # Them's round of the example written in the totals form instead of the cards form
    totals = score_totals({"clean_books": 1, "melded_points": 110, "went_out": True, "left_points": 20,
                           "red_threes_left": 1})
    cards = score_cards({"melds": [["K"] * 7, [9, 9, 2]], "red_threes": 0, "went_out": True, "left": ["A", "3R"]})
    assert totals == cards
    assert cards["total"] == 590
    assert set(cards) == set(BREAKDOWN_KEYS) | {"total"}
    assert sum(cards[k] for k in BREAKDOWN_KEYS) == cards["total"]
    # score_entry picks the form by its keys; keyword arguments work too
    assert score_entry({"melds": [["K"] * 7, [9, 9, 2]], "went_out": True, "left": ["A", "3R"]}) == cards
    assert score_totals(clean_books=1, melded_points=120, red_threes=1, left_points=35)["total"] == 685


def test_cards_form_every_kind():
    # wild book 2x4 + JKx3 = 80 + 150 = 230, +1500
    # dirty book [Q x5, JK, 2] = 50 + 50 + 20 = 120, +300
    # unfinished [4, 4, 4, 4, 2] = 20 + 20 = 40
    # left: 3B (5), JK (50), 7 (5) = -60; two red threes left -200; 3 red threes laid +300
    b = score_cards(melds=[[2, 2, 2, 2, "JK", "JK", "JK"], ["Q"] * 5 + ["JK", 2], [4, 4, 4, 4, 2]],
                    red_threes=3, left=["3B", "JK", 7, "3R", "3R"])
    assert b == {"melded": 390, "clean_books": 0, "dirty_books": 300, "wild_books": 1500, "red_threes": 300,
                 "went_out": 0, "left": -60, "red_threes_left": -200, "total": 2230}


def test_card_codes_are_case_insensitive_and_yaml_ints_work():
    assert score_cards(melds=[["k", "K", "k"]], left=["jk", "3r"]) == score_cards(melds=[["K"] * 3],
                                                                                  left=["JK", "3R"])
    assert check_meld([10, "10", 10]).points == 30


@pytest.mark.parametrize("cards, limit, ok", [
    ([9, 9, 2], "double", True),
    ([9, 9, 2, 2], "double", False),
    ([9, 9, 2, 2], "majority", False),            # 2 > 2 is false
    ([9, 9, 9, 2, 2], "double", False),           # 3 < 4
    ([9, 9, 9, 2, 2], "majority", True),          # 3 > 2
    ([9, 9, 9, 9, 2, "JK"], "double", True),      # 4 >= 4
    ([9] * 4 + [2] * 3, "double", False),
    ([9] * 4 + [2] * 3, "majority", True),
    ([9, 2, 2], "double", False),
])
def test_wild_limit(cards, limit, ok):
    rules = load_rules("pagat", wild_limit=limit)
    if ok:
        check_meld(cards, rules)
    else:
        with pytest.raises(ScoreSheetError, match=rf"breaks the wild limit \({limit}: "):
            check_meld(cards, rules)


def test_books():
    assert check_meld(["A"] * 7).book == "clean"
    assert check_meld(["A"] * 5 + [2, 2]).book == "dirty"
    assert check_meld([2] * 6 + ["JK"]).book == "wild"
    assert check_meld(["A"] * 6).book is None
    m = check_meld(["A"] * 5 + [2, "JK"])
    assert (m.rank, m.naturals, m.twos, m.jokers, m.points, m.size) == ("A", 5, 1, 1, 170, 7)


# --------------------------------------------------------------------------- several rounds


def test_full_game_running_totals_and_winner(capsys):
    # by hand (see configs/scoresheets/full_game.yaml):
    # R1 Us  780 + 2x500 + 2x300 + 1500 + 2x100 + 100                      = 4180
    #    Them 410 + 500 + 300 + 100 - 95                                    = 1215
    # R2 Us  A-book 140 + [Q x5, 2, 2] 90 + [7 7 7] 15 = 245; +500 +300 +100; left 5+5+50 = -60  = 1085
    #    Them 8-book 70, 4-book 35, [J x5, JK, 2] 120, wild book 140, [K K 2] 40 = 405;
    #         +2x500 +300 +1500 +2x100 +100 -20                              = 3485
    # R3 Us  250 + 500 - 60 - 100                                          =  590
    #    Them 830 + 1000 + 600 + 1500 + 100 - 15                            = 4015
    # R4 Us  900 + 1000 + 600 + 1500 + 100 + 100                            = 4200
    #    Them 520 + 1000 + 300 + 100 - 140                                  = 1780
    result = score_sheet(FULL_GAME)
    assert result.rounds == [{"Us": 4180, "Them": 1215}, {"Us": 1085, "Them": 3485},
                             {"Us": 590, "Them": 4015}, {"Us": 4200, "Them": 1780}]
    assert result.running == [{"Us": 4180, "Them": 1215}, {"Us": 5265, "Them": 4700},
                              {"Us": 5855, "Them": 8715}, {"Us": 10055, "Them": 10495}]
    assert result.complete and result.winner == "Them"
    assert run_json(capsys, FULL_GAME) == {"rounds": result.rounds, "totals": {"Us": 10055, "Them": 10495},
                                           "complete": True, "winner": "Them", "leader": "Them"}
    assert score_main([str(FULL_GAME)]) == 0
    text = capsys.readouterr().out
    assert "10055" in text and "10495" in text and "winner: Them" in text


def test_tie(tmp_path, capsys):
    sheet = write(tmp_path, """\
teams: [Us, Them]
rounds:
  - Us:   {clean_books: 1, melded_points: 100, left_points: 20}     # 580
    Them: {dirty_books: 1, melded_points: 200, went_out: true}      # 600
  - Us:   {melds: [[A, A, A]], left: []}                             # 60
    Them: {melds: [[5, 5, 5, 5]], left: [5]}                         # 15
  - Us:   {melded_points: 0, red_threes_left: 1}                     # -100
    Them: {melded_points: 0, left_points: 75}                        # -75
  - Us:   {melded_points: 100, red_threes: 1}                        # 200
    Them: {melded_points: 100, red_threes: 1, left_points: 50}       # 150
""")
    # running: 580/600, 640/615, 540/540, 740/690 -> not a tie; drop round 4 to get one
    result = score_sheet(sheet)
    assert [r["Us"] for r in result.running] == [580, 640, 540, 740]
    assert [r["Them"] for r in result.running] == [600, 615, 540, 690]
    tied = score_sheet({"teams": ["Us", "Them"], "rounds": yaml.safe_load(sheet.read_text())["rounds"][:3]})
    assert tied.totals == {"Us": 540, "Them": 540} and tied.winner is None
    # a finished game that ends level
    level = write(tmp_path, """\
teams: [Us, Them]
rounds:
  - {Us: {melded_points: 100}, Them: {melded_points: 50}}
  - {Us: {melded_points: 50}, Them: {melded_points: 100}}
  - {Us: {left_points: 5}, Them: {left_points: 5}}
  - {Us: {red_threes: 1}, Them: {red_threes: 1}}
""", "level.yaml")
    out = run_json(capsys, level)
    assert out == {"rounds": [{"Us": 100, "Them": 50}, {"Us": 50, "Them": 100}, {"Us": -5, "Them": -5},
                              {"Us": 100, "Them": 100}], "totals": {"Us": 245, "Them": 245}, "complete": True,
                   "winner": None, "leader": None}
    assert score_main([str(level)]) == 0
    assert "draw at 245" in capsys.readouterr().out


def test_empty_rounds(tmp_path, capsys):
    out = run_json(capsys, write(tmp_path, "teams: [Us, Them]\nrounds: []\n"))
    assert out == {"rounds": [], "totals": {"Us": 0, "Them": 0}, "complete": False, "winner": None, "leader": None}


def test_json_shape(capsys):
    out = run_json(capsys, FULL_GAME)
    assert list(out) == ["rounds", "totals", "complete", "winner", "leader"]
    assert all(list(r) == ["Us", "Them"] and all(type(v) is int for v in r.values()) for r in out["rounds"])
    assert list(out["totals"]) == ["Us", "Them"] and all(type(v) is int for v in out["totals"].values())
    assert out["winner"] in ("Us", "Them", None)


def test_cli_help_and_usage(capsys):
    assert score_main(["--help"]) == 0
    assert "SHEET" in capsys.readouterr().out.upper()
    assert score_main([]) == 2
    assert score_main(["a.yaml", "--bogus"]) == 2


# --------------------------------------------------------------------------- rules


def test_bicycle_rejects_wild_melds(tmp_path, capsys):
    sheet = """\
rules: bicycle
teams: [Us, Them]
rounds:
  - Us:   {melds: [[2, 2, JK]], left: []}
    Them: {melded_points: 0}
"""
    err = run_error(capsys, write(tmp_path, sheet))
    assert "round 1, team Us, meld 1 [2, 2, JK]" in err and "wild_melds: false" in err
    # the same sheet is fine under pagat
    assert score_sheet(write(tmp_path, sheet.replace("bicycle", "pagat"), "p.yaml")).rounds == [{"Us": 90, "Them": 0}]
    # and the totals form cannot claim a wild book under bicycle
    err = run_error(capsys, write(tmp_path, sheet.replace("{melds: [[2, 2, JK]], left: []}",
                                                          "{wild_books: 1, melded_points: 140}"), "b2.yaml"))
    assert "round 1, team Us, wild_books 1" in err


def test_bicycle_majority_limit(tmp_path):
    sheet = """\
rules: bicycle
teams: [Us, Them]
rounds:
  - Us:   {melds: [[9, 9, 9, 2, 2], [K, K, K, K, 2, 2, JK]], left: []}
    Them: {melded_points: 0}
"""
    # [9 9 9 2 2] = 30 + 40 = 70; [K x4, 2, 2, JK] = 40 + 40 + 50 = 130, a dirty book +300
    assert score_sheet(write(tmp_path, sheet)).rounds == [{"Us": 500, "Them": 0}]
    with pytest.raises(ScoreSheetError, match="breaks the wild limit"):
        score_sheet(write(tmp_path, sheet.replace("bicycle", "pagat"), "p.yaml"))


HOUSE_RULES = """\
preset: pagat
clean_book: 300
dirty_book: 100
red_three_left: -500
"""
HOUSE_SHEET = """\
rules: {rules}
teams: [Us, Them]
rounds:
  - Us:   {{melds: [[A, A, A, A, A, A, A], [6, 6, 6, 6, 6, 2, 2]], red_threes: 1, left: [3R]}}
    Them: {{clean_books: 1, dirty_books: 1, melded_points: 200, went_out: true}}
"""


@pytest.mark.parametrize("rules", ["house.yaml", "{preset: pagat, clean_book: 300, dirty_book: 100, "
                                                 "red_three_left: -500}"])
def test_rules_from_yaml_path_or_inline(tmp_path, capsys, rules):
    # 300/100 books, red three left -500:
    # Us   A-book 140 + [6 x5, 2, 2] 25 + 40 = 65; +300 +100; +100 red three; -500 red three left = 205
    # Them 200 + 300 + 100 + 100 = 700
    (tmp_path / "house.yaml").write_text(HOUSE_RULES)
    sheet = write(tmp_path, HOUSE_SHEET.format(rules=rules))
    assert run_json(capsys, sheet)["rounds"] == [{"Us": 205, "Them": 700}]
    # the same sheet under pagat values: 140 + 65 + 500 + 300 + 100 - 100 = 1005; 200 + 500 + 300 + 100 = 1100
    assert run_json(capsys, sheet) != run_json(capsys, write(tmp_path, HOUSE_SHEET.format(rules="pagat"), "p.yaml"))
    assert score_sheet(tmp_path / "p.yaml").rounds == [{"Us": 1005, "Them": 1100}]


def test_cli_rules_override(tmp_path, capsys):
    house = tmp_path / "house.yaml"
    house.write_text(HOUSE_RULES)
    sheet = write(tmp_path, HOUSE_SHEET.format(rules="pagat"))
    assert score_main([str(sheet), "--json", "--rules", str(house)]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == [{"Us": 205, "Them": 700}]


def test_extra_round_only_on_a_tie_under_bicycle(tmp_path):
    four_level = "".join("  - {Us: {melded_points: 50}, Them: {melded_points: 50}}\n" for _ in range(4))
    fifth = "  - {Us: {melded_points: 60}, Them: {melded_points: 50}}\n"
    sheet = write(tmp_path, "rules: bicycle\nteams: [Us, Them]\nrounds:\n" + four_level + fifth)
    result = score_sheet(sheet)
    assert result.totals == {"Us": 260, "Them": 250} and result.winner == "Us" and result.complete
    # a sixth round is not played once the extra round decided the game
    with pytest.raises(ScoreSheetError, match=r"^round 6: the game was decided after round 5"):
        score_sheet(write(tmp_path, "rules: bicycle\nteams: [Us, Them]\nrounds:\n" + four_level + fifth + fifth,
                          "six.yaml"))


def test_three_teams_under_individual_rules():
    result = score_sheet({"rules": "individual", "teams": ["Ann", "Bob", "Cy"], "rounds": [
        {"Ann": {"melded_points": 100}, "Bob": {"melded_points": 100}, "Cy": {"melded_points": 50}}]})
    assert result.totals == {"Ann": 100, "Bob": 100, "Cy": 50} and result.winner is None


def test_round_checks_directly():
    rules = load_rules("pagat")
    with pytest.raises(ScoreSheetError, match=r"^round 3, team B, went_out true: A went out too"):
        score_round({"A": {"went_out": True}, "B": {"went_out": True}}, ["A", "B"], rules, round_no=3)


# --------------------------------------------------------------------------- malformed sheets

HEAD = "teams: [Us, Them]\nrounds:\n  - Us: {melded_points: 0}\n    Them: {melded_points: 0}\n"

MALFORMED = {
    "wild limit": (HEAD + "  - Us: {melded_points: 0}\n    Them:\n      melds: [[9, 2, 2]]\n",
                   ["handfoot score: error: round 2, team Them, meld 1 [9, 2, 2]: breaks the wild limit "
                    "(double: naturals >= 2 x wilds)"]),
    "book of eight": (HEAD + "  - Us: {melds: [[K, K, K, K, K, K, K, K]]}\n    Them: {melded_points: 0}\n",
                      ["round 2, team Us, meld 1 [K, K, K, K, K, K, K, K]", "8 cards", "at most 7"]),
    "three in a meld": ("teams: [Us, Them]\nrounds:\n  - Us: {melds: [[5, 5, 5], [6, 6, 3B]]}\n"
                        "    Them: {melded_points: 0}\n",
                        ["round 1, team Us, meld 2 [6, 6, 3B]", "threes are never melded"]),
    "red three in a meld": (HEAD + "  - Us: {melded_points: 0}\n    Them: {melds: [[3R, 3R, 3R]]}\n",
                            ["round 2, team Them, meld 1 [3R, 3R, 3R]", "never melded"]),
    "unknown card code": (HEAD + "  - Us: {melds: [[Q, Q, X]]}\n    Them: {melded_points: 0}\n",
                          ["round 2, team Us, meld 1 [Q, Q, X]", "unknown card code X"]),
    "bare three": (HEAD + "  - Us: {left: [3]}\n    Them: {melded_points: 0}\n",
                   ["round 2, team Us, left [3]", "3R", "3B"]),
    "unknown card left": (HEAD + "  - Us: {melded_points: 0}\n    Them: {melds: [], left: [A, 3X]}\n",
                          ["round 2, team Them, left [A, 3X]", "unknown card code 3X"]),
    "mixed ranks": (HEAD + "  - Us: {melds: [[9, 9, K]]}\n    Them: {melded_points: 0}\n",
                    ["round 2, team Us, meld 1 [9, 9, K]", "mixes ranks 9 and K"]),
    "short meld": (HEAD + "  - Us: {melds: [[9, 9]]}\n    Them: {melded_points: 0}\n",
                   ["round 2, team Us, meld 1 [9, 9]", "at least 3"]),
    "meld not a list": (HEAD + "  - Us: {melds: [K K K]}\n    Them: {melded_points: 0}\n",
                        ["round 2, team Us, meld 1 'K K K'", "list of card codes"]),
    "two unfinished melds of a rank": (HEAD + "  - Us: {melds: [[9, 9, 9], [9, 9, 2]]}\n"
                                              "    Them: {melded_points: 0}\n",
                                       ["round 2, team Us, meld 2 [9, 9, 2]", "second unfinished meld of rank 9"]),
    "wrong type": (HEAD + "  - Us: {red_threes: two}\n    Them: {melded_points: 0}\n",
                   ["round 2, team Us, red_threes 'two'", "non-negative integer"]),
    "negative": (HEAD + "  - Us: {melded_points: 0}\n    Them: {left_points: -5}\n",
                 ["round 2, team Them, left_points -5", "non-negative"]),
    "boolean count": (HEAD + "  - Us: {clean_books: true}\n    Them: {melded_points: 0}\n",
                      ["round 2, team Us, clean_books true", "integer"]),
    "went_out not a boolean": (HEAD + "  - Us: {went_out: maybe}\n    Them: {melded_points: 0}\n",
                               ["round 2, team Us, went_out 'maybe'", "true or false"]),
    "both went out": (HEAD + "  - Us: {went_out: true}\n    Them: {melds: [], went_out: true}\n",
                      ["round 2, team Them, went_out true", "Us went out too"]),
    "unknown key": (HEAD + "  - Us: {clean_book: 1}\n    Them: {melded_points: 0}\n",
                    ["round 2, team Us, clean_book", "unknown key", "did you mean 'clean_books'"]),
    "forms mixed": (HEAD + "  - Us: {melds: [[K, K, K]], melded_points: 30}\n    Them: {melded_points: 0}\n",
                    ["round 2, team Us, melded_points 30", "mixes the totals form"]),
    "books without points": (HEAD + "  - Us: {clean_books: 2, melded_points: 50}\n    Them: {melded_points: 0}\n",
                             ["round 2, team Us, melded_points 50", "less than the 70"]),
    "points not a multiple of 5": (HEAD + "  - Us: {melded_points: 42}\n    Them: {melded_points: 0}\n",
                                   ["round 2, team Us, melded_points 42", "multiple of 5"]),
    "unknown team": (HEAD + "  - Us: {melded_points: 0}\n    Thme: {melded_points: 0}\n",
                     ["round 2, team Thme", "unknown team", "did you mean 'Them'"]),
    "missing team": (HEAD + "  - Us: {melded_points: 0}\n", ["round 2, team Them", "no entry"]),
    "entry not a mapping": (HEAD + "  - Us: 250\n    Them: {melded_points: 0}\n",
                            ["round 2, team Us, entry", "mapping"]),
    "empty entry": (HEAD + "  - Us:\n    Them: {melded_points: 0}\n", ["round 2, team Us, entry", "empty"]),
    "round not a mapping": (HEAD + "  - [Us, Them]\n", ["round 2:", "mapping of team name"]),
    "too many red threes": (HEAD + "  - Us: {red_threes: 6}\n    Them: {melds: [], left: [3R, 3R, 3R, 3R, 3R]}\n",
                            ["round 2, team Them, red threes", "11", "5 decks hold only 10"]),
    "too many kings": (HEAD + "  - Us: {melds: [[K, K, K, K, K, K, K], [K, K, K, K, K, K, K]]}\n"
                              "    Them: {melds: [[K, K, K, K, K, K, K]]}\n",
                       ["round 2, team Them, cards", "cards K", "21", "only 20"]),
    "fifth round under pagat": ("teams: [Us, Them]\nrounds:\n"
                                + "  - {Us: {melded_points: 0}, Them: {melded_points: 0}}\n" * 5,
                                ["round 5: the game is over after round 4"]),
    "bicycle wild meld": ("rules: bicycle\n" + HEAD + "  - Us: {melds: [[2, 2, 2]]}\n    Them: {melded_points: 0}\n",
                          ["round 2, team Us, meld 1 [2, 2, 2]", "no wild melds"]),
    "bad YAML": ("teams: [Us, Them\nrounds: []\n", ["sheet.yaml: not valid YAML at line 2"]),
    "duplicate key": (HEAD + "  - Us: {melded_points: 0}\n    Us: {melded_points: 5}\n",
                      ["not valid YAML at line 6", "found the key 'Us' twice"]),
    "not a mapping": ("- Us\n- Them\n", ["sheet.yaml: a score sheet is a mapping"]),
    "no teams": ("rounds: []\n", ["teams:", "no 'teams'"]),
    "team count": ("teams: [A, B, C]\nrounds: []\n", ["teams [A, B, C]", "3 teams", "have 2"]),
    "team listed twice": ("teams: [Us, Us]\nrounds: []\n", ["teams [Us, Us]", "listed twice"]),
    "rounds not a list": ("teams: [Us, Them]\nrounds: 3\n", ["rounds 3", "list of rounds"]),
    "unknown rules preset": ("rules: pagot\n" + HEAD, ["rules pagot", "unknown rules 'pagot'"]),
    "missing rules file": ("rules: nowhere.yaml\n" + HEAD, ["rules nowhere.yaml", "does not exist"]),
    "unknown sheet key": ("team: [Us, Them]\n" + HEAD, ["sheet key team", "did you mean"]),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_sheet(tmp_path, capsys, name):
    text, fragments = MALFORMED[name]
    err = run_error(capsys, write(tmp_path, text))
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_missing_file(tmp_path, capsys):
    err = run_error(capsys, tmp_path / "nope.yaml")
    assert err == f"handfoot score: error: {tmp_path / 'nope.yaml'}: no such file"


def test_errors_are_value_errors_with_location():
    with pytest.raises(ValueError) as info:
        score_sheet({"teams": ["Us", "Them"], "rounds": [{"Us": {}, "Them": {}},
                                                         {"Us": {"melds": [["A"] * 8]}, "Them": {}}]})
    err = info.value
    assert isinstance(err, ScoreSheetError)
    assert (err.round, err.team, err.entry) == (2, "Us", "meld 1 [A, A, A, A, A, A, A, A]")


@pytest.mark.subprocess
def test_bad_example_sheet_in_configs(capsys):
    err = run_error(capsys, ROOT / "configs" / "scoresheets" / "bad_wild_limit.yaml")
    assert err == ("handfoot score: error: round 2, team Them, meld 1 [9, 2, 2]: breaks the wild limit "
                   "(double: naturals >= 2 x wilds)")


# --------------------------------------------------------------------------- the real console script


def _handfoot() -> list:
    script = Path(sys.executable).parent / "handfoot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "experiments.apps.cli"]


@pytest.mark.subprocess
def test_console_script(tmp_path):
    bad = write(tmp_path, HEAD + "  - Us: {melds: [[K, K, K, K, K, K, K, K]]}\n    Them: {melded_points: 0}\n")
    proc = subprocess.run([*_handfoot(), "score", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("handfoot score: error: round 2, team Us, meld 1 [K, K, K, K, K, K, K, K]:")
    proc = subprocess.run([*_handfoot(), "score", str(EXAMPLE), "--json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["winner"] is None and out["leader"] == "Us" and out["complete"] is False   # one round of four


@pytest.mark.subprocess
def test_score_command_loads_no_learning_stack():
    """``handfoot score`` starts fast: no learning library (torch, SB3, Ray) is imported for a score sheet."""
    code = ("import sys, experiments.apps.score, experiments.apps.scoresheet; "
            "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_rules_with_going_out_books_by_round_and_no_check_of_them(tmp_path, capsys):
    """A rule file with per-round going-out books (and the saskatchewan preset) is loaded; the
    score keeper does not check the books of the team that went out, on purpose (the sheet
    records what happened): a team with no books that went out in round 4, which asks two clean
    and two dirty books, is scored with its going-out bonus."""
    (tmp_path / "rounds.yaml").write_text("preset: saskatchewan\ngo_out_clean: [1, 1, 2, 2]\n"
                                          "go_out_dirty: [1, 1, 2, 2]\ngo_out_wild: 0\n")
    level = "".join("  - {Us: {melded_points: 50}, Them: {melded_points: 50}}\n" for _ in range(3))
    sheet = write(tmp_path, "rules: rounds.yaml\nteams: [Us, Them]\nrounds:\n" + level
                  + "  - {Us: {melded_points: 50, went_out: true}, Them: {melded_points: 50}}\n")
    out = run_json(capsys, sheet)
    assert out["rounds"][3] == {"Us": 150, "Them": 50} and out["winner"] == "Us"
