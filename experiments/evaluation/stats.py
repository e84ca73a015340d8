"""Statistics of duplicate matches: per-deal intervals and likelihood ratios, t and Wilson intervals,
per-deal pair statistics, Bradley-Terry ratings.

The unit of a duplicate match is the deal: its two games (sides swapped) share the cards, so A's
mean result over them, ``0, 1/4, 1/2, 3/4`` or ``1`` (the pentanomial outcome of a game pair, as in
chess engine testing), is one independent observation.  The win rate's interval
(:func:`deal_interval`) and the sequential test's log-likelihood ratio (:func:`deal_llr`) are two
uses of one likelihood: the multinomial over the distinct per-deal outcomes, maximised under the
constraint that its mean be ``mu`` (the profile, or empirical, likelihood of the mean).  The
constrained maximum is the observed distribution tilted as ``q_i ~ p_i / (1 + eta * x_i)``, one
parameter ``eta`` per ``mu``, so every bound is a one-dimensional search.
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from handfoot_env.melds import BOOK_TYPE_NAMES

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (table to 30, then Cornish-Fisher)."""
    if df < 1:
        return float("nan")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def mean_ci(values: Sequence[float], lo: Optional[float] = None, hi: Optional[float] = None
            ) -> Tuple[float, Optional[List[float]]]:
    """Mean and 95% t-interval of ``values`` (each one independent observation), optionally clipped."""
    n = len(values)
    if n == 0:
        return float("nan"), None
    m = math.fsum(values) / n
    if n < 2:
        return m, None
    var = math.fsum((x - m) ** 2 for x in values) / (n - 1)
    half = t975(n - 1) * math.sqrt(var / n)
    a, b = m - half, m + half
    if lo is not None:
        a = max(lo, a)
    if hi is not None:
        b = min(hi, b)
    return m, [a, b]


def wilson_ci(p: float, n: int, z: float = 1.959963984540054) -> Optional[List[float]]:
    """Wilson score interval of a proportion ``p`` observed over ``n`` trials."""
    if n < 1:
        return None
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


# ---------------------------------------------------------------------------------- per-deal likelihood
#: the weight of one pseudo-observation put at each end (0 and 1) of the per-deal outcomes: it keeps the
#: likelihood defined for every mean in (0, 1) when every deal had the same result (a 100% record)
#: while moving no interval of a real sample by more than ~1e-4
END_WEIGHT = 1e-3
#: the method named in every evaluation report
DEAL_INTERVAL_METHOD = ("profile-likelihood interval of the mean per-deal outcome (empirical likelihood over the "
                        "deals' pair means 0, 1/4, 1/2, 3/4, 1; chi-square(1) calibration)")
_BISECT = 64
#: the search range of ``t`` (see :func:`_tilt`): exp(-60) ~ 1e-26 puts the mean within 1e-20 of an end
_T_MAX = 60.0


#: the sequential test's prior: one virtual deal, split between the outcomes 0 and 1 in the proportion
#: of the hypotheses' midpoint (as the ratings add one virtual draw per pair).  It keeps a short run of
#: one outcome (say five split deals in a row) from settling the test on its own
LLR_PRIOR = 1.0


def llr_prior(mu0: float, mu1: float) -> Tuple[float, float]:
    """The prior weights of the outcomes 0 and 1 in the LLR of ``mu0`` against ``mu1``."""
    m = 0.5 * (mu0 + mu1)
    return LLR_PRIOR * (1.0 - m), LLR_PRIOR * m


def _support(scores: Any, ends: Tuple[float, float] = (END_WEIGHT, END_WEIGHT)) -> Tuple[np.ndarray, np.ndarray]:
    """The distinct per-deal outcomes with 0 and 1 added, and their counts (the ends weighted ``ends``
    more): ``(x, counts)``; ValueError for a score outside [0, 1]."""
    a = np.asarray(scores, dtype=np.float64).reshape(-1)
    if a.size and not (np.all(np.isfinite(a)) and a.min() >= 0.0 and a.max() <= 1.0):
        raise ValueError("per-deal scores must lie in [0, 1] (A's mean result over the deal's games)")
    x, counts = np.unique(np.concatenate([a, [0.0, 1.0]]), return_counts=True)
    counts = counts.astype(np.float64)
    counts[0] += ends[0] - 1.0
    counts[-1] += ends[1] - 1.0
    return x, counts


