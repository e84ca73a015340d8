"""``handfoot sweep CONFIG --ray [ADDRESS]``: the trials of a sweep as Ray Tune trials.

Each unfinished trial is one Tune trial (a grid over the trial list) with ``resources.cpus`` CPUs;
the Tune trial runs the same subprocess as the local runner (:func:`experiments.sweeps.trial.start_trial`)
in the same run folder, reports every periodic evaluation of training to Tune (the metric
against its opponent, for ``scheduler: {name: asha}``) and the trial's result at the end.  A
failed trial is run again ``retries`` times (Tune's ``FailureConfig``); Tune's experiment state
is kept in ``SWEEP/tune``.  The numbers are the trials' own, so the summary is the same as with
the local runner.

The cluster: ``ADDRESS`` (else ``RAY_ADDRESS``) joins a running cluster
(:func:`experiments.ray_cluster.init_ray`); without one a private local Ray is started with this
machine's CPUs.  On a cluster of several machines the sweep folder should be on a filesystem every
node mounts at the same path (NFS): the trials write their run folders there; where it is not,
the result of every trial still comes back to this machine with its Tune report (``state.json``)
and the summary is complete, while the run folders stay on the nodes that ran them
(docs/scaling_out.md).
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from experiments.config import ConfigError
from experiments.sweeps.config import Sweep, Trial
from experiments.sweeps.report import read_state, record_state, record_timing, write_summary
from experiments.sweeps.trial import (is_finished, last_log_line, learning_curve, curve_value, read_result,
                                      run_folder, start_trial, stop_trial)

POLL_S = 1.0


class TrialFailed(RuntimeError):
    pass


def _run_tune_trial(config: Dict[str, Any], sweep: Sweep, out: str, cwd: str) -> None:
    """The Tune trainable: run one trial, report its periodic evaluations and its result."""
    from ray import tune
    t = Trial(config["variant"], int(config["seed"]), dict(config["overrides"]))
    outp = Path(out)
    run = run_folder(outp, t)
    opp = sweep.metric.opponent
    proc = start_trial(sweep, t, outp, cwd=cwd if os.path.isdir(cwd) else None)
    t0 = time.time()
    seen = 0
    try:
        while proc.poll() is None:
            time.sleep(POLL_S)
            if sweep.kind != "experiment":
                continue
            rows = learning_curve(run)
            for row in rows[seen:]:
                v = curve_value(row, sweep.metric, opp) if opp else None
                if v is not None:
                    tune.report({"value": v, "timesteps": row.get("timesteps"), "final": False})
            seen = len(rows)
        rc = proc.returncode
        if rc != 0 or not is_finished(sweep, outp, t):
            raise TrialFailed(f"trial {t.name} exited with status {rc}: {last_log_line(outp, t)}")
        row = read_result(sweep, outp, t)
        tune.report({"value": row["value"], "final": True, "row": row, "wall_s": round(time.time() - t0, 1),
                     "trial": t.name})
    finally:
        stop_trial(proc)


def _scheduler(sweep: Sweep):
    if not sweep.scheduler or sweep.scheduler.get("name") == "fifo":
        return None
    from ray.tune.schedulers import ASHAScheduler
    s = sweep.scheduler
    kw: Dict[str, Any] = {"time_attr": "training_iteration", "grace_period": int(s.get("grace_period", 1)),
                          "reduction_factor": float(s.get("reduction_factor", 2))}
    if s.get("max_t"):
        kw["max_t"] = int(s["max_t"])
    return ASHAScheduler(**kw)


def run_tune(sweep: Sweep, out: Path, address: Optional[str], quiet: bool = False) -> Dict[str, Any]:
    """Run the unfinished trials of ``sweep`` on Ray Tune; the sweep.json data at the end."""
    from experiments.ray_cluster import have_ray, init_ray, shutdown_ray
    if not have_ray():
        raise ConfigError("--ray needs Ray: pip install 'handfoot[ray]' (ray[rllib]==2.60.0)")
    out = Path(out).resolve()
    st = read_state(out).get("trials", {})
    trials: List[Trial] = [t for t in sweep.trials() if not is_finished(sweep, out, t)
                           and st.get(t.name, {}).get("status") not in ("done", "stopped")]
    started = init_ray(address, quiet=quiet)
    from ray import tune
    try:
        if quiet:
            for name in ("ray", "ray.tune", "ray.train"):
                logging.getLogger(name).setLevel(logging.ERROR)
        t_start = time.time()
        if trials:
            for t in trials:
                record_state(out, t, status="running")
            space = {"trial": tune.grid_search([{"variant": t.variant, "seed": t.seed, "overrides": t.overrides}
                                                for t in trials])}
            fn = tune.with_parameters(_trainable, sweep=sweep, out=str(out), cwd=os.getcwd())
            fn = tune.with_resources(fn, {"cpu": sweep.cpus})
            sched = _scheduler(sweep)
            tuner = tune.Tuner(
                fn, param_space=space,
                tune_config=tune.TuneConfig(metric="value" if sched else None, mode="max" if sched else None,
                                            scheduler=sched,
                                            trial_dirname_creator=lambda tr: _trial_name(tr.config)),
                run_config=tune.RunConfig(name=sweep.name, storage_path=str(out / "tune"),
                                          failure_config=tune.FailureConfig(max_failures=sweep.retries),
                                          verbose=0 if quiet else 1))
            grid = tuner.fit()
            for res in grid:
                name = _trial_name(res.config)
                t = next(x for x in trials if x.name == name)
                m = res.metrics or {}
                if res.error is not None:
                    record_state(out, t, status="failed", error=" ".join(str(res.error).split())[-300:])
                elif m.get("final"):
                    fields: Dict[str, Any] = {"status": "done", "wall_s": m.get("wall_s"), "error": None}
                    if not is_finished(sweep, out, t):        # a node without the shared folder: keep its report
                        fields["result"] = m.get("row")
                    record_state(out, t, **fields)
                else:
                    record_state(out, t, status="stopped", value=m.get("value"),
                                 error="stopped early by the scheduler")
        import ray
        record_timing(out, wall_s=round(time.time() - t_start, 1), ray=True, trials_run=len(trials),
                      cluster_cpus=ray.cluster_resources().get("CPU"), nodes=len(ray.nodes()))
        return write_summary(sweep, out, final=True)
    finally:
        if started:
            shutdown_ray()


def _trial_name(config: Dict[str, Any]) -> str:
    c = config["trial"]
    return f"{c['variant']}-s{c['seed']}"


def _trainable(config: Dict[str, Any], sweep: Sweep, out: str, cwd: str) -> None:
    _run_tune_trial(config["trial"], sweep, out, cwd)


__all__ = ["run_tune"]
