"""Hand and Foot as a PettingZoo AEC environment (``handfoot_v0``).

=====================  =====================================================
Import                 ``from handfoot_env import handfoot_v0``
Registry id            ``handfoot/hand_and_foot-v0`` (``pettingzoo.make("aec", ...)``)
Actions                Discrete(705)
Parallel API           no (turn-based)
Agents                 ``player_0`` ... ``player_{n-1}`` (4 under ``pagat``)
Observation            Dict(observation=Box(float32, (170,)), action_mask=Box(int8, (705,)))
State                  Box(float32, (305,)) perfect information (``state()``)
=====================  =====================================================

Four players in two partnerships (partners opposite: team 0 = players 0 and 2)
play four rounds of Hand and Foot (docs/rules.md).  Other presets change
the number of players and teams (``six_player``: two teams of three;
``individual``: three players alone); the spaces then change size.

Arguments
---------
``handfoot_v0.env(rules="pagat", render_mode=None, reward="round_score_diff",
reward_scale=0.001, episode="game", max_actions=None, core=None, **rule_overrides)``

* ``rules``: preset name, YAML path or :class:`~handfoot_env.config.RuleConfig`;
  keyword rule overrides such as ``decks=6`` are allowed.
* ``reward``: ``"round_score_diff"`` (default): when a round ends every player
  receives (its team's round score - the opponents' round score) x
  ``reward_scale`` (with more than two teams, minus the mean of the other
  teams).  ``"game_win"``: +1 / -1 at game end (0 for a draw), nothing else.
  Partners always receive identical rewards.
* ``render_mode``: ``"ansi"`` (``render()`` returns the table as text, from
  the view of the player to act), ``"human"`` (prints it after every step) or
  ``"rgb_array"`` (``render()`` returns the full view as a ``uint8`` image of
  shape ``(640, 1024, 3)``; see :mod:`handfoot_env.render_image` and
  docs/viewer.md for writing a GIF or MP4 of a game).
* ``episode``: ``"game"`` (default, all rounds) or ``"round"`` (the episode
  terminates when the first round ends).
* ``max_actions``: truncation cap on actions per game (default 3000 per round,
  12,000 for a four-round game; heuristic agents use about 400-900 per game).
  The engine's proven bound is larger (``engine.max_actions_per_game``); the
  cap only stops degenerate policies that cancel and re-meld forever.
* ``core``: ``"compiled"`` plays on the compiled core (:mod:`handfoot_env.compiled`,
  needs Numba), ``"reference"`` on the pure-Python engine; both give exactly the
  same games, observations, masks and rewards (docs/compiled_core.md).  The
  default (``None`` or ``"auto"``) is the compiled core when Numba is installed.
  ``env.unwrapped.game`` is then a :class:`~handfoot_env.compiled.game.CompiledGame`
  (a ``Game``'s interface; its state cannot be edited by hand).

Actions
-------
The fixed table of :mod:`handfoot_env.actions` (705 ids with stable names:
``env.unwrapped.action_names[i]``, ``env.unwrapped.action_index(name)``):
``draw``, ``pickup``, ``lay_red_three``, ``cancel_melds``, ``ask_go_out``,
``answer_yes``, ``answer_no``, ``discard:C`` for 14 card codes and
``meld:R:N:T:J`` for every rank and card mix.  See docs/actions.md.

Observation and mask
--------------------
``observe(agent)["observation"]`` is described index by index in
:mod:`handfoot_env.observation` and docs/observation.md.  ``action_mask`` is 1
exactly for the actions the engine allows that agent now, all zeros for an
agent that is not to act.  When a player asks to go out, the turn passes to the
asked teammate for one ``answer_yes``/``answer_no`` action and comes back.

Illegal actions
---------------
``raw_env`` raises :class:`~handfoot_env.engine.IllegalActionError` naming the
action and the reason.  ``env()`` wraps it in PettingZoo's
``TerminateIllegalWrapper`` (the offender and its partners get -1, the game ends),
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``.

Reset options
-------------
``reset(seed, options={"shoe": [...], "round": k, "scores": [...]})`` as in
docs/interface.md.  ``env.unwrapped.state_dict()`` returns the game record snapshot;
``env.unwrapped.game`` is the rules engine.

Version history
---------------
* v0: first release.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from .actions import ACTION_NAMES, NUM_ACTIONS, action_index
from .compiled import make_game, resolve_core
from .config import MAX_SEED, RulesLike
from .engine import GAME_OVER, Game, IllegalActionError
from .episode import EpisodeRules
from .observation import encode_state, observation_size, state_size
from .render import render_text
from .render_image import render_game
from .turns import observe_into


class _ActionSpace(spaces.Discrete):
    """``Discrete`` with a fast ``contains`` for plain ints (the wrapper checks every step)."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return self.start <= x < self.start + self.n
        return super().contains(x)


