"""The learner's side of the samplers: one :class:`SamplerGroup` over any transport.

A training run of ``backend: batched`` or ``dmc`` has one learner and ``batched.samplers``
samplers (:class:`experiments.training.sampler.Sampler`, or its compiled-core subclass), each
playing its share of ``batched.games`` games.  The layout is DouZero's and IMPALA's: samplers
play, one learner updates, the learner's weights go out once per update and rollouts come back
as NumPy arrays.  Where the samplers run is the transport's business:

* :class:`LocalTransport`: one sampler in the learner's own process (``samplers: 0``);
* :class:`ProcessTransport`: ``multiprocessing`` processes on this machine (the default);
* :class:`experiments.training.ray_samplers.RayTransport`: plain Ray actors, on a private local
  Ray or a cluster (``handfoot train CONFIG --ray [ADDRESS]``, ``batched.ray``), placed by Ray.

Everything else is the group's, whichever the transport: the seeds and game slots of each
sampler (``SeedSequence(seed)``, one child per sampler), the share of a rollout each plays,
joining their arrays (:func:`merge_rollouts`), rollouts in flight while the learner updates
(``batched.pipeline``, at most ``batched.max_lag`` of them) and replacing a sampler that died.
So the same config and seed give the same rollouts, bit for bit, on every transport.

**Faults.**  When a sampler dies (its process or actor is killed, its node is lost), the
transport raises :class:`SamplerLost`; the group starts a replacement (a fresh sampler with a seed
of its own, derived from the run's seed, the sampler's index and how many replacements it has had,
and game numbers that do not collide with its predecessor's), hands it the current snapshot pool
and plays the lost share of every rollout the dead one had in flight again, with the weights of
each request.  The run then ends with the learner decisions it was asked for; one log line says what
happened.  A lost connection to the whole transport (a Ray head) is :class:`SamplersLost`: the
trainer writes a checkpoint and stops with one line (``--resume`` continues from it).
"""
from __future__ import annotations

import collections
import multiprocessing as mp
import os
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence

import numpy as np
import torch as th

from experiments.processes import worker_init
from experiments.training.compiled_sampler import CompiledSampler
from experiments.training.sampler import Sampler

#: replacements of one sampler, for one rollout, before the group gives up
MAX_REPLACEMENTS = 3
#: game numbers of a replacement sampler start at ``generation << EPISODE_SHIFT``
EPISODE_SHIFT = 32


#: the sampler class of each core
SAMPLERS = {"reference": Sampler, "compiled": CompiledSampler}


def make_sampler(core: Optional[str] = None, **kwargs: Any) -> Sampler:
    """The sampler of ``core`` (:data:`SAMPLERS`: reference, compiled, or None / auto: compiled when
    Numba is installed) built with ``kwargs``."""
    from handfoot_env.compiled import resolve_core
    return SAMPLERS[resolve_core(core)](**kwargs)


class SamplerLost(RuntimeError):
    """One sampler died (its process or actor is gone): the group replaces it."""


class SamplersLost(ConnectionError):
    """The transport itself is gone (a Ray head or cluster), or a sampler keeps dying: the run cannot
    go on (the trainer writes a checkpoint and stops with one line)."""


# =========================================================================== transports
class LocalTransport:
    """One sampler, in the learner's process: a request is played when its result is asked for."""

    name = "in-process"

    def __init__(self) -> None:
        self.samplers: Dict[int, Any] = {}

    def start(self, j: int, kwargs: Dict[str, Any]) -> None:
        self.samplers[j] = make_sampler(**kwargs)

    def put(self, obj: Any) -> Any:
        return obj

    def send(self, j: int, decisions: int, weights: Any, pool: Any) -> Any:
        return (j, decisions, weights, pool)

    def ready(self, handle: Any) -> bool:
        return True

    def receive(self, handle: Any) -> Dict[str, Any]:
        j, decisions, weights, pool = handle
        return self.samplers[j].rollout(decisions, weights, pool)

    def describe(self) -> List[str]:
        return []

    def close(self) -> None:
        self.samplers.clear()


