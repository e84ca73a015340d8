"""Play Hand and Foot in the terminal, and step through saved game records.

``handfoot play``   a person plays one seat of a full game; every other seat is
                    an agent (``random``, ``greedy``, ``strategic`` or a trained
                    checkpoint ``policy:PATH``).  See docs/playing.md.
``handfoot replay`` steps through a saved record (:mod:`handfoot_env.record`),
                    after re-simulating and verifying it.

Everything that talks to the person goes through a :class:`rich.console.Console`
and an ``input_fn(prompt) -> str``, both injectable (``play_main(argv,
input_fn=..., stdout=...)``) so that tests can script a whole game.

The table renderer (:func:`table_renderable`), the action descriptions
(:func:`describe_action`) and the score sheet (:func:`score_sheet`) are shared
with ``handfoot demo``.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from handfoot_env.actions import (
    ACTION_INDEX,
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
from handfoot_env.cards import BLACK3, CODES, JOKER, NUM_RANKS, SLOT_CODES, TWO, WILD_SLOT
from handfoot_env.config import RuleConfigError, load_rules
from handfoot_env.engine import ANSWER_PHASE, GAME_OVER, PHASE_NAMES, Game
from handfoot_env.observation import action_mask, encode_observation, table_points

InputFn = Callable[[str], str]

BOOK_STYLE = {"clean": "green", "dirty": "yellow", "wild": "magenta"}
ITEM_NAMES = (("melded", "cards melded"), ("books", "book bonuses"), ("red_threes", "red threes laid"),
              ("went_out", "going out"), ("left", "cards left in hand/foot"),
              ("red_threes_left", "red threes left"), ("total", "round total"))


# =========================================================================== agents
def make_agent(spec: str, seed: int):
    """An agent from a spec (``random``, ``greedy``, ``strategic``, ``policy:PATH``): agents.registry."""
    from agents.registry import make_agent as _make
    return _make(spec, seed)


def agent_action(agent, game: Game, seat: int) -> int:
    """Ask ``agent`` (playing ``seat``) for its action in ``game``."""
    from handfoot_env.view import seat_view
    obs = None
    if getattr(agent, "needs_observation", False):
        obs = {"observation": encode_observation(game, seat), "action_mask": action_mask(game, seat)}
    return int(agent.act(obs, seat_view(game, seat)))


# =========================================================================== text helpers
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
        return f"take the pile: meld {code} {code} {code}, take {take} card{'s' if take != 1 else ''}"
    if a == LAY_RED_THREE:
        return "lay a red three (+100) and draw a replacement"
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
        return f"meld {meld_cards(s, n, t, j)} {where}{extra}"
    return ACTION_NAMES[a]


# =========================================================================== table
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
    r = game.rules
    labels = list(labels) if labels is not None else [""] * game.n
    over = game.phase == GAME_OVER or round_over
    head = Text()
    rnd = f"Round {game.round}/{r.rounds}" + (" (extra round)" if game.round > r.rounds else "")
    head.append(rnd, style="bold")
    head.append(f"   minimum {game.minimum}   dealer {seat_name(game.dealer, viewer)}\n")
    top = game.discard[-1] if game.discard else None
    head.append(f"Stock {len(game.stock)}   Pile {len(game.discard)} card{'s' if len(game.discard) != 1 else ''}, top ")
    head.append(CODES[top] if top is not None else "-", style="bold")
    if game.pile_blocked() and game.discard:
        head.append("  [blocked by a black three]", style="red")

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
    hands: List[Text] = []
    if viewer is None:
        for p in range(game.n):
            h = Text(f"player_{p} {'foot' if game.feet[p] is None else 'hand'}: ", style="bold")
            h.append(cards_text(game.hands[p]))
            if game.feet[p] is not None:
                h.append("   unseen foot: ", style="bold")
                h.append(cards_text(game.feet[p]), style="dim")
            hands.append(h)

    need = f"{r.go_out_clean}/{r.go_out_dirty}" + (f"/{r.go_out_wild}" if r.wild_melds else "")
    tt = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    tt.add_column("team")
    tt.add_column("status")
    tt.add_column("red 3s", justify="right")
    tt.add_column("books c/d" + ("/w" if r.wild_melds else ""), justify="right")
    tt.add_column("on table", justify="right")
    tt.add_column("score", justify="right")
    for t in range(game.num_teams):
        bc = game.book_counts[t]
        books = f"{bc[0]}/{bc[1]}" + (f"/{bc[2]}" if r.wild_melds else "")
        mine = viewer is not None and game.team_of[viewer] == t
        _add_row(tt, f"{t}{' (yours)' if mine else ''}", "open" if game.opened[t] else "not opened",
                   str(game.red3[t]), books, str(table_points(game, t)), str(game.scores[t]),
                   style="bold" if mine else "")
    head.append(f"\nGoing out needs {need} books (clean/dirty" + ("/wild" if r.wild_melds else "") + ")")
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

    parts: list = [head, Text(""), seats] + hands + [Text("")] + teams
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
    return Panel(Group(*parts), title=title, title_align="left", expand=False)


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


# =========================================================================== action listing
def action_order(legal: Sequence[int]) -> List[int]:
    """The order actions are listed in: draw/pickup/red three, melds, asking, cancel, discards."""
    def key(a: int):
        if a in (DRAW, PICKUP, LAY_RED_THREE, ANSWER_YES, ANSWER_NO):
            return (0, a)
        if a >= MELD_BASE:
            s, n, t, j = MELD_SPECS[a - MELD_BASE]
            return (1, s, -(n + t + j), t + j, a)
        if a == ASK_GO_OUT:
            return (2, a)
        if a == CANCEL_MELDS:
            return (3, a)
        return (4, a)
    return sorted(legal, key=key)


ANSWER_WORDS = {"y": ANSWER_YES, "yes": ANSWER_YES, "n": ANSWER_NO, "no": ANSWER_NO}
HELP = """Type the number of an action or its name (e.g. 3, draw, meld:K:3:0:0, discard:9).
Other commands: t / table (show the table again), s / scores (score sheet), l / log (recent moves),
h / help, q / quit.  When your partner asks to go out, answer y / yes or n / no."""


def parse_choice(text: str, listed: Sequence[int], game: Game) -> Tuple[Optional[int], Optional[str]]:
    """Map what the person typed to an action id; ``(None, message)`` when it is not a legal action."""
    s = text.strip()
    if s.isdigit():
        i = int(s)
        if 1 <= i <= len(listed):
            return listed[i - 1], None
        return None, f"there is no action number {i}; choose 1 to {len(listed)}"
    low = s.lower()
    if game.phase == ANSWER_PHASE and low in ANSWER_WORDS:
        return ANSWER_WORDS[low], None
    by_lower = {ACTION_NAMES[a].lower(): a for a in listed}
    if low in by_lower:
        return by_lower[low], None
    known = {n.lower(): i for n, i in ACTION_INDEX.items()}
    if low in known:
        reason = game.reason_illegal(known[low]) or "not available now"
        return None, f"{ACTION_NAMES[known[low]]} is not legal now: {reason}"
    return None, f"{s!r} is not an action; type a number from 1 to {len(listed)}, an action name, or h for help"


# =========================================================================== the session
class Quit(Exception):
    """The person quit (``q``) or the input ended."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class PlaySession:
    """One game with a person in ``human_seat`` and agents everywhere else."""

    def __init__(self, game: Game, human_seat: int, agents: Dict[int, object], labels: Sequence[str],
                 console: Console, input_fn: InputFn, delay: float = 0.0, pause_between_rounds: bool = True):
        self.game = game
        self.human = human_seat
        self.agents = agents
        self.labels = list(labels)
        self.console = console
        self.input_fn = input_fn
        self.delay = delay
        self.pause = pause_between_rounds
        self.log: List[str] = []
        self.answer_prompts = 0

    # -- i/o
    def ask(self, prompt: str) -> str:
        try:
            return self.input_fn(prompt)
        except EOFError:
            raise Quit("input ended") from None
        except KeyboardInterrupt:
            raise Quit("interrupted") from None

    def say(self, *objs, **kw) -> None:
        self.console.print(*objs, **kw)

    def _who(self, p: int) -> str:
        if p == self.human:
            return "You"
        lab = self.labels[p]
        return f"player_{p} ({lab})" if lab else f"player_{p}"

    # -- loop
    def run(self) -> None:
        g = self.game
        while g.phase != GAME_OVER:
            p = g.current
            before = g.clone()
            if p == self.human:
                a = self.human_turn()
            else:
                a = agent_action(self.agents[p], g, p)
            text = describe_action(g, a, self.human)
            rounds = len(g.round_scores)
            g.step(a)
            line = f"{self._who(p)}: {text}"
            self.log.append(line)
            if p != self.human or a in (ANSWER_YES, ANSWER_NO):
                self.say(line, style="dim" if p != self.human else "")
            if len(g.round_scores) == rounds:
                self._announce_foot(before)
            if len(g.round_scores) > rounds:
                self.round_over(before, a)
            elif p != self.human and self.delay:
                time.sleep(self.delay)
        self.say(Text(self._final_line(), style="bold"))

    def _announce_foot(self, before: Game) -> None:
        g = self.game
        for q in range(g.n):
            if before.feet[q] is not None and g.feet[q] is None:
                if q == self.human:
                    self.say(Text(f"You picked up your foot: {cards_text(g.hands[q])}", style="bold"))
                else:
                    self.say(f"{self._who(q)} picked up the foot.", style="dim")

    def _final_line(self) -> str:
        g = self.game
        if g.winner is None:
            return f"Game over: a draw at {g.scores[0]} each."
        mine = g.team_of[self.human] == g.winner
        return (f"Game over: {team_label(g, g.winner, self.human)} wins {g.scores[g.winner]} to "
                f"{max(s for t, s in enumerate(g.scores) if t != g.winner)}."
                + (" Well played!" if mine else ""))

    def round_over(self, before: Game, action: int) -> None:
        from handfoot_env.record import board_after
        g = self.game
        det = g.round_details[-1]
        board = board_after(before, action)
        self.say(table_renderable(board, None, self.labels, title=f"End of round {det['round']} (all cards shown)",
                                  round_over=True))
        self.say(score_sheet(g, self.human))
        if g.phase != GAME_OVER and self.pause:
            self.ask(f"Press Enter to deal round {g.round} ")

    def human_turn(self) -> int:
        g = self.game
        listed = action_order(g.legal_actions())
        self.say(table_renderable(g, self.human, self.labels))
        if g.phase == ANSWER_PHASE:
            self.answer_prompts += 1
            self.say(Text(f"{self._who(g.turn_player)} (your partner) asks: \"May I go out?\"", style="bold magenta"))
        self.show_actions(listed)
        prompt = "Your answer (y/n or number) > " if g.phase == ANSWER_PHASE else "Your move > "
        while True:
            raw = self.ask(prompt)
            cmd = raw.strip().lower()
            if cmd in ("q", "quit", "exit"):
                raise Quit("quit")
            if cmd in ("h", "help", "?"):
                self.say(HELP)
                continue
            if cmd in ("t", "table"):
                self.say(table_renderable(g, self.human, self.labels))
                self.show_actions(listed)
                continue
            if cmd in ("s", "scores", "score"):
                self.say(score_sheet(g, self.human, detail=False))
                continue
            if cmd in ("l", "log"):
                self.say("\n".join(self.log[-20:]) or "(no moves yet)")
                continue
            if cmd == "":
                self.say("Type a number or an action name (h for help).")
                continue
            a, err = parse_choice(raw, listed, g)
            if a is None:
                self.say(Text(f"Not accepted: {err}.", style="red"))
                continue
            return a

    def show_actions(self, listed: Sequence[int]) -> None:
        g = self.game
        t = Table(box=None, show_header=False, pad_edge=False)
        t.add_column(justify="right")
        t.add_column()
        t.add_column(style="dim")
        for i, a in enumerate(listed, 1):
            _add_row(t, f"{i})", ACTION_NAMES[a], describe_action(g, a, self.human))
        self.say(Text("Legal actions:", style="bold"))
        self.say(t)


