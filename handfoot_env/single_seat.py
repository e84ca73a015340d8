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
* **Mask**: ``info["action_mask"]`` after every ``reset`` and ``step``, and ``action_masks()``
  (sb3-contrib's ``MaskablePPO`` convention): an ``int8`` array of 705 entries, 1 exactly where the
  rules allow the learner that action now.  A **terminal observation has no legal action**: once
  the env returns ``terminated`` or ``truncated`` the mask is all zeros (and before the first ``reset``).
  ``gymnasium.make`` puts the env in an outermost :class:`ActionMasks` layer, so
  ``gymnasium.make(...).action_masks()`` works although Gymnasium 1.x wrappers forward no
  attributes; below other wrappers use ``env.get_wrapper_attr("action_masks")()``,
  ``env.unwrapped.action_masks()`` or ``info["action_mask"]``.
* **Action space**: ``Discrete(705)`` (:class:`MaskedDiscrete`) whose ``sample()`` without a mask
  draws uniformly from the legal actions of the current state (``sample(mask=...)`` as Gymnasium's);
  it is seeded by ``reset(seed=...)``.  Pickled (as in a saved SB3 model) it is a plain
  ``Discrete(705)``: the env does not travel with it.  A vector env's ``action_space`` is
  Gymnasium's batch of ``Discrete(705)``: sample it with the masks, ``envs.action_space.sample(
  mask=tuple(info["action_mask"]))``.
* **Illegal actions**: an action id that the rules do not allow now ends the episode
  (``illegal_action="terminate"``, the default, as ``handfoot_v0.env()`` does): the reward is -1
  (plus what the other seats' moves paid since the last step), ``terminated`` is true and
  ``info["illegal_action"]`` names the action and the reason.  ``illegal_action="raise"`` raises
  :class:`~handfoot_env.engine.IllegalActionError` instead (as ``handfoot_v0.raw_env`` does).  What
  is not an action id at all (not an integer from 0 to 704) always raises ``IllegalActionError``.
* **Reward**: what the AEC env pays the learner seat, summed over the other seats' actions up to
  the learner's next decision (:meth:`handfoot_env.episode.EpisodeRules.reward_since`: ``reward``,
  ``reward_scale``, ``episode`` and ``max_actions`` as for ``handfoot_v0.env``). ``terminated``
  when the episode ends, ``truncated`` at the action cap.  The last step's ``info`` holds
  ``scores``, ``team``, ``winner`` and ``truncated``.
* **Other seats**: ``partner`` plays every other seat of the learner's team, ``opponents`` every
  seat of the other teams (one entry, or a list with one per opponent seat in seat order). Each
  entry is an agent spec (``"random"``, ``"greedy"``, ``"strategic"``, ``"champion"``,
  ``"policy:PATH"``, ``"py:package.module:ClassName"``, ...: the specs of ``handfoot evaluate``),
  an agent class (built as ``cls(seed)``) or an agent object (one seat each). An agent has
  ``reset(seat, rules, seed)`` and ``act(observation, view) -> int`` (``agents.base.Agent``).
* **Core**: ``core=None`` or ``"auto"`` (default: the compiled core where Numba is installed),
  ``"compiled"`` or ``"reference"``, as for ``handfoot_v0.env``; both cores give the same
  episodes, observations, masks and rewards.  ``env.game`` is the game (a
  :class:`~handfoot_env.compiled.game.CompiledGame` on the compiled core).
* **Seeding**: ``reset(seed=s)`` seeds everything random in an episode (the deal, every agent,
  the action space); ``reset()`` continues from the previous episode's random stream.
* **Vector envs**: Gymnasium's ``SyncVectorEnv``/``AsyncVectorEnv`` and SB3's ``DummyVecEnv``/
  ``SubprocVecEnv`` run it.  A worker started with ``spawn`` (or ``forkserver``) has not imported
  ``handfoot_env``, so make it there with the module-qualified id
  ``gymnasium.make("handfoot_env:handfoot/SingleSeat-v0", ...)``, which imports the package (Gymnasium
  1.x reads no entry points).  SB3's vector envs reset an ended episode inside ``step``, so the
  masks they return (``get_action_masks``) always belong to a state to act in; Gymnasium's vector
  envs return the terminal observation and reset on the next ``step``, whose action they ignore.

Agent specs are a notion of the ``agents`` package, one layer up: this package never imports it,
not even by name.  The function that builds an agent from a spec is found as a plug-in, in the
entry-point group :data:`AGENT_FACTORY` that the installed distribution declares (``handfoot``'s
pyproject.toml names ``agents.registry:make_agent`` there), on the first spec the env has to build;
an agent class or object needs no factory at all, and ``agent_factory=`` can pass another one.
"""
from __future__ import annotations

import copy
from importlib import metadata
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .actions import NUM_ACTIONS
from .compiled import make_game, resolve_core
from .config import MAX_SEED, RuleConfig, RulesLike, check_seed
from .engine import GAME_OVER, Game, IllegalActionError
from .episode import EpisodeRules
from .observation import observation_names, observation_size
from .render import render_text
from .render_image import render_game
from .scoring import round_score_bound
from .turns import agent_action, observe_into, play_to_seat

#: the entry-point group of the function ``(spec, seed) -> agent`` that builds an agent from a spec string
AGENT_FACTORY = "handfoot.agent_factory"
#: what ``step`` does with an action id the rules do not allow now (the first is the default)
ILLEGAL_ACTIONS = ("terminate", "raise")
#: the learner's reward for an illegal action under ``illegal_action="terminate"`` (``handfoot_v0.env()``'s)
ILLEGAL_REWARD = -1.0

AgentLike = Union[str, type, Any]


def load_factory(group: str = AGENT_FACTORY) -> Callable[[str, int], Any]:
    """The agent factory declared in the entry-point group ``group`` (imported now): the one named
    ``handfoot`` if several are installed, else the first by name; a ``ValueError`` if none is."""
    found = sorted(metadata.entry_points(group=group), key=lambda ep: (ep.name != "handfoot", ep.name))
    if not found:
        raise ValueError(f"no agent factory is installed (entry-point group {group!r}): install handfoot "
                         f"(pip install -e .) or pass agent_factory=")
    return found[0].load()


def action_id(action: Any) -> int:
    """``action`` as an action id: an integer (Python, NumPy, or a NumPy array of one integer) from 0
    to 704; else :class:`IllegalActionError` saying what an action is."""
    value = action
    if isinstance(value, np.ndarray) and value.size == 1 and np.issubdtype(value.dtype, np.integer):
        value = value.reshape(()).item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise IllegalActionError(action, f"an action is an integer from 0 to {NUM_ACTIONS - 1} "
                                         f"(docs/actions.md), got {type(action).__name__}")
    if not 0 <= value < NUM_ACTIONS:
        raise IllegalActionError(action, f"an action is an integer from 0 to {NUM_ACTIONS - 1} (docs/actions.md)")
    return int(value)


def observation_bounds(rules: RuleConfig) -> Tuple[np.ndarray, np.ndarray]:
    """Finite bounds of every observation entry under ``rules``, for the observation ``Box``.

    Counts, sizes and flags lie in [0, H] with H = 50 x the cards in play (the largest entry is the
    provisional meld value / 100, at most 50 points a card); the team scores and table points
    (in thousands) within +-S, S a bound on what a team can score or lose in ``rounds + 1`` rounds
    (:func:`handfoot_env.scoring.round_score_bound` a round).
    """
    cards = rules.decks * 54
    big_s = (rules.rounds + 1) * round_score_bound(rules) / 1000.0
    names = observation_names(rules.players, rules.teams)
    signed = np.array([n.endswith(("score/1000", "round_table_points/1000")) for n in names])
    low = np.where(signed, -big_s, 0.0).astype(np.float32)
    high = np.where(signed, big_s, 50.0 * cards).astype(np.float32)
    return low, high


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws from the legal actions of its env's state.

    The env is not part of the space's pickled state: unpickled (a saved model's copy) the space
    samples uniformly, as ``Discrete(n)``.  A deep copy of the env links the copy of its space to the
    copy of the env; a deep copy of the space alone has no env.
    """

    def __init__(self, n: int, env: Optional["SingleSeatEnv"] = None, seed: Optional[int] = None):
        super().__init__(n, seed=seed)
        self._env = env

    def sample(self, mask: Optional[np.ndarray] = None, probability: Optional[np.ndarray] = None) -> np.int64:
        if probability is not None:
            return super().sample(probability=probability)
        if mask is None and self._env is not None:
            legal = self._env.action_masks()
            if legal.any():                 # (all zeros: no decision pending, nothing is legal)
                mask = legal
        return super().sample(mask=mask)

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["_env"] = None
        return state

    def __deepcopy__(self, memo: Dict[int, Any]) -> "MaskedDiscrete":
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            if name != "_env":
                new.__dict__[name] = copy.deepcopy(value, memo)
        env = self.__dict__.get("_env")
        new._env = memo.get(id(env)) if env is not None else None     # the env's copy, when it is copied
        return new


class ActionMasks(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """``action_masks()`` of the env inside, on the outside: the outermost layer of
    ``gymnasium.make("handfoot/SingleSeat-v0")`` (Gymnasium 1.x wrappers forward no attributes, and
    sb3-contrib's ``MaskablePPO`` and many scripts call ``env.action_masks()``)."""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


class SingleSeatEnv(gym.Env):
    """One learner seat against agents in every other seat (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(self, seat: int = 0, partner: Optional[AgentLike] = "strategic",
                 opponents: Union[AgentLike, Sequence[AgentLike]] = "strategic", rules: RulesLike = "pagat",
                 reward: str = "round_score_diff", reward_scale: float = 0.001, episode: str = "game",
                 max_actions: Optional[int] = None, render_mode: Optional[str] = None,
                 agent_factory: Optional[Callable[[str, int], Any]] = None, core: Optional[str] = None,
                 illegal_action: str = "terminate", **rule_overrides: Any):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTIONS}, got {illegal_action!r}")
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.core = resolve_core(core)
        self.game = make_game(self.core, rules, **rule_overrides)
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
        self.action_space = MaskedDiscrete(NUM_ACTIONS, self)
        self._obs_n = observation_size(n, self.rules.teams)
        self._rng = np.random.default_rng()
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)     # the learner's legal actions now (exact)
        self._pending = 0.0
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
        """The learner seat's legal-action mask now (sb3-contrib's ``MaskablePPO`` asks for it): ``int8``,
        1 exactly where the rules allow the action; all zeros when no decision is pending (before the
        first ``reset``, and once the episode is over: a terminal observation has no legal action)."""
        return self._mask.copy()

    def _view(self) -> Game:
        """The reference ``Game`` in the current state (the game itself on the reference core)."""
        return self.game.reference()

    def _observe(self) -> Tuple[np.ndarray, Dict[str, Any]]:
        g, seat = self.game, self.seat
        obs = np.empty(self._obs_n, dtype=np.float32)
        mask = np.empty(NUM_ACTIONS, dtype=np.int8)
        observe_into(g, seat, obs, mask)
        if self._done:                      # (the learner is to act whenever the episode goes on)
            mask[:] = 0
        self._mask = mask
        return obs, {"action_mask": mask.copy(), "seat": seat}

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
        """A new game, played by the other seats up to the learner's first decision; ``options`` may hold
        ``game_seed`` (the deal's seed) and the AEC env's ``shoe``, ``round`` and ``scores``.  A
        ``max_actions`` that the other seats reach before that decision is a ``ValueError``."""
        if seed is not None:
            seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self.action_space.seed(int(self._rng.integers(MAX_SEED)))
        options = dict(options or {})
        game_seed = options.get("game_seed")
        game_seed = int(self._rng.integers(MAX_SEED)) if game_seed is None else check_seed(game_seed, "game_seed")
        self._done = True                   # until the learner has a decision
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        g = self.game
        g.reset(seed=game_seed, shoe=options.get("shoe"), round=options.get("round", 1), scores=options.get("scores"))
        for p, agent in enumerate(self.players):
            if agent is not None:
                agent.reset(p, self.rules, int(self._rng.integers(2 ** 31)))
        self._seen = (0, False)
        self._pending = self._advance()     # the other seats' actions before the learner's first decision
        if self.episode_rules.done(g) or g.current != self.seat:
            raise ValueError(f"max_actions={self.episode_rules.max_actions} is reached before seat {self.seat} "
                             f"first acts (deal {game_seed}): give the episode a larger action cap")
        self._done = False
        obs, info = self._observe()
        info["game_seed"] = game_seed
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        if self._done:
            raise RuntimeError("SingleSeatEnv: no episode in play (it is over, or none was started); call reset()")
        a = action_id(action)               # not an action id at all: IllegalActionError
        g = self.game
        if self._mask[a]:
            g.apply_legal(a)
        else:
            try:
                g.step(a)                   # not legal now (the mask is exact): the engine names the reason
            except IllegalActionError as e:
                if self.illegal_action == "raise":
                    raise
                return self._illegal_end(e)
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

    def _illegal_end(self, error: IllegalActionError):
        """``step``'s return for an illegal action under ``illegal_action="terminate"``: the episode ends."""
        reward = self._pending + ILLEGAL_REWARD
        self._pending = 0.0
        self._done = True
        obs, info = self._observe()
        info.update(self._end_info(False))
        info["illegal_action"] = str(error)
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), True, False, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return render_game(self._view())
        text = render_text(self._view(), viewer=self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.action_space._env = self       # (the space's pickled state leaves its env out)


__all__ = ["SingleSeatEnv", "MaskedDiscrete", "ActionMasks", "observation_bounds", "action_id", "AGENT_FACTORY",
           "ILLEGAL_ACTIONS", "ILLEGAL_REWARD", "load_factory"]
