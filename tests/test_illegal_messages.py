"""Every reason the engine gives for an illegal action, word for word; and the engine's small public
helpers (named actions, hand size, the proven action bounds)."""
from __future__ import annotations

import numpy as np
import pytest

from handfoot_env.actions import NUM_ACTIONS, action_index
from handfoot_env.engine import MELD_PHASE, Game, IllegalActionError

from .helpers import both_cores  # noqa: F401 - every test on both cores
from .helpers import books_game, counts, new_game, play, position, two_deck_game

# The messages that tests/test_scenarios.py does not compare in full.  (A meld that empties the
# hand with a pickup's overflow still unfinished is refused as "... could no longer be completed":
# no card is left to finish it, and the going-out search finds no legal end with it on the table.)


def _start():
    """player_0 to draw, a hand of filler (two of each rank 4-A but one A, no threes or wilds)."""
    return new_game(stock="9 9")


def _drawn(hand=None, stock="9 9", **overrides):
    """player_0 has drawn (9 9 unless told) and is in the meld phase."""
    return play(new_game(hands=[hand], stock=stock, **overrides), "draw")


def _kings_up_after_drawing():
    return play(new_game(hands=["K K A A A"], up="K", stock="9 9"), "draw")


def _empty_pile():
    # a scripted deal always turns an up-card; the state is set directly
    g = _start()
    g.discard = []
    return g


def _unopened_pickup_round_4():
    """Round 4 (minimum 150), player_3 leads holding K K under a K up-card and only 5-point cards:
    3 K (30) plus the best eleven cards left (55) stay below 150 without a search."""
    return new_game(hands=[None, None, None, "K K 4 4 4 5 5 5 6 6 6 7 7"], up="K", stock="9 9", round=4)


def _opened_by_kings():
    return play(_drawn("K K K K K"), "meld:K:5:0:0")          # 5 K = 50: the team opens


def _in_foot_unopened():
    # with full-sized hands a scripted deal cannot bring an unopened team's player into the foot
    # (that takes red threes laid with an empty stock); the state is set directly
    g = _start()
    g.feet[0] = None
    return play(g, "draw")


def _pickup_overflow_and_a_wild_elsewhere():
    """Team 0 holds five K; player_2 takes the pile (9 Q K) with K K: the K meld books and one K
    is left over, which the last K and the 2 could complete; meld:9:2:1:0 would use the 2."""
    g = new_game(hands=["K K K K K A A A 9", "4 5 6 7 8 9 10 J Q 4 5 6 7", "K K K 2 9 4 5 6 7 8 10 J 3B"],
                 up="9", stock="Q J K 4 4 4")
    play(g, "draw", "meld:A:3:0:0", "meld:K:5:0:0", "discard:Q", "draw", "discard:K", "pickup")
    assert g.incomplete >= 0 and g.hands[2] == counts("K 2 9 9 Q 4 5 6 7 8 10 J 3B")
    return g


def _game_over():
    """A one-round game whose round ends by a stock-out in a tie: the game is over."""
    g = two_deck_game(minimums=[50], scores=[0, 580], tie_break="draw")
    play(g, "lay_red_three", "draw", "lay_red_three", "meld:K:7:0:0", "meld:Q:4:1:0", "discard:9")
    assert g.game_over
    return g


def _asked():
    return play(books_game(), "draw", "ask_go_out")           # player_2 must answer


