"""Build agents from short specs: ``make_agent(spec, seed)``.

=================  ==========================================================
spec               agent
=================  ==========================================================
``random``         :class:`agents.heuristics.RandomAgent`
``greedy``         :class:`agents.heuristics.GreedyAgent`
``strategic``      :class:`agents.strategic.StrategicAgent`
``champion``       the newest shipped champion, played greedily: ``champion_v2`` today
``champion_v1``    the first champion (55M decisions of batched PPO; ``agents/weights/champion_v1.npz``, its
                   record: docs/results/champion_v1/), played greedily
``champion_v2``    the league's champion (docs/league.md; ``agents/weights/champion_v2.npz``, its record:
                   docs/results/champion_v2/), played greedily
``search(...)``    decision-time search over a trained policy: :class:`agents.search.SearchAgent`
                   (arguments in :data:`agents.search.PARAMS`; docs/search.md)
``policy:PATH``    a trained policy, loaded by ``agents.policy.load_policy_agent(PATH, seed)``
``rllib:PATH``     an RLlib checkpoint, loaded by ``agents.rllib_policy.load_rllib_agent(PATH, seed)``
``py:MOD:CLASS``   any importable :class:`agents.base.Agent` subclass: ``py:package.module:ClassName``
                   imports ``package.module`` and builds ``ClassName(seed)``
``NAME``           a plug-in agent that an installed package declares in the entry-point group
                   ``handfoot.agents`` (``NAME = "package.module:ClassName"``)
=================  ==========================================================

**Arguments.**  A spec other than ``policy:``/``rllib:`` may end with keyword arguments in
parentheses, ``NAME(key=value, key=value)``: ``strategic(draw_worth=1.5, wilds=spend)``,
``py:mypkg.agents:MyAgent(depth=3)``.  A value is a YAML scalar (``3``, ``0.5``, ``true``, a word;
quote a string that holds a comma or a parenthesis); the agent is built as
``ClassName(seed, key=value, ...)``.  The spec string itself is the agent's name in results,
reports and ratings, so ``strategic`` and ``strategic(draw_worth=2.0)`` are two entries even
where the second is the default; :func:`spec_arguments` parses a spec, and a bad argument is one
``ValueError`` naming the spec.  ``strategic``'s arguments are listed in
:data:`agents.strategic.PARAMS`; ``random``, ``greedy`` and the champions take none.

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
from typing import Any, Dict, List, Optional, Tuple

from handfoot_env.safe_yaml import parse_yaml

from .base import Agent

BUILTIN = ("random", "greedy", "strategic")
#: the entry-point group in which installed packages declare plug-in agents
ENTRY_POINT_GROUP = "handfoot.agents"
#: spec prefixes of this module (an entry point named like one of them is shadowed too)
PREFIXES = ("policy", "rllib", "py")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


_ARGS = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<args>.*)\)\s*$", re.S)
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _split_args(text: str) -> List[str]:
    """``a=1, b='x, y'`` -> ``["a=1", "b='x, y'"]`` (commas inside quotes do not split)."""
    parts, cur, quote = [], [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quote:
        raise ValueError("an unterminated quote")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def spec_arguments(spec: str) -> Tuple[str, Dict[str, Any]]:
    """``(base spec, keyword arguments)`` of ``spec``: ``"strategic(draw_worth=1.5)"`` -> ``("strategic",
    {"draw_worth": 1.5})``; a spec without parentheses (and every ``policy:``/``rllib:`` spec, whose path may
    hold any character) has no arguments.  ``ValueError`` naming the spec for a malformed argument list."""
    s = spec.strip()
    if s.startswith(("policy:", "rllib:")):
        return s, {}
    m = _ARGS.match(s)
    if m is None:
        if "(" in s or ")" in s:
            raise ValueError(f"agent spec {spec!r}: arguments are written NAME(key=value, ...), with the "
                             f"parentheses at the end")
        return s, {}
    name, body = m.group("name").strip(), m.group("args").strip()
    kwargs: Dict[str, Any] = {}
    if not body:
        return name, kwargs
    try:
        items = _split_args(body)
    except ValueError as e:
        raise ValueError(f"agent spec {spec!r}: {e} in its arguments") from None
    for item in items:
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not _KEY.match(key):
            raise ValueError(f"agent spec {spec!r}: expected key=value arguments, got {item!r}")
        if key in kwargs:
            raise ValueError(f"agent spec {spec!r}: argument {key!r} is given twice")
        value = parse_yaml(raw.strip(), ValueError, f"agent spec {spec!r}, argument {key!r}") if raw.strip() else None
        if value is None or isinstance(value, (list, dict)):
            raise ValueError(f"agent spec {spec!r}: argument {key!r} needs a number, true/false or a word, "
                             f"got {raw.strip()!r}")
        kwargs[key] = value
    return name, kwargs


def _builtin(name: str, seed: int, kwargs: Dict[str, Any], spec: str) -> Agent:
    if name in ("random", "greedy"):
        if kwargs:
            raise ValueError(f"agent spec {spec!r}: {name} takes no arguments")
        from .heuristics import GreedyAgent, RandomAgent
        return RandomAgent(seed) if name == "random" else GreedyAgent(seed)
    from .strategic import StrategicAgent
    try:
        agent = StrategicAgent(seed, **kwargs)
    except ValueError as e:
        raise ValueError(f"agent spec {spec!r}: {e}") from None
    if kwargs:
        agent.name = spec.strip()
    return agent


#: a side of different agents: ``team(A,B)`` plays A in a team's first seat and B in its second
#: (:func:`team_members`, :func:`side_specs`); ``+`` is taken (bench rows write ``A+B`` for A against B)
TEAM = "team"
_TEAM = re.compile(r"^team\s*\((?P<body>.*)\)\s*$", re.S)


def _split_top(text: str) -> List[str]:
    """``a, b(x=1, y=2), 'c,d'`` -> ``["a", "b(x=1, y=2)", "'c,d'"]``: commas inside parentheses or quotes
    do not split."""
    parts, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def team_members(spec: str) -> Optional[List[str]]:
    """The specs of a team spec's seats in the team's seat order: ``"team(champion, strategic)"`` ->
    ``["champion", "strategic"]``; None for a spec that is not a team.  ``ValueError`` naming the spec for
    a malformed team: fewer than two members, an empty one, a team inside a team."""
    m = _TEAM.match(spec.strip()) if isinstance(spec, str) else None
    if m is None:
        return None
    members = _split_top(m.group("body"))
    if len(members) < 2 or any(not x for x in members):
        raise ValueError(f"team spec {spec!r}: expected team(A,B) (one agent spec per seat of a team, "
                         f"two or more), got {len(members)} member(s)"
                         f"{' with an empty one' if members and not all(members) else ''}")
    for x in members:
        if _TEAM.match(x):
            raise ValueError(f"team spec {spec!r}: a team cannot hold a team ({x!r})")
    return members


def side_specs(spec: str, rules: Any) -> List[str]:
    """The agent spec of each seat of one team of ``rules`` that the side ``spec`` plays, in the team's seat
    order (its k-th player from the dealer's left): a team spec's members, one per seat of a team, or
    ``spec`` in every seat.  ``ValueError`` naming the spec for a team whose size is not the rules' team
    size, or under rules without partnerships (one player per team, the ``individual`` preset).  The
    members are not built here: :func:`check_side` does that."""
    per_team = int(rules.players) // int(rules.teams)
    members = team_members(spec)
    if members is None:
        return [spec] * per_team
    if per_team == 1:
        raise ValueError(f"team spec {spec!r}: these rules have no partnerships ({rules.players} players, one "
                         f"per team), so a side is one agent")
    if len(members) != per_team:
        raise ValueError(f"team spec {spec!r} names {len(members)} agents, but a team of these rules has "
                         f"{per_team} seats")
    return members


def check_side(spec: str, rules: Any) -> List[str]:
    """:func:`side_specs`, each member built once (:func:`make_agent`), so that a bad spec, inside a team
    or not, is one ``ValueError`` (or ``ImportError``) naming it."""
    specs = side_specs(spec, rules)
    for member in dict.fromkeys(specs):
        try:
            make_agent(member, 0)
        except ValueError as e:
            if member == spec:
                raise
            raise ValueError(f"team spec {spec!r}: {e}") from None
    return specs


#: the shipped champions, oldest first (docs/champion.md tells each one's story)
CHAMPIONS: Tuple[str, ...] = ("champion_v1", "champion_v2")
#: trained agents shipped with the package: spec name -> weights file inside ``agents/``; ``champion`` is the
#: newest champion (a figure measured with an older one names it: ``champion_v1``)
SHIPPED: Dict[str, str] = {**{name: f"weights/{name}.npz" for name in CHAMPIONS},
                           "champion": f"weights/{CHAMPIONS[-1]}.npz"}
#: the search agent's spec name (not in BUILTIN: a round-robin of every built-in agent leaves it out)
SEARCH = "search"
#: further names reserved for agents shipped with the package: an entry point never takes them
_EXTRA_NAMES: Tuple[str, ...] = tuple(SHIPPED) + (SEARCH, TEAM)


def shipped_weights(name: str) -> Path:
    """The weights file of the shipped agent ``name`` (it may be missing from a partial installation)."""
    return Path(__file__).resolve().parent / SHIPPED[name]


def _shipped(name: str, seed: int) -> Agent:
    path = shipped_weights(name)
    if not path.is_file():
        raise ValueError(f"agent spec {name!r}: its weights {path} are not in this installation")
    from .policy import PolicyAgent, load_actor
    return PolicyAgent(load_actor(path), seed=seed, name=name)


def policy_weights(spec: str) -> Dict[str, Any]:
    """The network weights (:func:`agents.policy.load_actor`'s dict, checked) of a trained policy named by
    ``spec``: a shipped agent (``champion``), ``policy:PATH`` (a ``?sample`` suffix is ignored) or a bare
    path of what ``policy:PATH`` loads (a checkpoint or run folder, an ``actor.npz``, a ``model.zip``).
    One ``ValueError`` naming ``spec`` for anything else: a heuristic or another agent spec, a path that is
    missing, a file that is not a policy.  Training starts from these (``init`` of a training config)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"expected a trained policy (a spec such as champion or policy:PATH, or a path), got {spec!r}")
    s = spec.strip()
    from .policy import load_actor, load_weights, resolve_policy_path

    def load(path_text: str) -> Dict[str, Any]:
        found = resolve_policy_path(path_text)
        if found.suffix not in (".npz", ".zip"):
            raise ValueError(f"{str(found)!r} is neither an actor.npz, a model.zip nor a checkpoint or run folder")
        return load_weights(path_text)

    try:
        if s in SHIPPED:
            path = shipped_weights(s)
            if not path.is_file():
                raise ValueError(f"its weights {path} are not in this installation")
            return load_actor(path)
        if s.startswith("policy:"):
            path_text = s[len("policy:"):]
            if path_text.endswith("?sample"):
                path_text = path_text[: -len("?sample")]
            if not path_text:
                raise ValueError("policy:PATH needs a path")
            return load(path_text)
        if Path(s).expanduser().exists():
            return load(s)
    except (ValueError, OSError) as e:
        raise ValueError(f"{spec!r} is not a trained policy: {e}") from None
    name = spec_arguments(s)[0] if "(" in s else s
    if name in BUILTIN or name == SEARCH or name.startswith(PREFIXES) or name in plugin_agents():
        raise ValueError(f"{spec!r} is an agent without network weights; expected a trained policy: "
                         f"{', '.join(SHIPPED)}, policy:PATH or a path to a saved policy")
    raise ValueError(f"{spec!r}: no such file or folder, nor a shipped policy ({', '.join(SHIPPED)}); expected "
                     f"{', '.join(SHIPPED)}, policy:PATH or a path to a saved policy")


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


def _plugin(spec: str, target: str, seed: int, where: str = "", kwargs: Optional[Dict[str, Any]] = None) -> Agent:
    """Import ``package.module:ClassName`` and build ``ClassName(seed, **kwargs)``; one ``ValueError`` on any
    failure."""
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
    kwargs = kwargs or {}
    try:
        agent = obj(seed, **kwargs)
    except Exception as e:  # noqa: BLE001 - see above
        args = "".join(f", {k}={v!r}" for k, v in kwargs.items())
        raise ValueError(f"agent spec {spec!r}{where}: {attr}({seed}{args}) failed: {type(e).__name__}: {e}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"agent spec {spec!r}{where}: {attr}({seed}) did not return an Agent")
    return agent


def _named(agent: Agent, spec: str, kwargs: Dict[str, Any]) -> Agent:
    if kwargs:
        agent.name = spec.strip()
    return agent


def _search_params() -> Tuple[str, ...]:
    from .search import PARAMS
    return tuple(PARAMS)


def make_agent(spec: str, seed: int = 0) -> Agent:
    """A new agent for ``spec`` (see the module table) seeded with ``seed``.

    ``ValueError`` for an unknown spec; ``ImportError`` with an explanation when a
    ``policy:`` spec is used but :mod:`agents.policy` is not available.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"agent seed must be an integer, got {seed!r}")
    members = team_members(spec)
    if members is not None:
        raise ValueError(f"agent spec {spec!r} is a team of {len(members)} seats, not one agent: name it where a "
                         f"side is named (handfoot evaluate --agents)")
    s, kwargs = spec_arguments(spec)
    if s in BUILTIN:
        return _builtin(s, seed, kwargs, spec)
    if s in SHIPPED:
        if kwargs:
            raise ValueError(f"agent spec {spec!r}: {s} takes no arguments")
        return _shipped(s, seed)
    if s == SEARCH:
        from .search import PARAMS, SearchAgent, check_base
        try:
            base = make_agent(check_base(kwargs.get("base", PARAMS["base"])), seed)
            agent = SearchAgent(seed, base_agent=base, **kwargs)
        except TypeError as e:
            raise ValueError(f"agent spec {spec!r}: {e} (arguments: {', '.join(_search_params())})") from None
        except ValueError as e:
            raise ValueError(f"agent spec {spec!r}: {e}") from None
        return _named(agent, spec, kwargs)
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
        agent = _plugin(spec, s[len("py:"):], seed, kwargs=kwargs)
        return _named(agent, spec, kwargs)
    if not _is_builtin_name(s):
        ep = plugin_agents().get(s)
        if ep is not None:
            agent = _plugin(spec, ep["target"], seed, where=f" (entry point {ENTRY_POINT_GROUP} of {ep['dist']})",
                            kwargs=kwargs)
            return _named(agent, spec, kwargs)
    raise ValueError(f"unknown agent spec {spec!r}; expected one of: {', '.join(BUILTIN + tuple(SHIPPED))}, "
                     f"{SEARCH}(...), "
                     f"policy:PATH, rllib:PATH, "
                     f"py:package.module:ClassName or a name in the entry-point group {ENTRY_POINT_GROUP}")


__all__ = ["make_agent", "spec_arguments", "plugin_agents", "shipped_weights", "policy_weights", "team_members",
           "side_specs", "check_side", "TEAM", "BUILTIN", "SHIPPED", "CHAMPIONS", "SEARCH", "ENTRY_POINT_GROUP"]
