"""What a training run on many machines would reach, from costs measured on this one.

    python -m experiments.bench.scaling                                   # configs/train/quickstart.yaml
    python -m experiments.bench.scaling --out docs/results/scaling/quickstart.json --markdown

Measured here, in this process, on the config's core (``batched.samplers: 0``, one thread):

* **sampler CPU per decision**: CPU seconds (``time.process_time``) a sampler spends per learner
  decision, over ``--rollouts`` rollouts of the config's size after one to warm up (opponents,
  snapshots and games as the config trains);
* **learner time per update**: seconds of one PPO update of one rollout on this CPU, one thread
  (``parallel_update: false``), median of ``--repeats``: the thread's CPU time, which is its wall
  time on an idle core and does not count time lost to other work on a busy machine (on a GPU: wall
  time);
* **bytes**: of one rollout as it comes back to the learner (its arrays) and of one weight
  broadcast (the actor's arrays, pickled as Ray's object store holds them).

The model (a pipelined run, so playing and updating overlap): learner decisions/s is the least of
what the samplers play (``cores / sampler CPU per decision``), what the learner updates on
(``rollout / update time``) and what the learner's network link takes in (``link bytes/s / bytes
per decision``, weight broadcasts included).  A GPU learner's update time is not measured here (no
GPU on this machine): it is the ``--gpu-step-ms`` assumption per minibatch step (launch-bound for
networks this small), named as such in every output; run this module with ``--set
batched.device=cuda`` on a machine with one to measure it instead.
"""
from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from experiments.config import ConfigError, seed_arg

CORES = (2, 8, 32, 128)
LINK_GBIT = 10.0          # the learner node's network link (Gbit/s) in the model


