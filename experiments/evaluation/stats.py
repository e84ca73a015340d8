"""Statistics of duplicate matches: t and Wilson intervals, per-deal pair statistics, Bradley-Terry ratings.
"""
from __future__ import annotations

import math
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


def win_rate_ci(pair_means: Sequence[float]) -> Tuple[float, Optional[List[float]]]:
    """Win rate and its 95% CI over per-deal pair means.

    The t-interval over deals collapses to a point when every deal has the same outcome
    (a 100% record); the interval reported is therefore the union of the t-interval and the
    Wilson score interval with one trial per deal, which stays honest at the boundaries.
    """
    m, ci = mean_ci(pair_means, 0.0, 1.0)
    w = wilson_ci(m, len(pair_means)) if pair_means else None
    if ci is None or w is None:
        return m, ci
    return m, [min(ci[0], w[0]), max(ci[1], w[1])]


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
