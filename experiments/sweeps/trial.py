"""One trial of a sweep: its command line, its run folder's state, and the numbers it left.

A trial is a normal command of the project run as a subprocess in its own run folder
``SWEEP/trials/VARIANT-sSEED``:

* ``kind: experiment``: ``handfoot experiment BASE --set KEY=VALUE ... --set seed=S --set
  run_dir=SWEEP/trials --set train.run_name=VARIANT-sSEED`` (the variant's overrides go through
  the ``--set`` of the command itself); an interrupted trial is continued with ``--set
  train.resume=RUN`` (the project's own resume, from the last checkpoint);
* ``kind: evaluate``: ``handfoot evaluate RUN/config.yaml --out RUN`` with the resolved evaluation config
  (the base config, the overrides, the seed as the deal seed, ``out: RUN``).

A trial is finished when its result file is there (``experiment.json`` or ``results.json``,
written last, atomically); :func:`read_result` reads the metric and the rest of what the sweep
collects (win rate and ADP with their per-trial 95% intervals against every opponent, going-out
rate, the periodic evaluations of training as a learning curve).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from experiments.processes import exit_with_parent
from experiments.runs import write_text
from experiments.sweeps.config import Metric, Sweep, Trial, _set_args, evaluate_config

TRIALS = "trials"
LOGS = "logs"
RESULT_FILE = {"experiment": "experiment.json", "evaluate": "results.json"}


def run_folder(out: Path, trial: Trial) -> Path:
    return Path(out) / TRIALS / trial.name


def log_file(out: Path, trial: Trial) -> Path:
    return Path(out) / LOGS / f"{trial.name}.log"


def _handfoot() -> List[str]:
    return [sys.executable, "-m", "experiments.apps.cli"]


def has_checkpoint(run: Path) -> bool:
    """Whether an interrupted experiment trial can continue from a checkpoint of its own."""
    from experiments.runs import resolve_resume
    try:
        resolve_resume(run)
    except ValueError:
        return False
    return True


def trial_command(sweep: Sweep, trial: Trial, out: Path) -> List[str]:
    """The command that runs (or continues) ``trial``; prepares its run folder.

    A run folder left by an interrupted trial is continued from its last checkpoint when it has
    one (experiments), else started again from nothing (a folder without a checkpoint holds no
    finished work).
    """
    out = Path(out).resolve()
    run = run_folder(out, trial)
    if sweep.kind == "experiment":
        resume = run.is_dir() and has_checkpoint(run)
        if run.exists() and not resume:
            shutil.rmtree(run)
        sets = _set_args(trial.overrides) + [f"seed={trial.seed}", f"run_dir={json.dumps(str(out / TRIALS))}",
                                             f"train.run_name={json.dumps(trial.name)}"]
        if resume:
            sets.append(f"train.resume={json.dumps(str(run))}")
        cmd = _handfoot() + ["experiment", str(sweep.base), "--quiet"]
        for s in sets:
            cmd += ["--set", s]
        return cmd
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    cfg = evaluate_config(sweep.base, trial.overrides, trial.seed, out=str(run))
    data = dataclasses.asdict(cfg)
    if isinstance(data["rules"], str) and Path(data["rules"]).is_file():
        data["rules"] = str(Path(data["rules"]).resolve())
    write_text(run / "config.yaml", yaml.safe_dump(data, sort_keys=False))
    return _handfoot() + ["evaluate", str(run / "config.yaml"), "--out", str(run), "--no-progress", "--json"]


def is_finished(sweep: Sweep, out: Path, trial: Trial) -> bool:
    return (run_folder(out, trial) / RESULT_FILE[sweep.kind]).is_file()


def start_trial(sweep: Sweep, trial: Trial, out: Path, env: Optional[Dict[str, str]] = None,
                cwd: Optional[str] = None) -> subprocess.Popen:
    """Start ``trial`` as a subprocess (its own process group; output to ``logs/NAME.log``; in ``cwd``, by
    default this process's working directory, where relative paths in the configs are read)."""
    cmd = trial_command(sweep, trial, out)
    log = log_file(out, trial)
    log.parent.mkdir(parents=True, exist_ok=True)
    e = dict(os.environ if env is None else env)
    e.setdefault("OMP_NUM_THREADS", "1")
    e.setdefault("MKL_NUM_THREADS", "1")
    with open(log, "a") as f:
        f.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
        f.flush()
        return subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=e,
                                cwd=cwd, preexec_fn=_child_setup)


def _child_setup() -> None:
    """In the trial's process before it starts: a process group of its own (a Ctrl-C in the terminal
    reaches the sweep, which stops the trials itself), and an exit when the sweep dies, even by SIGKILL
    (Linux), so that a killed sweep leaves no trial running behind it."""
    os.setsid()
    exit_with_parent()


