"""The SB3 backend's training environment: one game of Hand and Foot seen by one learner seat.

Design
------
PPO wants one stream of transitions per environment, each with that stream's
own rewards.  Hand and Foot is a four-seat, two-team, turn-based game, so the
wrapper here (:class:`SeatEnv`, a ``gymnasium.Env``) turns it into a
single-agent problem *for one seat at a time*:

* An episode is one game (four rounds).  At ``reset`` the environment picks a
  **learner seat** uniformly from all seats (so the policy plays both teams and
  every position relative to the dealer) and an **opponent kind** for the two
  seats of the other team, drawn from the configured mixture
  (:class:`experiments.training.selfplay.OpponentPool`).
* ``step(a)`` applies the learner seat's action, then advances the game
  itself, the other three seats acting, until the learner seat must act again
  or the game ends:

  - the **partner** (the learner's teammate) is played by the *current*
    learner policy, run in-process in the worker from weights synced at the
    start of every rollout (:meth:`SeatEnv.set_learner`), sampling from its
    masked action distribution like the learner does.  One set of parameters
    therefore plays both seats of the team; the partner's decisions are not
    training data in this episode (they are in the episode where that seat is
    the learner);
  - the **opponents** are a frozen snapshot of the learner
    (``self_snapshots``, pushed with :meth:`SeatEnv.set_snapshots`), the current
    learner (``self``), or an agent built by ``agents.registry.make_agent`` from a
    spec (``random``, ``greedy``, ``strategic``, ``policy:PATH``).

* The reward returned by ``step`` is exactly the sum of the environment rewards
  that the learner seat received since its previous decision, computed as
  ``handfoot_v0.raw_env`` does (``round_score_diff``: at every round end, the
  team's round score minus the opponents' round score times ``reward_scale``;
  ``game_win``: +1/-1/0 at the end).  No other seat's reward enters and nothing
  is bootstrapped across seats: each episode is one seat's own trajectory.
  tests/test_train.py replays the game in the AEC env and checks the rewards
  match step by step.
* Optional reward shaping (off by default) adds a potential-based term
  ``Phi(s') - Phi(s)`` (:func:`experiments.training.selfplay.shaping_potential`).

The observation is a ``Dict`` of ``observation`` (the seat's
``encode_observation``; with ``centralised_critic`` the perfect-information
``encode_state`` is appended) and ``action_mask``.  :class:`MaskedVecEnv` turns
a vector of these into a flat ``Box`` observation plus cached masks, so
MaskablePPO's ``action_masks`` query costs no extra round trip to the worker
processes.

The network (:class:`HandFootPolicy`) is SB3's masked actor-critic MLP with a
fixed per-index input scale (:func:`observation_scale`) held as a buffer inside
the model.  With ``centralised_critic`` the actor's inputs are the seat's
observation only (the state part is zeroed before the actor sees it) while the
critic sees observation and state; at play time only the actor runs, so a
trained policy never uses hidden information.

:class:`agents.policy.NumpyPolicy` is the actor as plain NumPy (used by workers for partners
and snapshots, and by :mod:`agents.policy` to play a checkpoint), so workers
need no torch inference at all.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import gymnasium as gym
import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper

from agents.base import agent_action
from handfoot_env.turns import play_to_seat
from agents.policy import NumpyPolicy
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.engine import GAME_OVER, Game
from handfoot_env.episode import EpisodeRules
from handfoot_env.observation import (
    action_mask,
    encode_observation,
    encode_state,
    mask_of,
    observation_size,
    state_size,
)
from experiments.processes import sigint_ignored, worker_init
from experiments.training.selfplay import LEARN, SELF_NET, SNAP, OpponentPool, SeatAgents, plan_seats, shaping_potential



# ----------------------------------------------------------------- the per-seat env
class SeatEnv(gym.Env):
    """One game seen by one learner seat (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, rules: Any = "pagat", opponents: Optional[Dict[str, float]] = None,
                 reward: str = "round_score_diff", reward_scale: float = 0.001,
                 shaping_books: float = 0.0, shaping_points: float = 0.0,
                 centralised_critic: bool = False, max_actions: Optional[int] = None,
                 snapshot_sampling: str = "uniform", seed: Optional[int] = None,
                 learner_seats: Optional[Sequence[int]] = None):
        super().__init__()
        self.game = Game(rules)
        self.rules = self.game.rules
        n, t = self.rules.players, self.rules.teams
        self.episode_rules = EpisodeRules(self.rules, reward, reward_scale, "game", max_actions or None)
        self.max_actions = self.episode_rules.max_actions
        self.shaping_books = float(shaping_books)
        self.shaping_points = float(shaping_points)
        self.centralised_critic = bool(centralised_critic)
        self.pool = OpponentPool(dict(opponents or {"random": 1.0}))
        self.snapshot_sampling = snapshot_sampling
        self.learner_seats = list(learner_seats) if learner_seats is not None else list(range(n))
        obs_n = observation_size(n, t) + (state_size(n, t) if self.centralised_critic else 0)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(-np.inf, np.inf, shape=(obs_n,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8)})
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.learner: Optional[NumpyPolicy] = None
        self.snapshots: List[NumpyPolicy] = []
        self.agents = SeatAgents()
        self.seat = 0
        self.opponent = ""
        self.episode_count = 0
        self.actions_applied = 0             # game actions of every seat so far (handfoot bench counts them)
        self._legal: Optional[List[int]] = None   # the learner's legal list from _obs() ...
        self._legal_at: Optional[Tuple[int, int]] = None   # ... and its state: (game seed, action count)

    # ---------------------------------------------------------- weights from the trainer
    def set_learner(self, weights: Dict[str, Any]) -> None:
        """Current learner weights (the partner, and ``self`` opponents)."""
        self.learner = NumpyPolicy(weights)

    def set_snapshots(self, weights: Sequence[Dict[str, Any]]) -> None:
        """The frozen snapshot pool (oldest first)."""
        self.snapshots = [NumpyPolicy(w) for w in weights]

    def action_masks(self) -> np.ndarray:
        return action_mask(self.game, self.seat)

    # ---------------------------------------------------------- helpers
    def _obs(self) -> Dict[str, np.ndarray]:
        g = self.game
        if g.current == self.seat and g.phase != GAME_OVER:
            legal = g.legal_actions()       # one legal list for the observation, the mask and step()
            self._legal, self._legal_at = legal, (g.seed, g.action_count)
            o = encode_observation(g, self.seat, legal)
            mask = mask_of(legal)
        else:
            self._legal = None
            o = encode_observation(g, self.seat)
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self.centralised_critic:
            o = np.concatenate([o, encode_state(g)])
        return {"observation": o, "action_mask": mask}

    def _play(self, a: int, legal: Optional[List[int]]) -> None:
        """Apply ``a``: straight away when ``legal`` (this state's legal list) holds it, else through
        ``Game.step``, which raises IllegalActionError naming the reason."""
        if legal is not None and a in legal:
            self.game.apply_legal(a)
        else:
            self.game.step(a)
        self.actions_applied += 1

    def _phi(self) -> float:
        return shaping_potential(self.game, self.game.team_of[self.seat], self.shaping_books, self.shaping_points)

    def _setup_seats(self) -> None:
        g = self.game
        plan = plan_seats(self.opponent, g.team_of, g.team_of[self.seat], len(self.snapshots),
                          self.snapshot_sampling, self.rng)
        self.players: List[Tuple[str, Any]] = [("learner", None)] * g.n
        for p, r in enumerate(plan.roles):
            if p == self.seat:
                continue
            if r == LEARN:
                self.players[p] = ("policy", None)           # partner: the current learner, whenever it acts
            elif r == SELF_NET:
                if self.learner is None:
                    raise RuntimeError("SeatEnv: no learner weights set (call set_learner first)")
                self.players[p] = ("policy", self.learner)   # the learner of this game's start
            elif r == SNAP:
                self.players[p] = ("policy", self.snapshots[plan.snapshot])
            else:
                self.players[p] = ("agent", self.agents.seat(f"{self.opponent}@{p}", self.opponent, p, self.rules,
                                                             self.rng))

    def _other_act(self, p: int, legal: List[int]) -> int:
        g = self.game
        kind, who = self.players[p]
        if kind == "policy":
            pol = who if who is not None else self.learner
            if pol is None:
                raise RuntimeError("SeatEnv: no learner weights set (call set_learner first)")
            return pol.act(encode_observation(g, p, legal), mask_of(legal), self.rng)
        return agent_action(who, g, p, legal)

    def _advance(self) -> float:
        """Play the other seats until the learner must act or the game ends; the learner's reward meanwhile."""
        g = self.game
        start = g.action_count
        reward, self._seen = play_to_seat(g, self.seat, self._other_act, self.episode_rules, g.team_of[self.seat],
                                          self._seen)
        self.actions_applied += g.action_count - start
        return reward

    # ---------------------------------------------------------- gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.Generator(np.random.PCG64(seed))
        options = dict(options or {})
        self.seat = int(options.get("seat", self.learner_seats[int(self.rng.integers(len(self.learner_seats)))]))
        self.opponent = str(options.get("opponent", self.pool.sample(self.rng)))
        game_seed = int(options.get("game_seed", self.rng.integers(2 ** 31)))
        self.game.reset(seed=game_seed)
        self._seen = (0, False)              # (rounds paid, final reward paid) to the learner seat
        self._setup_seats()
        self.episode_count += 1
        self._pending = self._advance()      # rewards before the learner's first decision (rare)
        self._last_phi = self._phi()
        info = {"seat": self.seat, "opponent": self.opponent, "game_seed": game_seed}
        return self._obs(), info

    def step(self, action):
        g = self.game
        legal = self._legal if self._legal_at == (g.seed, g.action_count) else None
        self._legal = None
        self._play(int(action), legal)
        reward = self._pending + self._advance()
        self._pending = 0.0
        phi = self._phi()
        reward += phi - self._last_phi
        self._last_phi = phi
        terminated = g.phase == GAME_OVER
        truncated = not terminated and g.action_count >= self.max_actions
        info: Dict[str, Any] = {}
        if terminated or truncated:
            team = g.team_of[self.seat]
            others = [g.scores[u] for u in range(g.num_teams) if u != team]
            diff = g.scores[team] - max(others)
            result = 0.0 if truncated else (0.5 if g.winner is None else float(g.winner == team))
            info["selfplay"] = {"opponent": self.opponent, "seat": self.seat, "result": result,
                                "score_diff": float(diff), "truncated": bool(truncated)}
        return self._obs(), float(reward), bool(terminated), bool(truncated), info


