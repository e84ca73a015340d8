"""The batched samplers on the compiled core (``batched: {core: compiled}``): :class:`CompiledSampler`,
the :class:`~experiments.training.sampler.Sampler` whose games are rows of one
:class:`~handfoot_env.compiled.batch.CoreBatch` (docs/compiled_core.md).  ``make_sampler`` in
:mod:`experiments.training.sampler_group` chooses between the two.
"""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from experiments.training.sampler import Sampler
from experiments.training.selfplay import shaping_potential
from handfoot_env.actions import NUM_ACTIONS


class CompiledSampler(Sampler):
    """:class:`Sampler` on the compiled core (``batched: {core: compiled}``): the same games, random
    draws, samples and statistics, with the games held in one :class:`~handfoot_env.compiled.batch.CoreBatch`.

    It overrides only how games are read and stepped (the game loops are the :class:`Sampler`'s):
    after each action, each game's row of the batch's ``obs``, ``mask``, ``counts`` and ``legal_ids``
    is its player to act's, written by the kernel that applied it; a tick reads the network seats'
    observations from there and applies every game's action in one kernel call.  Heuristic seats get
    their :class:`~handfoot_env.view.SeatView` read from the row
    (``CompiledGame.seat_view``), and the centralised critic its state (``CompiledGame.encode_state``);
    the shaping potential is computed on a reference ``Game`` built from the row (``CompiledGame.reference``).
    """

    def _make_games(self, rules: Any, n: int) -> List[Any]:
        from handfoot_env.compiled import load
        compiled = load()
        b = self.batch = compiled.CoreBatch(rules, n)
        self._mask1 = np.zeros(NUM_ACTIONS, np.int8)
        return [compiled.CompiledGame(batch=b, index=i) for i in range(n)]

    def _step_one(self, i: int, a: int) -> None:
        """Apply ``a`` in game ``i`` (-1: none) and write its player to act's observation and mask."""
        if not self.batch.step_one(i, a):
            raise RuntimeError(f"compiled sampler: action {a} is not legal in game {i}")

    def _new_game(self, i: int) -> None:
        super()._new_game(i)
        self._step_one(i, -1)

    def _potential(self, g: Any, p: int) -> float:
        return shaping_potential(g.reference(), g.team_of[p], *self.shaping)

    # ------------------------------------------------------------------ the core (see Sampler)
    def _legal(self, i: int) -> List[int]:
        b = self.batch
        return b.legal_ids[i, :b.counts[i]].tolist()

    def _apply(self, i: int, p: int, a: int) -> None:
        self.games[i].applied(p, a)
        self._step_one(i, a)

    def _currents(self) -> List[int]:
        return self.batch.currents().tolist()

    def _observe(self, rows: Sequence[int], obs: np.ndarray, mask: np.ndarray) -> None:
        idx = np.asarray(rows, np.int64)
        obs[:] = self.batch.obs[idx]
        mask[:] = self.batch.mask[idx]

    def _observe_one(self, i: int, p: int, out: np.ndarray) -> None:
        self.games[i].observe(p, out, self._mask1)

    def _state(self, i: int) -> np.ndarray:
        return self.games[i].encode_state()

    def _step_all(self, players: List[int], acts: np.ndarray) -> None:
        for g, p, a in zip(self.games, players, acts.tolist()):
            g.applied(p, a)
        if self.batch.step(acts):
            raise RuntimeError("compiled sampler: an action outside its game's mask")


__all__ = ["CompiledSampler"]
