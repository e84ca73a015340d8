"""Going out by a meld that completes the last book the team needs, in positions set directly on the
reference engine (a scripted deal would take dozens of turns to build them): the books a going-out
meld completes count (docs/rules.md 8), whatever mix of twos and jokers the book holds."""
from __future__ import annotations

import pytest

from handfoot_env.actions import action_index
from handfoot_env.cards import kind_of
from handfoot_env.engine import DRAW_PHASE, MELD_PHASE

from .helpers import counts, position


def _last_meld_position(meld, hand, books=(2, 1, 1), slot="8", **overrides):
    """Player to act in the foot of pagat, in the meld phase, permitted to go out, partner's foot
    played; the team holds 2 clean, 1 dirty and 1 wild book (one dirty book short) and a meld of
    eights ``meld`` (naturals, twos, jokers); the hand is ``hand``.  ``books`` and ``slot`` change the
    books held and the meld's slot, ``overrides`` the rule fields."""
    g = position(4, hand, opened=True, melds={slot: meld}, books=books, **overrides)
    partner = g.teammates[g.current][0]
    g.feet[partner], g.played_foot[partner] = None, True
    g.phase, g.asked, g.permission = MELD_PHASE, True, True
    return g



def _pile_position(meld, hand, books=(2, 1, 1), slot="8", pile="K", **overrides):
    """:func:`_last_meld_position` at the start of the turn (draw or take the pile), the pile ``pile``
    (bottom first)."""
    g = _last_meld_position(meld, hand, books=books, slot=slot, **overrides)
    g.phase = DRAW_PHASE
    g.discard = [kind_of(c) for c in pile.split()]
    return g


_KEEP_TWO = ("in the foot, taking the pile must leave two cards in hand, unless the player may go out "
             "this turn with the cards held")

@pytest.mark.parametrize("meld, hand, action", [
    ((4, 0, 1), "8 2", "meld:8:1:1:0"),       # 4 eights and a joker, then an eight and a two: 5 + 1 + 1
    ((4, 0, 1), "8 JK", "meld:8:1:0:1"),      # then an eight and a joker: 5 + 0 + 2
    ((4, 1, 0), "8 JK", "meld:8:1:0:1"),      # 4 eights and a two, then an eight and a joker: 5 + 1 + 1
])
def test_a_going_out_meld_that_completes_a_dirty_book_counts_it(meld, hand, action):
    g = _last_meld_position(meld, hand)
    p = g.current
    assert g.reason_illegal(action_index(action)) is None
    g.step(action_index(action))                       # the foot is empty: the round ends
    details = g.round_details[0]
    assert g.round == 2 and details["went_out"] == p
    assert details["teams"][g.team_of[p]]["dirty_books"] == 2 * g.rules.dirty_book


@pytest.mark.parametrize("meld, hand, action", [
    ((3, 0, 1), "8 2", "meld:8:1:1:0"),       # 3 + 1 + 1 and the eight and the two: six cards, no book
    ((4, 0, 1), "8 5", "meld:8:1:0:0"),       # five eights and a joker: six cards, then the 5 discarded
])
def test_a_going_out_meld_one_card_short_of_the_book_is_refused(meld, hand, action):
    """One card short of the book, the meld (and the discard after it) would empty the foot with
    only one dirty book: refused."""
    g = _last_meld_position(meld, hand)
    assert g.reason_illegal(action_index(action)) == (
        "going out needs the team's required books when the last card leaves the foot, "
        "and the cards left could not make them")


def test_a_going_out_meld_that_completes_the_wild_book_counts_it_as_wild():
    """One wild book short (2 clean, 2 dirty, 0 wild): a wild meld of five finished with a two and a
    joker is the wild book going out needs."""
    g = _last_meld_position((0, 3, 2), "2 JK", books=(2, 2, 0), slot="W")
    p = g.current
    assert g.reason_illegal(action_index("meld:W:0:1:1")) is None
    g.step(action_index("meld:W:0:1:1"))
    assert g.round_details[0]["went_out"] == p and g.round_details[0]["teams"][g.team_of[p]]["wild_books"] > 0