# ----------------------------------------------------------------- vector env
class MaskedVecEnv(VecEnvWrapper):
    """Flattens ``SeatEnv``'s Dict observation to a Box and serves the masks from a cache.

    MaskablePPO asks ``env_method("action_masks")`` before every step; answering
    from the masks that came back with the observations saves one round trip to
    the worker processes per step.
    """
    def __init__(self, venv: VecEnv):
        inner = venv.observation_space
        super().__init__(venv, observation_space=inner["observation"])
        self._masks = np.zeros((venv.num_envs, NUM_ACTIONS), dtype=np.int8)

    def _split(self, obs):
        self._masks = np.asarray(obs["action_mask"], dtype=np.int8).copy()
        return np.asarray(obs["observation"], dtype=np.float32)

    def reset(self):
        return self._split(self.venv.reset())

    def step_async(self, actions: np.ndarray) -> None:
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            t = info.get("terminal_observation")
            if isinstance(t, dict):
                info["terminal_observation"] = np.asarray(t["observation"], dtype=np.float32)
        return self._split(obs), rewards, dones, infos

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or self.venv.has_attr(attr_name)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            idx = list(self._get_indices(indices))
            return [self._masks[i].copy() for i in idx]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()


def _make_env_fn(env_kwargs: Dict[str, Any], seed: int, parent_pid: Optional[int] = None):
    def _init():
        if parent_pid is not None:        # a worker process: Ctrl-C is the parent's, and it dies with the parent
            worker_init(parent_pid)
        th.set_num_threads(1)
        return Monitor(SeatEnv(seed=seed, **env_kwargs))
    return _init


def make_vec_env(env_kwargs: Dict[str, Any], n_envs: int, seed: int, subprocess: bool = True) -> MaskedVecEnv:
    """``n_envs`` :class:`SeatEnv` workers (``SubprocVecEnv`` or ``DummyVecEnv``) with deterministic seeds.

    Worker processes ignore Ctrl-C (the trainer stops them) and exit when the trainer dies
    (:func:`experiments.processes.worker_init`).
    """
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n_envs)]
    if subprocess and n_envs > 1:
        fns = [_make_env_fn(env_kwargs, s, os.getpid()) for s in seeds]
        with sigint_ignored():
            venv: VecEnv = SubprocVecEnv(fns, start_method="fork" if _fork_ok() else "spawn")
    else:
        venv = DummyVecEnv([_make_env_fn(env_kwargs, s) for s in seeds])
    return MaskedVecEnv(venv)


def _fork_ok() -> bool:
    return "fork" in mp.get_all_start_methods()
