"""The batched samplers on the compiled core (``batched: {core: compiled}``): :class:`CompiledSampler`,
the :class:`~experiments.training.sampler.Sampler` whose games are rows of one
:class:`~handfoot_env.compiled.batch.CoreBatch` (docs/compiled_core.md).  ``make_sampler`` in
:mod:`experiments.training.sampler` chooses between the two.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from experiments.training.sampler import AGENT, LEARN, SELF_NET, Sampler
from experiments.training.selfplay import random_opponent, shaping_potential
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.compiled import layout
from handfoot_env.engine import GAME_OVER
from handfoot_env.observation import encode_state

L_CURRENT, L_PHASE, L_ACOUNT, L_NRS = layout.CURRENT, layout.PHASE, layout.ACOUNT, layout.NRS


class CompiledSampler(Sampler):
    """:class:`Sampler` on the compiled core (``batched: {core: compiled}``): the same games, random
    draws, samples and statistics, with the games held in one :class:`~handfoot_env.compiled.batch.CoreBatch`.

    After :meth:`_advance`, each game's row of the batch's ``obs``, ``mask``, ``counts`` and
    ``legal_ids`` is its player to act's, written by the kernel that applied the last action; a tick
    reads the network seats' observations from there and applies every game's action in one kernel
    call.  Heuristic seats get their :class:`~handfoot_env.view.SeatView` read from the row
    (``CompiledGame.seat_view``); the centralised critic's state and the shaping potential are computed
    on a reference ``Game`` built from the row (``CompiledGame.reference``).
    """

    def _make_games(self, rules: Any, n: int) -> List[Any]:
        from handfoot_env.compiled import load
        compiled = load()
        b = self.batch = compiled.CoreBatch(rules, n)
        self._acts = np.full(n, -2, np.int64)
        self._one = np.zeros(1, np.int64)
        self._rows = [(b.S[i:i + 1], b.obs[i:i + 1], b.mask[i:i + 1], b.counts[i:i + 1], b.legal_ids[i:i + 1])
                      for i in range(n)]
        self._mask1 = np.zeros(NUM_ACTIONS, np.int8)
        return [compiled.CompiledGame(batch=b, index=i) for i in range(n)]

    def _step_one(self, i: int, a: int) -> None:
        """Apply ``a`` in game ``i`` (-1: none) and write its player to act's observation and mask."""
        from handfoot_env.compiled.encode import step_batch
        S, obs, mask, counts, legal_ids = self._rows[i]
        b = self.batch
        self._one[0] = a
        if step_batch(S, b.R, self._one, obs, mask, counts, legal_ids, b._legal, b.ro, b.wo):
            raise RuntimeError(f"compiled sampler: action {a} is not legal in game {i}")

    def _new_game(self, i: int) -> None:
        super()._new_game(i)
        self._step_one(i, -1)

    def _potential(self, g: Any, p: int) -> float:
        return shaping_potential(g.reference(), g.team_of[p], *self.shaping)

    def _add_row(self, i: int, p: int, legal: Optional[List[int]]) -> int:
        g = self.games[i]
        buf = self.buf
        k = buf.n
        buf.n += 1
        g.observe(p, buf.obs[k], self._mask1)
        if buf.state is not None:
            buf.state[k] = encode_state(g.reference())
        buf.rew[k] = 0.0
        buf.done[k] = False
        buf.next[k] = -1
        buf.open[k] = False
        buf.trace[k] = (self.slot_offset + i, self.episode[i], p, self.dec[i][p])
        buf.round[k] = g.rounds_finished
        return k

    def _advance(self, i: int) -> None:
        g = self.games[i]
        b = self.batch
        s = b.S[i]
        role, player = self.role[i], self.player[i]
        n = 0
        while True:
            if s[L_NRS] > self.rounds_seen[i]:
                self._round_rewards(i)
            if s[L_PHASE] == GAME_OVER or s[L_ACOUNT] >= self.max_actions:
                self._end_game(i, truncated=s[L_PHASE] != GAME_OVER)
                self._new_game(i)
                continue
            p = int(s[L_CURRENT])
            if role[p] != AGENT:
                break
            agent = player[p]
            if agent is None:
                a = random_opponent(g, p, b.legal_ids[i, :b.counts[i]].tolist(), self.py_rng)
            else:
                view = g.seat_view(p, b.legal_ids[i, :b.counts[i]].tolist())
                obs = None
                if agent.needs_observation:
                    obs = {"observation": b.obs[i].copy(), "action_mask": b.mask[i].copy()}
                a = int(agent.act(obs, view))
                if a not in view.legal_actions:
                    g.step(a)                    # IllegalActionError naming the reason
            g.applied(p, a)
            self._step_one(i, a)
            n += 1
        self.actions += n

    def _tick(self) -> int:
        games = self.games
        b = self.batch
        buf = self.buf
        n = len(games)
        buf.reserve((1 + self.n_seats) * n)
        k0 = buf.n
        cur = b.S[:, L_CURRENT].tolist()
        learn: List[int] = []
        other: Dict[int, Tuple[Any, List[int]]] = {}
        phi_on = any(self.shaping)
        with_state = buf.state is not None
        for i, p in enumerate(cur):
            r = self.role[i][p]
            if r == LEARN:
                k = buf.n
                buf.n += 1
                if with_state:
                    buf.state[k] = encode_state(games[i].reference())
                buf.rew[k] = 0.0
                buf.done[k] = False
                buf.next[k] = -1
                buf.open[k] = False
                buf.trace[k] = (self.slot_offset + i, self.episode[i], p, self.dec[i][p])
                self._link_row(buf, i, p, k, games[i], phi_on)
                learn.append(i)
            else:
                pol = self.learner if r == SELF_NET else self.player[i][p]
                other.setdefault(id(pol), (pol, []))[1].append(i)
        acts = self._acts
        m = len(learn)
        if m:
            idx = np.asarray(learn, np.int64)
            buf.obs[k0:k0 + m] = b.obs[idx]
            buf.mask[k0:k0 + m] = b.mask[idx]
            buf.round[k0:k0 + m] = b.S[idx, L_NRS]
            a, logp = self.learner.choose(buf.obs[k0:k0 + m], buf.mask[k0:k0 + m], self.rng)
            buf.act[k0:k0 + m] = a
            buf.logp[k0:k0 + m] = logp
            acts[idx] = a
        for pol, rows in other.values():
            idx = np.asarray(rows, np.int64)
            a, _ = pol.choose(b.obs[idx], b.mask[idx].astype(bool), self.rng)
            acts[idx] = a
        for i, p in enumerate(cur):
            games[i].applied(p, int(acts[i]))
        if b.step(acts):
            raise RuntimeError("compiled sampler: an action outside its game's mask")
        self.actions += n
        for i in range(n):
            self._advance(i)
        return m


__all__ = ["CompiledSampler"]
