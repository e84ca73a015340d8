"""Versioned entry point of the single-seat Gymnasium env (see :mod:`handfoot_env.single_seat`).

Also registered as ``gymnasium.make("handfoot/SingleSeat-v0", ...)`` once ``handfoot_env`` is imported;
``gymnasium.make("handfoot_env:handfoot/SingleSeat-v0", ...)`` imports it first (what a worker process
started with ``spawn`` needs: Gymnasium 1.x reads no entry points).

Version history
---------------
* v0: first release.  Since then: ``core`` (the compiled core by default; the same episodes) and
  ``illegal_action`` (an illegal action id ends the episode with reward -1 by default, as
  ``handfoot_v0.env()``; it used to raise, which ``illegal_action="raise"`` keeps).
"""
from __future__ import annotations

from typing import Any

from .single_seat import SingleSeatEnv


def env(**kwargs: Any) -> SingleSeatEnv:
    """``SingleSeatEnv(seat=0, partner="strategic", opponents="strategic", rules="pagat", reward=...,
    reward_scale=..., episode=..., max_actions=..., render_mode=None, agent_factory=None, core=None,
    illegal_action="terminate", **rule_overrides)``."""
    return SingleSeatEnv(**kwargs)


__all__ = ["env", "SingleSeatEnv"]
