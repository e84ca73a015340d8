"""Scoring a round (docs/rules.md section 6): one breakdown for the engine, records and score sheets.

A team's round score is the sum of the items of :data:`BREAKDOWN_KEYS`::

    melded           card values of everything the team melded, books included
    clean_books      clean_book x clean books     dirty_books   dirty_book x dirty books
    wild_books       wild_book x wild books       red_threes    red_three_bonus x red threes laid
    went_out         go_out_bonus if the team went out
    left             minus the card values left in its hands and unplayed feet (red threes apart)
    red_threes_left  red_three_left x red threes left in hands and feet (a negative field)

:func:`round_breakdown` computes them from counts under any
:class:`~handfoot_env.config.RuleConfig`; :func:`team_round_score` reads the
counts off a :class:`~handfoot_env.engine.Game` and :func:`table_score` gives the
public part of it (what is on the table).  The engine keeps one breakdown per
team and round in ``Game.round_details``; ``handfoot play`` and game records show
it, and the score-sheet tool (``handfoot score``) scores written rounds with the
same function.
"""
from __future__ import annotations

from typing import Any, Dict

from .cards import NUM_KINDS, RED3, VALUES
from .config import RuleConfig
from .melds import CLEAN, DIRTY, WILD, meld_points

#: keys of a round breakdown (signed points), in display order; ``total`` is their sum
BREAKDOWN_KEYS = ("melded", "clean_books", "dirty_books", "wild_books", "red_threes", "went_out",
                  "left", "red_threes_left")
#: how a score sheet names each item
BREAKDOWN_LABELS = {"melded": "melded cards", "clean_books": "clean books", "dirty_books": "dirty books",
                    "wild_books": "wild books", "red_threes": "red threes laid", "went_out": "going out",
                    "left": "cards left", "red_threes_left": "red threes left"}


def round_breakdown(rules: RuleConfig, *, melded: int, clean: int, dirty: int, wild: int, red_threes: int,
                    went_out: bool, left: int, red_threes_left: int) -> Dict[str, int]:
    """One team's round items in signed points (keys :data:`BREAKDOWN_KEYS`) plus their ``total``.

    ``melded`` and ``left`` are card values (``left`` as a positive count of
    points), the rest counts; ``went_out`` whether the team went out.
    """
    out = {
        "melded": melded,
        "clean_books": clean * rules.clean_book,
        "dirty_books": dirty * rules.dirty_book,
        "wild_books": wild * rules.wild_book,
        "red_threes": red_threes * rules.red_three_bonus,
        "went_out": rules.go_out_bonus if went_out else 0,
        "left": -left,
        "red_threes_left": red_threes_left * rules.red_three_left,
    }
    out["total"] = sum(out.values())
    return out


def round_score_bound(rules: RuleConfig) -> int:
    """A bound on what a team can score or lose in one round under ``rules``, every item of
    :func:`round_breakdown` at its extreme: 50 points a card in play, a book per 7 cards at the largest
    book bonus, every red three at the larger red-three value, and the going-out bonus."""
    cards = rules.decks * 54
    book = max(abs(rules.clean_book), abs(rules.dirty_book), abs(rules.wild_book))
    return (50 * cards + (cards // 7 + 1) * book
            + 2 * rules.decks * max(abs(rules.red_three_bonus), abs(rules.red_three_left)) + abs(rules.go_out_bonus))


def melded_points(game: Any, team: int) -> int:
    """Card values of everything ``team`` has melded this round, books included."""
    pts = 0
    for s, n, t, j in game.books[team]:
        pts += meld_points(s, n, t, j)
    for s, (n, t, j) in enumerate(game.melds[team]):
        pts += meld_points(s, n, t, j)
    return pts


def table_score(game: Any, team: int) -> int:
    """The public part of ``team``'s round score so far: melded card values, book bonuses, red threes laid.
    ``game`` is a :class:`~handfoot_env.engine.Game` or a seat's :class:`~handfoot_env.view.SeatView`
    (what is on the table is public, so every seat computes the same)."""
    r = game.rules
    c = game.book_counts[team]
    red = game.red_threes[team] if hasattr(game, "red_threes") else game.red3[team]
    return (melded_points(game, team) + c[CLEAN] * r.clean_book + c[DIRTY] * r.dirty_book + c[WILD] * r.wild_book
            + red * r.red_three_bonus)


def team_round_score(game: Any, team: int) -> Dict[str, int]:
    """``team``'s round breakdown (:func:`round_breakdown`) for the round as it stands in ``game``."""
    left = red_left = 0
    for q in range(game.n):
        if game.team_of[q] != team:
            continue
        for cards in (game.hands[q], game.feet[q]):
            if cards is None:
                continue
            for k in range(NUM_KINDS):
                if k == RED3:
                    red_left += cards[k]
                else:
                    left += cards[k] * VALUES[k]
    bc = game.book_counts[team]
    went_out = game.went_out is not None and game.team_of[game.went_out] == team
    return round_breakdown(game.rules, melded=melded_points(game, team), clean=bc[CLEAN], dirty=bc[DIRTY],
                           wild=bc[WILD], red_threes=game.red3[team], went_out=went_out, left=left,
                           red_threes_left=red_left)


__all__ = ["BREAKDOWN_KEYS", "BREAKDOWN_LABELS", "round_breakdown", "round_score_bound", "melded_points", "table_score",
           "team_round_score"]
