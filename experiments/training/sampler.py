"""The rollout side of the batched backend: many games on the engine's fast path, played in one
process or in sampler processes, every network seat of a tick in one batched forward pass.

What a rollout holds, how rewards reach each learning seat and why the actor runs in NumPy is
described in :mod:`experiments.training.batched_ppo`, the algorithm's page.
"""
from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from agents.policy import make_torch_policy
from agents.base import agent_action
from experiments.training.selfplay import (
    AGENT,
    LEARN,
    SELF_NET,
    SNAP,
    OpponentPool,
    SeatAgents,
    plan_seats,
    random_opponent,
    shaping_potential,
)
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.engine import GAME_OVER, Game
from handfoot_env.episode import EpisodeRules, episode_winner, round_reward, win_reward
from handfoot_env.observation import (
    encode_observation,
    encode_state,
    observation_size,
    state_size,
)
from handfoot_env.turns import play_batch, play_until



ROLLOUT_ARRAYS = ("obs", "state", "mask", "act", "logp", "rew", "done", "next", "open", "trace", "round")


class Rollout:
    """Growable sample arrays of one rollout (row ``k`` is one learning-seat decision)."""

    def __init__(self, cap: int, obs_n: int, state_n: int):
        self.n = 0
        self.obs = np.zeros((cap, obs_n), np.float32)
        self.state = np.zeros((cap, state_n), np.float32) if state_n else None
        self.mask = np.zeros((cap, NUM_ACTIONS), bool)
        self.act = np.zeros(cap, np.int64)
        self.logp = np.zeros(cap, np.float32)
        self.rew = np.zeros(cap, np.float64)
        self.done = np.zeros(cap, bool)
        self.next = np.full(cap, -1, np.int64)      # the same seat's next decision (or bootstrap row)
        self.open = np.zeros(cap, bool)             # a bootstrap row: not trained on in this rollout
        self.trace = np.zeros((cap, 4), np.int64)    # (game slot, episode of the slot, seat, decision number)
        self.round = np.zeros(cap, np.int64)         # rounds of the game finished before the decision

    def reserve(self, extra: int) -> None:
        cap = len(self.act)
        if self.n + extra <= cap:
            return
        new = max(2 * cap, self.n + extra)
        for name in ROLLOUT_ARRAYS:
            a = getattr(self, name)
            if a is None:
                continue
            b = np.zeros((new,) + a.shape[1:], a.dtype) if name != "next" else np.full(new, -1, np.int64)
            b[:cap] = a
            setattr(self, name, b)

    def export(self) -> Dict[str, np.ndarray]:
        n = self.n
        return {k: getattr(self, k)[:n].copy() for k in ROLLOUT_ARRAYS if getattr(self, k) is not None}


