"""What a sweep leaves in its folder: ``sweep.json``, ``summary.csv``, ``trials.csv``, ``report.md``,
plots and TensorBoard's HParams view, all written from the trials' run folders.

:func:`write_summary` is called after every finished trial (``sweep.json`` and the CSVs, so a
sweep that is still running or was stopped shows what it has) and at the end with the plots,
``report.md`` and the HParams runs; ``handfoot sweep --report DIR`` calls it on demand.

Two kinds of uncertainty appear and are kept apart: the interval of each trial's own
evaluation (duplicate deals: the per-deal interval of ``experiments.evaluation.stats``) stays in
the trial rows; the intervals of the variants' summaries are bootstrap intervals over seeds
(:mod:`experiments.sweeps.stats`), the uncertainty that decides a comparison.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from experiments.runs import write_json, write_text
from experiments.sweeps import stats
from experiments.sweeps.config import Sweep, Trial
from experiments.sweeps.trial import is_finished, log_file, read_result, run_folder

STATE = "state.json"          # statuses the runner records (failed trials, timings); the folders decide the rest
THRESHOLDS = 101


def read_state(out: Path) -> Dict[str, Any]:
    f = Path(out) / STATE
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return {}


def record_state(out: Path, trial: Trial, **fields: Any) -> None:
    st = read_state(out)
    st.setdefault("trials", {}).setdefault(trial.name, {}).update(fields)
    write_json(Path(out) / STATE, st)


def record_timing(out: Path, **fields: Any) -> None:
    """Add a session's timing to ``state.json`` (kept by every later summary): the sessions' wall times add up."""
    st = read_state(out)
    t = st.setdefault("timing", {})
    sessions = t.setdefault("sessions", [])
    sessions.append(fields)
    t["wall_s"] = round(sum(float(x.get("wall_s") or 0) for x in sessions), 1)
    write_json(Path(out) / STATE, st)


def collect(sweep: Sweep, out: Path) -> List[Dict[str, Any]]:
    """One entry per variant: ``{"name", "overrides", "trials": [row, ...]}`` (rows in seed order)."""
    st = read_state(out).get("trials", {})
    before = _previous_rows(out)
    variants = []
    for v in sweep.variants:
        rows = []
        for s in sweep.seeds:
            t = Trial(v.name, s, {**sweep.overrides, **v.overrides})
            rel = str(run_folder(Path("."), t))
            info = st.get(t.name, {})
            row: Dict[str, Any] = {"seed": s, "status": info.get("status", "pending"), "value": None, "run": rel}
            if is_finished(sweep, out, t):
                try:
                    r = read_result(sweep, out, t)
                except (OSError, ValueError, KeyError, TypeError, IndexError, StopIteration) as e:
                    row.update(status="failed", error=f"unreadable result: {type(e).__name__}: {e}")
                else:
                    row.update(status="done", **r)
                    _carry_over(row, before.get((v.name, s)))
            elif info.get("status") == "done" and isinstance(info.get("result"), dict):
                row.update(status="done", **info["result"])         # reported by a Ray node (experiments.sweeps.tune)
            elif info.get("status") == "done":
                row["status"] = "pending"
            for k in ("error", "attempts", "wall_s"):
                if k in info and k not in row:
                    row[k] = info[k]
            if row["status"] in ("failed", "running", "interrupted") and "log" not in row:
                row["log"] = str(log_file(Path("."), t))
            rows.append(row)
        variants.append({"name": v.name, "overrides": v.overrides, "trials": rows})
    return variants


def _previous_rows(out: Path) -> Dict[Any, Dict[str, Any]]:
    """The done rows of the folder's ``sweep.json`` as written before, by (variant, seed)."""
    try:
        data = json.loads((Path(out) / "sweep.json").read_text())
        return {(v["name"], r["seed"]): r for v in data.get("variants", []) for r in v.get("trials", [])
                if isinstance(r, dict) and r.get("status") == "done"}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def _carry_over(row: Dict[str, Any], old: Optional[Dict[str, Any]]) -> None:
    """Keep what an earlier ``sweep.json`` knew of a finished trial whose folder no longer holds it: a
    published trial folder keeps its results but not ``metrics.jsonl`` (the learning curve) or the
    evaluation folder (the going-out rates).  Only for the same result (the same value and interval)."""
    if not old or old.get("value") != row.get("value") or old.get("ci") != row.get("ci"):
        return
    if not row.get("curve") and old.get("curve"):
        row["curve"] = old["curve"]
    for o, e in (row.get("evaluation") or {}).items():
        prev = (old.get("evaluation") or {}).get(o) or {}
        if isinstance(e, dict) and e.get("going_out_rate") is None and prev.get("going_out_rate") is not None:
            e["going_out_rate"] = prev["going_out_rate"]


