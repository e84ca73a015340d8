"""Benchmark agents against each other in the duplicate format.

Usage::

    handfoot evaluate configs/eval/strategic_vs_greedy.yaml
    handfoot evaluate --agents strategic greedy --games 200 --seed 1 --workers 2
    handfoot evaluate --agents random greedy strategic --games 100      # round-robin

Python::

    from experiments.evaluate import EvalConfig, run_evaluation
    res = run_evaluation(EvalConfig(agents=["strategic", "greedy"], deals=50))

Format
------
*Duplicate deals.*  Deal ``i`` of a match gets the seed ``deal_seed(seed, i)`` and is played
twice: once with agent A on the even teams (team 0, and team 2 with three teams) and B on
the others, once with the sides swapped.  With two teams (4 or 6 players) that is simply
"the teams swap seats", so both agents get both hands and the luck of the deal cancels.  In
a game with more than two teams each agent plays every team it owns; its score in a game is
the mean score of its teams and it wins when it owns the winning team.  Agents get seeds
derived from the deal seed, the game (0/1) and the seat, so every game is reproducible on
its own.

``games`` (config) / ``--games`` is the number of *duplicate deals* per pairing; each deal is
two games.  A round-robin over three or more agents plays every pair on the same deals.

*Parallelism.*  Deals run in chunks over a ``multiprocessing`` pool (spawn); chunks come
back in deal order and are aggregated in deal order, so ``results.json`` is identical
whatever ``workers`` is (only the ``timing`` section differs).

Statistics
----------
*Win rate* of A: wins + draws/2 over all games.  The two games of one deal are correlated
(the same cards), so the confidence interval treats each deal as one observation: the pair
mean ``x_i`` (0, 1/4, ..., 1) of A's two outcomes, ``mean(x) +/- t(0.975, n-1) * sd(x) / sqrt(n)``
with the sample standard deviation (``ddof=1``), clipped to [0, 1]; because that interval
collapses to a point when every deal has the same outcome, the reported interval is its union
with the Wilson score interval counting one trial per deal (:func:`win_rate_ci`).  *ADP* (average point
difference per game, A minus B) uses the same method on the per-deal mean point difference.
With one deal the interval is undefined (``null``).

*Ratings* (round-robin): Bradley-Terry strengths fitted by maximum likelihood to all games
(a draw counts half a win each way), with one virtual draw added to every pair so that a
perfect record gives a finite rating; expressed on the Elo scale (400 * log10) and shifted
so that the mean rating is 1500.  Deterministic (a fixed number of MM iterations).

Outputs (in the run folder ``out``): ``results.json``, ``results.csv``, ``winrate.png``
(win-rate bars with 95% CI error bars), ``ratings.png`` and ``matrix.png`` for a round-robin,
and with ``records: true`` one JSON game record per game under ``records/``.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from handfoot_env.actions import ACTION_NAMES, PICKUP
from handfoot_env.config import RuleConfig, RuleConfigError, load_rules
from handfoot_env.engine import Game, max_actions_per_game
from handfoot_env.view import seat_view

BOOK_TYPES = ("clean", "dirty", "wild")


class EvalConfigError(ValueError):
    """A malformed evaluation config (the CLI exits with status 2)."""


# ---------------------------------------------------------------------------------- config
@dataclass
class EvalConfig:
    """One evaluation run.  Every field can be given in the YAML config or on the command line."""

    #: agent specs (``random``, ``greedy``, ``strategic``, ``policy:PATH``); two for a duel, more for a round-robin
    agents: List[str] = field(default_factory=list)
    #: duplicate deals per pairing (each deal is played twice, sides swapped)
    games: int = 100
    #: match seed; deal ``i`` uses ``deal_seed(seed, i)``
    seed: int = 0
    #: worker processes (``0`` or ``auto``: one per CPU core); results do not depend on it
    workers: int = 1
    #: rules: preset name, YAML path or a mapping of rule fields (with optional ``preset``)
    rules: Any = "pagat"
    #: run folder for results.json, results.csv, plots and records
    out: Optional[str] = None
    #: save one JSON game record per game under ``out/records``
    records: bool = False
    #: write PNG plots
    plots: bool = True
    #: show a tqdm progress bar
    progress: bool = True

    def validate(self) -> "EvalConfig":
        if not isinstance(self.agents, (list, tuple)) or len(self.agents) < 2:
            raise EvalConfigError(f"'agents' must be a list of at least two agent specs, got {self.agents!r}")
        for a in self.agents:
            if not isinstance(a, str) or not a.strip():
                raise EvalConfigError(f"'agents' entries must be non-empty strings, got {a!r}")
        self.agents = [a.strip() for a in self.agents]
        for name in ("games", "seed", "workers"):
            v = getattr(self, name)
            if name == "workers" and v in ("auto", None):
                self.workers = 0
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise EvalConfigError(f"'{name}' must be an integer, got {v!r}")
        if self.games < 1:
            raise EvalConfigError(f"'games' (duplicate deals per pairing) must be at least 1, got {self.games}")
        if self.seed < 0:
            raise EvalConfigError(f"'seed' must be non-negative, got {self.seed}")
        if self.workers < 0:
            raise EvalConfigError(f"'workers' must be 0/auto or a positive integer, got {self.workers}")
        for name in ("records", "plots", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise EvalConfigError(f"'{name}' must be true or false, got {getattr(self, name)!r}")
        if self.out is not None and not isinstance(self.out, (str, Path)):
            raise EvalConfigError(f"'out' must be a folder path, got {self.out!r}")
        try:
            self.rule_config()
        except RuleConfigError as e:
            raise EvalConfigError(f"'rules': {e}") from None
        from agents.registry import make_agent
        for spec in self.agents:
            try:
                make_agent(spec, 0)
            except (ValueError, ImportError) as e:
                raise EvalConfigError(f"'agents': {e}") from None
        return self

    def rule_config(self) -> RuleConfig:
        return load_rules(self.rules)

    @property
    def num_workers(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)


def load_config(path: Union[str, Path]) -> EvalConfig:
    """Read an evaluation YAML config; :class:`EvalConfigError` naming the bad field."""
    from handfoot_env.config import read_yaml

    p = Path(path)
    data = read_yaml(p, EvalConfigError, "config file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise EvalConfigError(f"{p}: expected a mapping of config fields, got {type(data).__name__}")
    known = {f.name for f in fields(EvalConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise EvalConfigError(f"{p}: unknown field {unknown[0]!r}; known fields: {', '.join(sorted(known))}")
    cfg = EvalConfig(**data)
    if isinstance(cfg.rules, str) and not Path(cfg.rules).is_absolute() and cfg.rules.endswith((".yaml", ".yml")):
        # a rules file relative to the config file or to the working directory
        rel = p.parent / cfg.rules
        if rel.is_file() and not Path(cfg.rules).is_file():
            cfg.rules = str(rel)
    return cfg


# ---------------------------------------------------------------------------------- seeds
def _hash_seed(*parts: Any) -> int:
    h = hashlib.sha256(":".join(str(x) for x in parts).encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def deal_seed(seed: int, deal: int) -> int:
    """The game seed of deal ``deal`` in a match with seed ``seed``."""
    return _hash_seed("deal", seed, deal)


def agent_seed(game_seed: int, game: int, seat: int) -> int:
    return _hash_seed("agent", game_seed, game, seat)


def lineup(num_teams: int, swapped: bool) -> List[int]:
    """Side (0 = A, 1 = B) of each team: A on the even teams, or swapped."""
    return [(t % 2) ^ int(swapped) for t in range(num_teams)]


# ---------------------------------------------------------------------------------- playing
_AGENT_CACHE: Dict[Tuple[str, int], Any] = {}


def _agent_for(spec: str, seat: int):
    from agents.registry import make_agent

    key = (spec, seat)
    a = _AGENT_CACHE.get(key)
    if a is None:
        a = make_agent(spec, 0)
        _AGENT_CACHE[key] = a
    return a


def play_game(rules: RuleConfig, seat_specs: Sequence[str], seed: int, game: int = 0,
              record: bool = False) -> Dict[str, Any]:
    """Play one game with ``seat_specs[p]`` in seat ``p``; a summary dict (and the record)."""
    g = Game(rules)
    g.reset(seed=seed)
    agents = [_agent_for(spec, p) for p, spec in enumerate(seat_specs)]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, agent_seed(seed, game, p))
    needs_obs = any(getattr(a, "needs_observation", False) for a in agents)
    if needs_obs:
        from handfoot_env.observation import action_mask, encode_observation
    limit = max_actions_per_game(g.rules)
    n = g.n
    actions = [0] * n
    pickups = [0] * n
    books: List[List[int]] = [[0, 0, 0] for _ in range(g.num_teams)]
    bc_ref = g.book_counts
    log: List[Tuple[int, int]] = []
    steps = 0
    while not g.game_over:
        if steps >= limit:
            raise RuntimeError(f"game seed {seed} did not end within {limit} actions (seats {list(seat_specs)})")
        p = g.current
        ag = agents[p]
        view = seat_view(g, p)
        obs = None
        if getattr(ag, "needs_observation", False):
            obs = {"observation": encode_observation(g, p), "action_mask": action_mask(g, p)}
        a = ag.act(obs, view)
        if a not in view.legal_actions:
            raise RuntimeError(f"agent {seat_specs[p]!r} in seat {p} chose illegal action {a!r} "
                               f"(game seed {seed}, step {steps})")
        a = int(a)
        actions[p] += 1
        if a == PICKUP:
            pickups[p] += 1
        if record:
            log.append((p, a))
        g.step(a)
        steps += 1
        if g.book_counts is not bc_ref:
            # a new round was dealt: bc_ref holds the finished round's books
            for t in range(g.num_teams):
                for k in range(3):
                    books[t][k] += bc_ref[t][k]
            bc_ref = g.book_counts
    for t in range(g.num_teams):
        for k in range(3):
            books[t][k] += bc_ref[t][k]
    went_out = [0] * g.num_teams
    for d in g.round_details:
        if d["went_out"] is not None:
            went_out[g.team_of[d["went_out"]]] += 1
    out = {
        "scores": list(g.scores),
        "winner": g.winner,
        "rounds": len(g.round_details),
        "went_out": went_out,
        "books": books,
        "actions": actions,
        "pickups": pickups,
    }
    if record:
        out["record"] = {
            "rules": g.rules.to_dict(),
            "seed": seed,
            "seats": list(seat_specs),
            "team_of": list(g.team_of),
            "actions": [a for _, a in log],
            "action_log": [[p, ACTION_NAMES[a]] for p, a in log],
            "round_scores": [list(x) for x in g.round_scores],
            "round_details": g.round_details,
            "scores": list(g.scores),
            "winner": g.winner,
        }
    return out


def _side_stats(rules: RuleConfig, res: Dict[str, Any], sides: List[int]) -> Dict[str, Any]:
    """Per-side (A, B) outcome and counters of one game, given the side of every team."""
    teams = len(sides)
    score = [0.0, 0.0]
    nteams = [0, 0]
    for t in range(teams):
        score[sides[t]] += res["scores"][t]
        nteams[sides[t]] += 1
    score = [score[i] / nteams[i] for i in range(2)]
    w = res["winner"]
    if w is None:
        outcome = 0.5
    else:
        outcome = 1.0 if sides[w] == 0 else 0.0
    stats = []
    for side in range(2):
        st = {"books": [0, 0, 0], "went_out": 0, "rounds": 0, "actions": 0, "pickups": 0, "teams": nteams[side]}
        for t in range(teams):
            if sides[t] != side:
                continue
            for k in range(3):
                st["books"][k] += res["books"][t][k]
            st["went_out"] += res["went_out"][t]
            st["rounds"] += res["rounds"]
        for p in range(rules.players):
            if sides[p % teams] == side:
                st["actions"] += res["actions"][p]
                st["pickups"] += res["pickups"][p]
        stats.append(st)
    return {"outcome": outcome, "diff": score[0] - score[1], "score": score, "stats": stats}


def _play_chunk(task: Tuple[Any, ...]) -> List[Dict[str, Any]]:
    """Worker: play the deals of one chunk of one pairing; results in deal order."""
    rules_dict, spec_a, spec_b, seed, deals, records_dir, pair_label = task
    rules = load_rules(rules_dict)
    out = []
    for d in deals:
        s = deal_seed(seed, d)
        games = []
        for gi, swapped in enumerate((False, True)):
            sides = lineup(rules.teams, swapped)
            seat_specs = [spec_a if sides[p % rules.teams] == 0 else spec_b for p in range(rules.players)]
            res = play_game(rules, seat_specs, s, game=gi, record=records_dir is not None)
            if records_dir is not None:
                rec = res.pop("record")
                rec.update(deal=d, game=gi, pair=pair_label)
                path = Path(records_dir) / f"{pair_label}_deal{d:05d}_g{gi}.json"
                path.write_text(json.dumps(rec))
            games.append(_side_stats(rules, res, sides))
        out.append({"deal": d, "seed": s, "games": games})
    return out


# ---------------------------------------------------------------------------------- statistics
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
            **{f"{BOOK_TYPES[k]}_books_per_game": tot["books"][k] / n_games for k in range(3)},
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


# ---------------------------------------------------------------------------------- running
def _labels(specs: Sequence[str]) -> List[str]:
    out: List[str] = []
    for s in specs:
        lab = s
        i = 2
        while lab in out:
            lab = f"{s}#{i}"
            i += 1
        out.append(lab)
    return out


def _slug(s: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in s)
    return keep.strip("_")[:40] or "agent"


def default_out(cfg: EvalConfig) -> str:
    return str(Path("runs") / "eval" / ("_vs_".join(_slug(a) for a in cfg.agents) + f"-seed{cfg.seed}"))


def _versions() -> Dict[str, str]:
    import numpy

    import handfoot_env
    return {"handfoot": handfoot_env.__version__, "python": platform.python_version(), "numpy": numpy.__version__}


def run_evaluation(cfg: EvalConfig, write: bool = True,
                   task_runner: Optional[Callable[[Callable, List[Tuple[Any, ...]]], List[Any]]] = None
                   ) -> Dict[str, Any]:
    """Play the tournament of ``cfg``; returns the results dict (and writes the run folder).

    ``task_runner(fn, tasks)``, if given, replaces the local process pool: it must return
    ``[fn(t) for t in tasks]`` in task order (e.g. run as tasks on a cluster); results are then
    aggregated exactly as with the pool.
    """
    cfg.validate()
    rules = cfg.rule_config()
    labels = _labels(cfg.agents)
    k = len(cfg.agents)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    out_dir = Path(cfg.out or default_out(cfg))
    records_dir = None
    if write:
        out_dir.mkdir(parents=True, exist_ok=True)
        if cfg.records:
            records_dir = out_dir / "records"
            records_dir.mkdir(exist_ok=True)
    chunk = max(1, min(25, cfg.games // (4 * cfg.num_workers) or 1))
    tasks = []
    for (i, j) in pairs:
        pl = f"{_slug(labels[i])}-vs-{_slug(labels[j])}"
        for start in range(0, cfg.games, chunk):
            deals = list(range(start, min(cfg.games, start + chunk)))
            tasks.append((rules.to_dict(), cfg.agents[i], cfg.agents[j], cfg.seed, deals,
                          str(records_dir) if records_dir else None, pl))
    t0 = time.perf_counter()
    if task_runner is not None:
        results_by_task = list(task_runner(_play_chunk, tasks))
    else:
        results_by_task = _run_tasks(tasks, cfg.num_workers, cfg.progress, total=len(pairs) * cfg.games)
    elapsed = time.perf_counter() - t0
    per_pair_deals: Dict[Tuple[int, int], List[Dict[str, Any]]] = {p: [] for p in pairs}
    ti = 0
    for (i, j) in pairs:
        for _start in range(0, cfg.games, chunk):
            per_pair_deals[(i, j)].extend(results_by_task[ti])
            ti += 1
    pair_results = []
    for (i, j) in pairs:
        st = pair_stats(per_pair_deals[(i, j)])
        pr = {
            "agents": [labels[i], labels[j]],
            "specs": [cfg.agents[i], cfg.agents[j]],
            **{key: st[key] for key in ("deals", "games", "wins", "draws", "win_rate", "win_rate_ci", "adp",
                                          "adp_ci")},
            "per_agent": {labels[i]: st["per_side"][0], labels[j]: st["per_side"][1]},
            "_pair_win_rates": st["pair_win_rates"],
        }
        pair_results.append(pr)
    res: Dict[str, Any] = {
        "mode": "duel" if k == 2 else "round_robin",
        "agents": labels,
        "specs": list(cfg.agents),
        "deals_per_pair": cfg.games,
        "seed": cfg.seed,
        "rules": rules.to_dict(),
        "method": ("duplicate deals, each played twice with sides swapped; 95% CIs are t-intervals over "
                   "per-deal pair means (win rate: widened to the Wilson interval, one trial per deal)"),
        "versions": _versions(),
    }
    if k == 2:
        pr = pair_results[0]
        res.update({key: pr[key] for key in ("games", "deals", "wins", "draws", "win_rate", "win_rate_ci", "adp",
                                               "adp_ci", "per_agent")})
    else:
        matrix = [[None] * k for _ in range(k)]
        wins: Dict[Tuple[int, int], float] = {}
        games: Dict[Tuple[int, int], int] = {}
        per_agent_pairs: Dict[int, List[float]] = {i: [] for i in range(k)}
        for (i, j), pr in zip(pairs, pair_results):
            matrix[i][j] = pr["win_rate"]
            matrix[j][i] = 1.0 - pr["win_rate"]
            wins[(i, j)] = pr["wins"][0] + 0.5 * pr["draws"]
            games[(i, j)] = pr["games"]
            per_agent_pairs[i].extend(pr["_pair_win_rates"])
            per_agent_pairs[j].extend(1.0 - x for x in pr["_pair_win_rates"])
        elo = bradley_terry_elo(labels, wins, games)
        overall = {}
        for i in range(k):
            m, ci = win_rate_ci(per_agent_pairs[i])
            overall[labels[i]] = {"win_rate": m, "win_rate_ci": ci}
        res.update({
            "games": sum(pr["games"] for pr in pair_results),
            "pairs": [{key: v for key, v in pr.items() if not key.startswith("_")} for pr in pair_results],
            "win_rate_matrix": matrix,
            "ratings": {labels[i]: elo[i] for i in range(k)},
            "rating_method": "Bradley-Terry MLE, one virtual draw per pair, Elo scale, mean 1500",
            "overall": overall,
        })
    res["timing"] = {"elapsed_s": round(elapsed, 3), "workers": cfg.num_workers,
                     "games_per_s": round(res["games"] / elapsed, 2) if elapsed > 0 else None}
    if write:
        (out_dir / "results.json").write_text(json.dumps(res, indent=2) + "\n")
        _write_csv(out_dir / "results.csv", pair_results)
        if cfg.plots:
            _plots(out_dir, res, pair_results)
    res["out"] = str(out_dir)      # not part of results.json (it is the folder that holds it)
    return res


def _run_tasks(tasks: List[Tuple[Any, ...]], workers: int, progress: bool, total: int) -> List[List[Dict]]:
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=total, unit="deal", desc="evaluate", file=sys.stderr, dynamic_ncols=True)
    out: List[List[Dict]] = []
    try:
        if workers <= 1 or len(tasks) <= 1:
            for t in tasks:
                out.append(_play_chunk(t))
                if bar is not None:
                    bar.update(len(t[4]))
        else:
            import multiprocessing as mp
            ctx = mp.get_context("spawn")
            with ctx.Pool(processes=min(workers, len(tasks))) as pool:
                for t, r in zip(tasks, pool.imap(_play_chunk, tasks)):
                    out.append(r)
                    if bar is not None:
                        bar.update(len(t[4]))
    finally:
        if bar is not None:
            bar.close()
    return out


def _write_csv(path: Path, pair_results: List[Dict[str, Any]]) -> None:
    cols = ["agent_a", "agent_b", "deals", "games", "wins_a", "wins_b", "draws", "win_rate_a", "win_rate_ci_lo",
            "win_rate_ci_hi", "adp", "adp_ci_lo", "adp_ci_hi"]
    side_keys = ["clean_books_per_game", "dirty_books_per_game", "wild_books_per_game", "books_per_game",
                 "going_out_rate", "pickups_per_game", "actions_per_game", "mean_score"]
    cols += [f"a_{s}" for s in side_keys] + [f"b_{s}" for s in side_keys]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for pr in pair_results:
            a, b = pr["agents"]
            ci = pr["win_rate_ci"] or [None, None]
            aci = pr["adp_ci"] or [None, None]
            row = [a, b, pr["deals"], pr["games"], pr["wins"][0], pr["wins"][1], pr["draws"], pr["win_rate"],
                   ci[0], ci[1], pr["adp"], aci[0], aci[1]]
            row += [pr["per_agent"][a][s] for s in side_keys] + [pr["per_agent"][b][s] for s in side_keys]
            w.writerow(row)


def _plots(out_dir: Path, res: Dict[str, Any], pair_results: List[Dict[str, Any]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def short(name: str) -> str:
        return name if len(name) <= 24 else name[:11] + "..." + name[-10:]

    if res["mode"] == "duel":
        a, b = res["agents"]
        wr = res["win_rate"]
        ci = res["win_rate_ci"] or [wr, wr]
        vals = [wr, 1.0 - wr]
        errs = [[wr - ci[0], (1 - wr) - (1 - ci[1])], [ci[1] - wr, (1 - ci[0]) - (1 - wr)]]
        names = [short(a), short(b)]
        title = f"{short(a)} vs {short(b)}: win rate over {res['games']} games (95% CI)"
    else:
        vals = [res["overall"][n]["win_rate"] for n in res["agents"]]
        cis = [res["overall"][n]["win_rate_ci"] or [v, v] for n, v in zip(res["agents"], vals)]
        errs = [[v - c[0] for v, c in zip(vals, cis)], [c[1] - v for v, c in zip(vals, cis)]]
        names = [short(n) for n in res["agents"]]
        title = "round-robin: mean win rate against the field (95% CI)"
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(names) + 2), 4))
    ax.bar(names, vals, yerr=errs, capsize=6, color="#4C72B0")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (draw = 1/2)")
    ax.set_title(title, fontsize=10)
    fig.savefig(out_dir / "winrate.png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    if res["mode"] == "round_robin":
        names = res["agents"]
        elo = [res["ratings"][n] for n in names]
        order = sorted(range(len(names)), key=lambda i: -elo[i])
        fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(names) + 2), 4))
        ax.barh([short(names[i]) for i in order][::-1], [elo[i] for i in order][::-1], color="#55A868")
        ax.set_xlabel("rating (Bradley-Terry, Elo scale, mean 1500)")
        ax.set_title("ratings", fontsize=10)
        lo = min(elo)
        ax.set_xlim(min(lo - 100, 1400), max(elo) + 100)
        fig.savefig(out_dir / "ratings.png", dpi=100, bbox_inches="tight")
        plt.close(fig)
        k = len(names)
        m = res["win_rate_matrix"]
        fig, ax = plt.subplots(figsize=(1.2 * k + 2, 1.2 * k + 1))
        grid = [[(m[i][j] if m[i][j] is not None else float("nan")) for j in range(k)] for i in range(k)]
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
        for i in range(k):
            for j in range(k):
                if m[i][j] is not None:
                    ax.text(j, i, f"{m[i][j]:.2f}", ha="center", va="center", fontsize=9)
        ax.set_xticks(range(k), [short(n) for n in names], rotation=30, ha="right")
        ax.set_yticks(range(k), [short(n) for n in names])
        ax.set_title("win rate of row vs column", fontsize=10)
        fig.colorbar(im, ax=ax)
        fig.savefig(out_dir / "matrix.png", dpi=100, bbox_inches="tight")
        plt.close(fig)


# ---------------------------------------------------------------------------------- printing
def print_results(res: Dict[str, Any], file=None) -> None:
    """A rich table of the results."""
    from rich.console import Console
    from rich.table import Table

    out = file or sys.stdout
    console = Console(file=out, width=None if getattr(out, "isatty", lambda: False)() else 140)

    def pct(x):
        return f"{100 * x:.1f}%"

    def ci_pct(c):
        return f"[{100 * c[0]:.1f}, {100 * c[1]:.1f}]" if c else "n/a"

    def ci_num(c):
        return f"[{c[0]:.0f}, {c[1]:.0f}]" if c else "n/a"

    rules = res["rules"]
    head = (f"rules: {rules['players']} players, {rules['teams']} teams, {rules['decks']} decks; seed {res['seed']}; "
            f"{res['deals_per_pair']} duplicate deals per pair")
    pairs = [res] if res["mode"] == "duel" else res["pairs"]
    t = Table(title="Duplicate match results" if res["mode"] == "duel" else "Round-robin: pairings")
    for c in ("A", "B", "games", "A win rate", "95% CI", "ADP (A-B)", "95% CI "):
        t.add_column(c, justify="right" if c not in ("A", "B") else "left")
    for pr in pairs:
        a, b = pr["agents"]
        t.add_row(a, b, str(pr["games"]), pct(pr["win_rate"]), ci_pct(pr["win_rate_ci"]), f"{pr['adp']:.0f}",
                  ci_num(pr["adp_ci"]))
    console.print(head)
    console.print(t)
    s = Table(title="Per agent (per game)")
    for c in ("pairing", "agent", "clean", "dirty", "wild", "went out/round", "pickups", "actions", "mean score"):
        s.add_column(c, justify="left" if c in ("pairing", "agent") else "right")
    for pr in pairs:
        pl = " vs ".join(pr["agents"])
        for name in pr["agents"]:
            st = pr["per_agent"][name]
            s.add_row(pl, name, f"{st['clean_books_per_game']:.2f}", f"{st['dirty_books_per_game']:.2f}",
                      f"{st['wild_books_per_game']:.2f}", pct(st["going_out_rate"]), f"{st['pickups_per_game']:.1f}",
                      f"{st['actions_per_game']:.0f}", f"{st['mean_score']:.0f}")
    console.print(s)
    if res["mode"] == "round_robin":
        names = res["agents"]
        m = Table(title="Win rate of row against column")
        m.add_column("")
        for n in names:
            m.add_column(n, justify="right")
        m.add_column("rating", justify="right")
        for i, n in enumerate(names):
            row = [("-" if x is None else pct(x)) for x in res["win_rate_matrix"][i]]
            m.add_row(n, *row, f"{res['ratings'][n]:.0f}")
        console.print(m)
    tm = res["timing"]
    console.print(f"{res['games']} games in {tm['elapsed_s']:.1f} s with {tm['workers']} worker(s); "
                  f"results in {res['out']}")


# ---------------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="handfoot evaluate",
        description="Benchmark agents in duplicate deals (each deal played twice, sides swapped). "
                    "Two agents: a duel; three or more: a round-robin with a win-rate matrix and ratings.")
    p.add_argument("config", nargs="?", help="evaluation YAML (configs/eval/*.yaml); flags override its fields")
    p.add_argument("--agents", nargs="+", metavar="SPEC",
                   help="agent specs: random, greedy, strategic, policy:PATH")
    p.add_argument("--games", type=int, help="duplicate deals per pairing (each is two games); default 100")
    p.add_argument("--seed", type=int, help="match seed (default 0)")
    p.add_argument("--workers", help="worker processes, or 'auto' for one per core (default 1)")
    p.add_argument("--rules", help="rules preset or YAML file (default pagat)")
    p.add_argument("--out", help="run folder (default runs/eval/<agents>-seed<seed>)")
    p.add_argument("--records", action="store_true", default=None, help="save a JSON record of every game")
    p.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print results.json instead of tables")
    p.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the deals as Ray tasks: on the cluster at ADDRESS, else RAY_ADDRESS, else a local Ray "
                        "(same results as without it; put it after the config file; docs/scaling_out.md)")
    return p


class _ArgError(Exception):
    pass


def evaluate_main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()

    def fail(msg: str) -> int:
        print(f"handfoot evaluate: error: {msg}", file=sys.stderr)
        return 2

    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed the message
        return int(e.code or 0)
    try:
        cfg = load_config(args.config) if args.config else EvalConfig()
        if args.agents is not None:
            cfg.agents = args.agents
        for name in ("games", "seed", "rules", "out"):
            v = getattr(args, name)
            if v is not None:
                setattr(cfg, name, v)
        if args.workers is not None:
            w = args.workers
            if w == "auto":
                cfg.workers = 0
            else:
                try:
                    cfg.workers = int(w)
                except ValueError:
                    return fail(f"--workers must be an integer or 'auto', got {w!r}")
        if args.records:
            cfg.records = True
        if args.no_plots:
            cfg.plots = False
        if args.no_progress:
            cfg.progress = False
        if not cfg.agents:
            return fail("no agents: give a config file or --agents A B [C ...]")
        cfg.validate()
    except EvalConfigError as e:
        return fail(str(e))
    runner = None
    if args.ray is not None:
        from experiments.rllib_backend import ray_task_runner
        runner, cfg.workers = ray_task_runner(args.ray or None, cfg.workers if args.workers is not None else 0,
                                              progress=cfg.progress)
    res = run_evaluation(cfg, task_runner=runner)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print_results(res)
    return 0


main = evaluate_main

if __name__ == "__main__":
    sys.exit(evaluate_main())
