"""``handfoot train CONFIG [--resume PATH] [--set KEY=VALUE ...]``: the command line of training.

What a run does and writes is described in :mod:`experiments.training.trainer` (every backend);
the config fields in :mod:`experiments.training.config` (``handfoot train --help-config``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

from experiments.config import ConfigError, apply_overrides, config_from_dict, describe_config
from experiments.evaluation.report import fmt_adp, fmt_ci_pct
from experiments.evaluation.stats import ELO_ANCHOR
from experiments.runs import resolve_resume
from experiments.training.config import TrainConfig, load_train_config
from experiments.training.backends import backend
from experiments.training.trainer import train, warm_core
from experiments.config import CommandParser
from experiments.config import command


def _parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="handfoot train",
                      description="Self-play training from a YAML config (backend: sb3, batched, dmc or rllib).")
    p.add_argument("config", nargs="?", help="train config YAML (configs/train/*.yaml); optional with --resume")
    p.add_argument("--resume", help="checkpoint folder or run folder to continue from")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field, e.g. --set total_timesteps=50000 --set ppo.n_steps=128")
    p.add_argument("--run-dir", help="parent folder of run folders (config run_dir)")
    p.add_argument("--run-name", help="run folder name (config run_name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or messages")
    p.add_argument("--help-config", action="store_true",
                   help="list every config field with its type, default and meaning")
    p.add_argument("--ray", "--ray-address", dest="ray", nargs="?", const="", metavar="ADDRESS",
                   help="run on Ray: the samplers of backend batched and dmc as Ray actors, backend rllib's env "
                        "runners; on the cluster at ADDRESS, else RAY_ADDRESS, else a private local Ray "
                        "(docs/scaling_out.md; --ray-address is its old name)")
    return p


def use_ray(cfg: TrainConfig, address: str) -> None:
    """``--ray [ADDRESS]``: the run's samplers on Ray (``batched.ray``: ADDRESS, else ``RAY_ADDRESS``, else
    ``local``); for backend rllib, the cluster RLlib joins (as ``RAY_ADDRESS``)."""
    address = address or os.environ.get("RAY_ADDRESS", "") or "local"
    if cfg.backend == "rllib":
        if address != "local":
            os.environ["RAY_ADDRESS"] = address
        return
    if backend(cfg.backend).family != "rollout":
        raise ConfigError(f"--ray: backend {cfg.backend} does not run on Ray (batched, dmc and rllib do)")
    cfg.batched.ray = address


@command("train")
def train_main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    args = p.parse_args(argv)
    if args.help_config:
        print("\n".join(describe_config(TrainConfig)))
        return 0
    if args.config is None and not args.resume:
        raise ConfigError("a config file is needed (or --resume PATH)")
    if args.config is None:
        ck = resolve_resume(args.resume)
        data = json.loads((ck / "trainer.json").read_text())["config"]
        data = apply_overrides(data, args.overrides)
        cfg = config_from_dict(TrainConfig, data)
    else:
        cfg = load_train_config(args.config, args.overrides)
    if args.run_dir:
        cfg.run_dir = args.run_dir
    if args.run_name:
        cfg.run_name = args.run_name
    if args.ray is not None:
        use_ray(cfg, args.ray)
    if args.resume:
        resolve_resume(args.resume)
    warm_core(cfg)
    result = train(cfg, resume=args.resume, quiet=args.quiet, argv=["handfoot", "train"] + argv)
    fe = result.get("final_eval")
    print(f"run folder: {result['run']}  ({result['timesteps']:,} timesteps, {result['wall_s']:.0f}s)")
    if fe:
        for spec, s in fe["per_opponent"].items():
            ci = s["win_rate_ci"]
            cis = f" {fmt_ci_pct(ci)}" if ci else ""
            print(f"  vs {spec:<12} win rate {s['win_rate']:.1%}{cis}  ADP {fmt_adp(s['adp'])}")
        if fe.get("elo") is not None:
            print(f"  Elo (random = {ELO_ANCHOR:.0f}): {fe['elo']:.0f}")
    return 0


main = train_main