class raw_env(AECEnv):
    """The unwrapped Hand and Foot AEC environment (see the module docstring)."""

    metadata = {"name": "handfoot_v0", "render_modes": ["ansi", "human", "rgb_array"], "is_parallelizable": False}

    def __init__(self, rules: RulesLike = "pagat", render_mode: Optional[str] = None,
                 reward: str = "round_score_diff", reward_scale: float = 0.001, episode: str = "game",
                 max_actions: Optional[int] = None, core: Optional[str] = None, **rule_overrides: Any):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.core = resolve_core(core)
        self.game = make_game(self.core, rules, **rule_overrides)
        self.rules = self.game.rules
        self.render_mode = render_mode
        self.episode_rules = er = EpisodeRules(self.rules, reward, reward_scale, episode, max_actions)
        self.reward_mode, self.reward_scale, self.episode, self.max_actions = (
            er.reward, er.reward_scale, er.episode, er.max_actions)
        n, t = self.rules.players, self.rules.teams
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_n = self._obs_n = observation_size(n, t)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(low=-np.inf, high=np.inf, shape=(obs_n,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }) for a in self.possible_agents}
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in self.possible_agents}
        self.state_space = spaces.Box(low=-np.inf, high=np.inf, shape=(state_size(n, t),), dtype=np.float32)
        self.action_names = ACTION_NAMES
        self._seed = None
        self._legal = None          # legal list computed by observe() for the agent to act ...
        self._legal_at = None       # ... and the state it belongs to: (game, seed, action count)
        self._info_key = None       # (round, rounds finished) that the infos dicts show
        self._rewarded = False      # rewards hold non-zero values from the last step

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str):
        return self.observation_spaces[agent]

    def action_space(self, agent: str):
        return self.action_spaces[agent]

    @staticmethod
    def action_index(name: str) -> int:
        return action_index(name)

    # ------------------------------------------------------------ API
    def reset(self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> None:
        options = dict(options or {})
        # other keys are ignored: PettingZoo's api_test passes arbitrary options
        if seed is None:
            # the next deal; after the largest seed, 0 again
            seed = (self._seed + 1) % (MAX_SEED + 1) if self._seed is not None else None
        self.game.reset(seed=seed, shoe=options.get("shoe"), round=options.get("round", 1),
                        scores=options.get("scores"))
        self._seed = self.game.seed
        self._legal = self._legal_at = None
        self._info_key = None
        self._rewarded = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._rounds_seen = 0
        self.agent_selection = self.possible_agents[self.game.current]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        game = self.game
        obs = np.empty(self._obs_n, dtype=np.float32)
        mask = np.empty(NUM_ACTIONS, dtype=np.int8)
        if observe_into(game, seat, obs, mask):
            self._legal = mask                # the seat's legal mask for step(), with the state it belongs to
            self._legal_at = (game, game.seed, game.action_count)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        return encode_state(self._game_view())

    def state_dict(self) -> dict:
        return self.game.state_dict()

    def _game_view(self) -> Game:
        """The reference ``Game`` in the current state (the game itself on the reference core)."""
        return self.game.reference()

    def seat_view(self, agent: str):
        """Structured read-only view of what ``agent`` may see (agents.view)."""
        from .view import seat_view
        return seat_view(self._game_view(), self.agent_name_mapping[agent])

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        if action is None:
            raise IllegalActionError(action, f"{agent} is to act and must choose an action (got None)")
        if agent != self.possible_agents[game.current]:
            raise IllegalActionError(action, f"it is {self.possible_agents[game.current]}'s move, not {agent}'s")
        self._cumulative_rewards[agent] = 0.0
        legal = self._legal
        self._legal = None
        at = self._legal_at
        if (legal is not None and (type(action) is int or isinstance(action, np.integer))
                and 0 <= action < NUM_ACTIONS and legal[action]
                and at[0] is game and at[2] == game.action_count and at[1] == game.seed):
            game.apply_legal(int(action))      # listed legal by observe() for this very state
        else:
            game.step(action)
        rewards = self.rewards
        if self._rewarded:
            for a in self.agents:
                rewards[a] = 0.0
            self._rewarded = False
        er = self.episode_rules
        finished = game.rounds_finished
        if finished > self._rounds_seen:
            if er.reward == "round_score_diff":
                self._team_rewards(er.round_end_reward, game.round_scores[-1])
                self._rewarded = True
            self._rounds_seen = finished
        done = er.done(game)
        if done and er.reward == "game_win":
            self._team_rewards(er.final_reward)
            self._rewarded = True
        if done:
            for a in self.agents:
                self.terminations[a] = True
        elif game.action_count >= er.max_actions:
            for a in self.agents:
                self.truncations[a] = True
        if not done:
            self.agent_selection = self.possible_agents[game.current]
        if self._rewarded:            # between round ends all rewards stay 0.0: nothing to accumulate
            self._accumulate_rewards()
        key = (game.round, finished)
        if key != self._info_key:     # the infos change only when a round ends
            self._info_key = key
            for a in self.agents:
                self.infos[a] = {"round": key[0], "rounds_finished": finished}
        if self.render_mode == "human":
            self.render()

    def _team_rewards(self, reward_of, *args) -> None:
        """Set every agent's reward from its team: ``reward_of(game, team, *args)``."""
        game, seat = self.game, self.agent_name_mapping
        for a in self.agents:
            self.rewards[a] = reward_of(game, game.team_of[seat[a]], *args)

    def render(self):
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' "
                                  "or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            # the full view (every hand and foot) as a uint8 image (H, W, 3)

            return render_game(self._game_view())
        # the table as the player to act sees it (its own cards only)
        game = self._game_view()
        text = render_text(game, viewer=game.current if game.phase != GAME_OVER else None)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def render_seat(self, agent: Optional[str] = None) -> str:
        """The table as ``agent`` sees it (its own cards only); ``None`` shows everything."""
        return render_text(self._game_view(), None if agent is None else self.agent_name_mapping[agent])

    def close(self) -> None:
        pass


# PettingZoo's wrappers reach the raw env's attributes through one ``__getattr__``
# per layer and call each other layer by layer, which costs more than the game
# itself per step.  The subclasses below keep the three standard wrappers (and their
# behaviour: tests/test_bench.py), read the attributes used every step straight from
# the raw env, and let the outermost layer take the common case in one call:
# a live agent plays an int action that its last observed mask allows.
_HOT_ATTRS = ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos",
              "_cumulative_rewards")
