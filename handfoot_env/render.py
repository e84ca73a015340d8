"""Text rendering of the table, from one seat's view or the full (omniscient) view."""
from __future__ import annotations

from typing import List, Optional

from .cards import BLACK3, CODES, NUM_RANKS, SLOT_CODES, WILD_SLOT
from .engine import PHASE_NAMES, Game
from .observation import table_points


def _cards(counts) -> str:
    parts = [f"{CODES[k]}x{n}" if n > 1 else CODES[k] for k, n in enumerate(counts) if n]
    return " ".join(parts) if parts else "-"


def _meld_str(s: int, n: int, t: int, j: int) -> str:
    body = ([SLOT_CODES[s]] * n if s < NUM_RANKS else []) + ["2"] * t + ["JK"] * j
    return "[" + " ".join(body) + "]"


def _book_kind(s: int, t: int, j: int) -> str:
    return "wild" if s == WILD_SLOT else ("clean" if t + j == 0 else "dirty")


def render_text(game: Game, viewer: Optional[int] = None) -> str:
    """A readable table.  ``viewer`` is a seat (its cards shown) or ``None`` (all cards)."""
    r = game.rules
    lines: List[str] = []
    lines.append(f"Round {game.round}/{r.rounds}   minimum {game.minimum}   dealer player_{game.dealer}   "
                 f"scores " + "  ".join(f"team {t}: {game.scores[t]}" for t in range(game.num_teams)))
    top = CODES[game.discard[-1]] if game.discard else "-"
    blocked = " (blocked)" if game.discard and game.discard[-1] == BLACK3 else ""
    lines.append(f"Stock {len(game.stock)}   pile {len(game.discard)} cards, top {top}{blocked}")
    for t in range(game.num_teams):
        members = ", ".join(f"player_{p}" for p in range(game.n) if game.team_of[p] == t)
        bc = game.book_counts[t]
        state = "open" if game.opened[t] else "not opened"
        lines.append(f"Team {t} ({members}) {state}; red threes {game.red3[t]}; books clean {bc[0]}, dirty {bc[1]}, "
                     f"wild {bc[2]}; on table {table_points(game, t)}")
        books = [f"{_meld_str(s, n, tw, j)} {_book_kind(s, tw, j)} book" for s, n, tw, j in game.books[t]]
        melds = [f"{_meld_str(s, n, tw, j)} {_book_kind(s, tw, j)}"
                 for s, (n, tw, j) in enumerate(game.melds[t]) if n + tw + j]
        lines.append("  books: " + (", ".join(books) if books else "-"))
        lines.append("  melds: " + (", ".join(melds) if melds else "-"))
    for p in range(game.n):
        foot = "playing from foot" if game.feet[p] is None else "in hand (foot waiting)"
        marker = "->" if p == game.current and game.phase != 3 else "  "
        if viewer is None or viewer == p:
            cards = _cards(game.hands[p])
        else:
            cards = f"{sum(game.hands[p])} cards"
        lines.append(f"{marker} player_{p} (team {game.team_of[p]}) {foot}: {cards}")
        if viewer is None and game.feet[p] is not None:
            lines.append(f"     foot: {_cards(game.feet[p])}")
    if game.phase == 3:
        w = "draw" if game.winner is None else f"team {game.winner} wins"
        lines.append(f"Game over: {w}; final scores {game.scores}")
    else:
        extra = ""
        if game.phase == 2:
            extra = f" (player_{game.turn_player} asks to go out)"
        lines.append(f"To act: player_{game.current}, phase {PHASE_NAMES[game.phase]}{extra}")
    return "\n".join(lines)