def _values(variant: Dict[str, Any]) -> List[float]:
    return [float(r["value"]) for r in variant["trials"] if r["status"] == "done" and r["value"] is not None]


def summary_data(sweep: Sweep, out: Path) -> Dict[str, Any]:
    """The content of ``sweep.json`` (docs/interface.md, "Sweeps")."""
    variants = collect(sweep, out)
    for v in variants:
        v["summary"] = stats.summarize(_values(v))
    comparisons = []
    for a, b in itertools.permutations(variants, 2):
        xa, xb = _values(a), _values(b)
        comparisons.append({"a": a["name"], "b": b["name"], **stats.probability_of_improvement(xa, xb)})
    allv = [x for v in variants for x in _values(v)]
    profile = {}
    if allv:
        lo, hi = (0.0, 1.0) if sweep.metric.kind == "win_rate" else (min(allv), max(allv))
        th = np.linspace(lo, hi, THRESHOLDS)
        profile = {"thresholds": th.tolist(),
                   "variants": {v["name"]: {k: p for k, p in stats.performance_profile(_values(v), th).items()
                                            if k != "thresholds"} for v in variants if _values(v)}}
    counts: Dict[str, int] = {}
    for v in variants:
        for r in v["trials"]:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {
        "name": sweep.name, "kind": sweep.kind, "metric": sweep.metric.name,
        "description": sweep.description, "base": _shown(sweep.base), "seeds": sweep.seeds,
        "overrides": sweep.overrides, "variants": variants, "comparisons": comparisons,
        "performance_profile": profile, "status": counts,
        "method": {"confidence": stats.CONFIDENCE, "bootstrap": "percentile bootstrap over seeds (runs), "
                   f"{stats.REPS} resamples for the summaries, 2000 for comparisons and profiles, numpy "
                   f"default_rng seeds {stats.SEED}..{stats.SEED + 2}",
                   "iqm": "mean of the middle 50% of the runs (int(n/4) trimmed from each end)",
                   "probability_of_improvement": "P(run of a > run of b) + P(equal) / 2, over all pairs of runs",
                   "trial_ci": "each trial's own evaluation interval (duplicate deals), not an interval over seeds"},
    }


def _shown(p: Path) -> str:
    try:
        return str(Path(p).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


# ------------------------------------------------------------------------------ files
def _fmt(x: Optional[float], pct: bool) -> str:
    if x is None:
        return "n/a"
    return f"{100 * x:.1f}%" if pct else f"{x:+,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _fci(ci: Optional[List[float]], pct: bool) -> str:
    return "n/a" if not ci else f"[{_fmt(ci[0], pct)}, {_fmt(ci[1], pct)}]"


def _csv(rows: List[Dict[str, Any]], cols: List[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c) for c in cols})
    return buf.getvalue()


def summary_csv(data: Dict[str, Any]) -> str:
    rows = []
    for v in data["variants"]:
        s = v["summary"]
        row = {"variant": v["name"], "overrides": json.dumps(v["overrides"]), "n": s["n"]}
        for stat in ("mean", "median", "iqm"):
            ci = s[f"{stat}_ci"] or [None, None]
            row.update({stat: s[stat], f"{stat}_lo": ci[0], f"{stat}_hi": ci[1]})
        row.update(std=s["std"], min=s["min"], max=s["max"])
        rows.append(row)
    cols = ["variant", "overrides", "n", "mean", "mean_lo", "mean_hi", "median", "median_lo", "median_hi", "iqm",
            "iqm_lo", "iqm_hi", "std", "min", "max"]
    return _csv(rows, cols)


def trials_csv(data: Dict[str, Any]) -> str:
    rows = []
    for v in data["variants"]:
        for r in v["trials"]:
            ci = r.get("ci") or [None, None]
            rows.append({"variant": v["name"], "seed": r["seed"], "status": r["status"], "value": r["value"],
                         "trial_lo": ci[0], "trial_hi": ci[1],
                         "wall_s": r.get("wall_s", (r.get("timings") or {}).get("total_s")),
                         "run": r["run"]})
    return _csv(rows, ["variant", "seed", "status", "value", "trial_lo", "trial_hi", "wall_s", "run"])


