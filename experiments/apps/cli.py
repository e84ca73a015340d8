"""The ``handfoot`` command line: one entry point, one subcommand per job, one error path.

Each subcommand lives in its own module with a ``NAME_main(argv) -> int``; it is
imported only when used, so ``handfoot score`` does not load torch.

Errors: a user error (a bad flag, config, rule set, record, path or value: any
``ValueError`` or ``OSError`` a command raises) is one line
``handfoot COMMAND: error: ...`` and exit status 2; Ctrl-C is one line and exit
status 130; anything else is an internal error, one line that says how to see the
traceback (``handfoot --debug COMMAND ...`` or ``HANDFOOT_DEBUG=1``), exit status 1.
"""
from __future__ import annotations

import importlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import List, Optional

import handfoot_env
from experiments.config import debug_enabled, error_line

#: command -> (module, entry function, one-line help).  Modules are imported only when their
#: command runs, so ``handfoot score`` never loads torch; tests/test_architecture.py checks that
#: every entry exists.
COMMANDS = {
    "score": ("experiments.apps.score", "score_main", "score a paper score sheet (YAML)"),
    "demo": ("experiments.apps.demo", "demo_main", "play one seeded game between built-in agents and print it"),
    "play": ("experiments.apps.play", "play_main", "play a game in the terminal against agents"),
    "replay": ("experiments.apps.replay", "replay_main", "step through a saved game record"),
    "serve": ("experiments.apps.web.serve", "serve_main", "a browser table: people and agents play together"),
    "evaluate": ("experiments.evaluation.cli", "evaluate_main",
                 "benchmark agents against each other (duplicate format)"),
    "leaderboard": ("experiments.evaluation.leaderboard", "leaderboard_main",
                    "round-robin of every built-in agent (and more): ratings with random = 1000, a page in "
                    "runs/leaderboard/ (or --out DIR)"),
    "train": ("experiments.training.cli", "train_main", "train a self-play agent from a config"),
    "exploit": ("experiments.training.exploit", "exploit_main",
                "train a best response against a frozen agent: how exploitable is it"),
    "experiment": ("experiments.apps.experiment", "experiment_main", "train, evaluate and report from one config"),
    "sweep": ("experiments.sweeps.cli", "sweep_main",
              "many seeds of many variants of an experiment or evaluation, and statistics across seeds"),
    "bench": ("experiments.bench.bench", "bench_main", "measure throughput of the engine and envs"),
    "dataset": ("experiments.datasets.cli", "dataset_main",
                "Minari datasets of one seat's episodes: from agents' play or from game records"),
}


def _usage() -> str:
    lines = ["usage: handfoot COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, _, help_) in COMMANDS.items()]
    lines += ["", "Run 'handfoot COMMAND --help' for the options of a command; 'handfoot --version' for the",
              "version; 'handfoot --debug COMMAND ...' to see the traceback of an internal error."]
    return "\n".join(lines)


def _version() -> str:
    try:
        return version("handfoot")
    except PackageNotFoundError:           # run from a source tree that is not installed
        return handfoot_env.__version__


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--debug":
        os.environ["HANDFOOT_DEBUG"] = "1"         # the commands' error path (experiments.config.command)
        argv = argv[1:]
    debug = debug_enabled()
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] == "--version":
        print(f"handfoot {_version()}")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"handfoot: error: unknown command {cmd!r} (commands: {', '.join(COMMANDS)}; see handfoot --help)",
              file=sys.stderr)
        return 2
    module, function, _ = COMMANDS[cmd]
    try:
        entry = getattr(importlib.import_module(module), function)
        return int(entry(rest) or 0)
    except KeyboardInterrupt:
        print(f"handfoot {cmd}: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as e:
        if debug:
            raise
        print(error_line(cmd, e), file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the one place that turns a bug into one line
        if debug:
            raise
        print(f"handfoot {cmd}: internal error: {type(e).__name__}: {' '.join(str(e).split())[:300]} "
              f"(run 'handfoot --debug {cmd} ...' to see the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
