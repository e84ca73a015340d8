"""League training (``league:`` of a ``batched`` or ``dmc`` training config): AlphaStar's league on
the batched games.

The run's learner is the league's **main agent**.  Instead of the config's ``opponents`` mixture, each
of its training games draws the opposing team from the league's **members**:

* ``main``: the current main itself (self-play, share ``league.self_play`` of the games);
* ``past_main``: the main's periodic snapshots (``snapshots.every_updates``, the last
  ``snapshots.keep``), named ``main@STEP``;
* ``frozen``: trained policies named in ``league.pool`` (``champion``, ``policy:PATH``), played by
  their network in the batched forward passes, sampling as snapshots do;
* ``agent``: any other agent spec in ``league.pool`` (``strategic``, ``greedy``, ...), played in the
  sampler between network decisions;
* ``main_exploiter``: each of the ``league.main_exploiters`` networks trained against the current
  main (its latest weights), named ``main_exploiter0``, ...;
* ``exploiter``: an exploiter frozen when it was reset, named ``main_exploiterK@STEP`` (the last
  ``league.keep_exploiters`` are kept).

**Prioritised fictitious self-play** (AlphaStar, Vinyals et al. 2019): the games not given to
self-play are shared among the other members in proportion to ``f(x)``, where ``x`` is the main's
recent win rate against the member (the payoff table; 0.5 before any game):
``hard`` ``f(x) = (1 - x) ** p`` (``league.p``) spends the games on the members the main still
loses to, ``variance`` ``f(x) = x (1 - x)`` on those it is even with, ``uniform`` ``f(x) = 1`` is
plain fictitious self-play (:func:`pfsp_weights`).  The weights are recomputed every
``league.refresh_updates`` updates of the main and sent to the samplers with the networks of the pool
(:func:`league_pool`); each game's seat plan is :func:`experiments.training.selfplay.plan_seats` with
the members' names.

**Main exploiters** train against the current main only, in games of their own
(``league.exploiter_games`` games, on the run's sampler transport, played then learned from), with
the run's learner and hyperparameters.  After each update of the main, exploiters are updated (the
one with the fewest decisions first) until they have made ``league.exploiter_share`` of the
league's decisions.  An exploiter **restarts from its start weights** (``league.exploiter_init``,
else the run's ``init``, else a fresh network) when its win rate against the main over its last
``league.exploiter_window`` games reaches ``league.exploiter_threshold``, or when it has spent
``league.exploiter_budget`` decisions since its last start; either way its weights are first
frozen into the league as an ``exploiter`` member.

**The payoff table** holds, for every pair of members, the results of the training games between
them (a win 1, a draw 1/2, a game cut by ``max_actions`` not counted): all of them (``games``,
``wins``) and, for the weighting, counts decayed by ``league.decay`` each time a rollout brings new
games of the pair (``payoff``: the recent win rate of the row member against the column member).
Only training games count: there is no separate duplicate check (the run's ``evaluation:`` measures
the main on duplicate deals as usual).  It is saved with every checkpoint and in the run folder as
``league.json`` (members: name, kind, origin step; ``payoff``, ``games``, ``wins``; the exploiters'
states) with its heat map ``league.png`` (and TensorBoard's ``league/payoff`` image).  ``--resume``
restores members, payoff table, exploiters (their networks, optimiser states, counters) and PFSP
weights; the games are reseeded from the session's seed, not replayed.
"""
from __future__ import annotations

import copy
import json
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

import numpy as np

from agents.policy import actor_arrays, actor_from_arrays, save_actor, ACTOR_FILE
from experiments.config import ConfigError
from experiments.runs import write_json
from experiments.training.backends import backend
from experiments.training.config import SELF, TrainConfig
from experiments.training.learner import RunContext
from experiments.training.sampler_group import SamplerGroup

LEAGUE_FILE = "league.json"
LEAGUE_WEIGHTS = "league.npz"
LEAGUE_PLOT = "league.png"
#: the member kinds (see the module docstring)
KINDS = ("main", "past_main", "frozen", "agent", "main_exploiter", "exploiter")
MAIN = "main"
#: the weightings of prioritised fictitious self-play
WEIGHTINGS = ("hard", "variance", "uniform")
FORMAT = 1


