"""The game table in the terminal: the table as one seat (or everyone) sees it, action descriptions
and the score sheet, drawn with rich; shared by ``handfoot play``, ``replay`` and ``demo``.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from handfoot_env.actions import (
    ACTION_NAMES,
    ANSWER_NO,
    ANSWER_YES,
    ASK_GO_OUT,
    CANCEL_MELDS,
    DISCARD_BASE,
    DISCARD_KINDS,
    DRAW,
    LAY_RED_THREE,
    MELD_BASE,
    MELD_SPECS,
    PICKUP,
)
from handfoot_env.cards import BLACK3, CODES, JOKER, NUM_RANKS, SLOT_CODES, TWO, VALUES, WILD_SLOT
from handfoot_env.engine import ANSWER_PHASE, GAME_OVER, PHASE_NAMES, Game
from handfoot_env.melds import meld_points
from handfoot_env.observation import table_points
from handfoot_env.scoring import BREAKDOWN_LABELS

BOOK_STYLE = {"clean": "green", "dirty": "yellow", "wild": "magenta"}


ITEM_NAMES = tuple(BREAKDOWN_LABELS.items()) + (("total", "round total"),)


def _add_row(table: Table, *cells, style: str = "") -> None:
    """Add a row of plain-text cells: no rich markup or emoji codes (``meld:A:2:1:0`` stays as typed)."""
    table.add_row(*[c if isinstance(c, Text) else Text(str(c)) for c in cells], style=style)


def make_console(file=None, width: Optional[int] = None) -> Console:
    """A console that prints text as given (no markup, emoji codes or highlighting)."""
    return Console(file=file, width=width, markup=False, emoji=False, highlight=False)


def cards_text(counts: Sequence[int]) -> str:
    """``[2, 0, 1, ...]`` -> ``"4 4  6"``: every card, kinds separated by two spaces."""
    groups = [" ".join([CODES[k]] * n) for k, n in enumerate(counts) if n]
    return "  ".join(groups) if groups else "-"


def meld_cards(slot: int, n: int, t: int, j: int) -> str:
    body = ([SLOT_CODES[slot]] * n if slot < NUM_RANKS else []) + ["2"] * t + ["JK"] * j
    return " ".join(body)


def meld_kind(slot: int, t: int, j: int) -> str:
    """``clean`` (no wilds), ``dirty`` (some wilds) or ``wild`` (the wild meld)."""
    return "wild" if slot == WILD_SLOT else ("clean" if t + j == 0 else "dirty")


def meld_label(slot: int) -> str:
    return "wild meld" if slot == WILD_SLOT else f"{SLOT_CODES[slot]} meld"


def seat_name(p: int, viewer: Optional[int] = None) -> str:
    return "you" if viewer is not None and p == viewer else f"player_{p}"


def team_label(game: Game, t: int, viewer: Optional[int] = None) -> str:
    members = [seat_name(p, viewer) for p in range(game.n) if game.team_of[p] == t]
    mine = viewer is not None and game.team_of[viewer] == t
    return f"Team {t} ({' + '.join(members)})" + (" - your team" if mine and game.n > 1 else "")


def describe_action(game: Game, action: int, viewer: Optional[int] = None) -> str:
    """A readable description of ``action`` by the player to act in ``game`` (before it is applied).

    Uses only public information, so it is safe to show to any seat.
    """
    p = game.current
    a = int(action)
    team = game.team_of[p]
    if a == DRAW:
        return "draw two cards from the stock"
    if a == PICKUP:
        top = game.discard[-1] if game.discard else None
        take = len(game.discard) if game.rules.pile_take == "all" else min(len(game.discard), int(game.rules.pile_take))
        code = CODES[top] if top is not None else "?"
        note = opening_note(game, 3 * VALUES[top]) if top is not None and not game.opened[team] else ""
        return f"take the pile: meld {code} {code} {code}{note}, take {take} card{'s' if take != 1 else ''}"
    if a == LAY_RED_THREE:
        return f"lay a red three ({game.rules.red_three_bonus:+d}) and draw a replacement"
    if a == CANCEL_MELDS:
        return "take back the provisional melds"
    if a == ASK_GO_OUT:
        q = game.answerer(p)
        return f"ask {seat_name(q, viewer)} (partner): may I go out?"
    if a == ANSWER_YES:
        return f"yes, {seat_name(game.turn_player, viewer)} may go out"
    if a == ANSWER_NO:
        return f"no, {seat_name(game.turn_player, viewer)} may not go out yet"
    if DISCARD_BASE <= a < MELD_BASE:
        k = DISCARD_KINDS[a - DISCARD_BASE]
        extra = ""
        if k == BLACK3:
            extra = " (blocks the pile for the next player)"
        elif k in (TWO, JOKER):
            extra = " (a wild card!)"
        if sum(game.hands[p]) == 1:
            extra += " and go out" if game.feet[p] is None else " and pick up the foot"
        return f"discard {CODES[k]}{extra}"
    if MELD_BASE <= a < len(ACTION_NAMES):
        s, n, t, j = MELD_SPECS[a - MELD_BASE]
        cur = game.melds[team][s]
        size0 = sum(cur)
        total = size0 + n + t + j
        if size0:
            where = f"onto the {meld_label(s)} [{meld_cards(s, *cur)}]"
        else:
            where = f"as a new {meld_label(s)}"
        extra = ""
        if total == 7:
            extra = f" -> {meld_kind(s, cur[1] + t, cur[2] + j)} book"
        if game.feet[p] is None and sum(game.hands[p]) == n + t + j:
            extra += ", going out"
        if not game.opened[team]:
            extra += opening_note(game, meld_points(s, n, t, j))
        return f"meld {meld_cards(s, n, t, j)} {where}{extra}"
    return ACTION_NAMES[a]


def opening_note(game: Game, points: int) -> str:
    """`` (N points: M of the opening minimum X)`` for a meld of ``points`` by a team that has not opened,
    counting the turn's provisional melds (``, opens`` when it reaches the minimum)."""
    value = game.prov_value + points
    return (f" ({points} points: {value} of the opening minimum {game.minimum}"
            + (", opens" if value >= game.minimum else "") + ")")


