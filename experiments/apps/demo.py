"""``handfoot demo``: one seeded game between built-in agents, printed.

    handfoot demo                                   # strategic (team 0) vs greedy (team 1), seed 0
    handfoot demo --agents greedy random --seed 7 --rules bicycle
    handfoot demo --save demo.json                  # then: handfoot replay demo.json

Agent ``A`` plays every seat of team 0, ``B`` every seat of team 1 (with more
teams the specs are used in turn).  The table is printed with every card shown
at the end of each round, followed by the score sheet; then the final scores.
It takes a few seconds.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import List, Optional, Sequence, TextIO

from rich.console import Console
from rich.text import Text

from agents.base import agent_action
from agents.registry import make_agent
from experiments.apps.table import make_console, score_sheet, table_renderable, team_label
from handfoot_env.config import PRESETS, load_rules
from handfoot_env.engine import Game
from handfoot_env.record import board_after, make_record, save_record
from handfoot_env.turns import play_until
from experiments.apps.viewer import write_html
from experiments.config import CommandParser
from experiments.config import command, handfoot_command
from experiments.config import seed_arg
from experiments.config import output_file_error

#: the default game: the shipped champion against the strongest heuristic (seed 0: someone goes out
#: in every round)
DEFAULT_AGENTS = ("champion", "strategic")


def run_demo(agents: Sequence[str] = DEFAULT_AGENTS, rules="pagat", seed: int = 0,
             console: Optional[Console] = None, save: Optional[str] = None, html: Optional[str] = None) -> Game:
    """Play and print one game; returns the finished :class:`Game`."""
    console = console or make_console()
    rules = load_rules(rules)
    g = Game(rules)
    g.reset(seed=seed)
    specs: List[str] = [agents[g.team_of[p] % len(agents)] for p in range(g.n)]
    players = []
    for p, spec in enumerate(specs):
        a = make_agent(spec, seed * 100 + p)
        a.reset(p, rules, seed * 100 + p)
        players.append(a)
    teams = ", ".join(f"team {t}: {agents[t % len(agents)]} "
                      f"({' + '.join(f'player_{p}' for p in range(g.n) if g.team_of[p] == t)})"
                      for t in range(g.num_teams))
    console.print(Text(f"Hand and Foot demo - rules {rules_name(rules)}, seed {seed}; {teams}", style="bold"))
    t0 = time.perf_counter()

    def apply(p: int, a: int) -> None:
        before = g.clone()
        done = len(g.round_scores)
        g.apply_legal(a)
        if len(g.round_scores) > done:
            det = g.round_details[-1]
            console.print(table_renderable(board_after(before, a), None, specs,
                                           title=f"End of round {det['round']} ({det['actions']} actions)",
                                           round_over=True))
            console.print(score_sheet(g))

    steps = play_until(g, None, lambda p, legal: agent_action(players[p], g, p, legal), apply=apply)
    w = "a draw" if g.winner is None else f"{team_label(g, g.winner)} ({agents[g.winner % len(agents)]}) wins"
    console.print(Text("Final scores: " + ", ".join(f"team {t} {s}" for t, s in enumerate(g.scores))
                       + f" - {w}. {steps} actions in {time.perf_counter() - t0:.1f} s.", style="bold"))
    if save:
        save_record(g, save, players=specs, meta={"command": "demo"})
        console.print(f"Game record saved to {save} ({handfoot_command()} replay {save}).")
    if html:
        info = write_html(make_record(g, players=specs, meta={"command": "demo"}), html,
                          source=f"handfoot demo --seed {seed}")
        console.print(f"Web page written to {info['path']} ({info['bytes'] / 1024:.0f} kB): open it in a browser.")
    return g


def rules_name(rules) -> str:
    d = rules.to_dict()
    for name in PRESETS:
        if load_rules(name).to_dict() == d:
            return name
    return "custom"


@command("demo")
def demo_main(argv: Optional[Sequence[str]] = None, stdout: Optional[TextIO] = None) -> int:
    ap = CommandParser(prog="handfoot demo",
                                 description="Play one seeded game between built-in agents and print it.")
    ap.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS), metavar="SPEC",
                    help="agent for team 0, then team 1 (random, greedy, strategic, champion, policy:PATH, "
                         "py:MOD:CLASS); "
                         "default: champion strategic")
    ap.add_argument("--rules", default="pagat", metavar="PRESET", help="rules preset or YAML file (default pagat)")
    ap.add_argument("--seed", type=seed_arg, default=0, help="deal seed (default 0)")
    ap.add_argument("--save", default=None, metavar="FILE", help="save the game record (JSON)")
    ap.add_argument("--html", default=None, metavar="OUT.html",
                    help="also write the game as one self-contained web page (a card table to step through)")
    ap.add_argument("--width", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(list(argv) if argv is not None else None)
    out = stdout if stdout is not None else sys.stdout
    console = make_console(out, args.width or (None if out is sys.stdout else 110))
    for flag, path in (("--html", args.html), ("--save", args.save)):
        if path and (problem := output_file_error(path, flag)):
            raise ValueError(problem)
    run_demo(args.agents, args.rules, args.seed, console, args.save, args.html)
    return 0


main = demo_main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(demo_main())
