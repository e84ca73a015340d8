"""Search at decision time over a trained policy: spec ``search(base=champion_v1, worlds=96, candidates=3)``.

At a decision where search can change the outcome, the agent

1. takes the base policy's ``candidates`` most likely legal actions at this observation;
2. samples ``worlds`` states its seat cannot tell from the real one
   (:func:`handfoot_env.belief.sample_worlds`: the hidden cards dealt again from its view);
3. plays each candidate in each world and the rest of the round with the base policy for every
   seat, on the compiled core: all ``worlds x candidates`` games in one :class:`CoreBatch`, one
   forward pass of the base policy per tick for every game still running whose player has a choice
   (a player with one legal action plays it);
4. scores each game by the searching team's round score less the best other team's (at the
   round's end; at ``horizon`` ticks, if set, by the round's score as it stands then);
5. plays the candidate of best mean score, but leaves the base policy's choice only when the
   gain over it, paired world by world, is more than ``z`` standard errors; with ``confirm=N``,
   only when that candidate's gain is again more than ``z`` standard errors in ``N`` fresh worlds
   (the best of several noisy means is biased upwards; the fresh worlds are not).

Elsewhere it plays the base policy's choice at once: with one legal action, and when the base
policy is sure (its top action's probability at least ``confident``) unless the decision is
whether to take the pile (``pickup`` legal).  With the first champion and the defaults that is
a little over one decision in four (docs/search.md, where the held-out probe that chose the defaults
is described: ``scripts/search_gains.py``).

The rollouts play every seat with the base policy on that seat's own observation, so the
searching seat's later moves never see the world's hidden cards (no strategy fusion: only the
action now is chosen per information state, from means over worlds).  Each decision draws its
worlds from the agent's generator, seeded by ``reset``: a game replays exactly for a seed, as long
as ``max_seconds`` (a bound on one decision's search: the rollouts still running are then scored
as they stand) is not reached.

Arguments: ``base`` (a trained policy spec: ``champion_v1``, the default, on which every published search
figure rests; ``champion_v2``, ``champion`` or ``'policy:PATH'``), ``worlds`` (96),
``candidates`` (3), ``confident`` (0.8), ``z`` (1.0), ``horizon`` (0: the round's end),
``max_seconds`` (10.0), ``weighted`` (false: uniform worlds; true: worlds weighted by the base
policy's probability of the last discard), ``confirm`` (0: none; else the worlds of the second test
of a departure).  ``agent.stats`` counts decisions, searches, deviations from the base policy,
departures withdrawn by the second test, the seconds spent searching, rollout ticks, the rows played
at those ticks (``rows``) and those of them with one legal action (``one_legal``).
"""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from handfoot_env.actions import PICKUP
from handfoot_env.belief import WorldSampler, discard_likelihood
from handfoot_env.compiled import load
from handfoot_env.observation import observation_size
from handfoot_env.turns import play_batch

from .base import Agent
from .policy import NumpyPolicy, TorchPolicy

#: the arguments of ``search(...)`` and their defaults
PARAMS: Dict[str, Any] = {"base": "champion_v1", "worlds": 96, "candidates": 3, "confident": 0.8, "z": 1.0,
                          "horizon": 0, "max_seconds": 10.0, "weighted": False, "confirm": 0}


def check_base(base: Any) -> str:
    """``base`` if it can name a search's base policy (a spec, not itself a search), else a ValueError."""
    if not isinstance(base, str) or base.strip().startswith("search"):
        raise ValueError(f"search: base must be a trained policy spec (champion or 'policy:PATH'), got {base!r}")
    return base


def _int_arg(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"search: {name} must be an integer from {low} to {high}, got {value!r}")
    return value


def _float_arg(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"search: {name} must be a number from {low} to {high}, got {value!r}")
    return float(value)


