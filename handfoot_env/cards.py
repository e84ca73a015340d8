"""Card kinds, codes and values.

Suits do not matter in Hand and Foot except for the colour of threes, so the
engine works with 15 *kinds* (docs/rules.md section 1).  Every multiset of cards is a
count list of length ``NUM_KINDS`` indexed by kind.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence

CODES: tuple = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "JK", "3R", "3B")
NUM_KINDS = len(CODES)
NUM_RANKS = 11                      # natural ranks 4..A are kinds 0..10
TWO, JOKER, RED3, BLACK3 = 11, 12, 13, 14
WILD_SLOT = 11                      # meld slot of the wild meld ("W")
NUM_SLOTS = 12                      # 11 natural ranks + the wild meld
SLOT_CODES: tuple = CODES[:NUM_RANKS] + ("W",)
KIND_INDEX = {c: i for i, c in enumerate(CODES)}

#: card value of each kind (docs/rules.md section 1); a red three left in hand is
#: scored through the rule field ``red_three_left`` instead of its value.
VALUES: tuple = (5, 5, 5, 5, 10, 10, 10, 10, 10, 10, 20, 20, 50, 0, 5)

#: copies of each kind in a single 54-card deck
PER_DECK: tuple = (4,) * NUM_RANKS + (4, 2, 2, 2)


def kind_of(code: str) -> int:
    """Kind index of a card code; ``ValueError`` naming the code if unknown."""
    try:
        return KIND_INDEX[str(code).upper() if str(code).upper() in KIND_INDEX else str(code)]
    except KeyError:
        raise ValueError(f"unknown card code {code!r}; expected one of {' '.join(CODES)}") from None


def deck_counts(decks: int) -> List[int]:
    return [c * decks for c in PER_DECK]


def counts_of(codes: Iterable[str]) -> List[int]:
    out = [0] * NUM_KINDS
    for c in codes:
        out[kind_of(c)] += 1
    return out


def codes_of(counts: Sequence[int]) -> List[str]:
    out: List[str] = []
    for k, n in enumerate(counts):
        out.extend([CODES[k]] * n)
    return out


def value_of(counts: Sequence[int]) -> int:
    return sum(n * v for n, v in zip(counts, VALUES))
