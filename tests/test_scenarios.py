"""Scripted scenarios: one rule of docs/rules.md sections 3-6 per test.

Every test stacks a shoe (tests/helpers.py), plays named actions and checks
what is legal and what happened.  Seats: team 0 = player_0 and player_2,
team 1 = player_1 and player_3; player_0 leads round 1.
"""
from __future__ import annotations

import pytest

from handfoot_env.actions import action_index
from handfoot_env.cards import RED3, kind_of
from handfoot_env.config import load_rules
from handfoot_env.engine import GAME_OVER, MELD_PHASE, Game, IllegalActionError

from .helpers import both_cores  # noqa: F401 - every test on both cores
from .helpers import (TWO_DECK_FEET, TWO_DECK_HANDS, apply_last_action, books_game, counts, from_leader,
                      position, expected_round_scores, hand_codes, is_legal, legal_names, melds_of, new_game,
                      observed, play, turn, two_deck_game)


# ---------------------------------------------------------------------------
# 3. The deal

def test_deal_order_hands_then_feet_then_up_card_then_stock():
    hands = ["4 " * 13, "5 " * 13, "6 " * 13, "7 " * 13]
    feet = ["8 " * 13, "9 " * 13, "10 " * 13, "J " * 13]
    g = new_game(hands=hands, feet=feet, up="Q", stock="K A 2", pad=False)
    for p, code in enumerate(["4", "5", "6", "7"]):
        assert hand_codes(g, p) == [code] * 13
    for p, code in enumerate(["8", "9", "10", "J"]):
        assert g.feet[p] == counts([code] * 13)
    sd = g.state_dict()
    assert sd["discard"] == ["Q"]
    assert sd["stock"][:3] == ["K", "A", "2"]
    assert sd["stock_size"] == 270 - 8 * 13 - 1
    assert (g.dealer, g.current) == (3, 0)
    play(g, "draw")
    assert hand_codes(g, 0) == sorted(["4"] * 13 + ["K", "A"])


@pytest.mark.parametrize("up", ["3R", "2", "JK"])
def test_up_card_red_three_two_or_joker_is_reburied_in_stock(up):
    g = new_game(up=up, stock="K Q J")
    sd = g.state_dict()
    assert sd["discard"] == ["K"]
    assert sd["stock_size"] == 270 - 8 * 13 - 1
    # the reburied card went back into the stock: all copies of it are there
    assert sd["stock"].count(up) == {"3R": 10, "2": 20, "JK": 10}[up]


def test_up_card_reburial_repeats_until_a_natural_or_black_three():
    g = new_game(up="2", stock="JK 3R 3B Q")
    sd = g.state_dict()
    assert sd["discard"] == ["3B"]
    assert sd["stock"].count("2") == 20 and sd["stock"].count("JK") == 10 and sd["stock"].count("3R") == 10


def test_discarded_black_three_blocks_the_next_player_from_the_pile():
    g = new_game(hands=[None, "3B 3B A A A K K K Q Q Q J J"], stock="3B 9 4 4")
    play(g, "draw", "discard:3B")
    assert g.current == 1 and legal_names(g) == ["draw"]
    turn(g, "4")
    assert is_legal(g, "draw") and not is_legal(g, "pickup")   # player_2 holds no pair of 4s


def test_black_three_up_card_stays_and_blocks_the_pickup():
    g = new_game(hands=["3B 3B K K K A A A Q Q Q J J"], up="3B")
    assert g.state_dict()["discard"] == ["3B"]
    assert legal_names(g) == ["draw"]
    assert g.reason_illegal(action_index("pickup")) == "a three on top of the pile blocks it"


# ---------------------------------------------------------------------------
# 4.1 Red threes

def test_red_three_dealt_in_hand_is_laid_and_replaced_before_drawing():
    g = new_game(hands=["3R 3R"], stock="K A Q J")
    assert legal_names(g) == ["lay_red_three"]
    with pytest.raises(IllegalActionError, match="red three"):
        play(g, "draw")
    play(g, "lay_red_three")
    assert g.red3 == [1, 0] and g.hands[0][kind_of("K")] == 2   # filler K + replacement K
    assert legal_names(g) == ["lay_red_three"]
    play(g, "lay_red_three")
    assert g.red3 == [2, 0] and g.hands[0][RED3] == 0 and sum(g.hands[0]) == 13
    assert legal_names(g) == ["draw"]
    play(g, "draw")
    assert g.hands[0][kind_of("Q")] == 2 and g.hands[0][kind_of("J")] == 2


def test_the_last_red_three_laid_with_the_stock_empty_brings_the_foot_up():
    """A hand of only red threes with nothing left in the stock: each is laid without a replacement,
    and the hand emptied that way is followed by the foot, as any emptied hand; the foot's own red
    three is then laid too, and only then does the empty stock end the round (the engine's state is
    set directly: with full-sized feet a scripted deal cannot reach an empty stock and such a hand)."""
    g = position(1, "3R 3R", "3R 4 5 6 7 8 9 10 J Q K A 4", stock=[])
    p = g.current
    team = g.team_of[p]
    play(g, "lay_red_three")
    assert g.feet[p] is not None and g.hands[p] == counts("3R")
    play(g, "lay_red_three")
    assert g.feet[p] is None and g.hands[p] == counts("3R 4 5 6 7 8 9 10 J Q K A 4")
    play(g, "lay_red_three")                           # the stock is empty: the round ends
    details = g.round_details[-1]
    assert g.round == 2 and details["round"] == 1 and details["actions"] == 3
    assert details["teams"][team]["red_threes"] == 3 * 100                # all three laid


def test_a_foot_of_one_card_with_no_legal_play_ends_the_round():
    """In the foot with one card left after laying red threes that the empty stock could not replace,
    and the team short of the books to go out, the player can neither meld nor discard the last card:
    the round ends there as a stock-out (the state is set directly, as above)."""
    g = position(1, "9", opened=True, stock="3R 3R")
    p = g.current
    team = g.team_of[p]
    play(g, "draw", "lay_red_three")
    assert g.round == 1 and g.hands[p] == counts("9 3R")
    play(g, "lay_red_three")                           # nothing to draw: one 9 left, no legal play
    assert g.round == 2 and g.round_details[-1]["went_out"] is None
    assert g.round_details[-1]["teams"][team]["red_threes"] == 2 * 100


def test_red_three_drawn_from_stock_is_laid_and_replaced():
    g = new_game(stock="3R K 9")
    play(g, "draw")
    assert g.phase == MELD_PHASE and legal_names(g) == ["lay_red_three"]
    with pytest.raises(IllegalActionError):
        play(g, "discard:K")
    play(g, "lay_red_three")
    assert g.red3[0] == 1 and g.hands[0][RED3] == 0
    assert g.hands[0][kind_of("9")] == 2 and sum(g.hands[0]) == 15
    assert "discard:K" in legal_names(g)


def test_red_three_cannot_be_discarded_or_melded():
    g = new_game(stock="3R K 9")
    play(g, "draw")
    assert all(not n.startswith("discard") for n in legal_names(g))
    with pytest.raises(KeyError):
        action_index("discard:3R")


def _empty_hand_by_melding(foot, stock_after=""):
    """player_0 opens and melds the whole hand; the foot is picked up mid-turn."""
    return new_game(hands=["K K K K K Q Q Q Q Q J J J"], feet=[foot], stock="J J " + stock_after)


def test_red_three_in_foot_picked_up_by_melding_is_laid_then_turn_goes_on():
    g = _empty_hand_by_melding("3R 5 5 5 6 6 6 7 7 7 8 8 9", stock_after="A")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:5:0:0")
    assert g.feet[0] is None and g.current == 0
    assert legal_names(g) == ["lay_red_three"]
    play(g, "lay_red_three")
    assert g.red3[0] == 1 and g.hands[0][kind_of("A")] == 1 and sum(g.hands[0]) == 13
    assert "discard:A" in legal_names(g) and "meld:5:3:0:0" in legal_names(g)


def test_red_three_in_foot_picked_up_by_discarding_is_laid_on_the_next_turn():
    g = new_game(hands=["K K K K K Q Q Q Q Q J J J"], feet=["3R 5 5 5 6 6 6 7 7 7 8 8 9"],
                 stock="J 9  4 4  4 4  4 4  A")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:4:0:0", "discard:9")
    assert g.feet[0] is None and g.current == 1 and g.hands[0][RED3] == 1
    for _ in range(3):
        turn(g, "4")
    assert g.current == 0 and legal_names(g) == ["lay_red_three"]
    play(g, "lay_red_three")
    assert g.red3[0] == 1 and g.hands[0][kind_of("A")] == 1


def test_red_three_with_empty_stock_gets_no_replacement():
    g = two_deck_game()
    play(g, "lay_red_three", "draw")          # replacement Q, then the last two cards 3B 3R
    assert g.state_dict()["stock_size"] == 0
    assert legal_names(g) == ["lay_red_three"]
    before = sum(g.hands[0])
    play(g, "lay_red_three")
    assert sum(g.hands[0]) == before - 1 and g.red3[0] == 2


# ---------------------------------------------------------------------------
# 4.2 Draw

def test_draw_takes_the_top_two_cards_of_the_stock():
    g = new_game(stock="JK 2 A")
    size = g.state_dict()["stock_size"]
    play(g, "draw")
    assert g.hands[0][kind_of("JK")] == 1 and g.hands[0][kind_of("2")] == 1
    assert g.state_dict()["stock"][0] == "A" and g.state_dict()["stock_size"] == size - 2
    assert g.phase == MELD_PHASE and "draw" not in legal_names(g)


# ---------------------------------------------------------------------------
# 4.3 Taking the discard pile

def test_pickup_needs_two_naturals_matching_the_top_card():
    one = new_game(hands=["K A A A"], up="K")
    assert "pickup" not in legal_names(one)
    assert one.reason_illegal(action_index("pickup")) == "taking the pile needs two K in hand to meld with the top card"
    two = new_game(hands=["K K A A A"], up="K")
    assert legal_names(two) == ["draw", "pickup"]


def test_pickup_natural_and_wild_is_not_a_pair():
    g = new_game(hands=["K 2 A A A JK"], up="K")
    assert legal_names(g) == ["draw"]


