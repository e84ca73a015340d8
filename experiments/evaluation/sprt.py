"""Sequential testing of a duel: the generalised SPRT on per-deal outcomes (``handfoot evaluate --sprt``).

Fishtest (Stockfish's testing framework) plays game pairs with colours swapped and treats each
pair's result as one pentanomial observation; a duplicate deal is the same unit here.  After
every deal, in deal order, the test computes the log-likelihood ratio of H1 ("A's win rate is
``h1``") against H0 ("it is ``h0``") over the outcomes seen so far
(:func:`experiments.evaluation.stats.deal_llr`: each hypothesis gets the maximum-likelihood
distribution of per-deal outcomes with its mean), and stops at the first deal where it leaves
Wald's bounds ``log(beta / (1 - alpha))`` (accept H0) and ``log((1 - beta) / alpha)`` (accept H1).
With no decision by the cap (``deals``), the decision is ``null``.

The stopping point is a function of the deals' outcomes in deal order alone: deals are played in
batches (over worker processes or Ray tasks), the first crossing is found deal by deal, and the
deals played past it are dropped (with their records); the same seed gives the same stopping
point, LLR and results whatever ``workers`` is or whether ``--ray`` is used.

Hypotheses (``--sprt`` tokens, or the ``sprt`` field of an evaluation config):

* ``--sprt`` alone (``sprt: true``): H0 0.5 against H1 0.55, alpha = beta = 0.05;
* win rates: ``--sprt h0=0.5 h1=0.6 alpha=0.05 beta=0.1`` (``sprt: {h0: 0.5, h1: 0.6, ...}``);
* Elo (logistic, a score ``1 / (1 + 10^(-elo/400))``): ``--sprt elo0=0 elo1=35``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from experiments.evaluation.stats import deal_llr_counts, llr_prior

#: the method named in results.json: fishtest's test, and the prior that differs from it
METHOD = ("generalised SPRT on per-deal outcomes (pentanomial, as fishtest's, with a prior of one virtual deal "
          "split between the outcomes 0 and 1 in the proportion of the hypotheses' midpoint where fishtest "
          "counts a zero as 1e-3), checked after every deal")
#: the outcomes of a duplicate deal (A's mean result over its two games)
PAIR_OUTCOMES = (0.0, 0.25, 0.5, 0.75, 1.0)
_KEYS = ("h0", "h1", "elo0", "elo1", "alpha", "beta")


def elo_to_score(elo: float) -> float:
    """The expected score (win rate, draws half) of an Elo difference ``elo`` (logistic)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    """The Elo difference of an expected score in (0, 1) (inverse of :func:`elo_to_score`)."""
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class Sprt:
    """A sequential test: H0 "A's win rate is ``h0``" against H1 "it is ``h1``" (``h0 < h1``), with the
    error rates ``alpha`` (accepting H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds)."""

    h0: float = 0.5
    h1: float = 0.55
    alpha: float = 0.05
    beta: float = 0.05
    #: the hypotheses as Elo differences, when they were given so (reported beside the win rates)
    elo: Optional[Tuple[float, float]] = None

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"h0": self.h0, "h1": self.h1, "alpha": self.alpha, "beta": self.beta}
        if self.elo is not None:
            out.update(elo0=self.elo[0], elo1=self.elo[1])
        return out


