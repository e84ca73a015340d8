"""The RLlib multi-agent env of the ``rllib`` training backend, and its self-play metrics callback.

Environment (:class:`HandFootMultiAgentEnv`)
--------------------------------------------
An RLlib ``MultiAgentEnv`` around ``handfoot_v0.raw_env`` (the AEC env, not
RLlib's ``PettingZooEnv`` wrapper, which hands the final reward to every agent
on the terminal step).  One episode is one game.  At ``reset`` it draws

* the **learner team** (uniformly, so the policy plays both teams and every
  seat position), and
* an **opponent** for the other team(s) from the configured mixture
  ``opponents: {kind: weight}``; kinds are ``self`` (the current learner on
  every seat), ``self_snapshots`` (one of ``pool_size`` frozen snapshots, drawn
  uniformly) and any ``agents.registry`` spec (``random``, ``greedy``,
  ``strategic``, ``policy:PATH``, ``rllib:PATH``).

Seats that a network plays are RLlib agents; their agent id names the module
that plays them, so the mapping function is a pure function of the id
(:func:`agent_to_module`): learner seats are ``player_<seat>`` -> module
``learner`` (both seats of the learner team share its parameters, and both
seats' experience trains it), snapshot seats are ``player_<seat>@snapshot_<k>``
-> module ``snapshot_<k>`` (not trained).  **Heuristic opponents are played
inside the env wrapper**: they need the seat's structured view
(``handfoot_env.view.SeatView``), not the encoded observation, so they cannot be
RLlib modules without shipping the engine state through the connector
pipeline; inside the env they are plain Python calls between two learner
decisions, and their seats are not agents at all.

Rewards: after every AEC step the wrapper reads the env's per-step
``rewards[player]`` and adds it to that seat's agent, including steps played by
heuristics in between; each agent gets exactly what the env assigns to its seat,
when it is assigned (RLlib keeps rewards of agents that are not acting and
credits them to the agent's previous action).  tests/test_ray.py checks the
returns against the AEC env's cumulative rewards.

This module imports Ray: it is imported only by :mod:`experiments.training.rllib` and by Ray's
env runners, never by code that runs without ``backend: rllib``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from gymnasium import spaces
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.base import agent_action
from agents.rllib_policy import LEARNER
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.config import load_rules
from handfoot_env.engine import GAME_OVER
from handfoot_env.env import raw_env
from handfoot_env.observation import observation_size
from handfoot_env.turns import play_until
from experiments.training.config import SELF, SNAPSHOTS
from experiments.training.selfplay import LEARN, SELF_NET, SNAP, OpponentPool, SeatAgents, plan_seats

SNAPSHOT = "snapshot_"


def agent_to_module(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Policy mapping: ``player_<s>`` -> ``learner``; ``player_<s>@<module>`` -> ``<module>``."""
    aid = str(agent_id)
    return aid.split("@", 1)[1] if "@" in aid else LEARNER


def snapshot_ids(pool_size: int) -> List[str]:
    return [f"{SNAPSHOT}{k}" for k in range(int(pool_size))]


def spaces_for(rules: Any):
    """Plain gymnasium (observation, action) spaces of one seat under ``rules``."""
    r = load_rules(rules)
    obs = spaces.Dict({
        "observation": spaces.Box(low=-np.inf, high=np.inf, shape=(observation_size(r.players, r.teams),),
                                  dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8)})
    return obs, spaces.Discrete(NUM_ACTIONS)


