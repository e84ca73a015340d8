"""The agent interface shared by heuristic and learned players.

An agent is created once (``make_agent(spec, seed)`` in :mod:`agents.registry`),
then for every game:

* ``reset(seat, rules, seed)`` tells it which seat it plays, under which
  :class:`~handfoot_env.config.RuleConfig`, and reseeds its own random source;
* ``act(observation, view) -> int`` is called whenever its seat is to act.
  ``view`` is the seat's :class:`~handfoot_env.view.SeatView` (never hidden
  state) and ``observation`` is the environment's dict
  ``{"observation": np.ndarray, "action_mask": np.ndarray}`` for agents whose
  ``needs_observation`` is true, else ``None``.  The returned id must be one of
  ``view.legal_actions``.  An agent that reads only the observation may set
  ``needs_view = False``; it may then be given ``view=None``.

Every agent owns a :class:`random.Random`; with the same seed it makes the same
choices, which is what makes tournaments reproducible.
"""
from __future__ import annotations

import random
from typing import Any, Optional

from handfoot_env.actions import LAY_RED_THREE
from handfoot_env.config import RuleConfig
from handfoot_env.engine import ANSWER_PHASE, DRAW_PHASE
from handfoot_env.turns import agent_action, play_agent_move
from handfoot_env.view import SeatView


class Agent:
    """Base class: subclasses implement :meth:`act`."""

    #: short name used in tables and records
    name: str = "agent"
    #: whether :meth:`act` needs the encoded observation (policy agents); heuristics use the view
    needs_observation: bool = False
    #: an agent with ``needs_observation`` that never reads ``view`` sets this false: where building the
    #: view costs time (the evaluation harness), it is then given ``view=None`` (a subclass of one that
    #: does, ``PolicyAgent`` among them, sets it back to true if it reads the view)
    needs_view: bool = True

    def __init__(self, seed: int = 0):
        self.seed = int(seed)
        self.rng = random.Random(self.seed)
        self.seat: Optional[int] = None
        self.rules: Optional[RuleConfig] = None

    def reset(self, seat: int, rules: RuleConfig, seed: int) -> None:
        """Start a new game in ``seat`` under ``rules``; reseed the agent's random source."""
        self.seat = int(seat)
        self.rules = rules
        self.rng = random.Random(int(seed))

    def act(self, observation: Optional[Any], view: SeatView) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def forced(self, view: SeatView) -> Optional[int]:
        """The action when there is no choice (one legal action), else ``None``; an error if none."""
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"{self.name}: seat {view.seat} is not to act")
        return legal[0] if len(legal) == 1 else None

    def obvious(self, view: SeatView) -> Optional[int]:
        """:meth:`forced`, or laying a red three when one may be laid (it comes before anything else in a
        turn); else ``None``."""
        only = self.forced(view)
        if only is None and LAY_RED_THREE in view.legal_actions:
            return LAY_RED_THREE
        return only

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"


class RuleAgent(Agent):
    """An agent of rules for each kind of decision: the obvious move (:meth:`Agent.obvious`), else its
    answer to a partner's question (``_answer``), its draw (``_draw``) or its move of the meld phase
    (``_meld_phase``; an action outside the legal list falls back to the first legal one)."""

    def act(self, observation, view: SeatView) -> int:
        only = self.obvious(view)
        if only is not None:
            return only
        legal = view.legal_actions
        if view.phase == ANSWER_PHASE:
            return self._answer(view)
        if view.phase == DRAW_PHASE:
            return self._draw(view, legal)
        a = self._meld_phase(view, legal)
        return a if a in legal else legal[0]

    def _answer(self, view: SeatView) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def _draw(self, view: SeatView, legal) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def _meld_phase(self, view: SeatView, legal) -> int:  # pragma: no cover - interface
        raise NotImplementedError


#: ``agent_action`` and ``play_agent_move`` (asking an agent for its move on either core) live in
#: :mod:`handfoot_env.turns`, where the envs use them too; they are agents' names as well
def observation_only(agent) -> bool:
    """Whether ``agent`` reads only its observation (``needs_observation`` and not ``needs_view``): it may
    be given ``view=None``."""
    return bool(getattr(agent, "needs_observation", False)) and not getattr(agent, "needs_view", True)


__all__ = ["Agent", "RuleAgent", "agent_action", "play_agent_move", "observation_only"]
