"""The ``handfoot`` command line: one entry point, one subcommand per job.

Each subcommand lives in its own module with a ``main(argv) -> int``; it is
imported only when used, so ``handfoot score`` does not load torch.
"""
from __future__ import annotations

import importlib
import sys
from typing import List, Optional

COMMANDS = {
    "score": ("handfoot_env.scoring", "score a paper score sheet (YAML)"),
    "demo": ("experiments.demo", "play one seeded game between built-in agents and print it"),
    "play": ("experiments.play", "play a game in the terminal against agents"),
    "replay": ("experiments.play", "step through a saved game record"),
    "evaluate": ("experiments.evaluate", "benchmark agents against each other (duplicate format)"),
    "train": ("experiments.train", "train a self-play agent from a config"),
    "experiment": ("experiments.experiment", "train, evaluate and report from one config"),
    "bench": ("experiments.bench", "measure throughput of the engine and envs"),
}


def _usage() -> str:
    lines = ["usage: handfoot COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run 'handfoot COMMAND --help' for the options of a command."]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"handfoot: unknown command {cmd!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[cmd][0])
    entry = getattr(module, f"{cmd}_main", None) or getattr(module, "main")
    return int(entry(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
