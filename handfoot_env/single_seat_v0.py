"""Versioned entry point of the single-seat Gymnasium env (see :mod:`handfoot_env.single_seat`).

Also registered as ``gymnasium.make("handfoot/SingleSeat-v0", ...)`` once ``handfoot_env`` is imported.

Version history
---------------
* v0: first release.
"""
from __future__ import annotations

from typing import Any

from .single_seat import SingleSeatEnv


def env(**kwargs: Any) -> SingleSeatEnv:
    """``SingleSeatEnv(seat=0, partner="strategic", opponents="strategic", rules="pagat", reward=...,
    reward_scale=..., episode=..., max_actions=..., render_mode=None, agent_factory=None, **rule_overrides)``."""
    return SingleSeatEnv(**kwargs)


__all__ = ["env", "SingleSeatEnv"]
