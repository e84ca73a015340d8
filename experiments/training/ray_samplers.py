"""Samplers as Ray actors: the transport of :class:`~experiments.training.sampler_group.SamplerGroup`
for ``handfoot train CONFIG --ray [ADDRESS]`` (``batched.ray``).

Each sampler is a plain Ray actor (:class:`SamplerActor`, ``batched.cpus_per_sampler`` CPUs,
placed on any node by Ray) that builds the same :class:`~experiments.training.sampler.Sampler` a
sampler process would, from the same arguments and seed.  Per update the learner puts its weights
in the object store once (``ray.put``) and every actor's rollout call takes the reference, so a
broadcast costs one copy per node; the snapshot pool travels the same way, only when it changed.
Rollouts come back as NumPy arrays (Ray's zero-copy serialisation of arrays).

A dead actor (``ray.exceptions.RayActorError``: the actor was killed, its worker crashed or its node
was lost) is :class:`~experiments.training.sampler_group.SamplerLost`: the group starts a
replacement.  A Ray that cannot be reached any more (its head is lost) is
:class:`~experiments.training.sampler_group.SamplersLost`.  ``close`` kills the actors and shuts
down a Ray this run started: nothing is left running after the run.  Each actor's output goes to
Ray's log folder of its worker (``/tmp/ray/session_latest/logs`` on its node), and each actor
reports its node, process and the time it spent playing (:meth:`SamplerActor.info`).
"""
from __future__ import annotations

import math
import os
import socket
import time
from typing import Any, Dict, List, Optional

import numpy as np

from experiments.training.sampler_group import SamplerLost, SamplersLost


#: how long the run's first log lines wait for the actors to say where they run
DESCRIBE_WAIT_S = 60


class SamplerActor:
    """One sampler in a Ray worker process (wrapped by ``ray.remote`` when the transport starts)."""

    def __init__(self, kwargs: Dict[str, Any], index: int):
        import torch as th

        from experiments.training.sampler_group import make_sampler
        th.set_num_threads(1)               # the sampler's matrices are small: one thread, no spinning
        self.index = index
        self.sampler = make_sampler(**kwargs)
        self.games = int(kwargs["games"])
        self.play_s = 0.0
        self.decisions = 0

    def rollout(self, decisions: int, weights: Dict[str, Any], pool: Optional[List[Dict[str, Any]]]) -> Dict[str, Any]:
        t0 = time.process_time()
        out = self.sampler.rollout(decisions, weights, pool)
        self.play_s += time.process_time() - t0
        self.decisions += int(out["decisions"])
        return out

    def info(self) -> Dict[str, Any]:
        """Where this sampler runs and what it has played: node, pid, games, CPU seconds, decisions."""
        return {"index": self.index, "node": socket.gethostname(), "pid": os.getpid(), "games": self.games,
                "cpu_s": self.play_s, "decisions": self.decisions}


