"""The public facts of a table that a seat's view does not carry: readable action labels, a finished
round's score sheet and board, the round's requirements.

Everything here is public at a real table: every action is made face up (a draw
shows no card, a pickup shows the pile it takes, which lay face up), and at a
round's end the melds, books, red threes, card counts and every team's score
breakdown are on the table.  No function returns a card from a hand, a foot or
the stock.

The round's requirements are the rules' own accessors (``RuleConfig.going_out_books(round)``,
``RuleConfig.round_minimum(round)``), so that rules whose requirements change from round to round
are shown as they apply; :func:`books_met` says whether a team meets them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from experiments.apps.table import describe_action
from handfoot_env.actions import DISCARD_BASE, DISCARD_KINDS, PICKUP
from handfoot_env.cards import CODES, SLOT_CODES, WILD_SLOT
from handfoot_env.engine import MELD_PHASE, Game
from handfoot_env.scoring import BREAKDOWN_KEYS, BREAKDOWN_LABELS

#: the rows of a round's score sheet: ``(key, label)``, the round total last
SHEET_ITEMS: Tuple[Tuple[str, str], ...] = tuple((k, BREAKDOWN_LABELS[k]) for k in BREAKDOWN_KEYS) + (
    ("total", "round total"),)


def books_met(counts: Sequence[int], need: Sequence[int]) -> bool:
    """Whether book counts (clean, dirty, wild) meet a going-out requirement."""
    return all(int(c) >= int(n) for c, n in zip(counts, need))


def _codes(cards: Sequence[int]) -> str:
    return " ".join(CODES[k] for k in sorted(cards))


def action_text(game: Game, action: int) -> str:
    """What ``action`` by the player to act in ``game`` does, in words, from public facts only (call it
    before the action is applied).  A pickup names the pile cards it takes."""
    if action == PICKUP and game.discard:
        top = game.discard[-1]
        take = game.rules.pile_take
        taken = list(game.discard) if take == "all" else list(game.discard[-int(take):])
        rest = taken[:-1]
        code = CODES[top]
        return (f"picks up the pile: melds {code} {code} {code}"
                + (f" and takes {_codes(rest)}" if rest else " (no other card)"))
    return describe_action(game, action)


def meld_entry(slot: int, n: int, t: int, j: int) -> Dict[str, Any]:
    """A meld or book as sent: its slot code (``W``: the wild meld), counts and kind."""
    kind = "wild" if slot == WILD_SLOT else ("clean" if t + j == 0 else "dirty")
    return {"slot": SLOT_CODES[slot], "naturals": n, "twos": t, "jokers": j, "kind": kind}


def round_summary(board: Game, after: Game, labels: Sequence[str]) -> Dict[str, Any]:
    """The sheet and board of the round that just ended.

    ``board``: the game at the moment the round ended, not yet scored
    (:func:`handfoot_env.record.board_after`); ``after``: the game once it was
    scored (and the next round dealt, unless it is over).  Holds who went out,
    each team's breakdown (:data:`SHEET_ITEMS`), the round's scores and the running
    totals, and the public board: melds, books, red threes, the cards each player
    was left holding (a count) and whether each foot was picked up.
    """
    det = after.round_details[-1]
    who = det["went_out"]
    teams = [{k: int(t.get(k, 0)) for k, _ in SHEET_ITEMS} for t in det["teams"]]
    left = [sum(board.hands[q]) + (sum(board.feet[q]) if board.feet[q] is not None else 0) for q in range(board.n)]
    return {
        "round": int(det["round"]),
        "went_out": who,
        "reason": (f"player_{who} ({labels[who]}) went out" if who is not None
                   else "no one went out: the stock ran out"),
        "items": [list(x) for x in SHEET_ITEMS],
        "teams": teams,
        "round_scores": [int(x) for x in after.round_scores[-1]],
        "scores": [int(x) for x in after.scores],
        "melds": [[meld_entry(s, *m) for s, m in enumerate(team) if sum(m)] for team in board.melds],
        "books": [[meld_entry(*b) for b in team] for team in board.books],
        "red_threes": [int(x) for x in board.red3],
        "cards_left": left,
        "foot_picked_up": [board.feet[q] is None for q in range(board.n)],
        "game_over": bool(after.game_over),
    }


def discard_reason(game: Game, seat: int) -> Optional[str]:
    """Why the seat to act may not discard now (``None`` when it may, or when it is not its meld phase)."""
    if game.current != seat or game.game_over or game.phase != MELD_PHASE:
        return None
    held = [i for i, k in enumerate(DISCARD_KINDS) if game.hands[seat][k]]
    reasons: List[str] = []
    for i in held:
        reason = game.reason_illegal(DISCARD_BASE + i)
        if reason is None:
            return None
        reasons.append(reason)
    return reasons[0] if reasons else "there is no card to discard"


__all__ = ["books_met", "action_text", "round_summary", "discard_reason",
           "SHEET_ITEMS", "meld_entry"]
