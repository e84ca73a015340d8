"""Build agents from short specs: ``make_agent(spec, seed)``.

=================  ==========================================================
spec               agent
=================  ==========================================================
``random``         :class:`agents.heuristics.RandomAgent`
``greedy``         :class:`agents.heuristics.GreedyAgent`
``strategic``      :class:`agents.strategic.StrategicAgent`
``policy:PATH``    a trained policy, loaded by ``agents.policy.load_policy_agent(PATH, seed)``
``rllib:PATH``     an RLlib checkpoint, loaded by ``agents.rllib_policy.load_rllib_agent(PATH, seed)``
=================  ==========================================================

Files in the project's formats (``actor.npz``) load without pickle; pickle-based files (an SB3
``model.zip`` alone, RLlib's ``.pkl`` files) only with ``HANDFOOT_TRUST_PICKLE=1`` (:mod:`agents.files`).
"""
from __future__ import annotations

import importlib

from .base import Agent

BUILTIN = ("random", "greedy", "strategic")


def _builtin(name: str, seed: int) -> Agent:
    if name == "random":
        from .heuristics import RandomAgent
        return RandomAgent(seed)
    if name == "greedy":
        from .heuristics import GreedyAgent
        return GreedyAgent(seed)
    from .strategic import StrategicAgent
    return StrategicAgent(seed)


def make_agent(spec: str, seed: int = 0) -> Agent:
    """A new agent for ``spec`` (see the module table) seeded with ``seed``.

    ``ValueError`` for an unknown spec; ``ImportError`` with an explanation when a
    ``policy:`` spec is used but :mod:`agents.policy` is not available.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"agent seed must be an integer, got {seed!r}")
    s = spec.strip()
    if s in BUILTIN:
        return _builtin(s, seed)
    if s.startswith("policy:"):
        path = s[len("policy:"):]
        if not path:
            raise ValueError("agent spec 'policy:PATH' needs a path to a saved policy, e.g. policy:runs/ppo/model.zip")
        try:
            module = importlib.import_module("agents.policy")
        except ImportError as e:
            if getattr(e, "name", None) not in ("agents.policy",):
                raise
            raise ImportError(
                f"agent spec {spec!r} needs agents/policy.py (load_policy_agent), which is not installed "
                f"in this checkout; train a policy first or use one of: {', '.join(BUILTIN)}") from None
        loader = getattr(module, "load_policy_agent", None)
        if loader is None:
            raise ImportError("agents.policy has no load_policy_agent(path, seed)")
        return loader(path, seed)
    if s.startswith("rllib:"):
        path = s[len("rllib:"):]
        if not path:
            raise ValueError("agent spec 'rllib:PATH' needs an RLlib run folder or checkpoint, "
                             "e.g. rllib:runs/rllib-s0")
        from .rllib_policy import load_rllib_agent
        return load_rllib_agent(path, seed)
    raise ValueError(f"unknown agent spec {spec!r}; expected one of: {', '.join(BUILTIN)}, policy:PATH, rllib:PATH")


__all__ = ["make_agent", "BUILTIN"]