def stop_trial(proc: subprocess.Popen, grace_s: float = 60.0) -> None:
    """Ask a trial to stop as Ctrl-C would (SIGINT: training saves a checkpoint), then kill it."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def run_trial(sweep: Sweep, trial: Trial, out: Path) -> int:
    """Run one trial to its end in the foreground; its exit status (Ray Tune's trials use this)."""
    proc = start_trial(sweep, trial, out)
    try:
        return proc.wait()
    finally:
        stop_trial(proc)


def last_log_line(out: Path, trial: Trial) -> str:
    try:
        lines = [x for x in log_file(out, trial).read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


# ------------------------------------------------------------------------------ results
def _pair_side(res: Dict[str, Any], a: str, b: str) -> Optional[Dict[str, Any]]:
    """The numbers of the agent labelled ``a`` against ``b`` in a results.json (a duel or a round-robin's pair;
    labels are the specs, ``SPEC#2`` for a second copy)."""
    pairs = res.get("pairs") or ([res] if res.get("mode") == "duel" else [])
    for p in pairs:
        ag = list(p.get("agents") or res.get("agents") or [])
        if ag not in ([a, b], [b, a]):
            continue
        going = (p.get("per_agent") or {}).get(a, {}).get("going_out_rate")
        if ag == [a, b]:
            return {"win_rate": p["win_rate"], "win_rate_ci": p["win_rate_ci"], "adp": p["adp"],
                    "adp_ci": p["adp_ci"], "deals": p.get("deals"), "going_out_rate": going}
        ci, aci = p["win_rate_ci"], p["adp_ci"]
        return {"win_rate": 1.0 - p["win_rate"], "win_rate_ci": None if ci is None else [1 - ci[1], 1 - ci[0]],
                "adp": -p["adp"], "adp_ci": None if aci is None else [-aci[1], -aci[0]], "deals": p.get("deals"),
                "going_out_rate": going}
    return None


def _label(res: Dict[str, Any], spec: str, skip_first: bool = True) -> str:
    """The label of the first agent after the first whose spec is ``spec``."""
    specs, labels = list(res.get("specs") or []), list(res.get("agents") or [])
    for i in range(1 if skip_first else 0, len(specs)):
        if specs[i] == spec:
            return labels[i]
    return spec


def learning_curve(run: Path) -> List[Dict[str, Any]]:
    """The periodic evaluations of a training run (``metrics.jsonl`` rows of kind ``eval``)."""
    f = run / "metrics.jsonl"
    rows = []
    if not f.is_file():
        return rows
    for line in f.read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("kind") == "eval":
            rows.append({k: v for k, v in r.items() if k != "kind"})
    return rows


def curve_value(row: Dict[str, Any], metric: Metric, opponent: str) -> Optional[float]:
    """``metric`` in a periodic-evaluation row (``win_rate_vs_SPEC``, ``adp_vs_SPEC``), or None."""
    v = row.get(f"{metric.kind}_vs_{opponent}")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def read_result(sweep: Sweep, out: Path, trial: Trial) -> Dict[str, Any]:
    """The trial's row: ``{"value", "ci", "evaluation": {opponent: {...}}, "curve", "timings", ...}``."""
    run = run_folder(out, trial)
    m = sweep.metric
    if sweep.kind == "experiment":
        exp = json.loads((run / "experiment.json").read_text())
        results = exp.get("results") or {}
        model = "best" if "best" in results else next(iter(results))
        opponents = list(exp.get("evaluation", {}).get("opponents") or results[model]["per_opponent"])
        opp = m.opponent or opponents[0]
        per = results[model]["per_opponent"]
        ev: Dict[str, Any] = {}
        rdir = Path(results[model].get("results_dir") or "")
        rfile = rdir / "results.json" if rdir.is_absolute() else run / "experiment_eval" / model / "results.json"
        full = json.loads(rfile.read_text()) if rfile.is_file() else {}
        first = (full.get("agents") or [""])[0]
        for o, r in per.items():
            side = _pair_side(full, first, _label(full, o)) if full else None
            ev[o] = {"win_rate": r["win_rate"], "win_rate_ci": r["win_rate_ci"], "adp": r["adp"],
                     "adp_ci": r["adp_ci"], "deals": r.get("deals"),
                     "going_out_rate": side.get("going_out_rate") if side else None}
        curve = [{"timesteps": row.get("timesteps"), "value": curve_value(row, m, opp)}
                 for row in learning_curve(run)]
        row = ev[opp]
        return {"value": row[m.kind], "ci": row[f"{m.kind}_ci"], "opponent": opp, "model": model,
                "evaluation": ev, "curve": [c for c in curve if c["value"] is not None],
                "timesteps": exp.get("timesteps"), "timings": exp.get("timings")}
    res = json.loads((run / "results.json").read_text())
    labels = res["agents"]
    ev = {lab: _pair_side(res, labels[0], lab) for lab in labels[1:]}
    if m.opponent is None and res.get("mode") != "duel":
        ov = res["overall"][labels[0]]
        value, ci, opp = ov["win_rate"], ov["win_rate_ci"], None
    else:
        opp = _label(res, m.opponent) if m.opponent else labels[1]
        value, ci = ev[opp][m.kind], ev[opp][f"{m.kind}_ci"]
    out = {"value": value, "ci": ci, "opponent": opp, "evaluation": ev, "curve": [],
           "timings": {"total_s": (res.get("timing") or {}).get("elapsed_s")}}
    if res.get("sprt"):            # a sequential test (``sprt`` in the evaluation config): its decision
        out["sprt"] = res["sprt"]
    return out


__all__ = ["run_folder", "log_file", "trial_command", "start_trial", "stop_trial", "run_trial", "is_finished",
           "read_result", "learning_curve", "TRIALS", "RESULT_FILE"]