_ORDER_CHECKED = {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}
_INT_TYPES = frozenset((int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64,
                        np.intp))


def _forward(name: str, check_reset: bool) -> property:
    def get(self):
        if check_reset and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def set_(self, value):
        setattr(self._raw, name, value)

    return property(get, set_)


class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    def step(self, action) -> None:
        raw = self._raw
        offender = raw.agent_selection
        was_terminated = self._terminated
        super().step(action)
        if self._terminated and not was_terminated:
            # partners share every reward: the offender's teammates get its -1 too
            game, seat = raw.game, raw.agent_name_mapping
            team = game.team_of[seat[offender]]
            value = float(self._illegal_value)
            for a in raw.agents:
                if a != offender and game.team_of[seat[a]] == team:
                    raw.rewards[a] = value
                    raw._cumulative_rewards[a] += value

    def observe(self, agent: str):
        obs = self.env.observe(agent)
        raw = self._raw
        selected = raw.agent_selection
        if agent == selected:
            self._prev_obs = obs
            infos = raw.infos
            self._prev_info = infos[selected] if selected in infos else {}
        return obs


class _AssertOutOfBounds(wrappers.AssertOutOfBoundsWrapper):
    def step(self, action) -> None:
        raw = self._raw
        agent = raw.agent_selection
        assert (action is None and (raw.terminations[agent] or raw.truncations[agent])) or \
            raw.action_space(agent).contains(action), "action is not in action space"
        self.env.step(action)


class _FastIterator(AECOrderEnforcingIterator):
    def __next__(self) -> str:
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


class _FastIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _FastIterator:
        return _FastIterator(self.env, self.max_iter)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    def __str__(self) -> str:
        return str(self.env)

    def observe(self, agent: str):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        raw = self._raw
        obs = raw.observe(agent)
        if agent == raw.agent_selection:        # what TerminateIllegalWrapper.observe records
            ti = self._ti
            ti._prev_obs = obs
            infos = raw.infos
            ti._prev_info = infos[agent] if agent in infos else {}
        return obs

    def step(self, action) -> None:
        raw = self._raw
        ti = self._ti
        prev = ti._prev_obs
        if self._has_reset and prev is not None and type(action) in _INT_TYPES and not ti._terminated:
            # the three layers' checks, in one place: agents left, action in the space, agent
            # alive, action allowed by the mask observed last (TerminateIllegalWrapper's test)
            agent = raw.agent_selection
            if (raw.agents and 0 <= action < NUM_ACTIONS and not raw.terminations[agent]
                    and not raw.truncations[agent] and prev["action_mask"][action]):
                self._has_updated = True
                ti._prev_obs = None
                ti._prev_info = None
                raw.step(action)
                return
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        infos = raw.infos
        if observe:                           # self.observe(agent), inline
            observation = raw.observe(agent)
            ti = self._ti
            ti._prev_obs = observation
            ti._prev_info = infos[agent] if agent in infos else {}
        else:
            observation = None
        return (observation, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent],
                infos[agent])

    def agent_iter(self, max_iter: int = 2 ** 63) -> _FastIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _FastIterable(self, max_iter)


for _cls in (_TerminateIllegal, _AssertOutOfBounds, _OrderEnforcing):
    for _name in _HOT_ATTRS:
        setattr(_cls, _name, _forward(_name, _cls is _OrderEnforcing and _name in _ORDER_CHECKED))


def env(rules: RulesLike = "pagat", render_mode: Optional[str] = None, **kwargs: Any) -> AECEnv:
    """The wrapped environment (illegal move -> -1 and termination; order enforcement)."""
    raw = raw_env(rules=rules, render_mode=render_mode, **kwargs)
    e = _TerminateIllegal(raw, illegal_reward=-1)
    e._raw = raw
    ti = e
    e = _AssertOutOfBounds(e)
    e._raw = raw
    e = _OrderEnforcing(e)
    e._raw = raw
    e._ti = ti
    return e