@pytest.mark.parametrize("top,held,legal", [
    ("2", "2 2", True), ("2", "2 JK", False), ("2", "JK JK", False),
    ("JK", "JK JK", True), ("JK", "2 2", False),
])
def test_wild_top_card_needs_a_pair_of_the_same_wild(top, held, legal):
    g = new_game(hands=[None, held], stock=f"{top} 9")
    play(g, "draw", f"discard:{top}")
    assert g.current == 1
    assert is_legal(g, "pickup") is legal
    if legal:
        play(g, "pickup")
        assert melds_of(g, 1) == {"W": (0, 3, 0) if top == "2" else (0, 0, 3)}
        assert g.opened[1]


def test_wild_top_card_cannot_be_taken_without_wild_melds():
    g = new_game("bicycle", hands=[None, "2 2"], stock="2 9")
    play(g, "draw", "discard:2")
    assert not is_legal(g, "pickup")
    assert g.reason_illegal(action_index("pickup")) == (
        "a wild top card can only be melded into a wild meld, and these rules have none")


def _pile_game(**overrides):
    """Seven discards on the up-card 9; player_3 holds A A and takes the pile topped by an A."""
    g = new_game(hands=[None, None, None, "A A 4 5 6 7 8 9 10 J Q K 3B"], up="9",
                 stock="5 K 6 K 7 K 8 K 10 K J K A K", **overrides)
    for code in ["5", "6", "7", "8", "10", "J", "A"]:
        turn(g, code)
    assert g.current == 3 and g.state_dict()["discard"] == ["9", "5", "6", "7", "8", "10", "J", "A"]
    return g


def test_pickup_takes_the_top_seven_cards():
    g = _pile_game()
    before = hand_codes(g, 3)
    play(g, "pickup")
    assert g.state_dict()["discard"] == ["9"]
    assert melds_of(g, 1) == {"A": (3, 0, 0)} and g.opened[1]      # 3 aces = 60 opens round 1
    assert hand_codes(g, 3) == sorted([c for c in before if c != "A"] + ["5", "6", "7", "8", "10", "J"])


def test_pile_take_all_takes_the_whole_pile():
    g = _pile_game(pile_take="all")
    play(g, "pickup")
    assert g.state_dict()["discard"] == []
    assert g.hands[3][kind_of("9")] == 2 and g.hands[3][kind_of("5")] == 2


def _opened_with_kings(n_kings, p2_hand, p1_discard="K", p1_draw="K 4", **overrides):
    """player_0 opens with three aces and a meld of ``n_kings`` kings; player_1 discards; player_2 to act."""
    g = new_game(hands=["K " * n_kings + "A A A 9", "4 5 6 7 8 9 10 J Q 4 5 6 7", p2_hand],
                 up="9", stock=f"Q J {p1_draw} 4 4", **overrides)
    play(g, "draw", "meld:A:3:0:0", f"meld:K:{n_kings}:0:0", "discard:Q")
    assert g.opened[0] and melds_of(g, 0) == {"A": (3, 0, 0), "K": (n_kings, 0, 0)}
    play(g, "draw", f"discard:{p1_discard}")
    assert g.current == 2
    return g


@pytest.mark.parametrize("needs_opening", [False, True])
def test_pile_needs_opening_keeps_the_pile_from_a_team_that_has_not_opened(needs_opening):
    """player_3 holds A A under an ace on top of the pile; three aces (60) would open team 1 in round 1.
    Under ``pile_needs_opening`` the unopened team may only draw."""
    g = _pile_game(pile_needs_opening=needs_opening)
    assert not g.opened[1]
    assert legal_names(g) == (["draw"] if needs_opening else ["draw", "pickup"])
    if needs_opening:
        assert g.reason_illegal(action_index("pickup")) == (
            "under pile_needs_opening only a team that has opened may take the pile")
        with pytest.raises(IllegalActionError, match="only a team that has opened"):
            play(g, "pickup")


def test_pile_needs_opening_lets_a_team_opened_in_an_earlier_turn_take_the_pile():
    """player_0 opened team 0; on the next turn of the team its partner player_2 takes the pile with K K."""
    g = _opened_with_kings(5 - 2, "K K 4 5 6 7 8 9 10 J Q A 3B", pile_needs_opening=True)
    assert legal_names(g) == ["draw", "pickup"]
    play(g, "pickup")
    assert melds_of(g, 0)["K"] == (6, 0, 0) and g.state_dict()["discard"] == []


def test_pickup_melds_onto_the_unfinished_meld_of_that_rank():
    g = _opened_with_kings(5 - 2, "K K 4 5 6 7 8 9 10 J Q A 3B")
    play(g, "pickup")
    assert melds_of(g, 0)["K"] == (6, 0, 0) and g.hands[2][kind_of("K")] == 0
    assert g.state_dict()["discard"] == []
    assert g.hands[2][kind_of("9")] == 2 and g.hands[2][kind_of("Q")] == 2   # pile cards taken


def test_pickup_onto_a_meld_of_five_books_it_and_the_overflow_card_must_be_completed():
    g = _opened_with_kings(5, "K K K K 2 4 5 6 7 8 9 10 3B")
    play(g, "pickup")
    assert g.book_counts[0] == [1, 0, 0] and g.books[0][0][:2] == (kind_of("K"), 7)
    assert melds_of(g, 0)["K"] == (1, 0, 0)
    names = legal_names(g)
    assert not any(n.startswith("discard") for n in names)
    assert {"meld:K:2:0:0", "meld:K:1:1:0"} <= set(names) and "meld:K:1:0:0" not in names
    assert g.reason_illegal(action_index("discard:4")) == (
        "the meld started by the pickup must be completed before discarding")
    play(g, "meld:K:2:0:0")
    assert melds_of(g, 0)["K"] == (3, 0, 0) and is_legal(g, "discard:4")


def test_pickup_onto_a_meld_of_six_books_it_and_the_two_overflow_cards_must_be_completed():
    g = _opened_with_kings(6, "K K 2 4 5 6 7 8 9 10 J Q 3B")
    play(g, "pickup")
    assert g.book_counts[0] == [1, 0, 0] and melds_of(g, 0)["K"] == (2, 0, 0)
    assert not any(n.startswith("discard") for n in legal_names(g))
    play(g, "meld:K:0:1:0")
    assert melds_of(g, 0)["K"] == (2, 1, 0) and is_legal(g, "discard:4")


@pytest.mark.parametrize("rest, legal", [("JK 2", True), ("2 2", True), ("JK", False)])
def test_a_wild_pickup_onto_a_wild_meld_of_five_needs_two_more_wilds(rest, legal):
    """Team 0's wild meld holds five wilds; a joker on the pile taken with two jokers books it (7)
    and leaves one joker over, a new wild meld that needs two more wilds from the hand: any two wilds
    (a two and a joker, or two twos) allow the pickup, one does not."""
    g = new_game(hands=["2 2 2 JK JK K K K", "JK", "JK JK " + rest])
    play(g, "draw", "meld:K:3:0:0", "meld:W:0:3:2", "discard:4")      # 30 + 160: opened
    assert g.opened[0] and melds_of(g, 0)["W"] == (0, 3, 2)
    play(g, "draw", "discard:JK")
    assert g.current == 2 and g.discard[-1] == kind_of("JK")
    assert is_legal(g, "pickup") is legal
    if legal:
        play(g, "pickup")
        assert g.book_counts[0][2] == 1 and melds_of(g, 0)["W"] == (0, 0, 1)
        twos, jokers = rest.split().count("2"), rest.split().count("JK")
        play(g, f"meld:W:0:{twos}:{jokers}")
        assert melds_of(g, 0)["W"] == (0, twos, jokers + 1) and is_legal(g, "discard:5")


def test_in_the_foot_the_overflow_may_use_every_card_but_the_two_kept():
    """In the foot with six cards (three jokers, a two, a 5 and a 6) and a lone joker on the pile:
    taking it books team 0's wild meld of five and leaves one joker over, which needs two more wilds;
    after the pickup four cards are held, two must be kept, so exactly two may go to the overflow
    meld: enough (the state is set directly)."""
    g = position(2, "JK JK JK 2 5 6", opened=True, melds={"W": (0, 3, 2)}, discard="JK")
    p = g.current
    team = g.team_of[p]
    assert is_legal(g, "pickup")
    play(g, "pickup")
    assert g.book_counts[team][2] == 1 and g.melds[team][11] == [0, 0, 1]
    play(g, "meld:W:0:1:1")
    assert g.hands[p] == counts("5 6") and is_legal(g, "discard:5")


def test_in_the_foot_the_overflow_may_not_use_the_two_cards_kept():
    """In the foot with K K 2 5 and a lone king on the pile, team 0's king meld holding six: the pickup
    books it and leaves two kings over, which need a third card; the two cards left (the two and the
    5) must both be kept, so the overflow could not be completed and the pile may not be taken (the
    team lacks the books to go out; the state is set directly)."""
    g = position(2, "K K 2 5", opened=True, melds={"K": (6, 0, 0)}, discard="K")
    p = g.current
    team = g.team_of[p]
    assert not is_legal(g, "pickup")
    assert g.reason_illegal(action_index("pickup")) == (
        "the cards that overflow the meld could not be made into a legal meld")
    g.hands[p] = counts("K K 2 5 6")                   # one card more: the two joins the kings
    assert is_legal(g, "pickup")
    # a meld of five kings: the pickup books it with two and leaves one king over, which needs two
    # more cards; with K K K 2 5 one card may go (a king), not two
    g.melds[team][kind_of("K")] = [5, 0, 0]
    g.hands[p] = counts("K K K 2 5")
    assert not is_legal(g, "pickup")
    g.hands[p] = counts("K K K 2 5 6")                 # two may go: the king and the two
    assert is_legal(g, "pickup")


@pytest.mark.parametrize("n_kings", [5, 6])
def test_pickup_not_allowed_when_the_overflow_meld_cannot_be_completed(n_kings):
    g = _opened_with_kings(n_kings, "K K 4 5 6 7 8 9 10 J Q A 3B")
    assert not is_legal(g, "pickup")
    assert g.reason_illegal(action_index("pickup")) == (
        "the cards that overflow the meld could not be made into a legal meld")