def report_md(data: Dict[str, Any], plots: List[str]) -> str:
    pct = data["metric"].startswith("win_rate")
    m = data["metric"]
    L = [f"# Sweep `{data['name']}`", ""]
    if data.get("description"):
        L += [data["description"], ""]
    n_trials = sum(len(v["trials"]) for v in data["variants"])
    counts = ", ".join(f"{k} {n}" for k, n in sorted(data["status"].items()))
    L += [f"- kind `{data['kind']}`, base `{data['base']}`; {len(data['variants'])} variant(s) x "
          f"{len(data['seeds'])} seed(s) = {n_trials} trials ({counts})",
          f"- metric `{m}`" + (" (the evaluated checkpoint against that opponent)" if data["kind"] == "experiment"
                               else " (the first agent; the seed is the deal seed)"),
          f"- overrides for every trial: `{json.dumps(data['overrides'])}`" if data["overrides"] else None]
    tm = data.get("timing") or {}
    for i, ses in enumerate(tm.get("sessions") or []):
        if ses.get("ray"):
            how = "Ray Tune" + (f", {ses.get('nodes')} node(s), {ses.get('cluster_cpus'):.0f} CPUs"
                                if ses.get("nodes") else "")
        else:
            how = f"{ses.get('parallel')} at once"
        minutes = float(ses.get("wall_s") or 0) / 60
        L.append(f"- session {i + 1}: {ses.get('trials_run')} trial(s) in {minutes:.1f} min "
                 f"({how}{'; stopped' if ses.get('stopped') else ''}){'; ' + ses['where'] if ses.get('where') else ''}")
    L.append("")
    L += ["## Variants (across seeds)", "",
          "| variant | overrides | seeds | mean | 95% CI | median | 95% CI | IQM | 95% CI |",
          "|---|---|---:|---:|---|---:|---|---:|---|"]
    for v in data["variants"]:
        s = v["summary"]
        L.append(f"| {v['name']} | `{json.dumps(v['overrides'])}` | {s['n']} | {_fmt(s['mean'], pct)} | "
                 f"{_fci(s['mean_ci'], pct)} | {_fmt(s['median'], pct)} | {_fci(s['median_ci'], pct)} | "
                 f"{_fmt(s['iqm'], pct)} | {_fci(s['iqm_ci'], pct)} |")
    L += ["", "Intervals in this table are 95% percentile-bootstrap intervals over seeds (each seed one run; "
          "the uncertainty that decides a comparison between variants). IQM: the mean of the middle 50% of the "
          "seeds.", ""]
    if len(data["variants"]) > 1:
        L += ["## Probability of improvement", "", "P(X > Y): the chance that a seed of X scores above a seed of Y "
              "(ties half), with a 95% bootstrap interval over seeds; each pair once (P(Y > X) = 1 - P(X > Y)).", "",
              "| X | Y | P(X > Y) | 95% CI |", "|---|---|---:|---|"]
        order = [v["name"] for v in data["variants"]]
        for c in data["comparisons"]:
            if order.index(c["a"]) > order.index(c["b"]):
                continue                                    # P(b > a) = 1 - P(a > b)
            p, ci = c["probability_of_improvement"], c["ci"]
            ps = "n/a" if p is None else f"{p:.2f}"
            cs = "n/a" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
            L.append(f"| {c['a']} | {c['b']} | {ps} | {cs} |")
        L.append("")
    L += ["## Trials", "", "Each trial's value with its own evaluation's 95% interval (duplicate deals of that one "
          "run: not an interval over seeds).", "",
          "| variant | seed | status | value | trial 95% CI | wall s | run |", "|---|---:|---|---:|---|---:|---|"]
    for v in data["variants"]:
        for r in v["trials"]:
            w = r.get("wall_s", (r.get("timings") or {}).get("total_s"))
            L.append(f"| {v['name']} | {r['seed']} | {r['status']} | {_fmt(r['value'], pct)} | "
                     f"{_fci(r.get('ci'), pct)} | {'' if w is None else f'{w:.0f}'} | `{r['run']}` |")
    L.append("")
    if plots:
        L += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    L += ["Files: `sweep.json` (everything above), `summary.csv`, `trials.csv`; every trial's run folder under "
          "`trials/`, its log under `logs/`; TensorBoard HParams: `tensorboard --logdir tb`.", ""]
    return "\n".join(x for x in L if x is not None)


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, ax, title: str, out: Path, name: str, written: List[str]) -> None:
    """Title ``ax``, write ``fig`` as ``out/name`` and close it; ``name`` joins ``written``."""
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    written.append(name)


