"""Reading files from checkpoints safely: the trust switch for pickle-based formats, and paths
read from inside a checkpoint that must stay inside its folder.

The project's own files hold arrays (``.npz`` read with ``allow_pickle=False``) and JSON only,
so loading them never runs code.  Two formats of other libraries are pickles, and unpickling a
file can run any code its author chose:

* an SB3 ``model.zip`` (its ``data`` entry), read for ``policy:PATH`` when there is no
  ``actor.npz`` next to it;
* an RLlib checkpoint's ``module_state.pkl`` and ``class_and_ctor_args.pkl``, read for
  ``rllib:PATH`` when the checkpoint has no ``actor.npz`` (another module than the learner,
  or a checkpoint written by RLlib itself).

They are loaded only when the environment variable ``HANDFOOT_TRUST_PICKLE=1`` says that the
user trusts the files (docs/loading_files.md); otherwise :func:`require_trust` raises
:class:`UntrustedFileError`, whose one-line message names the file and the switch.  Being an
environment variable, the switch reaches every place an agent spec is loaded: ``evaluate``,
``play``, ``demo``, training opponents, experiments, and the worker processes of each.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

#: environment variable that allows pickle-based files (value 1, true or yes)
TRUST_ENV = "HANDFOOT_TRUST_PICKLE"


class UntrustedFileError(ValueError):
    """A pickle-based file was to be loaded without ``HANDFOOT_TRUST_PICKLE=1``."""


class UnsafePathError(ValueError):
    """A path read from inside a checkpoint points outside its folder."""


def pickle_trusted() -> bool:
    """Whether the user allowed pickle-based files (``HANDFOOT_TRUST_PICKLE=1``)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def require_trust(path: Union[str, Path], what: str) -> None:
    """Raise :class:`UntrustedFileError` unless pickle-based files are allowed; ``what`` names the format."""
    if not pickle_trusted():
        raise UntrustedFileError(
            f"refusing to load {str(path)!r}: {what} is a pickle, which can run code when loaded; "
            f"if you trust the file, set {TRUST_ENV}=1 (see docs/loading_files.md)")


def latest_checkpoint(checkpoints: Path) -> Optional[Path]:
    """The folder that ``checkpoints/latest.txt`` names, or None when there is no such file.

    The file must hold the name of one folder inside ``checkpoints`` (such as ``step_000100352``):
    a path with ``..``, a separator or an absolute path is refused with :class:`UnsafePathError`.
    """
    f = checkpoints / "latest.txt"
    if not f.is_file():
        return None
    name = f.read_text(errors="replace").strip()
    bad = (not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name
           or Path(name).is_absolute() or len(name) > 255)
    if not bad:
        q = checkpoints / name
        try:
            bad = q.resolve().parent != checkpoints.resolve()      # a symlink out of the folder
        except OSError:
            bad = True
    if bad:
        raise UnsafePathError(f"{str(f)!r} must name a checkpoint folder inside {str(checkpoints)!r}, "
                              f"got {name[:80]!r}")
    return q


__all__ = ["TRUST_ENV", "UntrustedFileError", "UnsafePathError", "pickle_trusted", "require_trust",
           "latest_checkpoint"]
