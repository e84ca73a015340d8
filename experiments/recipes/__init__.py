"""The configs that commands fall back on, shipped inside the package: training recipes
(``train/``), the default of ``handfoot exploit`` (``exploit/default.yaml``) and the benchmark
configs (``bench/``).  The rule presets ship with the game, in ``handfoot_env/presets/``.

``configs/`` in the repository holds the same files for users to copy and edit; a test keeps each
pair equal.  :func:`find_config` resolves what a command was given: a file that exists, else a
recipe by name (``handfoot train quickstart``), else, for a path ``configs/KIND/NAME.yaml`` that
is not there (the package installed without the repository), the shipped recipe of that name.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Union

RECIPES_DIR = Path(__file__).resolve().parent
KINDS = ("train", "exploit", "bench")


def recipe_names(kind: str) -> List[str]:
    """The names of the shipped recipes of ``kind``."""
    return sorted(p.stem for p in (RECIPES_DIR / kind).glob("*.yaml"))


def recipe_path(kind: str, name: str) -> Optional[Path]:
    """The shipped recipe ``name`` (with or without ``.yaml``) of ``kind``, or None."""
    stem = name[:-len(".yaml")] if name.endswith(".yaml") else name
    p = RECIPES_DIR / kind / f"{stem}.yaml"
    return p if "/" not in stem and "\\" not in stem and p.is_file() else None


def find_config(name: Union[str, Path], kind: str) -> Optional[Path]:
    """The config file ``name`` means for a command of ``kind`` (see the module docstring); None if none."""
    p = Path(name)
    if p.is_file():
        return p
    if p.parent in (Path("."), Path("configs") / kind):
        return recipe_path(kind, p.name)
    return None


__all__ = ["RECIPES_DIR", "KINDS", "recipe_names", "recipe_path", "find_config"]
