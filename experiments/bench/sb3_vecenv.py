"""A batched runner: many games of Hand and Foot stepped in one process, as an SB3 ``VecEnv``.

:class:`BatchedVecEnv` holds ``n_envs`` games ("slots").  In each slot one seat
is the *learner*: the vector env's observation, mask, action and reward are that
seat's.  Every other seat (partner and opponents) is played in-process by an
*opponent* callable, random legal play by default.  ``step(actions)`` applies
each slot's learner action, then plays the other seats until the learner must
act again or the episode ends, so one vector step is one learner decision per
slot.  No worker processes, no pickling: throughput is the engine's.

Compatible with Stable-Baselines3 and sb3-contrib's ``MaskablePPO``:

* ``observation_space`` is the per-slot ``Box(float32, (obs_size,))`` of
  :func:`handfoot_env.observation.encode_observation` (170 entries under
  ``pagat``), ``action_space`` is ``Discrete(705)``;
* ``action_masks()`` returns the ``(n_envs, 705)`` int8 masks of the current
  observations, and ``env_method("action_masks")`` / ``has_attr("action_masks")``
  answer what ``sb3_contrib.common.maskable.utils.get_action_masks`` asks;
* finished slots reset themselves; their ``info`` carries
  ``terminal_observation``, ``TimeLimit.truncated`` and an ``episode`` record
  (``r`` return, ``l`` learner decisions, ``t`` wall time, as SB3's ``Monitor``
  writes it) plus ``seat``, ``winner`` and ``score_diff``.

Rewards are the learner seat's own, computed exactly as ``handfoot_v0.raw_env``
computes them (``round_score_diff`` x ``reward_scale`` at every round end, or
``game_win`` +1/-1/0 at the end), summed since its previous decision.

Example (random learner actions)::

    venv = BatchedVecEnv(n_envs=16, rules="pagat", seed=0)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(100):
        masks = venv.action_masks()
        actions = [rng.choice(np.flatnonzero(m)) for m in masks]
        obs, rewards, dones, infos = venv.step(np.array(actions))

An opponent is ``fn(game, seat, legal, rng) -> action`` with ``game`` the
:class:`~handfoot_env.engine.Game` (read-only by convention), ``legal`` its
legal action list for ``seat`` and ``rng`` the slot's ``random.Random``.
"""
from __future__ import annotations

import random
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.config import RulesLike
from handfoot_env.engine import GAME_OVER, Game, IllegalActionError
from handfoot_env.episode import EpisodeRules
from handfoot_env.observation import encode_observation, mask_of, observation_size
from handfoot_env.turns import play_until

from experiments.training.selfplay import random_opponent

Opponent = Callable[[Game, int, List[int], random.Random], int]
ILLEGAL = ("raise", "terminate")


class _Slot:
    """One game and its learner seat."""
    __slots__ = ("game", "rng", "seat", "rounds_seen", "final_paid", "legal", "ep_return", "ep_len", "ep_start",
                 "episodes",
                 "game_seed")

    def __init__(self, game: Game, seed: int):
        self.game = game
        self.rng = random.Random(seed)
        self.seat = 0
        self.rounds_seen = 0
        self.final_paid = False
        self.legal: List[int] = []
        self.ep_return = 0.0
        self.ep_len = 0
        self.ep_start = 0.0
        self.episodes = 0
        self.game_seed = 0

    def action_masks(self) -> np.ndarray:
        return mask_of(self.legal)


