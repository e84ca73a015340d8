"""The batched PPO update timed on its own, with and without ``batched.parallel_update``.

    python -m experiments.bench.profile_update                   # configs/train/quickstart.yaml
    python -m experiments.bench.profile_update --config configs/train/quickstart.yaml --rollouts 3 --repeats 7

A training config's learner is built and its games played in this process (``batched.samplers: 0``,
on the config's core) for ``--rollouts`` rollouts, updating after each, synchronously; the last
rollout is kept and updated on as the config trains (pipelined by default: decoupled PPO's
proximal-policy pass included).  Its update is then run ``--repeats`` times each way, alternating, from the same
network, Adam state and minibatch order: ``one thread`` (``parallel_update: false``) and
``helper thread`` (the critic's passes and the actor's weight gradients beside the actor's
backward pass).  Wall-clock seconds per update, median and minimum, and whether the two ways
left the same weights and Adam state, bit for bit.  With no sampler process, the helper thread
has the second core all the time (in training it waits while a sampler process plays).
``--torch-profile N`` then prints ``torch.profiler``'s table of one one-thread update (self CPU
time by operation, the N costliest).
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
from typing import Dict, List, Optional

import numpy as np
import torch as th

from experiments.config import ConfigError, seed_arg


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _state(learner) -> Dict[str, th.Tensor]:
    out = {f"model/{k}": v.detach().clone() for k, v in learner.model.state_dict().items()}
    for i, st in learner.optimizer.state_dict()["state"].items():
        out.update({f"adam/{i}/{k}": v.clone() for k, v in st.items() if th.is_tensor(v)})
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.bench.profile_update", description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/train/quickstart.yaml", help="training config (backend batched)")
    ap.add_argument("--rollouts", type=_positive, default=3, help="rollouts played and learned from before the timing")
    ap.add_argument("--repeats", type=_positive, default=7, help="timed updates each way")
    ap.add_argument("--seed", type=seed_arg, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (repeatable)")
    ap.add_argument("--torch-profile", type=_positive, default=None, metavar="N",
                    help="then torch.profiler's table of one one-thread update: its N costliest operations")
    args = ap.parse_args(argv)
    from experiments.training.batched_ppo import BatchedPPO
    from experiments.training.config import load_train_config
    from experiments.training.learner import RunContext
    from experiments.training.sampler_group import SamplerGroup
    from handfoot_env.compiled import resolve_core

    try:
        pipeline = load_train_config(args.config, ["backend=batched"] + args.set).batched.pipeline
        cfg = load_train_config(args.config, ["backend=batched", f"seed={args.seed}"] + args.set +
                                ["batched.samplers=0", "batched.pipeline=false"])
    except ConfigError as e:
        print(f"profile_update: {e}", file=sys.stderr)
        return 2
    th.set_num_threads(1)

    learner = BatchedPPO(cfg)           # what its setup reads of a trainer; no sampler process
    learner.setup(RunContext(seed=int(args.seed)), None)
    group = SamplerGroup.for_config(cfg, int(args.seed), **learner.sampler_options())
    for _ in range(args.rollouts):
        batch = group.next_rollout(learner.rollout_size, learner.actor(), [learner.actor()], False)
        learner.update(batch)
    group.close()
    learner.pipeline = pipeline          # the update as the config trains: pipelined, decoupled PPO
    model, adam, rng = (copy.deepcopy(learner.model.state_dict()), copy.deepcopy(learner.optimizer.state_dict()),
                        copy.deepcopy(learner.rng))
    times: Dict[bool, List[float]] = {False: [], True: []}
    after: Dict[bool, Dict[str, th.Tensor]] = {}
    for _ in range(args.repeats):
        for parallel in (False, True):
            learner.model.load_state_dict(model)
            learner.optimizer.load_state_dict(copy.deepcopy(adam))
            learner.rng = copy.deepcopy(rng)
            learner.parallel = parallel
            t = time.perf_counter()
            learner.update(batch)
            times[parallel].append(time.perf_counter() - t)
            after[parallel] = _state(learner)
    same = after[False].keys() == after[True].keys() and all(th.equal(after[False][k], after[True][k])
                                                              for k in after[False])
    trained = int((~batch["open"]).sum())
    print(f"{args.config} on the {resolve_core(cfg.batched.core)} core: one rollout of {len(batch['act']):,} rows "
          f"({trained:,} trained), {cfg.ppo.n_epochs} epochs of minibatches of {cfg.ppo.batch_size}, "
          f"{'pipelined (with the proximal policy pass)' if pipeline else 'synchronous'}")
    for parallel, name in ((False, "one thread"), (True, "helper thread")):
        ts = times[parallel]
        print(f"  {name:14s} {np.median(ts):.4f} s per update (min {min(ts):.4f}, {len(ts)} runs)")
    print(f"  speed-up with the helper thread: {np.median(times[False]) / np.median(times[True]):.2f}x; "
          f"weights and Adam state {'identical' if same else 'DIFFERENT'}")
    if args.torch_profile:
        from torch.profiler import ProfilerActivity, profile
        learner.model.load_state_dict(model)
        learner.optimizer.load_state_dict(copy.deepcopy(adam))
        learner.rng = copy.deepcopy(rng)
        learner.parallel = False
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            learner.update(batch)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.torch_profile))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
