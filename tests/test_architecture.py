"""The layout's rules, checked from the code (docs/architecture.md).

* No import circles among the project's modules, counting imports inside functions too.
* Imports only run down the layers: ``handfoot_env`` <- ``agents`` <- ``experiments``, and inside
  ``experiments``: shared (``config``, ``runs``, ``ray_cluster``) <- ``evaluation`` <- ``training``
  <- ``apps`` / ``bench`` <- ``sweeps``.
* Every module imports in a fresh interpreter; ``import handfoot_env`` loads neither torch nor the
  training stack.
* No class is defined inside a function (a sign of an import dodged at run time).
"""
from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("handfoot_env", "agents", "experiments")

# the floor of every package (lower floors never import higher ones)
FLOORS = {
    "handfoot_env": 0,
    "agents": 1,
    "experiments": 2,               # the package itself and experiments.config / runs / ray_cluster
    "experiments.evaluation": 3,
    "experiments.training": 4,
    "experiments.apps": 5,
    "experiments.bench": 5,
    "experiments.sweeps": 6,        # runs experiments and evaluations (experiments.apps.experiment) as trials
}
# modules that need an optional package at import time (imported only when their feature is used)
OPTIONAL = {"experiments.ray_cluster": None, "experiments.training.rllib": "ray",
            "experiments.training.rllib_env": "ray", "experiments.training.rllib_module": "ray",
            "experiments.apps.web.server": "starlette"}


def _modules():
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


MODULES = _modules()


def _resolve(name: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    is_pkg = MODULES[name].name == "__init__.py"
    base = base if is_pkg else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


#: a string naming an object to import, ``"package.module:attribute"`` (registries, entry points,
#: factories): an import like any other, made when the string is used
STRING_IMPORT = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)$")


def _imports(name: str):
    """Project modules that ``name`` imports, anywhere in the file, ``"module:attr"`` strings included."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(name, node)
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = STRING_IMPORT.match(node.value)
            if m and m.group(1) in MODULES:
                targets = [m.group(1)]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name and t.split(".")[0] in PACKAGES:
                found.add(t)
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def _floor(module: str) -> int:
    best = None
    for prefix, floor in FLOORS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best):
                best = prefix
    return FLOORS[best]


def test_the_graph_sees_the_project():
    assert len(MODULES) > 40
    assert "experiments.training.learner" in GRAPH["experiments.training.trainer"]
    assert "handfoot_env.engine" in GRAPH["handfoot_env.episode"]
    # a registry's "module:attr" string is an arrow to that module
    assert "experiments.training.batched_ppo" in set().union(*GRAPH.values())


#: the compiled core's one interface is its package (``load()``: ``CoreBatch``, ``CompiledGame``;
#: ``resolve_core``, ``make_game``, ...); its modules are its own.  The profilers time kernels one by one.
COMPILED_INSIDE = ("experiments.bench.profile_core",)


def test_the_compiled_core_is_reached_through_its_package_only():
    inner = [(m, t) for m, ts in GRAPH.items() for t in ts
             if t.startswith("handfoot_env.compiled.") and not m.startswith("handfoot_env.compiled")
             and m not in COMPILED_INSIDE]
    assert inner == []


def test_no_import_circles():
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):                                   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    # a package's __init__ importing its own modules is not a circle of concepts
    circles = [c for c in circles if not any(m in PACKAGES for m in c)]
    assert circles == []


def test_imports_run_down_the_layers():
    upward = [(m, t) for m, ts in GRAPH.items() for t in ts
              if _floor(t) > _floor(m) and not (m in PACKAGES and t.startswith(m + "."))]
    assert upward == []


def test_no_class_defined_inside_a_function():
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ClassDef):
                        found.append(f"{name}.{node.name}: class {inner.name}")
    assert found == []


def test_no_god_files():
    """No module over about 600 lines, but the engine (the turn structure, read top to bottom)."""
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > 650 and name != "handfoot_env.engine"}
    assert long == {}


def test_no_long_function_in_training():
    """The training code reads in steps: no function in experiments/training/ over 80 lines (the PPO
    loss is a pure function of its own, the update's steps are named methods)."""
    long = [f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
            for name, path in MODULES.items() if name.startswith("experiments.training.")
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80]
    assert long == []


def test_every_module_imports_in_a_fresh_interpreter():
    names = [m for m, dep in OPTIONAL.items() if dep and importlib.util.find_spec(dep) is None]
    wanted = [m for m in MODULES if m not in names]
    code = ("import importlib, sys, traceback\n"
            "bad = []\n"
            f"for m in {wanted!r}:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except Exception as e:\n        bad.append(f'{m}: {type(e).__name__}: {e}')\n"
            "print('\\n'.join(bad))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_the_game_layer_loads_no_learning_stack():
    code = ("import sys, handfoot_env\nfrom handfoot_env import handfoot_v0\n"
            "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray', 'agents', 'experiments')"
            " if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("command", sorted(__import__("experiments.apps.cli", fromlist=["COMMANDS"]).COMMANDS))
def test_every_command_has_its_entry(command):
    from experiments.apps.cli import COMMANDS
    module, function, _ = COMMANDS[command]
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert function in defined


def _doc_rows(text: str):
    """The table rows of a markdown text: (first cell, whole row)."""
    return [(line.split("|")[1].strip(), line) for line in text.splitlines() if line.startswith("|")]


def test_every_module_has_its_line_in_docs_architecture():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    env_part = doc.split("### `handfoot_env/`", 1)[1].split("###", 1)[0]
    exp_part = doc.split("### `experiments/`", 1)[1].split("\n## ", 1)[0]
    rows = _doc_rows(exp_part)
    missing = []
    for f in sorted((ROOT / "handfoot_env").rglob("*.py")):
        rel = f.relative_to(ROOT / "handfoot_env")
        if f.name != "__init__.py" and f"`{rel.as_posix()}`" not in env_part:
            missing.append(f"handfoot_env/{rel.as_posix()}")
    for f in sorted((ROOT / "experiments").rglob("*.py")):
        rel = f.relative_to(ROOT / "experiments")
        if f.name == "__init__.py" and len(rel.parts) == 1:
            continue
        if len(rel.parts) == 1:         # a shared module: a row of its own
            ok = any(f"`{rel.name}`" in first for first, _ in rows)
        else:                           # a package's module (or the package itself): in the package's row
            pkg = f"`{rel.parts[0]}/`"
            ok = any(pkg in first and (f.name == "__init__.py" or f"`{rel.name}`" in row) for first, row in rows)
        if not ok:
            missing.append(f"experiments/{rel.as_posix()}")
    assert missing == [], f"modules missing from docs/architecture.md: {missing}"


def test_shipped_scripts_import_no_test_helper():
    found = []
    for f in sorted((ROOT / "scripts").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [(f.name, n) for n in names if n == "tests" or n.startswith("tests.")]
    assert found == []
