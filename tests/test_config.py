"""The rule configuration: every field's effect on the engine, presets, YAML, overrides, validation."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from handfoot_env.cards import kind_of
from handfoot_env.config import PRESETS, RULES_DIR, RuleConfig, RuleConfigError, load_rules
from handfoot_env.engine import Game, max_actions_per_game

from .helpers import (books_game, build_shoe, hand_codes, is_legal, legal_names, melds_of, new_game, play, turn,
                      two_deck_game)

REPO = Path(__file__).resolve().parent.parent
RULE_FIELDS = [f.name for f in fields(RuleConfig)]


# ---------------------------------------------------------------------------
# Each rule field changes what the engine does

def test_players_and_teams_six_players_in_two_alternating_teams():
    g = Game("six_player")
    g.reset(seed=1)
    assert len(g.hands) == 6 and len(g.feet) == 6 and g.team_of == (0, 1, 0, 1, 0, 1)
    assert g.teammates[0] == (2, 4) and g.dealer == 5 and g.current == 0
    assert len(g.state_dict()["opened"]) == 2


def test_players_and_teams_individual_play_each_player_a_team():
    g = Game("pagat", players=4, teams=4, decks=5, ask_partner=False, partner_in_foot=False)
    g.reset(seed=1)
    assert g.team_of == (0, 1, 2, 3) and g.teammates[0] == ()
    assert len(g.scores) == 4 and len(g.state_dict()["melds"]) == 4
    g3 = Game("individual")
    g3.reset(seed=1)
    assert g3.team_of == (0, 1, 2) and g3.dealer == 2


@pytest.mark.parametrize("decks", [4, 5, 6, 9])
def test_decks_sets_the_number_of_cards(decks):
    g = Game("pagat", decks=decks)
    g.reset(seed=2)
    loc = g.card_locations()
    assert sum(loc) == 54 * decks
    assert loc[kind_of("K")] == 4 * decks and loc[kind_of("JK")] == 2 * decks and loc[kind_of("3R")] == 2 * decks
    assert g.state_dict()["stock_size"] == 54 * decks - 8 * 13 - 1


def test_hand_size_and_foot_size_set_the_deal():
    g = Game("pagat", hand_size=11, foot_size=9)
    g.reset(seed=3)
    assert [sum(h) for h in g.hands] == [11] * 4 and [sum(f) for f in g.feet] == [9] * 4
    assert g.state_dict()["stock_size"] == 270 - 4 * 20 - 1


def test_minimums_set_the_rounds_and_the_first_meld_minimum():
    g = new_game(hands=["5 5 5 9 10 J Q K A 4 6 7 8"], stock="4 4", minimums=[15, 20])
    assert g.rules.rounds == 2 and g.minimum == 15
    play(g, "draw", "meld:5:3:0:0")                      # 15 reaches the minimum of 15
    assert g.opened[0]
    pagat = new_game(hands=["5 5 5 9 10 J Q K A 4 6 7 8"], stock="4 4")
    play(pagat, "draw", "meld:5:3:0:0")
    assert not pagat.opened[0]
    g2 = Game("pagat", minimums=[15, 20])
    g2.reset(seed=1, round=2)
    assert g2.minimum == 20
    with pytest.raises(ValueError, match="round"):
        g2.reset(seed=1, round=3)


@pytest.mark.parametrize("wild_limit,ok,bad", [
    ("double", {"meld:K:2:1:0", "meld:K:4:2:0"}, {"meld:K:3:2:0", "meld:K:4:3:0"}),
    ("majority", {"meld:K:2:1:0", "meld:K:3:2:0", "meld:K:4:3:0"}, {"meld:K:2:2:0", "meld:K:3:3:0"}),
])
def test_wild_limit(wild_limit, ok, bad):
    g = new_game(hands=["K K K K 2 2 2 4 5 6 7 8 9"], stock="10 J", wild_limit=wild_limit)
    play(g, "draw")
    names = set(legal_names(g))
    assert ok <= names and not bad & names


@pytest.mark.parametrize("wild_melds", [True, False])
def test_wild_melds(wild_melds):
    g = new_game(hands=["2 2 2 JK JK 4 5 6 7 8 9 10 J"], stock="Q K", wild_melds=wild_melds,
                 go_out_wild=1 if wild_melds else 0)
    play(g, "draw")
    assert is_legal(g, "meld:W:0:3:0") is wild_melds
    assert any(n.startswith("meld:W") for n in legal_names(g)) is wild_melds


BOOKS_HAND = "K K K K K K K Q Q Q Q Q 2 2 2 2 2 2 JK JK JK"


def _three_books(**overrides):
    """player_0 makes a clean, a dirty and a wild book (hand of 21 cards)."""
    g = new_game(hands=[BOOKS_HAND], stock="5 6", hand_size=21, **overrides)
    play(g, "draw", "meld:K:7:0:0", "meld:Q:5:2:0", "meld:W:0:4:3")
    assert g.book_counts[0] == [1, 1, 1] and hand_codes(g, 0) == ["5", "6"]
    return g


@pytest.mark.parametrize("field,value,delta", [
    ("clean_book", 300, -200), ("dirty_book", 100, -200), ("wild_book", 1000, -500)])
def test_book_bonuses(field, value, delta):
    base = _three_books().team_round_score(0)
    changed = _three_books(**{field: value}).team_round_score(0)
    books = ("clean_books", "dirty_books", "wild_books")
    assert [base[k] for k in books] == [500, 300, 1500]
    assert sum(changed[k] for k in books) - sum(base[k] for k in books) == delta
    assert changed["total"] - base["total"] == delta


def test_clean_book_value_in_a_finished_round():
    g = two_deck_game(clean_book=300)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    assert g.round_scores[0] == [90 - 200, -490]


def test_red_three_bonus():
    g = two_deck_game(red_three_bonus=250)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    assert g.round_scores[0] == [90 + 2 * 150, -490]


def test_red_three_left():
    g = new_game(hands=[None, "3R 3R"], feet=[None, None, None, "3R"], red_three_left=-500)
    assert g.team_round_score(1)["red_threes_left"] == -1500
    assert g.team_round_score(0)["red_threes_left"] == 0
    g = new_game(hands=[None, "3R 3R"], feet=[None, None, None, "3R"])
    assert g.team_round_score(1)["red_threes_left"] == -300


def test_go_out_bonus():
    g = books_game(go_out_bonus=400)
    play(g, "draw", "ask_go_out", "answer_yes", "meld:8:3:0:0")
    assert g.round_details[0]["went_out"] == 0
    assert g.round_details[0]["teams"][0]["went_out"] == 400


@pytest.mark.parametrize("field,needed,legal", [
    ("go_out_clean", 2, True), ("go_out_clean", 3, False),
    ("go_out_dirty", 2, True), ("go_out_dirty", 3, False),
    ("go_out_wild", 1, True), ("go_out_wild", 2, False), ("go_out_wild", 0, True),
])
def test_go_out_book_requirements(field, needed, legal):
    g = books_game(**{field: needed})
    play(g, "draw", "ask_go_out", "answer_yes")
    assert is_legal(g, "meld:8:3:0:0") is legal


@pytest.mark.parametrize("books_needed,legal", [((0, 0, 0), True), ((2, 2, 1), False)])
def test_go_out_with_no_book_requirements(books_needed, legal):
    # player_0 melds the hand into the foot and melds the foot down to one card, which
    # is allowed only when going out is (no asking, no partner condition here)
    clean, dirty, wild = books_needed
    g = new_game(hands=["K K K K K Q Q Q Q Q J J J"], feet=["5 5 5 6 6 6 7 7 7 8 8 8 9"], stock="J J",
                 go_out_clean=clean, go_out_dirty=dirty, go_out_wild=wild, ask_partner=False,
                 partner_in_foot=False)
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:5:0:0", "meld:5:3:0:0", "meld:6:3:0:0", "meld:7:3:0:0")
    assert g.book_counts[0] == [0, 0, 0] and hand_codes(g, 0) == ["8", "8", "8", "9"]
    assert is_legal(g, "meld:8:3:0:0") is legal
    if legal:
        play(g, "meld:8:3:0:0", "discard:9")
        assert g.round_details[0]["went_out"] == 0


@pytest.mark.parametrize("ask_partner", [True, False])
def test_ask_partner(ask_partner):
    g = books_game(ask_partner=ask_partner)
    play(g, "draw")
    assert is_legal(g, "ask_go_out") is ask_partner
    assert is_legal(g, "meld:8:3:0:0") is (not ask_partner)     # without asking, going out is free


@pytest.mark.parametrize("partner_in_foot", [True, False])
def test_partner_in_foot(partner_in_foot):
    g = books_game(stop="p0_turn2", partner_in_foot=partner_in_foot)
    assert not g.played_foot[2]
    assert is_legal(g, "ask_go_out") is (not partner_in_foot)


@pytest.mark.parametrize("pile_take,left,taken", [(7, ["9"], 6), (2, ["9", "5", "6", "7", "8", "10"], 1),
                                                  ("all", [], 7)])
def test_pile_take(pile_take, left, taken):
    g = new_game(hands=[None, None, None, "A A 4 5 6 7 8 9 10 J Q K 3B"], up="9",
                 stock="5 K 6 K 7 K 8 K 10 K J K A K", pile_take=pile_take)
    for code in ["5", "6", "7", "8", "10", "J", "A"]:
        turn(g, code)
    size = sum(g.hands[3])
    play(g, "pickup")
    assert g.state_dict()["discard"] == left
    assert sum(g.hands[3]) == size - 2 + taken


@pytest.mark.parametrize("tie_break", ["draw", "extra_round"])
def test_tie_break(tie_break):
    g = two_deck_game(minimums=[50], scores=[0, 580], tie_break=tie_break)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    assert g.scores == [90, 90]
    assert g.game_over is (tie_break == "draw")
    if tie_break == "extra_round":
        assert g.round == 2 and g.minimum == 50 and g.winner is None
        # the extra round ends level too: the game is then a draw, not a second extra round.  The round
        # is ended at once (a red three in hand, nothing left to draw), with the scores set so that it
        # ends level (its totals read from a copy played ahead)
        p = g.current
        g.hands[p][kind_of("3R")] += 1
        g.stock = []
        ahead = g.clone()
        play(ahead, "lay_red_three")
        assert ahead.round == 2 and len(ahead.round_scores) == 2          # the extra round has ended
        totals = ahead.round_scores[-1]
        g.scores = [500 - totals[0], 500 - totals[1]]
        play(g, "lay_red_three")
        assert g.scores == [500, 500] and g.game_over and g.winner is None and g.round == 2
    # the action bound makes room for the extra round
    one_round = max_actions_per_game(load_rules("pagat", minimums=[50]))
    assert max_actions_per_game(load_rules("pagat", tie_break=tie_break)) == \
        (5 if tie_break == "extra_round" else 4) * one_round


@pytest.mark.parametrize("pile_needs_opening", [False, True])
def test_pile_needs_opening(pile_needs_opening):
    """player_3 (team 1, not opened) holds A A under an ace: the three aces (60) open the team with the
    pile, unless the pile needs a team that has opened."""
    g = new_game(hands=[None, None, None, "A A 4 5 6 7 8 9 10 J Q K 3B"], up="9",
                 stock="5 K 6 K 7 K 8 K 10 K J K A K", pile_needs_opening=pile_needs_opening)
    for code in ["5", "6", "7", "8", "10", "J", "A"]:
        turn(g, code)
    assert is_legal(g, "pickup") is not pile_needs_opening
    assert g.rules.to_dict().get("pile_needs_opening", False) is pile_needs_opening


def test_an_optional_rule_field_is_written_only_when_set():
    """``to_dict`` leaves out a house rule that is off (its default), so that the records, results and
    configs of rule sets without it read and write as before; set, it is written and read back."""
    assert "pile_needs_opening" not in load_rules("pagat").to_dict()
    on = load_rules("pagat", pile_needs_opening=True)
    assert on.to_dict()["pile_needs_opening"] is True and load_rules(on.to_dict()) == on
    assert load_rules({k: v for k, v in on.to_dict().items() if k != "pile_needs_opening"}) == load_rules("pagat")


def test_every_rule_field_is_covered_by_a_test():
    here = Path(__file__).read_text()
    for name in RULE_FIELDS:
        if name in ("players", "teams"):
            assert "test_players_and_teams" in here
        else:
            assert f"def test_{name}" in here or f'"{name}"' in here, name


# ---------------------------------------------------------------------------
# Presets, YAML files, overrides

def test_presets_match_rules_md_section_7():
    pagat = load_rules("pagat")
    assert pagat == RuleConfig() and pagat.minimums == (50, 90, 120, 150)
    assert (pagat.decks, pagat.hand_size, pagat.foot_size) == (5, 13, 13)
    assert (pagat.wild_limit, pagat.wild_melds) == ("double", True)
    assert (pagat.clean_book, pagat.dirty_book, pagat.wild_book, pagat.red_three_left) == (500, 300, 1500, -100)
    assert (pagat.go_out_clean, pagat.go_out_dirty, pagat.go_out_wild) == (2, 2, 1)
    assert (pagat.ask_partner, pagat.partner_in_foot, pagat.pile_take, pagat.tie_break) == (True, True, 7, "draw")
    bike = load_rules("bicycle")
    assert (bike.decks, bike.hand_size, bike.foot_size) == (6, 11, 11)
    assert (bike.wild_limit, bike.wild_melds) == ("majority", False)
    assert (bike.go_out_clean, bike.go_out_dirty, bike.go_out_wild) == (1, 1, 0)
    assert (bike.ask_partner, bike.partner_in_foot, bike.pile_take, bike.tie_break) == (False, False, 7, "extra_round")
    six = load_rules("six_player")
    assert (six.players, six.teams, six.decks) == (6, 2, 7)
    ind = load_rules("individual")
    assert (ind.players, ind.teams, ind.decks, ind.ask_partner) == (3, 3, 4, False)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_yaml_rule_files_equal_the_presets(name):
    path = REPO / "configs" / "rules" / f"{name}.yaml"
    assert path.is_file() and (RULES_DIR / path.name).is_file()
    assert load_rules(path) == load_rules(name)
    assert load_rules(str(path)) == load_rules(name)
    assert Game(str(path)).rules == Game(name).rules


def test_every_yaml_rule_file_is_a_preset():
    assert sorted(p.stem for p in RULES_DIR.glob("*.yaml")) == sorted(PRESETS)


def test_keyword_overrides_change_single_fields():
    r = load_rules("bicycle", decks=7, pile_take="all")
    assert r.decks == 7 and r.pile_take == "all" and r.hand_size == 11 and r.wild_limit == "majority"
    assert Game("pagat", decks=6).rules.decks == 6
    assert load_rules(r) is r and r.replace(decks=8).decks == 8 and r.decks == 7
    assert load_rules(r.to_dict()) == r
    assert load_rules({"preset": "bicycle", "decks": 7, "pile_take": "all"}) == r
    assert load_rules(None) == load_rules("pagat")
    assert load_rules("pagat", minimums=[50, 60]).minimums == (50, 60)
    assert RuleConfig(minimums=[40, 80]).minimums == (40, 80)


def test_yaml_with_a_preset_base_and_overrides(tmp_path):
    p = tmp_path / "house.yaml"
    p.write_text("preset: six_player\nred_three_left: -500\nminimums: [60, 100]\n")
    r = load_rules(p)
    assert (r.players, r.decks, r.red_three_left, r.minimums) == (6, 7, -500, (60, 100))
    assert load_rules(p, decks=8).decks == 8


def test_state_dict_records_the_rules():
    g = Game("bicycle", decks=7)
    g.reset(seed=4)
    assert g.state_dict()["rules"] == load_rules("bicycle", decks=7).to_dict()
    assert yaml.safe_load(yaml.safe_dump(g.state_dict()["rules"])) == g.rules.to_dict()


# ---------------------------------------------------------------------------
# Validation

@pytest.mark.parametrize("overrides,field", [
    ({"deck": 5}, "deck"),
    ({"wild_limits": "double"}, "wild_limits"),
])
def test_unknown_field_is_an_error_naming_it(overrides, field):
    with pytest.raises(RuleConfigError, match=f"unknown rule field '{field}'"):
        load_rules("pagat", **overrides)


def test_unknown_field_in_yaml_names_the_file_and_field(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("decks: 5\nhand_sise: 11\n")
    with pytest.raises(RuleConfigError, match="bad.yaml.*'hand_sise'"):
        load_rules(p)


@pytest.mark.parametrize("field,value", [
    ("decks", "5"), ("decks", 5.0), ("decks", True), ("hand_size", None), ("players", "four"),
    ("ask_partner", "yes"), ("wild_melds", 1), ("partner_in_foot", 0), ("wild_limit", 2), ("tie_break", None),
    ("minimums", [50, "90"]), ("minimums", []), ("minimums", [50, -1]), ("minimums", 50),
    ("pile_take", True), ("pile_take", "seven"), ("pile_take", 0), ("clean_book", 500.0), ("red_three_left", "-100"),
    ("go_out_bonus", None), ("go_out_clean", -1), ("wild_limit", "triple"), ("tie_break", "coin"),
    ("pile_needs_opening", 1), ("pile_needs_opening", "yes"), ("pile_needs_opening", None),
    ("players", 1), ("players", 9), ("decks", 0), ("hand_size", 0), ("foot_size", -3),
])
def test_wrong_type_or_value_is_an_error_naming_the_field(field, value):
    with pytest.raises(RuleConfigError, match=f"'{field}'"):
        load_rules("pagat", **{field: value})


@pytest.mark.parametrize("overrides,names", [
    (dict(hand_size=40, foot_size=40), ["hand_size", "foot_size", "decks"]),
    (dict(players=8, teams=2, decks=3), ["players", "decks"]),
    (dict(players=6, teams=4), ["teams"]),
    (dict(players=5, teams=2), ["teams"]),
    (dict(teams=1), ["teams"]),
    (dict(wild_melds=False), ["go_out_wild", "wild_melds"]),
    (dict(players=2, teams=2, decks=1, hand_size=10, foot_size=10), ["go_out_wild", "decks"]),
])
def test_impossible_combination_is_an_error_naming_the_fields(overrides, names):
    with pytest.raises(RuleConfigError) as e:
        load_rules("pagat", **overrides)
    for name in names:
        assert name in str(e.value)


def test_bad_rules_source_errors(tmp_path):
    with pytest.raises(RuleConfigError, match="unknown rules 'pagatt'"):
        load_rules("pagatt")
    with pytest.raises(RuleConfigError, match="does not exist"):
        load_rules(str(tmp_path / "missing.yaml"))
    p = tmp_path / "list.yaml"
    p.write_text("- decks\n- 5\n")
    with pytest.raises(RuleConfigError, match="mapping"):
        load_rules(p)
    p.write_text("decks: [5\n")
    with pytest.raises(RuleConfigError, match="YAML"):
        load_rules(p)
    p.write_text("preset: tournament\n")
    with pytest.raises(RuleConfigError, match="tournament"):
        load_rules(p)
    with pytest.raises(RuleConfigError):
        load_rules(42)


def test_rule_config_is_immutable_and_validated_on_construction():
    r = RuleConfig()
    with pytest.raises(Exception):
        r.decks = 6
    with pytest.raises(RuleConfigError, match="'decks'"):
        RuleConfig(decks=0)
    assert isinstance(RuleConfigError("x"), ValueError)


def test_shoe_is_checked_against_the_configured_decks():
    g = Game("pagat", decks=4)
    with pytest.raises(ValueError, match="'JK'"):
        g.reset(seed=1, shoe=["JK"] * 9)
    g6 = Game("bicycle")
    g6.reset(seed=1, shoe=build_shoe("bicycle", hands=["JK JK JK JK JK JK JK JK JK JK JK"]))
    assert g6.hands[0][kind_of("JK")] == 11 and melds_of(g6, 0) == {}


# ---------------------------------------------------------------------------
# Rule sets in which going out or the opening can never happen are refused

#: the smallest table: two players, one deck (4 naturals of a rank, 4 twos, 2 jokers)
ONE_DECK = dict(players=2, teams=2, decks=1, hand_size=10, foot_size=10, go_out_clean=0, go_out_dirty=0,
                go_out_wild=0)


def _refused(names, **overrides):
    with pytest.raises(RuleConfigError) as e:
        load_rules("pagat", **overrides)
    msg = str(e.value)
    assert "\n" not in msg and "impossible rules" in msg
    for name in names:
        assert name in msg, (name, msg)


def test_clean_book_needs_seven_naturals_of_a_rank():
    # one deck holds four naturals of each rank: no clean book can be built
    _refused(["go_out_clean", "decks"], **{**ONE_DECK, "go_out_clean": 1})
    assert load_rules("pagat", **{**ONE_DECK, "decks": 2, "go_out_clean": 11}).go_out_clean == 11
    _refused(["go_out_clean", "decks"], **{**ONE_DECK, "decks": 2, "go_out_clean": 12})


@pytest.mark.parametrize("wild_limit,possible", [("double", False), ("majority", True)])
def test_dirty_book_needs_the_naturals_the_wild_limit_asks_for(wild_limit, possible):
    # seven cards with at most two wilds (double) need five naturals; one deck has four;
    # under majority four naturals and three wilds make a dirty book
    kw = {**ONE_DECK, "go_out_dirty": 1, "wild_limit": wild_limit}
    if possible:
        assert load_rules("pagat", **kw).go_out_dirty == 1
    else:
        _refused(["go_out_dirty", "decks", "wild_limit"], **kw)


def test_required_books_are_counted_together_against_the_wilds():
    # two decks: 12 wilds; a wild book takes 7, each dirty book at least one more
    def two(**books):
        return {**ONE_DECK, "decks": 2, **books}

    assert load_rules("pagat", **two(go_out_wild=1, go_out_dirty=5))
    assert load_rules("pagat", **two(go_out_dirty=11))
    _refused(["go_out_clean", "go_out_dirty", "go_out_wild", "decks"], **two(go_out_wild=1, go_out_dirty=6))
    # clean and dirty books of one rank share its eight naturals: 11 clean books leave
    # one natural per rank, too few for any dirty book
    _refused(["go_out_clean", "go_out_dirty"], **two(go_out_clean=11, go_out_dirty=1))


def test_issue_example_one_deck_two_clean_books_is_refused():
    _refused(["go_out_clean", "decks"], **{**ONE_DECK, "go_out_clean": 2})


def test_opening_minimum_above_what_every_card_of_the_decks_is_worth_is_refused():
    from handfoot_env.cards import BLACK3, PER_DECK, RED3, VALUES
    # one deck: every natural and wild fits into melds (four naturals of a rank take two wilds)
    worth = sum(VALUES[k] * PER_DECK[k] for k in range(len(PER_DECK)) if k not in (RED3, BLACK3))
    assert load_rules("pagat", **{**ONE_DECK, "minimums": [50, worth]}).minimums[-1] == worth
    _refused(["minimums", "decks", "round 2"], **{**ONE_DECK, "minimums": [50, worth + 1]})


@pytest.mark.parametrize("decks", [1, 2, 3])
@pytest.mark.parametrize("wild_limit", ["double", "majority"])
@pytest.mark.parametrize("wild_melds", [True, False])
def test_opening_bound_agrees_with_the_engines_meld_program(decks, wild_limit, wild_melds):
    # two independent computations of the most that melds of every card of the decks hold
    # (the engine's program caps a rank at 14 naturals: up to three decks)
    from handfoot_env.cards import NUM_SLOTS, RED3, deck_counts
    from handfoot_env.config import _max_meld_value
    try:
        from handfoot_env.melds import max_meld_value
    except ImportError:
        from handfoot_env.engine import max_meld_value
    r = load_rules("pagat", **{**ONE_DECK, "decks": decks, "wild_limit": wild_limit, "wild_melds": wild_melds})
    cards = deck_counts(decks)
    cards[RED3] = 0
    assert _max_meld_value(r) == max_meld_value(cards, [[0, 0, 0]] * NUM_SLOTS, r, sum(cards))


def test_every_preset_and_rule_file_is_possible():
    for name in PRESETS:
        load_rules(name)
    for path in sorted((REPO / "configs" / "rules").glob("*.yaml")):
        load_rules(path)


# ---------------------------------------------------------------------------
# Going-out books by round: one number for every round, or a list with one per round

def test_going_out_books_as_a_number_apply_to_every_round_and_the_extra_round():
    r = load_rules("pagat", tie_break="extra_round")
    assert [r.going_out_books(k) for k in (1, 2, 3, 4, 5)] == [(2, 2, 1)] * 5
    assert [r.round_minimum(k) for k in (1, 2, 3, 4, 5)] == [50, 90, 120, 150, 150]


def test_going_out_books_as_lists_are_read_per_round_and_the_last_one_after():
    r = load_rules("pagat", go_out_clean=[1, 1, 2, 2], go_out_dirty=[0, 1, 1, 2], go_out_wild=0)
    assert [r.going_out_books(k) for k in (1, 2, 3, 4, 5, 9)] == [
        (1, 0, 0), (1, 1, 0), (2, 1, 0), (2, 2, 0), (2, 2, 0), (2, 2, 0)]
    assert r.go_out_clean == (1, 1, 2, 2) and r.to_dict()["go_out_clean"] == [1, 1, 2, 2]
    assert load_rules(r.to_dict()) == r and r.replace(decks=6).going_out_books(3) == (2, 1, 0)
    for bad in (0, -1, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="round must be an integer from 1"):
            r.going_out_books(bad)
        with pytest.raises(ValueError, match="round must be an integer from 1"):
            r.round_minimum(bad)


def test_going_out_lists_from_a_rule_file_and_a_preset_base(tmp_path):
    p = tmp_path / "rounds.yaml"
    p.write_text("preset: saskatchewan\ngo_out_clean: [1, 1, 2, 2]\ngo_out_dirty: [1, 1, 2, 2]\ngo_out_wild: 0\n")
    r = load_rules(p)
    assert (r.hand_size, r.foot_size, r.pile_take) == (11, 13, "all")
    assert r.going_out_books(1) == (1, 1, 0) and r.going_out_books(4) == (2, 2, 0)


def test_saskatchewan_preset():
    r = load_rules("saskatchewan")
    assert (r.hand_size, r.foot_size, r.pile_take) == (11, 13, "all")
    assert r.replace(hand_size=13, foot_size=13, pile_take=7) == load_rules("pagat")


@pytest.mark.parametrize("field,value,words", [
    ("go_out_clean", [1, 2], ["'go_out_clean'", "one entry per round: 4", "got 2"]),
    ("go_out_dirty", [1, 1, 1, 1, 1], ["'go_out_dirty'", "one entry per round: 4", "got 5"]),
    ("go_out_wild", [], ["'go_out_wild'", "empty list"]),
    ("go_out_clean", [1, 1, "2", 2], ["'go_out_clean'", "integers, one per round", "'2'"]),
    ("go_out_clean", [1, 1, True, 2], ["'go_out_clean'", "integers, one per round"]),
    ("go_out_dirty", [1, 1, 1, 60], ["'go_out_dirty'", "between 0 and 50", "got 60 (round 4)"]),
    ("go_out_wild", [0, -1, 0, 0], ["'go_out_wild'", "got -1 (round 2)"]),
    ("go_out_clean", {"round": 1}, ["'go_out_clean'", "an integer or a list"]),
    ("go_out_clean", 2.0, ["'go_out_clean'", "an integer or a list"]),
])
def test_malformed_going_out_lists_are_one_line_naming_the_field(field, value, words):
    with pytest.raises(RuleConfigError) as e:
        load_rules("pagat", **{field: value})
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


def test_a_list_must_follow_the_number_of_rounds():
    with pytest.raises(RuleConfigError, match="'go_out_clean' holds one entry per round: 2 .*got 4"):
        load_rules("pagat", go_out_clean=[1, 1, 2, 2], minimums=[50, 90])
    assert load_rules("pagat", go_out_clean=[1, 2], minimums=[50, 90]).going_out_books(3) == (2, 2, 1)


def test_a_round_whose_books_the_decks_cannot_build_is_refused_naming_the_round():
    _refused(["go_out_clean", "decks", "round 3"], **{**ONE_DECK, "decks": 2, "go_out_clean": [1, 11, 12, 1]})
    assert load_rules("pagat", **{**ONE_DECK, "decks": 2, "go_out_clean": [1, 11, 11, 1]})
    _refused(["go_out_wild", "wild_melds", "round 2"], wild_melds=False, go_out_wild=[0, 1, 0, 0])
    assert load_rules("pagat", wild_melds=False, go_out_wild=[0, 0, 0, 0]).going_out_books(2)[2] == 0
    _refused(["go_out_wild", "decks", "round 4"], **{**ONE_DECK, "go_out_wild": [0, 0, 0, 1]})