@pytest.mark.parametrize("pile, legal", [("5 2 K", True), ("2 5 K", True), ("9 5 K", False)])
def test_every_card_taken_under_the_top_counts_towards_the_overflow(pile, legal):
    """An opened team's meld of six kings, K K 9 10 J in hand (not in the foot) and a pile of three cards
    with a king on top: the pickup books the kings and leaves two over, which need a third card; a two
    taken with the pile completes them, second from the top or third (the state is set directly)."""
    g = position(3, "K K 9 10 J", "4 5 6", opened=True, melds={"K": (6, 0, 0)}, discard=pile)
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("pile, legal", [("K K K", True), ("4 K K", False)])
def test_each_copy_of_a_kind_taken_with_the_pile_counts(pile, legal):
    """An opened team's meld of five kings, K K 9 10 J in hand and a pile with a king on top: the pickup
    books the kings and leaves one over, which needs two more; the two kings under the top complete it,
    one alone does not (the state is set directly)."""
    g = position(3, "K K 9 10 J", "4 5 6", opened=True, melds={"K": (5, 0, 0)}, discard=pile)
    assert is_legal(g, "pickup") == legal


def test_outside_the_foot_the_overflow_may_use_every_card_in_hand():
    """Outside the foot no card has to be kept: with K K 2 in hand, a lone king on the pile and an opened
    meld of six kings, the pickup books the kings, the two left over take the 2 as their third card,
    and the emptied hand is followed by the foot (the state is set directly)."""
    g = position(3, "K K 2", "4 5 6", opened=True, melds={"K": (6, 0, 0)}, discard="K")
    p = g.current
    assert is_legal(g, "pickup")
    play(g, "pickup", "meld:K:0:1:0")
    assert g.feet[p] is None and g.hands[p] == counts("4 5 6")


def test_in_the_foot_a_pickup_may_leave_exactly_two_cards():
    """In the foot with K K 5 6, a lone king on the pile and an opened meld of three kings: the pickup
    leaves the 5 and the 6, the two cards the foot must keep, so it is legal though the player may not
    go out (the state is set directly)."""
    g = position(3, "K K 5 6", opened=True, melds={"K": (3, 0, 0)}, discard="K")
    assert not g.may_go_out(g.current) and is_legal(g, "pickup")


