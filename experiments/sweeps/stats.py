"""Statistics across seeds, after Agarwal et al. 2021 ("Deep RL at the Edge of the Statistical Precipice").

A sweep measures each variant once per seed; a seed is a sample from the variant's
distribution of outcomes, and the uncertainty across seeds is what decides whether one variant
is better than another.  Here, on numpy alone:

* point estimates: mean, median and the interquartile mean (IQM: the mean of the middle 50% of
  the runs, ``int(n / 4)`` runs trimmed from each end as ``scipy.stats.trim_mean(x, 0.25)``
  does), robust to an outlying seed and more efficient than the median;
* 95% percentile-bootstrap intervals over runs (:func:`bootstrap_ci`), stratified by task when
  a run has several scores (each task's runs are resampled on their own);
* the probability of improvement P(X > Y) (:func:`probability_of_improvement`): the chance that
  a run of X beats a run of Y, ties counted half (the Mann-Whitney U statistic over ``n * m``),
  with a bootstrap interval that resamples both sides;
* performance profiles (:func:`performance_profile`): the share of runs whose score exceeds each
  threshold, with a bootstrap band.

Every bootstrap draws from ``numpy.random.default_rng(seed)``: the same scores give the same
intervals, whatever ran the trials.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

REPS = 10_000
SEED = 0
CONFIDENCE = 0.95


def _runs(x: Sequence) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"scores must be runs or runs x tasks, got shape {a.shape}")
    return a


def iqm(x: Sequence, axis: Optional[int] = None) -> np.ndarray:
    """Interquartile mean: drop ``int(n / 4)`` values from each end, average the rest (all values pooled
    when ``axis`` is None)."""
    a = np.asarray(x, dtype=float)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    a = np.sort(a, axis=axis)
    n = a.shape[axis]
    cut = int(0.25 * n)
    return np.take(a, np.arange(cut, n - cut), axis=axis).mean(axis=axis)


def _stat_rows(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """A statistic of each row of a (reps, values) array."""
    if name == "mean":
        return lambda a: a.mean(axis=1)
    if name == "median":
        return lambda a: np.median(a, axis=1)
    if name == "iqm":
        return lambda a: iqm(a, axis=1)
    raise ValueError(f"unknown statistic {name!r} (mean, median, iqm)")


def point(x: Sequence, stat: str) -> float:
    a = _runs(x).reshape(1, -1)
    return float(_stat_rows(stat)(a)[0])


def resample(x: Sequence, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` stratified bootstrap samples of the runs: shape (reps, runs * tasks), each task's runs
    drawn with replacement from that task's runs."""
    a = _runs(x)
    n, t = a.shape
    idx = rng.integers(0, n, size=(reps, n, t))
    return np.take_along_axis(np.broadcast_to(a, (reps, n, t)), idx, axis=1).reshape(reps, n * t)


def _interval(samples: np.ndarray, confidence: float) -> List[float]:
    lo, hi = np.percentile(samples, [50 * (1 - confidence), 50 * (1 + confidence)])
    return [float(lo), float(hi)]


def bootstrap_ci(x: Sequence, stat: str = "iqm", reps: int = REPS, seed: int = SEED,
                 confidence: float = CONFIDENCE) -> Optional[List[float]]:
    """Percentile-bootstrap interval of ``stat`` (mean, median, iqm) over runs; None for fewer than 2 runs."""
    a = _runs(x)
    if a.shape[0] < 2:
        return None
    rng = np.random.default_rng(seed)
    return _interval(_stat_rows(stat)(resample(a, reps, rng)), confidence)


def summarize(x: Sequence, reps: int = REPS, seed: int = SEED, confidence: float = CONFIDENCE) -> Dict:
    """``{"n", "mean", "mean_ci", "median", "median_ci", "iqm", "iqm_ci", "std", "min", "max"}`` of the runs."""
    a = _runs(x)
    if a.size == 0:
        return {"n": 0, "mean": None, "mean_ci": None, "median": None, "median_ci": None, "iqm": None,
                "iqm_ci": None, "std": None, "min": None, "max": None}
    out: Dict = {"n": int(a.shape[0])}
    for i, stat in enumerate(("mean", "median", "iqm")):
        out[stat] = point(a, stat)
        out[f"{stat}_ci"] = bootstrap_ci(a, stat, reps, seed + i, confidence)
    flat = a.reshape(-1)
    out["std"] = float(flat.std(ddof=1)) if flat.size > 1 else None
    out["min"], out["max"] = float(flat.min()), float(flat.max())
    return out