# =========================================================================== play command
def _parse_overrides(items: Sequence[str]) -> dict:
    import yaml
    out = {}
    for it in items or ():
        if "=" not in it:
            raise RuleConfigError(f"--rule expects FIELD=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def _shoe(text: Optional[str]) -> Optional[List[str]]:
    if not text:
        return None
    return [c for c in text.replace(",", " ").split() if c]


def _input_from(stream: TextIO, out: TextIO) -> InputFn:
    """An input function reading lines from ``stream`` (echoing the prompt to stdout)."""
    def read(prompt: str) -> str:
        out.write(prompt)
        out.flush()
        line = stream.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")
    return read


def play_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="handfoot play", description="Play Hand and Foot in the terminal against agents (docs/playing.md).")
    ap.add_argument("--seat", type=int, default=0, help="your seat, 0-based (default 0; partners sit opposite)")
    ap.add_argument("--partner", default="greedy", metavar="SPEC",
                    help="agent for your teammate(s): random, greedy, strategic or policy:PATH (default greedy)")
    ap.add_argument("--opponents", default="greedy", metavar="SPEC",
                    help="agent for the other team(s) (default greedy)")
    ap.add_argument("--rules", default="pagat", metavar="PRESET",
                    help="rules preset (pagat, bicycle, six_player, individual) or YAML file (default pagat)")
    ap.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                    help="override one rule field, e.g. --rule pile_take=all (repeatable)")
    ap.add_argument("--seed", type=int, default=None, help="deal seed (default: random, printed)")
    ap.add_argument("--save", metavar="FILE", default=None,
                    help="save the game record (JSON) here at the end, also when you quit")
    ap.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                    help="pause after each agent move, to watch them (default 0)")
    ap.add_argument("--no-pause", action="store_true", help="do not wait for Enter between rounds")
    ap.add_argument("--shoe", default=None, help=argparse.SUPPRESS)   # testing: stack the first deal
    ap.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    return ap