class RayTransport:
    """Samplers as Ray actors on ``address`` (None or ``local``: a private local Ray with
    ``num_cpus`` CPUs, default all of this machine's; ``RAY_ADDRESS`` is read when no address is
    given), each with ``cpus_per_sampler`` CPUs."""

    name = "Ray actor"

    def __init__(self, address: Optional[str] = None, cpus_per_sampler: float = 1.0, num_cpus: Optional[int] = None,
                 quiet: bool = True, samplers: int = 1):
        from experiments.ray_cluster import init_ray
        # a private local Ray declares at least the CPUs its actors reserve (as many sampler processes
        # as that would share this machine's cores too); a cluster's nodes declare their own
        need = math.ceil(samplers * float(cpus_per_sampler))
        self.started = init_ray(address, num_cpus=max(num_cpus or os.cpu_count() or 1, need), quiet=quiet)
        import ray
        self.ray = ray
        self.cpus = float(cpus_per_sampler)
        have = ray.cluster_resources().get("CPU", 0)
        self.notes = ([] if have >= need else
                      [f"Ray: the cluster has {have:g} CPUs and the {samplers} sampler actors reserve {need}: "
                       "the others wait until CPUs are free (more nodes, or fewer batched.samplers)"])
        self.remote = ray.remote(SamplerActor)
        self.actors: Dict[int, Any] = {}

    def start(self, j: int, kwargs: Dict[str, Any]) -> None:
        old = self.actors.pop(j, None)
        if old is not None:
            self.ray.kill(old, no_restart=True)
        self.actors[j] = self.remote.options(num_cpus=self.cpus, max_restarts=0, max_task_retries=0).remote(kwargs, j)

    def put(self, obj: Any) -> Any:
        return self.ray.put(obj) if obj is not None else None

    def send(self, j: int, decisions: int, weights: Any, pool: Any) -> Any:
        return self.actors[j].rollout.remote(decisions, weights, pool)

    def ready(self, handle: Any) -> bool:
        done, _ = self.ray.wait([handle], num_returns=1, timeout=0)
        return bool(done)

    def receive(self, handle: Any) -> Dict[str, Any]:
        ex = self.ray.exceptions
        try:
            out = self.ray.get(handle)
            # arrays read from the object store are read-only views: the learner gets its own copy
            return {k: (v.copy() if isinstance(v, np.ndarray) and not v.flags.writeable else v) for k, v in out.items()}
        except ex.RayActorError as e:           # the actor died (killed, crashed, node lost)
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise SamplerLost(f"sampler actor lost ({type(e).__name__}: {first[:160]})") from None
        except ex.RayTaskError as e:             # the sampler raised: the game's own error
            cause = e.cause if getattr(e, "cause", None) is not None else e
            raise RuntimeError(f"sampler actor: {type(cause).__name__}: {cause}") from None
        except (ex.RaySystemError, ex.GetTimeoutError, ConnectionError) as e:
            raise SamplersLost(f"Ray is not reachable ({type(e).__name__}: {e})") from None

    def describe(self) -> List[str]:
        """One line on the cluster and one per actor: node, pid, games."""
        ray = self.ray
        res = ray.cluster_resources()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        refs = [a.info.remote() for a in self.actors.values()]
        done, waiting = ray.wait(refs, num_returns=len(refs), timeout=DESCRIBE_WAIT_S)
        lines = [f"Ray: {len(nodes)} node(s), {res.get('CPU', 0):g} CPUs, {res.get('GPU', 0):g} GPUs; "
                 f"{len(self.actors)} sampler actor(s) of {self.cpus:g} CPU"]
        try:
            infos = sorted(ray.get(done), key=lambda i: i["index"])
        except ray.exceptions.RayActorError:          # an actor died at its start: the group replaces it
            infos = []
        lines += [f"  sampler {i['index']}: node {i['node']}, pid {i['pid']}, {i['games']} games" for i in infos]
        if waiting:
            lines.append(f"  {len(waiting)} sampler actor(s) not started after {DESCRIBE_WAIT_S} s (waiting for CPUs?)")
        return self.notes + lines

    def pids(self) -> List[int]:
        """The actors' process ids (for fault-injection tests and monitoring)."""
        return [i["pid"] for i in self.ray.get([a.info.remote() for a in self.actors.values()])]

    def close(self) -> None:
        for a in self.actors.values():
            try:
                self.ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        self.actors = {}
        if self.started:
            from experiments.ray_cluster import shutdown_ray
            shutdown_ray()
            self.started = False


def transport_for(cfg: Any) -> Optional[RayTransport]:
    """The transport of a training config's samplers: Ray actors when ``batched.ray`` is set, else
    None (the group's default: processes on this machine, or the learner's own process)."""
    b = cfg.batched
    if b.ray is None:
        return None
    return RayTransport(None if b.ray == "local" else b.ray, b.cpus_per_sampler, samplers=int(b.samplers))


__all__ = ["RayTransport", "SamplerActor", "transport_for"]