ROWS = [
    # _pickup_reason
    pytest.param(_kings_up_after_drawing, "pickup",
                 "the pile can only be taken instead of drawing, at the start of a turn", id="pickup-after-drawing"),
    pytest.param(_empty_pile, "pickup", "the discard pile is empty", id="pickup-empty-pile"),
    pytest.param(_unopened_pickup_round_4, "pickup",
                 "the team has not opened and the pickup meld plus melds from hand cannot reach the minimum of 150",
                 id="pickup-opening-bound"),
    # _cancel_reason
    pytest.param(_start, "cancel_melds", "melds can only be cancelled during the meld phase",
                 id="cancel-before-drawing"),
    pytest.param(_opened_by_kings, "cancel_melds", "the team has opened; its melds are no longer provisional",
                 id="cancel-opened"),
    pytest.param(_drawn, "cancel_melds", "there are no provisional melds from the hand to take back",
                 id="cancel-nothing"),
    # _ask_reason
    pytest.param(_start, "ask_go_out", "asking to go out is only possible in the meld phase", id="ask-before-drawing"),
    pytest.param(_drawn, "ask_go_out", "only a player playing from the foot may ask to go out", id="ask-from-hand"),
    pytest.param(_in_foot_unopened, "ask_go_out", "the team has not made its first meld this round",
                 id="ask-unopened"),
    # _meld_post_reason
    pytest.param(_pickup_overflow_and_a_wild_elsewhere, "meld:9:2:1:0",
                 "the unfinished meld from the pickup could no longer be completed", id="meld-overflow-stranded"),
    pytest.param(lambda: _drawn("4", hand_size=1, stock="4 4"), "meld:4:3:0:0",
                 "melds that empty the hand must reach the minimum of 50", id="meld-empties-hand-unopened"),
    # meld_reason
    pytest.param(_start, "meld:K:3:0:0", "melding is only possible after drawing, in the meld phase",
                 id="meld-before-drawing"),
    pytest.param(lambda: _drawn("K K 4 5 6 7 8 9 10 J Q 4 5"), "meld:K:3:0:0", "not enough of those cards in hand",
                 id="meld-too-few-cards"),
    pytest.param(lambda: _drawn("K K 4 5 6 7 8 9 10 J Q 4 5"), "meld:K:2:0:0", "a meld needs at least three cards",
                 id="meld-under-three"),
    # reason_illegal
    pytest.param(_start, NUM_ACTIONS, "not an action id (0..704)", id="not-an-action-id"),
    pytest.param(_game_over, "draw", "the game is over", id="game-over"),
    pytest.param(_asked, "draw", "a teammate asked to go out; the only actions are answer_yes and answer_no",
                 id="answer-phase"),
    pytest.param(_start, "answer_yes", "nobody has asked to go out", id="answer-unasked"),
    pytest.param(_start, "lay_red_three", "there is no red three in hand", id="no-red-three"),
    pytest.param(lambda: new_game(hands=["3R"]), "draw", "a red three in hand must be laid first (lay_red_three)",
                 id="red-three-first"),
    pytest.param(_drawn, "draw", "the player has already drawn this turn", id="draw-twice"),
    pytest.param(_start, "discard:4", "the player must draw or take the pile before discarding",
                 id="discard-before-drawing"),
    pytest.param(lambda: _drawn("4 5 6 7 8 9 10 J Q A 4 5 6"), "discard:K", "there is no K in hand",
                 id="discard-missing-card"),
]


@pytest.mark.parametrize("position,action,message", ROWS)
def test_reason_illegal_and_step_give_the_message(position, action, message):
    g = position()
    a = action_index(action) if isinstance(action, str) else action
    assert g.reason_illegal(a) == message
    with pytest.raises(IllegalActionError) as e:
        g.step(a)
    assert e.value.reason == message
    name = action if isinstance(action, str) else repr(a)   # the action's name, or the id's repr
    assert str(e.value) == f"illegal action {name!r}: {message}"


def test_meld_reason_names_the_red_three_first():
    """``meld_reason`` checks the red three itself; ``reason_illegal`` names it before reaching there."""
    g = _drawn(stock="3R K")                                   # a red three drawn: laying it comes first
    assert g.meld_reason(action_index("meld:K:3:0:0")) == "a red three in hand must be laid first"
    assert g.reason_illegal(action_index("meld:K:3:0:0")) == "a red three in hand must be laid first (lay_red_three)"


@pytest.mark.parametrize("bad", [True, False, "0", 0.0])
def test_step_takes_integers_only(bad):
    """A bool, a string or a float is not an action id, even when it would convert to one."""
    g = Game("pagat")
    g.reset(seed=0)
    with pytest.raises(IllegalActionError) as e:
        g.step(bad)
    assert e.value.reason == "not an action id (0..704)" and g.history == []


def test_step_records_numpy_integers_as_ints():
    """An action given as a NumPy integer is played and recorded as a plain int (records are JSON)."""
    g = Game("pagat")
    g.reset(seed=0)
    a = g.legal_actions()[0]
    g.step(np.int64(a))
    assert g.history[-1] == (g.history[-1][0], a) and type(g.history[-1][1]) is int


# --------------------------------------------------------------- the engine's small public helpers
def test_step_name_plays_the_named_action():
    g = new_game(stock="9 9")
    p = g.current
    g.step_name("draw")
    assert g.history == [(p, action_index("draw"))] and g.phase == MELD_PHASE and g.hand_size(p) == 15
    with pytest.raises(KeyError):
        g.step_name("fly")


def test_hand_size_and_in_foot_follow_the_cards_held():
    g = Game("pagat")
    g.reset(seed=0)
    p = g.current
    assert g.hand_size(p) == 13 and not g.in_foot(p)
    g.hands[p], g.feet[p] = counts("K K 5"), None
    assert g.hand_size(p) == 3 and g.in_foot(p)


