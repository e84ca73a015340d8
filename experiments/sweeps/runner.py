"""The sweep folder, and the trials run on this machine (``--parallel N`` at once).

A sweep folder holds ``sweep_config.yaml`` (the sweep config it was started with, the base
config's path made absolute; a copy of the base as it was is kept as ``base.yaml``),
``trials/VARIANT-sSEED/`` (one run folder per trial), ``logs/``, ``state.json`` (what the runner
knows beyond the folders: failures, attempts, wall times) and the summary files (:mod:`experiments.sweeps.report`).

Stop and resume: Ctrl-C (or SIGTERM) stops the running trials as Ctrl-C stops a training run
(it saves a checkpoint) and writes the summary; a killed sweep takes its trials with it.
``--resume`` runs what is not finished: a finished trial (its result file is there) is never run
again, an interrupted one continues from its last checkpoint.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

from experiments.config import ConfigError, read_yaml
from experiments.runs import write_text
from experiments.sweeps.config import Sweep, Trial, sweep_from_dict
from experiments.sweeps.report import record_state, record_timing, write_summary
from experiments.sweeps.trial import is_finished, last_log_line, start_trial, stop_trial

CONFIG = "sweep_config.yaml"
BASE = "base.yaml"
POLL_S = 0.5


def default_out(sweep: Sweep) -> Path:
    return Path("runs") / "sweeps" / sweep.name


def default_parallel(sweep: Sweep) -> int:
    """Trials at once when ``--parallel`` is not given: the cores over the CPUs one trial uses."""
    return max(1, int((os.cpu_count() or 1) // max(sweep.cpus, 1e-9)))


def _stored(sweep: Sweep) -> Dict[str, Any]:
    d = sweep.to_dict()
    d.pop("base")
    return d


def _added(kept: Sweep, sweep: Sweep, out: Path) -> Optional[str]:
    """What ``sweep`` adds to the sweep ``kept`` in ``out`` ("variant rr and seed 6"), when it differs from
    it only by new variants or new seeds (and its description) and its base file holds the same config
    as the stored copy; None otherwise."""
    old, new = _stored(kept), _stored(sweep)
    for key in old:
        if key not in ("variants", "seeds", "description") and old[key] != new.get(key):
            return None
    if any(new["variants"].get(name) != overrides for name, overrides in old["variants"].items()):
        return None
    if not set(old["seeds"]) <= set(new["seeds"]):
        return None
    if read_yaml(Path(sweep.base)) != read_yaml(out / BASE):      # the same config; comments may differ
        return None
    variants = [name for name in new["variants"] if name not in old["variants"]]
    seeds = [s for s in new["seeds"] if s not in old["seeds"]]
    parts = ([("variant " if len(variants) == 1 else "variants ") + ", ".join(variants)] if variants else []) + \
            ([("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))] if seeds else [])
    return " and ".join(parts) or "a new description"


def prepare_folder(sweep: Optional[Sweep], out: Path, resume: bool) -> Sweep:
    """The sweep to run in ``out``: a new folder is set up (``sweep.yaml``, ``base.yaml``); ``resume``
    reads the stored config, checked against ``sweep`` when a config was given too: a config that only
    adds variants or seeds (same base, same everything else) extends the sweep, and the finished trials
    are kept."""
    out = Path(out)
    stored = out / CONFIG
    if resume:
        if not stored.is_file():
            raise ConfigError(f"--resume: {str(out)!r} is not a sweep folder (no {CONFIG}); start it without --resume")
        kept = load_folder(out)
        if sweep is None or _stored(sweep) == _stored(kept):
            return kept
        added = _added(kept, sweep, out)
        if added is None:
            raise ConfigError(f"--resume: the config differs from the one {str(out)!r} was started with "
                              f"({out / CONFIG}) in more than added variants or seeds; resume with --out {out} "
                              "--resume alone, or use another --out")
        data = sweep.to_dict()
        data["base"] = str(kept.base)                  # the base path the sweep was started with (same config)
        write_text(out / CONFIG, yaml.safe_dump(data, sort_keys=False))
        print(f"[sweep] {sweep.name}: extended with {added}; the finished trials are kept", file=sys.stderr)
        return load_folder(out)
    if sweep is None:
        raise ConfigError("a sweep config is needed (or --out DIR --resume, or --report DIR)")
    if stored.exists() or (out.exists() and any(out.iterdir())):
        raise ConfigError(f"--out {out}: the folder exists; continue it with --resume, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sweep.base, out / BASE)           # a record of the base as it was (trials read sweep.base)
    data = sweep.to_dict()
    write_text(out / CONFIG, yaml.safe_dump(data, sort_keys=False))
    return load_folder(out)


def load_folder(out: Path, check_trials: bool = False) -> Sweep:
    """The sweep stored in a sweep folder (its ``base.yaml`` copy as the base)."""
    out = Path(out)
    if not (out / CONFIG).is_file():
        raise ConfigError(f"{str(out)!r} is not a sweep folder (no {CONFIG})")
    data = read_yaml(out / CONFIG)
    search = data.pop("search", None)                 # its samples are the stored variants
    data["resources"] = data.get("resources") or {}
    if data.get("scheduler") is None:
        data.pop("scheduler", None)
    sweep = sweep_from_dict(data, out / CONFIG, check_trials=check_trials)
    if search is not None:
        sweep.search = search
    return sweep


def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(f"[sweep {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class _Terminate(Exception):
    pass


def run_local(sweep: Sweep, out: Path, parallel: int, quiet: bool = False) -> Dict[str, Any]:
    """Run every unfinished trial, ``parallel`` at once; the sweep.json data at the end.

    A failed trial is run again up to ``sweep.retries`` times; Ctrl-C / SIGTERM stop the running
    trials (they save a checkpoint), write the summary and raise ``KeyboardInterrupt``.
    """
    out = Path(out)
    trials = sweep.trials()
    pending: List[Trial] = [t for t in trials if not is_finished(sweep, out, t)]
    done0 = len(trials) - len(pending)
    _log(f"{sweep.name}: {len(trials)} trials, {done0} finished before, {len(pending)} to run, {parallel} at once; "
         f"folder {out}", quiet)
    running: Dict[str, Any] = {}
    attempts: Dict[str, int] = {}
    t_start = time.time()

    # Ctrl-C and SIGTERM set a flag that the loop reads (an exception raised by the handler could land
    # inside the fork of a trial, where Python's at-fork handlers swallow it)
    stop: List[int] = []

    def on_signal(signum, frame):
        stop.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)} if _main_thread() else {}
    try:
        while (pending or running) and not stop:
            while pending and len(running) < parallel and not stop:
                t = pending.pop(0)
                attempts[t.name] = attempts.get(t.name, 0) + 1
                record_state(out, t, status="running", attempts=attempts[t.name])
                _log(f"start {t.name}" + (f" (attempt {attempts[t.name]})" if attempts[t.name] > 1 else ""), quiet)
                running[t.name] = (t, start_trial(sweep, t, out), time.time())
            time.sleep(POLL_S)
            for name, (t, proc, t0) in list(running.items()):
                rc = proc.poll()
                if rc is None:
                    continue
                del running[name]
                wall = round(time.time() - t0, 1)
                if rc == 0 and is_finished(sweep, out, t):
                    record_state(out, t, status="done", wall_s=wall, error=None)
                    _log(f"done {name} in {wall:.0f} s", quiet)
                    write_summary(sweep, out, final=False)
                elif attempts[name] <= sweep.retries:
                    _log(f"failed {name} (exit {rc}): {last_log_line(out, t)}; running it again", quiet)
                    pending.insert(0, t)
                else:
                    err = f"exit status {rc}: {last_log_line(out, t)}"
                    record_state(out, t, status="failed", wall_s=wall, error=err)
                    _log(f"FAILED {name}: {err}", quiet)
        if stop:
            raise _Terminate()
    except (KeyboardInterrupt, _Terminate):
        _log(f"stopping {len(running)} running trial(s) (they save a checkpoint)...", quiet)
        for name, (t, proc, _) in running.items():
            stop_trial(proc)
            record_state(out, t, status="interrupted")
        record_timing(out, wall_s=round(time.time() - t_start, 1), parallel=parallel, trials_run=len(attempts),
                      started=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t_start)), where=_machine(),
                      stopped=True)
        write_summary(sweep, out, final=True)
        raise KeyboardInterrupt(f"stopped; {out / 'sweep.json'} has the finished trials; continue with "
                                f"handfoot sweep --out {out} --resume") from None
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)
    record_timing(out, wall_s=round(time.time() - t_start, 1), parallel=parallel, trials_run=len(attempts),
                  started=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t_start)), where=_machine())
    return write_summary(sweep, out, final=True)


def _machine() -> str:
    import platform
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load average {os.getloadavg()[0]:.1f} at the end"
    return f"{platform.node()}: {os.cpu_count()} CPUs, {platform.platform()}{load}"


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


__all__ = ["run_local", "prepare_folder", "load_folder", "default_out", "default_parallel", "CONFIG"]
