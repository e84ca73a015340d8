"""Reading YAML handed in by users: bounded work for bounded input, and one line for every problem.

Every YAML file the project reads (rule sets, evaluation, training, experiment and bench configs,
score sheets, ``--set`` values) goes through :func:`read_yaml` or :func:`parse_yaml`:

* only plain data (PyYAML's safe loader: no Python objects, no tags that run code);
* no aliases (``*name``): a few hundred bytes of nested aliases expand to gigabytes, and
  nothing the project reads needs them;
* no key written twice in one mapping (the second would silently win);
* at most :data:`MAX_YAML_BYTES` bytes, and nesting no deeper than Python's recursion allows;
* errors are one line naming the file, line and column, never an excerpt of the input.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Type, Union

import yaml

#: the largest YAML file read (a score sheet of a long game is a few kilobytes)
MAX_YAML_BYTES = 1_000_000


class _Loader(yaml.SafeLoader):
    """SafeLoader without aliases and without duplicate keys."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", node.start_mark,
                        f"found the key {str(key)[:40]!r} twice (first at line {seen[key] + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
            except TypeError:              # an unhashable key: PyYAML reports it below
                pass
        return super().construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)


def yaml_problem(e: yaml.YAMLError) -> str:
    """One line for a YAML error: where and what, without PyYAML's excerpts of the input."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None)
    if mark is None or not problem:
        return "not valid YAML: " + " ".join(str(e).split())[:200]
    text = f"not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {' '.join(str(problem).split())[:200]}"
    context, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    if context:
        text += f" ({context}" + (f" at line {cmark.line + 1}, column {cmark.column + 1}" if cmark else "") + ")"
    return text


def parse_yaml(text: str, error: Type[Exception] = ValueError, where: str = "") -> Any:
    """The data of YAML ``text``; ``error("WHERE: problem")`` for anything the module docstring refuses."""
    prefix = f"{where}: " if where else ""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise error(f"{prefix}larger than {MAX_YAML_BYTES:,} bytes")
    try:
        return yaml.load(text, Loader=_Loader)   # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as e:
        raise error(prefix + yaml_problem(e)) from None
    except RecursionError:
        raise error(f"{prefix}nested too deeply") from None


def read_yaml(path: Union[str, Path], error: Type[Exception] = ValueError, what: str = "file") -> Any:
    """The data of the YAML file ``path`` (``None`` when empty); ``error`` names any problem in one line."""
    p = Path(path)
    if not p.exists():
        raise error(f"{what} {str(p)!r} does not exist")
    if not p.is_file():
        raise error(f"{what} {str(p)!r} is not a file")
    try:
        if p.stat().st_size > MAX_YAML_BYTES:
            raise error(f"{what} {p}: larger than {MAX_YAML_BYTES:,} bytes")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{what} {p}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return parse_yaml(text, error, str(p))


__all__ = ["MAX_YAML_BYTES", "parse_yaml", "read_yaml", "yaml_problem"]
