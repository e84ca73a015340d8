"""What the self-play games of every backend share: the opponent mixture and the shaping potential.

Each training game seats the learning team against an opponent team drawn per game from the
config's ``opponents`` mixture (:class:`OpponentPool`): the current learner (``self``), a frozen
snapshot of it (``self_snapshots``) or an agent spec.  The SB3 env
(:mod:`experiments.training.sb3_env`), the batched games (:mod:`experiments.training.sampler`) and
the RLlib env (:mod:`experiments.training.rllib_env`) play them.

Optional reward shaping (``shaping:``, off by default) adds ``Phi(s') - Phi(s)`` to a seat's reward,
with ``Phi`` = :func:`shaping_potential`; ``Phi`` is 0 once the game is over, so the shaping sums to
about zero over a game and only moves credit earlier.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Dict, List

import numpy as np

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


def shaping_potential(game: Game, team: int, books: float, points: float) -> float:
    """``Phi`` of ``team``: ``books`` x its books this round + ``points`` x its table points / 1000
    (0 when both weights are 0 or the game is over)."""
    if (not books and not points) or game.phase == GAME_OVER:
        return 0.0
    return books * sum(game.book_counts[team]) + points * table_points(game, team) / 1000.0


def random_opponent(game: Game, seat: int, legal: List[int], rng: random.Random) -> int:
    """Uniform random legal play."""
    return legal[rng.randrange(len(legal))]


__all__ = ["OpponentPool", "shaping_potential", "random_opponent"]
