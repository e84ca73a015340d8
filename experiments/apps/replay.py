"""``handfoot replay FILE``: step through a saved game record (:mod:`handfoot_env.record`), after
re-simulating it and checking it against its recorded scores.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, List, Optional, Sequence, TextIO

from rich.console import Group as _Group
from rich.text import Text

from experiments.apps.play import InputFn
from experiments.apps.table import describe_action, make_console, table_renderable
from handfoot_env.actions import (
    ACTION_INDEX,
)
from handfoot_env.engine import GAME_OVER
from handfoot_env.record import RecordError, RecordMismatchError, load_record, positions
from pathlib import Path
from experiments.apps.viewer import html_error, write_html
from experiments.config import CommandParser
from experiments.config import command

REPLAY_HELP = """n / next / Enter: next action     p / prev: previous action     K: go to the position after action K
r K: start of round K     end: last position     s N / seat N: view from seat N     a / all: full view
h / help     q / quit"""


def replay_parser() -> argparse.ArgumentParser:
    ap = CommandParser(prog="handfoot replay",
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
    try:
        info = write_html(rec, args.html, source=Path(args.file).name, view=args.seat, start=max(0, args.at))
    except OSError as e:
        print(f"handfoot replay: error: --html {args.html}: {e.strerror or e}", file=sys.stderr)
        return 2
    console.print(f"Wrote {info['path']} ({info['bytes'] / 1024:.0f} kB, {info['frames']} frames, "
                  f"{info['seconds']:.2f} s): open it in a browser.")
    return 0


def _browse(console: Any, pos: Sequence[Any], labels: List[str], viewer: Optional[int], k: int,
            input_fn: InputFn) -> int:
    """Step through the positions ``pos`` of a record from position ``k``, as ``viewer``'s seat (None: every
    hand shown), at the prompt of ``input_fn``; 0 when the reader quits."""
    n = len(pos) - 1
    seats = pos[-1].game.n
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
            if 0 <= s < seats:
                viewer = s
            else:
                console.print(f"Seats are 0 to {seats - 1}.")
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


@command("replay")
def replay_main(argv: Optional[Sequence[str]] = None, input_fn: Optional[InputFn] = None,
                stdout: Optional[TextIO] = None) -> int:
    """``handfoot replay``; 0 on success, 2 for a record that cannot be read or does not verify."""
    ap = replay_parser()
    args = ap.parse_args(list(argv) if argv is not None else None)
    out = stdout if stdout is not None else sys.stdout
    console = make_console(out, args.width or (None if out is sys.stdout else 110))
    if args.html:
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
    return _browse(console, pos, labels, args.seat, max(0, min(args.at, n)), input_fn)
