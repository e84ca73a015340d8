"""``train(cfg)``: one training run of any backend, in its run folder (provenance, seeds, resume).
"""
from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np

from experiments.runs import end_session, open_run, session_info, start_session
from experiments.training.config import TrainConfig, check_agents
from experiments.training.trainer import Trainer


def train(cfg: TrainConfig, resume: Optional[Union[str, Path]] = None, quiet: bool = False,
          argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """Run (or continue) one training run; returns ``{"run", "timesteps", "final_eval", ...}``.

    Every agent the run plays is loaded once here before any worker starts (a bad ``policy:``
    path is a ConfigError); Ctrl-C ends the run with a checkpoint and
    :class:`~experiments.training.trainer.TrainingInterrupted`.
    """
    cfg.validate()
    check_agents(cfg)
    if cfg.backend == "rllib":
        from experiments.training import rllib  # imports Ray: only for this backend
        return rllib.train(cfg, resume=resume, quiet=quiet, argv=argv)
    run, ck = open_run(cfg, resume or cfg.resume)
    info = session_info(cfg, ck, argv, {"python/numpy/torch": cfg.seed, "envs": None,
                                        "evaluation": cfg.evaluation.seed})
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    trainer = Trainer(cfg, run, resume=ck, quiet=quiet)
    t0 = time.perf_counter()
    history: List[Dict[str, Any]] = []
    try:
        trainer.setup()
        info["seeds"]["envs"] = f"worker i: {trainer.env_seed} + i"
        history = start_session(run, info)
        resumed = f" (resumed from {ck} at {trainer.model.num_timesteps:,} steps)" if ck else ""
        trainer.log(f"run folder: {run}{resumed}")
        trainer.learn()
        trainer.raise_if_interrupted(history, t0)
        result = trainer.finish()
    finally:
        trainer.close()
    result["wall_s"] = time.perf_counter() - t0
    end_session(run, history, result["wall_s"])
    return result