def _sampler_worker(conn: Any, kwargs: Dict[str, Any], parent_pid: int) -> None:
    worker_init(parent_pid)             # Ctrl-C is the learner's to handle; exit if the learner dies
    th.set_num_threads(1)               # the sampler's matrices are small: one thread, no spinning
    sampler = make_sampler(**kwargs)
    while True:
        msg = conn.recv()
        if msg is None:
            break
        decisions, learner, snapshots = msg
        try:
            conn.send(sampler.rollout(decisions, learner, snapshots))
        except Exception as e:  # noqa: BLE001 - the learner re-raises it with the worker's message
            conn.send(RuntimeError(f"sampler process: {type(e).__name__}: {e}"))


class ProcessTransport:
    """Sampler processes on this machine, one pipe each; a sampler plays its requests in order."""

    name = "process"

    def __init__(self) -> None:
        self.conns: Dict[int, Any] = {}
        self.procs: Dict[int, Any] = {}
        self.ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")

    def start(self, j: int, kwargs: Dict[str, Any]) -> None:
        old = self.procs.pop(j, None)
        if old is not None:
            self.conns.pop(j).close()
            if old.is_alive():
                old.kill()
            old.join(timeout=5)
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_sampler_worker, daemon=True, args=(child, kwargs, os.getpid()),
                                name=f"handfoot-sampler-{j}")
        proc.start()
        child.close()
        self.conns[j], self.procs[j] = parent, proc

    def put(self, obj: Any) -> Any:
        return obj

    def send(self, j: int, decisions: int, weights: Any, pool: Any) -> Any:
        try:
            self.conns[j].send((decisions, weights, pool))
        except (OSError, EOFError) as e:          # BrokenPipeError: the process is gone
            raise SamplerLost(self._why(j, e)) from None
        return j

    def ready(self, handle: Any) -> bool:
        try:
            return bool(self.conns[handle].poll())
        except (OSError, EOFError):
            return True                            # dead: receive says so at once

    def receive(self, handle: Any) -> Dict[str, Any]:
        try:
            r = self.conns[handle].recv()
        except (OSError, EOFError) as e:
            raise SamplerLost(self._why(handle, e)) from None
        if isinstance(r, Exception):
            raise r
        return r

    def _why(self, j: int, e: BaseException) -> str:
        proc = self.procs[j]
        proc.join(timeout=1)
        code = proc.exitcode
        how = f"exit code {code}" if code is None or code >= 0 else f"signal {-code}"
        return f"sampler process {j} (pid {proc.pid}) is gone ({how}; {type(e).__name__})"

    def describe(self) -> List[str]:
        return []

    def close(self) -> None:
        for conn in self.conns.values():
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for proc in self.procs.values():
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
        self.conns, self.procs = {}, {}


# =========================================================================== the group
class _Request:
    """One rollout asked of every sampler: each one's share and handle, and what it was sent."""

    def __init__(self, decisions: int, shares: List[int], weights: Any, pool_sent: Any, pool_now: Any):
        self.decisions = decisions
        self.shares = shares
        self.weights = weights            # the transport's handle of the weights (Ray: an object ref)
        self.pool_sent = pool_sent        # the snapshot pool sent with it (None: unchanged)
        self.pool_now = pool_now          # the pool current when it was made (a replacement needs it)
        self.handles: List[Any] = []
        self.number = 0                   # requests of the group so far, when it was made