def play_main(argv: Optional[Sequence[str]] = None, input_fn: Optional[InputFn] = None,
              stdout: Optional[TextIO] = None, stdin: Optional[TextIO] = None) -> int:
    """``handfoot play``; returns the exit status (0 finished or quit, 1 input ended, 2 bad arguments)."""
    ap = play_parser()
    args = ap.parse_args(list(argv) if argv is not None else None)
    out = stdout if stdout is not None else sys.stdout
    console = make_console(out, args.width or (None if out is sys.stdout else 110))
    err = sys.stderr
    if input_fn is None:
        if stdin is not None:
            input_fn = _input_from(stdin, out)
        else:
            input_fn = input
    try:
        rules = load_rules(args.rules, **_parse_overrides(args.rule))
    except RuleConfigError as e:
        print(f"handfoot play: {e}", file=err)
        return 2
    if not 0 <= args.seat < rules.players:
        print(f"handfoot play: --seat must be between 0 and {rules.players - 1}, got {args.seat}", file=err)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    game = Game(rules)
    shoe = _shoe(args.shoe)
    try:
        game.reset(seed=seed, shoe=shoe)
    except ValueError as e:
        print(f"handfoot play: {e}", file=err)
        return 2
    human = args.seat
    agents: Dict[int, object] = {}
    labels: List[str] = []
    for p in range(rules.players):
        if p == human:
            labels.append("you")
            continue
        spec = args.partner if game.team_of[p] == game.team_of[human] else args.opponents
        try:
            ag = make_agent(spec, seed * 100 + p)
            ag.reset(p, rules, seed * 100 + p)
        except Exception as e:  # a bad spec or an unreadable checkpoint: a message, not a traceback
            print(f"handfoot play: cannot create agent {spec!r} for player_{p}: {e}", file=err)
            return 2
        agents[p] = ag
        labels.append(spec)
    console.print(Text(f"Hand and Foot - rules {args.rules}, seed {seed}. You are player_{human} "
                       f"(team {game.team_of[human]}). Type h for help, q to quit.", style="bold"))
    session = PlaySession(game, human, agents, labels, console, input_fn, delay=args.delay,
                          pause_between_rounds=not args.no_pause)
    status = 0
    try:
        try:
            session.run()
        except KeyboardInterrupt:
            raise Quit("interrupted") from None
    except Quit as q:
        if q.reason == "quit":
            console.print("You left the game.")
        else:
            console.print(f"Game abandoned: {q.reason}.")
            status = 1
    if args.save:
        from handfoot_env.record import save_record
        save_record(game, args.save, players=["human" if p == human else labels[p] for p in range(game.n)],
                    options={"shoe": shoe} if shoe else None,
                    meta={"command": "play", "human_seat": human, "finished": bool(game.game_over)})
        console.print(f"Game record saved to {args.save} (handfoot replay {args.save}).")
    return status