class BatchedVecEnv(VecEnv):
    """``n_envs`` games in one process, one learner seat each (see the module docstring).

    Arguments: ``rules`` and ``**rule_overrides`` as ``handfoot_v0.env``;
    ``seed`` makes every game, learner seat and random opponent move
    reproducible; ``opponent`` plays all non-learner seats (default
    :func:`random_opponent`); ``learner_seats`` the seats a slot's learner is
    drawn from at each reset (default all); ``reward``, ``reward_scale``,
    ``episode`` and ``max_actions`` as ``handfoot_v0.env``; ``illegal``:
    ``"raise"`` (default; :class:`IllegalActionError` naming the reason) or
    ``"terminate"`` (reward -1 and the episode ends, like PettingZoo's
    ``TerminateIllegalWrapper``).
    """

    def __init__(self, n_envs: int = 16, rules: RulesLike = "pagat", seed: Optional[int] = 0,
                 opponent: Optional[Opponent] = None, learner_seats: Optional[Sequence[int]] = None,
                 reward: str = "round_score_diff", reward_scale: float = 0.001, episode: str = "game",
                 max_actions: Optional[int] = None, illegal: str = "raise", **rule_overrides: Any):
        if int(n_envs) < 1:
            raise ValueError(f"n_envs must be positive, got {n_envs!r}")
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {ILLEGAL}, got {illegal!r}")
        self.render_mode = None
        games = [Game(rules, **rule_overrides) for _ in range(int(n_envs))]
        self.rules = games[0].rules
        n, t = self.rules.players, self.rules.teams
        self.learner_seats = list(learner_seats) if learner_seats is not None else list(range(n))
        if not self.learner_seats or any(not 0 <= s < n for s in self.learner_seats):
            raise ValueError(f"learner_seats must be seats 0..{n - 1}, got {learner_seats!r}")
        self.opponent: Opponent = opponent or random_opponent
        self.episode_rules = EpisodeRules(self.rules, reward, reward_scale, episode, max_actions or None)
        self.episode = episode
        self.max_actions = self.episode_rules.max_actions
        self.illegal = illegal
        self.obs_size = observation_size(n, t)
        self._slots = [_Slot(g, 0) for g in games]
        self._seed_slots(seed)
        super().__init__(int(n_envs), spaces.Box(-np.inf, np.inf, shape=(self.obs_size,), dtype=np.float32),
                         spaces.Discrete(NUM_ACTIONS))
        self._obs = np.zeros((self.num_envs, self.obs_size), dtype=np.float32)
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        self._actions: Optional[np.ndarray] = None
        self.total_actions = 0        # actions applied, every seat (for throughput figures)
        self.total_episodes = 0

    # ------------------------------------------------------------ seeding
    def _seed_slots(self, seed: Optional[int]) -> None:
        if seed is None:
            seed = random.SystemRandom().randrange(2 ** 31)
        children = np.random.SeedSequence(int(seed)).spawn(len(self._slots))
        for slot, ss in zip(self._slots, children):
            slot.rng = random.Random(int(ss.generate_state(1, dtype=np.uint64)[0]))

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        """Reseed every slot (used from the next :meth:`reset`); deterministic for an int ``seed``."""
        self._pending_seed = seed
        return [seed] * self.num_envs

    # ------------------------------------------------------------ core
    def _rewards_since(self, slot: _Slot) -> float:
        """The learner's rewards since last asked, as raw_env pays them (handfoot_env.episode)."""
        r, slot.rounds_seen, slot.final_paid = self.episode_rules.reward_since(
            slot.game, slot.game.team_of[slot.seat], slot.rounds_seen, slot.final_paid)
        return r

    def _advance(self, slot: _Slot) -> None:
        """Play the non-learner seats until the learner is to act, the episode ends or the cap is hit."""
        g = slot.game
        opp, rng, cap, one_round = self.opponent, slot.rng, self.max_actions, self.episode == "round"

        def stop() -> bool:
            return g.phase == GAME_OVER or g.action_count >= cap or (one_round and bool(g.round_scores))

        self.total_actions += play_until(g, slot.seat.__eq__, lambda p, legal: opp(g, p, legal, rng), stop=stop)

    def _start(self, i: int) -> None:
        """Start a new episode in slot ``i`` and play up to the learner's first decision."""
        slot = self._slots[i]
        rng = slot.rng
        slot.game_seed = rng.randrange(2 ** 31)
        slot.seat = self.learner_seats[rng.randrange(len(self.learner_seats))]
        slot.game.reset(seed=slot.game_seed)
        slot.rounds_seen = 0
        slot.final_paid = False
        slot.ep_return = 0.0
        slot.ep_len = 0
        slot.ep_start = time.perf_counter()
        slot.episodes += 1
        self._advance(slot)
        # rewards before the learner's first decision cannot happen in a fresh game
        # (a round needs every seat to act); they would be folded into the first step
        slot.ep_return += self._rewards_since(slot)
        if self.episode_rules.done(slot.game) or slot.game.action_count >= self.max_actions:
            # degenerate: the episode ended before the learner acted; start another
            self._start(i)
            return
        self._observe(i)

    def _observe(self, i: int) -> None:
        slot = self._slots[i]
        g = slot.game
        if g.current == slot.seat and g.phase != GAME_OVER:
            slot.legal = g.legal_actions()
            self._obs[i] = encode_observation(g, slot.seat, slot.legal)
        else:
            slot.legal = []
            self._obs[i] = encode_observation(g, slot.seat)
        m = self._masks[i]
        m[:] = 0
        if slot.legal:
            m[slot.legal] = 1

    def reset(self) -> np.ndarray:
        seed = getattr(self, "_pending_seed", None)
        if seed is not None:
            self._seed_slots(seed)
            self._pending_seed = None
        for i in range(self.num_envs):
            self._start(i)
        self.reset_infos = [{"seat": s.seat, "game_seed": s.game_seed} for s in self._slots]
        return self._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        actions = self._actions
        if actions is None:
            raise RuntimeError("step_wait() without step_async()")
        self._actions = None
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: List[Dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i, slot in enumerate(self._slots):
            g = slot.game
            a = int(actions[i])
            illegal = a not in slot.legal
            if illegal:
                if self.illegal == "raise":
                    raise IllegalActionError(a, g.reason_illegal(a) or "not in the learner seat's legal list")
                r = -1.0
                done, truncated = True, False
            else:
                g.apply_legal(a)
                self.total_actions += 1
                self._advance(slot)
                r = self._rewards_since(slot)
                done = self.episode_rules.done(g)
                truncated = not done and g.action_count >= self.max_actions
            slot.ep_return += r
            slot.ep_len += 1
            rewards[i] = r
            if done or truncated:
                self._observe(i)
                info = infos[i]
                info["terminal_observation"] = self._obs[i].copy()
                info["TimeLimit.truncated"] = bool(truncated)
                info["episode"] = {"r": slot.ep_return, "l": slot.ep_len,
                                   "t": round(time.perf_counter() - slot.ep_start, 6)}
                info["seat"] = slot.seat
                info["illegal_action"] = illegal
                team = g.team_of[slot.seat]
                others = [g.scores[u] for u in range(g.num_teams) if u != team]
                info["score_diff"] = g.scores[team] - max(others)
                info["winner"] = g.winner if g.phase == GAME_OVER else None
                dones[i] = True
                self.total_episodes += 1
                self._start(i)
            else:
                self._observe(i)
        return self._obs.copy(), rewards, dones, infos

    # ------------------------------------------------------------ masks
    def action_masks(self) -> np.ndarray:
        """``(n_envs, 705)`` int8 masks of the current observations."""
        return self._masks.copy()

    # ------------------------------------------------------------ VecEnv plumbing
    def close(self) -> None:
        pass

    def _targets(self, indices) -> List[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices=None) -> List[Any]:
        if not hasattr(self, "_slots"):          # VecEnv.__init__ asks for render_mode
            return [getattr(self, attr_name)] * (len(indices) if isinstance(indices, list) else 1)
        out = []
        for i in self._targets(indices):
            slot = self._slots[i]
            out.append(getattr(slot, attr_name) if hasattr(slot, attr_name) else getattr(self, attr_name))
        return out

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        if attr_name in _Slot.__slots__:
            for i in self._targets(indices):
                setattr(self._slots[i], attr_name, value)
        else:
            setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> List[Any]:
        if method_name == "action_masks":
            return [self._masks[i].copy() for i in self._targets(indices)]
        out = []
        for i in self._targets(indices):
            slot = self._slots[i]
            target = slot if hasattr(slot, method_name) else slot.game
            out.append(getattr(target, method_name)(*method_args, **method_kwargs))
        return out

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(_Slot, attr_name) or hasattr(self, attr_name)

    def env_is_wrapped(self, wrapper_class, indices=None) -> List[bool]:
        return [False for _ in self._targets(indices)]

    @property
    def games(self) -> List[Game]:
        """The slots' games (read-only by convention)."""
        return [s.game for s in self._slots]

    @property
    def seats(self) -> List[int]:
        """The learner seat of every slot."""
        return [s.seat for s in self._slots]


__all__ = ["BatchedVecEnv", "random_opponent", "Opponent"]