class SamplerGroup:
    """``processes`` samplers (0: one sampler in this process) sharing ``games`` games, on
    ``transport`` (default: :class:`ProcessTransport`, or :class:`LocalTransport` for 0).

    :meth:`next_rollout` is what the trainer calls; :meth:`request` / :meth:`result` start a
    rollout and wait for the oldest one in flight.  ``log``: where one-line notices go (a sampler
    replaced)."""

    def __init__(self, processes: int, games: int, seed: int, transport: Any = None, max_lag: int = 1,
                 log: Optional[Callable[[str], None]] = None, **kwargs: Any):
        self.processes = int(processes)
        self.max_lag = max(1, int(max_lag))
        self.seed = int(seed)
        self.log = log or (lambda msg: None)
        k = max(1, self.processes)
        seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(self.seed).spawn(k)]
        sizes = [games // k + (1 if j < games % k else 0) for j in range(k)]
        self.parts = [dict(kwargs, games=sizes[j], seed=seeds[j], slot_offset=sum(sizes[:j])) for j in range(k)]
        self.generation = [0] * k
        self.replaced = 0                           # samplers replaced in this group's life
        if transport is None:
            transport = LocalTransport() if self.processes == 0 else ProcessTransport()
        self.transport = transport
        self.queue: Deque[_Request] = collections.deque()
        self.pool: Any = None                       # the transport's handle of the current snapshot pool
        self.requests = 0
        for j, part in enumerate(self.parts):
            transport.start(j, part)

    @classmethod
    def for_config(cls, cfg: Any, seed: int, transport: Any = None, log: Optional[Callable[[str], None]] = None,
                   games: Optional[int] = None, opponents: Optional[Dict[str, float]] = None,
                   **options: Any) -> "SamplerGroup":
        """The samplers of a training config's ``batched:`` section and games (rules, opponents,
        rewards); ``options``: the learner's own settings (:meth:`RolloutLearner.sampler_options`);
        ``transport``: where they run (:func:`experiments.training.ray_samplers.transport_for`);
        ``games``, ``opponents``: other than the config's (a league's exploiters)."""
        b = cfg.batched
        return cls(int(b.samplers), int(games or b.games), seed, transport=transport, max_lag=int(b.max_lag),
                   log=log, rules=cfg.rules, opponents=dict(opponents or cfg.opponents), reward=cfg.reward,
                   reward_scale=cfg.reward_scale, max_actions=cfg.max_actions,
                   snapshot_sampling=cfg.snapshots.sampling, core=b.core, **options)

    @property
    def size(self) -> int:
        return len(self.parts)

    # ---------------------------------------------------------------- requests
    def request(self, decisions: int, learner: Dict[str, Any], snapshots: Optional[Sequence[Dict[str, Any]]]) -> None:
        """Start a rollout of ``decisions`` learner decisions played with ``learner``'s weights
        (``snapshots``: the new pool, or None when it did not change)."""
        k = self.size
        shares = [decisions // k + (1 if j < decisions % k else 0) for j in range(k)]
        t = self.transport
        weights = t.put(learner)
        sent = None
        if snapshots is not None:       # a list of weights, or a league's pool (a mapping) as it is
            sent = self.pool = t.put(snapshots if isinstance(snapshots, dict) else list(snapshots))
        req = _Request(decisions, shares, weights, sent, self.pool)
        self.requests += 1
        req.number = self.requests
        for j, share in enumerate(shares):
            req.handles.append(self._send(j, share, weights, sent, req))
        self.queue.append(req)

    def _send(self, j: int, share: int, weights: Any, pool: Any, req: _Request) -> Any:
        try:
            return self.transport.send(j, share, weights, pool)
        except SamplerLost as e:
            return self._replace(j, req, str(e))

    def result(self) -> Dict[str, Any]:
        """The oldest rollout in flight, joined from every sampler's share (waits for it)."""
        req = self.queue.popleft()
        parts = []
        for j in range(self.size):
            tries = 0
            while True:
                try:
                    parts.append(self.transport.receive(req.handles[j]))
                    break
                except SamplerLost as e:
                    tries += 1
                    if tries > MAX_REPLACEMENTS:
                        raise SamplersLost(f"sampler {j} was lost {tries} times in one rollout: {e}") from None
                    req.handles[j] = self._replace(j, req, str(e))
        return merge_rollouts(parts)

    def _replace(self, j: int, req: _Request, why: str) -> Any:
        """Start a new sampler ``j`` and send it its share of ``req`` and of every other request it
        had in flight, oldest first; the handle of ``req``'s share (the others' are updated)."""
        self.generation[j] += 1
        self.replaced += 1
        gen = self.generation[j]
        seed = int(np.random.SeedSequence([self.seed, j, gen]).generate_state(1)[0])
        part = dict(self.parts[j], seed=seed, episode_base=gen << EPISODE_SHIFT)
        self.transport.start(j, part)
        replay = sorted({id(r): r for r in list(self.queue) + [req]}.values(), key=lambda r: r.number)
        self.log(f"samplers: {why}; replaced by a new sampler (seed {seed}); "
                 f"{sum(r.shares[j] for r in replay):,} decisions of its share played again")
        first = None
        for n, r in enumerate(replay):
            h = self.transport.send(j, r.shares[j], r.weights, r.pool_now if n == 0 else r.pool_sent)
            if r is req:
                first = h
            else:
                r.handles[j] = h
        return first

    # ---------------------------------------------------------------- what the trainer calls
    def next_rollout(self, decisions: int, weights: Dict[str, Any], snapshots: Optional[List[Dict[str, Any]]],
                     pipeline: bool, remaining: Optional[int] = None) -> Dict[str, Any]:
        """The next rollout of ``decisions`` learner decisions to learn from.  ``snapshots``: the
        pool when it changed, else None.  Synchronous: played now with ``weights``.  Pipelined: the
        oldest one in flight (the first call plays one first), and new ones start now with
        ``weights`` until ``max_lag`` are in flight or they cover the ``remaining`` decisions: a
        rollout is played by weights at most ``max_lag`` updates old."""
        if not pipeline:
            self.request(decisions, weights, snapshots)
            return self.result()
        if not self.queue:
            self.request(decisions, weights, snapshots)
            snapshots = None                        # the pool travels once
        batch = self.result()
        left = None if remaining is None else remaining - int(batch["decisions"])
        while len(self.queue) < self.max_lag and (left is None or self.in_flight < left):
            self.request(decisions, weights, snapshots)
            snapshots = None
        return batch

    @property
    def in_flight(self) -> int:
        """Learner decisions asked for and not yet returned."""
        return sum(r.decisions for r in self.queue)

    def busy(self) -> bool:
        """Whether a sampler is still playing a rollout in flight (the learner then keeps the second
        core free for it)."""
        return any(not self.transport.ready(h) for r in self.queue for h in r.handles)

    def describe(self) -> List[str]:
        """Lines on where the samplers run (Ray: nodes and resources); empty on this machine."""
        return self.transport.describe()

    def close(self) -> None:
        self.queue.clear()
        self.transport.close()


def merge_rollouts(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Concatenate rollouts of several samplers (row links shifted to the joined rows)."""
    if len(parts) == 1:
        return parts[0]
    out: Dict[str, Any] = {}
    offset = 0
    nexts = []
    for part in parts:
        nx = part["next"].copy()
        nx[nx >= 0] += offset
        nexts.append(nx)
        offset += len(part["act"])
    for key in parts[0]:
        if key == "next":
            out[key] = np.concatenate(nexts)
        elif key in ("decisions", "actions"):
            out[key] = sum(p[key] for p in parts)
        elif key == "games":
            out[key] = [g for p in parts for g in p[key]]
        else:
            out[key] = np.concatenate([p[key] for p in parts])
    return out


__all__ = ["SamplerGroup", "make_sampler", "SAMPLERS",
           "LocalTransport", "ProcessTransport", "SamplerLost", "SamplersLost", "merge_rollouts",
           "MAX_REPLACEMENTS"]