def pfsp_weights(rates: Sequence[Optional[float]], weighting: str = "hard", p: float = 2.0) -> np.ndarray:
    """The share of games each member gets from the main's win rates against them (None: no games
    yet, taken as 0.5): ``hard`` ``(1 - x) ** p``, ``variance`` ``x (1 - x)``, ``uniform`` 1; normalised
    to sum to 1 (uniform where every weight is 0)."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting: expected one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
    x = np.asarray([0.5 if r is None else float(r) for r in rates], np.float64)
    if weighting == "hard":
        w = (1.0 - x) ** float(p)
    elif weighting == "variance":
        w = x * (1.0 - x)
    else:
        w = np.ones_like(x)
    total = w.sum()
    if not len(w):
        return w
    return w / total if total > 0 else np.full(len(w), 1.0 / len(w))


def league_pool(pool: Sequence[Dict[str, Any]], names: Sequence[str], mixture: Dict[str, float]) -> Dict[str, Any]:
    """What the samplers are sent in place of a snapshot pool (:meth:`Sampler.set_policies`): the
    networks, their member names (a game against one of them seats it), and the opponent mixture
    over member names and agent specs."""
    return {"pool": list(pool), "names": list(names), "mixture": dict(mixture)}


def is_network_spec(spec: str) -> bool:
    """Whether a pool spec is a trained policy (played by its network in the batched passes)."""
    from agents.registry import SHIPPED
    return spec in SHIPPED or spec.startswith("policy:")


def spec_weights(spec: str) -> Dict[str, Any]:
    """The network of a ``frozen`` pool spec; a ConfigError naming it when it is not a policy."""
    from agents.registry import policy_weights
    try:
        return policy_weights(spec)
    except (ValueError, OSError) as e:
        raise ConfigError(f"league.pool: {spec!r} is not a trained policy: {e}") from None


# =========================================================================== the payoff table
class Payoff:
    """Results between members: all games (``wins``, ``games``) and decayed counts for the weighting."""

    def __init__(self, decay: float = 0.99):
        self.decay = float(decay)
        self.total: Dict[Tuple[str, str], List[float]] = {}     # (a, b) -> [wins of a, games]
        self.recent: Dict[Tuple[str, str], List[float]] = {}    # the same, decayed per batch

    def add(self, a: str, b: str, results: Sequence[float]) -> None:
        """One batch of games of ``a`` against ``b`` (``results``: ``a``'s, 1, 1/2 or 0)."""
        if not len(results) or a == b:
            return
        n, w = float(len(results)), float(sum(results))
        for pair, wins in (((a, b), w), ((b, a), n - w)):
            t = self.total.setdefault(pair, [0.0, 0.0])
            t[0] += wins
            t[1] += n
            r = self.recent.setdefault(pair, [0.0, 0.0])
            r[0] = self.decay * r[0] + wins
            r[1] = self.decay * r[1] + n

    def rate(self, a: str, b: str) -> Optional[float]:
        """``a``'s recent win rate against ``b`` (None: no games)."""
        r = self.recent.get((a, b))
        return None if not r or r[1] <= 0 else r[0] / r[1]

    def games(self, a: str, b: str) -> int:
        return int(self.total.get((a, b), (0, 0))[1])

    def drop(self, name: str) -> None:
        for d in (self.total, self.recent):
            for pair in [p for p in d if name in p]:
                del d[pair]

    def matrices(self, names: Sequence[str]) -> Dict[str, Any]:
        """``payoff`` (recent win rates, None without games), ``games`` and ``wins`` over ``names``."""
        payoff = [[self.rate(a, b) for b in names] for a in names]
        games = [[self.games(a, b) for b in names] for a in names]
        wins = [[float(self.total.get((a, b), (0.0, 0.0))[0]) for b in names] for a in names]
        return {"payoff": payoff, "games": games, "wins": wins}

    def to_dict(self) -> Dict[str, Any]:
        return {"decay": self.decay, "pairs": [[a, b, *self.total[(a, b)], *self.recent.get((a, b), (0.0, 0.0))]
                                               for a, b in sorted(self.total)]}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Payoff":
        out = cls(float(d["decay"]))
        for a, b, tw, tg, rw, rg in d["pairs"]:
            out.total[(str(a), str(b))] = [float(tw), float(tg)]
            out.recent[(str(a), str(b))] = [float(rw), float(rg)]
        return out


@dataclass
class Member:
    """One entry of the league."""

    name: str
    kind: str
    origin: int
    """The main's decisions when the member joined (0: from the start)."""
    spec: Optional[str] = None
    """The agent spec of a ``frozen`` or ``agent`` member."""

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": self.name, "kind": self.kind, "origin": int(self.origin)}
        if self.spec is not None:
            d["spec"] = self.spec
        return d


# =========================================================================== exploiters
@dataclass
class Exploiter:
    """A main exploiter: its learner, its games and its counters (saved in ``league.json``)."""

    name: str
    index: int
    generation: int = 0
    """Restarts so far."""
    decisions: int = 0
    """Decisions since its last start."""
    total: int = 0
    """Decisions in all."""
    started: int = 0
    """The main's decisions at its last start."""
    recent: Deque[float] = field(default_factory=deque)
    """Its results against the main in its last games (at most ``league.exploiter_window``)."""
    resets: List[Dict[str, Any]] = field(default_factory=list)
    """Each restart: main step, why (threshold or budget), win rate, decisions."""
    learner: Any = None
    group: Any = None

    def win_rate(self) -> Optional[float]:
        return float(np.mean(self.recent)) if self.recent else None

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "generation": self.generation, "decisions": self.decisions, "total": self.total,
                "started": self.started, "recent": list(self.recent), "resets": self.resets}


