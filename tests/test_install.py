"""The package stands alone: a wheel built from this tree, installed into a fresh virtual
environment and run from an empty folder, finds every preset and recipe it falls back on.

The fresh environment gets its third-party packages from the interpreter running the tests (a
``.pth`` line naming its site-packages; ``.pth`` files there, such as an editable install of this
checkout, are not read), and ``handfoot_env``, ``agents`` and ``experiments`` only from the wheel:
the first check is where they were imported from.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("handfoot_env", "agents", "experiments")


def _run(cmd, cwd: Path, env: dict, timeout: int = 600) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{cmd}: exit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"                       # the tree as committed files would build it (no build/ in the checkout)
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(tmp / "dist"), str(src)], tmp, env)
    (wheel,) = (tmp / "dist").glob("handfoot-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q",
          str(wheel)], tmp, env)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp, env).stdout.strip())
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "_handfoot_test_deps.pth").write_text("".join(f"{p}\n" for p in deps))
    empty = tmp / "empty"
    empty.mkdir()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return {"py": py, "bin": venv / "bin", "site": site, "cwd": empty, "env": env}


def test_the_packages_come_from_the_wheel(installed):
    code = "import handfoot_env as h, agents as a, experiments as e; print(h.__file__, a.__file__, e.__file__)"
    out = _run([str(installed["py"]), "-c", code], installed["cwd"], installed["env"]).stdout.split()
    assert len(out) == 3 and all(Path(f).is_relative_to(installed["site"]) for f in out), out


@pytest.mark.parametrize("args,made", [
    (["--version"], None),
    (["evaluate", "--agents", "champion", "strategic", "--games", "2", "--workers", "1", "--no-plots"], None),
    (["demo", "--html", "game.html"], "game.html"),
    (["exploit", "--agent", "random", "--decisions", "2048", "--deals", "1", "--curve-points", "1",
      "--set", "n_envs=2", "--set", "vec_env=dummy", "--quiet"], "runs/exploit"),
    (["bench", "--quick"], "runs/bench-quick"),
    (["train", "quickstart", "--set", "total_timesteps=1024", "--set", "n_envs=2", "--set", "vec_env=dummy",
      "--set", "ppo.n_steps=256", "--set", "evaluation.every_timesteps=0", "--set", "evaluation.final_deals=1",
      "--set", "evaluation.workers=1", "--quiet"], "runs/quickstart-s0/final/actor.npz"),
])
def test_commands_run_from_an_empty_folder(installed, args, made):
    out = _run([str(installed["bin"] / "handfoot"), *args], installed["cwd"], installed["env"])
    if args == ["--version"]:
        assert "0.1.0" in out.stdout
    if made is not None:
        assert (installed["cwd"] / made).exists(), made


def test_rule_presets_load_by_name(installed):
    code = ("from handfoot_env import handfoot_v0; env = handfoot_v0.env(rules='bicycle'); env.reset(seed=0); "
            "print(env.unwrapped.game.rules.decks)")
    assert _run([str(installed["py"]), "-c", code], installed["cwd"], installed["env"]).stdout.strip() == "6"