def test_a_pickup_that_empties_the_foot_goes_out_when_its_book_is_the_last_needed():
    """In the foot holding only K K, a lone king on the pile and team 0's meld of four kings: the
    pickup books the kings (a clean book, the last the team needs) and leaves the hand empty, so the
    player goes out by taking the pile; one clean book short it may not."""
    g = _pile_position((4, 0, 0), "K K", books=(1, 2, 1), slot="K")
    p = g.current
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    assert g.round_details[0]["went_out"] == p
    g = _pile_position((4, 0, 0), "K K", books=(0, 2, 1), slot="K")
    assert g.reason_illegal(action_index("pickup")) == _KEEP_TWO


@pytest.mark.parametrize("hand, pile, meld, slot, books", [
    ("K K", "5 K", (4, 0, 0), "K", (1, 2, 1)),     # the 5 taken with the king is discarded to go out
    ("2 2", "2", (0, 2, 2), "W", (2, 2, 0)),       # three twos finish the wild book: 2 + 3 twos, 2 jokers
    ("JK JK", "JK", (0, 2, 2), "W", (2, 2, 0)),    # three jokers finish it: 2 twos, 2 + 3 jokers
])
def test_a_pickup_in_the_foot_that_finishes_the_last_book_may_go_out(hand, pile, meld, slot, books):
    g = _pile_position(meld, hand, books=books, slot=slot, pile=pile)
    assert g.reason_illegal(action_index("pickup")) is None


@pytest.mark.parametrize("books, legal", [((1, 2, 1), True), ((0, 2, 1), False)])
def test_a_pickup_that_leaves_one_card_goes_out_by_discarding_it(books, legal):
    """In the foot holding K K 5, a lone king on the pile and a meld of four kings: the pickup books
    the kings and leaves the 5, which is discarded to go out when that book is the last one needed
    (the lone king taken is not in the hand after the pickup: with it, two cards could not go)."""
    g = _pile_position((4, 0, 0), "K K 5", books=books, slot="K")
    p = g.current
    if not legal:
        assert g.reason_illegal(action_index("pickup")) == _KEEP_TWO
        return
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    assert g.hands[p] == counts("5") and g.round == 1
    g.step(action_index("discard:5"))
    assert g.round_details[0]["went_out"] == p


def test_a_pickup_of_one_card_leaves_the_rest_of_the_pile_out_of_the_going_out_hand():
    """With ``pile_take: 1`` only the top king is taken from the pile 5 K: the hand after the pickup is
    the 5 held, and the player goes out by discarding it; the 5 under the king stays in the pile (were
    it counted in the hand, two unmeldable cards could not go)."""
    g = _pile_position((4, 0, 0), "K K 5", books=(1, 2, 1), slot="K", pile_take=1, pile="5 K")
    p = g.current
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    assert g.hands[p] == counts("5") and g.discard == [kind_of("5")]
    g.step(action_index("discard:5"))
    assert g.round_details[0]["went_out"] == p


@pytest.mark.parametrize("books, legal", [((2, 2, 1), True), ((1, 2, 1), False)])
def test_a_pickup_onto_a_meld_of_three_goes_out_without_a_book(books, legal):
    """In the foot holding only K K, a lone king on the pile and a meld of three kings: the pickup
    makes six kings, no book, and empties the hand; the player goes out by it when the team already
    holds the books required, and may not when one clean book is missing."""
    g = _pile_position((3, 0, 0), "K K", books=books, slot="K")
    p = g.current
    if not legal:
        assert g.reason_illegal(action_index("pickup")) == _KEEP_TWO
        return
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    details = g.round_details[0]
    assert details["went_out"] == p and details["teams"][g.team_of[p]]["clean_books"] == 2 * g.rules.clean_book


@pytest.mark.parametrize("meld", [(3, 0, 1), (3, 1, 0)])
def test_a_pickup_in_the_foot_that_books_a_dirty_meld_counts_it_dirty(meld):
    """One dirty book short (2 clean, 1 dirty, 1 wild), in the foot holding only K K, a lone king on
    the pile and a meld of four kings holding a joker or a two: the pickup makes it a dirty book, the
    last one needed, and the hand is empty: the player goes out by it."""
    g = _pile_position(meld, "K K", books=(2, 1, 1), slot="K")
    p = g.current
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    details = g.round_details[0]
    assert details["went_out"] == p
    assert details["teams"][g.team_of[p]]["dirty_books"] == 2 * g.rules.dirty_book