class SearchAgent(Agent):
    """Decision-time search over a base policy (see the module docstring)."""

    name = "search"
    needs_observation = True
    needs_view = True

    def __init__(self, seed: int = 0, base: str = "champion_v1", worlds: int = 96, candidates: int = 3,
                 confident: float = 0.8, z: float = 1.0, horizon: int = 0, max_seconds: float = 10.0,
                 weighted: bool = False, confirm: int = 0, base_agent: Optional[Agent] = None):
        """``base`` names the base policy's spec; ``base_agent`` is that agent, built by the caller
        (``make_agent("search(...)")`` builds it from ``base`` with :func:`check_base` first)."""
        super().__init__(seed)
        base = check_base(base)
        if base_agent is None:
            raise ValueError("search: the base agent is built by make_agent('search(base=...)'); "
                             "SearchAgent itself is given it as base_agent")
        self.worlds = _int_arg("worlds", worlds, 1, 4096)
        self.candidates = _int_arg("candidates", candidates, 2, 64)
        self.confident = _float_arg("confident", confident, 0.0, 1.0)
        self.z = _float_arg("z", z, 0.0, 100.0)
        self.horizon = _int_arg("horizon", horizon, 0, 100000)
        self.max_seconds = _float_arg("max_seconds", max_seconds, 0.001, 3600.0)
        if not isinstance(weighted, bool):
            raise ValueError(f"search: weighted must be true or false, got {weighted!r}")
        self.weighted = weighted
        self.confirm = _int_arg("confirm", confirm, 0, 4096)
        self.base = base_agent
        self.policy = getattr(self.base, "policy", None)
        if self.policy is None or not hasattr(self.policy, "logits"):
            raise ValueError(f"search: base {base!r} is not a trained policy (champion or 'policy:PATH'): search "
                             "plays its rollouts with one forward pass of the base policy per tick")
        self.base_spec = base
        self.forward = TorchPolicy(self.policy) if isinstance(self.policy, NumpyPolicy) else self.policy
        self._batches: Dict[int, Any] = {}     # compiled CoreBatch by row count
        self._cut = False
        self.np_rng = np.random.default_rng(self.seed)
        self.stats: Dict[str, float] = {"decisions": 0, "searched": 0, "deviated": 0, "withdrawn": 0,
                                        "seconds": 0.0, "cut": 0, "ticks": 0, "stuck": 0, "rows": 0,
                                        "one_legal": 0}
        #: wall and process CPU seconds of each search
        self.search_seconds: List[float] = []
        self.search_cpu_seconds: List[float] = []

    def reset(self, seat, rules, seed) -> None:
        super().reset(seat, rules, seed)
        self.base.reset(seat, rules, seed)
        n_obs = observation_size(rules.players, rules.teams)
        if self.policy.visible != n_obs:
            raise ValueError(f"{self.name}: the base policy reads {self.policy.visible} observation entries, but "
                             f"{rules.players} players in {rules.teams} teams give {n_obs}")
        self.np_rng = np.random.default_rng([int(seed) & (2 ** 63 - 1), int(seat)])

    # ------------------------------------------------------------ deciding
    def act(self, observation, view) -> int:
        if observation is None or view is None:
            raise ValueError("search needs the observation dict and the seat's view")
        legal = list(view.legal_actions)
        if not legal:
            raise ValueError(f"{self.name}: seat {view.seat} is not to act")
        self.stats["decisions"] += 1
        if len(legal) == 1:
            return legal[0]
        ranked, prob = self.ranked(observation["observation"], legal)
        best = ranked[0]
        if not self.searches(prob[0], legal):
            return best
        cands = ranked[:self.candidates]
        start, cpu = time.perf_counter(), time.process_time()
        deadline = start + self.max_seconds                  # one bound for the whole search, confirmation included
        self._cut = False
        mean, se = self._gains(view, cands, self.worlds, deadline)
        pick = int(np.argmax(mean))
        departs = pick != 0 and mean[pick] > self.z * se[pick]
        if departs and self.confirm:
            again, se2 = self._gains(view, [cands[0], cands[pick]], self.confirm, deadline)
            departs = again[1] > self.z * se2[1]
            self.stats["withdrawn"] += not departs
        self.stats["cut"] += self._cut
        spent = time.perf_counter() - start
        self.search_cpu_seconds.append(time.process_time() - cpu)
        self.stats["searched"] += 1
        self.stats["seconds"] += spent
        self.search_seconds.append(spent)
        if not departs:
            return best
        self.stats["deviated"] += 1
        return cands[pick]

    def ranked(self, observation, legal: Sequence[int]):
        """``legal`` ordered by the base policy's preference at ``observation`` (ties by position),
        and the base policy's probabilities in that order."""
        obs = np.asarray(observation, dtype=np.float32)
        z = np.asarray(self.policy.logits(obs), dtype=np.float64)[list(legal)]
        order = np.argsort(-z, kind="stable")
        p = np.exp(z - z.max())
        p /= p.sum()
        return [legal[int(i)] for i in order], p[order]

    def searches(self, top: float, legal: Sequence[int]) -> bool:
        """Whether a decision is searched: more than one legal action, and the base policy's top action
        below ``confident`` or taking the pile legal."""
        return len(legal) > 1 and (top < self.confident or PICKUP in legal)

    def paired_gains(self, view, cands: Sequence[int], n: int):
        """Each of ``cands``' mean gain over the first in the same ``n`` fresh worlds of ``view``, played
        as a search plays them (the worlds from the agent's generator), and its standard error, paired
        world by world; every rollout runs to the round's end or ``horizon``: ``max_seconds`` does not
        cut them."""
        return self._gains(view, list(cands), n, float("inf"))

    def _gains(self, view, cands: List[int], n: int, deadline: float):
        """Each candidate's mean gain over the first (the base policy's choice), paired world by world
        over ``n`` fresh worlds, and its standard error."""
        gain = self._evaluate(view, cands, n, deadline)
        gain = gain - gain[:, :1]
        se = gain.std(axis=0, ddof=1) / np.sqrt(gain.shape[0]) if gain.shape[0] > 1 else np.zeros(len(cands))
        return gain.mean(axis=0), se

    def _worlds(self, view, n: int) -> list:
        sampler = WorldSampler(view)
        rng = self.np_rng
        if not self.weighted:
            return [sampler.sample(rng) for _ in range(n)]
        pool = [sampler.sample(rng) for _ in range(4 * n)]
        w = [discard_likelihood(self.base, g, sampler.public) for g in pool]
        if w[0] is None or not sum(w) > 0:
            return pool[:n]
        weights = np.asarray(w, dtype=np.float64)
        pick = rng.choice(len(pool), size=n, replace=True, p=weights / weights.sum())
        return [pool[i] for i in pick]

    def _evaluate(self, view, cands: List[int], n: int, deadline: Optional[float] = None) -> np.ndarray:
        """The score of each candidate in each of ``n`` fresh worlds: ``(n, candidates)``; the rollouts
        still running at ``deadline`` (``perf_counter`` time; default ``max_seconds`` from now), and
        those that reach a state with no legal action, are scored as they stand."""
        worlds = self._worlds(view, n)
        nw, nc = len(worlds), len(cands)
        rows = nw * nc
        b = self._batches.get(rows)
        if b is None or b.rules != view.rules:
            b = self._batches[rows] = load().CoreBatch(view.rules, rows)
        b.load_worlds(worlds, copies=nc)
        b.step(np.full(rows, -1, dtype=np.int64))
        b.step(np.repeat(np.asarray(cands, dtype=np.int64), nw))
        nrs0 = int(b.rounds_scored()[0])
        if deadline is None:
            deadline = time.perf_counter() + self.max_seconds
        acts = np.full(rows, -2, dtype=np.int64)
        stuck = np.zeros(rows, dtype=bool)
        forward = self.forward
        played = [0, 0]                                     # rows played, rows with one legal action
        horizon = self.horizon

        def playing(tick: int) -> Optional[np.ndarray]:
            running = np.flatnonzero(b.in_round(nrs0) & ~stuck)
            live = b.counts[running] != 0                   # legal actions of each row's player to act
            if not live.all():
                # a world the sampler kept after its tries though its turn player cannot go on: no
                # legal action; it stops here and is scored as it stands
                dead = running[~live]
                stuck[dead] = True
                self.stats["stuck"] += len(dead)
                running = running[live]
            if not len(running):
                return None
            if (horizon and tick >= horizon) or time.perf_counter() > deadline:
                if not horizon or tick < horizon:
                    self._cut = True
                return None
            return running

        def act(running: np.ndarray) -> np.ndarray:
            acts[:] = -2
            one = b.counts[running] == 1                    # one legal action: no network needed
            acts[running[one]] = b.legal_ids[running[one], 0]
            free = running[~one]
            played[0] += len(running)
            played[1] += len(running) - len(free)
            if len(free):
                acts[free] = forward.best(b.obs[free], b.mask[free])
            return acts

        ticks = play_batch(playing, act, lambda running, a: b.step(a))
        rows_played, one_legal = played
        self.stats["ticks"] += ticks
        self.stats["rows"] += rows_played
        self.stats["one_legal"] += one_legal
        done = b.rounds_scored() > nrs0
        scores = b.standing()
        scores[done] = b.round_score(nrs0)[done]
        team = view.team
        own = scores[:, team]
        others = np.delete(scores, team, axis=1).max(axis=1)
        return (own - others).reshape(nc, nw).T


__all__ = ["SearchAgent", "PARAMS"]