# =========================================================================== the league
class League:
    """The league of one run (see the module docstring); the :class:`~experiments.training.trainer.Trainer`
    calls :meth:`setup`, :meth:`snapshot_added`, :meth:`main_pool`, :meth:`after_main`, :meth:`save`,
    :meth:`write_run_files` and :meth:`close`."""

    def __init__(self, cfg: TrainConfig, run: Path, seed: int, log: Callable[[str], None] = print,
                 scalar: Callable[[str, Optional[float], int], None] = lambda *a: None,
                 metric: Callable[[Dict[str, Any]], None] = lambda r: None):
        self.cfg, self.lc = cfg, cfg.league
        self.run = run
        self.seed = int(seed)
        self.log, self.scalar, self.metric = log, scalar, metric
        self.payoff = Payoff(self.lc.decay)
        self.past: List[Member] = []                    # parallel to the trainer's snapshot pool
        self.fixed: List[Member] = []                   # frozen and agent members from league.pool
        self.frozen_weights: Dict[str, Dict[str, Any]] = {}
        self.frozen_exploiters: List[Member] = []
        self.exploiters: List[Exploiter] = [Exploiter(f"main_exploiter{k}", k) for k in range(self.lc.main_exploiters)]
        self.updates = 0                                # the main's updates since the weights were sent
        self.weights: Dict[str, float] = {}             # the PFSP mixture last sent
        self.changed = True
        self.start_step = 0                             # the main's decisions when the league started
        self.id = ""

    # ---------------------------------------------------------------- members
    def members(self) -> List[Member]:
        main = Member(MAIN, "main", self.start_step)
        ex = [Member(e.name, "main_exploiter", e.started) for e in self.exploiters]
        return [main] + self.past + self.fixed + ex + self.frozen_exploiters

    def opponents(self) -> List[Member]:
        """The members the main's games draw from (by PFSP), every one but the main itself."""
        return [m for m in self.members() if m.name != MAIN]

    # ---------------------------------------------------------------- setup and resume
    def setup(self, resume: Optional[Path], snapshots: int, steps: int, state: Dict[str, Any],
              samplers_busy: Callable[[], bool] = lambda: False) -> None:
        """Load the pool's members, and the league of the checkpoint ``resume`` (or start one at ``steps``);
        build the exploiters' learners and games."""
        for spec in self.lc.pool:
            if is_network_spec(spec):
                self.frozen_weights[spec] = spec_weights(spec)
                self.fixed.append(Member(spec, "frozen", 0, spec))
            else:
                self.fixed.append(Member(spec, "agent", 0, spec))
        self.busy = samplers_busy
        saved = read_league(resume) if resume is not None else None
        if saved is None:
            self.start_step = int(steps)
            self.id = state.setdefault("league_id", f"{self.cfg.name}-s{self.cfg.seed}-{time.time_ns()}")
            self.past = [Member(f"{MAIN}@{steps}#{k}", "past_main", steps) for k in range(snapshots)]
        else:
            self.restore(saved, resume, snapshots, state)
        for ex in self.exploiters:
            self.build_exploiter(ex, resume if saved is not None else None, samplers_busy)

    def restore(self, saved: Dict[str, Any], resume: Path, snapshots: int, state: Dict[str, Any]) -> None:
        check_league_file(saved, state, self.cfg, where=str(resume / LEAGUE_FILE))
        self.id = saved["id"]
        self.start_step = int(saved["start_step"])
        self.payoff = Payoff.from_dict(saved["payoff_pairs"])
        self.payoff.decay = float(self.lc.decay)
        by_kind: Dict[str, List[Member]] = {}
        for m in saved["members"]:
            by_kind.setdefault(m["kind"], []).append(Member(m["name"], m["kind"], int(m["origin"]), m.get("spec")))
        self.past = by_kind.get("past_main", [])
        if len(self.past) != snapshots:
            raise ConfigError(f"resume: {resume / LEAGUE_FILE} names {len(self.past)} past mains, the checkpoint's "
                              f"snapshot pool holds {snapshots}")
        self.frozen_exploiters = by_kind.get("exploiter", [])
        arrays = load_league_weights(resume / LEAGUE_WEIGHTS)
        for m in self.frozen_exploiters:
            if m.name not in arrays:
                raise ConfigError(f"resume: {resume / LEAGUE_WEIGHTS} has no weights of member {m.name!r}")
            self.frozen_weights[m.name] = arrays[m.name]
        states = {e["name"]: e for e in saved["exploiters"]}
        for ex in self.exploiters:
            s = states.get(ex.name)
            if s is None:
                continue
            ex.generation, ex.decisions, ex.total = int(s["generation"]), int(s["decisions"]), int(s["total"])
            ex.started = int(s["started"])
            ex.recent = deque((float(r) for r in s["recent"]), maxlen=self.lc.exploiter_window)
            ex.resets = list(s["resets"])
        self.weights = dict(saved.get("weights", {}))

    def exploiter_config(self) -> TrainConfig:
        """The exploiters' config: the run's, started from ``league.exploiter_init`` (else ``init``),
        on-policy, without learning-rate annealing."""
        ecfg = copy.deepcopy(self.cfg)
        if self.lc.exploiter_init is not None:
            ecfg.init = self.lc.exploiter_init
        ecfg.batched.pipeline = False
        ecfg.ppo.anneal_lr = False
        if getattr(ecfg, "init", None) is not None:
            from experiments.training.config import init_weights
            init_weights(ecfg)              # the network's shape from the start weights
        return ecfg

    def exploiter_seed(self, ex: Exploiter, what: int) -> int:
        return int(np.random.SeedSequence([self.seed, 7919, ex.index, ex.generation, what]).generate_state(1)[0])

    def build_exploiter(self, ex: Exploiter, resume: Optional[Path], busy: Callable[[], bool]) -> None:
        """``ex``'s learner (from its checkpoint files in ``resume``, else its start weights) and games."""
        ecfg = self.exploiter_config()
        ex.learner = backend(ecfg.backend).create(ecfg)
        folder = resume / "league" / ex.name if resume is not None else None
        if folder is not None and not folder.is_dir():
            raise ConfigError(f"resume: {folder} is missing (the exploiter's learner)")
        ctx = RunContext(seed=self.exploiter_seed(ex, 0), resume=folder, timesteps=ex.decisions, quiet=True,
                         state={}, samplers_busy=busy)
        ex.learner.setup(ctx, {} if folder is not None else None)
        ex.recent = deque(ex.recent, maxlen=self.lc.exploiter_window)
        if ex.group is None:
            from experiments.training.ray_samplers import transport_for     # Ray only with --ray
            ex.group = SamplerGroup.for_config(ecfg, self.exploiter_seed(ex, 1), transport=transport_for(ecfg),
                                               log=self.log, games=self.lc.exploiter_games, opponents={MAIN: 1.0},
                                               **ex.learner.sampler_options())

    # ---------------------------------------------------------------- the main's opponents
    def snapshot_added(self, steps: int, snapshots: int) -> None:
        """The trainer froze the main into its snapshot pool (``snapshots`` now in it)."""
        self.past.append(Member(f"{MAIN}@{steps}", "past_main", steps))
        while len(self.past) > snapshots:
            self.payoff.drop(self.past.pop(0).name)
        self.changed = True

    def mixture(self) -> Dict[str, float]:
        """The opponent mixture of the main's games: self-play and PFSP over the other members."""
        opp = self.opponents()
        w = pfsp_weights([self.payoff.rate(MAIN, m.name) for m in opp], self.lc.weighting, self.lc.p)
        share = 1.0 - float(self.lc.self_play)
        out = {m.name: float(share * x) for m, x in zip(opp, w)}
        if self.lc.self_play > 0:
            out[SELF] = float(self.lc.self_play)
        return out

    def main_pool(self, snapshots: Sequence[Dict[str, Any]], force: bool = False) -> Optional[Dict[str, Any]]:
        """The pool to send with the main's next rollout (:func:`league_pool`), or None when nothing
        changed since the last one (members, or ``league.refresh_updates`` updates gone by)."""
        if not (force or self.changed or self.updates >= self.lc.refresh_updates):
            return None
        self.updates = 0
        self.changed = False
        self.weights = self.mixture()
        pool: List[Dict[str, Any]] = []
        names: List[str] = []
        for m, w in zip(self.past, snapshots):
            names.append(m.name)
            pool.append(w)
        for m in self.fixed + self.frozen_exploiters:
            if m.kind != "agent":
                names.append(m.name)
                pool.append(self.frozen_weights[m.name])           # a frozen member's name is its spec
        for ex in self.exploiters:
            names.append(ex.name)
            pool.append(ex.learner.actor())
        mixture = {k: v for k, v in self.weights.items() if v > 0}
        return league_pool(pool, names, mixture)

    # ---------------------------------------------------------------- after each update of the main
    def record_main(self, games: Sequence[Dict[str, Any]], steps: int) -> None:
        """The main's finished games into the payoff table (by opponent member)."""
        known = {m.name for m in self.opponents()}
        by: Dict[str, List[float]] = {}
        for g in games:
            if not g["truncated"] and g["opponent"] in known:
                by.setdefault(g["opponent"], []).append(float(g["result"]))
        for name, results in by.items():
            self.payoff.add(MAIN, name, results)

    def after_main(self, games: Sequence[Dict[str, Any]], steps: int, main_weights: Dict[str, Any],
                   stopping: Callable[[], bool]) -> None:
        """After one update of the main: its games into the payoff table, then the exploiters' updates
        due (until they have their share of the league's decisions, or Ctrl-C)."""
        self.record_main(games, steps)
        self.updates += 1
        share = float(self.lc.exploiter_share)
        if not self.exploiters or share <= 0:
            return
        target = share / (1.0 - share) * max(0, steps - self.start_step)
        while sum(e.total for e in self.exploiters) < target and not stopping():
            ex = min(self.exploiters, key=lambda e: (e.total, e.index))
            self.exploiter_iteration(ex, main_weights, steps)

    def exploiter_iteration(self, ex: Exploiter, main_weights: Dict[str, Any], steps: int) -> None:
        """One rollout of ``ex`` against the current main and one update; then its restart if due."""
        t0 = time.perf_counter()
        pool = league_pool([main_weights], [MAIN], {MAIN: 1.0})
        batch = ex.group.next_rollout(ex.learner.rollout_size, ex.learner.actor(), pool, False)
        stats = ex.learner.update(batch)
        n = int(batch["decisions"])
        ex.decisions += n
        ex.total += n
        results = [float(g["result"]) for g in batch["games"] if not g["truncated"]]
        ex.recent.extend(results)
        self.payoff.add(ex.name, MAIN, results)
        rate = ex.win_rate()
        self.scalar(f"league/{ex.name}/win_rate_vs_main", rate, steps)
        self.scalar(f"league/{ex.name}/decisions", float(ex.total), steps)
        self.metric({"kind": "league", "timesteps": steps, "exploiter": ex.name, "decisions": ex.total,
                     "since_start": ex.decisions, "games": len(results), "win_rate_vs_main": rate,
                     "approx_kl": stats.get("approx_kl"), "wall_s": time.perf_counter() - t0})
        why = None
        if len(ex.recent) >= self.lc.exploiter_window and rate is not None and rate >= self.lc.exploiter_threshold:
            why = "threshold"
        elif ex.decisions >= self.lc.exploiter_budget:
            why = "budget"
        if why is not None:
            self.restart(ex, steps, why)

    def restart(self, ex: Exploiter, steps: int, why: str) -> None:
        """Freeze ``ex`` into the league as an ``exploiter`` member, then start it again from its start weights."""
        name = f"{ex.name}@{steps}"
        self.frozen_weights[name] = ex.learner.actor()
        self.frozen_exploiters.append(Member(name, "exploiter", steps))
        while len(self.frozen_exploiters) > self.lc.keep_exploiters:
            old = self.frozen_exploiters.pop(0)
            self.payoff.drop(old.name)
            self.frozen_weights.pop(old.name, None)
        rate = ex.win_rate()
        ex.resets.append({"step": int(steps), "why": why, "win_rate": rate, "decisions": int(ex.decisions)})
        self.log(f"league: {ex.name} restarts ({why}: win rate {rate if rate is None else round(rate, 3)} over "
                 f"{len(ex.recent)} games after {ex.decisions:,} decisions); frozen as {name}")
        ex.generation += 1
        ex.decisions = 0
        ex.started = int(steps)
        ex.recent.clear()
        self.payoff.drop(ex.name)
        ex.learner.close()
        self.build_exploiter(ex, None, self.busy)
        self.changed = True

    # ---------------------------------------------------------------- records
    def decisions(self, steps: int) -> int:
        """The league's decisions: the main's and every exploiter's."""
        return int(steps) + sum(e.total for e in self.exploiters)

    def to_dict(self, steps: int) -> Dict[str, Any]:
        members = self.members()
        names = [m.name for m in members]
        return {"format": FORMAT, "id": self.id, "run": self.run.name, "step": int(steps),
                "league_decisions": self.decisions(steps), "start_step": self.start_step,
                "pool": list(self.lc.pool), "weighting": self.lc.weighting, "p": self.lc.p,
                "payoff_source": "training games (no separate duplicate checks); payoff: recent win rate of the "
                                 "row member against the column member, decayed counts; games, wins: all games",
                "members": [m.to_dict() for m in members], "names": names, **self.payoff.matrices(names),
                "weights": self.weights, "exploiters": [e.to_dict() for e in self.exploiters],
                "payoff_pairs": self.payoff.to_dict()}

    def save(self, folder: Path, steps: int) -> None:
        """The league into a checkpoint folder: ``league.json``, the frozen exploiters' networks
        (``league.npz``) and each exploiter's learner files (``league/NAME/``)."""
        write_json(folder / LEAGUE_FILE, self.to_dict(steps))
        arrays: Dict[str, np.ndarray] = {"names": np.asarray([m.name for m in self.frozen_exploiters], dtype=str)}
        for k, m in enumerate(self.frozen_exploiters):
            arrays.update(actor_arrays(self.frozen_weights[m.name], prefix=f"m{k}/"))
        with open(folder / LEAGUE_WEIGHTS, "wb") as f:
            np.savez(f, **arrays)
        for ex in self.exploiters:
            sub = folder / "league" / ex.name
            sub.mkdir(parents=True, exist_ok=True)
            ex.learner.save(sub)
            save_actor(ex.learner.actor(), sub / ACTOR_FILE)

    def write_run_files(self, steps: int, writer: Any = None) -> None:
        """``league.json`` and its heat map ``league.png`` in the run folder (and TensorBoard's image)."""
        data = self.to_dict(steps)
        write_json(self.run / LEAGUE_FILE, data)
        fig = plot_payoff(data)
        if fig is None:
            return
        fig.savefig(self.run / LEAGUE_PLOT, dpi=110)
        if writer is not None:
            writer.add_figure("league/payoff", fig, steps)
        import matplotlib.pyplot as plt
        plt.close(fig)

    def log_weights(self, steps: int) -> None:
        for name, w in self.weights.items():
            self.scalar(f"league/weight/{name}", w, steps)
        for m in self.opponents():
            self.scalar(f"league/win_rate_vs/{m.kind}/{m.name}", self.payoff.rate(MAIN, m.name), steps)
        self.scalar("league/decisions", float(self.decisions(steps)), steps)
        self.scalar("league/members", float(len(self.members())), steps)

    def close(self) -> None:
        for ex in self.exploiters:
            for part in (ex.group, ex.learner):
                try:
                    if part is not None:
                        part.close()
                except Exception:  # noqa: BLE001 - closing dead workers must not hide the real error
                    pass


