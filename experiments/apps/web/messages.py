"""What the browser table sends: one seat's state, built from that seat's :class:`SeatView` only.

:func:`seat_message` is the one place a message to a player is made.  Its input
is a :class:`~handfoot_env.view.SeatView` (which never holds another player's
cards, an unseen foot or the stock order) and the table's public facts (its id,
rules preset, seat labels, action count); it never sees the game.  The
spectator's message is the same projection with the seat's own cards and
choices removed: what every seat can see in common.

The table's own facts that a view does not hold (readable action labels, the
last round's sheet, who still has to see it, a chosen seed, a seat's reason why
it may not discard) come in ``facts``, built by the table from public
information (:mod:`experiments.apps.web.public`).  While a finished round's
sheet waits for a person (``waiting``), that person's only choice is
:data:`NEXT_ROUND` and nobody else may act.

Cards are card codes (``"4"`` .. ``"A"``, ``"2"``, ``"JK"``, ``"3R"``, ``"3B"``);
melds and books are counts ``{"slot", "naturals", "twos", "jokers"}`` (slot ``W`` is
the wild meld); actions are the names of docs/actions.md.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

from experiments.apps.web.public import books_met, meld_entry
from handfoot_env.actions import ACTION_NAMES
from handfoot_env.cards import CODES, codes_of
from handfoot_env.scoring import table_score
from handfoot_env.view import SeatView

#: how many of the latest actions a message lists (the whole round is in the record)
LOG_LENGTH = 16
#: the choice of a person who has to see a finished round's sheet before the next deal
NEXT_ROUND = "next_round"
#: the keys of ``facts`` (see the module docstring)
FACTS = ("texts", "round_end", "waiting", "seed", "discard_reason", "trouble")

_meld = meld_entry


def _action(player: int, action: int, text: Optional[str] = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"player": int(player), "action": ACTION_NAMES[action]}
    if text is not None:
        out["text"] = text
    return out


def seat_message(view: SeatView, table: str, rules: str, players: Sequence[str], seq: int,
                 spectator: bool = False, facts: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The state a seat is sent (``spectator``: the common part only, ``seat`` is ``None``).

    ``seq`` is the number of actions applied so far: an action posted with a
    ``seq`` that is no longer current is stale.  ``facts``: the table's own
    public facts (keys :data:`FACTS`, each optional).
    """
    v = view
    f = dict(facts or {})
    history = v.round_history
    own = not spectator
    texts = list(f.get("texts") or [])
    shown = history[-LOG_LENGTH:]
    texts = texts[-len(shown):] if len(texts) >= len(shown) and shown else [None] * len(shown)
    waiting = sorted(int(p) for p in (f.get("waiting") or ()))
    need = v.rules.going_out_books(v.round)
    to_act, legal = (v.to_act, list(v.legal_names)) if own else (False, [])
    if waiting and own:
        to_act = v.seat in waiting
        legal = [NEXT_ROUND] if to_act else []
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
        "to_act": to_act,
        "legal": legal,
        "hand": codes_of(v.hand) if own else [],
        "in_foot": v.in_foot if own else None,
        "pending": codes_of(v.pending) if own else [],
        "hand_sizes": list(v.hand_sizes),
        "foot_picked_up": list(v.foot_picked_up),
        "foot_sizes": list(v.foot_sizes),
        "played_foot": list(v.played_foot),
        "table_points": [table_score(v, t) for t in range(v.num_teams)],
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
        "minimum": v.rules.round_minimum(v.round),
        "going_out": list(need),
        "books_met": [books_met(c, need) for c in v.book_counts],
        "scores": list(v.scores),
        "round_scores": [list(r) for r in v.round_scores],
        "phase": v.phase_name,
        "current": v.current,
        "turn_player": v.turn_player,
        "asked": v.asked,
        "permission": v.permission,
        "prov_value": v.prov_value,
        "last": _action(*history[-1]) if history else None,
        "log": [_action(p, a, t) for (p, a), t in zip(shown, texts)],
        "game_over": v.game_over,
        "winner": winner(v.scores) if v.game_over else None,
        "round_end": f.get("round_end"),
        "waiting": waiting,
        "seed": f.get("seed"),
        "discard_reason": f.get("discard_reason") if own and to_act else None,
        "trouble": f.get("trouble"),
    }
    return msg


def winner(scores: Sequence[int]) -> Optional[int]:
    """The team with the highest score, ``None`` for a tie at the top."""
    best = max(scores)
    top = [t for t, s in enumerate(scores) if s == best]
    return top[0] if len(top) == 1 else None


__all__ = ["seat_message", "winner", "LOG_LENGTH", "NEXT_ROUND", "FACTS"]