def _foot_status(game: Game, p: int) -> str:
    if game.feet[p] is None:
        return "picked up, played" if game.played_foot[p] else "picked up"
    return f"waiting ({sum(game.feet[p])})"


def _meld_text(slot: int, n: int, t: int, j: int, book: bool) -> Text:
    kind = meld_kind(slot, t, j)
    txt = Text(f"[{meld_cards(slot, n, t, j)}]", style=BOOK_STYLE[kind] + (" bold" if book else ""))
    txt.append(f" {kind}{' book' if book else ''}", style=BOOK_STYLE[kind])
    return txt


def table_renderable(game: Game, viewer: Optional[int] = None, labels: Optional[Sequence[str]] = None,
                     title: Optional[str] = None, round_over: bool = False):
    """The table as a rich renderable.

    ``viewer``: the seat whose cards are shown (other hands as sizes only), or
    ``None`` for the full view (every hand and unseen foot).  ``labels``: a
    name per seat (``you``, ``greedy``, ...).  ``round_over``: the board is a
    finished round's (no one is to act).
    """
    labels = list(labels) if labels is not None else [""] * game.n
    over = game.phase == GAME_OVER or round_over
    parts: list = [_table_head(game, viewer), Text(""), _seats_table(game, viewer, labels, over)]
    if viewer is None:
        parts += _all_hands(game)
    parts += [Text("")] + _teams_parts(game, viewer, round_over)
    parts += _turn_lines(game, viewer, over, round_over)
    return Panel(Group(*parts), title=title, title_align="left", expand=False)