# =========================================================================== files
def read_league(folder: Optional[Path]) -> Optional[Dict[str, Any]]:
    """The ``league.json`` of a checkpoint folder (None: it has none); a file that is not one is a ConfigError."""
    if folder is None or not (folder / LEAGUE_FILE).is_file():
        return None
    path = folder / LEAGUE_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"resume: {path} is not a league file ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("members"), list):
        raise ConfigError(f"resume: {path} is not a league file of this version")
    return data


def check_league_file(saved: Dict[str, Any], state: Dict[str, Any], cfg: TrainConfig, where: str) -> None:
    """A checkpoint's league belongs to its run (the id in ``trainer.json``) and to the config's pool."""
    own = state.get("league_id")
    if own is None or saved.get("id") != own:
        raise ConfigError(f"resume: {where} is the league of another run ({saved.get('id')!r}; this run's is {own!r})")
    if list(saved.get("pool", [])) != list(cfg.league.pool):
        raise ConfigError(f"resume: {where} was played with league.pool {saved.get('pool')}, the config says "
                          f"{list(cfg.league.pool)}")


def check_league_checkpoint(ck: Optional[Path], cfg: TrainConfig) -> None:
    """Before anything is written: a resumed league's files belong to the checkpoint's run."""
    if ck is None or not cfg.league.enabled:
        return
    saved = read_league(ck)
    try:
        state = json.loads((ck / "trainer.json").read_text()).get("state", {})
    except (OSError, ValueError) as e:
        raise ConfigError(f"resume: {ck / 'trainer.json'} is unreadable ({e})") from None
    if saved is None:
        if state.get("league_id") is not None:
            raise ConfigError(f"resume: {ck} has no {LEAGUE_FILE} (the run is a league)")
        return
    check_league_file(saved, state, cfg, str(ck / LEAGUE_FILE))


