"""Build agents from short specs: ``make_agent(spec, seed)``.

=================  ==========================================================
spec               agent
=================  ==========================================================
``random``         :class:`agents.heuristics.RandomAgent`
``greedy``         :class:`agents.heuristics.GreedyAgent`
``strategic``      :class:`agents.strategic.StrategicAgent`
``champion``       the strongest trained agent, shipped in the package (``agents/weights/champion.npz``,
                   how it was trained: docs/results/champion/), played greedily
``policy:PATH``    a trained policy, loaded by ``agents.policy.load_policy_agent(PATH, seed)``
``rllib:PATH``     an RLlib checkpoint, loaded by ``agents.rllib_policy.load_rllib_agent(PATH, seed)``
``py:MOD:CLASS``   any importable :class:`agents.base.Agent` subclass: ``py:package.module:ClassName``
                   imports ``package.module`` and builds ``ClassName(seed)``
``NAME``           a plug-in agent that an installed package declares in the entry-point group
                   ``handfoot.agents`` (``NAME = "package.module:ClassName"``)
=================  ==========================================================

Files in the project's formats (``actor.npz``) load without pickle; pickle-based files (an SB3
``model.zip`` alone, RLlib's ``.pkl`` files) only with ``HANDFOOT_TRUST_PICKLE=1`` (:mod:`agents.files`).

Plug-in agents are built the way the built-in ones are: ``ClassName(seed)``, then ``reset`` before
every game.  A built-in name (``random``, ``greedy``, ``strategic`` and any other name this module
knows, and the ``policy:``/``rllib:``/``py:`` prefixes) always wins over an entry point of the same
name: such an entry point is never used (:func:`plugin_agents` lists it as shadowed).  Every failure
(a malformed spec, a module that cannot be imported, a missing attribute, a class that is not an
``Agent`` subclass, a constructor that raises) is one ``ValueError`` naming the spec.
"""
from __future__ import annotations

import importlib
import re
from importlib import metadata
from pathlib import Path
from typing import Dict, Tuple

from .base import Agent

BUILTIN = ("random", "greedy", "strategic")
#: the entry-point group in which installed packages declare plug-in agents
ENTRY_POINT_GROUP = "handfoot.agents"
#: spec prefixes of this module (an entry point named like one of them is shadowed too)
PREFIXES = ("policy", "rllib", "py")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _builtin(name: str, seed: int) -> Agent:
    if name == "random":
        from .heuristics import RandomAgent
        return RandomAgent(seed)
    if name == "greedy":
        from .heuristics import GreedyAgent
        return GreedyAgent(seed)
    from .strategic import StrategicAgent
    return StrategicAgent(seed)


#: trained agents shipped with the package: spec name -> weights file inside ``agents/``
SHIPPED: Dict[str, str] = {"champion": "weights/champion.npz"}
#: further names reserved for agents shipped with the package: an entry point never takes them
_EXTRA_NAMES: Tuple[str, ...] = tuple(SHIPPED)


def shipped_weights(name: str) -> Path:
    """The weights file of the shipped agent ``name`` (it may be missing from a partial installation)."""
    return Path(__file__).resolve().parent / SHIPPED[name]


def _shipped(name: str, seed: int) -> Agent:
    path = shipped_weights(name)
    if not path.is_file():
        raise ValueError(f"agent spec {name!r}: its weights {path} are not in this installation")
    from .policy import PolicyAgent, load_actor
    return PolicyAgent(load_actor(path), seed=seed, name=name)


def _is_builtin_name(name: str) -> bool:
    return name in BUILTIN or name in PREFIXES or name in _EXTRA_NAMES


def plugin_agents() -> Dict[str, Dict[str, str]]:
    """The entry points of group ``handfoot.agents``: ``{name: {"target", "dist", "shadowed"}}``.

    ``shadowed`` is ``"yes"`` for an entry point whose name is a built-in spec (the built-in wins).
    """
    out: Dict[str, Dict[str, str]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        if ep.name in out:      # the first one on sys.path wins, as for imports
            continue
        out[ep.name] = {"target": ep.value, "dist": dist, "shadowed": "yes" if _is_builtin_name(ep.name) else "no"}
    return out


def _plugin(spec: str, target: str, seed: int, where: str = "") -> Agent:
    """Import ``package.module:ClassName`` and build ``ClassName(seed)``; one ``ValueError`` on any failure."""
    module_name, sep, attr = target.partition(":")
    module_name, attr = module_name.strip(), attr.strip()
    if not sep or not _DOTTED.match(module_name) or not _DOTTED.match(attr):
        raise ValueError(f"agent spec {spec!r}{where}: expected py:package.module:ClassName, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        missing = getattr(e, "name", None) or module_name
        raise ValueError(f"agent spec {spec!r}{where}: module {missing!r} not found "
                         f"(is it installed, or on PYTHONPATH?)") from None
    except Exception as e:  # noqa: BLE001 - a plug-in's import error is the user's, reported in one line
        raise ValueError(f"agent spec {spec!r}{where}: importing {module_name!r} failed: "
                         f"{type(e).__name__}: {e}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent spec {spec!r}{where}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, Agent)):
        raise ValueError(f"agent spec {spec!r}{where}: {module_name}:{attr} is not a subclass of agents.base.Agent")
    if obj.act is Agent.act:
        raise ValueError(f"agent spec {spec!r}{where}: {module_name}:{attr} does not implement act(observation, view)")
    try:
        agent = obj(seed)
    except Exception as e:  # noqa: BLE001 - see above
        raise ValueError(f"agent spec {spec!r}{where}: {attr}({seed}) failed: {type(e).__name__}: {e}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"agent spec {spec!r}{where}: {attr}({seed}) did not return an Agent")
    return agent


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
    if s in SHIPPED:
        return _shipped(s, seed)
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
    if s.startswith("py:"):
        return _plugin(spec, s[len("py:"):], seed)
    if not _is_builtin_name(s):
        ep = plugin_agents().get(s)
        if ep is not None:
            return _plugin(spec, ep["target"], seed,
                           where=f" (entry point {ENTRY_POINT_GROUP} of {ep['dist']})")
    raise ValueError(f"unknown agent spec {spec!r}; expected one of: {', '.join(BUILTIN + tuple(SHIPPED))}, "
                     f"policy:PATH, rllib:PATH, "
                     f"py:package.module:ClassName or a name in the entry-point group {ENTRY_POINT_GROUP}")


__all__ = ["make_agent", "plugin_agents", "shipped_weights", "BUILTIN", "SHIPPED", "ENTRY_POINT_GROUP"]
