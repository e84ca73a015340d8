"""Run folders: provenance (package versions, git commit), JSON files written atomically, resume
paths and the learning curve of a run's ``metrics.jsonl``.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import yaml

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
    base = Path(cfg.run_dir)
    name = cfg.run_name or f"{cfg.name}-s{cfg.seed}"
    run = base / name
    if run.exists():
        run = base / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        i = 1
        while run.exists():
            run = base / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{i}"
            i += 1
    run.mkdir(parents=True)
    return run


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")
    os.replace(tmp, path)


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
    latest = p / "checkpoints" / "latest.txt"
    if latest.exists():
        q = p / "checkpoints" / latest.read_text().strip()
        if (q / "trainer.json").exists():
            return q
    if (p / "final" / "trainer.json").exists():
        return p / "final"
    raise ConfigError(f"resume: {str(p)!r} is neither a checkpoint folder (trainer.json) nor a run folder with one")


def open_run(cfg: Any, resume: Optional[Union[str, Path]]) -> Tuple[Path, Optional[Path]]:
    """The run folder and the checkpoint to resume from (None for a new run); writes ``config.yaml``.

    A new run gets a new folder (:func:`make_run_folder`); a resumed one continues in its
    checkpoint's run folder.
    """
    ck = resolve_resume(resume) if resume else None
    if ck is not None:
        run = Path(json.loads((ck / "trainer.json").read_text())["run"])
        if not run.exists():
            run = ck.parent.parent if ck.parent.name == "checkpoints" else ck.parent
    else:
        run = make_run_folder(cfg)
    (run / "config.yaml").write_text(yaml.safe_dump(config_to_dict(cfg), sort_keys=False))
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