def test_the_proven_action_bounds_by_hand():
    """docs/rules.md's bound: turns <= stock / 2 + cards / 3 + 1, actions <= 5 x turns + 3 x cards per
    round; a game is its rounds, one more with the extra-round tie-break."""
    from handfoot_env.config import load_rules
    from handfoot_env.engine import max_actions_per_game, max_actions_per_round
    pagat = load_rules("pagat")                     # 270 cards, 4 x (13 + 13) dealt, one up: stock 165
    assert max_actions_per_round(pagat) == 5 * (165 // 2 + 270 // 3 + 1) + 3 * 270 == 1675
    assert max_actions_per_game(pagat) == 4 * 1675
    assert type(max_actions_per_round(pagat)) is int and type(max_actions_per_game(pagat)) is int
    bicycle = load_rules("bicycle")                 # 324 cards, 4 x (11 + 11), extra round on a tie
    assert max_actions_per_round(bicycle) == 5 * (235 // 2 + 324 // 3 + 1) + 3 * 324 == 2102
    assert max_actions_per_game(bicycle) == 5 * 2102
    odd = load_rules("individual", foot_size=12)      # 216 cards, 3 x (13 + 12): an even stock, 140
    assert max_actions_per_round(odd) == 5 * (140 // 2 + 216 // 3 + 1) + 3 * 216 == 1363


def test_state_dict_holds_the_turn_the_seed_and_the_provisional_melds():
    """Beyond docs/interface.md's minimum, the snapshot names the seed, the player whose turn it is
    (also while a partner answers), who has played from the foot, the provisional melds' cards, the
    ask and its answer, who went out and the actions played."""
    g = new_game(hands=["5 5 5 6 6 6 K K K 9 10 J Q"], stock="4 4", seed=7)
    play(g, "draw", "meld:5:3:0:0")                   # 15: under the minimum, provisional
    sd = g.state_dict()
    assert sd["seed"] == 7 and sd["turn_player"] == 0 and sd["current_player"] == 0
    assert sd["provisional"] == ["5", "5", "5"] and sd["played_from_foot"] == [False] * 4
    assert sd["asked"] is False and sd["permission"] is None and sd["went_out"] is None
    assert sd["actions"] == 2 and sd["game_over"] is False
    g = books_game()
    play(g, "draw", "ask_go_out", "answer_yes")
    sd = g.state_dict()
    assert sd["asked"] is True and sd["permission"] is True and sd["turn_player"] == 0


def test_a_clone_plays_on_without_touching_the_original():
    """A clone ends a round (a last red three laid from an empty stock, one card left that cannot be
    played) while the original stays at the start of that turn (the state is set directly)."""
    g = position(1, "9", opened=True, stock="3R 3R")
    play(g, "draw")
    c = g.clone()
    play(c, "lay_red_three", "lay_red_three")
    assert c.round == 2 and len(c.round_details) == 1 and len(c.round_scores) == 1
    assert g.round == 1 and g.round_details == [] and g.round_scores == [] and g.history[-1][1] == 0


@pytest.mark.parametrize("scores, message", [
    ("12", "scores must be a list of 2 integers (one per team), got str"),
    (5, "scores must be a list of 2 integers (one per team), got int"),
    ([True, 0], "scores must be 2 integers (one per team), got [True, 0]"),
    ([1.5, 0], "scores must be 2 integers (one per team), got [1.5, 0]"),
    ([0, 0, 0], "scores must be 2 integers (one per team), got [0, 0, 0]"),
])
def test_reset_names_a_bad_scores_argument(scores, message):
    g = Game("pagat")
    with pytest.raises(ValueError) as e:
        g.reset(seed=0, scores=scores)
    assert str(e.value) == message


@pytest.mark.parametrize("shoe, message", [
    ("K K", "shoe must be a list of card codes such as ['K', '3R', 'JK'], got str"),
    (5, "shoe must be a list of card codes such as ['K', '3R', 'JK'], got int"),
    (["K"] * 300, "shoe lists 300 cards, but the 5 decks hold 270"),
    (["K", 3], "shoe card at position 1 must be a card code string, got int"),
])
def test_reset_names_a_bad_shoe_argument(shoe, message):
    g = Game("pagat")
    with pytest.raises(ValueError) as e:
        g.reset(seed=0, shoe=shoe)
    assert str(e.value) == message


def test_reset_without_a_seed_draws_one_and_records_it(monkeypatch):
    """``reset()`` with no seed draws one below 2**31 from the system's generator and keeps it, so the
    game can be dealt again from it (the generator made to answer its largest value)."""
    import random

    class Largest(random.Random):
        def randrange(self, stop):
            return stop - 1

    monkeypatch.setattr(random, "SystemRandom", Largest)
    g = Game("pagat")
    g.reset()
    assert g.seed == 2 ** 31 - 1
    h = Game("pagat")
    h.reset(seed=g.seed)
    assert h.hands == g.hands and h.stock == g.stock
