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
from .engine import GAME_OVER, Game
from .episode import EpisodeRules
from .observation import encode_observation, encode_state, observation_size
from .view import SeatView, seat_view


class ReferenceGame(Game):
    """The reference engine's :class:`~handfoot_env.engine.Game` with the reading methods of a
    :class:`~handfoot_env.compiled.game.CompiledGame`, so that a runner holding a game from
    :func:`handfoot_env.compiled.make_game` drives either core through the same calls: the observation
    and mask into the caller's buffers (:meth:`observe`, :meth:`observe_legal`), a seat's view, the
    centralised state, and an action that reports the books of the round it ends."""

    def observe(self, seat: int, obs: np.ndarray, mask: np.ndarray) -> int:
        """Observation and mask of ``seat`` into ``obs`` (float32) and ``mask`` (int8); the legal count."""
        return len(self.observe_legal(seat, obs, mask))

    def observe_legal(self, seat: int, obs: np.ndarray, mask: np.ndarray,
                      legal: Optional[Sequence[int]] = None) -> Sequence[int]:
        """:meth:`observe`, returning the legal list of ``seat`` (empty unless it is to act; ``legal``: that
        list when the caller has it).  :func:`observe_into` calls it on a plain ``Game`` too."""
        if legal is None:
            legal = self.legal_actions() if self.current == seat and self.phase != GAME_OVER else []
        obs[:] = encode_observation(self, seat, legal)
        mask[:] = 0
        mask[legal] = 1
        return legal

    def seat_view(self, seat: int, legal: Optional[Sequence[int]] = None) -> SeatView:
        return seat_view(self, seat, legal)

    def encode_state(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """:func:`handfoot_env.observation.encode_state` of this game (into ``out`` when given)."""
        s = encode_state(self)
        if out is None:
            return s
        out[:] = s
        return out

    def apply_legal_books(self, a: int) -> Optional[List[List[int]]]:
        """:meth:`apply_legal`; when ``a`` ends a round, each team's book counts (clean, dirty, wild) of
        that round, else None."""
        books, finished = self.book_counts, len(self.round_scores)
        self.apply_legal(a)
        if len(self.round_scores) == finished:
            return None
        return [list(c) for c in books]


def view_of(game: Any, seat: int, legal: Optional[Sequence[int]] = None) -> SeatView:
    """``seat``'s :class:`SeatView` of ``game`` on either core (``legal``: the player to act's legal list
    when the caller has it)."""
    if isinstance(game, Game):
        return seat_view(game, seat, legal)
    return game.seat_view(seat, legal)


def observe_into(game: Any, seat: int, obs: np.ndarray, mask: np.ndarray,
                 legal: Optional[Sequence[int]] = None) -> int:
    """``seat``'s observation into ``obs`` (float32) and its legal-action mask into ``mask`` (int8, all
    zeros unless ``seat`` is to act) on either core; the number of legal actions (``legal``: the player
    to act's legal list when the caller has it)."""
    if isinstance(game, Game):
        return len(ReferenceGame.observe_legal(game, seat, obs, mask, legal))
    return game.observe(seat, obs, mask)


def observation_of(game: Any, seat: int, legal: Optional[Sequence[int]] = None) -> dict:
    """The env's observation dict ``{"observation", "action_mask"}`` of ``seat`` on either core."""
    obs = np.zeros(observation_size(game.n, game.num_teams), np.float32)
    mask = np.zeros(NUM_ACTIONS, np.int8)
    observe_into(game, seat, obs, mask, legal)
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


def play_until(game: Any, waits: Optional[Callable[[int], bool]], move: Callable[[int, List[int]], int], *,
               stop: Optional[Callable[[], bool]] = None, legal: Optional[Callable[[], List[int]]] = None,
               apply: Optional[Callable[[int, int], Any]] = None) -> int:
    """The game-driving loop of every runner that plays one game at a time: play ``game``'s seats until
    a seat for which ``waits(p)`` is true must act (``waits`` None: no seat waits), or ``stop()``
    (checked before every action; default: the game is over) is true.  ``move(p, legal)`` gives each
    action; an illegal one raises the engine's IllegalActionError naming the reason, before anything is
    applied.  ``legal()`` gives the player to act's legal list (default ``game.legal_actions``);
    ``apply(p, a)`` plays a legal action (default ``game.apply_legal(a)``; a runner that keeps a record,
    prints or steps an env does it there).
    Returns the number of actions played.

    The batched samplers play their agent seats through it, one game of the batch at a time
    (``Sampler._advance``, in :func:`play_batch`'s step), as do the single-seat envs
    (:func:`play_to_seat`), the RLlib env, the
    evaluation harness, the demo and the terminal table."""
    n = 0
    while not (stop() if stop is not None else game.game_over):
        p = game.current
        if waits is not None and waits(p):
            break
        lg = legal() if legal is not None else game.legal_actions()
        a = int(move(p, lg))
        if a not in lg:
            game.step(a)                        # IllegalActionError with the reason
        if apply is not None:
            apply(p, a)
        else:
            game.apply_legal(a)
        n += 1
    return n


def play_batch(rows: Callable[[int], Optional[np.ndarray]], act: Callable[[np.ndarray], np.ndarray],
               step: Callable[[np.ndarray, np.ndarray], Any]) -> int:
    """The game-driving loop of every runner that plays a batch of games in ticks (the batched samplers on
    both cores, the search agent's rollouts): each tick, ``rows(t)`` gives the games that play tick ``t``
    (None or empty: the loop ends; a caller's budget, deadline or horizon says it there), ``act(rows)``
    their actions (one forward pass per network over the rows it plays; an array over the whole batch),
    and ``step(rows, actions)`` applies them (and plays on, game by game through :func:`play_until`,
    whatever seats the caller's seat plan gives to agents).  Returns the number of ticks played."""
    t = 0
    while True:
        r = rows(t)
        if r is None or not len(r):
            return t
        step(r, act(r))
        t += 1


def play_to_seat(game: Any, seat: int, move: Callable[[int, List[int]], int], rules: EpisodeRules, team: int,
                 seen: Tuple[int, bool]) -> Tuple[float, Tuple[int, bool]]:
    """Play the other seats of ``game`` until ``seat`` must act or the episode ends (or reaches its action
    cap), through :func:`play_until`: ``move(player, legal)`` gives each of their actions.  ``seen`` is
    ``(rounds paid, final reward paid)`` of ``team``'s seat; returns its reward over those steps
    (:meth:`EpisodeRules.reward_since`, paid as each round ends) and the new ``seen``."""
    state = [0.0, seen[0], seen[1]]

    def stop() -> bool:
        done = rules.done(game)
        if done or game.rounds_finished > state[1]:
            r, state[1], state[2] = rules.reward_since(game, team, state[1], state[2])
            state[0] += r
        return done or game.action_count >= rules.max_actions

    play_until(game, seat.__eq__, move, stop=stop)
    return state[0], (state[1], state[2])


__all__ = ["ReferenceGame", "agent_action", "play_agent_move", "play_until", "play_batch", "play_to_seat", "view_of",
           "observation_of", "observe_into"]
