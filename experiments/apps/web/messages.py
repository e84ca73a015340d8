"""What the browser table sends: one seat's state, built from that seat's :class:`SeatView` only.

:func:`seat_message` is the one place a message to a player is made.  Its input
is a :class:`~handfoot_env.view.SeatView` (which never holds another player's
cards, an unseen foot or the stock order) and the table's public facts (its id,
rules preset, seat labels, action count); it never sees the game.  The
spectator's message is the same projection with the seat's own cards and
choices removed: what every seat can see in common.

Cards are card codes (``"4"`` .. ``"A"``, ``"2"``, ``"JK"``, ``"3R"``, ``"3B"``);
melds and books are counts ``{"slot", "naturals", "twos", "jokers"}`` (slot ``W`` is
the wild meld); actions are the names of docs/actions.md.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from handfoot_env.actions import ACTION_NAMES
from handfoot_env.cards import CODES, SLOT_CODES, WILD_SLOT, codes_of
from handfoot_env.view import SeatView

#: how many of the latest actions a message lists (the whole round is in the record)
LOG_LENGTH = 16


def _meld(slot: int, n: int, t: int, j: int) -> Dict[str, Any]:
    kind = "wild" if slot == WILD_SLOT else ("clean" if t + j == 0 else "dirty")
    return {"slot": SLOT_CODES[slot], "naturals": n, "twos": t, "jokers": j, "kind": kind}


def _action(player: int, action: int) -> Dict[str, Any]:
    return {"player": int(player), "action": ACTION_NAMES[action]}


def seat_message(view: SeatView, table: str, rules: str, players: Sequence[str], seq: int,
                 spectator: bool = False) -> Dict[str, Any]:
    """The state a seat is sent (``spectator``: the common part only, ``seat`` is ``None``).

    ``seq`` is the number of actions applied so far: an action posted with a
    ``seq`` that is no longer current is stale.
    """
    v = view
    history = v.round_history
    own = not spectator
    msg: Dict[str, Any] = {
        "table": table,
        "seq": int(seq),
        "seat": v.seat if own else None,
        "player": f"player_{v.seat}" if own else None,
        "team": v.team if own else None,
        "rules": rules,
        "players": list(players),
        "num_players": v.num_players,
        "team_of": list(v.team_of),
        "to_act": v.to_act if own else False,
        "legal": list(v.legal_names) if own else [],
        "hand": codes_of(v.hand) if own else [],
        "in_foot": v.in_foot if own else None,
        "pending": codes_of(v.pending) if own else [],
        "hand_sizes": list(v.hand_sizes),
        "foot_picked_up": list(v.foot_picked_up),
        "foot_sizes": list(v.foot_sizes),
        "played_foot": list(v.played_foot),
        "melds": [[_meld(s, *m) for s, m in enumerate(team) if sum(m)] for team in v.melds],
        "books": [[_meld(*b) for b in team] for team in v.books],
        "book_counts": [list(b) for b in v.book_counts],
        "red_threes": list(v.red_threes),
        "opened": list(v.opened),
        "discard": [CODES[k] for k in v.discard],
        "pile_blocked": v.pile_blocked,
        "stock_size": v.stock_size,
        "round": v.round,
        "rounds": v.rules.rounds,
        "minimum": v.minimum,
        "scores": list(v.scores),
        "round_scores": [list(r) for r in v.round_scores],
        "phase": v.phase_name,
        "current": v.current,
        "turn_player": v.turn_player,
        "asked": v.asked,
        "permission": v.permission,
        "prov_value": v.prov_value,
        "last": _action(*history[-1]) if history else None,
        "log": [_action(p, a) for p, a in history[-LOG_LENGTH:]],
        "game_over": v.game_over,
        "winner": winner(v.scores) if v.game_over else None,
    }
    return msg


def winner(scores: Sequence[int]) -> Optional[int]:
    """The team with the highest score, ``None`` for a tie at the top."""
    best = max(scores)
    top = [t for t, s in enumerate(scores) if s == best]
    return top[0] if len(top) == 1 else None


__all__ = ["seat_message", "winner", "LOG_LENGTH"]