class Sampler:
    """``games`` self-play games and their learning-team trajectories (see the module docstring).

    ``rollout(decisions, learner, snapshots)`` plays ticks until ``decisions`` new learner
    decisions are recorded and returns them as arrays (:meth:`Rollout.export`) plus statistics of
    the games that ended.  Every random choice (deals, learning team, opponent kind, snapshot,
    heuristic seeds, sampled actions) comes from ``seed``.
    """

    def __init__(self, rules: Any, games: int, seed: int, opponents: Dict[str, float],
                 reward: str = "round_score_diff", reward_scale: float = 0.001, max_actions: Optional[int] = None,
                 shaping_books: float = 0.0, shaping_points: float = 0.0, centralised_critic: bool = False,
                 snapshot_sampling: str = "uniform", epsilon: float = 0.0, slot_offset: int = 0,
                 episode_base: int = 0):
        self.games = self._make_games(rules, int(games))
        r = self.games[0].rules
        self.rules = r
        self.n_seats = r.players
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.max_actions = EpisodeRules(r, reward, reward_scale, "game", max_actions or None).max_actions
        self.shaping = (float(shaping_books), float(shaping_points))
        self.with_state = bool(centralised_critic)
        self.snapshot_sampling = snapshot_sampling
        self.epsilon = float(epsilon)                  # exploration of an action-value learner
        self.slot_offset = int(slot_offset)            # this sampler's first game slot in its group
        self.pool = OpponentPool(dict(opponents))
        self.rng = np.random.Generator(np.random.PCG64(int(seed)))
        self.py_rng = random.Random(int(self.rng.integers(2 ** 63)))     # random opponents' moves
        self.obs_n = observation_size(r.players, r.teams)
        self.state_n = state_size(r.players, r.teams) if self.with_state else 0
        self.buf = Rollout(4096, self.obs_n, self.state_n)
        self._acts = np.zeros(len(self.games), np.int64)             # a tick's action in every game
        self._cur: List[int] = []                                   # a tick's player to act in every game
        self.learner: Any = None                                    # TorchPolicy or TorchQPolicy (make_torch_policy)
        self.snapshots: List[Any] = []
        self.named: Dict[str, int] = {}                             # a league's networks: member name -> pool index
        self.agents = SeatAgents()
        n = len(self.games)
        self.role = [[LEARN] * self.n_seats for _ in range(n)]
        self.player: List[List[Any]] = [[None] * self.n_seats for _ in range(n)]   # policy or agent per seat
        self.kind = [""] * n
        self.episode = [int(episode_base)] * n                      # games dealt in each slot so far (from a base)
        self.team = [0] * n
        self.rounds_seen = [0] * n
        self.pending = [[0.0] * self.n_seats for _ in range(n)]   # reward since the seat's last decision
        self.last = [[-1] * self.n_seats for _ in range(n)]       # the seat's last sample row, -1: none
        self.phi = [[0.0] * self.n_seats for _ in range(n)]       # shaping potential at that decision
        self.ret = [[0.0] * self.n_seats for _ in range(n)]       # episode return of each learning seat
        self.dec = [[0] * self.n_seats for _ in range(n)]         # decisions of each learning seat
        self.finished: List[Dict[str, Any]] = []
        self.actions = 0                                            # game actions applied, every seat
        self.started = False

    def _make_games(self, rules: Any, n: int) -> List[Any]:
        return [Game(rules) for _ in range(n)]

    # ------------------------------------------------------------------ policies
    def set_policies(self, learner: Dict[str, Any], snapshots: Any = None) -> None:
        """The learner's actor weights, and (when given) the snapshot pool, oldest first; or a league's
        pool (:func:`experiments.training.league.league_pool`: a mapping of the networks ``pool``, their
        member ``names`` and the opponent ``mixture`` over member names, which then replaces the
        config's)."""
        self.learner = make_torch_policy(learner, self.epsilon)
        if isinstance(snapshots, dict):
            self.snapshots = [make_torch_policy(w) for w in snapshots["pool"]]
            self.named = {name: k for k, name in enumerate(snapshots["names"])}
            self.pool = OpponentPool(dict(snapshots["mixture"]))
        elif snapshots is not None:
            self.snapshots = [make_torch_policy(w) for w in snapshots]

    # ------------------------------------------------------------------ games
    def _new_game(self, i: int) -> None:
        """Deal game ``i``: learning team, opponent kind and the player of every seat."""
        g = self.games[i]
        rng = self.rng
        g.reset(seed=int(rng.integers(2 ** 31)))
        team = int(rng.integers(g.num_teams))
        kind = self.pool.sample(rng)
        plan = plan_seats(kind, g.team_of, team, len(self.snapshots), self.snapshot_sampling, rng, self.named)
        self.team[i], self.kind[i] = team, kind
        self.rounds_seen[i] = 0
        self.episode[i] += 1
        role, player = self.role[i], self.player[i]
        for p in range(self.n_seats):
            self.pending[i][p] = 0.0
            self.last[i][p] = -1
            self.ret[i][p] = 0.0
            self.dec[i][p] = 0
            r = role[p] = plan.roles[p]
            if r == SNAP:
                player[p] = self.snapshots[plan.snapshot]
            elif r == AGENT and kind != "random":         # random seats play from py_rng (random_opponent)
                player[p] = self.agents.seat((i, p, kind), kind, p, self.rules, rng)
            else:
                player[p] = None

    def _potential(self, g: Game, p: int) -> float:
        return shaping_potential(g, g.team_of[p], *self.shaping)

    def _round_rewards(self, i: int) -> None:
        g = self.games[i]
        new = g.round_scores[self.rounds_seen[i]:]
        self.rounds_seen[i] = len(g.round_scores)
        if self.reward_mode != "round_score_diff":
            return
        scale, pending, ret, team = self.reward_scale, self.pending[i], self.ret[i], self.team[i]
        for totals in new:
            r = round_reward(g, team, totals, scale)
            for p in range(self.n_seats):
                if self.role[i][p] == LEARN:
                    pending[p] += r
                    ret[p] += r

    def _end_game(self, i: int, truncated: bool) -> None:
        """Close both learning seats' trajectories of game ``i`` and record the game."""
        g = self.games[i]
        buf = self.buf
        team = self.team[i]
        final = win_reward(team, episode_winner(g)) if (self.reward_mode == "game_win" and not truncated) else 0.0
        for p in range(self.n_seats):
            if self.role[i][p] != LEARN:
                continue
            extra = final + (self._potential(g, p) - self.phi[i][p] if any(self.shaping) else 0.0)
            self.ret[i][p] += extra
            k = self.last[i][p]
            if k >= 0:
                buf.rew[k] += self.pending[i][p] + extra
                if truncated:                    # bootstrap from the value of the seat's observation at the cut
                    j = self._add_row(i, p)
                    buf.open[j] = True
                    buf.next[k] = j
                else:
                    buf.done[k] = True
            self.last[i][p] = -1
            self.pending[i][p] = 0.0
        others = [g.scores[u] for u in range(g.num_teams) if u != team]
        result = 0.0 if truncated else (0.5 if g.winner is None else float(g.winner == team))
        seats = [p for p in range(self.n_seats) if self.role[i][p] == LEARN]
        self.finished.append({"slot": self.slot_offset + i, "episode": self.episode[i], "seed": g.seed, "team": team,
                              "opponent": self.kind[i], "result": result, "truncated": bool(truncated),
                              "score_diff": float(g.scores[team] - max(others)), "actions": g.action_count,
                              "returns": [self.ret[i][p] for p in seats], "lengths": [self.dec[i][p] for p in seats]})

    def _link_row(self, buf: Rollout, i: int, p: int, k: int, g: Any, phi_on: bool) -> None:
        """Row ``k`` is seat ``p``'s new decision in game ``i``: its previous row gets the rewards
        paid since then (and the shaping difference) and points to ``k``."""
        prev = self.last[i][p]
        if prev >= 0:
            buf.rew[prev] += self.pending[i][p]
            buf.next[prev] = k
            self.pending[i][p] = 0.0
        if phi_on:
            phi = self._potential(g, p)
            if prev >= 0:
                buf.rew[prev] += phi - self.phi[i][p]
                self.ret[i][p] += phi - self.phi[i][p]
            self.phi[i][p] = phi
        self.last[i][p] = k
        self.dec[i][p] += 1

    def _add_row(self, i: int, p: int, observe: bool = True) -> int:
        """A new sample row for seat ``p`` of game ``i`` (its observation now unless ``observe`` is false:
        a tick writes its learner rows' observations together)."""
        buf = self.buf
        k = buf.n
        buf.n += 1
        if observe:
            self._observe_one(i, p, buf.obs[k])
        if buf.state is not None:
            buf.state[k] = self._state(i)
        buf.rew[k] = 0.0
        buf.done[k] = False
        buf.next[k] = -1
        buf.open[k] = False
        buf.trace[k] = (self.slot_offset + i, self.episode[i], p, self.dec[i][p])
        buf.round[k] = self.games[i].rounds_finished
        return k

    def _advance(self, i: int) -> None:
        """Play heuristic seats (and start new games) until a network seat of game ``i`` must act, through
        :func:`~handfoot_env.turns.play_until` (this core's legal list and step: ``_legal``, ``_apply``)."""
        g = self.games[i]
        role, player, py_rng = self.role[i], self.player[i], self.py_rng

        def stop() -> bool:
            if g.rounds_finished > self.rounds_seen[i]:
                self._round_rewards(i)
            return g.phase == GAME_OVER or g.action_count >= self.max_actions

        def move(p: int, legal: List[int]) -> int:
            agent = player[p]
            if agent is None:
                return random_opponent(g, p, legal, py_rng)
            return agent_action(agent, g, p, legal)

        def networks(p: int) -> bool:
            return role[p] != AGENT

        while True:
            self.actions += play_until(g, networks, move, stop=stop, legal=lambda: self._legal(i),
                                       apply=lambda p, a: self._apply(i, p, a))
            over = g.phase == GAME_OVER
            if not (over or g.action_count >= self.max_actions):
                return
            self._end_game(i, truncated=not over)
            self._new_game(i)
            role, player = self.role[i], self.player[i]

    # ------------------------------------------------------------------ the core
    # How the games are read and stepped: on the reference engine here, on rows of one CoreBatch in
    # CompiledSampler (which overrides these and nothing else of the game loops).
    def _legal(self, i: int) -> List[int]:
        return self.games[i].legal_actions()

    def _apply(self, i: int, p: int, a: int) -> None:
        """Play ``a``, legal, for seat ``p`` in game ``i``."""
        self.games[i].apply_legal(a)

    def _currents(self) -> List[int]:
        return [g.current for g in self.games]

    def _observe(self, rows: Sequence[int], obs: np.ndarray, mask: np.ndarray) -> None:
        """The player to act's observation and legal mask of each game in ``rows`` into ``obs`` and ``mask``."""
        games = self.games
        mask[:] = False
        for j, i in enumerate(rows):
            g = games[i]
            legal = g.legal_actions()
            obs[j] = encode_observation(g, g.current, legal)
            mask[j, legal] = True

    def _observe_one(self, i: int, p: int, out: np.ndarray) -> None:
        out[:] = encode_observation(self.games[i], p)

    def _state(self, i: int) -> np.ndarray:
        return encode_state(self.games[i])

    def _step_all(self, players: List[int], acts: np.ndarray) -> None:
        """Play ``acts[i]``, legal, for ``players[i]`` in every game ``i``."""
        for g, a in zip(self.games, acts.tolist()):
            g.apply_legal(a)

    # ------------------------------------------------------------------ one rollout
    def rollout(self, decisions: int, learner: Optional[Dict[str, Any]] = None,
                snapshots: Optional[Sequence[Dict[str, Any]]] = None) -> Dict[str, Any]:
        """Play until ``decisions`` new learner decisions are recorded (see the class docstring)."""
        if learner is not None:
            self.set_policies(learner, snapshots)
        if self.learner is None:
            raise RuntimeError("Sampler: no learner weights (call set_policies first)")
        if not self.started:
            for i in range(len(self.games)):
                self._new_game(i)
                self._advance(i)
            self.started = True
        buf = self.buf
        start_actions = self.actions
        all_games = np.arange(len(self.games))
        counted = [0]

        def playing(tick: int) -> Optional[np.ndarray]:
            return all_games if counted[0] < decisions else None

        def act(rows: np.ndarray) -> np.ndarray:
            acts, m = self._choose()
            counted[0] += m
            return acts

        play_batch(playing, act, self._step_tick)
        new = counted[0]
        out = buf.export()
        # carry every open trajectory's last decision into the next rollout as its first row
        carry = [(i, p, k) for i, row in enumerate(self.last) for p, k in enumerate(row) if k >= 0]
        old = {name: getattr(buf, name) for name in ("obs", "state", "mask", "act", "logp", "rew", "trace", "round")}
        out["open"][[k for _, _, k in carry]] = True
        moved = {name: (a[[k for _, _, k in carry]].copy() if a is not None else None) for name, a in old.items()}
        buf.n = len(carry)
        for name, a in moved.items():
            if a is not None:
                getattr(buf, name)[:len(carry)] = a
        buf.done[:len(carry)] = False
        buf.next[:len(carry)] = -1
        buf.open[:len(carry)] = False
        for j, (i, p, _) in enumerate(carry):
            self.last[i][p] = j
        finished, self.finished = self.finished, []
        out["decisions"] = new
        out["actions"] = self.actions - start_actions
        out["games"] = finished
        return out

    def _choose(self) -> Tuple[np.ndarray, int]:
        """A tick's actions: every game's seat to act, learner rows in one forward pass (recorded as new
        decisions), each other policy's in one; returns the actions and the number of new decisions."""
        games = self.games
        buf = self.buf
        n = len(games)
        buf.reserve((1 + self.n_seats) * n)    # a decision, and bootstrap rows of a cut game
        k0 = buf.n
        cur = self._cur = self._currents()
        learn: List[int] = []
        other: Dict[int, Tuple[Any, List[int]]] = {}
        phi_on = any(self.shaping)
        for i, p in enumerate(cur):
            r = self.role[i][p]
            if r == LEARN:
                k = self._add_row(i, p, observe=False)
                self._link_row(buf, i, p, k, games[i], phi_on)
                learn.append(i)
            else:
                pol = self.learner if r == SELF_NET else self.player[i][p]
                other.setdefault(id(pol), (pol, []))[1].append(i)
        acts = self._acts
        m = len(learn)
        if m:
            obs, mask = buf.obs[k0:k0 + m], buf.mask[k0:k0 + m]
            self._observe(learn, obs, mask)
            a, logp = self.learner.choose(obs, mask, self.rng)
            buf.act[k0:k0 + m] = a
            buf.logp[k0:k0 + m] = logp
            acts[learn] = a
        for pol, rows in other.values():
            obs = np.empty((len(rows), self.obs_n), np.float32)
            mask = np.empty((len(rows), NUM_ACTIONS), bool)
            self._observe(rows, obs, mask)
            acts[rows] = pol.choose(obs, mask, self.rng)[0]
        return acts, m

    def _step_tick(self, rows: np.ndarray, acts: np.ndarray) -> None:
        """Apply a tick's actions in every game, then play each game's agent seats up to a network seat."""
        self._step_all(self._cur, acts)
        self.actions += len(self.games)
        for i in range(len(self.games)):
            self._advance(i)


__all__ = ["Sampler", "Rollout"]
