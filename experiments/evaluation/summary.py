"""A learner's evaluation in one summary: win rate and ADP against each opponent and an Elo rating
(random = 1000), as training logs it and reports show it.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List

from agents.policy import ACTOR_FILE, save_actor
from experiments.evaluation.harness import EvalConfig, run_evaluation
from experiments.evaluation.stats import ELO_ANCHOR



def evaluate_policy(weights: Dict[str, Any], out_dir: Path, cfg: Any, rules: str, deals: int,
                    label: str = "learner", progress: bool = False) -> Dict[str, Any]:
    """Evaluate actor ``weights`` with the duplicate harness: round-robin with ``cfg.opponents``.

    The actor is written to ``out_dir/actor.npz`` and played as ``policy:out_dir``.  Returns
    ``{"per_opponent": {spec: {win_rate, win_rate_ci, adp, adp_ci}}, "elo", "results"}``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    save_actor(weights, out_dir / ACTOR_FILE)
    return evaluate_spec(f"policy:{out_dir}", out_dir, cfg.opponents, rules, deals, cfg.seed, cfg.workers,
                         progress=progress)


def evaluate_spec(spec: str, out_dir: Path, opponents: List[str], rules: str, deals: int, seed: int,
                  workers: int, progress: bool = False, plots: bool = False) -> Dict[str, Any]:
    """Round-robin of ``spec`` with ``opponents`` (experiments.evaluation); the learner's numbers per opponent."""
    agents = [spec] + [o for o in opponents if o != spec]
    ecfg = EvalConfig(agents=agents, games=deals, seed=seed, workers=workers, rules=rules, out=str(out_dir),
                      plots=plots, progress=progress)
    res = run_evaluation(ecfg, write=True)
    return summarize_eval(res, spec)


def summarize_eval(res: Dict[str, Any], spec: str) -> Dict[str, Any]:
    labels, specs = res["agents"], res["specs"]
    me = labels[specs.index(spec)]
    per: Dict[str, Dict[str, Any]] = {}
    pairs = res["pairs"] if res.get("mode") == "round_robin" else [res]
    for pr in pairs:
        a, b = pr["agents"]
        if me not in (a, b):
            continue
        other_spec = pr["specs"][1] if a == me else pr["specs"][0]
        flip = a != me
        wr, ci = pr["win_rate"], pr["win_rate_ci"]
        adp, adp_ci = pr["adp"], pr["adp_ci"]
        if flip:
            wr = 1.0 - wr
            ci = None if ci is None else [1.0 - ci[1], 1.0 - ci[0]]
            adp = -adp
            adp_ci = None if adp_ci is None else [-adp_ci[1], -adp_ci[0]]
        per[other_spec] = {"win_rate": wr, "win_rate_ci": ci, "adp": adp, "adp_ci": adp_ci,
                           "games": pr["games"], "deals": pr["deals"]}
    elo = None
    if "ratings" in res:
        # the harness anchors round-robin ratings at random = 1000; without random there is no
        # anchor, and an Elo on another scale would be mislabelled: none is reported
        if "random" in specs:
            ratings = {("trained" if k == me else k): v for k, v in res["ratings"].items()}
            elo = ratings["trained"]
        else:
            ratings = None
    else:
        ratings = None
        if "random" in per:   # a duel with random: Elo from the win rate (one virtual draw)
            p = (per["random"]["win_rate"] * per["random"]["games"] + 0.5) / (per["random"]["games"] + 1)
            elo = ELO_ANCHOR + 400 * math.log10(p / (1 - p))
    return {"per_opponent": per, "elo": elo, "ratings": ratings, "results_dir": res.get("out")}


def eval_score(summary: Dict[str, Any], best_by: str) -> float:
    if best_by == "elo":
        return float(summary["elo"]) if summary["elo"] is not None else -math.inf
    kind, _, spec = best_by.partition(":")
    return float(summary["per_opponent"][spec][kind])