@pytest.mark.parametrize("minimum, legal", [(30, True), (31, False)])
def test_a_pickup_one_point_short_of_the_minimum_is_refused(minimum, legal):
    """An unopened team, K K 4 5 6 7 in hand and a lone king on the pile: three kings are 30 and nothing
    in hand melds, so the pickup opens under a minimum of 30 and is refused under 31 (rules with that
    minimum; the state is set directly)."""
    g = position(3, "K K 4 5 6 7", "8 9 10", discard="K", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


def test_in_the_foot_an_opening_pickup_may_not_use_the_two_cards_kept():
    """An unopened team in the foot with K K Q Q Q 5 and a lone king on the pile (minimum 50): the three
    kings are 30 and the queens would bring 30 more, but two of the four cards left must be kept, so
    only two could be melded and the pickup is refused; with a fourth queen it is legal."""
    g = position(3, "K K Q Q Q 5", discard="K")
    assert g.minimum == 50 and not is_legal(g, "pickup")
    assert g.reason_illegal(action_index("pickup")) == (
        "the team has not opened and the pickup meld plus melds from hand cannot reach the minimum of 50")
    g = position(3, "K K Q Q Q Q 5", discard="K")
    assert is_legal(g, "pickup")


def test_outside_the_foot_an_opening_pickup_may_use_every_card_in_hand():
    """An unopened team, K K Q Q Q in hand (not in the foot) and a lone king on the pile (minimum 50):
    the kings' 30 and all three queens left reach 60, so the pickup is legal (the state is set directly)."""
    g = position(3, "K K Q Q Q", "8 9 10", discard="K")
    assert g.minimum == 50 and is_legal(g, "pickup")


@pytest.mark.parametrize("hand, meld, foot", [("9 9 2", "meld:9:2:1:0", "4 5 6 7 8 9 10 J Q K A 4 5"),
                                              ("9 9 9 9 2", "meld:9:4:1:0", None)])
def test_a_meld_that_empties_the_hand_with_the_overflow_unfinished_is_refused(hand, meld, foot):
    """After a pickup left two kings over (an unfinished meld), a meld of the nines with the two would
    empty the hand and leave no card to finish the kings, so it is refused, in the hand as in the foot;
    the two is wanted on the kings, and that meld is legal (the state is set directly)."""
    kw = {} if foot is None else {"foot": foot}
    g = position(3, hand, **kw, opened=True, melds={"K": (2, 0, 0)})
    g.phase, g.incomplete = MELD_PHASE, kind_of("K")
    assert g.reason_illegal(action_index(meld)) == "the unfinished meld from the pickup could no longer be completed"
    assert is_legal(g, "meld:K:0:1:0")


@pytest.mark.parametrize("wild_melds, legal", [(True, True), (False, False)])
def test_three_jokers_open_with_a_pickup_only_as_a_wild_meld(wild_melds, legal):
    """An unopened team, K K JK JK JK in hand and a lone king on the pile (minimum 150): the kings' 30
    and a wild meld of the jokers (150) open; without wild melds a joker may only join the kings (one,
    under the double limit: 80), so the pickup is refused (the state is set directly)."""
    g = position(3, "K K JK JK JK", "8 9 10", discard="K", minimums=[150], wild_melds=wild_melds,
                 **({} if wild_melds else {"go_out_wild": 0}))
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("minimum, legal", [(70, True), (80, False)])
def test_an_opening_pickup_adds_at_most_four_naturals_to_its_meld(minimum, legal):
    """An unopened team with seven kings in hand and a lone king on the pile: the pickup's three kings
    and four from the hand make a book of 70; the fifth king could start no meld alone, so 70 is the
    most the kings can open with (the state is set directly)."""
    g = position(3, "K K K K K K K", "8 9 10", discard="K", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("minimum, legal", [(155, True), (170, False)])
def test_eight_naturals_of_a_rank_open_as_one_book_of_seven(minimum, legal):
    """An unopened team with 4 4 and eight aces in hand, a lone 4 on the pile: the fours' 15 and a book
    of seven aces (140) make 155; the eighth ace could start no meld alone (the state is set directly)."""
    g = position(3, "4 4 A A A A A A A A", "8 9 10", discard="4", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("hand, legal", [("K K Q Q Q J J J 10 10 10", False), ("K K Q Q Q J J J 10 10 10 5 6", True)])
def test_in_the_foot_an_opening_pickup_melds_only_the_cards_it_may_spare(hand, legal):
    """An unopened team in the foot (the stock spent), a lone king on the pile, minimum 120: the kings'
    30 need 90 more from three groups of three (queens, jacks, tens); with eleven cards, two of the
    nine left after the pickup must be kept, so only two groups (60) can go; two cards more free the
    third (the state is set directly)."""
    g = position(3, hand, discard="K", stock="", minimums=[120])
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("hand, minimum, legal", [("K K 7 7 JK", 90, True), ("K K 6 6 JK", 90, True),
                                                 ("K K 6 6 JK", 95, False)])
def test_an_opening_pickup_may_need_its_lowest_cards_with_a_wild(hand, minimum, legal):
    """An unopened team, a lone king on the pile: the kings' 30 and a meld of two sevens (or sixes) and
    a joker (60) make 90; no whole group of three naturals is in hand, so only the search over wilds
    finds it (the state is set directly)."""
    g = position(3, hand, "8 9 10", discard="K", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("hand, minimum, legal", [("2 2 JK JK JK JK", 260, True), ("2 2 JK JK JK JK", 265, False),
                                                 ("2 2 JK JK", 160, True)])
def test_an_opening_pickup_of_a_two_fills_the_wild_meld_to_a_book(hand, minimum, legal):
    """An unopened team and a two on the pile: the three twos (60) and four jokers from the hand (200)
    make a wild book of seven, 260; two jokers make a wild meld of five, 160 (the state is set
    directly)."""
    g = position(3, hand, "8 9 10", discard="2", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


@pytest.mark.parametrize("hand, minimum, legal", [("JK JK JK JK 2 2", 290, True), ("JK JK JK JK 2 2", 295, False),
                                                 ("JK JK 2 2 2 2 2", 230, True), ("JK JK 2 2 2 2 2", 250, False)])
def test_an_opening_pickup_of_a_joker_fills_the_wild_meld_to_seven(hand, minimum, legal):
    """An unopened team and a joker on the pile: the three jokers (150) take at most four more wilds
    from the hand, the wild meld's seven: two jokers and two twos (140) make 290; with five twos in
    hand only four go (80), 230 (the state is set directly)."""
    g = position(3, hand, "8 9 10", discard="JK", minimums=[minimum])
    assert is_legal(g, "pickup") == legal


def test_a_joker_left_over_from_a_pickup_needs_two_more_wilds_while_other_melds_go_down():
    """A pickup of a joker booked the wild meld and left one joker over (an unfinished wild meld); with
    2 2 9 9 9 5 in hand the nines may go down first, since the two twos left still finish the
    jokers' meld; the nines with a two may not (the state is set directly)."""
    g = position(3, "2 2 9 9 9 5", "4 5 6 7 8 9 10 J Q K A 4 5", opened=True, melds={"W": (0, 0, 1)})
    g.phase, g.incomplete = MELD_PHASE, 11
    assert is_legal(g, "meld:9:3:0:0")
    assert g.reason_illegal(action_index("meld:9:3:1:0")) == (
        "the unfinished meld from the pickup could no longer be completed")


@pytest.mark.parametrize("hand, in_foot, legal", [("K 9 9 9", False, True), ("K 9 9 9 5 6", True, True),
                                                 ("K 9 9 9 5", True, False)])
def test_a_meld_beside_a_pickup_overflow_leaves_a_card_to_finish_it(hand, in_foot, legal):
    """Two kings left over from a pickup (an unfinished meld): melding the nines is legal when a king
    is left to finish the kings' meld, outside the foot even as the last card; in the foot two cards
    must stay besides it (the player may not go out), so with K 5 left the nines are refused (the
    state is set directly)."""
    kw = {} if in_foot else {"foot": "4 5 6 7 8 9 10 J Q K A 4 5"}
    g = position(3, hand, **kw, opened=True, melds={"K": (2, 0, 0)})
    g.phase, g.incomplete = MELD_PHASE, kind_of("K")
    reason = g.reason_illegal(action_index("meld:9:3:0:0"))
    assert reason == (None if legal else "the unfinished meld from the pickup could no longer be completed")


def test_an_opening_meld_of_exactly_the_minimum_may_empty_the_hand():
    """An unopened team with K K K K K in hand after drawing (minimum 50): the five kings are worth
    exactly 50, so the meld opens, and the hand it empties is followed by the foot (the state is set
    directly)."""
    g = position(3, "K K K K K", "4 5 6 7 8 9 10 J Q K A 4 5")
    g.phase = MELD_PHASE
    p, team = g.current, g.team_of[g.current]
    assert g.minimum == 50 and is_legal(g, "meld:K:5:0:0")
    play(g, "meld:K:5:0:0")
    assert g.opened[team] and g.feet[p] is None and g.hand_size(p) == 13


@pytest.mark.parametrize("hand, legal", [("K K K K K 5 6", True), ("K K K K K 5", False)])
def test_in_the_foot_an_opening_meld_leaves_the_two_cards_kept(hand, legal):
    """An unopened team in the foot (the stock spent): the five kings open (50) when two cards stay in
    hand, and are refused when one would (the state is set directly)."""
    g = position(3, hand, stock="")
    g.phase = MELD_PHASE
    reason = g.reason_illegal(action_index("meld:K:5:0:0"))
    assert reason == (None if legal else
                      "in the foot, melding must leave two cards (one to discard, one to keep) unless going out")


@pytest.mark.parametrize("hand, meld, legal", [("9 9 9 K K K 6", "meld:9:3:0:0", True),
                                              ("5 5 5 K K K 6", "meld:5:3:0:0", False)])
def test_after_the_cancel_the_reach_counts_the_room_left_in_a_meld_with_wilds(hand, meld, legal):
    """An unopened team, its cancel spent, minimum 150, with a provisional meld of four kings, a two and
    a joker (110): after three nines (140) one king from K K K finishes the kings' book (150); after
    three fives (125) the 25 still needed would take three kings, and the kings' meld has room for one
    (the state is set directly)."""
    g = position(3, hand, "4 5 6 7 8 9 10 J Q K A 4 5", melds={"K": (4, 1, 1)}, minimums=[150])
    g.phase, g.cancels, g.prov, g.prov_value = MELD_PHASE, 1, counts("K K K K 2 JK"), 110
    reason = g.reason_illegal(action_index(meld))
    assert reason == (None if legal else "the opening could no longer reach the minimum of 150")


def test_in_the_foot_the_pile_cards_held_aside_join_the_hand_at_the_opening():
    """An unopened team in the foot (the stock spent) took the pile this turn: three queens on the table
    (30), two nines held aside; with K K K K K 5 in hand the five kings open (80), leaving one card of
    the hand, and the nines join it at the opening, so two or more stay (the state is set directly)."""
    g = position(3, "K K K K K 5", stock="", melds={"Q": (3, 0, 0)})
    g.phase, g.prov_value, g.forced, g.pending = MELD_PHASE, 30, (kind_of("Q"), 3, 0, 0), counts("9 9")
    p = g.current
    assert g.reason_illegal(action_index("meld:K:5:0:0")) is None
    play(g, "meld:K:5:0:0")
    assert g.opened[g.team_of[p]] and g.hands[p] == counts("5 9 9")


@pytest.mark.parametrize("hand, in_foot, legal", [("4 4 4 Q Q Q 5 6", True, True), ("4 4 4 Q Q Q", True, False),
                                                 ("4 4 4 Q Q Q", False, True)])
def test_after_the_cancel_in_the_foot_the_reach_keeps_two_cards(hand, in_foot, legal):
    """An unopened team, its cancel spent, with three provisional kings (30; minimum 50): melding three
    fours (45) leaves the queens to reach the minimum; in the foot (the stock spent) they can only if
    two more cards stay there, outside it they may be the last cards (the state is set directly)."""
    kw = {"stock": ""} if in_foot else {"foot": "4 5 6 7 8 9 10 J Q K A 4 5"}
    g = position(3, hand, **kw, melds={"K": (3, 0, 0)})
    g.phase, g.cancels, g.prov, g.prov_value = MELD_PHASE, 1, counts("K K K"), 30
    reason = g.reason_illegal(action_index("meld:4:3:0:0"))
    assert reason == (None if legal else "the opening could no longer reach the minimum of 50")


def _unopened_pile_game(p3_hand, round=1):
    """The pile is up Q, Q, Q (discarded) and K on top; player_3 to act, team 1 unopened."""
    g = new_game(hands=[None, None, None, p3_hand], up="Q", stock="Q 4 Q 4 K 4", round=round)
    if round == 1:
        for code in ["Q", "Q", "K"]:
            turn(g, code)
    assert g.current == 3 and g.state_dict()["discard"] == ["Q", "Q", "Q", "K"]
    return g


def test_opening_by_pickup_needs_the_minimum_with_melds_from_hand():
    short = _unopened_pile_game("K K J J 4 5 6 7 8 9 10 A 3B")   # 3 K = 30 < 50, nothing else to meld
    assert not is_legal(short, "pickup")
    assert short.reason_illegal(action_index("pickup")) == (
        "the team has not opened and the pickup meld plus melds from hand cannot reach the minimum of 50")
    enough = _unopened_pile_game("K K J J J 4 5 6 7 8 9 10 A")   # 30 + J J J 30 = 60
    assert is_legal(enough, "pickup")


def test_pile_cards_under_the_top_do_not_count_toward_the_opening():
    # with the three queens from the pile, Q Q Q Q Q + K K K would be 80; they do not count
    g = _unopened_pile_game("K K Q Q 4 5 6 7 8 9 10 A 3B")
    assert not is_legal(g, "pickup")


def test_pile_cards_are_held_until_the_opening_is_complete():
    g = _unopened_pile_game("K K J J J 4 5 6 7 8 9 10 A")
    play(g, "pickup")
    assert not g.opened[1] and melds_of(g, 1) == {"K": (3, 0, 0)}
    assert g.hands[3][kind_of("Q")] == 0 and g.state_dict()["pending_pile_cards"] == ["Q", "Q", "Q"]
    assert not is_legal(g, "meld:Q:3:0:0") and not any(n.startswith("discard") for n in legal_names(g))
    play(g, "meld:J:3:0:0")
    assert g.opened[1] and g.hands[3][kind_of("Q")] == 3
    assert is_legal(g, "meld:Q:3:0:0") and is_legal(g, "discard:A")


def test_cancel_melds_after_a_pickup_keeps_the_pickup_cards():
    # round 2 (minimum 90), led by player_1; player_0 takes the pile topped by a K:
    # K K K (30) + J J J (30) is not enough, + A A A (60) is
    g = new_game(hands=["K K J J J A A A 4 5 6 7 8"], up="Q", stock="Q 4 Q 4 K 4", round=2)
    assert g.current == 1
    for code in ["Q", "Q", "K"]:
        turn(g, code)
    assert g.current == 0 and is_legal(g, "pickup")
    play(g, "pickup", "meld:J:3:0:0")
    assert not g.opened[0] and melds_of(g, 0) == {"K": (3, 0, 0), "J": (3, 0, 0)}
    play(g, "cancel_melds")
    assert melds_of(g, 0) == {"K": (3, 0, 0)} and g.hands[0][kind_of("J")] == 3
    assert g.hands[0][kind_of("K")] == 0 and g.state_dict()["pending_pile_cards"] == ["Q", "Q", "Q"]
    assert not is_legal(g, "cancel_melds") and not any(n.startswith("discard") for n in legal_names(g))
    play(g, "meld:J:3:0:0", "meld:A:3:0:0")                   # 30 + 30 + 60 = 120 >= 90
    assert g.opened[0] and g.hands[0][kind_of("Q")] == 3


def test_first_meld_below_the_minimum_is_provisional_and_blocks_the_discard():
    g = new_game(hands=["5 5 5 6 6 6 K K K 9 10 J Q"], stock="4 4")
    play(g, "draw", "meld:5:3:0:0")
    assert not g.opened[0] and melds_of(g, 0) == {"5": (3, 0, 0)}
    assert not any(n.startswith("discard") for n in legal_names(g))
    assert g.reason_illegal(action_index("discard:9")) == (
        "provisional melds must reach the minimum of 50 or be cancelled")
    play(g, "meld:6:3:0:0")                                # 15 + 15 = 30 < 50
    assert not g.opened[0]
    play(g, "meld:K:3:0:0")                                # + 30 = 60 >= 50
    assert g.opened[0] and is_legal(g, "discard:9") and "cancel_melds" not in legal_names(g)


def test_cancel_melds_takes_back_the_provisional_melds():
    g = new_game(hands=["5 5 5 6 6 6 K K 9 10 J Q A"], stock="4 4")
    play(g, "draw")
    before = g.hands[0][:]
    play(g, "meld:5:3:0:0", "meld:6:3:0:0")
    assert legal_names(g)[0] == "cancel_melds"
    play(g, "cancel_melds")
    assert g.hands[0] == before and melds_of(g, 0) == {} and not g.opened[0]
    assert is_legal(g, "discard:9") and not is_legal(g, "cancel_melds")
    # engine choice: one cancel per turn, after which a provisional meld must keep
    # the opening reachable: 5 5 5 + 6 6 6 + K K is at most 30
    assert not is_legal(g, "meld:5:3:0:0")
    assert g.reason_illegal(action_index("meld:5:3:0:0")) == "the opening could no longer reach the minimum of 50"


def test_red_three_laid_stays_after_cancel_melds():
    g = new_game(hands=["5 5 5 6 6 6 K K 9 10 J Q A"], stock="3R 4 4")
    play(g, "draw", "lay_red_three", "meld:5:3:0:0", "cancel_melds")
    assert g.red3[0] == 1 and g.hands[0][RED3] == 0 and melds_of(g, 0) == {}


def test_after_the_cancel_a_book_frees_its_rank_for_the_opening():
    """An unopened team whose cancel is spent may only meld while the minimum stays reachable; a meld
    that completes a book leaves the rank free for a new meld, and the reach counts it."""
    g = new_game(hands=["", "", "", "K K K K K K K K K K A A A"], stock="4 4", round=4)     # player_3 opens round 4
    play(g, "draw", "meld:K:3:0:0", "cancel_melds")
    assert g.minimum == 150 and g.cancels == 1 and not g.opened[1]
    # a book of seven kings (70), then a new meld of the other three (30) and three aces (60): 160
    assert is_legal(g, "meld:K:7:0:0")
    play(g, "meld:K:7:0:0", "meld:K:3:0:0", "meld:A:3:0:0")
    assert g.opened[1]


def test_after_the_cancel_the_reach_counts_a_wild_on_a_new_meld_of_the_booked_rank():
    """After the cancel, the reach of the minimum counts a new meld of a book's rank started
    from the naturals left, wilds included: ten kings and a joker, the book of seven kings
    leaves three kings that take the joker, and only that meld makes up the minimum."""
    g = new_game(hands=["", "", "", "K K K K K K K K K K JK 4 6"], stock="5 9", round=4)  # player_3 opens round 4
    play(g, "draw", "meld:K:3:0:0", "cancel_melds")
    assert g.minimum == 150 and g.cancels == 1 and not g.opened[1]
    # a book of seven kings: 70, then 80 to go with the eight cards left (K K K JK 4 5 6 9):
    # a new meld of three kings and the joker, 30 + 50 = 80; the 4 5 6 9 meld nothing, and a
    # lone joker makes no wild meld, so without the new king meld nothing reaches 80
    assert is_legal(g, "meld:K:7:0:0")
    play(g, "meld:K:7:0:0", "meld:K:3:0:1")                  # 70 + 80 = 150
    assert g.opened[1]


def test_cancel_melds_once_per_turn():
    g = new_game(hands=["5 5 5 6 6 6 K K K 9 10 J Q"], stock="4 4")
    play(g, "draw", "meld:5:3:0:0", "cancel_melds", "meld:5:3:0:0")    # K K K can still open
    assert not is_legal(g, "cancel_melds") and g.reason_illegal(action_index("cancel_melds")) == (
        "cancel_melds has already been used this turn")
    play(g, "meld:6:3:0:0", "meld:K:3:0:0")
    assert g.opened[0]


@pytest.mark.parametrize("round,minimum", [(1, 50), (2, 90), (3, 120), (4, 150)])
def test_first_meld_minimum_rises_by_round(round, minimum):
    # kings: 7 x 10 = 70; aces: 4 x 20 = 80; jokers melded at 50 each
    g = new_game(hands=[None] * (round - 1) + ["K K K K K K K A A A A JK JK"], stock="4 4", round=round)
    assert g.current == round - 1 and g.minimum == minimum
    play(g, "draw", "meld:A:4:0:0")              # 80
    assert g.opened[0 if round % 2 else 1] is (80 >= minimum)
    if 80 < minimum:
        play(g, "meld:K:4:0:0")                  # 120
        assert g.opened[(round - 1) % 2] is (120 >= minimum)
    if 120 < minimum:
        play(g, "meld:K:2:0:1")                  # + 20 + 50 = 190: a dirty book of kings
        assert g.opened[(round - 1) % 2]


def test_a_pickup_that_reaches_the_minimum_exactly_opens():
    """Round 4 (minimum 150): three jokers taken from the pile make a wild meld of 3 x 50 = 150,
    exactly the minimum, so the pickup itself opens the team and the player may discard at once."""
    g = new_game(hands=["JK JK", None, None, "JK"], stock="4 5  6 7", round=4)
    assert g.current == 3 and g.minimum == 150
    play(g, "draw", "discard:JK")
    play(g, "pickup")
    assert g.opened[0] and g.melds[0][11] == [0, 0, 3]
    assert is_legal(g, "discard:4")


def test_book_bonus_does_not_count_toward_the_minimum():
    g = new_game(hands=[None, "4 4 4 4 4 4 4 9 10 J Q K A"], stock="5 5", round=2)
    play(g, "draw", "meld:4:7:0:0")
    assert g.book_counts[1] == [1, 0, 0] and not g.opened[1]      # a clean book, but 35 < 90
    play(g, "cancel_melds")
    assert g.book_counts[1] == [0, 0, 0] and g.hands[1][kind_of("4")] == 7


def test_after_the_team_opens_the_partner_melds_freely():
    g = new_game(hands=["K K K K K 9 10 J Q A 4 5 6", None, "5 5 5 8 9 10 J Q K A 4 6 7"], stock="4 4 6 7 9 9")
    play(g, "draw", "meld:K:5:0:0", "discard:9")
    turn(g, "6")
    play(g, "draw", "meld:5:3:0:0")                      # 15 points, team already open
    assert melds_of(g, 0) == {"K": (5, 0, 0), "5": (3, 0, 0)} and is_legal(g, "discard:9")


# ---------------------------------------------------------------------------
# 4.4 Melds and books

def test_wild_limit_double_naturals_at_least_twice_the_wilds():
    g = new_game(hands=["K K K K 2 2 2 4 5 6 7 8 9"], stock="10 J")
    play(g, "draw")
    names = set(legal_names(g))
    assert {"meld:K:2:1:0", "meld:K:3:1:0", "meld:K:4:1:0", "meld:K:4:2:0"} <= names
    assert not names & {"meld:K:1:1:0", "meld:K:2:2:0", "meld:K:3:2:0", "meld:K:4:3:0", "meld:K:1:2:0"}
    assert g.reason_illegal(action_index("meld:K:3:2:0")) == "the meld would break the wild limit (double)"


def test_wild_limit_majority_naturals_more_than_the_wilds():
    g = new_game(hands=["K K K K 2 2 2 4 5 6 7 8 9"], stock="10 J", wild_limit="majority")
    play(g, "draw")
    names = set(legal_names(g))
    assert {"meld:K:2:1:0", "meld:K:3:2:0", "meld:K:4:3:0"} <= names
    assert not names & {"meld:K:1:1:0", "meld:K:2:2:0", "meld:K:3:3:0"}


def test_wild_limit_applies_to_wilds_added_to_an_existing_meld():
    g = new_game(hands=["K K K K 2 2 2 A A A 4 5 6"], stock="10 J")
    play(g, "draw", "meld:A:3:0:0", "meld:K:3:1:0")
    assert melds_of(g, 0)["K"] == (3, 1, 0)
    assert not is_legal(g, "meld:K:0:1:0")               # 3 naturals, 2 wilds
    assert is_legal(g, "meld:K:1:1:0") and is_legal(g, "meld:K:1:0:0")   # 4 and 2 in six cards


def test_one_unfinished_meld_per_rank_and_at_most_seven_cards():
    g = new_game(hands=["K K K K K K K K K A A A 4"], stock="10 J")
    play(g, "draw", "meld:K:5:0:0")
    assert melds_of(g, 0) == {"K": (5, 0, 0)}
    # no second king meld can start: a meld action for K adds to the one unfinished meld
    assert not is_legal(g, "meld:K:3:0:0")
    assert g.reason_illegal(action_index("meld:K:3:0:0")) == "a meld cannot exceed seven cards"
    play(g, "meld:K:2:0:0")                               # book
    assert g.book_counts[0] == [1, 0, 0] and melds_of(g, 0) == {}
    assert not is_legal(g, "meld:K:2:0:0")                # only 2 kings left: a new meld needs 3


@pytest.mark.parametrize("spec,kind", [("meld:K:7:0:0", 0), ("meld:K:5:2:0", 1), ("meld:K:6:0:1", 1)])
def test_book_closes_at_seven_clean_or_dirty(spec, kind):
    g = new_game(hands=["K K K K K K K 2 2 JK 4 5 6"], stock="10 J")
    play(g, "draw", spec)
    expect = [0, 0, 0]
    expect[kind] = 1
    assert g.book_counts[0] == expect and melds_of(g, 0) == {}
    assert len(g.books[0]) == 1 and sum(g.books[0][0][1:]) == 7


def test_wild_meld_and_wild_book():
    g = new_game(hands=["2 2 2 2 JK JK JK 4 5 6 7 8 9"], stock="10 J")
    play(g, "draw", "meld:W:0:2:1")
    assert melds_of(g, 0) == {"W": (0, 2, 1)} and g.opened[0]      # 40 + 50 = 90
    play(g, "meld:W:0:2:2")
    assert g.book_counts[0] == [0, 0, 1] and melds_of(g, 0) == {}


def test_wild_melds_not_allowed_when_the_rules_forbid_them():
    g = new_game("bicycle", hands=["2 2 2 JK JK JK 4 5 6 7 8"], stock="10 J")
    play(g, "draw")
    assert not any(n.startswith("meld:W") for n in legal_names(g))
    assert g.reason_illegal(action_index("meld:W:0:3:0")) == "these rules do not allow wild melds"


def test_cards_go_only_onto_the_own_teams_melds():
    g = new_game(hands=["K K K K K 9 10 J Q A 4 5 6", "K 4 5 6 7 8 9 10 J Q A 3B 3B"], stock="4 4 6 7")
    play(g, "draw", "meld:K:5:0:0", "discard:9")
    play(g, "draw")
    assert not is_legal(g, "meld:K:1:0:0")     # team 1 has no king meld of its own


# ---------------------------------------------------------------------------
# 4.6 Hand and foot

def test_hand_emptied_by_melding_picks_up_the_foot_and_the_turn_goes_on():
    g = _empty_hand_by_melding("5 5 5 6 6 6 7 7 7 8 8 9 10")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:5:0:0")
    assert g.feet[0] is None and g.current == 0 and g.phase == MELD_PHASE
    assert hand_codes(g, 0) == sorted("5 5 5 6 6 6 7 7 7 8 8 9 10".split())
    play(g, "meld:5:3:0:0", "discard:10")
    assert g.current == 1 and g.played_foot[0]


def test_hand_emptied_by_discarding_ends_the_turn_and_the_foot_waits():
    g = new_game(hands=["K K K K K Q Q Q Q Q J J J"], feet=["5 5 5 6 6 6 7 7 7 8 8 9 10"], stock="J 9")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:4:0:0", "discard:9")
    assert g.current == 1 and g.feet[0] is None
    assert hand_codes(g, 0) == sorted("5 5 5 6 6 6 7 7 7 8 8 9 10".split())
    assert not g.played_foot[0]


def test_in_the_foot_melding_must_leave_two_cards():
    g = _empty_hand_by_melding("5 5 5 6 6 6 7 7 7 8 8 8 9")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:5:0:0")
    play(g, "meld:5:3:0:0", "meld:6:3:0:0", "meld:7:3:0:0")     # 8 8 8 9 left
    assert not is_legal(g, "meld:8:3:0:0")
    assert g.reason_illegal(action_index("meld:8:3:0:0")) == (
        "in the foot, melding must leave two cards (one to discard, one to keep) unless going out")
    assert is_legal(g, "discard:9")


def test_in_the_foot_a_discard_may_not_empty_the_foot():
    g = _empty_hand_by_melding("5 5 5 6 6 6 7 7 7 8 8 9 10")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:5:0:0", "meld:5:3:0:0", "meld:6:3:0:0")
    assert is_legal(g, "discard:10")
    # Under the rules a player in the foot holds two or more cards when discarding,
    # except after melding down to one card with permission to go out.  Check the
    # discard rule itself on a position with a single card left (the others moved
    # to the stock, which keeps every card somewhere).
    h = g.clone()
    for code in ["7", "7", "7", "8", "8", "9"]:
        h.hands[0][kind_of(code)] -= 1
        h.stock.append(kind_of(code))
    assert sum(h.hands[0]) == 1
    assert "discard:10" not in legal_names(h)
    assert h.reason_illegal(action_index("discard:10")) == (
        "a discard may not empty the foot unless going out is allowed")


@pytest.mark.parametrize("clean_needed,legal", [(2, True), (3, False)])
def test_going_out_by_discard_needs_the_required_books(clean_needed, legal):
    g = books_game(last_draw="5 5", go_out_clean=clean_needed)
    play(g, "draw", "ask_go_out", "answer_yes")
    assert is_legal(g, "meld:5:2:0:0") is legal
    # the discard rule itself, on a one-card foot (cards moved to the stock)
    h = g.clone()
    for code in ["5", "5"]:
        h.hands[0][kind_of(code)] -= 1
        h.stock.append(kind_of(code))
    assert hand_codes(h, 0) == ["8"]
    assert is_legal(h, "discard:8") is legal
    if not legal:
        assert h.reason_illegal(action_index("discard:8")) == "going out needs the team's required books"


# ---------------------------------------------------------------------------
# 5. Going out: a position where team 0 holds 2 clean, 2 dirty and 1 wild book

def test_asking_needs_the_partner_to_have_played_from_the_foot():
    g = books_game(stop="p0_turn2")
    assert g.feet[2] is None and not g.played_foot[2]      # the partner holds the foot but has not played it
    assert not is_legal(g, "ask_go_out")
    assert g.reason_illegal(action_index("ask_go_out")) == "the partner has not yet played from the foot"
    g = books_game()
    play(g, "draw")
    assert is_legal(g, "ask_go_out")


def test_a_pickup_from_the_foot_is_playing_from_it():
    """Taking the pile while holding the foot counts as playing from it (docs/rules.md 8: a meld,
    pickup or discard while holding the foot), before any discard of that turn."""
    g = books_game(stop="p2_turn2", foot2="4 4 5 6 7 8 9 10 J Q K A 5")
    assert g.current == 2 and g.feet[2] is None and not g.played_foot[2] and g.discard[-1] == kind_of("4")
    play(g, "pickup")                                # the top 4 and the pair of 4s from the foot
    assert g.played_foot[2] and g.phase == MELD_PHASE


def test_a_meld_from_the_foot_is_playing_from_it():
    """Melding while holding the foot counts as playing from it, before any discard of that turn."""
    g = books_game(stop="p2_turn2", foot2="5 5 5 6 7 8 9 10 J Q K A 4")
    assert g.current == 2 and g.feet[2] is None and not g.played_foot[2]
    play(g, "draw", "meld:5:3:0:0")                 # onto team 0's meld of three 5s
    assert g.played_foot[2] and g.melds[0][kind_of("5")] == [6, 0, 0]


@pytest.mark.parametrize("preset", ["pagat", "bicycle"])
def test_may_go_out_needs_the_foot_and_an_opened_team(preset):
    """``Game.may_go_out`` (everything for going out but the books) is False for a player still holding
    the hand, opened or not, also where no teammate condition or question applies (bicycle)."""
    g = Game(preset)
    g.reset(seed=3)
    p = g.current
    team = g.team_of[p]
    assert not g.may_go_out(p)
    g.opened[team] = True
    assert not g.may_go_out(p)
    g.feet[p] = None                                   # in the foot now
    assert g.may_go_out(p) is (preset == "bicycle")    # pagat: the partner must play the foot and answer


def test_answering_is_not_a_turn_red_three_in_the_answerers_new_foot_waits():
    g = books_game(stop="p0_turn2", foot2="3R 4 5 6 7 8 9 10 J Q K A 4", partner_in_foot=False)
    assert g.hands[2][RED3] == 1 and g.feet[2] is None      # picked up at the end of player_2's turn
    play(g, "ask_go_out")
    assert g.current == 2 and legal_names(g) == ["answer_yes", "answer_no"]
    play(g, "answer_no", "meld:5:3:0:0", "meld:6:3:0:0", "discard:8")
    turn(g, "4")
    assert g.current == 2 and legal_names(g) == ["lay_red_three"]


def test_asking_passes_the_turn_to_the_partner_and_comes_back():
    g = books_game()
    play(g, "draw", "ask_go_out")
    assert g.current == 2 and legal_names(g) == ["answer_yes", "answer_no"]
    with pytest.raises(IllegalActionError):
        play(g, "discard:8")
    play(g, "answer_no")
    assert g.current == 0 and g.phase == MELD_PHASE
    assert not is_legal(g, "ask_go_out")                   # at most once per turn
    assert g.reason_illegal(action_index("ask_go_out")) == "the partner has already been asked this turn"


def test_answer_no_forbids_emptying_the_foot_this_turn():
    g = books_game()
    play(g, "draw", "ask_go_out", "answer_no")
    assert not is_legal(g, "meld:8:3:0:0")
    play(g, "discard:8")
    assert g.current == 1 and g.round_scores == []


def test_without_asking_the_player_may_not_go_out():
    g = books_game()
    play(g, "draw")
    assert not is_legal(g, "meld:8:3:0:0")


def test_going_out_by_melding_after_yes_ends_the_round_with_the_bonus():
    g = books_game()
    play(g, "draw", "ask_go_out", "answer_yes")
    assert is_legal(g, "meld:8:3:0:0")
    before = g.state_dict()
    after, went_out = apply_last_action(before, "meld:8:3:0:0")
    assert went_out == 0
    play(g, "meld:8:3:0:0")
    assert g.round_details[0]["went_out"] == 0 and g.round == 2
    assert g.round_scores[0] == expected_round_scores(after, went_out=0)
    assert g.round_details[0]["teams"][0]["went_out"] == 100 and g.round_details[0]["teams"][1]["went_out"] == 0


def test_going_out_by_discarding_after_yes():
    g = books_game(last_draw="5 5")
    play(g, "draw", "ask_go_out", "answer_yes", "meld:5:2:0:0")
    assert hand_codes(g, 0) == ["8"] and is_legal(g, "discard:8")
    before = g.state_dict()
    play(g, "discard:8")
    assert g.round_details[0]["went_out"] == 0
    after, went_out = apply_last_action(before, "discard:8")
    assert g.round_scores[0] == expected_round_scores(after, went_out=0)


@pytest.mark.parametrize("pile_take,legal", [(1, False), (7, True)])
def test_in_the_foot_taking_the_pile_must_leave_two_cards(pile_take, legal):
    # turn 3: player_0 keeps 8 8 in the foot; player_3 discards an 8
    g = books_game(last_draw="8 9  4 4  4 4  8 4", pile_take=pile_take)
    play(g, "draw", "discard:9")
    for code in ["4", "4", "8"]:
        turn(g, code)
    assert g.current == 0 and hand_codes(g, 0) == ["8", "8"] and g.feet[0] is None
    assert is_legal(g, "pickup") is legal
    if not legal:
        assert g.reason_illegal(action_index("pickup")) == (
            "in the foot, taking the pile must leave two cards in hand, unless the player may go out this turn with the"
            " cards held")
    else:
        play(g, "pickup")
        assert sum(g.hands[0]) == 6 and melds_of(g, 0)["8"] == (3, 0, 0)


def test_yes_does_not_oblige_the_player_to_go_out():
    g = books_game(last_draw="5 5")
    play(g, "draw", "ask_go_out", "answer_yes", "discard:5")
    assert g.current == 1 and g.round_scores == []


def test_going_out_needs_the_required_books():
    g = books_game(go_out_clean=3)
    play(g, "draw", "ask_go_out", "answer_yes")
    assert not is_legal(g, "meld:8:3:0:0")
    assert g.reason_illegal(action_index("meld:8:3:0:0")) == (
        "going out needs the team's required books when the last card leaves the foot, and the cards left could not "
        "make them")


@pytest.mark.parametrize("clean_needed,legal", [(3, True), (4, False)])
def test_going_out_counts_the_book_made_by_the_going_out_meld(clean_needed, legal):
    # turn 3: player_0 adds a 5 to the meld of three 5s and keeps a 5; turn 4: draws
    # two more 5s and melds three, which makes the team's third clean book
    g = books_game(last_draw="5 5  4 4  4 4  4 4  5 5", go_out_clean=clean_needed)
    play(g, "draw", "meld:5:1:0:0", "discard:8")
    for _ in range(3):
        turn(g, "4")
    play(g, "draw", "ask_go_out", "answer_yes")
    assert hand_codes(g, 0) == ["5", "5", "5"] and g.book_counts[0] == [2, 2, 1]
    assert is_legal(g, "meld:5:3:0:0") is legal
    if legal:
        play(g, "meld:5:3:0:0")
        assert g.round_details[0]["went_out"] == 0


# ---------------------------------------------------------------------------
# 5. Going-out books by round (go_out_clean / _dirty / _wild as one number per round)

#: clean books going out needs in rounds 1 to 4: one, three, one, three
CLEAN_BY_ROUND = [1, 3, 1, 3]


@pytest.mark.parametrize("round", [1, 2, 3, 4])
def test_two_clean_books_go_out_in_a_round_that_needs_one_not_in_one_that_needs_three(round):
    g = books_game(last_draw="5 5", round=round, go_out_clean=CLEAN_BY_ROUND)
    me, team = g.current, g.team_of[g.current]
    assert g.round == round and g.book_counts[team] == [2, 2, 1]
    need = CLEAN_BY_ROUND[round - 1]
    assert g.rules.going_out_books(round) == (need, 2, 1)
    assert observed(g, me)["go_out.clean_missing"] == max(need - 2, 0)     # what the seat is shown
    play(g, "draw", "ask_go_out", "answer_yes")
    may = need <= 2
    # melding two of the three 5s would leave the 8 to discard: legal only when going out is
    assert is_legal(g, "meld:5:2:0:0") is may
    if may:
        play(g, "meld:5:2:0:0", "discard:8")
        assert g.round_details[-1]["went_out"] == me and g.round == round + (round < 4)
    else:
        assert g.reason_illegal(action_index("meld:5:2:0:0")) == (
            "going out needs the team's required books when the last card leaves the foot, and the cards left "
            "could not make them")


def test_dirty_and_wild_books_by_round():
    """A round that needs three dirty books, or two wild books, keeps the team (2 dirty, 1 wild) in."""
    for field, needs in (("go_out_dirty", [2, 3, 2, 3]), ("go_out_wild", [1, 1, 2, 1])):
        for round in (1, 2, 3):
            g = books_game(last_draw="5 5", round=round, **{field: needs})
            play(g, "draw", "ask_go_out", "answer_yes")
            have = 2 if field == "go_out_dirty" else 1
            assert is_legal(g, "meld:5:2:0:0") is (needs[round - 1] <= have), (field, round)


def test_the_books_needed_change_with_the_round_as_the_game_goes_on():
    """Four rounds played one after the other (a small shoe, the last legal action each time): the
    observation at each round's start shows that round's requirement."""
    g = new_game(stacked=False, seed=3, decks=2, hand_size=11, foot_size=11, go_out_clean=[0, 2, 1, 3],
                 go_out_dirty=[1, 0, 2, 0], go_out_wild=[0, 1, 0, 1])
    seen = []
    while not g.game_over:
        o = observed(g, g.current)
        seen.append((g.round, o["go_out.clean_missing"], o["go_out.dirty_missing"], o["go_out.wild_missing"]))
        r = len(g.round_scores)
        while len(g.round_scores) == r and not g.game_over:
            g.step(g.legal_actions()[-1])
    assert seen == [(1, 0, 1, 0), (2, 2, 0, 1), (3, 1, 2, 0), (4, 3, 0, 1)]


def test_an_extra_round_asks_the_last_rounds_books():
    """Round 2 of two ends level (the deal of ``_tie_game``, led by player_1): the extra round 3 asks
    round 2's books."""
    rules = load_rules("pagat", decks=2, minimums=[50, 50], tie_break="extra_round", go_out_clean=[2, 1],
                       go_out_dirty=[0, 1], go_out_wild=0)
    g = two_deck_game(hands=from_leader(rules, 2, TWO_DECK_HANDS), feet=from_leader(rules, 2, TWO_DECK_FEET),
                      round=2, scores=[580, 0], minimums=[50, 50], tie_break="extra_round", go_out_clean=[2, 1],
                      go_out_dirty=[0, 1], go_out_wild=0)
    assert g.current == 1 and g.going_out == (1, 1, 0)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    assert g.scores == [90, 90] and not g.game_over and g.round == 3 and g.extra_round
    assert g.going_out == rules.going_out_books(3) == rules.going_out_books(2) == (1, 1, 0)
    o = observed(g, g.current)
    assert (o["go_out.clean_missing"], o["go_out.dirty_missing"], o["go_out.wild_missing"]) == (1, 1, 0)


# ---------------------------------------------------------------------------
# 6. End of round (stock-out) and scoring

def test_stock_out_ends_the_round_without_going_out_bonus_and_scores_the_table():
    g = two_deck_game()
    play(g, "lay_red_three", "draw", "lay_red_three")     # stock empty; second red three not replaced
    play(g, "meld:K:7:0:0", "meld:Q:4:1:0")                # clean book; Q Q Q Q 2 unfinished
    assert hand_codes(g, 0) == ["3B", "9"]
    before = g.state_dict()
    play(g, "discard:9")                                   # player_1 cannot draw nor take the 9
    assert len(g.round_scores) == 1 and g.round_details[0]["went_out"] is None
    # Team 0: K book 70 + Q meld 60 + clean book 500 + 2 red threes 200
    #   - 3B left 5 - unplayed foot of player_0 (8 A + JK + 4 Q = 250)
    #   - player_2's hand 80 and red three -100 - player_2's unplayed foot (7 twos, 3 jokers, 3 black threes = 305)
    # Team 1: - hands 90 + 90 - feet (7 nines, 5 jacks = 120, red three -100; 90)
    assert g.round_scores[0] == [90, -490]
    after, went_out = apply_last_action(before, "discard:9")
    assert expected_round_scores(after, went_out) == [90, -490]
    assert g.scores == [90, -490] and g.round == 2


def test_stock_out_with_a_takeable_pile_the_player_must_take_it():
    hands = list(TWO_DECK_HANDS)
    feet = list(TWO_DECK_FEET)
    hands[0] = "K K K K K K K Q Q Q 2 3R A"
    hands[1] = "A A 5 5 6 6 7 7 8 8 10 10 J"
    feet[0] = "A A A A A 9 4 4 JK Q Q Q Q"
    g = two_deck_game(hands=hands, feet=feet)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:A")
    assert g.current == 1 and legal_names(g) == ["pickup"]
    assert g.reason_illegal(action_index("draw")) == "the stock holds fewer than two cards"
    play(g, "pickup")
    assert g.opened[1] and g.round_scores == []
    play(g, "discard:J")
    # player_2 must first lay the red three (no replacement), then cannot draw or take the J
    assert g.current == 2 and legal_names(g) == ["lay_red_three"]
    play(g, "lay_red_three")
    assert len(g.round_scores) == 1 and g.round == 2


def test_pile_needs_opening_an_unopened_team_that_could_only_take_the_pile_ends_the_round():
    """The position above under ``pile_needs_opening``: player_1's team has not opened, so with fewer
    than two cards in the stock it can neither draw nor take the pile, and the round ends (a stock-out)."""
    hands, feet = list(TWO_DECK_HANDS), list(TWO_DECK_FEET)
    hands[0] = "K K K K K K K Q Q Q 2 3R A"
    hands[1] = "A A 5 5 6 6 7 7 8 8 10 10 J"
    feet[0] = "A A A A A 9 4 4 JK Q Q Q Q"
    g = two_deck_game(hands=hands, feet=feet, pile_needs_opening=True)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:A")
    assert len(g.round_scores) == 1 and g.round_details[0]["went_out"] is None and g.round == 2


def test_unplayed_foot_and_red_threes_left_count_against_the_team():
    g = two_deck_game(red_three_left=-500)
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    # two red threes left (player_2's hand, player_1's foot) at -500 instead of -100
    assert g.round_scores[0] == [90 - 400, -490 - 400]


# ---------------------------------------------------------------------------
# Rounds, dealer rotation, game end

def _play_out_round(g: Game, pick=lambda legal: legal[0]) -> None:
    r = len(g.round_scores)
    while len(g.round_scores) == r and not g.game_over:
        g.step(pick(g.legal_actions()))


def test_four_rounds_with_dealer_rotation_and_rising_minimums():
    g = Game("pagat", decks=2, hand_size=11, foot_size=11)    # a small stock: short rounds
    g.reset(seed=3)
    seen = []
    while not g.game_over:
        seen.append((g.round, g.dealer, g.current, g.minimum))
        _play_out_round(g, pick=lambda legal: legal[-1])
    assert seen == [(1, 3, 0, 50), (2, 0, 1, 90), (3, 1, 2, 120), (4, 2, 3, 150)]
    assert len(g.round_scores) == 4
    assert g.scores == [sum(rs[t] for rs in g.round_scores) for t in range(2)]


def test_game_ends_after_the_last_round_and_the_higher_total_wins():
    g = new_game(hands=TWO_DECK_HANDS, feet=TWO_DECK_FEET, up="J", stock="Q 3B 3R", pad=False, decks=2,
                 round=4, scores=[1000, 2000], minimums=[50, 50, 50, 50])
    assert g.dealer == 2 and g.current == 3
    # round 4 is led by player_3: lay nothing, draw, discard, and so on until the stock runs out
    _play_out_round(g)
    assert g.game_over and g.phase == GAME_OVER and g.legal_actions() == []
    totals = g.scores
    assert totals == [1000 + g.round_scores[0][0], 2000 + g.round_scores[0][1]]
    assert g.winner == (0 if totals[0] > totals[1] else 1)
    with pytest.raises(IllegalActionError, match="game is over"):
        g.step(0)


def _tie_game(tie_break):
    # a one-round game (minimums has one entry); the round scores 90 / -490 (see above)
    return two_deck_game(minimums=[50], scores=[0, 580], tie_break=tie_break)


def _play_stock_out(g):
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")


def test_tie_break_draw_ends_the_game_without_a_winner():
    g = _tie_game("draw")
    _play_stock_out(g)
    assert g.scores == [90, 90] and g.game_over and g.winner is None


def test_tie_break_extra_round_plays_one_more_round_at_the_last_minimum():
    g = _tie_game("extra_round")
    _play_stock_out(g)
    assert g.scores == [90, 90] and not g.game_over
    assert g.round == 2 and g.minimum == 50 and g.dealer == 0 and g.current == 1
    _play_out_round(g)
    assert g.game_over and len(g.round_scores) == 2
    assert g.winner == (None if g.scores[0] == g.scores[1] else int(g.scores[1] > g.scores[0]))


# ---------------------------------------------------------------------------
# Other player counts

def test_six_player_ask_goes_to_the_next_teammate():
    hands = ["K K K K K Q Q Q Q Q J J J", None, "A A A A A 9 9 9 9 9 10 10 10"]
    g = new_game("six_player", hands=hands, partner_in_foot=False, stock="J 9  4 4  10 8  4 4  4 4  4 4  4 4 4 4")
    play(g, "draw", "meld:K:5:0:0", "meld:Q:5:0:0", "meld:J:4:0:0", "discard:9")   # player_0 in the foot
    turn(g, "4")
    play(g, "draw", "meld:A:5:0:0", "meld:9:5:0:0", "meld:10:4:0:0", "discard:8")   # player_2 in the foot
    for _ in range(3):
        turn(g, "4")
    assert g.current == 0
    play(g, "draw", "ask_go_out")
    assert g.current == 2                      # the next teammate in turn order
    play(g, "answer_no")
    assert g.current == 0


def test_individual_play_goes_out_without_asking():
    # three players, each a team of one; books needed lowered to two clean ones
    g = new_game("individual", hands=["K K K K K K K Q Q Q Q Q Q"], feet=["5 5 5 6 6 6 7 7 7 8 8 8 9"],
                 up="9", stock="Q A  4 9  4 9  9 9", go_out_dirty=0, go_out_wild=0)
    play(g, "draw", "meld:K:7:0:0", "meld:Q:7:0:0", "discard:A")
    turn(g, "4")
    turn(g, "4")
    play(g, "draw")
    assert not is_legal(g, "ask_go_out") and g.reason_illegal(action_index("ask_go_out")) == (
        "these rules have no asking (ask_partner is off or there is no partner)")
    play(g, "meld:5:3:0:0", "meld:6:3:0:0", "meld:7:3:0:0", "meld:8:3:0:0")
    assert hand_codes(g, 0) == ["9", "9", "9"] and is_legal(g, "meld:9:3:0:0")
    play(g, "meld:9:3:0:0")
    assert g.round_details[0]["went_out"] == 0 and g.round_details[0]["teams"][0]["went_out"] == 100


# ---------------------------------------------------------------------------
# Errors

def test_illegal_action_raises_an_error_naming_the_action_and_the_reason():
    g = new_game()
    with pytest.raises(IllegalActionError) as e:
        play(g, "discard:K")
    assert "discard:K" in str(e.value) and "draw" in str(e.value)
    assert e.value.reason and e.value.action == action_index("discard:K")
    with pytest.raises(IllegalActionError, match="answer_yes.*nobody has asked"):
        play(g, "answer_yes")
    with pytest.raises(IllegalActionError):
        g.step(10_000)


def test_shoe_the_decks_cannot_supply_raises_value_error_naming_the_card():
    g = Game("pagat")
    with pytest.raises(ValueError, match="'JK'"):
        g.reset(seed=1, shoe=["JK"] * 11)
    with pytest.raises(ValueError, match="'3X'"):
        g.reset(seed=1, shoe=["K", "3X"])
    g.reset(seed=1, shoe=["JK"] * 10)           # exactly what five decks hold
    assert g.hands[0][kind_of("JK")] == 10


# ---------------------------------------------------------------------------
# 4.6 / 5. Going out from the foot: a pickup or meld that leaves fewer than two
# cards is legal when the player may go out this turn with the cards held, and
# the books are counted when the last card leaves the foot.

def _bicycle_foot_game(foot, p3_discard="J", **overrides):
    """bicycle: player_0 opens with a clean book of kings and a meld of six queens (one a two),
    melds the hand empty, books the queens (dirty) from the foot, melds ``foot``'s melds and
    discards the 9; the other players draw 4 4 and discard, player_3 discarding ``p3_discard``.
    ``foot`` holds a Q, then the melds, then what player_0 keeps, then the 9."""
    g = new_game("bicycle", hands=["K K K K K K K Q Q Q Q"], feet=[foot],
                 stock="Q 2  4 4  4 4  4 4", **overrides)
    play(g, "draw", "meld:K:7:0:0", "meld:Q:5:1:0")
    assert g.feet[0] is None
    play(g, "meld:Q:1:0:0")
    return g


def _to_player_0(g, p3_discard):
    turn(g, "4")
    turn(g, "4")
    turn(g, p3_discard)
    assert g.current == 0


@pytest.mark.parametrize("clean_needed,legal", [(2, True), (3, False)])
def test_in_the_foot_a_pickup_that_empties_the_hand_goes_out_when_the_books_are_there(clean_needed, legal):
    g = _bicycle_foot_game("Q 5 5 5 5 5 5 5 J J 9", pile_take=1, go_out_clean=clean_needed)
    play(g, "meld:5:7:0:0", "discard:9")
    assert hand_codes(g, 0) == ["J", "J"] and g.book_counts[0] == [2, 1, 0]
    _to_player_0(g, "J")
    # taking only the top J melds all three jacks: nothing stays in the foot
    assert is_legal(g, "pickup") is legal
    if legal:
        before = g.state_dict()
        play(g, "pickup")
        assert g.round_details[0]["went_out"] == 0 and g.round == 2
        assert g.round_details[0]["teams"][0]["went_out"] == 100
        assert before["books"][0] == {"clean": 2, "dirty": 1, "wild": 0}
    else:
        assert g.reason_illegal(action_index("pickup")) == (
            "in the foot, taking the pile must leave two cards in hand, unless the player may go out this turn with the"
            " cards held")


@pytest.mark.parametrize("clean_needed,legal", [(1, True), (2, True), (3, False)])
def test_in_the_foot_a_pickup_that_leaves_one_card_is_legal_when_that_card_can_go_out(clean_needed, legal):
    # the team holds one clean book (kings) and six 5s; player_0 keeps 5 J J
    g = _bicycle_foot_game("Q 5 5 5 5 5 5 5 J J 9", pile_take=1, go_out_clean=clean_needed)
    play(g, "meld:5:6:0:0", "discard:9")
    assert hand_codes(g, 0) == ["5", "J", "J"]
    _to_player_0(g, "J")
    assert is_legal(g, "pickup") is legal
    if not legal:
        return
    play(g, "pickup")
    assert hand_codes(g, 0) == ["5"]
    # one clean book: the 5 may be discarded; two: it must book the 5s first
    assert is_legal(g, "discard:5") is (clean_needed == 1)
    assert is_legal(g, "meld:5:1:0:0")
    play(g, "meld:5:1:0:0")
    assert g.round_details[0]["went_out"] == 0


def test_in_the_foot_a_pickup_whose_overflow_empties_the_hand_goes_out():
    # the team's meld of six 5s takes one 5 of the pickup (a book); the other two start a
    # new meld that player_0's last 5 completes, going out
    g = _bicycle_foot_game("Q 5 5 5 5 5 5 5 5 5 9", p3_discard="5", pile_take=1)
    play(g, "meld:5:6:0:0", "discard:9")
    assert hand_codes(g, 0) == ["5", "5", "5"]
    _to_player_0(g, "5")
    assert is_legal(g, "pickup")
    play(g, "pickup")
    assert melds_of(g, 0)["5"] == (2, 0, 0) and hand_codes(g, 0) == ["5"]
    assert legal_names(g) == ["meld:5:1:0:0"]
    play(g, "meld:5:1:0:0")
    assert g.round_details[0]["went_out"] == 0


def test_in_the_foot_a_pickup_leaving_fewer_than_two_cards_needs_no_answer_to_wait_for():
    # with asking, the partner's answer comes after the pickup and may be no: the pickup
    # must leave two cards
    g = _bicycle_foot_game("Q 5 5 5 5 5 5 5 J J 9", pile_take=1, ask_partner=True)
    play(g, "meld:5:7:0:0", "discard:9")
    _to_player_0(g, "J")
    assert not is_legal(g, "pickup")
    assert g.reason_illegal(action_index("pickup")) == (
        "in the foot, taking the pile must leave two cards in hand, unless the player may go out this turn with the "
        "cards held")


def _individual_two_last_books(clean_needed):
    """individual: player_0 ends turn 1 in the foot with melds of six 5s and six 6s and holds 5 6."""
    g = new_game("individual", hands=["K K K K K K K Q Q Q Q 5 5"], feet=["9 9 9 5 5 5 6 6 6 6 6 6 6"],
                 stock="5 5", go_out_clean=clean_needed, go_out_dirty=0, go_out_wild=0)
    play(g, "draw", "meld:K:7:0:0", "meld:Q:4:0:0", "meld:5:4:0:0")
    assert g.feet[0] is None
    play(g, "meld:9:3:0:0", "meld:5:2:0:0", "meld:6:6:0:0")
    assert hand_codes(g, 0) == ["5", "6"] and g.book_counts[0] == [1, 0, 0]
    return g


@pytest.mark.parametrize("clean_needed,legal", [(3, True), (4, False)])
def test_going_out_counts_the_books_when_the_last_card_leaves_the_foot(clean_needed, legal):
    g = _individual_two_last_books(clean_needed)
    # booking the 5s leaves one card and two clean books; booking the 6s with it makes three
    assert is_legal(g, "meld:5:1:0:0") is legal
    assert is_legal(g, "meld:6:1:0:0") is legal
    if not legal:
        assert g.reason_illegal(action_index("meld:5:1:0:0")) == (
            "going out needs the team's required books when the last card leaves the foot, and the cards left could not"
            " make them")
        return
    play(g, "meld:5:1:0:0")
    assert g.book_counts[0] == [2, 0, 0] and hand_codes(g, 0) == ["6"]
    assert legal_names(g) == ["meld:6:1:0:0"]          # discarding the 6 would go out one book short
    assert g.reason_illegal(action_index("discard:6")) == "going out needs the team's required books"
    play(g, "meld:6:1:0:0")
    assert g.round_details[0]["went_out"] == 0 and g.round_details[0]["teams"][0]["went_out"] == 100