# =========================================================================== replay command
REPLAY_HELP = """n / next / Enter: next action     p / prev: previous action     K: go to the position after action K
r K: start of round K     end: last position     s N / seat N: view from seat N     a / all: full view
h / help     q / quit"""


def replay_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="handfoot replay",
                                 description="Step through a saved game record, after verifying it (docs/playing.md).")
    ap.add_argument("file", help="game record (JSON), as written by handfoot play --save or save_record()")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--seat", type=int, default=None, help="show the table as this seat saw it")
    g.add_argument("--all", action="store_true", help="show every hand and foot (the default)")
    ap.add_argument("--at", type=int, default=0, metavar="K", help="start at the position after action K")
    ap.add_argument("--check", action="store_true", help="only verify the record and print its result")
    ap.add_argument("--html", metavar="OUT.html", default=None,
                    help="write the game as one self-contained web page (a card table to step through) and exit")
    ap.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    return ap


def _position_renderable(pos, prev, n_actions: int, viewer: Optional[int], labels: Sequence[str]):
    from rich.console import Group as _Group
    if pos.action is None:
        head = Text(f"Position 0/{n_actions}: the deal", style="bold")
    else:
        p, name = pos.action
        desc = describe_action(prev.game, ACTION_INDEX[name], viewer)
        lab = f" ({labels[p]})" if labels and labels[p] else ""
        head = Text(f"Position {pos.index}/{n_actions}: player_{p}{lab} {name}  -  {desc}", style="bold")
    if pos.round_end is not None:
        g = pos.game
        ended = len(g.round_scores)
        det = g.round_details[ended - 1]
        who = det["went_out"]
        msg = (f"Round {det['round']} ends: " + (f"player_{who} went out" if who is not None else "the stock ran out")
               + ". Round scores " + ", ".join(f"team {t} {s:+d}" for t, s in enumerate(pos.round_scores))
               + "; totals " + ", ".join(f"team {t} {s}" for t, s in enumerate(g.scores)) + ".")
        body = table_renderable(pos.round_end, viewer, labels, title=f"End of round {det['round']}", round_over=True)
        parts = [head, body, Text(msg, style="bold")]
        if g.phase != GAME_OVER:
            parts.append(table_renderable(g, viewer, labels, title=f"Round {g.round}: the deal"))
        return _Group(*parts)
    return _Group(head, table_renderable(pos.game, viewer, labels))


