"""Benchmark agents against each other in the duplicate format.

Usage::

    handfoot evaluate configs/eval/strategic_vs_greedy.yaml
    handfoot evaluate --agents strategic greedy --games 200 --seed 1 --workers 2
    handfoot evaluate --agents random greedy strategic --games 100      # round-robin
    handfoot evaluate --agents strategic greedy --sprt --deals 1000   # stop as soon as H0/H1 is decided

Python::

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
(the same cards), so every interval treats the deal as the unit: A's mean result ``x_i`` over its
two games (0, 1/4, 1/2, 3/4, 1).  The win rate's 95% interval is the profile-likelihood interval
of the mean of the ``x_i`` (:func:`~experiments.evaluation.stats.deal_interval`: valid at a 100%
record and at small n, as narrow as a t-interval over deals where that one holds).  *ADP*
(average point difference per game, A minus B) gets the t-interval over the per-deal mean point
differences.  ``deals.csv`` keeps every deal's outcomes, so anyone can recompute either.
*Sequential test* (``sprt``): :mod:`experiments.evaluation.sprt`.

*Ratings* (round-robin): Bradley-Terry strengths fitted by maximum likelihood to all games
(a draw counts half a win each way), with one virtual draw added to every pair so that a
perfect record gives a finite rating; expressed on the Elo scale (400 * log10) and shifted so
that ``random`` is at 1000 (the project's one anchor; without ``random`` the mean
is 1500).  Deterministic (a fixed number of MM iterations).

Outputs (in the run folder ``out``): ``results.json``, ``results.csv``, ``deals.csv``, ``winrate.png``
(win-rate bars with 95% CI error bars), ``ratings.png`` and ``matrix.png`` for a round-robin,
and with ``records: true`` one JSON game record per game under ``records/``.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
from tqdm import tqdm

import handfoot_env
from agents.base import observation_only
from agents.registry import check_side, make_agent, side_specs, team_members
from experiments.evaluation.report import (_plots, _write_csv, _write_deals, add_counts, agent_stats, interrupted,
                                           numeric_stats)
from experiments.evaluation.sprt import parse_sprt, run_sequential
from experiments.evaluation.stats import DEAL_INTERVAL_METHOD, bradley_terry_elo, pair_stats, win_rate_ci
from experiments.processes import pool_runner
from handfoot_env.actions import ACTION_NAMES, PICKUP
from experiments.config import unknown_field_message
from handfoot_env.config import RuleConfig, RuleConfigError, load_rules, read_yaml
from handfoot_env.engine import max_actions_per_game
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.observation import observation_size
from handfoot_env.config import check_seed
from handfoot_env.compiled import available, make_game, resolve_core
from experiments.evaluation.stats import anchor_ratings
from handfoot_env.turns import play_until


#: the most duplicate deals per pairing and agents per evaluation (a bound on the work one config asks for)
MAX_DEALS = 1_000_000
MAX_AGENTS = 32


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
    #: the rules core the games run on: ``compiled``, ``reference`` or ``auto`` (:func:`eval_core`, per
    #: pairing); both play the same games, so the results are the same (only ``timing`` says which ran)
    core: str = "auto"
    #: a sequential test of a duel (:mod:`experiments.evaluation.sprt`): ``true`` (H0 0.5 against H1 0.55,
    #: alpha = beta = 0.05), or a mapping of ``h0``/``h1`` (win rates) or ``elo0``/``elo1``, ``alpha``,
    #: ``beta``; ``games`` (``deals``) is then the cap.  Off (None) by default
    sprt: Any = None

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
        if not 1 <= self.games <= MAX_DEALS:
            raise EvalConfigError(f"'deals' (or 'games': duplicate deals per pairing) must be between 1 and "
                                  f"{MAX_DEALS:,}, got {self.games}")
        if len(self.agents) > MAX_AGENTS:
            raise EvalConfigError(f"'agents': at most {MAX_AGENTS} agents in one evaluation, got {len(self.agents)}")
        try:
            check_seed(self.seed, "'seed'")
        except ValueError as e:
            raise EvalConfigError(str(e)) from None
        if self.workers < 0:
            raise EvalConfigError(f"'workers' must be 0/auto or a positive integer, got {self.workers}")
        for name in ("records", "plots", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise EvalConfigError(f"'{name}' must be true or false, got {getattr(self, name)!r}")
        if self.core is None:
            self.core = "auto"
        try:
            resolve_core(self.core)
        except ValueError as e:
            raise EvalConfigError(f"'core': {e}") from None
        try:
            test = parse_sprt(self.sprt)
        except ValueError as e:
            raise EvalConfigError(str(e)) from None
        if test is not None and len(self.agents) != 2:
            raise EvalConfigError(f"'sprt': a sequential test compares two agents, got {len(self.agents)}")
        if self.out is not None and not isinstance(self.out, (str, Path)):
            raise EvalConfigError(f"'out' must be a folder path, got {self.out!r}")
        try:
            self.rule_config()
        except RuleConfigError as e:
            raise EvalConfigError(f"'rules': {e}") from None
        rules = self.rule_config()
        for spec in self.agents:           # a side: one agent spec, or team(A,B) (agents.registry.side_specs)
            try:
                check_side(spec, rules)
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
    p = Path(path)
    data = read_yaml(p, EvalConfigError, "config file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise EvalConfigError(f"{p}: expected a mapping of config fields, got {type(data).__name__}")
    if "deals" in data:                     # the field's plain name; 'games' is its old one
        if "games" in data:
            raise EvalConfigError(f"{p}: 'deals' and 'games' name the same field (duplicate deals per pairing); "
                                  "keep 'deals'")
        data["games"] = data.pop("deals")
    known = {f.name for f in fields(EvalConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise EvalConfigError(f"{p}: {unknown_field_message(unknown[0], sorted(known | {'deals'} - {'games'}))}")
    if data.get("workers") == 0 and not isinstance(data.get("workers"), bool):
        raise EvalConfigError(f"{p}: 'workers' must be a positive integer or 'auto' (one per core), got 0")
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
    key = (spec, seat)
    a = _AGENT_CACHE.get(key)
    if a is None:
        a = make_agent(spec, 0)
        _AGENT_CACHE[key] = a
    return a


def play_game(rules: RuleConfig, seat_specs: Sequence[str], seed: int, game: int = 0,
              record: bool = False, core: str = "reference") -> Dict[str, Any]:
    """Play one game with ``seat_specs[p]`` in seat ``p``; a summary dict (and the record).

    ``core``: the game of :func:`handfoot_env.compiled.make_game`, one interface on both cores
    (``"compiled"``: observation, mask and legal list from one compiled call, seat views read from the
    row): the same game, action for action (tests/test_evaluate.py compares whole evaluations and
    their records on both)."""
    g = make_game(core, rules)
    obs_buf = numpy.zeros(observation_size(rules.players, rules.teams), dtype=numpy.float32)
    mask_buf = numpy.zeros(NUM_ACTIONS, dtype=numpy.int8)
    g.reset(seed=seed)
    agents = [_agent_for(spec, p) for p, spec in enumerate(seat_specs)]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, agent_seed(seed, game, p))
    limit = max_actions_per_game(g.rules)
    n = g.n
    actions = [0] * n
    pickups = [0] * n
    books: List[List[int]] = [[0, 0, 0] for _ in range(g.num_teams)]
    log: List[Tuple[int, int]] = []
    needs_obs = [getattr(a, "needs_observation", False) for a in agents]
    needs_view = [not observation_only(a) for a in agents]

    def stop() -> bool:
        if g.game_over:
            return True
        if len(log) >= limit:
            raise RuntimeError(f"game seed {seed} did not end within {limit} actions (seats {list(seat_specs)})")
        return False

    def legal() -> List[int]:
        p = g.current                            # an agent that reads observations: one call gives all three
        return g.observe_legal(p, obs_buf, mask_buf) if needs_obs[p] else g.legal_actions()

    def move(p: int, legal: List[int]) -> int:
        obs = view = None
        if needs_obs[p]:
            obs = {"observation": obs_buf.copy(), "action_mask": mask_buf.copy()}
        if needs_view[p]:
            view = g.seat_view(p, legal)
        a = agents[p].act(obs, view)
        if a not in legal:
            raise RuntimeError(f"agent {seat_specs[p]!r} in seat {p} chose illegal action {a!r} "
                               f"(game seed {seed}, step {len(log)})")
        return a

    def apply(p: int, a: int) -> None:
        actions[p] += 1
        if a == PICKUP:
            pickups[p] += 1
        log.append((p, a))
        ended = g.apply_legal_books(a)           # a finished round's books, before the next deal
        if ended is not None:
            _add_books(books, ended)

    play_until(g, None, move, stop=stop, legal=legal, apply=apply)
    return _game_summary(g, seat_specs, seed, books, actions, pickups, log if record else None)


def _add_books(books: List[List[int]], counts) -> None:
    """Add one round's book counts (clean, dirty, wild per team) to the game's totals."""
    for t, c in enumerate(counts):
        for k in range(3):
            books[t][k] += c[k]


def _game_summary(g, seat_specs: Sequence[str], seed: int, books, actions, pickups,
                  log: Optional[List[Tuple[int, int]]]) -> Dict[str, Any]:
    """:func:`play_game`'s result for a finished game ``g`` (with the record when ``log`` is given)."""
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
    if log is not None:
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


