"""Agents that play Hand and Foot from a seat's view (``handfoot_env.view``).

``make_agent(spec, seed)`` builds one from a spec: ``random``, ``greedy``,
``strategic``, ``policy:PATH``, ``rllib:PATH``, ``py:package.module:ClassName`` or the name of
an entry point in the group ``handfoot.agents`` (see :mod:`agents.registry`).
"""
from .base import Agent
from .heuristics import GreedyAgent, RandomAgent
from .registry import BUILTIN, make_agent
from .strategic import StrategicAgent

__all__ = ["Agent", "RandomAgent", "GreedyAgent", "StrategicAgent", "make_agent", "BUILTIN"]