def _number(key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"sprt: {key} must be a number, got {v!r}")
    try:
        f = float(v)
    except ValueError:
        raise ValueError(f"sprt: {key} must be a number, got {v!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"sprt: {key} must be a finite number, got {v!r}")
    return f


def parse_sprt(value: Any) -> Optional[Sprt]:
    """The test a config field or the ``--sprt`` tokens ask for; None when off.

    ``value``: None/False (off), True or an empty list (the defaults), a mapping of ``h0``, ``h1``
    (win rates) or ``elo0``, ``elo1`` (Elo), ``alpha``, ``beta``, or a list of ``key=value`` tokens
    (the command line).  ValueError naming the problem otherwise.
    """
    if value is None or value is False:
        return None
    if value is True:
        return Sprt()
    if isinstance(value, (list, tuple)):
        fields: Dict[str, Any] = {}
        for tok in value:
            key, sep, v = str(tok).partition("=")
            if not sep:
                raise ValueError(f"sprt: expected KEY=VALUE ({', '.join(_KEYS)}), got {tok!r}")
            fields[key.strip()] = v.strip()
        value = fields
    if not isinstance(value, dict):
        raise ValueError(f"sprt: expected true, a mapping of {', '.join(_KEYS)} or KEY=VALUE tokens, got {value!r}")
    unknown = sorted(set(map(str, value)) - set(_KEYS))
    if unknown:
        raise ValueError(f"sprt: unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    f = {k: _number(k, v) for k, v in value.items()}
    has_rate, has_elo = {"h0", "h1"} & set(f), {"elo0", "elo1"} & set(f)
    if has_rate and has_elo:
        raise ValueError("sprt: give the hypotheses as win rates (h0, h1) or as Elo (elo0, elo1), not both")
    elo = None
    if has_elo:
        if len(has_elo) != 2:
            raise ValueError("sprt: Elo hypotheses need both elo0 and elo1")
        elo = (f["elo0"], f["elo1"])
        if not all(abs(e) < 2000 for e in elo):
            raise ValueError(f"sprt: Elo hypotheses must lie within +-2000, got {elo[0]:g} and {elo[1]:g}")
        h0, h1 = elo_to_score(elo[0]), elo_to_score(elo[1])
    else:
        if len(has_rate) == 1:
            raise ValueError("sprt: win-rate hypotheses need both h0 and h1")
        h0, h1 = f.get("h0", Sprt.h0), f.get("h1", Sprt.h1)
        for k, v in (("h0", h0), ("h1", h1)):
            if not 0.0 < v < 1.0:
                raise ValueError(f"sprt: {k} is a win rate strictly between 0 and 1, got {v:g}")
    if not h0 < h1:
        raise ValueError(f"sprt: H0 must be below H1 (h0 {h0:g}, h1 {h1:g})")
    alpha, beta = f.get("alpha", Sprt.alpha), f.get("beta", Sprt.beta)
    for k, v in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < v < 0.5:
            raise ValueError(f"sprt: {k} is an error rate strictly between 0 and 0.5, got {v:g}")
    return Sprt(h0, h1, alpha, beta, elo)


def deal_score(deal: Dict[str, Any]) -> float:
    """A's mean result over the games of one played deal (the harness's deal dict)."""
    outcomes = [g["outcome"] for g in deal["games"]]
    return sum(outcomes) / len(outcomes)


def llr_path(scores: Sequence[float], test: Sprt, counts: Optional[np.ndarray] = None
             ) -> Tuple[np.ndarray, np.ndarray]:
    """The LLR after each of ``scores`` (deal order), and the counts per outcome after the last.

    ``counts``: the counts of :data:`PAIR_OUTCOMES` (the prior included) before the first of
    ``scores``, for a path continued batch by batch (None: no deals yet, the prior alone).
    """
    x = np.asarray(PAIR_OUTCOMES)
    idx = np.searchsorted(x, np.asarray(scores, dtype=np.float64))
    if len(scores) and (idx.max() >= len(x) or not np.allclose(x[idx], scores)):
        raise ValueError("sprt: per-deal scores must be duplicate-deal outcomes (0, 1/4, 1/2, 3/4, 1)")
    start = np.zeros(len(x)) if counts is None else np.asarray(counts, dtype=np.float64)
    if counts is None:
        start[0], start[-1] = llr_prior(test.h0, test.h1)
    step = np.zeros((len(scores), len(x)))
    step[np.arange(len(scores)), idx] = 1.0
    cum = start[None, :] + np.cumsum(step, axis=0)
    if not len(scores):
        return np.zeros(0), start
    return deal_llr_counts(x, cum, test.h0, test.h1), cum[-1]


def decide(llr: float, test: Sprt) -> Optional[str]:
    """``"H1"`` at or above the upper bound, ``"H0"`` at or below the lower, else None."""
    if llr >= test.upper:
        return "H1"
    if llr <= test.lower:
        return "H0"
    return None


def first_decision(path: Sequence[float], test: Sprt) -> Optional[int]:
    """The index of the first LLR of ``path`` outside the bounds (None: none is)."""
    return next((i for i, v in enumerate(path) if decide(float(v), test) is not None), None)


def result(test: Sprt, llr: float, deals: int) -> Dict[str, Any]:
    """The ``sprt`` section of results.json."""
    return {"llr": round(float(llr), 6), "lower": round(test.lower, 6), "upper": round(test.upper, 6),
            "decision": decide(llr, test), "deals": deals, **test.to_dict(),
            "method": METHOD}


def run_sequential(test: Sprt, cap: int, batch: int, play: Callable[[int, int], List[Dict[str, Any]]]
                   ) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """Play deals ``[0, cap)`` in batches of ``batch`` with ``play(start, stop)`` (the deal dicts in deal
    order) until the test decides; ``(deals kept, sprt section)``.  The deals kept end at the first
    deal where the LLR left the bounds (or at the cap), whatever ``batch`` is."""
    kept: List[Dict[str, Any]] = []
    counts = None
    llr = 0.0
    for start in range(0, cap, batch):
        deals = play(start, min(cap, start + batch))
        path, counts = llr_path([deal_score(d) for d in deals], test, counts)
        i = first_decision(path, test)
        if i is not None:
            kept.extend(deals[:i + 1])
            return kept, result(test, path[i], len(kept))
        kept.extend(deals)
        if len(path):
            llr = path[-1]
    return kept, result(test, llr, len(kept))