def write_plots(data: Dict[str, Any], out: Path) -> List[str]:
    """``variants.png`` (seeds and the IQM with its interval), ``profile.png`` and ``curves.png``; the names written."""
    variants = [v for v in data["variants"] if _values(v)]
    if not variants:
        return []
    plt = _pyplot()
    pct = data["metric"].startswith("win_rate")
    scale = 100.0 if pct else 1.0
    unit = f"{data['metric']}{' (%)' if pct else ''}"
    written = []
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(variants) + 2), 4))
    for i, v in enumerate(variants):
        xs = np.asarray(_values(v)) * scale
        ax.scatter(np.full(xs.size, i) + np.linspace(-0.12, 0.12, xs.size), xs, s=14, color="0.55", zorder=2)
        s = v["summary"]
        ci = s["iqm_ci"] or [s["iqm"], s["iqm"]]
        ax.errorbar(i + 0.28, s["iqm"] * scale, yerr=[[(s["iqm"] - ci[0]) * scale], [(ci[1] - s["iqm"]) * scale]],
                    fmt="o", color="C0", capsize=4, zorder=3)
    ax.set_xticks(range(len(variants)), [v["name"] for v in variants], rotation=20, ha="right")
    ax.set_ylabel(unit)
    _save(plt, fig, ax, f"{data['name']}: seeds (grey) and IQM with 95% bootstrap CI", out, "variants.png", written)
    prof = data.get("performance_profile") or {}
    if prof:
        th = np.asarray(prof["thresholds"]) * scale
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, v in enumerate(variants):
            p = prof["variants"].get(v["name"])
            if not p:
                continue
            ax.step(th, p["fraction"], where="post", color=f"C{i}", label=v["name"])
            ax.fill_between(th, p["lo"], p["hi"], step="post", color=f"C{i}", alpha=0.15)
        ax.set_xlabel(f"threshold of {unit}")
        ax.set_ylabel("share of seeds above")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8)
        _save(plt, fig, ax, "performance profiles (95% bootstrap bands)", out, "profile.png", written)
    curves = {}
    for v in variants:
        cs = [r.get("curve") or [] for r in v["trials"] if r["status"] == "done"]
        cs = [c for c in cs if c]
        if not cs:
            continue
        k = min(len(c) for c in cs)
        steps = [c[i]["timesteps"] for i, c in itertools.product(range(k), cs[:1])]
        band = stats.curve_band([[c[i]["value"] for i in range(k)] for c in cs])
        curves[v["name"]] = (steps, band, len(cs))
    if curves:
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (name, (steps, band, n)) in enumerate(curves.items()):
            ax.plot(steps, np.asarray(band["iqm"]) * scale, color=f"C{i}", marker="o", label=f"{name} ({n} seeds)")
            ax.fill_between(steps, np.asarray(band["lo"]) * scale, np.asarray(band["hi"]) * scale, color=f"C{i}",
                            alpha=0.15)
        ax.set_xlabel("learner decisions")
        ax.set_ylabel(f"periodic evaluation: {unit}")
        ax.legend(fontsize=8)
        _save(plt, fig, ax, "learning curves: IQM across seeds, 95% bootstrap band", out, "curves.png", written)
    return written


def _hparam(v: Any) -> Any:
    if isinstance(v, bool) or isinstance(v, (int, float, str)):
        return v
    return json.dumps(v)


def write_hparams(data: Dict[str, Any], out: Path) -> None:
    """One TensorBoard run per finished trial under ``out/tb`` with its overrides and seed as hyperparameters,
    its value as the metric and its learning curve as scalars (TensorBoard's HParams view compares them)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return
    tb = out / "tb"
    metric = f"sweep/{data['metric'].replace(':', '_vs_')}"
    for v in data["variants"]:
        for r in v["trials"]:
            if r["status"] != "done" or r["value"] is None:
                continue
            d = tb / f"{v['name']}-s{r['seed']}"
            if d.exists():
                import shutil
                shutil.rmtree(d)
            hp = {"variant": v["name"], "seed": r["seed"], **{k: _hparam(x) for k, x in v["overrides"].items()}}
            with SummaryWriter(log_dir=str(d)) as w:
                for c in r.get("curve") or []:
                    w.add_scalar(f"{metric}/periodic", c["value"], c["timesteps"])
                w.add_hparams(hp, {metric: float(r["value"])}, run_name=".")


def write_summary(sweep: Sweep, out: Path, final: bool = True) -> Dict[str, Any]:
    """Write ``sweep.json``, ``summary.csv`` and ``trials.csv`` (and, when ``final``, the plots, report.md and
    the HParams runs); returns the sweep.json data."""
    out = Path(out)
    data = summary_data(sweep, out)
    st = read_state(out)
    if st.get("timing"):
        data["timing"] = st["timing"]
    data["written"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_json(out / "sweep.json", data)
    write_text(out / "summary.csv", summary_csv(data))
    write_text(out / "trials.csv", trials_csv(data))
    if final:
        plots = write_plots(data, out)
        write_text(out / "report.md", report_md(data, plots))
        write_hparams(data, out)
    return data


__all__ = ["write_summary", "summary_data", "collect", "report_md", "record_state", "record_timing", "read_state"]
