"""What the self-play games of every backend share: the opponent mixture, the seat plan and the
shaping potential.

Each training game seats the learning team against an opponent team drawn per game from the
config's ``opponents`` mixture (:class:`OpponentPool`): the current learner (``self``), a frozen
snapshot of it (``self_snapshots``) or an agent spec.  The SB3 env
(:mod:`experiments.training.sb3_env`), the batched games (:mod:`experiments.training.sampler`) and
the RLlib env (:mod:`experiments.training.rllib_env`) play them.  Who plays each seat of a game is
one :class:`SeatPlan` from :func:`plan_seats` (the learner, the current network, a frozen snapshot or
an agent), and the agents of the seats are kept by :class:`SeatAgents`, in all three.

Optional reward shaping (``shaping:``, off by default) adds ``Phi(s') - Phi(s)`` to a seat's reward,
with ``Phi`` = :func:`shaping_potential`; ``Phi`` is 0 once the game is over, so the shaping sums to
about zero over a game and only moves credit earlier.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Dict, Hashable, List, Mapping, Optional, Sequence

import numpy as np

from agents.registry import make_agent, side_specs
from experiments.training.config import SELF, SNAPSHOTS
from handfoot_env.engine import GAME_OVER, Game
from handfoot_env.observation import table_points


@dataclass
class OpponentPool:
    """Mixture of opponent kinds: ``self``, ``self_snapshots`` or make_agent specs, with weights."""

    mixture: Dict[str, float]

    def __post_init__(self):
        items = [(k, float(w)) for k, w in self.mixture.items() if float(w) > 0]
        if not items:
            raise ValueError("opponents: the mixture needs at least one kind with a positive weight")
        total = sum(w for _, w in items)
        self.kinds = [k for k, _ in items]
        self.probs = np.asarray([w / total for _, w in items], dtype=np.float64)

    def sample(self, rng: np.random.Generator) -> str:
        return self.kinds[int(rng.choice(len(self.kinds), p=self.probs))]


#: how a seat is played: by the learner (a learning seat), the current network, a frozen snapshot, an agent
LEARN, SELF_NET, SNAP, AGENT = 0, 1, 2, 3


@dataclass
class SeatPlan:
    """Who plays each seat of one game."""

    kind: str
    """The opponent kind drawn from the mixture: ``self``, ``self_snapshots`` or an agent spec."""
    roles: List[int]
    """Per seat: :data:`LEARN` (the learning team), :data:`SELF_NET` (the current network: ``self``, and
    ``self_snapshots`` before the first snapshot), :data:`SNAP` (the frozen :attr:`snapshot`) or
    :data:`AGENT` (the agent of spec :attr:`kind`)."""
    snapshot: Optional[int] = None
    """The index in the snapshot pool (oldest first; a league's pool: in its order) that the :data:`SNAP`
    seats play, else None."""


def plan_seats(kind: str, team_of: Sequence[int], learner_team: int, snapshots: int, sampling: str,
               rng: np.random.Generator, named: Optional[Mapping[str, int]] = None) -> SeatPlan:
    """The seats of a game whose opponents are of ``kind`` and whose learning team is ``learner_team``:
    with ``self_snapshots`` and a pool of ``snapshots`` (> 0), the frozen one the opponents play is the
    newest (``sampling`` ``latest``) or one drawn uniformly from ``rng`` (one draw); nothing else draws.
    ``named``: kinds that are networks of the pool by name (a league's members,
    :mod:`experiments.training.league`): such a kind's seats play the pool's entry ``named[kind]``."""
    if named and kind in named:
        return SeatPlan(kind, [LEARN if t == learner_team else SNAP for t in team_of], int(named[kind]))
    snap = None
    if kind == SNAPSHOTS and snapshots:
        snap = snapshots - 1 if sampling == "latest" else int(rng.integers(snapshots))
    other = SELF_NET if kind == SELF or (kind == SNAPSHOTS and snap is None) else SNAP if kind == SNAPSHOTS else AGENT
    return SeatPlan(kind, [LEARN if t == learner_team else other for t in team_of], snap)


class SeatAgents:
    """The agents of the seats a plan gives to an agent spec: one object per key (a game slot, a seat and
    a spec), built once with a seed from the game's generator and reset with another every game.  A team
    spec ``team(A,B)`` gives each seat its member (:func:`agents.registry.side_specs`: A in a team's first
    seat, B in its second)."""

    def __init__(self) -> None:
        self._agents: Dict[Hashable, Any] = {}

    def seat(self, key: Hashable, spec: str, seat: int, rules: Any, rng: np.random.Generator) -> Any:
        a = self._agents.get(key)
        if a is None:
            member = side_specs(spec, rules)[seat // rules.teams]
            a = self._agents[key] = make_agent(member, int(rng.integers(2 ** 31)))
        a.reset(seat, rules, int(rng.integers(2 ** 31)))
        return a


def shaping_potential(game: Game, team: int, books: float, points: float) -> float:
    """``Phi`` of ``team``: ``books`` x its books this round + ``points`` x its table points / 1000
    (0 when both weights are 0 or the game is over)."""
    if (not books and not points) or game.phase == GAME_OVER:
        return 0.0
    return books * sum(game.book_counts[team]) + points * table_points(game, team) / 1000.0


def random_opponent(game: Game, seat: int, legal: List[int], rng: random.Random) -> int:
    """Uniform random legal play."""
    return legal[rng.randrange(len(legal))]


__all__ = ["OpponentPool", "SeatPlan", "plan_seats", "SeatAgents", "LEARN", "SELF_NET", "SNAP", "AGENT",
           "shaping_potential", "random_opponent"]