def _table_head(game: Game, viewer: Optional[int]) -> Text:
    """Round, minimum, dealer, stock, pile and the books going out needs."""
    r = game.rules
    head = Text()
    rnd = f"Round {game.round}/{r.rounds}" + (" (extra round)" if game.round > r.rounds else "")
    head.append(rnd, style="bold")
    head.append(f"   minimum {game.minimum}   dealer {seat_name(game.dealer, viewer)}\n")
    top = game.discard[-1] if game.discard else None
    head.append(f"Stock {len(game.stock)}   Pile {len(game.discard)} card{'s' if len(game.discard) != 1 else ''}, top ")
    head.append(CODES[top] if top is not None else "-", style="bold")
    if game.pile_blocked() and game.discard:
        head.append("  [blocked by a black three]", style="red")
    nc, nd, nw = r.going_out_books(game.round)
    need = f"{nc}/{nd}" + (f"/{nw}" if r.wild_melds else "")
    head.append(f"\nGoing out needs {need} books (clean/dirty" + ("/wild" if r.wild_melds else "") + ")"
                + (f" in round {game.round}" if len({r.going_out_books(i) for i in range(1, r.rounds + 1)}) > 1
                   else ""))
    return head


def _seats_table(game: Game, viewer: Optional[int], labels: List[str], over: bool) -> Table:
    """One row per seat: who acts, name, team, cards held, foot."""
    seats = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    seats.add_column("")
    seats.add_column("seat")
    seats.add_column("who")
    seats.add_column("team", justify="right")
    seats.add_column("cards", justify="right")
    seats.add_column("foot")
    for p in range(game.n):
        acting = not over and p == game.current
        mark = ">" if acting else ""
        style = "bold cyan" if acting else ("bold" if p == viewer else "")
        row = [mark, f"player_{p}", labels[p] if p < len(labels) else "", str(game.team_of[p]),
               str(sum(game.hands[p])), _foot_status(game, p)]
        _add_row(seats, *row, style=style)
    return seats


def _all_hands(game: Game) -> List[Text]:
    """Every hand and unseen foot (the full view)."""
    hands: List[Text] = []
    for p in range(game.n):
        h = Text(f"player_{p} {'foot' if game.feet[p] is None else 'hand'}: ", style="bold")
        h.append(cards_text(game.hands[p]))
        if game.feet[p] is not None:
            h.append("   unseen foot: ", style="bold")
            h.append(cards_text(game.feet[p]), style="dim")
        hands.append(h)
    return hands


def _teams_parts(game: Game, viewer: Optional[int], round_over: bool = False) -> list:
    """The teams' table (opened, red threes, books, points on the table, score), then each team's books
    and melds.  At a round's end the score is the one before the round (the sheet that follows adds it)."""
    r = game.rules
    tt = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    tt.add_column("team")
    tt.add_column("status")
    tt.add_column("red 3s", justify="right")
    tt.add_column("books c/d" + ("/w" if r.wild_melds else ""), justify="right")
    tt.add_column("on table", justify="right")
    tt.add_column("score before this round" if round_over else "score", justify="right")
    for t in range(game.num_teams):
        bc = game.book_counts[t]
        books = f"{bc[0]}/{bc[1]}" + (f"/{bc[2]}" if r.wild_melds else "")
        mine = viewer is not None and game.team_of[viewer] == t
        _add_row(tt, f"{t}{' (yours)' if mine else ''}", "open" if game.opened[t] else "not opened",
                 str(game.red3[t]), books, str(table_points(game, t)), str(game.scores[t]),
                 style="bold" if mine else "")
    teams: list = [tt]
    for t in range(game.num_teams):
        line = Text(f"Team {t} books: ", style="bold")
        by_kind: Dict[str, List[str]] = {"clean": [], "dirty": [], "wild": []}
        for s, n, tw, j in game.books[t]:
            by_kind[meld_kind(s, tw, j)].append(SLOT_CODES[s])
        groups = [(k, v) for k, v in by_kind.items() if v]
        if not groups:
            line.append("none", style="dim")
        for i, (kind, ranks) in enumerate(groups):
            if i:
                line.append(" | ")
            line.append(f"{kind} ", style=BOOK_STYLE[kind])
            line.append(" ".join(ranks), style=BOOK_STYLE[kind] + " bold")
        teams.append(line)
        items = [_meld_text(s, n, tw, j, False) for s, (n, tw, j) in enumerate(game.melds[t]) if n + tw + j]
        body = Text(f"Team {t} melds: ", style="bold")
        if items:
            for i, it in enumerate(items):
                if i:
                    body.append("  ")
                body.append_text(it)
        else:
            body.append("none", style="dim")
        teams.append(body)
    return teams


