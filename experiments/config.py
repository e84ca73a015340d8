"""Configs as dataclasses: read from YAML, overridden from the command line, described field by field.

One loader for every config of the project (training, and any other dataclass config): unknown
fields, wrong types and bad choices are :class:`ConfigError` with a one-line message naming the field.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import functools
import inspect
import json
import os
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union


from handfoot_env.config import check_seed
from handfoot_env.config import read_yaml as read_yaml_file
from handfoot_env.safe_yaml import parse_yaml


class ConfigError(ValueError):
    """A malformed config or command line (the CLI prints it as one line and exits with status 2)."""


def debug_enabled() -> bool:
    """Whether internal errors show their traceback (``handfoot --debug ...`` or ``HANDFOOT_DEBUG=1``)."""
    return bool(os.environ.get("HANDFOOT_DEBUG"))


def error_line(command: str, e: BaseException) -> str:
    """The one line a user error prints: ``handfoot COMMAND: error: MESSAGE`` (never the input expanded)."""
    msg = str(e).strip() or type(e).__name__
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        msg = f"{e.filename}: {e.strerror}"
    msg = " ".join(msg.split())
    if len(msg) > 500:
        msg = msg[:497] + "..."
    return f"handfoot {command}: error: {msg}"


def command(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate ``NAME_main(argv, ...) -> int`` with the project's one error path.

    A user error (any ``ValueError`` or ``OSError``: bad flags, configs, rule sets,
    records, paths) prints :func:`error_line` and returns 2; Ctrl-C prints one line
    and returns 130; ``--help`` returns 0.  Other exceptions are bugs and propagate
    (the ``handfoot`` command turns them into one line too).
    """
    def wrap(fn: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> int:
            try:
                return int(fn(*args, **kwargs) or 0)
            except SystemExit as e:            # --help (0), or a command's own exit
                return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            except KeyboardInterrupt as e:         # a message says what was saved (training)
                print(f"handfoot {name}: {str(e).strip() or 'interrupted'}", file=sys.stderr)
                return 130
            except (ValueError, OSError) as e:
                if debug_enabled():
                    raise
                print(error_line(name, e), file=sys.stderr)
                return 2
        return run
    return wrap


def handfoot_command() -> str:
    """The ``handfoot`` command as a hint should print it: ``handfoot`` when that name on the PATH is
    the running command, else the path it was started by (``.venv/bin/handfoot`` after the set-up,
    whose venv need not be active), so that a printed ``continue with: ...`` works as printed."""
    import shutil
    me = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if me is None or me.name != "handfoot":
        return "handfoot"
    found = shutil.which("handfoot")
    try:
        if found and Path(found).resolve() == me.resolve():
            return "handfoot"
    except OSError:
        pass
    return str(me)


def output_file_error(path: Union[str, Path], flag: str) -> Optional[str]:
    """Why ``path`` cannot be written as an output file of ``flag`` (one line), or None.

    Asked before any work starts, so that a game is not played, or a page built, only to
    fail at the end.
    """
    p = Path(path)
    if p.is_dir():
        return f"{flag} {path}: is a directory"
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        return f"{flag} {path}: folder {str(parent)!r} does not exist"
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        return f"{flag} {path}: not writable"
    return None


def seed_arg(text: str) -> int:
    """``--seed`` on the command line: an integer from 0 to 2**63-1 (:func:`handfoot_env.config.check_seed`)."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is an integer from 0 to 2**63-1, got {text!r}") from None


_COUNT_UNITS = {"": 1, "k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000}


def count_arg(text: str) -> int:
    """A positive count on the command line, whole or in thousands or millions: ``5000000``, ``200k``,
    ``5M``, ``1.5M`` (``--decisions``)."""
    t = text.strip().replace("_", "")
    unit = t[-1:] if t[-1:] in _COUNT_UNITS else ""
    try:
        value = float(t[:len(t) - len(unit)]) * _COUNT_UNITS[unit] if unit or "." in t or "e" in t.lower() \
            else int(t)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 10 ** 15 or value != int(value):
        raise argparse.ArgumentTypeError(f"expected a positive whole number such as 5000000, 200k or 5M, got {text!r}")
    return int(value)


class CommandParser(argparse.ArgumentParser):
    """``argparse`` for the ``handfoot`` commands: a bad command line is a :class:`ConfigError`.

    argparse prints the usage and exits; here the message is raised instead, so the
    command line (``experiments.apps.cli``) reports it as one line
    ``handfoot COMMAND: error: ...`` with exit status 2.  ``--help`` still prints and exits 0.
    """

    def error(self, message: str):
        raise ConfigError(message)


def _check_choice(name: str, value: Any, choices) -> None:
    if value not in choices:
        raise ConfigError(f"{name}: expected one of {', '.join(map(str, choices))}, got {value!r}")


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return f"{_type_name(args[0])} or null"
    if origin in (list, List):
        return f"list of {_type_name(typing.get_args(tp)[0])}"
    if origin in (dict, Dict):
        k, v = typing.get_args(tp)
        return f"mapping of {_type_name(k)} to {_type_name(v)}"
    if dataclasses.is_dataclass(tp):
        return "mapping"
    return getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _convert(args[0], value, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return _from_dict(tp, value, where + ".")
    if origin in (list, List):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")
        (inner,) = typing.get_args(tp)
        return [_convert(inner, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, Dict):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")
        kt, vt = typing.get_args(tp)
        return {_convert(kt, k, f"{where} key"): _convert(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:   # 1e6 in YAML
            return int(value)
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):           # YAML 1.1 reads 3e-4 as a string
            try:
                return float(value)
            except ValueError:
                pass
    elif tp is str:
        if isinstance(value, str):
            return value
    elif tp is Any:
        return value
    raise ConfigError(f"{where}: expected {_type_name(tp)}, got {value!r}")


def unknown_field_message(key: str, known: Any, prefix: str = "") -> str:
    """``unknown field 'total_timestep'; did you mean 'total_timesteps'? (known fields: ...)``."""
    known = list(known)
    near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
    hint = f"; did you mean '{prefix}{near[0]}'?" if near else ""
    return f"unknown field '{prefix}{key}'{hint} (known fields: {', '.join(known)})"


def _from_dict(cls: Any, data: Dict[str, Any], prefix: str = "") -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        if key not in names:
            raise ConfigError(unknown_field_message(key, names, prefix))
        kwargs[key] = _convert(hints[key], value, prefix + key)
    obj = cls(**kwargs)
    obj.__dict__[_GIVEN] = frozenset(kwargs)
    return obj


_GIVEN = "_fields_given"


def field_given(cfg: Any, name: str) -> bool:
    """Whether the mapping a config section was read from (:func:`config_from_dict`) set field ``name``
    itself, rather than leaving it at its default (a section built in Python: False)."""
    return name in cfg.__dict__.get(_GIVEN, ())


def config_from_dict(cls: Any, data: Optional[Dict[str, Any]], source: Optional[str] = None) -> Any:
    """A validated ``cls`` (a config dataclass) from a mapping; :class:`ConfigError` names any bad field
    (and ``source``, the file the mapping came from, before an unknown field)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the config must be a mapping of fields, got {type(data).__name__}")
    try:
        cfg = _from_dict(cls, data)
    except ConfigError as e:
        if source and str(e).startswith("unknown field"):
            raise ConfigError(f"{source}: {e}") from None
        raise
    if hasattr(cfg, "validate"):
        cfg.validate()
    return cfg


def read_yaml(path: Union[str, Path]) -> Dict[str, Any]:
    data = read_yaml_file(path, ConfigError, "config file")
    return data if data is not None else {}


def apply_overrides(data: Dict[str, Any], overrides: List[str]) -> Dict[str, Any]:
    """``--set a.b=VALUE`` overrides (VALUE parsed as YAML)."""
    data = json.loads(json.dumps(data))
    for item in overrides or []:
        if "=" not in item:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        key, _, raw = item.partition("=")
        value = parse_yaml(raw, ConfigError, f"--set {key.strip()}")
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {key}: {part} is not a mapping")
        node[parts[-1]] = value
    return data


def config_to_dict(cfg: Any) -> Dict[str, Any]:
    return dataclasses.asdict(cfg)


def field_docs(cls: Any) -> Dict[str, str]:
    """The docstring under every field of a config dataclass (read from the source)."""
    src = inspect.getsource(cls)
    tree = ast.parse(src)
    body = tree.body[0].body
    docs = {}
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and i + 1 < len(body):
            nxt = body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant) \
                    and isinstance(nxt.value.value, str):
                docs[node.target.id] = nxt.value.value.strip()
    return docs


def describe_config(cls: Any, prefix: str = "", instance: Any = None) -> List[str]:
    """Lines ``name: type = default  doc`` for every field, nested sections expanded."""
    lines = []
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    inst = instance if instance is not None else cls()
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        val = getattr(inst, f.name)
        if dataclasses.is_dataclass(tp):
            lines.append(f"{prefix}{f.name}:  {docs.get(f.name, '')}")
            lines += describe_config(tp, prefix + "  ", val)
        else:
            lines.append(f"{prefix}{f.name}: {_type_name(tp)} = {json.dumps(val)}\n{prefix}    {docs.get(f.name, '')}")
    return lines