def test_a_pickup_in_the_foot_that_books_a_meld_with_a_two_and_a_joker_counts_it_dirty():
    """One dirty book short, in the foot holding K K K, a lone king on the pile and a meld of four kings,
    a two and a joker: the pickup's first king makes the dirty book, the last one needed, and leaves two
    kings over, which the third king from the hand finishes as the hand empties: the player goes out."""
    g = _pile_position((4, 1, 1), "K K K", books=(2, 1, 1), slot="K")
    p = g.current
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    assert g.book_counts[g.team_of[p]] == [2, 2, 1] and g.hands[p] == counts("K")
    g.step(action_index("meld:K:1:0:0"))
    details = g.round_details[0]
    assert details["went_out"] == p
    assert details["teams"][g.team_of[p]]["dirty_books"] == 2 * g.rules.dirty_book


def test_a_pickup_in_the_foot_that_leaves_a_meld_of_six_makes_no_book():
    """As above with a meld of two kings and a joker: the pickup makes six cards, no book, so the dirty
    book is still missing and the pile may not be taken with the last two cards of the foot."""
    g = _pile_position((2, 0, 1), "K K", books=(2, 1, 1), slot="K")
    assert g.reason_illegal(action_index("pickup")) == _KEEP_TWO


@pytest.mark.parametrize("wild_limit, legal", [("double", False), ("majority", True)])
def test_going_out_by_the_last_card_respects_the_wild_limit(wild_limit, legal):
    """One dirty book short, in the foot holding K K K 2 beside a meld of four queens and two twos:
    melding the kings leaves the two, whose only use towards the missing book is the queens' seventh
    card, three wilds to four naturals: over the ``double`` limit (naturals at least twice the wilds),
    within ``majority``."""
    g = _last_meld_position((4, 2, 0), "K K K 2", books=(2, 1, 1), slot="Q", wild_limit=wild_limit)
    reason = g.reason_illegal(action_index("meld:K:3:0:0"))
    if legal:
        assert reason is None
        g.step(action_index("meld:K:3:0:0"))
        assert g.hands[g.current] == counts("2")
    else:
        assert reason == ("going out needs the team's required books when the last card leaves the foot, "
                          "and the cards left could not make them")


def test_going_out_by_the_last_card_may_finish_the_wild_book():
    """One wild book short, in the foot holding K K 2, a lone king on the pile, a meld of three kings and
    a wild meld of four twos and two jokers: the pickup leaves the two, which finishes the wild book (the
    kings' six take it as a dirty book's seventh card only, not the wild one)."""
    g = _pile_position((3, 0, 0), "K K 2", books=(2, 2, 0), slot="K")
    g.melds[g.team_of[g.current]][11] = [0, 4, 2]
    p = g.current
    assert g.reason_illegal(action_index("pickup")) is None
    g.step(action_index("pickup"))
    assert g.hands[p] == counts("2")
    g.step(action_index("meld:W:0:1:0"))
    details = g.round_details[0]
    assert details["went_out"] == p and details["teams"][g.team_of[p]]["wild_books"] == g.rules.wild_book


@pytest.mark.parametrize("books, legal", [((2, 2, 1), True), ((2, 1, 1), False)])
def test_the_last_card_may_finish_a_pickup_overflow_to_go_out(books, legal):
    """Two kings left over from a pickup (an unfinished meld) and one king in the foot: melding it makes
    the kings a meld of three and empties the foot, going out when the team holds its books; one dirty
    book short it is refused for the books, the meld itself being legal."""
    g = _last_meld_position((2, 0, 0), "K", books=books, slot="K")
    g.incomplete = kind_of("K")
    p = g.current
    reason = g.reason_illegal(action_index("meld:K:1:0:0"))
    if not legal:
        assert reason == ("going out needs the team's required books when the last card leaves the foot, "
                          "and the cards left could not make them")
        return
    assert reason is None
    g.step(action_index("meld:K:1:0:0"))
    assert g.round_details[0]["went_out"] == p
