"""Run folders: provenance (package versions, git commit), files and folders replaced atomically,
resume paths and the run's ``metrics.jsonl``.

A checkpoint is resumed in the run folder that holds it (``RUN/checkpoints/step_N``, ``RUN/final``,
``RUN/best``); nothing read from inside the checkpoint decides where output goes, and
``checkpoints/latest.txt`` must name a folder inside ``checkpoints`` (:func:`agents.files.latest_checkpoint`).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import yaml

from agents.files import UnsafePathError, latest_checkpoint
from experiments.config import ConfigError, config_to_dict


def package_versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for pkg in ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "pettingzoo", "numpy", "handfoot"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def git_commit() -> Optional[str]:
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                           cwd=Path(__file__).resolve().parent)
        if r.returncode == 0:
            dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, timeout=10,
                                   cwd=Path(__file__).resolve().parent)
            return r.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def make_run_folder(cfg: Any) -> Path:
    """A new folder ``cfg.run_dir/NAME`` (``cfg.run_name``, else ``NAME-sSEED``; a time suffix if it exists)."""
    run = fresh_path(Path(cfg.run_dir) / (cfg.run_name or f"{cfg.name}-s{cfg.seed}"))
    run.mkdir(parents=True)
    return run


def fresh_path(path: Path) -> Path:
    """``path`` if nothing is there, else ``path-YYYYmmdd-HHMMSS`` (then ``-1``, ``-2``, ...) that is free."""
    if not path.exists():
        return path
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run, i = path.with_name(f"{path.name}-{stamp}"), 1
    while run.exists():
        run, i = path.with_name(f"{path.name}-{stamp}-{i}"), i + 1
    return run


def results_folder(path: Union[str, Path], explicit: bool, flag: str = "--out",
                   own: Sequence[Union[str, Path]] = ()) -> Path:
    """The folder a command writes its results into, created now; never one that holds results already.

    The one output-folder rule of every command (``train``, ``experiment``, ``evaluate``,
    ``leaderboard``, ``exploit``, ``bench``): a folder named on the command line (``explicit``) must
    be new or empty, else :class:`ConfigError`; a default folder (the command's or its config's)
    gets a time suffix when it is taken. ``own``: files the command reads that may lie in a named
    folder all the same (the config file of the run, as a sweep's trial folder holds it).
    """
    p = Path(path)
    if not explicit:
        p = fresh_path(p)
    elif p.exists() and not p.is_dir():
        raise ConfigError(f"{flag} {path}: is not a folder")
    elif p.exists() and any(x.resolve() not in {Path(o).resolve() for o in own} for x in p.iterdir()):
        raise ConfigError(f"{flag} {path}: the folder is not empty; name a new or empty folder (results are never "
                          f"overwritten), or leave out {flag} for a fresh one")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{flag} {path}: cannot create the folder: {e.strerror or e}") from None
    return p


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file renamed over it)."""
    write_text(path, json.dumps(data, indent=2, default=_json_default) + "\n")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: readers see the old content or the new, never a part."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), rename_exchange) == 0


def replace_dir(new: Path, path: Path) -> None:
    """Put the folder ``new`` in place of ``path`` without ever deleting the old one first.

    Where the system can swap two paths atomically (Linux) they are swapped; elsewhere the old
    folder is moved aside, the new one moved in, and only then is the old one deleted.
    """
    if not path.exists():
        os.replace(new, path)
        return
    if _exchange(new, path):
        shutil.rmtree(new)             # ``new`` now holds the old folder
        return
    aside = path.with_name(f"{path.name}.old-{os.getpid()}")
    if aside.exists():
        shutil.rmtree(aside)
    os.replace(path, aside)
    try:
        os.replace(new, path)
    except OSError:
        os.replace(aside, path)        # put the old one back
        raise
    shutil.rmtree(aside)


def truncate_metrics(run: Path, steps: int) -> int:
    """Drop the rows of ``run/metrics.jsonl`` past ``steps`` (and any unreadable line); how many were dropped.

    A resumed run starts again at its checkpoint's step: the rows the interrupted session wrote
    after that checkpoint are written again by the resumed one, so they go.
    """
    f = run / "metrics.jsonl"
    if not f.is_file():
        return 0
    keep, dropped = [], 0
    for line in f.read_text().splitlines():
        try:
            rec = json.loads(line)
            ok = isinstance(rec, dict) and int(rec.get("timesteps", 0)) <= steps
        except (ValueError, TypeError):
            ok = False
        if ok:
            keep.append(line + "\n")
        else:
            dropped += 1
    if dropped:
        write_text(f, "".join(keep))
    return dropped


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def resolve_resume(path: Union[str, Path]) -> Path:
    """A checkpoint folder from ``path`` (a checkpoint folder, or a run folder: its latest checkpoint)."""
    p = Path(path)
    if (p / "trainer.json").exists():
        return p
    try:
        q = latest_checkpoint(p / "checkpoints")
    except UnsafePathError as e:
        raise ConfigError(f"resume: {e}") from None
    if q is not None and (q / "trainer.json").exists():
        return q
    if (p / "final" / "trainer.json").exists():
        return p / "final"
    raise ConfigError(f"resume: {str(p)!r} is neither a checkpoint folder (trainer.json) nor a run folder with one")


def checkpoint_run(ck: Path) -> Path:
    """The run folder that holds the checkpoint ``ck`` (``RUN/checkpoints/step_N``, ``RUN/final``, ``RUN/best``).

    Derived from where the checkpoint lies, never from what it says; a checkpoint outside a
    run folder (no ``run.json`` or ``config.yaml`` there) is a ConfigError.
    """
    ck = Path(ck)
    run = ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent
    if not ((run / "run.json").is_file() or (run / "config.yaml").is_file()):
        raise ConfigError(f"resume: {str(ck)!r} is not inside a run folder (no run.json in {str(run)!r}); "
                          f"resume a run folder or one of its checkpoints")
    return run


def checkpoint_backend(ck: Path) -> str:
    """The training backend that wrote checkpoint ``ck`` (``trainer.json``; ``sb3`` when unnamed)."""
    try:
        st = json.loads((Path(ck) / "trainer.json").read_text())
        backend = st.get("backend") or st.get("config", {}).get("backend") or "sb3"
    except (OSError, ValueError, AttributeError) as e:
        where = str(Path(ck) / "trainer.json")
        raise ConfigError(f"resume: {where!r} is not a readable checkpoint record ({e})") from None
    return str(backend)


def open_run(cfg: Any, resume: Optional[Union[str, Path]]) -> Tuple[Path, Optional[Path]]:
    """The run folder and the checkpoint to resume from (None for a new run); writes ``config.yaml``.

    A new run gets a new folder (:func:`make_run_folder`); a resumed one continues in the run
    folder that holds its checkpoint (:func:`checkpoint_run`), with the backend that wrote it.
    """
    ck = resolve_resume(resume) if resume else None
    wrote = checkpoint_backend(ck) if ck is not None else cfg.backend
    if wrote != cfg.backend:
        raise ConfigError(f"resume: {str(ck)!r} is a checkpoint of backend: {wrote}, the config says backend: "
                          f"{cfg.backend}; a run continues with the backend it started with")
    run = checkpoint_run(ck) if ck is not None else make_run_folder(cfg)
    write_text(run / "config.yaml", yaml.safe_dump(config_to_dict(cfg), sort_keys=False))
    return run, ck


def session_info(cfg: Any, ck: Optional[Path], argv: Optional[List[str]], seeds: Dict[str, Any]) -> Dict[str, Any]:
    """Provenance of one training session: seeds, package versions, git commit, command line, machine."""
    return {"seed": cfg.seed, "seeds": seeds, "versions": package_versions(), "git_commit": git_commit(),
            "argv": argv if argv is not None else sys.argv, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "platform": platform.platform(), "cpu_count": os.cpu_count(), "resumed_from": str(ck) if ck else None}


def start_session(run: Path, info: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Append a session to ``run.json`` (the newest session's fields at the top level); the session list."""
    runs_json = run / "run.json"
    history = json.loads(runs_json.read_text()).get("sessions", []) if runs_json.exists() else []
    history.append(info)
    write_json(runs_json, {**info, "sessions": history})
    return history


def end_session(run: Path, history: List[Dict[str, Any]], wall_s: float) -> None:
    """Record the session's wall time in ``run.json``."""
    if history:
        history[-1]["wall_s"] = wall_s
        write_json(run / "run.json", {**history[-1], "sessions": history})


def _metric_rows(run: Path) -> Dict[Tuple[str, int], Dict[str, Any]]:
    """A run's ``metrics.jsonl`` rows by (kind, update): rollout and update rows by their update,
    evaluation rows (no update) by their step; ConfigError, in one line, on anything else."""
    path = run / "metrics.jsonl"
    if not path.is_file():
        raise ConfigError(f"{run}: no metrics.jsonl (not a training run folder, or a published one that dropped it)")
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot be read ({type(e).__name__}: {e})") from None
    rows: Dict[Tuple[str, int], Dict[str, Any]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise ConfigError(f"{path}: line {n} is not JSON") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("timesteps"), int) \
                or not isinstance(rec.get("update", 0), int):
            raise ConfigError(f"{path}: line {n} is not a metrics row (an object with whole-number timesteps)")
        number = rec.get("update", rec["timesteps"])
        key = (str(rec.get("kind")), number)
        if key in rows:
            raise ConfigError(f"{path}: line {n} repeats the {key[0]} row of {'update' if 'update' in rec else 'step'} "
                              f"{number} (two runs in one file?)")
        rows[key] = rec
    return rows


def _thinned(rows: Dict[Tuple[str, int], Dict[str, Any]]) -> bool:
    """Whether some update between a run's first and last is missing (:func:`thin_metrics`'s copy)."""
    updates = sorted(n for kind, n in rows if kind == "update")
    return bool(updates) and updates[-1] - updates[0] + 1 != len(updates)


def _row_name(rec: Dict[str, Any]) -> str:
    if "update" in rec:
        return f"the {rec.get('kind')} row of update {rec['update']} ({rec['timesteps']:,} decisions)"
    return f"the {rec.get('kind')} row at {rec['timesteps']:,} decisions"


def _final_actor(run: Path) -> Optional[Path]:
    for p in (run / "final" / "actor.npz", run / "actor.npz"):      # a run folder, or a published copy
        if p.is_file():
            return p
    return None


def _actor_arrays(path: Path) -> Dict[str, np.ndarray]:
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):         # a bare .npy array
            raise ValueError("one array, not an archive")
        with z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ConfigError(f"{path}: not an .npz archive of arrays ({type(e).__name__}: {e})") from None


def compare_runs(a: Union[str, Path], b: Union[str, Path]) -> Tuple[bool, str]:
    """Whether two training run folders hold the same run, and one line that says so or names the
    first difference.  The same run: every ``metrics.jsonl`` row the two have in common equal, value
    for value (rollout and update rows matched by update, evaluation rows by step; a thinned copy,
    :func:`thin_metrics`, keeps fewer of the first two), both ending at the same row, and the final
    actor weights (``final/actor.npz``, or ``actor.npz`` in a published copy) equal bit for bit.
    The rows hold no wall-clock figure, so two runs of one config and seed on machines whose floats
    agree compare equal.  A run that stopped early agrees at best "as far as it goes" (not the same
    run)."""
    a, b = Path(a), Path(b)
    ra, rb = _metric_rows(a), _metric_rows(b)
    common = [k for k in ra if k in rb]
    if not common:
        return False, f"no metrics.jsonl row in common ({len(ra)} and {len(rb)} rows)"
    kinds = {"rollout": 0, "update": 1}

    def when(rec: Dict[str, Any]) -> Tuple[int, int]:
        return rec["timesteps"], kinds.get(str(rec.get("kind")), 2)
    for k in sorted(common, key=lambda k: (when(ra[k]), k)):
        x, y = ra[k], rb[k]
        if json.dumps(x, sort_keys=True) != json.dumps(y, sort_keys=True):     # NaN equals NaN here
            keys = [f for f in list(x) + [f for f in y if f not in x] if json.dumps(x.get(f)) != json.dumps(y.get(f))]
            f, more = keys[0], (f" (and {len(keys) - 1} more fields)" if len(keys) > 1 else "")
            return False, f"the runs part at {_row_name(x)}: {f} {x.get(f)!r} against {y.get(f)!r}{more}"
    end_a, end_b = (max(r.values(), key=when) for r in (ra, rb))
    if end_a["timesteps"] != end_b["timesteps"] and not (_thinned(ra) or _thinned(rb)):
        short, other = (a, b) if end_a["timesteps"] < end_b["timesteps"] else (b, a)
        stop = min(end_a, end_b, key=when)
        return False, (f"the runs agree as far as both go ({len(common):,} metrics rows in common equal), but {short} "
                       f"stops at {_row_name(stop)} and {other} goes on to "
                       f"{max(end_a['timesteps'], end_b['timesteps']):,} decisions")
    pa, pb = _final_actor(a), _final_actor(b)
    if pa is None or pb is None:
        missing = " or ".join(str(run) for run, p in ((a, pa), (b, pb)) if p is None)
        return False, (f"{len(common):,} metrics rows in common equal, to the same last row, but no final actor "
                       f"to compare in {missing}")
    za, zb = _actor_arrays(pa), _actor_arrays(pb)
    if sorted(za) != sorted(zb):
        return False, f"every metrics row in common is equal, but the final actors hold different arrays ({pa}, {pb})"
    for name in za:
        u, v = za[name], zb[name]
        if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
            return False, f"every metrics row in common is equal, but the final actors differ in {name}"
    only = len(ra) + len(rb) - 2 * len(common)
    return True, (f"the same run: {len(common):,} metrics rows in common equal and the final actor's {len(za)} "
                  f"arrays equal bit for bit"
                  + (f"; {only:,} rows of one folder are not in the other (a thinned copy)" if only else ""))


def thin_metrics(src: Path, dst: Path, every: int = 20, head: int = 5) -> Tuple[int, int]:
    """Write the rows of ``src`` (a ``metrics.jsonl``) to ``dst`` keeping every evaluation row and
    the ``rollout``/``update`` rows of the first ``head`` updates and of every ``every``-th update:
    the record of a long run at a size for a repository (the full rows come back from the run's
    recorded command).  ``(rows read, rows kept)``."""
    keep, total = [], 0
    for line in src.read_text().splitlines():
        if not line.strip():
            continue
        total += 1
        rec = json.loads(line)
        upd = rec.get("update")
        if rec.get("kind") not in ("rollout", "update") or not isinstance(upd, int) or upd <= head or upd % every == 0:
            keep.append(line + "\n")
    write_text(dst, "".join(keep))
    return total, len(keep)
