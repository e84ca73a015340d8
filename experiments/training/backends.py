"""The training backends by name: the project's five learners registered in
:mod:`experiments.training.learner`'s registry, and the registry's look-ups (import them from here,
so that the five are in it).  A plug-in learner registers itself the same way
(``register_backend``; docs/architecture.md).  The learners are named by ``module:Class`` and imported
only when a run uses one: a ``batched`` run imports neither SB3 nor Ray.
"""
from __future__ import annotations

from experiments.training.learner import backend, backend_names, register_backend

#: the project's own backends (:data:`experiments.training.config.BUILTIN_BACKENDS` names them too)
register_backend("sb3", "experiments.training.sb3:SB3Learner", "sampling",
                 description="MaskablePPO (sb3-contrib) on SubprocVecEnv workers")
register_backend("rllib", "experiments.training.rllib:RLlibLearner", "sampling",
                 description="RLlib PPO on Ray")
register_backend("batched", "experiments.training.batched_ppo:BatchedPPO", "rollout",
                 description="PPO on the batched games")
register_backend("dmc", "experiments.training.dmc:DMCLearner", "rollout",
                 description="Deep Monte-Carlo on the batched games")
register_backend("bc", "experiments.training.bc:BCLearner", "sampling",
                 description="behaviour cloning from a Minari dataset (the data extra)")

__all__ = ["backend", "backend_names", "register_backend"]