def load_league_weights(path: Path) -> Dict[str, Dict[str, Any]]:
    """The frozen exploiters' networks written by :meth:`League.save` (arrays only, no pickle)."""
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as z:
            names = [str(n) for n in z["names"]]
            return {n: actor_from_arrays(z, prefix=f"m{k}/") for k, n in enumerate(names)}
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"resume: {path} is not a league's weights file ({e})") from None


def plot_payoff(data: Dict[str, Any]) -> Any:
    """The payoff table as a heat map (a matplotlib figure; None without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = data["names"]
    m = np.asarray([[np.nan if v is None else v for v in row] for row in data["payoff"]], np.float64)
    n = len(names)
    fig, ax = plt.subplots(figsize=(1.2 + 0.55 * n, 1.0 + 0.5 * n))
    im = ax.imshow(m, vmin=0.0, vmax=1.0, cmap="RdBu")
    ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n), names, fontsize=7)
    for i in range(n):
        for j in range(n):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}\n{data['games'][i][j]}", ha="center", va="center", fontsize=5)
    ax.set_title(f"league payoff (row's recent win rate vs column) at {data['step']:,}", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    return fig


__all__ = ["League", "Payoff", "Member", "Exploiter", "pfsp_weights", "league_pool", "read_league",
           "check_league_checkpoint", "check_league_file", "plot_payoff", "LEAGUE_FILE", "LEAGUE_WEIGHTS",
           "LEAGUE_PLOT", "KINDS", "WEIGHTINGS"]