def _poi(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(X > Y) + P(X = Y) / 2 for rows of x (reps, n) and y (reps, m)."""
    gt = (x[:, :, None] > y[:, None, :]).mean(axis=(1, 2))
    eq = (x[:, :, None] == y[:, None, :]).mean(axis=(1, 2))
    return gt + 0.5 * eq


def probability_of_improvement(x: Sequence[float], y: Sequence[float], reps: int = 2_000, seed: int = SEED,
                               confidence: float = CONFIDENCE) -> Dict:
    """``{"probability_of_improvement", "ci"}``: P(X > Y) over runs (ties half), with a bootstrap interval
    that resamples the runs of X and of Y independently (None for fewer than 2 runs on a side)."""
    a = np.asarray(x, dtype=float).reshape(-1)
    b = np.asarray(y, dtype=float).reshape(-1)
    if a.size == 0 or b.size == 0:
        return {"probability_of_improvement": None, "ci": None}
    p = float(_poi(a[None, :], b[None, :])[0])
    ci = None
    if a.size >= 2 and b.size >= 2:
        rng = np.random.default_rng(seed)
        xa = a[rng.integers(0, a.size, size=(reps, a.size))]
        yb = b[rng.integers(0, b.size, size=(reps, b.size))]
        ci = _interval(_poi(xa, yb), confidence)
    return {"probability_of_improvement": p, "ci": ci}


def performance_profile(x: Sequence, thresholds: Sequence[float], reps: int = 2_000, seed: int = SEED,
                        confidence: float = CONFIDENCE) -> Dict:
    """``{"thresholds", "fraction", "lo", "hi"}``: the share of runs scoring above each threshold, with a
    bootstrap band (``lo``/``hi`` equal ``fraction`` for a single run)."""
    a = _runs(x)
    t = np.asarray(thresholds, dtype=float)
    frac = (a.reshape(-1)[:, None] > t[None, :]).mean(axis=0)
    if a.shape[0] >= 2:
        rng = np.random.default_rng(seed)
        s = resample(a, reps, rng)
        fr = (s[:, :, None] > t[None, None, :]).mean(axis=1)
        lo, hi = np.percentile(fr, [50 * (1 - confidence), 50 * (1 + confidence)], axis=0)
    else:
        lo, hi = frac, frac
    return {"thresholds": t.tolist(), "fraction": frac.tolist(), "lo": np.asarray(lo).tolist(),
            "hi": np.asarray(hi).tolist()}


def curve_band(curves: Sequence[Sequence[float]], reps: int = 2_000, seed: int = SEED,
               confidence: float = CONFIDENCE) -> Dict:
    """IQM across runs at each point of aligned curves (runs x points), with a bootstrap band per point."""
    a = np.asarray(curves, dtype=float)
    if a.ndim != 2 or a.size == 0:
        return {"iqm": [], "lo": [], "hi": []}
    mid = iqm(a, axis=0)
    if a.shape[0] < 2:
        return {"iqm": mid.tolist(), "lo": mid.tolist(), "hi": mid.tolist()}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.shape[0], size=(reps, a.shape[0]))
    boot = iqm(a[idx], axis=1)                      # (reps, points)
    lo, hi = np.percentile(boot, [50 * (1 - confidence), 50 * (1 + confidence)], axis=0)
    return {"iqm": mid.tolist(), "lo": lo.tolist(), "hi": hi.tolist()}


__all__ = ["iqm", "point", "bootstrap_ci", "summarize", "probability_of_improvement", "performance_profile",
           "curve_band", "resample", "REPS", "SEED", "CONFIDENCE"]
