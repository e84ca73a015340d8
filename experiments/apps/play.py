"""``handfoot play``: a person plays one seat of a full game in the terminal.

Every other seat is an agent (``random``, ``greedy``, ``strategic`` or a trained
checkpoint ``policy:PATH``).  See docs/playing.md.  ``handfoot replay`` is
:mod:`experiments.apps.replay`.

Everything that talks to the person goes through a :class:`rich.console.Console`
and an ``input_fn(prompt) -> str``, both injectable (``play_main(argv,
input_fn=..., stdout=...)``) so that tests can script a whole game.

The table renderer, the action descriptions and the score sheet are
:mod:`experiments.apps.table`, shared with ``handfoot replay`` and ``handfoot demo``.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agents.base import agent_action
from agents.registry import make_agent
from experiments.apps.table import _add_row, cards_text, describe_action, make_console, table_renderable, team_label
from handfoot_env.actions import (
    ACTION_INDEX,
    ACTION_NAMES,
    ANSWER_NO,
    ANSWER_YES,
    ASK_GO_OUT,
    CANCEL_MELDS,
    DRAW,
    LAY_RED_THREE,
    MELD_BASE,
    MELD_SPECS,
    PICKUP,
)
from handfoot_env.config import RuleConfigError, load_rules
from handfoot_env.engine import ANSWER_PHASE, GAME_OVER, Game
from handfoot_env.record import board_after, save_record
from handfoot_env.turns import play_until
from experiments.apps.table import score_sheet
from experiments.config import CommandParser
from experiments.config import command, handfoot_command
from handfoot_env.safe_yaml import parse_yaml
from experiments.config import seed_arg
from experiments.config import output_file_error

InputFn = Callable[[str], str]


# =========================================================================== text helpers


# =========================================================================== table


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

        def move(p: int, legal: List[int]) -> int:
            return self.human_turn() if p == self.human else agent_action(self.agents[p], g, p, legal)

        play_until(g, None, move, apply=self._played)
        self.say(Text(self._final_line(), style="bold"))

    def _played(self, p: int, a: int) -> None:
        """Play legal action ``a`` of seat ``p`` and tell the player what happened."""
        g = self.game
        before = g.clone()
        text = describe_action(g, a, self.human)
        rounds = len(g.round_scores)
        g.apply_legal(a)
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
    out = {}
    for it in items or ():
        if "=" not in it:
            raise RuleConfigError(f"--rule expects FIELD=VALUE, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = parse_yaml(v, RuleConfigError, f"--rule {k.strip()}")
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
    ap = CommandParser(
        prog="handfoot play", description="Play Hand and Foot in the terminal against agents (docs/playing.md).")
    ap.add_argument("--seat", type=int, default=0, help="your seat, 0-based (default 0; partners sit opposite)")
    ap.add_argument("--partner", default="greedy", metavar="SPEC",
                    help="agent for your teammate(s): random, greedy, strategic, champion, policy:PATH or "
                         "py:package.module:ClassName (default greedy)")
    ap.add_argument("--opponents", default="greedy", metavar="SPEC",
                    help="agent for the other team(s) (default greedy)")
    ap.add_argument("--rules", default="pagat", metavar="PRESET",
                    help="rules preset (pagat, bicycle, six_player, individual, saskatchewan) or YAML file "
                         "(default pagat)")
    ap.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                    help="override one rule field, e.g. --rule pile_take=all (repeatable)")
    ap.add_argument("--seed", type=seed_arg, default=None, help="deal seed (default: random, printed)")
    ap.add_argument("--save", metavar="FILE", default=None,
                    help="save the game record (JSON) here at the end, also when you quit")
    ap.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                    help="pause after each agent move, to watch them (default 0)")
    ap.add_argument("--no-pause", action="store_true", help="do not wait for Enter between rounds")
    ap.add_argument("--shoe", default=None, help=argparse.SUPPRESS)   # testing: stack the first deal
    ap.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    return ap


@command("play")
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
    if args.save and (problem := output_file_error(args.save, "--save")):
        raise ValueError(problem)
    try:
        rules = load_rules(args.rules, **_parse_overrides(args.rule))
    except RuleConfigError as e:
        print(f"handfoot play: error: {e}", file=err)
        return 2
    if not 0 <= args.seat < rules.players:
        print(f"handfoot play: error: --seat must be between 0 and {rules.players - 1}, got {args.seat}", file=err)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 31)
    game = Game(rules)
    shoe = _shoe(args.shoe)
    try:
        game.reset(seed=seed, shoe=shoe)
    except ValueError as e:
        print(f"handfoot play: error: {e}", file=err)
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
            print(f"handfoot play: error: cannot create agent {spec!r} for player_{p}: {e}", file=err)
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
        save_record(game, args.save, players=["human" if p == human else labels[p] for p in range(game.n)],
                    options={"shoe": shoe} if shoe else None,
                    meta={"command": "play", "human_seat": human, "finished": bool(game.game_over)})
        console.print(f"Game record saved to {args.save} ({handfoot_command()} replay {args.save}).")
    return status


# =========================================================================== replay command


if __name__ == "__main__":  # pragma: no cover
    sys.exit(play_main())
