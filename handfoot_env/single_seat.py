"""One seat of Hand and Foot against fixed agents, as a single-agent ``gymnasium.Env``.

:class:`SingleSeatEnv` is the game seen by one **learner seat**; every other seat is played
inside the env by an agent (its partner or partners, and the opponents), so SB3, CleanRL or any
Gymnasium toolchain trains on it as on any single-agent env::

    from handfoot_env import single_seat_v0
    env = single_seat_v0.env(seat=0, partner="strategic", opponents="greedy", rules="pagat")
    obs, info = env.reset(seed=7)
    action = env.action_space.sample()          # a legal action: the space samples with the mask
    obs, reward, terminated, truncated, info = env.step(action)

* **Observation**: the learner seat's ``Box(float32, 170)`` (four players), exactly the AEC
  env's ``observation`` entry (docs/observation.md), with finite bounds (:func:`observation_bounds`).
* **Mask**: ``info["action_mask"]`` after every ``reset`` and ``step`` and ``action_masks()``
  (sb3-contrib's ``MaskablePPO`` convention), an ``int8`` array of 705 entries, 1 exactly where the
  rules allow the action now (all zeros once the episode is over).
* **Action space**: ``Discrete(705)`` whose ``sample()`` without a mask draws uniformly from the
  legal actions of the current state (so Gymnasium's and SB3's env checkers, which step with
  ``action_space.sample()``, play legal games); it is seeded by ``reset(seed=...)``. An illegal
  action raises :class:`~handfoot_env.engine.IllegalActionError` naming the reason.
* **Reward**: what the AEC env pays the learner seat, summed over the other seats' actions up to
  the learner's next decision (:meth:`handfoot_env.episode.EpisodeRules.reward_since`: ``reward``,
  ``reward_scale``, ``episode`` and ``max_actions`` as for ``handfoot_v0.env``). ``terminated``
  when the episode ends, ``truncated`` at the action cap.
* **Other seats**: ``partner`` plays every other seat of the learner's team, ``opponents`` every
  seat of the other teams (one entry, or a list with one per opponent seat in seat order). Each
  entry is an agent spec (``"random"``, ``"greedy"``, ``"strategic"``, ``"champion"``,
  ``"policy:PATH"``, ``"py:package.module:ClassName"``, ...: the specs of ``handfoot evaluate``),
  an agent class (built as ``cls(seed)``) or an agent object (one seat each). An agent has
  ``reset(seat, rules, seed)`` and ``act(observation, view) -> int`` (``agents.base.Agent``).
* **Seeding**: ``reset(seed=s)`` seeds everything random in an episode (the deal, every agent,
  the action space); ``reset()`` continues from the previous episode's random stream.

Agent specs are a notion of the ``agents`` package, one layer up: this module never imports it.
It names the function that builds an agent from a spec, :data:`AGENT_FACTORY`, and loads it the
way Gymnasium loads an env's ``entry_point``, on the first spec it has to build; an agent class or
object needs no factory at all, and ``agent_factory=`` can pass another one.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .actions import NUM_ACTIONS
from .config import MAX_SEED, RuleConfig, RulesLike, check_seed
from .engine import GAME_OVER, Game
from .episode import EpisodeRules
from .observation import encode_observation, mask_of, observation_names
from .render import render_text
from .render_image import render_game
from .turns import agent_action, play_to_seat

#: the function ``(spec, seed) -> agent`` that builds an agent from a spec string, as ``module:attribute``
AGENT_FACTORY = "agents.registry:make_agent"

AgentLike = Union[str, type, Any]


def load_factory(name: str = AGENT_FACTORY) -> Callable[[str, int], Any]:
    """The callable named ``module:attribute`` (imported now)."""
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def observation_bounds(rules: RuleConfig) -> Tuple[np.ndarray, np.ndarray]:
    """Finite bounds of every observation entry under ``rules``, for the observation ``Box``.

    Counts, sizes and flags lie in [0, H] with H = 50 x the cards in play (the largest entry is the
    provisional meld value / 100, at most 50 points a card); the team scores and table points
    (in thousands) within +-S, S a bound on what a team can score or lose in ``rounds + 1`` rounds:
    50 points a card, a book per 7 cards, every red three and the going-out bonus.
    """
    cards = rules.decks * 54
    book = max(abs(rules.clean_book), abs(rules.dirty_book), abs(rules.wild_book))
    per_round = (50 * cards + (cards // 7 + 1) * book + 2 * rules.decks * max(abs(rules.red_three_bonus),
                 abs(rules.red_three_left)) + abs(rules.go_out_bonus))
    big_s = (rules.rounds + 1) * per_round / 1000.0
    names = observation_names(rules.players, rules.teams)
    signed = np.array([n.endswith(("score/1000", "round_table_points/1000")) for n in names])
    low = np.where(signed, -big_s, 0.0).astype(np.float32)
    high = np.where(signed, big_s, 50.0 * cards).astype(np.float32)
    return low, high


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws from the legal actions of the env's state."""

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray], seed: Optional[int] = None):
        super().__init__(n, seed=seed)
        self._legal_mask = legal_mask

    def sample(self, mask: Optional[np.ndarray] = None, probability: Optional[np.ndarray] = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._legal_mask()
            if not mask.any():              # the episode is over: nothing is legal
                mask = None
        if probability is not None:
            return super().sample(probability=probability)
        return super().sample(mask=mask)


class SingleSeatEnv(gym.Env):
    """One learner seat against agents in every other seat (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(self, seat: int = 0, partner: Optional[AgentLike] = "strategic",
                 opponents: Union[AgentLike, Sequence[AgentLike]] = "strategic", rules: RulesLike = "pagat",
                 reward: str = "round_score_diff", reward_scale: float = 0.001, episode: str = "game",
                 max_actions: Optional[int] = None, render_mode: Optional[str] = None,
                 agent_factory: Optional[Callable[[str, int], Any]] = None, **rule_overrides: Any):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.game = Game(rules, **rule_overrides)
        self.rules = self.game.rules
        n = self.rules.players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat must be an integer from 0 to {n - 1}, got {seat!r}")
        self.seat = int(seat)
        self.episode_rules = EpisodeRules(self.rules, reward, reward_scale, episode, max_actions)
        self._factory = agent_factory
        self.players = self._build_players(partner, opponents)
        low, high = observation_bounds(self.rules)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = MaskedDiscrete(NUM_ACTIONS, self.action_masks)
        self._rng = np.random.default_rng()
        self._legal: Optional[List[int]] = None
        self._done = True

    # ---------------------------------------------------------- the other seats
    def _agent(self, who: AgentLike, role: str, shared: bool) -> Any:
        if isinstance(who, str):
            if self._factory is None:
                self._factory = load_factory()
            try:
                return self._factory(who, 0)
            except ValueError as e:
                raise ValueError(f"{role}: {e}") from None
        if isinstance(who, type):
            agent = who(0)
        else:
            if shared:
                raise ValueError(f"{role}: one agent object cannot play several seats; pass a spec, a class "
                                 "or a list with one agent per seat")
            agent = who
        if not callable(getattr(agent, "act", None)) or not callable(getattr(agent, "reset", None)):
            raise ValueError(f"{role}: {who!r} is not an agent spec, an agent class or an agent "
                             "(an object with reset(seat, rules, seed) and act(observation, view))")
        return agent

    def _build_players(self, partner: Optional[AgentLike], opponents) -> List[Optional[Any]]:
        g, me = self.game, self.seat
        team = g.team_of[me]
        partners = [p for p in range(g.n) if p != me and g.team_of[p] == team]
        rivals = [p for p in range(g.n) if g.team_of[p] != team]
        if partners and partner is None:
            raise ValueError(f"partner: seat {me} has partners (seats {partners}) under these rules: name an agent")
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != len(rivals):
                raise ValueError(f"opponents: {len(opponents)} given for the {len(rivals)} opponent seats {rivals}")
            per_seat = dict(zip(rivals, opponents))
            shared_opp = False
        else:
            per_seat = {p: opponents for p in rivals}
            shared_opp = len(rivals) > 1
        players: List[Optional[Any]] = [None] * g.n
        for p in partners:
            players[p] = self._agent(partner, "partner", len(partners) > 1)
        for p in rivals:
            players[p] = self._agent(per_seat[p], "opponents", shared_opp)
        return players

    # ---------------------------------------------------------- helpers
    def action_masks(self) -> np.ndarray:
        """The learner seat's legal-action mask now (sb3-contrib's ``MaskablePPO`` asks for it)."""
        if self._legal is None:
            return np.zeros(NUM_ACTIONS, dtype=np.int8)
        return mask_of(self._legal)

    def _observe(self) -> Tuple[np.ndarray, Dict[str, Any]]:
        g = self.game
        if not self._done and g.current == self.seat and g.phase != GAME_OVER:
            self._legal = g.legal_actions()
            obs = encode_observation(g, self.seat, self._legal)
        else:
            self._legal = None
            obs = encode_observation(g, self.seat)
        return obs, {"action_mask": self.action_masks(), "seat": self.seat}

    def _advance(self) -> float:
        """Let the other seats play until the learner must act or the episode ends; the learner's reward."""
        g = self.game
        reward, self._seen = play_to_seat(g, self.seat, self._other_move, self.episode_rules, g.team_of[self.seat],
                                          self._seen)
        return reward

    def _other_move(self, p: int, legal: List[int]) -> int:
        return agent_action(self.players[p], self.game, p, legal)

    def _end_info(self, truncated: bool) -> Dict[str, Any]:
        g = self.game
        team = g.team_of[self.seat]
        winner = None if truncated or g.phase != GAME_OVER else g.winner
        return {"scores": list(g.scores), "team": team, "winner": winner, "truncated": truncated}

    # ---------------------------------------------------------- gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        """A new game; ``options`` may hold ``game_seed`` (the deal's seed) and the AEC env's ``shoe``,
        ``round`` and ``scores``."""
        super().reset(seed=seed)
        if seed is not None:
            check_seed(seed)
            self._rng = np.random.default_rng(seed)
            self.action_space.seed(int(self._rng.integers(MAX_SEED)))
        options = dict(options or {})
        game_seed = options.get("game_seed")
        game_seed = int(self._rng.integers(MAX_SEED)) if game_seed is None else check_seed(game_seed, "game_seed")
        self.game.reset(seed=game_seed, shoe=options.get("shoe"), round=options.get("round", 1),
                        scores=options.get("scores"))
        for p, agent in enumerate(self.players):
            if agent is not None:
                agent.reset(p, self.rules, int(self._rng.integers(2 ** 31)))
        self._seen, self._done = (0, False), False
        self._pending = self._advance()     # the other seats' actions before the learner's first decision
        obs, info = self._observe()
        info["game_seed"] = game_seed
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        if self._done:
            raise RuntimeError("SingleSeatEnv: the episode is over; call reset()")
        g = self.game
        a = int(action)
        if self._legal is not None and a in self._legal:
            g.apply_legal(a)
        else:
            g.step(a)                       # raises IllegalActionError naming the reason
        reward = self._pending + self._advance()
        self._pending = 0.0
        er = self.episode_rules
        terminated = er.done(g)
        truncated = not terminated and g.action_count >= er.max_actions
        self._done = terminated or truncated
        obs, info = self._observe()
        if self._done:
            info.update(self._end_info(truncated))
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), bool(terminated), bool(truncated), info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return render_game(self.game)
        text = render_text(self.game, viewer=self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text


__all__ = ["SingleSeatEnv", "MaskedDiscrete", "observation_bounds", "AGENT_FACTORY", "load_factory"]
