"""The bench config (``configs/bench/*.yaml``): rows, sizes and targets, merged and validated with
one-line errors naming the field.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional
from experiments.recipes import RECIPES_DIR, find_config
from experiments.training.backends import backend_names
from handfoot_env.config import load_rules
from handfoot_env.safe_yaml import read_yaml

ROW_KINDS = ("engine", "engine_obs", "core", "aec", "aec_compiled", "eval", "eval_compiled", "vecenv", "selfplay",
             "openspiel", "openspiel_rl", "rlcard", "train", "search")
#: rows that run only when named (``rows:`` of a config, ``--rows``)
ON_REQUEST = ("train", "eval", "eval_compiled", "search")


TARGETS = {"aec_vs_openspiel": 1.0, "engine_vs_openspiel": 2.0, "env_bytes": 1_000_000, "clone_us": 50.0,
           "core_vs_engine_obs": 20.0, "aec_compiled_vs_openspiel": 3.0}


CONFIG_DIR = RECIPES_DIR / "bench"          # the same files as configs/bench/


class BenchConfigError(ValueError):
    pass


def _merge(base: Dict[str, Any], extra: Dict[str, Any], where: str) -> Dict[str, Any]:
    out = dict(base)
    for k, v in (extra or {}).items():
        if k not in DEFAULTS:
            raise BenchConfigError(f"{where}: unknown field {k!r} (known: {', '.join(DEFAULTS)})")
        if isinstance(DEFAULTS[k], dict):
            if not isinstance(v, dict):
                raise BenchConfigError(f"{where}: {k} must be a mapping, got {v!r}")
            unknown = set(v) - set(DEFAULTS[k])
            if unknown:
                raise BenchConfigError(f"{where}: unknown field(s) {sorted(unknown)} in {k} "
                                       f"(known: {', '.join(DEFAULTS[k])})")
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


def _find_config(name: str) -> Optional[Path]:
    """A bench config by path (also under ``configs/bench/``) or by name (``quick``)."""
    for p in (Path(name), Path("configs/bench") / name):
        if p.is_file():
            return p
    return find_config(name, "bench")


def load_config(path: Optional[str] = None, quick: bool = False) -> Dict[str, Any]:
    """The bench settings: DEFAULTS, then the YAML file, then the quick overrides."""
    cfg = dict(DEFAULTS)
    if path is None:
        path_found = _find_config("quick.yaml" if quick else "default.yaml")
    else:
        path_found = _find_config(path)
        if path_found is None:
            raise BenchConfigError(f"config file {path!r} not found")
    if path_found is not None:
        data = read_yaml(path_found, BenchConfigError, "config file") or {}
        if not isinstance(data, dict):
            raise BenchConfigError(f"{path_found}: expected a mapping of fields")
        cfg = _merge(cfg, data, str(path_found))
        cfg["config_file"] = str(path_found)
    if quick:
        cfg = _merge(cfg, QUICK, "--quick")
    cfg.setdefault("config_file", None)
    return validate(cfg)


def validate(cfg: Dict[str, Any]) -> Dict[str, Any]:
    for k in cfg["rows"]:
        if k not in ROW_KINDS:
            raise BenchConfigError(f"rows: unknown row {k!r} (known: {', '.join(ROW_KINDS)})")
    if cfg["clock"] not in ("cpu", "wall"):
        raise BenchConfigError(f"clock must be 'cpu' or 'wall', got {cfg['clock']!r}")
    if cfg["games"] is not None and int(cfg["games"]) < 1:
        raise BenchConfigError(f"games must be a positive integer or null, got {cfg['games']!r}")
    if float(cfg["seconds"]) <= 0:
        raise BenchConfigError(f"seconds must be positive, got {cfg['seconds']!r}")
    for section in ("vecenv", "selfplay"):
        n = cfg[section]["n_envs"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise BenchConfigError(f"{section}.n_envs must be a positive integer, got {n!r}")
    n = cfg["core"]["n_games"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise BenchConfigError(f"core.n_games must be a positive integer, got {n!r}")
    pairs = cfg["eval"]["pairs"]
    if not isinstance(pairs, list) or not pairs or not all(
            isinstance(x, list) and len(x) == 2 and all(isinstance(a, str) for a in x) for x in pairs):
        raise BenchConfigError(f"eval.pairs must be a list of [AGENT, AGENT] pairs of agent specs, got {pairs!r}")
    if any(k in cfg["rows"] for k in ("eval", "eval_compiled")):
        from agents.registry import make_agent
        for a in {a for x in pairs for a in x}:
            try:
                make_agent(a, 0)
            except (ValueError, ImportError) as e:
                raise BenchConfigError(f"eval.pairs: {e}") from None
    if "search" in cfg["rows"]:
        sc = cfg["search"]
        if sc["core"] not in ("reference", "compiled"):
            raise BenchConfigError(f"search.core must be 'reference' or 'compiled', got {sc['core']!r}")
        from agents.registry import make_agent
        for key in ("spec", "opponent"):
            try:
                make_agent(str(sc[key]), 0)
            except (ValueError, ImportError) as e:
                raise BenchConfigError(f"search.{key}: {e}") from None
    if "selfplay" in cfg["rows"] and _train_config_path(str(cfg["selfplay"]["train_config"])) is None:
        raise BenchConfigError(f"selfplay.train_config: file {cfg['selfplay']['train_config']!r} not found")
    if "train" in cfg["rows"]:
        validate_train(cfg["train"])
    il = cfg["interleave"]
    if isinstance(il, bool) or not isinstance(il, int) or il < 1:
        raise BenchConfigError(f"interleave must be a positive integer, got {il!r}")
    for p in list(cfg["presets"]) + list(cfg["growth_presets"] or []):
        try:
            load_rules(p)
        except Exception as e:  # noqa: BLE001 - reported as a config error
            raise BenchConfigError(f"presets: {e}") from None
    return cfg


DEFAULTS: Dict[str, Any] = {
    "presets": ["pagat", "bicycle"],        # rules measured by engine, aec and vecenv rows
    "growth_presets": ["six_player"],       # extra engine and aec rows for the cost-growth note
    "rows": [k for k in ROW_KINDS if k not in ON_REQUEST],
    "seconds": 10.0,                        # time budget per row (whole games; at least one)
    "games": None,                          # or a fixed number of games per row (overrides seconds)
    "warmup_seconds": 0.5,                  # untimed play before each row (caches, tables)
    "interleave": 5,                        # rows are timed in this many round-robin slices
    "seed": 0,
    "clock": "cpu",                         # cpu (process time) or wall
    "vecenv": {"n_envs": 16},
    "core": {"n_games": 256},
    "eval": {"pairs": [["champion_v1", "strategic"], ["champion_v1", "champion_v1"]]},
    "selfplay": {"n_envs": 8, "train_config": "configs/train/quickstart.yaml"},
    "search": {"spec": "search", "opponent": "champion_v1", "core": "compiled"},   # the search row's games
    "train": {"config": "configs/train/quickstart.yaml", "backends": ["sb3", "rllib", "batched", "dmc"],
              "variants": {}, "short": 4096, "long": 32768, "repeats": 1, "set": [], "baseline": None,
              "steady_updates": 0},
    "memory": {"instances": 100},
    "clone": {"states": 200, "repeats": 50},
    "out": "runs/bench",
}


QUICK: Dict[str, Any] = {
    "seconds": 0.2,
    "games": None,
    "warmup_seconds": 0.0,
    "interleave": 2,
    "vecenv": {"n_envs": 4},
    "core": {"n_games": 16},
    "selfplay": {"n_envs": 2},
    "memory": {"instances": 5},
    "clone": {"states": 10, "repeats": 5},
}


def _train_config_path(name: str) -> Optional[Path]:
    """A training config by path or a recipe by name (:func:`experiments.recipes.find_config`), absolute."""
    p = find_config(name, "train")
    return p.resolve() if p is not None else None


def validate_train(t: Dict[str, Any]) -> None:
    if _train_config_path(str(t["config"])) is None:
        raise BenchConfigError(f"train.config: file {t['config']!r} not found")
    for name in ("short", "long", "repeats"):
        v = t[name]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise BenchConfigError(f"train.{name} must be a positive integer, got {v!r}")
    v = t.get("steady_updates", 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise BenchConfigError(f"train.steady_updates must be 0 (off) or a positive integer, got {v!r}")
    if t["long"] <= t["short"]:
        raise BenchConfigError(f"train.long ({t['long']}) must be larger than train.short ({t['short']})")
    for b in t["backends"]:
        if b not in backend_names():
            raise BenchConfigError(f"train.backends: unknown backend {b!r} (known: {', '.join(backend_names())})")
    if not isinstance(t["variants"], dict) or not all(isinstance(v, list) for v in t["variants"].values()):
        raise BenchConfigError("train.variants must map a label to a list of KEY=VALUE overrides")
    if not isinstance(t["set"], list):
        raise BenchConfigError("train.set must be a list of KEY=VALUE overrides")
    if t["baseline"] is not None and (not isinstance(t["baseline"], str) or t["baseline"] not in t["variants"]):
        raise BenchConfigError(f"train.baseline: {t['baseline']!r} is not one of train.variants "
                               f"({', '.join(t['variants']) or 'none'})")