# ----------------------------------------------------------------------------- the env
class HandFootMultiAgentEnv(MultiAgentEnv):
    """One game of Hand and Foot as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` keys: ``rules`` (preset / path / mapping), ``reward``,
    ``reward_scale``, ``episode``, ``max_actions`` (as ``handfoot_v0.env``),
    ``opponents`` (``{kind: weight}``), ``pool_size`` (snapshot slots),
    ``seed`` (base seed; combined with the runner's worker and vector index).
    """
    def __init__(self, config: Optional[Dict[str, Any]] = None):
        super().__init__()
        cfg = dict(config or {})
        rules = cfg.get("rules", "pagat")
        self.env = raw_env(rules=rules, reward=cfg.get("reward", "round_score_diff"),
                           reward_scale=float(cfg.get("reward_scale", 0.001)), episode=cfg.get("episode", "game"),
                           max_actions=cfg.get("max_actions"))
        self.game = self.env.game
        self.rules = self.env.rules
        self.pool_size = int(cfg.get("pool_size", 0))
        mix = {str(k): float(w) for k, w in dict(cfg.get("opponents") or {SELF: 1.0}).items() if float(w) > 0}
        if not mix:
            raise ValueError("opponents: the mixture needs at least one kind with a positive weight")
        if SNAPSHOTS in mix and self.pool_size < 1:
            raise ValueError("opponents: 'self_snapshots' needs pool_size >= 1")
        self.pool = OpponentPool(mix)
        n = self.rules.players
        self.names = list(self.env.possible_agents)          # player_0 ...
        self.possible_agents = list(self.names) + [f"{p}@{m}" for p in self.names
                                                   for m in snapshot_ids(self.pool_size)]
        space, act = spaces_for(self.rules)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: act for a in self.possible_agents}
        base = int(cfg.get("seed", 0))
        widx = int(getattr(config, "worker_index", 0) or 0)
        vidx = int(getattr(config, "vector_index", 0) or 0)
        self._seed_seq = (base, widx, vidx)
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([base, widx, vidx])))
        self.seat_agents = SeatAgents()        # one agent per spec and seat, reseeded every game
        self.seat_ids: List[Optional[str]] = [None] * n     # agent id per seat (None: played inside)
        self.seat_agent: List[Any] = [None] * n
        self.learner_team = 0
        self.opponent = self.opponent_kind = SELF
        self.learner_seat = 0
        self.learner_return = 0.0
        self.learner_decisions = 0
        self.last_result: Optional[Dict[str, Any]] = None
        self.agents = []

    # ------------------------------------------------------------ helpers
    def _setup_seats(self, opponent: str, learner_team: int) -> None:
        g = self.game
        plan = plan_seats(opponent, g.team_of, learner_team, self.pool_size, "uniform", self.rng)
        snap = f"{SNAPSHOT}{plan.snapshot}" if plan.snapshot is not None else None
        for p, r in enumerate(plan.roles):
            self.seat_agent[p] = None
            if r in (LEARN, SELF_NET):
                self.seat_ids[p] = self.names[p]
            elif r == SNAP:
                self.seat_ids[p] = f"{self.names[p]}@{snap}"
            else:
                self.seat_ids[p] = None
                self.seat_agent[p] = self.seat_agents.seat((opponent, p), opponent, p, self.rules, self.rng)
        self.opponent = snap or opponent
        self.opponent_kind = opponent
        self.agents = [a for a in self.seat_ids if a is not None]
        self.learner_seat = next(q for q in range(g.n) if g.team_of[q] == learner_team)

    def _obs(self, p: int) -> Dict[str, np.ndarray]:
        return self.env.observe(self.names[p])

    def _step_env(self, action: int, rewards: Dict[str, float]) -> None:
        env = self.env
        if self.game.current == self.learner_seat:
            self.learner_decisions += 1
        env.step(int(action))
        r = env.rewards
        for p, aid in enumerate(self.seat_ids):
            if aid is not None:
                v = r[self.names[p]]
                if v:
                    rewards[aid] = rewards.get(aid, 0.0) + float(v)
        v = r[self.names[self.learner_seat]]
        if v:
            self.learner_return += float(v)

    def _done(self) -> Tuple[bool, bool]:
        name = self.names[0]
        return bool(self.env.terminations[name]), bool(self.env.truncations[name])

    def _advance(self, rewards: Dict[str, float]) -> Tuple[bool, bool]:
        """Play the seats handled inside the env (through the AEC env, which pays the rewards) until an
        agent must act or the game ends."""
        g = self.game
        play_until(g, lambda p: self.seat_ids[p] is not None,
                   lambda p, legal: agent_action(self.seat_agent[p], g, p, legal),
                   stop=lambda: any(self._done()), apply=lambda p, a: self._step_env(a, rewards))
        return self._done()

    def _result(self, truncated: bool) -> Dict[str, Any]:
        g = self.game
        t = self.learner_team
        others = [g.scores[u] for u in range(g.num_teams) if u != t]
        if truncated or not g.round_scores:
            result = float("nan")
        elif g.phase == GAME_OVER:
            result = 0.5 if g.winner is None else float(g.winner == t)
        else:  # a one-round episode: that round decides
            totals = g.round_scores[-1]
            best = max(totals)
            result = 0.5 if totals.count(best) > 1 else float(totals[t] == best)
        return {"opponent": self.opponent_kind, "module": self.opponent, "learner_team": t, "result": result,
                "score_diff": float(g.scores[t] - max(others)), "truncated": bool(truncated),
                "learner_return": self.learner_return, "learner_decisions": self.learner_decisions,
                "actions": int(g.action_count)}

    # ------------------------------------------------------------ MultiAgentEnv API
    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        if seed is not None:
            self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), *self._seed_seq])))
        options = dict(options or {})
        opponent = str(options.get("opponent", self.pool.sample(self.rng)))
        team = int(options.get("learner_team", self.rng.integers(self.rules.teams)))
        game_seed = int(options.get("game_seed", self.rng.integers(2 ** 31)))
        while True:
            self.env.reset(seed=game_seed)
            self.learner_team = team
            self._setup_seats(opponent, team)
            self.last_result = None
            self.learner_return = 0.0
            self.learner_decisions = 0
            rewards: Dict[str, float] = {}
            term, trunc = self._advance(rewards)
            if not (term or trunc):
                break
            game_seed = int(self.rng.integers(2 ** 31))    # (never seen) the game ended without an agent acting
        p = self.game.current
        self._pending = rewards
        return {self.seat_ids[p]: self._obs(p)}, {}

    def step(self, action_dict: Dict[str, Any]):
        p = self.game.current
        aid = self.seat_ids[p]
        if aid not in action_dict:
            raise ValueError(f"HandFootMultiAgentEnv: {aid} is to act, got actions for {sorted(action_dict)}")
        rewards: Dict[str, float] = self._pending
        self._pending = {}
        rewards[aid] = rewards.get(aid, 0.0)
        self._step_env(action_dict[aid], rewards)
        term, trunc = self._advance(rewards)
        if term or trunc:
            self.last_result = self._result(truncated=trunc and not term)
            obs = {a: self._obs(q) for q, a in enumerate(self.seat_ids) if a is not None}
            for a in obs:
                rewards.setdefault(a, 0.0)
            return obs, rewards, {"__all__": term}, {"__all__": trunc and not term}, {}
        q = self.game.current
        return {self.seat_ids[q]: self._obs(q)}, rewards, {"__all__": False}, {"__all__": False}, {}


class SelfPlayMetrics(RLlibCallback):
    """Per-iteration results of the training games, by opponent kind (``env_runners/selfplay/*``)."""
    def on_episode_end(self, *, episode=None, env_runner=None, metrics_logger=None, env=None, env_index=0,
                       **kwargs):
        try:
            e = env.envs[env_index].unwrapped
        except (AttributeError, IndexError):
            return
        r = getattr(e, "last_result", None)
        if r is None or metrics_logger is None:
            return
        log = metrics_logger.log_value
        log(("selfplay", "games"), 1, reduce="sum")
        log(("selfplay", "truncated"), int(r["truncated"]), reduce="sum")
        log(("selfplay", "score_diff_sum"), r["score_diff"], reduce="sum")
        log(("selfplay", "learner_return_sum"), r["learner_return"], reduce="sum")
        log(("selfplay", "actions_sum"), r["actions"], reduce="sum")
        log(("selfplay", "learner_decisions_sum"), r["learner_decisions"], reduce="sum")
        if r["result"] == r["result"]:        # not NaN (truncated games have no result)
            log(("selfplay", f"games_vs_{r['opponent']}"), 1, reduce="sum")
            log(("selfplay", f"result_sum_vs_{r['opponent']}"), r["result"], reduce="sum")