def eval_core(core: str, specs: Sequence[str]) -> str:
    """The core the games between ``specs`` (one pairing) run on.  ``auto``: the compiled core when
    ``resolve_core("auto")`` picks it (Numba installed) and at least one agent is a network that reads
    only its observation (``needs_observation`` and not ``needs_view``), else the reference.
    Measured (docs/compiled_core.md, "Evaluation"): a network seat gets its observation, mask and
    legal list from one compiled call, so games with one play faster on the compiled core, with or
    without heuristic seats; games of heuristics alone play faster on the reference, which builds
    their :class:`~handfoot_env.view.SeatView` from its own Python lists faster than the compiled
    core reads it from its row."""
    if core != "auto":
        return resolve_core(core)
    if resolve_core("auto") != "compiled":
        return "reference"
    return "compiled" if any(observation_only(_agent_for(member, 0)) for spec in specs
                             for member in team_members(spec) or [spec]) else "reference"


def _play_chunk(task: Tuple[Any, ...]) -> List[Dict[str, Any]]:
    """Worker: play the deals of one chunk of one pairing; results in deal order."""
    rules_dict, spec_a, spec_b, seed, deals, records_dir, pair_label, core = task
    rules = load_rules(rules_dict)
    if core == "compiled" and not available():
        core = "reference"          # a worker without Numba (a Ray node): the same games on the reference
    # each seat's spec: its side's agent, or a team's member for the seat's place in its team
    side = [side_specs(spec_a, rules), side_specs(spec_b, rules)]
    out = []
    for d in deals:
        s = deal_seed(seed, d)
        games = []
        counts: List[Dict[str, float]] = [{}, {}]
        for gi, swapped in enumerate((False, True)):
            sides = lineup(rules.teams, swapped)
            seat_specs = [side[sides[p % rules.teams]][p // rules.teams] for p in range(rules.players)]
            before = [numeric_stats(_AGENT_CACHE.get((q, p))) for p, q in enumerate(seat_specs)]
            res = play_game(rules, seat_specs, s, game=gi, record=records_dir is not None, core=core)
            add_counts(counts, sides, before, [numeric_stats(_AGENT_CACHE[q, p]) for p, q in enumerate(seat_specs)])
            if records_dir is not None:
                rec = res.pop("record")
                rec.update(deal=d, game=gi, pair=pair_label)
                path = Path(records_dir) / f"{pair_label}_deal{d:05d}_g{gi}.json"
                path.write_text(json.dumps(rec))
            games.append(_side_stats(rules, res, sides))
        out.append({"deal": d, "seed": s, "games": games, "agent_stats": counts})
    return out


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
    return {"handfoot": handfoot_env.__version__, "python": platform.python_version(), "numpy": numpy.__version__}


def _play_pairs(cfg: EvalConfig, rules: RuleConfig, labels: List[str], pairs: List[Tuple[int, int]],
                records_dir: Optional[Path], cores: List[str], test: Any,
                task_runner: Optional[Callable[[Callable, List[Tuple[Any, ...]]], List[Any]]],
                out_dir: Optional[Path]) -> Tuple[Dict[Tuple[int, int], List[Dict[str, Any]]], Any]:
    """Every pairing's deals (in deal order), and the sequential test's result when ``test`` is set
    (the first pairing, played until it decides); Ctrl-C keeps the finished deals in ``out_dir``."""
    per_pair_deals: Dict[Tuple[int, int], List[Dict[str, Any]]] = {p: [] for p in pairs}
    if test is not None:
        per_pair_deals[pairs[0]], sprt = _play_sequential(cfg, rules, labels, records_dir, cores, test, task_runner)
        return per_pair_deals, sprt
    tasks, task_pairs = _tasks(cfg, rules, labels, pairs, records_dir, cores, range(cfg.games))
    if task_runner is not None:
        results_by_task = list(task_runner(_play_chunk, tasks))
    else:
        try:
            results_by_task = _run_tasks(tasks, cfg.num_workers, cfg.progress, total=len(pairs) * cfg.games)
        except KeyboardInterrupt as e:
            raise interrupted(e, labels, task_pairs, out_dir, len(pairs) * cfg.games) from None
    for pair, deals in zip(task_pairs, results_by_task, strict=True):
        per_pair_deals[pair].extend(deals)
    return per_pair_deals, None


def run_evaluation(cfg: EvalConfig, write: bool = True,
                   task_runner: Optional[Callable[[Callable, List[Tuple[Any, ...]]], List[Any]]] = None,
                   keep_deals: bool = False) -> Dict[str, Any]:
    """Play the tournament of ``cfg``; returns the results dict (and writes the run folder).

    ``keep_deals``: every pairing (``res["pairs"]``, or the duel itself) also keeps
    ``deal_win_rates``, A's mean outcome on each deal in deal order (for a bootstrap over deals).

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
    cores = [eval_core(cfg.core, [cfg.agents[i], cfg.agents[j]]) for (i, j) in pairs]
    test = parse_sprt(cfg.sprt)
    t0 = time.perf_counter()
    per_pair_deals, sprt = _play_pairs(cfg, rules, labels, pairs, records_dir, cores, test, task_runner,
                                       out_dir if write else None)
    elapsed = time.perf_counter() - t0
    pair_results = [_pair_result(cfg, labels, i, j, per_pair_deals[(i, j)]) for (i, j) in pairs]
    res: Dict[str, Any] = {
        "mode": "duel" if k == 2 else "round_robin",
        "agents": labels,
        "specs": list(cfg.agents),
        "deals_per_pair": cfg.games,
        "seed": cfg.seed,
        "rules": rules.to_dict(),
        "method": ("duplicate deals, each played twice with sides swapped; the deal is the unit (per-deal "
                   "outcomes in deals.csv); win rate 95% CI: " + DEAL_INTERVAL_METHOD + "; ADP 95% CI: t-interval "
                   "over per-deal mean point differences"),
        "versions": _versions(),
    }
    if sprt is not None:
        res["sprt"] = sprt
        res["deals_per_pair"] = sprt["deals"]
    if k == 2:
        pr = pair_results[0]
        res.update({key: pr[key] for key in ("games", "deals", "wins", "draws", "win_rate", "win_rate_ci", "adp",
                                               "adp_ci", "per_agent")})
        if keep_deals:
            res["deal_win_rates"] = pr["_pair_win_rates"]
    else:
        res.update(_round_robin(labels, res["specs"], pairs, pair_results, keep_deals))
    res["agent_stats"] = agent_stats(labels, pairs, per_pair_deals)
    res["timing"] = {"elapsed_s": round(elapsed, 3), "workers": cfg.num_workers,
                     "core": cores[0] if len(set(cores)) == 1 else "mixed",
                     "games_per_s": round(res["games"] / elapsed, 2) if elapsed > 0 else None}
    if len(set(cores)) > 1:
        res["timing"]["core_by_pair"] = [[labels[i], labels[j], c] for (i, j), c in zip(pairs, cores)]
    if write:
        (out_dir / "results.json").write_text(json.dumps(res, indent=2) + "\n")
        _write_csv(out_dir / "results.csv", pair_results)
        _write_deals(out_dir / "deals.csv", [(labels[i], labels[j], per_pair_deals[(i, j)]) for (i, j) in pairs])
        if cfg.plots:
            _plots(out_dir, res, pair_results)
    res["out"] = str(out_dir)      # not part of results.json (it is the folder that holds it)
    return res


def _tasks(cfg: EvalConfig, rules, labels: List[str], pairs: List[Tuple[int, int]], records_dir: Optional[Path],
           cores: List[str], deal_range: range, chunk: Optional[int] = None
           ) -> Tuple[List[Tuple[Any, ...]], List[Tuple[int, int]]]:
    """The chunks of the deals ``deal_range`` to play, pairing by pairing in deal order (each pairing on
    its core), and the pairing of each."""
    chunk = chunk or max(1, min(25, cfg.games // (4 * cfg.num_workers) or 1))
    tasks, task_pairs = [], []
    for (i, j), core in zip(pairs, cores):
        pl = _pair_label(labels[i], labels[j])
        for start in range(deal_range.start, deal_range.stop, chunk):
            deals = list(range(start, min(deal_range.stop, start + chunk)))
            tasks.append((rules.to_dict(), cfg.agents[i], cfg.agents[j], cfg.seed, deals,
                          str(records_dir) if records_dir else None, pl, core))
            task_pairs.append((i, j))
    return tasks, task_pairs


def _pair_label(a: str, b: str) -> str:
    return f"{_slug(a)}-vs-{_slug(b)}"


def _play_sequential(cfg: EvalConfig, rules, labels: List[str], records_dir: Optional[Path], cores: List[str],
                     test, task_runner) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """The deals of a duel under a sequential test (:func:`~experiments.evaluation.sprt.run_sequential`),
    in batches of four deals per worker; records of the deals played past the stopping point removed."""
    workers = cfg.num_workers
    with _local_runner(1 if task_runner else workers, cfg.progress and not task_runner, cfg.games) as local:
        run = (lambda tasks: list(task_runner(_play_chunk, tasks))) if task_runner else local

        def play(start: int, stop: int) -> List[Dict[str, Any]]:
            tasks, _ = _tasks(cfg, rules, labels, [(0, 1)], records_dir, cores, range(start, stop), chunk=2)
            return [d for chunk in run(tasks) for d in chunk]

        deals, sprt = run_sequential(test, cfg.games, max(4, 4 * workers), play)
    if records_dir is not None:
        for path in records_dir.glob(f"{_pair_label(labels[0], labels[1])}_deal*_g*.json"):
            if int(path.stem.rsplit("_deal", 1)[1].split("_g")[0]) >= len(deals):
                path.unlink()
    return deals, sprt


def _pair_result(cfg: EvalConfig, labels: List[str], i: int, j: int, deals: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One pairing's statistics over its deals (``_pair_win_rates``: per deal, kept out of the files)."""
    st = pair_stats(deals)
    return {
        "agents": [labels[i], labels[j]],
        "specs": [cfg.agents[i], cfg.agents[j]],
        **{key: st[key] for key in ("deals", "games", "wins", "draws", "win_rate", "win_rate_ci", "adp",
                                      "adp_ci")},
        "per_agent": {labels[i]: st["per_side"][0], labels[j]: st["per_side"][1]},
        "_pair_win_rates": st["pair_win_rates"],
    }


def _round_robin(labels: List[str], specs: List[str], pairs: List[Tuple[int, int]],
                 pair_results: List[Dict[str, Any]], keep_deals: bool) -> Dict[str, Any]:
    """A round-robin's summary: every pairing, the win-rate matrix, ratings and each agent's overall rate."""
    k = len(labels)
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
    ratings, scale = anchor_ratings({labels[i]: elo[i] for i in range(k)}, dict(zip(labels, specs)))
    overall = {}
    for i in range(k):
        m, ci = win_rate_ci(per_agent_pairs[i])
        overall[labels[i]] = {"win_rate": m, "win_rate_ci": ci}
    return {
        "games": sum(pr["games"] for pr in pair_results),
        "pairs": [{**{key: v for key, v in pr.items() if not key.startswith("_")},
                   **({"deal_win_rates": pr["_pair_win_rates"]} if keep_deals else {})} for pr in pair_results],
        "win_rate_matrix": matrix,
        "ratings": ratings,
        "rating_method": f"Bradley-Terry MLE, one virtual draw per pair, Elo scale, {scale}",
        "rating_scale": scale,
        "overall": overall,
    }


def _run_tasks(tasks: List[Tuple[Any, ...]], workers: int, progress: bool, total: int) -> List[List[Dict]]:
    with _local_runner(min(workers, len(tasks)), progress, total) as run:
        return run(tasks)


def _local_runner(workers: int, progress: bool, total: int):
    """``run(tasks)``: :func:`_play_chunk` of each task on one pool kept open for several calls, with a
    progress bar of ``total`` deals (:func:`experiments.processes.pool_runner`)."""
    bar = tqdm(total=total, unit="deal", desc="evaluate", file=sys.stderr, dynamic_ncols=True) if progress else None
    return pool_runner(_play_chunk, workers, bar, size=lambda t: len(t[4]))
