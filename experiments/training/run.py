"""``train(cfg)``: one training run of any backend, in its run folder (provenance, seeds, resume).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Union


from experiments.runs import open_run, session_info
from experiments.training.config import BATCHED_BACKENDS, TrainConfig, check_agents
from experiments.training.trainer import Trainer
from experiments.training.trainer import run_session
from experiments.training import batched_backend


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
    if cfg.backend in BATCHED_BACKENDS:
        return batched_backend.train(cfg, resume=resume, quiet=quiet, argv=argv)
    run, ck = open_run(cfg, resume or cfg.resume)
    info = session_info(cfg, ck, argv, {"python/numpy/torch": cfg.seed, "envs": None,
                                        "evaluation": cfg.evaluation.seed})
    return run_session(Trainer(cfg, run, resume=ck, quiet=quiet), info)
