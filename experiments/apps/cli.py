"""The ``handfoot`` command line: one entry point, one subcommand per job.

Each subcommand lives in its own module with a ``main(argv) -> int``; it is
imported only when used, so ``handfoot score`` does not load torch.
"""
from __future__ import annotations

import importlib
import sys
from typing import List, Optional

#: command -> (module, entry function, one-line help).  Modules are imported only when their
#: command runs, so ``handfoot score`` never loads torch; tests/test_architecture.py checks that
#: every entry exists.
COMMANDS = {
    "score": ("experiments.apps.score", "score_main", "score a paper score sheet (YAML)"),
    "demo": ("experiments.apps.demo", "demo_main", "play one seeded game between built-in agents and print it"),
    "play": ("experiments.apps.play", "play_main", "play a game in the terminal against agents"),
    "replay": ("experiments.apps.replay", "replay_main", "step through a saved game record"),
    "evaluate": ("experiments.evaluation.cli", "evaluate_main",
                 "benchmark agents against each other (duplicate format)"),
    "train": ("experiments.training.cli", "train_main", "train a self-play agent from a config"),
    "experiment": ("experiments.apps.experiment", "experiment_main", "train, evaluate and report from one config"),
    "bench": ("experiments.bench.bench", "bench_main", "measure throughput of the engine and envs"),
}


def _usage() -> str:
    lines = ["usage: handfoot COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, _, help_) in COMMANDS.items()]
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
    module, function, _ = COMMANDS[cmd]
    entry = getattr(importlib.import_module(module), function)
    return int(entry(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
