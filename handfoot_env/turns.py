"""A seat's turn played by an agent, on either core, and the loop that plays the other seats up to
a learner's seat.

Every runner that puts agents in seats asks them for moves here: the single-seat env, the self-play
training env, the batched samplers, the RLlib env, the evaluation apps.  An agent is given what its
seat may see (:func:`~handfoot_env.view.seat_view`, and the encoded observation when it reads one),
from a reference :class:`~handfoot_env.engine.Game` or a
:class:`~handfoot_env.compiled.game.CompiledGame` alike; an illegal answer raises the engine's
:class:`~handfoot_env.engine.IllegalActionError` naming the reason.  ``agents.base`` gives the same
functions under the same names.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .actions import NUM_ACTIONS
from .engine import Game
from .episode import EpisodeRules
from .observation import encode_observation, mask_of, observation_size
from .view import SeatView, seat_view


def view_of(game: Any, seat: int, legal: Optional[Sequence[int]] = None) -> SeatView:
    """``seat``'s :class:`SeatView` of ``game`` on either core (``legal``: the player to act's legal list
    when the caller has it)."""
    if isinstance(game, Game):
        return seat_view(game, seat, legal)
    return game.seat_view(seat, legal)


def observation_of(game: Any, seat: int, legal: Optional[Sequence[int]] = None) -> dict:
    """The env's observation dict ``{"observation", "action_mask"}`` of ``seat`` on either core."""
    if isinstance(game, Game):
        if legal is None:
            legal = game.legal_actions() if game.current == seat and game.phase != 3 else []
        return {"observation": encode_observation(game, seat, legal), "action_mask": mask_of(legal)}
    obs = np.zeros(observation_size(game.n, game.num_teams), np.float32)
    mask = np.zeros(NUM_ACTIONS, np.int8)
    game.observe(seat, obs, mask)
    return {"observation": obs, "action_mask": mask}


def agent_action(agent: Any, game: Any, seat: int, legal: Optional[List[int]] = None) -> int:
    """Ask ``agent`` (playing ``seat``) for its action in ``game``: its view, and its observation when it
    reads one (``legal``: the seat's legal actions when the caller has them already)."""
    obs = observation_of(game, seat, legal) if getattr(agent, "needs_observation", False) else None
    return int(agent.act(obs, view_of(game, seat, legal)))


def play_agent_move(agent: Any, game: Any, seat: int, legal: List[int]) -> int:
    """Ask ``agent`` for its move and play it in ``game`` (an illegal one raises the engine's
    IllegalActionError naming the reason); the action."""
    a = agent_action(agent, game, seat, legal)
    if a in legal:
        game.apply_legal(a)
    else:
        game.step(a)
    return a


def play_to_seat(game: Any, seat: int, move: Callable[[int, List[int]], int], rules: EpisodeRules, team: int,
                 seen: Tuple[int, bool]) -> Tuple[float, Tuple[int, bool]]:
    """Play the other seats of ``game`` until ``seat`` must act or the episode ends (or reaches its action
    cap): ``move(player, legal)`` gives each of their actions, played here (an illegal one raises
    IllegalActionError).  ``seen`` is ``(rounds paid, final reward paid)`` of ``team``'s seat; returns
    its reward over those steps (:meth:`EpisodeRules.reward_since`) and the new ``seen``."""
    rounds_seen, final_paid = seen
    reward = 0.0
    while True:
        done = rules.done(game)
        if done or game.rounds_finished > rounds_seen:
            r, rounds_seen, final_paid = rules.reward_since(game, team, rounds_seen, final_paid)
            reward += r
        if done or game.action_count >= rules.max_actions or game.current == seat:
            return reward, (rounds_seen, final_paid)
        p = game.current
        legal = game.legal_actions()
        a = int(move(p, legal))
        if a in legal:
            game.apply_legal(a)
        else:
            game.step(a)


__all__ = ["agent_action", "play_agent_move", "play_to_seat", "view_of", "observation_of"]