def measure(config: str, overrides: List[str], seed: int, rollouts: int, repeats: int) -> Dict[str, Any]:
    """The measured costs of ``config`` (see the module docstring)."""
    import torch as th

    from experiments.training.batched_ppo import BatchedPPO
    from experiments.training.config import load_train_config
    from experiments.training.learner import RunContext
    from experiments.training.sampler_group import SamplerGroup
    from handfoot_env.compiled import resolve_core
    cfg = load_train_config(config, ["backend=batched", f"seed={seed}"] + overrides +
                            ["batched.samplers=0", "batched.pipeline=false", "batched.parallel_update=false"])
    th.set_num_threads(1)
    learner = BatchedPPO(cfg)
    learner.setup(RunContext(seed=seed), None)
    group = SamplerGroup.for_config(cfg, seed, **learner.sampler_options())
    size = learner.rollout_size
    pool = [learner.actor()]
    batch = group.next_rollout(size, learner.actor(), pool, False)          # warm-up (and compile)
    learner.update(batch)
    cpu, decisions = 0.0, 0
    for _ in range(rollouts):
        t = time.process_time()
        batch = group.next_rollout(size, learner.actor(), None, False)
        cpu += time.process_time() - t
        decisions += int(batch["decisions"])
        learner.update(batch)
    group.close()
    updates, walls = [], []
    for _ in range(repeats):
        t, w = time.thread_time(), time.perf_counter()
        learner.update(batch)
        if learner.device.type == "cuda":
            th.cuda.synchronize()
        walls.append(time.perf_counter() - w)
        updates.append(time.thread_time() - t if learner.device.type == "cpu" else walls[-1])
    arrays = sum(v.nbytes for v in batch.values() if hasattr(v, "nbytes"))
    steps = cfg.ppo.n_epochs * -(-int((~batch["open"]).sum()) // cfg.ppo.batch_size)
    return {"config": config, "overrides": overrides, "core": resolve_core(cfg.batched.core),
            "learner_device": str(learner.device), "rollout_decisions": size,
            "minibatch_steps_per_update": int(steps),
            "sampler_cpu_ms_per_decision": 1000 * cpu / decisions, "sampler_decisions_measured": decisions,
            "update_s": statistics.median(updates), "update_s_all": updates, "update_wall_s_all": walls,
            "rollout_bytes_per_decision": arrays / len(batch["act"]),
            "weights_bytes": len(pickle.dumps(learner.actor(), protocol=5))}


def steady_rates(config: str, overrides: List[str], seed: int, updates: int, repeats: int) -> Dict[str, Any]:
    """Learner decisions/s of the config's training loop (rollouts and PPO updates, pipelined as the
    config says) once started, with the samplers as processes and as Ray actors on a private local
    Ray, alternating ``repeats`` times: ``updates`` timed iterations after two to warm up, so
    starting and stopping Ray (seconds, and much longer on a busy machine) is left out."""
    import torch as th

    from experiments.training.batched_ppo import BatchedPPO
    from experiments.training.config import load_train_config
    from experiments.training.learner import RunContext
    from experiments.training.ray_samplers import RayTransport
    from experiments.training.sampler_group import SamplerGroup
    cfg = load_train_config(config, ["backend=batched", f"seed={seed}"] + overrides)
    th.set_num_threads(1)
    rates: Dict[str, List[float]] = {"processes": [], "ray": []}
    for _ in range(repeats):
        for where in ("processes", "ray"):
            group: Any = None
            learner = BatchedPPO(cfg)
            learner.setup(RunContext(seed=seed, samplers_busy=lambda: group is not None and group.busy()), None)
            transport = RayTransport(None, cfg.batched.cpus_per_sampler, samplers=cfg.batched.samplers) \
                if where == "ray" else None
            group = SamplerGroup.for_config(cfg, seed, transport=transport, **learner.sampler_options())
            try:
                pool = [learner.actor()]
                decisions, t0 = 0, 0.0
                for k in range(updates + 2):
                    if k == 2:
                        decisions, t0 = 0, time.perf_counter()
                    batch = group.next_rollout(learner.rollout_size, learner.actor(), pool if k == 0 else None,
                                               cfg.batched.pipeline)
                    learner.update(batch)
                    decisions += int(batch["decisions"])
                rates[where].append(decisions / (time.perf_counter() - t0))
            finally:
                group.close()
    ratios = [r / p for r, p in zip(rates["ray"], rates["processes"])]
    return {"config": config, "overrides": overrides, "samplers": int(cfg.batched.samplers),
            "pipeline": bool(cfg.batched.pipeline), "updates": updates, "rates": rates,
            "processes_per_s": statistics.median(rates["processes"]), "ray_per_s": statistics.median(rates["ray"]),
            "ray_over_processes": statistics.median(ratios), "ratios": ratios}


def model(m: Dict[str, Any], gpu_step_ms: float, link_gbit: float = LINK_GBIT,
          cores: tuple = CORES, cores_per_node: int = 16) -> List[Dict[str, Any]]:
    """Predicted learner decisions/s for each sampler core count, with a CPU and with a GPU learner."""
    rows = []
    link = link_gbit * 1e9 / 8
    for learner in ("cpu", "gpu"):
        update_s = m["update_s"] if learner == "cpu" else m["minibatch_steps_per_update"] * gpu_step_ms / 1000
        for n in cores:
            nodes = max(1, -(-n // cores_per_node))
            per_decision = m["rollout_bytes_per_decision"] + nodes * m["weights_bytes"] / m["rollout_decisions"]
            limits = {"samplers": n / (m["sampler_cpu_ms_per_decision"] / 1000),
                      "learner update": m["rollout_decisions"] / update_s,
                      "learner link": link / per_decision}
            bottleneck = min(limits, key=limits.get)
            rows.append({"learner": learner, "sampler_cores": n, "decisions_per_s": limits[bottleneck],
                         "bottleneck": bottleneck, **{f"limit_{k.replace(' ', '_')}": v for k, v in limits.items()}})
    return rows


def markdown(m: Dict[str, Any], rows: List[Dict[str, Any]], gpu_step_ms: float) -> str:
    out = ["| learner | sampler cores | predicted decisions/s | bottleneck | samplers | learner update "
           "| learner link |",
           "|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        name = "CPU (measured update)" if r["learner"] == "cpu" else f"GPU ({gpu_step_ms:g} ms/step assumed)"
        out.append(f"| {name} | {r['sampler_cores']} | {r['decisions_per_s']:,.0f} | {r['bottleneck']} | "
                   f"{r['limit_samplers']:,.0f} | {r['limit_learner_update']:,.0f} | {r['limit_learner_link']:,.0f} |")
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.bench.scaling", description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/train/quickstart.yaml", help="training config (backend batched)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--rollouts", type=int, default=4, help="rollouts timed for the sampler's cost")
    ap.add_argument("--repeats", type=int, default=5, help="updates timed for the learner's cost")
    ap.add_argument("--gpu-step-ms", type=float, default=1.5,
                    help="assumed GPU time of one minibatch step in the model (not measured without a GPU)")
    ap.add_argument("--link-gbit", type=float, default=LINK_GBIT, help="the learner's network link in the model")
    ap.add_argument("--out", help="write the measurements and the model as JSON here")
    ap.add_argument("--markdown", action="store_true", help="print the model as a Markdown table")
    ap.add_argument("--ray-vs-processes", type=int, default=0, metavar="UPDATES",
                    help="instead: the training loop's learner decisions/s once started, samplers as processes "
                         "and as Ray actors, alternating --repeats times, UPDATES timed updates each")
    args = ap.parse_args(argv)
    if args.rollouts < 1 or args.repeats < 1 or args.gpu_step_ms <= 0 or args.link_gbit <= 0:
        print("scaling: --rollouts and --repeats must be positive integers, --gpu-step-ms and --link-gbit "
              "positive numbers", file=sys.stderr)
        return 2
    try:
        if args.ray_vs_processes > 0:
            r = steady_rates(args.config, args.set, int(args.seed), args.ray_vs_processes, args.repeats)
            print(f"{args.config} {' '.join(args.set)}: processes {r['processes_per_s']:,.0f}, Ray actors "
                  f"{r['ray_per_s']:,.0f} learner decisions/s (median of {args.repeats}); Ray / processes "
                  f"{r['ray_over_processes']:.2f} (pair by pair: {', '.join(f'{x:.2f}' for x in r['ratios'])})")
            if args.out:
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                Path(args.out).write_text(json.dumps(r, indent=1) + "\n")
            return 0
        m = measure(args.config, args.set, int(args.seed), args.rollouts, args.repeats)
    except ConfigError as e:
        print(f"scaling: {e}", file=sys.stderr)
        return 2
    rows = model(m, args.gpu_step_ms, args.link_gbit)
    print(f"{args.config} ({m['core']} core): sampler {m['sampler_cpu_ms_per_decision']:.4f} CPU ms/decision; "
          f"update {m['update_s']:.3f} s per {m['rollout_decisions']:,} decisions on {m['learner_device']} "
          f"({m['minibatch_steps_per_update']} minibatch steps); rollout {m['rollout_bytes_per_decision']:,.0f} "
          f"bytes/decision; weights {m['weights_bytes']:,} bytes")
    if args.markdown:
        print(markdown(m, rows, args.gpu_step_ms))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"measured": m, "assumed": {"gpu_step_ms": args.gpu_step_ms,
                                                                          "link_gbit": args.link_gbit,
                                                                          "cores_per_node": 16},
                                              "model": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