def _tilt(x: np.ndarray, t: np.ndarray, up: Any) -> np.ndarray:
    """The divisors ``1 + eta * x`` (rows) of the tilt with ``eta = -1 + exp(-t)`` where ``up`` (the mean
    pushed towards 1 as ``t`` grows) and ``eta = exp(t) - 1`` elsewhere (towards 0); written so that
    no divisor rounds to 0."""
    t = t[:, None]
    up = np.asarray(up)[:, None] if np.ndim(up) else up
    return np.where(up, (1.0 - x) + x * np.exp(-t), 1.0 + np.expm1(t) * x)


def _tilted(x: np.ndarray, p: np.ndarray, g: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(mu, -2 log R / n)`` of the distributions ``p`` (rows) on ``x`` tilted by the divisors ``g``:
    ``q ~ p / g``, the likelihood's maximum among distributions with mean ``mu``."""
    w = p / g
    s = w.sum(axis=1)
    mu = (w * x).sum(axis=1) / s
    dev = 2.0 * (p * (np.log(s)[:, None] + np.log(g))).sum(axis=1)
    return mu, dev


def _normalised(counts: Any) -> Tuple[np.ndarray, np.ndarray]:
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    n = c.sum(axis=1)
    return c / n[:, None], n


def _bound(x: np.ndarray, p: np.ndarray, crit: np.ndarray, up: bool) -> np.ndarray:
    """The end (upper when ``up``) of the set of means whose deviance is at most ``crit`` (rows)."""
    lo, hi = np.zeros(p.shape[0]), np.full(p.shape[0], _T_MAX)
    for _ in range(_BISECT):          # the deviance grows with t
        mid = 0.5 * (lo + hi)
        inside = _tilted(x, p, _tilt(x, mid, up))[1] <= crit
        lo = np.where(inside, mid, lo)
        hi = np.where(inside, hi, mid)
    return _tilted(x, p, _tilt(x, lo, up))[0]


def deal_interval_counts(x: Any, counts: Any, level: float = 0.95) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`deal_interval` of many samples at once: ``counts[r, i]`` deals of sample ``r`` had the
    outcome ``x[i]`` (``x`` ascending, from 0 to 1; the counts include the end weights).  Arrays
    ``(low, high)``, one entry per sample."""
    x = np.asarray(x, dtype=np.float64)
    p, n = _normalised(counts)
    crit = NormalDist().inv_cdf(0.5 + level / 2.0) ** 2 / n        # chi-square(1) quantile, per deal
    lo, hi = _bound(x, p, crit, False), _bound(x, p, crit, True)
    # every deal the same outcome v: the likelihood ratio has nothing to weigh, so the bounds are the
    # exact ones.  A mean mu > v allows P(outcome v) <= (1 - mu) / (1 - v) (the rest at 1), and all n
    # deals at v has probability below (1 - level) / 2 beyond mu = 1 - (1 - v) a; likewise below
    real = np.atleast_2d(np.asarray(counts, dtype=np.float64)).copy()
    real[:, 0] -= END_WEIGHT
    real[:, -1] -= END_WEIGHT
    seen = real > 0.5
    single = seen.sum(axis=1) == 1
    if single.any():
        v = x[np.argmax(seen, axis=1)]
        a = ((1.0 - level) / 2.0) ** (1.0 / np.maximum(real.sum(axis=1), 1.0))
        lo = np.where(single, v * a, lo)
        hi = np.where(single, 1.0 - (1.0 - v) * a, hi)
    return lo, hi


def deal_interval(scores: Sequence[float], level: float = 0.95) -> Tuple[float, float]:
    """The ``level`` confidence interval of A's win rate from per-deal scores (A's mean result over
    each deal's games: 1 win, 0.5 draw, 0 loss; in a duplicate deal one of 0, 1/4, 1/2, 3/4, 1).

    The profile-likelihood (empirical-likelihood) interval of the mean: every ``mu`` whose
    likelihood ratio against the observed mean passes the chi-square(1) test at ``level``.  It is
    as narrow as a t-interval over the deals where that one is valid, but, unlike it, stays inside
    [0, 1], follows the skew of a lopsided match and does not collapse to a point when every deal
    had the same result (then the bounds are the exact ones).  Coverage measured by simulation
    (tests/test_deal_statistics.py): within 0.93-0.97 from 50 deals on for win rates up to 90%, at
    least 0.92 above.  Its weakest case is a match whose deals are only won or lost outright (both
    games the same way: the binomial case), where, like every binomial likelihood-ratio interval, it
    dips to about 0.90 at some win rates near 0.9 with 50 deals.  No deals: ``(0.0, 1.0)``.
    """
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    x, counts = _support(scores)
    if len(scores) == 0:
        return 0.0, 1.0
    lo, hi = deal_interval_counts(x, counts[None, :], level)
    return _clean(float(lo[0])), _clean(float(hi[0]))


def _clean(v: float) -> float:
    """A bound within 1e-12 of an end is that end (the search stops 1e-20 short of it)."""
    return 0.0 if v < 1e-12 else 1.0 if v > 1.0 - 1e-12 else v


def _mean_tilt(x: np.ndarray, p: np.ndarray, mu: float) -> np.ndarray:
    """The divisors of the tilt (per row of ``p``) whose mean is ``mu`` (0 < mu < 1): the constrained
    maximum of the likelihood."""
    up = (p * x).sum(axis=1) < mu
    lo, hi = np.zeros(p.shape[0]), np.full(p.shape[0], _T_MAX)
    for _ in range(_BISECT):          # the mean moves away from the observed one as t grows
        mid = 0.5 * (lo + hi)
        m = _tilted(x, p, _tilt(x, mid, up))[0]
        short = np.where(up, m < mu, m > mu)
        lo = np.where(short, mid, lo)
        hi = np.where(short, hi, mid)
    return _tilt(x, 0.5 * (lo + hi), up)


def deal_llr_counts(x: Any, counts: Any, mu0: float, mu1: float) -> np.ndarray:
    """:func:`deal_llr` of many samples at once (``counts`` as for :func:`deal_interval_counts`)."""
    x = np.asarray(x, dtype=np.float64)
    p, n = _normalised(counts)
    d0 = _tilted(x, p, _mean_tilt(x, p, mu0))[1]
    d1 = _tilted(x, p, _mean_tilt(x, p, mu1))[1]
    return 0.5 * n * (d0 - d1)


def deal_llr(scores: Sequence[float], mu0: float, mu1: float) -> float:
    """The log-likelihood ratio of "the mean per-deal score is ``mu1``" against "it is ``mu0``": the
    generalised SPRT statistic of fishtest's pentanomial test, over the deals' observed outcomes
    (each hypothesis gets the maximum-likelihood distribution with its mean) and :func:`llr_prior`."""
    if not (0.0 < mu0 < 1.0 and 0.0 < mu1 < 1.0):
        raise ValueError(f"hypotheses must lie strictly between 0 and 1, got {mu0!r} and {mu1!r}")
    x, counts = _support(scores, llr_prior(mu0, mu1))
    return float(deal_llr_counts(x, counts[None, :], mu0, mu1)[0])


def win_rate_ci(pair_means: Sequence[float]) -> Tuple[float, Optional[List[float]]]:
    """Win rate and its 95% interval over per-deal pair means (:func:`deal_interval`); ``(nan, None)``
    without deals."""
    if len(pair_means) == 0:
        return float("nan"), None
    return math.fsum(pair_means) / len(pair_means), list(deal_interval(pair_means))


def pair_stats(deals: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Win rate, ADP and per-side counters of a pairing from its per-deal results (deal order)."""
    outcomes = [[g["outcome"] for g in d["games"]] for d in deals]
    diffs = [[g["diff"] for g in d["games"]] for d in deals]
    pair_wr = [sum(o) / len(o) for o in outcomes]
    pair_adp = [sum(x) / len(x) for x in diffs]
    n_games = sum(len(o) for o in outcomes)
    wr, wr_ci = win_rate_ci(pair_wr)
    adp, adp_ci = mean_ci(pair_adp)
    wins = [sum(1 for o in outcomes for x in o if x == 1.0), sum(1 for o in outcomes for x in o if x == 0.0)]
    draws = n_games - wins[0] - wins[1]
    per_side = []
    for side in range(2):
        tot = {"books": [0, 0, 0], "went_out": 0, "rounds": 0, "actions": 0, "pickups": 0}
        for d in deals:
            for g in d["games"]:
                st = g["stats"][side]
                for k in range(3):
                    tot["books"][k] += st["books"][k]
                for key in ("went_out", "rounds", "actions", "pickups"):
                    tot[key] += st[key]
        per_side.append({
            **{f"{BOOK_TYPE_NAMES[k]}_books_per_game": tot["books"][k] / n_games for k in range(3)},
            "books_per_game": sum(tot["books"]) / n_games,
            "going_out_rate": tot["went_out"] / tot["rounds"] if tot["rounds"] else 0.0,
            "pickups_per_game": tot["pickups"] / n_games,
            "actions_per_game": tot["actions"] / n_games,
            "mean_score": sum(g["score"][side] for d in deals for g in d["games"]) / n_games,
        })
    return {
        "deals": len(deals),
        "games": n_games,
        "wins": wins,
        "draws": draws,
        "win_rate": wr,
        "win_rate_ci": wr_ci,
        "adp": adp,
        "adp_ci": adp_ci,
        "per_side": per_side,
        "pair_win_rates": pair_wr,
    }


#: the project's one Elo anchor: ``random`` is rated 1000 in every report, plot and TensorBoard tag
ELO_ANCHOR = 1000.0
ANCHOR_SPEC = "random"


def anchor_ratings(ratings: Dict[str, float], specs: Dict[str, str]) -> Tuple[Dict[str, float], str]:
    """Shift Elo-scale ``ratings`` (by label) so that the agent with spec ``random`` sits at :data:`ELO_ANCHOR`.

    ``specs`` maps each label to its spec.  Returns the ratings and a phrase naming the scale:
    ``"random = 1000"``, or ``"mean 1500"`` when ``random`` did not play (nothing to anchor on).
    """
    anchor = next((label for label, spec in specs.items() if spec == ANCHOR_SPEC), None)
    if anchor is None:
        return dict(ratings), "mean 1500 (random did not play, so there is no anchor)"
    shift = ELO_ANCHOR - ratings[anchor]
    return {k: v + shift for k, v in ratings.items()}, f"{ANCHOR_SPEC} = {ELO_ANCHOR:.0f}"


def bradley_terry_elo(names: Sequence[str], wins: Dict[Tuple[int, int], float], games: Dict[Tuple[int, int], int],
                      iterations: int = 2000) -> List[float]:
    """Elo-scale Bradley-Terry ratings (mean 1500) from pairwise wins (draws as halves).

    ``wins[(i, j)]`` is i's score against j over ``games[(i, j)]`` games; one virtual draw is
    added to every played pair.
    """
    k = len(names)
    w = [[0.0] * k for _ in range(k)]
    n = [[0.0] * k for _ in range(k)]
    for (i, j), g in games.items():
        w[i][j] += wins[(i, j)] + 0.5
        w[j][i] += g - wins[(i, j)] + 0.5
        n[i][j] += g + 1
        n[j][i] += g + 1
    p = [1.0] * k
    for _ in range(iterations):
        new = []
        for i in range(k):
            num = sum(w[i][j] for j in range(k) if j != i)
            den = sum(n[i][j] / (p[i] + p[j]) for j in range(k) if j != i and n[i][j])
            new.append(num / den if den > 0 else p[i])
        gm = math.exp(sum(math.log(x) for x in new) / k)
        p = [x / gm for x in new]
    elo = [400.0 * math.log10(x) for x in p]
    shift = 1500.0 - sum(elo) / k
    return [e + shift for e in elo]


def bradley_terry_elo_batch(k: int, pairs: Sequence[Tuple[int, int]], wins: Any, games: Any,
                            iterations: int = 2000) -> np.ndarray:
    """:func:`bradley_terry_elo` for many samples at once (a bootstrap): ratings of shape ``(B, k)``.

    ``wins[b, p]`` is the score of ``pairs[p][0]`` against ``pairs[p][1]`` in sample ``b`` over
    ``games[b, p]`` games (or ``games[p]`` for every sample); the same virtual draw, iterations and
    mean-1500 scale as the single fit.
    """
    wins = np.atleast_2d(np.asarray(wins, dtype=np.float64))
    b = wins.shape[0]
    games = np.broadcast_to(np.asarray(games, dtype=np.float64), wins.shape)
    w = np.zeros((b, k, k))
    n = np.zeros((b, k, k))
    for idx, (i, j) in enumerate(pairs):
        w[:, i, j] += wins[:, idx] + 0.5
        w[:, j, i] += games[:, idx] - wins[:, idx] + 0.5
        n[:, i, j] += games[:, idx] + 1
        n[:, j, i] += games[:, idx] + 1
    num = w.sum(axis=2)
    p = np.ones((b, k))
    for _ in range(iterations):
        den = (n / (p[:, :, None] + p[:, None, :])).sum(axis=2)
        new = np.where(den > 0, num / np.where(den > 0, den, 1.0), p)
        p = new / np.exp(np.log(new).mean(axis=1, keepdims=True))
    elo = 400.0 * np.log10(p)
    return elo + (1500.0 - elo.mean(axis=1, keepdims=True))