def _turn_lines(game: Game, viewer: Optional[int], over: bool, round_over: bool) -> list:
    """The turn's state: provisional melds, an unfinished pickup meld, the viewer's cards, and who is
    to act (or the game's end)."""
    parts: list = []
    tp = game.turn_player
    if not over and not game.opened[game.team_of[tp]] and (game.prov_value or game.forced is not None):
        whose = "Your provisional melds" if tp == viewer else f"Provisional melds of player_{tp}"
        parts.append(Text(f"{whose}: {game.prov_value} of the minimum {game.minimum} (not opened yet)",
                          style="yellow"))
    if not over and game.incomplete >= 0:
        parts.append(Text(f"The {meld_label(game.incomplete)} from the pickup is unfinished: it needs "
                          f"{3 - sum(game.melds[game.team_of[tp]][game.incomplete])} more card(s) this turn",
                          style="yellow"))
    if viewer is not None:
        mine = Text()
        where = "Your foot" if game.feet[viewer] is None else "Your hand"
        mine.append(f"{where} ({sum(game.hands[viewer])}): ", style="bold")
        mine.append(cards_text(game.hands[viewer]))
        parts += [Text(""), mine]
        if tp == viewer and any(game.pending) and not over:
            parts.append(Text(f"Pile cards you get once your team opens: {cards_text(game.pending)}", style="yellow"))
    if over:
        if game.phase == GAME_OVER and not round_over:
            w = "a draw" if game.winner is None else f"{team_label(game, game.winner, viewer)} wins"
            parts.append(Text(f"Game over: {w}.", style="bold"))
    else:
        if game.phase == ANSWER_PHASE:
            who = "You" if game.current == viewer else seat_name(game.current, viewer)
            msg = f"{who} must answer: {seat_name(tp, viewer)} asks \"may I go out?\""
        else:
            who = "You are" if game.current == viewer else f"{seat_name(game.current, viewer)} is"
            msg = f"{who} to act ({PHASE_NAMES[game.phase]} phase)"
        if game.permission is not None and game.phase != ANSWER_PHASE:
            msg += f"; going out this turn: {'allowed' if game.permission else 'refused'}"
        parts.append(Text(msg, style="bold cyan"))
    return parts


def score_sheet(game: Game, viewer: Optional[int] = None, detail: bool = True):
    """Rounds played so far, running totals, and the breakdown of the last round."""
    nt = game.num_teams
    sheet = Table(title="Score sheet", header_style="bold")
    sheet.add_column("round")
    for t in range(nt):
        sheet.add_column(team_label(game, t, viewer), justify="right")
    running = [s - sum(r[t] for r in game.round_scores) for t, s in enumerate(game.scores)]
    for i, (rs, det) in enumerate(zip(game.round_scores, game.round_details)):
        for t in range(nt):
            running[t] += rs[t]
        _add_row(sheet, f"{det['round']}", *[f"{rs[t]:+d}  ({running[t]})" for t in range(nt)])
    _add_row(sheet, "total", *[str(game.scores[t]) for t in range(nt)], style="bold")
    if not detail or not game.round_details:
        return sheet
    last = game.round_details[-1]
    br = Table(title=f"Round {last['round']} in detail", header_style="bold")
    br.add_column("item")
    for t in range(nt):
        br.add_column(f"Team {t}", justify="right")
    for key, name in ITEM_NAMES:
        vals = [last["teams"][t].get(key, 0) for t in range(nt)]
        _add_row(br, name, *[str(v) for v in vals], style="bold" if key == "total" else "")
    who = last["went_out"]
    end = (f"{seat_name(who, viewer)} went out" if who is not None
           else "no one went out (the stock ran out)")
    return Group(br, Text(f"Round {last['round']}: {end}."), sheet)