def _write_html(rec, args, console) -> int:
    """``handfoot replay FILE --html OUT.html``: the record as a web page."""
    from pathlib import Path

    from experiments.apps.viewer import write_html
    try:
        info = write_html(rec, args.html, source=Path(args.file).name, view=args.seat, start=max(0, args.at))
    except OSError as e:
        print(f"handfoot replay: error: --html {args.html}: {e.strerror or e}", file=sys.stderr)
        return 2
    console.print(f"Wrote {info['path']} ({info['bytes'] / 1024:.0f} kB, {info['frames']} frames, "
                  f"{info['seconds']:.2f} s): open it in a browser.")
    return 0


def replay_main(argv: Optional[Sequence[str]] = None, input_fn: Optional[InputFn] = None,
                stdout: Optional[TextIO] = None) -> int:
    """``handfoot replay``; 0 on success, 2 for a record that cannot be read or does not verify."""
    from handfoot_env.record import RecordError, RecordMismatchError, load_record, positions
    ap = replay_parser()
    args = ap.parse_args(list(argv) if argv is not None else None)
    out = stdout if stdout is not None else sys.stdout
    console = make_console(out, args.width or (None if out is sys.stdout else 110))
    if args.html:
        from experiments.apps.viewer import html_error
        problem = html_error(args.html)
        if problem:
            print(f"handfoot replay: error: {problem}", file=sys.stderr)
            return 2
    try:
        rec = load_record(args.file)
        pos = positions(rec)
    except RecordMismatchError as e:
        print(f"handfoot replay: error: {args.file}: the record does not verify: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"handfoot replay: error: {args.file}: cannot read the file: {e.strerror or e}", file=sys.stderr)
        return 2
    except RecordError as e:
        msg = str(e)
        print(f"handfoot replay: error: {msg if msg.startswith(str(args.file)) else f'{args.file}: {msg}'}",
              file=sys.stderr)
        return 2
    g = pos[-1].game
    n = len(pos) - 1
    labels = list(rec.get("players") or [""] * g.n)
    if args.seat is not None and not 0 <= args.seat < g.n:
        print(f"handfoot replay: error: --seat must be between 0 and {g.n - 1}, got {args.seat}", file=sys.stderr)
        return 2
    result = ("a draw" if g.winner is None else f"team {g.winner} wins") if g.game_over else "not finished"
    console.print(Text(f"Record {args.file}: seed {rec['seed']}, {n} actions, {len(g.round_scores)} round(s), "
                       f"scores {g.scores}, {result}. Verified: the replay matches the stored scores.",
                       style="bold"))
    if args.check:
        return 0
    if args.html:
        return _write_html(rec, args, console)
    if input_fn is None:
        input_fn = input
    viewer = args.seat
    k = max(0, min(args.at, n))
    console.print(REPLAY_HELP)
    show = True
    while True:
        if show:
            console.print(_position_renderable(pos[k], pos[k - 1] if k else None, n, viewer, labels))
        show = True
        try:
            raw = input_fn(f"[{k}/{n}] > ")
        except (EOFError, KeyboardInterrupt):
            console.print("")
            return 0
        cmd = raw.strip().lower()
        parts = cmd.split()
        if cmd in ("", "n", "next"):
            if k < n:
                k += 1
            else:
                console.print("This is the last position (q to quit).")
                show = False
        elif cmd in ("p", "prev", "previous", "b", "back"):
            if k > 0:
                k -= 1
            else:
                console.print("This is the first position.")
                show = False
        elif cmd.lstrip("+-").isdigit() and cmd[0] in "+-":
            k = max(0, min(n, k + int(cmd)))
        elif cmd.isdigit() or (len(parts) == 2 and parts[0] in ("g", "go", "goto", "j", "jump") and parts[1].isdigit()):
            target = int(parts[-1])
            if target > n:
                console.print(f"There are only {n} actions; going to the last position.")
            k = min(target, n)
        elif cmd in ("end", "last"):
            k = n
        elif len(parts) == 2 and parts[0] in ("r", "round") and parts[1].isdigit():
            want = int(parts[1])
            hits = [i for i, q in enumerate(pos) if q.game.round == want and (i == 0 or pos[i - 1].game.round != want)]
            if not hits:
                console.print(f"No round {want} in this record.")
                show = False
            else:
                k = hits[0]
        elif len(parts) == 2 and parts[0] in ("s", "seat") and parts[1].isdigit():
            s = int(parts[1])
            if 0 <= s < g.n:
                viewer = s
            else:
                console.print(f"Seats are 0 to {g.n - 1}.")
                show = False
        elif cmd in ("a", "all", "full"):
            viewer = None
        elif cmd in ("q", "quit", "exit"):
            return 0
        elif cmd in ("h", "help", "?"):
            console.print(REPLAY_HELP)
            show = False
        else:
            console.print(f"Unknown command {raw.strip()!r}. " + REPLAY_HELP)
            show = False


def main(argv: Optional[Sequence[str]] = None) -> int:
    return play_main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(play_main())
