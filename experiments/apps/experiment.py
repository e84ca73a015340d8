"""``handfoot experiment CONFIG``: train, evaluate and report from one config.

Usage::

    handfoot experiment configs/experiments/quickstart.yaml
    handfoot experiment configs/experiments/long.yaml --set train.total_timesteps=2000000
    handfoot experiment --help-config

The pipeline:

1. **train** a self-play agent with :func:`experiments.training.trainer.train` (the ``train`` section is a
   full train config inline, or ``include: PATH`` of a train config YAML with fields to change
   beside it, or just the path);
2. **evaluate** the best and/or final checkpoint with the duplicate harness
   (:mod:`experiments.evaluation`) in a round-robin with ``evaluation.opponents``
   (``random``, ``greedy``, and ``strategic`` in longer configs): win rate and ADP with 95% CIs
   against each, and an Elo rating with ``random`` at 1000;
3. **report**: ``report.md`` in the run folder with the numbers, the learning curve and the
   harness's win-rate plot, ``experiment.json`` with the same numbers, and a summary table on
   the terminal.

``--quick`` runs the same pipeline at a smoke budget (:func:`make_quick`: a few thousand
decisions, a few deals, in its own run folder ``NAME-quick-sSEED``); its report says that it is a
smoke run.  Ctrl-C (or a crash) leaves ``experiment.yaml`` in the run folder and prints
``continue with: handfoot experiment --resume RUN``, which finishes the training from its last
checkpoint, then evaluates and reports; ``--report RUN`` writes the report of any experiment
folder whose training finished (without the evaluation's tables if it has not run yet).

Config fields are listed by ``--help-config``; an unknown or badly typed field names itself and
exits with status 2.  ``seed`` and ``run_dir`` at the top level override the train section's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from rich.console import Console
from rich.table import Table

from experiments.config import (
    ConfigError,
    apply_overrides,
    config_from_dict,
    config_to_dict,
    describe_config,
    read_yaml,
)
from experiments.evaluation.report import fmt_adp, fmt_ci_num, fmt_ci_pct, fmt_pct
from experiments.evaluation.stats import DEAL_INTERVAL_METHOD, ELO_ANCHOR
from experiments.evaluation.summary import evaluate_spec
from experiments.runs import fresh_path, resolve_resume, write_json
from experiments.training.config import TrainConfig, check_spec
from experiments.training.backends import backend
from experiments.training.sampler_group import SamplersLost
from experiments.training.trainer import TrainingInterrupted, train, warm_core
from experiments.config import CommandParser
from experiments.config import command, handfoot_command


@dataclass
class FinalEvaluationConfig:
    """The evaluation after training."""

    opponents: List[str] = field(default_factory=lambda: ["random", "greedy"])
    """Agent specs the trained policy is evaluated against (a round-robin with it)."""
    deals: int = 100
    """Duplicate deals per pairing (two games each)."""
    model: str = "best"
    """Which checkpoint to evaluate: best (by the periodic evaluation), final, or both."""
    seed: int = 2_000_003
    """Seed of the evaluation deals (different from the periodic evaluation's by default)."""
    workers: int = 2
    """Processes for the evaluation (results do not depend on it)."""

    def validate(self) -> "FinalEvaluationConfig":
        if self.model not in ("best", "final", "both"):
            raise ConfigError(f"evaluation.model: expected best, final or both, got {self.model!r}")
        if self.deals < 2:
            raise ConfigError(f"evaluation.deals: must be at least 2 (for a confidence interval), got {self.deals}")
        if self.workers < 1:
            raise ConfigError(f"evaluation.workers: must be at least 1, got {self.workers}")
        if not self.opponents:
            raise ConfigError("evaluation.opponents: at least one opponent spec is needed")
        for s in self.opponents:
            check_spec("evaluation.opponents", s)
        return self


@dataclass
class ExperimentConfig:
    """Train, then evaluate and report."""

    name: str = "experiment"
    """Experiment name (also the train run's name)."""
    description: str = ""
    """Free text copied into report.md."""
    seed: Optional[int] = None
    """Overrides train.seed when set."""
    run_dir: Optional[str] = None
    """Overrides train.run_dir when set."""
    train: TrainConfig = field(default_factory=TrainConfig)
    """The training run: a train config mapping, or {include: PATH, ...changed fields}, or a PATH."""
    evaluation: FinalEvaluationConfig = field(default_factory=FinalEvaluationConfig)
    """The evaluation after training."""
    time_budget_s: Optional[float] = None
    """Expected wall time; the report says whether the run stayed within it."""
    quick: bool = False
    """A smoke run (--quick): the whole pipeline at a tiny budget; its figures say nothing of the recipe."""

    def validate(self) -> "ExperimentConfig":
        self.train.validate()
        self.evaluation.validate()
        return self


def load_experiment_config(path: Optional[str], overrides: Optional[List[str]] = None,
                           data: Optional[Dict[str, Any]] = None) -> ExperimentConfig:
    if data is None:
        data = read_yaml(path) if path else {}
    if not isinstance(data, dict):
        raise ConfigError("the experiment config must be a mapping of fields")
    data = apply_overrides(data, [])
    tr = data.get("train")
    if isinstance(tr, str):
        tr = {"include": tr}
    if isinstance(tr, dict) and "include" in tr:
        # a train config file (relative to the experiment config, or to the cwd), the rest merged over it
        rest = dict(tr)
        inc = rest.pop("include")
        if not isinstance(inc, str):
            raise ConfigError(f"train.include: expected a path to a train config, got {inc!r}")
        p = Path(inc)
        if path and not p.is_absolute() and (Path(path).parent / inc).exists():
            p = Path(path).parent / inc
        data["train"] = _merge(read_yaml(p), rest)
    data = apply_overrides(data, overrides or [])
    tr = data.get("train") or {}
    if not isinstance(tr, dict):
        raise ConfigError(f"train: expected a mapping or a path to a train config, got {tr!r}")
    tr = dict(tr)
    if "name" in data and "name" not in tr:
        tr["name"] = data["name"]
    if data.get("seed") is not None:
        tr["seed"] = data["seed"]
    if data.get("run_dir") is not None:
        tr["run_dir"] = data["run_dir"]
    data["train"] = tr
    source = f"{path}{' with --set' if overrides else ''}" if path else None
    return config_from_dict(ExperimentConfig, data, source)


#: the smoke budget of --quick: learner decisions, and duplicate deals per opponent at the end
QUICK_TIMESTEPS = 8192
QUICK_DEALS = 4
QUICK_BUDGET_S = 60.0


def make_quick(cfg: ExperimentConfig) -> ExperimentConfig:
    """``cfg`` at the smoke budget of ``--quick``: the same pipeline (training with its checkpoints
    and periodic evaluation, the final evaluation against the same opponents, the report) for
    :data:`QUICK_TIMESTEPS` decisions and :data:`QUICK_DEALS` deals per opponent, in its own run
    folder ``NAME-quick-sSEED``."""
    tc = cfg.train
    cfg.quick = True
    tc.total_timesteps = min(tc.total_timesteps, QUICK_TIMESTEPS)
    tc.checkpoint_every = tc.total_timesteps // 2 if tc.checkpoint_every else 0
    tc.evaluation.every_timesteps = tc.total_timesteps // 2 if tc.evaluation.every_timesteps else 0
    tc.evaluation.deals = min(tc.evaluation.deals, 2)
    tc.evaluation.final_deals = min(tc.evaluation.final_deals, 2)
    if tc.run_name is None:
        tc.run_name = f"{tc.name}-quick-s{tc.seed}"
    cfg.evaluation.deals = min(cfg.evaluation.deals, QUICK_DEALS)
    tc.evaluation.workers = cfg.evaluation.workers = 1     # a pool of processes costs more than a few games
    cfg.time_budget_s = QUICK_BUDGET_S
    return cfg


def _merge(base: Dict[str, Any], over: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


# =========================================================================== report
def verdicts(evals: Dict[str, Dict[str, Any]]) -> List[str]:
    lines = []
    for model, s in evals.items():
        for spec, r in s["per_opponent"].items():
            ci = r["win_rate_ci"]
            if ci is None:
                continue
            if ci[0] > 0.5:
                v = "beats"
            elif ci[1] < 0.5:
                v = "loses to"
            else:
                v = "is not separated from"
            lines.append(f"The {model} model {v} `{spec}`: win rate {fmt_pct(r['win_rate'])}, 95% CI {fmt_ci_pct(ci)}.")
    return lines


def training_setup(tc: Any) -> List[str]:
    """The report's lines on how the agent was trained: backend, games, opponents, network, learner."""
    if backend(tc.backend).family == "rollout":
        b = tc.batched
        where = (f"backend `{tc.backend}`: {b.games} games at once, {b.samplers} "
                 f"{'Ray actor' if b.ray is not None else 'sampler process'}(s), "
                 f"{'pipelined' if b.pipeline else 'synchronous'}")
    else:
        where = f"backend `{tc.backend}`, {tc.n_envs} envs ({tc.vec_env})"
    lines = [f"- rules `{tc.rules}`, {where}, seed {tc.seed}",
             f"- opponents mixture: {json.dumps(tc.opponents)}; snapshots every {tc.snapshots.every_updates} "
             f"updates, keep {tc.snapshots.keep}"]
    if tc.backend == "dmc":
        lines += [f"- action-value network Q(s, a): hidden {tc.network.pi}, {tc.network.activation}",
                  f"- Deep Monte-Carlo: {json.dumps(dataclasses.asdict(tc.dmc))}",
                  f"- reward {tc.reward} x {tc.reward_scale}"]
    else:
        lines += [f"- network pi {tc.network.pi}, vf {tc.network.vf}, {tc.network.activation}, centralised "
                  f"critic {tc.network.centralised_critic}",
                  f"- PPO: {json.dumps(dataclasses.asdict(tc.ppo))}",
                  f"- reward {tc.reward} x {tc.reward_scale}; shaping {json.dumps(dataclasses.asdict(tc.shaping))}"]
    return lines


def budget_note(total: float, budget: float) -> str:
    """The report's word on the time budget: a slower run is information (a loaded or slower machine), not a failure."""
    if total <= budget:
        return f"time budget {budget:.0f} s: within"
    return (f"time budget {budget:.0f} s, meant for an idle 2-core machine: {total - budget:.0f} s more here; "
            "a machine shared with other jobs, or a slower one, takes longer")
def overrides_of(argv: List[str]) -> List[str]:
    """The ``KEY=VALUE`` of every ``--set`` in a recorded command line, read by this command's own parser."""
    args, _ = _parser().parse_known_args([str(a) for a in argv])
    return list(args.overrides)


def continue_line(run: Path) -> str:
    """The command that takes an interrupted experiment in ``run`` on to its report."""
    return f"continue with: {handfoot_command()} experiment --resume {run}"


def trained(run: Path, cfg: ExperimentConfig) -> Optional[Dict[str, Any]]:
    """The training result of ``run`` if its training finished (``final`` at ``total_timesteps``), else None."""
    try:
        state = json.loads((run / "final" / "trainer.json").read_text())
    except (OSError, ValueError):
        return None
    steps = int(state.get("num_timesteps", 0))
    if steps < cfg.train.total_timesteps:
        return None
    return {"run": str(run), "timesteps": steps, "best_step": (state.get("state") or {}).get("best_step")}


def sessions_wall_s(run: Path) -> float:
    """The training sessions' wall time recorded in ``run.json`` (every session, resumed ones too)."""
    try:
        sessions = json.loads((run / "run.json").read_text()).get("sessions") or []
    except (OSError, ValueError):
        return 0.0
    return float(sum(s.get("wall_s") or 0.0 for s in sessions if isinstance(s, dict)))


def write_experiment_yaml(run: Path, cfg: ExperimentConfig) -> None:
    """The resolved experiment config, what ``--resume`` and ``--report`` read back."""
    import yaml
    (run / "experiment.yaml").write_text(yaml.safe_dump(
        {**{k: v for k, v in dataclasses.asdict(cfg).items() if k != "train"}, "train": config_to_dict(cfg.train)},
        sort_keys=False))


def report_again(run: Path, config: Optional[str] = None) -> Path:
    """``report.md`` written again from an experiment's run folder (``experiment.yaml``, ``run.json``,
    and ``experiment.json`` once evaluated), e.g. after the report's format changed; a folder whose
    training finished but whose evaluation has not run gets the report without its results.  A folder
    without ``experiment.yaml`` (an experiment stopped before they kept it) is read with ``config``."""
    run = Path(run)
    if not (run / "experiment.yaml").is_file() and config is None:
        raise ConfigError(f"--report: {str(run)!r} is not an experiment's run folder (no experiment.yaml); "
                          "for a folder of an earlier experiment name its config: handfoot experiment CONFIG "
                          "--report RUN")
    cfg = load_experiment_config(str(run / "experiment.yaml") if (run / "experiment.yaml").is_file() else config)
    if not (run / "experiment.json").is_file():
        result = trained(run, cfg)
        if result is None:
            raise ConfigError(f"--report: the training in {str(run)!r} has not finished; {continue_line(run)}")
        timings = {"train_s": sessions_wall_s(run), "eval_s": 0.0}
        timings["total_s"] = timings["train_s"]
        return write_report(run, cfg, result, {}, timings)
    summary = json.loads((run / "experiment.json").read_text())
    evals = summary.get("results") or {}
    for s in evals.values():                        # the run folder may have moved since
        s["results_dir"] = str(run / "experiment_eval" / Path(s["results_dir"]).name)
    return write_report(run, cfg, {"timesteps": summary["timesteps"], "best_step": summary.get("best_step")},
                        evals, summary["timings"])


def write_report(run: Path, cfg: ExperimentConfig, train_result: Dict[str, Any], evals: Dict[str, Dict[str, Any]],
                 timings: Dict[str, float]) -> Path:
    info = json.loads((run / "run.json").read_text()) if (run / "run.json").exists() else {}
    L: List[str] = [f"# Experiment `{cfg.name}`", ""]
    if cfg.description:
        L += [cfg.description.strip(), ""]
    if cfg.quick:
        L += ["**A smoke run** (`--quick`): the whole pipeline at a tiny budget "
              f"({cfg.train.total_timesteps:,} decisions, {cfg.evaluation.deals} deals per opponent), to see "
              "that every step works; its figures say nothing about what the recipe learns. The full run is "
              "the same command without `--quick`.", ""]
    changed = [a for a in overrides_of(info.get("argv") or []) if not a.startswith(("run_dir=", "train.run_name="))]
    if changed:
        L += ["Changed from the config file (`--set`; the description above is the file's): "
              + ", ".join(f"`{a}`" for a in changed) + ".", ""]
    total = timings.get("total_s", 0.0)
    L += ["## Summary", "",
          f"- run folder: `{run}`",
          f"- trained for {train_result['timesteps']:,} learner timesteps in {timings['train_s']:.0f} s; "
          f"evaluation {timings['eval_s']:.0f} s; total {total:.0f} s"
          + (f" ({budget_note(total, cfg.time_budget_s)})" if cfg.time_budget_s else ""),
          f"- best checkpoint: step {train_result.get('best_step')} (by `{cfg.train.evaluation.best_by}`)"
          + ("; the final weights are evaluated" if cfg.evaluation.model == "final" else ""),
          f"- evaluation: {cfg.evaluation.deals} duplicate deals ({2 * cfg.evaluation.deals} games) per opponent, "
          f"seed {cfg.evaluation.seed}, round-robin with {', '.join(cfg.evaluation.opponents)}", ""]
    if not evals:
        L += ["The evaluation has not run yet: " + continue_line(run).replace("continue with: ", "`", 1) + "`"
              " evaluates the trained weights and writes this report again.", ""]
    L += verdicts(evals) and [f"- {v}" for v in verdicts(evals)] + [""] or []
    L += ["## Results", "",
          "| model | opponent | games | win rate | 95% CI | ADP | ADP 95% CI |",
          "|---|---|---:|---:|---|---:|---|"]
    for model, s in evals.items():
        for spec, r in s["per_opponent"].items():
            L.append(f"| {model} | {spec} | {r['games']} | {fmt_pct(r['win_rate'])} | {fmt_ci_pct(r['win_rate_ci'])} | "
                     f"{fmt_adp(r['adp'])} | {fmt_ci_num(r['adp_ci'], signed=True)} |")
    L.append("")
    for model, s in evals.items():
        if s.get("ratings"):
            rs = ", ".join(f"{k} {v:.0f}" for k, v in sorted(s["ratings"].items(), key=lambda kv: -kv[1]))
            L.append(f"Elo ({model}; Bradley-Terry on the round-robin, random = {ELO_ANCHOR:.0f}): {rs}.")
    L += ["", "Win rate counts a draw as half a win; ADP is the average point difference per game (trained "
          "policy minus opponent).  The win rate's 95% CI: " + DEAL_INTERVAL_METHOD + "; ADP's: a t-interval over "
          "per-deal means (experiments.evaluation.stats; every deal's outcomes in the evaluation's deals.csv).  "
          "The trained policy plays greedily (argmax over the legal actions).", ""]
    L += ["## Learning curve", "", "![learning curve](learning_curve.png)", ""]
    for model, s in evals.items():
        d = Path(s["results_dir"])
        if (d / "winrate.png").exists():
            L += [f"![{model} win rates]({d.relative_to(run)}/winrate.png)", ""]
    tc = cfg.train
    L += ["## Training setup", "", *training_setup(tc), "",
          "Resolved config: `config.yaml`; seeds, versions and commit: `run.json`; TensorBoard: "
          f"`tensorboard --logdir {run / 'tb'}`.", ""]
    if info:
        L += ["## Environment", "", f"- git commit: `{info.get('git_commit')}`",
              f"- versions: {', '.join(f'{k} {v}' for k, v in info.get('versions', {}).items())}",
              f"- platform: {info.get('platform')}, {info.get('cpu_count')} CPUs", ""]
    out = run / "report.md"
    out.write_text("\n".join(L))
    return out


def print_summary(run: Path, evals: Dict[str, Dict[str, Any]], timings: Dict[str, float], file=None) -> None:
    out = file or sys.stdout
    console = Console(file=out, width=None if getattr(out, "isatty", lambda: False)() else 110)
    t = Table(title=f"experiment results ({run})")
    for col in ("model", "opponent", "games", "win rate", "95% CI", "ADP", "ADP 95% CI"):
        t.add_column(col, justify="right" if col in ("games", "win rate", "ADP") else "left")
    for model, s in evals.items():
        for spec, r in s["per_opponent"].items():
            t.add_row(model, spec, str(r["games"]), fmt_pct(r["win_rate"]), fmt_ci_pct(r["win_rate_ci"]),
                      fmt_adp(r["adp"]), fmt_ci_num(r["adp_ci"], signed=True))
    console.print(t)
    for model, s in evals.items():
        if s.get("elo") is not None:
            console.print(f"Elo of the {model} model (random = {ELO_ANCHOR:.0f}): {s['elo']:.0f}")
    console.print(f"time: train {timings['train_s']:.0f} s, evaluation {timings['eval_s']:.0f} s, "
                  f"total {timings['total_s']:.0f} s; report: {run / 'report.md'}")


# =========================================================================== pipeline
def run_experiment(cfg: ExperimentConfig, quiet: bool = False, argv: Optional[List[str]] = None,
                   resume: Optional[Path] = None) -> Dict[str, Any]:
    """Train, evaluate, report; returns ``{"run", "evals", "timings", ...}``.

    ``resume``: an experiment's run folder to take on from where it stopped (the training from its
    last checkpoint unless it finished; then the evaluation and the report).  Ctrl-C, or a training
    that stops with an error after its first checkpoint, leaves ``experiment.yaml`` in the run
    folder and ends with a ``KeyboardInterrupt`` (or the error) whose line ends in
    ``continue with: handfoot experiment --resume RUN``.
    """
    cfg.validate()
    if resume is not None:
        run = Path(resume)
    else:                                           # the run folder is chosen here, so that it is known if stopped
        tc = cfg.train
        run = fresh_path(Path(tc.run_dir) / (tc.run_name or f"{tc.name}-s{tc.seed}"))
        tc.run_dir, tc.run_name = str(run.parent), run.name
    before = sessions_wall_s(run) if resume is not None else 0.0
    warm_core(cfg.train)
    t0 = time.perf_counter()
    result = trained(run, cfg) if resume is not None else None
    if result is None:
        try:
            result = train(cfg.train, resume=str(run) if resume is not None else None, quiet=quiet, argv=argv)
        except (TrainingInterrupted, SamplersLost) as e:
            write_experiment_yaml(run, cfg)
            head = str(e).split("; continue with:", 1)[0]
            raise type(e)(f"{head}; {continue_line(run)}") from None
        except BaseException as e:                 # stopped before its first checkpoint, or an error
            if run.is_dir() and _has_checkpoint(run):
                write_experiment_yaml(run, cfg)
                if isinstance(e, KeyboardInterrupt):
                    raise KeyboardInterrupt(f"interrupted in training; {continue_line(run)}") from None
            elif isinstance(e, KeyboardInterrupt):
                raise KeyboardInterrupt("interrupted before the first checkpoint; nothing to continue: "
                                        "run the same command again") from None
            raise
    t1 = time.perf_counter()
    write_experiment_yaml(run, cfg)
    models = ["best", "final"] if cfg.evaluation.model == "both" else [cfg.evaluation.model]
    evals: Dict[str, Dict[str, Any]] = {}
    ev = cfg.evaluation
    try:
        for m in models:
            if not quiet:
                print(f"evaluating the {m} model against {', '.join(ev.opponents)} ({ev.deals} duplicate deals each)",
                      file=sys.stderr, flush=True)
            out = run / "experiment_eval" / m
            if out.exists():                        # an evaluation cut short before: played again from its start
                shutil.rmtree(out)
            evals[m] = evaluate_spec(f"policy:{run / m}", out, ev.opponents, cfg.train.rules, ev.deals, ev.seed,
                                     ev.workers, progress=cfg.train.progress and not quiet, plots=True)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"interrupted in the evaluation (the training is done, {run / 'final'}); "
                                f"{continue_line(run)}") from None
    t2 = time.perf_counter()
    timings = {"train_s": before + t1 - t0, "eval_s": t2 - t1}
    timings["total_s"] = timings["train_s"] + timings["eval_s"]
    summary = {"name": cfg.name, "run": str(run), "timesteps": result["timesteps"],
               "best_step": result.get("best_step"),
               "timings": timings, "evaluation": dataclasses.asdict(cfg.evaluation), "results": evals,
               "time_budget_s": cfg.time_budget_s}
    write_json(run / "experiment.json", summary)
    write_report(run, cfg, result, evals, timings)
    return summary


def _has_checkpoint(run: Path) -> bool:
    try:
        resolve_resume(run)
    except (ConfigError, OSError):
        return False
    return True


def resume_config(run: Path, config: Optional[str], overrides: List[str]) -> ExperimentConfig:
    """The config of an experiment to resume: its ``experiment.yaml`` (``--set`` changes it), else
    ``config`` (a run folder written before experiments kept their config)."""
    run = Path(run)
    if not run.is_dir():
        raise ConfigError(f"--resume {run}: no such folder")
    if (run / "experiment.yaml").is_file():
        return load_experiment_config(str(run / "experiment.yaml"), overrides)
    if config is None:
        raise ConfigError(f"--resume {run}: not an experiment's run folder (no experiment.yaml); "
                          "name its config too: handfoot experiment CONFIG --resume RUN")
    if not (run / "run.json").is_file():
        raise ConfigError(f"--resume {run}: not a run folder (no run.json)")
    return load_experiment_config(config, overrides)


def _parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="handfoot experiment",
                                description="Train a self-play agent, evaluate it and write report.md.")
    p.add_argument("config", nargs="?", help="experiment config YAML (configs/experiments/*.yaml)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a field, e.g. --set train.total_timesteps=50000 --set evaluation.deals=50")
    p.add_argument("--run-dir", help="parent folder of run folders")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--help-config", action="store_true", help="list every config field")
    p.add_argument("--report", metavar="RUN",
                   help="write report.md again from an experiment's run folder whose training finished, and exit")
    p.add_argument("--resume", metavar="RUN",
                   help="take an interrupted experiment on to its report: training from its last checkpoint "
                        "(unless finished), evaluation, report (the config is the run's experiment.yaml)")
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke run: the whole pipeline at a tiny budget ({QUICK_TIMESTEPS} decisions, "
                        f"{QUICK_DEALS} deals per opponent) in the run folder NAME-quick-sSEED")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="train with the samplers on Ray, as handfoot train --ray (docs/scaling_out.md)")
    return p


@command("experiment")
def experiment_main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.help_config:
        lines = describe_config(ExperimentConfig)
        print("\n".join(lines))
        return 0
    if args.report:
        print(report_again(Path(args.report), args.config))
        return 0
    if args.resume:
        cfg = resume_config(Path(args.resume), args.config, args.overrides)
    elif not args.config:
        raise ConfigError("an experiment config file is needed (or --resume RUN)")
    else:
        cfg = load_experiment_config(args.config, args.overrides)
        if args.quick:
            make_quick(cfg)
    if args.run_dir and not args.resume:
        cfg.train.run_dir = args.run_dir
    if args.ray is not None:
        from experiments.training.cli import use_ray
        use_ray(cfg.train, args.ray)
    summary = run_experiment(cfg, quiet=args.quiet, argv=["handfoot", "experiment"] + argv,
                             resume=Path(args.resume) if args.resume else None)
    print_summary(Path(summary["run"]), summary["results"], summary["timings"])
    if cfg.quick:
        print("a smoke run (--quick): it shows that every step works; its figures say nothing about what the "
              "recipe learns (the full run: the same command without --quick)")
    return 0


main = experiment_main

if __name__ == "__main__":
    sys.exit(experiment_main())
