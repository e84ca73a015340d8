"""The bench's training rows: learner decisions/s of ``handfoot train`` per backend on one config.

Each backend runs a short and a long training (subprocesses, wall clock), interleaved: every
backend's short run, then every backend's long run, ``train.repeats`` times.  The rate at the
margin is (long - short decisions) / (long - short seconds), so start-up cost (imports, worker
processes, Ray) cancels; with several repeats a row reports the median of the repeats' margins
and their range.  Also: CPU milliseconds per decision at the margin (user + system time of the
training process and the worker processes it waits for; Ray's own processes are not counted),
and the peak resident memory of the long run's process tree (sum of VmRSS, sampled; shared pages
of forked workers counted in each).  ``configs/bench/train.yaml`` runs them
(``handfoot bench configs/bench/train.yaml``); they are not in the default rows.
"""
from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from experiments.bench.config import _train_config_path
from experiments.ray_cluster import have_ray


def _tree_rss(pid: int) -> Optional[int]:
    """Resident bytes of process ``pid`` and all its descendants (Linux /proc), or None."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    children: Dict[int, List[int]] = {}
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in (proc / str(p) / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def _train_once(config: Path, overrides: List[str], steps: int, out: Path) -> Dict[str, Any]:
    """One ``handfoot train`` subprocess of ``steps`` learner decisions: wall seconds, timesteps, peak RSS."""
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "experiments.apps.cli", "train", str(config), "--quiet", "--run-dir", str(out.parent),
           "--run-name", out.name, "--set", f"total_timesteps={steps}", "--set", "evaluation.every_timesteps=0",
           "--set", "evaluation.final_deals=0", "--set", "checkpoint_every=0", "--set", "progress=false"]
    for o in overrides:
        cmd += ["--set", o]
    peak = [0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.25):
            r = _tree_rss(proc.pid)
            if r:
                peak[0] = max(peak[0], r)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    done.set()
    watcher.join()
    if proc.returncode != 0:
        tail = (stderr or stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"handfoot train exited {proc.returncode}: {tail[0]}")
    state = json.loads((out / "final" / "trainer.json").read_text())
    return {"seconds": wall, "cpu_seconds": cpu, "timesteps": int(state["num_timesteps"]),
            "peak_rss_bytes": peak[0] or None}


def bench_train(cfg: Dict[str, Any], say: Callable[[str], None]) -> List[Dict[str, Any]]:
    """The ``train`` rows (see the module docstring): margin rate of each backend, ratio to sb3."""
    t = cfg["train"]
    config = _train_config_path(str(t["config"]))
    rows: List[Dict[str, Any]] = []
    for b in t["backends"]:
        rows.append({"id": f"train/{b}", "label": b, "overrides": list(t["set"]) + [f"backend={b}"]})
    for label, over in t["variants"].items():
        rows.append({"id": f"train/{label}", "label": label, "overrides": list(t["set"]) + list(over)})
    for r in rows:
        r.update(status="ok", short=[], long=[])
        if "backend=rllib" in r["overrides"]:
            if not have_ray():
                r["status"] = "not installed"
                r["hint"] = "pip install -e '.[ray]'"
    with tempfile.TemporaryDirectory(prefix="handfoot-bench-train-") as tmp:
        for rep in range(int(t["repeats"])):
            for size in ("short", "long"):
                for r in rows:
                    if r["status"] != "ok":
                        continue
                    say(f"{r['id']} ({size} run, {t[size]:,} decisions, repeat {rep + 1}/{t['repeats']})")
                    try:
                        r[size].append(_train_once(config, r["overrides"], int(t[size]), Path(tmp) / "run"))
                    except Exception as e:  # noqa: BLE001 - a failing row is reported, the others still run
                        r["status"] = f"error: {type(e).__name__}: {e}"
    base = None
    for r in rows:
        if r["status"] != "ok":
            continue
        # one margin per repeat (its short and long run); the median resists a disturbed run
        margins = [(lg["timesteps"] - sh["timesteps"]) / (lg["seconds"] - sh["seconds"])
                   for sh, lg in zip(r["short"], r["long"]) if lg["seconds"] > sh["seconds"]]
        r["margins_per_s"] = margins
        r["decisions_per_s"] = float(np.median(margins)) if margins else None
        cpu = [(lg["cpu_seconds"] - sh["cpu_seconds"]) / (lg["timesteps"] - sh["timesteps"]) * 1e3
               for sh, lg in zip(r["short"], r["long"])]
        r["cpu_ms_per_decision"] = float(np.median(cpu)) if cpu else None
        r["end_to_end_per_s"] = (sum(x["timesteps"] for x in r["long"]) / sum(x["seconds"] for x in r["long"]))
        r["peak_rss_bytes"] = max((x["peak_rss_bytes"] or 0) for x in r["long"]) or None
        if r["label"] == "sb3":
            base = r["decisions_per_s"]
    for r in rows:
        rate = r.get("decisions_per_s")
        r["vs_sb3"] = rate / base if (rate and base) else None
    if int(t.get("steady_updates") or 0) > 0:
        _steady_twins(rows, config, t, say)
    return rows


def _steady_twins(rows: List[Dict[str, Any]], config: Path, t: Dict[str, Any], say: Callable[[str], None]) -> None:
    """Each ``...-ray`` row and its ``...-processes`` twin once started (``train.steady_updates`` timed
    updates after two to warm up, the two alternating ``train.repeats`` times:
    :func:`experiments.bench.scaling.steady_rates`): ``steady_per_s`` on both rows.  Starting a Ray
    takes seconds, and on a busy machine much longer and unevenly, which the margin does not always
    cancel; this is the rate a long run sees."""
    from experiments.bench.scaling import steady_rates
    by_label = {r["label"]: r for r in rows}
    for r in rows:
        twin = by_label.get(r["label"][:-len("-ray")] + "-processes") if r["label"].endswith("-ray") else None
        if twin is None or r["status"] != "ok" or twin["status"] != "ok":
            continue
        say(f"{r['id']} and {twin['id']} once started ({t['steady_updates']} updates, {t['repeats']} repeats)")
        try:
            m = steady_rates(str(config), list(twin["overrides"]), 0, int(t["steady_updates"]), int(t["repeats"]))
        except Exception as e:  # noqa: BLE001 - reported on the row, the others stand
            r["steady_status"] = f"error: {type(e).__name__}: {e}"
            continue
        twin["steady_per_s"], r["steady_per_s"] = m["processes_per_s"], m["ray_per_s"]
        twin["steady_rates"], r["steady_rates"] = m["rates"]["processes"], m["rates"]["ray"]


TRAIN_TARGET = 4.0          # batched learner decisions/s over sb3's, same config, same run


CORE_TRAIN_TARGET = 1.5     # batched training on the compiled core over the reference core, same run
RAY_TRAIN_TARGET = 0.9      # samplers as Ray actors (a local Ray) over sampler processes, same count, same run


def _ratio_target(rate: Dict[str, Any], label: str, other: str, target: float, name: str,
                  measure: str = "at the margin") -> List[Dict[str, Any]]:
    """``label``'s learner decisions/s over ``other``'s against ``target`` (nothing when a rate is missing)."""
    if not (rate.get(label) and rate.get(other)):
        return []
    ratio = rate[label] / rate[other]
    return [{"target": f"training {label} >= {target}x {name} (learner decisions/s {measure})",
             "value": f"{ratio:.2f}x", "met": ratio >= target}]


def _twin_targets(rate: Dict[str, Any], suffix: str, twin_suffix: str, target: float,
                  only: Optional[str] = None, measure: str = "at the margin") -> List[Dict[str, Any]]:
    """Each row labelled ``...suffix`` (or just ``only``) over its ``...twin_suffix`` twin."""
    out: List[Dict[str, Any]] = []
    for label in ([only] if only else list(rate)):
        if label.endswith(suffix):
            twin = label[:-len(suffix)] + twin_suffix
            out += _ratio_target(rate, label, twin, target, twin, measure)
    return out


def train_targets(train_rows, baseline: Optional[str] = None) -> List[Dict[str, Any]]:
    """The training targets: batched over sb3; each ``...-ray`` row over its ``...-processes`` twin
    (samplers as Ray actors against processes); each ``...compiled`` row over its ``...reference``
    twin (the same settings on the other core) and over the ``baseline`` row when one is named
    (``train.baseline``: e.g. the reference core as training ran before the compiled core)."""
    out = []
    r = next((x for x in train_rows if x["label"] == "batched" and x.get("vs_sb3")), None)
    if r is not None:
        out.append({"target": f"training batched >= {TRAIN_TARGET:.0f}x sb3 (learner decisions/s at the margin)",
                    "value": f"{r['vs_sb3']:.2f}x", "met": r["vs_sb3"] >= TRAIN_TARGET})
    rate = {x["label"]: x.get("decisions_per_s") for x in train_rows}
    steady = {x["label"]: x["steady_per_s"] for x in train_rows if x.get("steady_per_s")}
    if steady:                  # Ray against processes once started, where the bench measured it
        out += _twin_targets(steady, "-ray", "-processes", RAY_TRAIN_TARGET, measure="once started")
    else:
        out += _twin_targets(rate, "-ray", "-processes", RAY_TRAIN_TARGET)
    for label in rate:          # a row labelled ...-compiled beside its ...-reference twin and the baseline
        if not label.endswith("compiled"):
            continue
        out += _twin_targets(rate, "compiled", "reference", CORE_TRAIN_TARGET, only=label)
        if baseline in rate:
            out += _ratio_target(rate, label, baseline, CORE_TRAIN_TARGET, f"the baseline {baseline}")
    return out


