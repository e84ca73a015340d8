"""A sweep config (``configs/sweeps/*.yaml``): read, checked, and expanded into trials.

Keys (docs/interface.md, "Sweeps")::

    name: learners                      # the sweep's name (default: the file's name)
    kind: experiment                    # experiment (train, then evaluate) | evaluate (duplicate evaluation)
    base: ../experiments/quickstart.yaml  # the experiment or evaluation config (relative to this file or the cwd)
    description: free text for report.md
    grid:                               # dotted keys to lists of values: one variant per combination
      train.ppo.learning_rate: [1.0e-4, 3.0e-4]
    variants:                           # or: named sets of dotted-key overrides
      ppo: {}
      dmc: {train.backend: dmc}
    search:                             # or: random search over ranges (a trial budget)
      algorithm: random                 # values drawn from search.seed: the same variants on every runner
      samples: 8
      seed: 0
      space: {train.ppo.learning_rate: {loguniform: [1.0e-5, 1.0e-3]}}
    seeds: 5                            # a count (seeds 0..N-1) or a list of integers
    overrides: {evaluation.deals: 100}  # dotted keys applied to every trial (a variant's win)
    metric: win_rate:strategic          # what is compared across variants (see Metric)
    resources: {cpus: 2}                # CPUs one trial uses (--parallel default, Ray's resources)
    retries: 1                          # Ray: how often a failed trial is run again
    scheduler: {name: asha, grace_period: 2, reduction_factor: 2}   # Ray: early stopping on the periodic
                                        # evaluation of the metric (its opponent in train.evaluation.opponents)

Every problem is a :class:`~experiments.config.ConfigError` of one line, raised by
:func:`load_sweep` before any trial starts: unknown keys, a grid key that is not a field of the
base config, an empty grid, seeds that are not integers, an unknown metric, and any trial whose
config the base command would refuse (each trial's config is built and validated here).
"""
from __future__ import annotations

import dataclasses
import difflib
import itertools
import json
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from experiments.config import ConfigError, apply_overrides, read_yaml
from handfoot_env.config import check_seed

KINDS = ("experiment", "evaluate")
KEYS = ("name", "kind", "base", "description", "grid", "variants", "search", "seeds", "overrides", "metric",
        "resources", "retries", "scheduler")
#: keys of the base config that the sweep sets for every trial
SWEEP_SET = {"experiment": ("seed", "run_dir", "train.seed", "train.run_dir", "train.run_name", "train.resume"),
             "evaluate": ("seed", "out")}
METRICS = ("win_rate", "adp")
SEARCHERS = ("random",)
SCHEDULERS = ("asha", "fifo")
SPACE_KINDS = ("uniform", "loguniform", "randint", "choice")
MAX_TRIALS = 100_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=+,-]*$")


@dataclass(frozen=True)
class Metric:
    """What a trial is scored by: ``win_rate`` or ``adp``, against one opponent (``KIND:SPEC``).

    ``experiment``: the evaluated checkpoint (the best one when ``evaluation.model: both``)
    against ``SPEC``, one of ``evaluation.opponents`` (default: the first).  ``evaluate``: the
    first agent against ``SPEC`` (default: the other agent of a duel; in a round-robin its
    overall win rate).
    """

    kind: str = "win_rate"
    opponent: Optional[str] = None

    @property
    def name(self) -> str:
        return self.kind + (f":{self.opponent}" if self.opponent else "")

    @classmethod
    def parse(cls, text: Any) -> "Metric":
        if text is None:
            return cls()
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"metric: expected win_rate, adp, win_rate:SPEC or adp:SPEC, got {text!r}")
        kind, sep, spec = text.strip().partition(":")
        if kind not in METRICS or (sep and not spec.strip()):
            raise ConfigError(f"metric: unknown metric {text!r}; expected win_rate, adp, win_rate:SPEC or adp:SPEC")
        return cls(kind, spec.strip() or None)


@dataclass
class Variant:
    name: str
    overrides: Dict[str, Any]


@dataclass
class Trial:
    """One run of the sweep: a variant at one seed, in the run folder ``trials/NAME``."""

    variant: str
    seed: int
    overrides: Dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.variant}-s{self.seed}"


@dataclass
class Sweep:
    name: str
    kind: str
    base: Path
    variants: List[Variant]
    seeds: List[int]
    metric: Metric
    overrides: Dict[str, Any] = field(default_factory=dict)
    description: str = ""
    cpus: float = 1.0
    retries: int = 0
    scheduler: Optional[Dict[str, Any]] = None
    search: Optional[Dict[str, Any]] = None
    path: Optional[Path] = None

    def trials(self) -> List[Trial]:
        """Every trial, seed by seed (so that a sweep stopped early has every variant at its first seeds)."""
        return [Trial(v.name, s, {**self.overrides, **v.overrides}) for s in self.seeds for v in self.variants]

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "base": str(self.base), "description": self.description,
                "variants": {v.name: v.overrides for v in self.variants}, "seeds": self.seeds,
                "overrides": self.overrides, "metric": self.metric.name, "resources": {"cpus": self.cpus},
                "retries": self.retries, "scheduler": self.scheduler, "search": self.search}


# ------------------------------------------------------------------------------ dotted keys
def _config_class(kind: str) -> Any:
    if kind == "experiment":
        from experiments.apps.experiment import ExperimentConfig
        return ExperimentConfig
    from experiments.evaluation.harness import EvalConfig
    return EvalConfig


def check_key(kind: str, key: Any, where: str) -> str:
    """``key`` if it is a dotted field of the base config of ``kind``; ConfigError otherwise."""
    if not isinstance(key, str) or not key.strip():
        raise ConfigError(f"{where}: keys are dotted field names, got {key!r}")
    key = key.strip()
    if kind == "evaluate" and key == "deals":       # the plain name of EvalConfig.games, as in evaluation configs
        key = "games"
    if key in SWEEP_SET[kind]:
        raise ConfigError(f"{where}: {key!r} is set by the sweep for every trial (seeds: and the sweep folder)")
    cls: Any = _config_class(kind)
    parts = key.split(".")
    for i, part in enumerate(parts):
        origin = typing.get_origin(cls)
        if origin is typing.Union:
            cls = [a for a in typing.get_args(cls) if a is not type(None)][0]
            origin = typing.get_origin(cls)
        if cls is Any or origin in (dict, Dict):
            return key                               # a free mapping (train.batched, train.opponents, rules)
        if not dataclasses.is_dataclass(cls):
            raise ConfigError(f"{where}: {key!r} is not a field of the {kind} config "
                              f"({'.'.join(parts[:i])} is not a section)")
        hints = typing.get_type_hints(cls)
        if part not in hints:
            section = ".".join(parts[:i])
            fields = [f.name for f in dataclasses.fields(cls)]
            near = difflib.get_close_matches(part, fields, n=1, cutoff=0.75)
            hint = f"; did you mean {'.'.join(parts[:i] + near[:1])!r}?" if near else ""
            raise ConfigError(f"{where}: {key!r} is not a field of the {kind} config{hint} "
                              f"(fields{' of ' + section if section else ''}: {', '.join(fields)})")
        cls = hints[part]
    return key


def _set_args(overrides: Dict[str, Any]) -> List[str]:
    """Overrides as ``KEY=VALUE`` strings, the form of ``--set`` (:func:`experiments.config.apply_overrides`)."""
    return [f"{k}={json.dumps(v)}" for k, v in overrides.items()]


# ------------------------------------------------------------------------------ trial configs
def experiment_config(base: Path, overrides: Dict[str, Any], seed: int, run_dir: Optional[str] = None) -> Any:
    """The :class:`ExperimentConfig` of one trial, exactly as ``handfoot experiment`` builds it."""
    from experiments.apps.experiment import load_experiment_config
    sets = _set_args(overrides) + [f"seed={seed}"]
    if run_dir is not None:
        sets.append(f"run_dir={json.dumps(str(run_dir))}")
    return load_experiment_config(str(base), sets)


def evaluate_config(base: Path, overrides: Dict[str, Any], seed: int, out: Optional[str] = None) -> Any:
    """The :class:`EvalConfig` of one trial: the base evaluation config with the overrides, validated."""
    from experiments.evaluation.harness import EvalConfig, load_config
    cfg = load_config(base)
    data = apply_overrides(dataclasses.asdict(cfg), _set_args(overrides))
    data.update(seed=seed, out=out, progress=False)
    try:
        return EvalConfig(**data).validate()
    except TypeError as e:             # a key below a field that is not a mapping
        raise ConfigError(str(e)) from None


def trial_config(sweep: Sweep, trial: Trial) -> Any:
    if sweep.kind == "experiment":
        return experiment_config(sweep.base, trial.overrides, trial.seed)
    return evaluate_config(sweep.base, trial.overrides, trial.seed)


def check_metric(sweep: Sweep, cfg: Any, where: str) -> None:
    """The metric can be read from a trial of config ``cfg``; ConfigError otherwise."""
    m = sweep.metric
    if sweep.kind == "experiment":
        opps = list(cfg.evaluation.opponents)
        if m.opponent is not None and m.opponent not in opps:
            raise ConfigError(f"metric {m.name!r}: {m.opponent!r} is not one of {where}evaluation.opponents {opps}")
        return
    agents = list(cfg.agents)
    if m.opponent is not None and m.opponent not in agents[1:]:
        raise ConfigError(f"metric {m.name!r}: {m.opponent!r} is not one of {where}agents after the first {agents[1:]}")
    if m.opponent is None and m.kind == "adp" and len(agents) > 2:
        raise ConfigError(f"metric 'adp': a round-robin has no single ADP; name the opponent (adp:SPEC) {where}")


# ------------------------------------------------------------------------------ parsing
def _seeds(value: Any) -> List[int]:
    if isinstance(value, bool):
        raise ConfigError(f"seeds: expected a count or a list of integers, got {value!r}")
    if isinstance(value, int):
        if not 1 <= value <= MAX_TRIALS:
            raise ConfigError(f"seeds: a count must be between 1 and {MAX_TRIALS:,}, got {value}")
        return list(range(value))
    if not isinstance(value, list) or not value:
        raise ConfigError(f"seeds: expected a count or a non-empty list of integers, got {value!r}")
    out = []
    for s in value:
        try:
            out.append(check_seed(s, f"seeds: {s!r}:"))
        except ValueError as e:
            raise ConfigError(f"seeds: every seed must be an integer from 0 to 2**63-1, got {s!r}") from e
    if len(set(out)) != len(out):
        raise ConfigError(f"seeds: a seed is listed twice in {out}")
    return out


def _mapping(value: Any, where: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping, got {value!r}")
    return value


def _value_name(v: Any) -> str:
    s = v if isinstance(v, str) else json.dumps(v)
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", s).strip("_") or "x"


def _grid(kind: str, grid: Any) -> List[Variant]:
    grid = _mapping(grid, "grid")
    if not grid:
        raise ConfigError("grid: empty (give at least one dotted key with a list of values)")
    keys = []
    for k, vals in grid.items():
        keys.append(check_key(kind, k, "grid"))
        if not isinstance(vals, list) or not vals:
            raise ConfigError(f"grid.{k}: expected a non-empty list of values, got {vals!r}")
    variants = []
    for combo in itertools.product(*grid.values()):
        name = ",".join(f"{str(k).strip().split('.')[-1]}={_value_name(v)}" for k, v in zip(grid, combo))
        variants.append(Variant(name, dict(zip(keys, combo))))
    return variants


def _variants(kind: str, variants: Any) -> List[Variant]:
    variants = _mapping(variants, "variants")
    if not variants:
        raise ConfigError("variants: empty (give at least one name with its overrides, {} for the base config)")
    out = []
    for name, over in variants.items():
        if not isinstance(name, str) or not _NAME.match(name) or len(name) > 80:
            raise ConfigError(f"variants: {name!r} is not a usable name (letters, digits, _ . = + , -; it names "
                              f"run folders)")
        over = {} if over is None else _mapping(over, f"variants.{name}")
        out.append(Variant(name, {check_key(kind, k, f"variants.{name}"): v for k, v in over.items()}))
    return out


def _space_value(key: str, spec: Any, rng: np.random.Generator) -> Any:
    lo, hi = spec["range"]
    kind = spec["kind"]
    if kind == "uniform":
        return float(rng.uniform(lo, hi))
    if kind == "loguniform":
        return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
    if kind == "randint":
        return int(rng.integers(lo, hi + 1))
    return spec["values"][int(rng.integers(len(spec["values"])))]


def parse_space(kind: str, space: Any) -> Dict[str, Dict[str, Any]]:
    """``search.space``: dotted key -> ``{uniform|loguniform|randint: [lo, hi]}`` or ``{choice: [...]}``."""
    space = _mapping(space, "search.space")
    if not space:
        raise ConfigError("search.space: empty (give at least one dotted key with a range)")
    out: Dict[str, Dict[str, Any]] = {}
    for k, spec in space.items():
        field = check_key(kind, k, "search.space")
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in SPACE_KINDS:
            raise ConfigError(f"search.space.{k}: expected one of {{{': [...]}, {'.join(SPACE_KINDS)}: [...]}}, "
                              f"got {spec!r}")
        sk, val = next(iter(spec.items()))
        if sk == "choice":
            if not isinstance(val, list) or not val:
                raise ConfigError(f"search.space.{k}.choice: expected a non-empty list, got {val!r}")
            out[field] = {"kind": sk, "values": val, "range": (0, len(val) - 1)}
            continue
        ok = (isinstance(val, list) and len(val) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                              for x in val) and val[0] <= val[1])
        if ok and sk == "randint":
            ok = all(isinstance(x, int) for x in val)
        if ok and sk == "loguniform":
            ok = val[0] > 0
        if not ok:
            raise ConfigError(f"search.space.{k}.{sk}: expected [low, high] with low <= high"
                              f"{' (integers)' if sk == 'randint' else ''}{' (positive)' if sk == 'loguniform' else ''}"
                              f", got {val!r}")
        out[field] = {"kind": sk, "range": tuple(val)}
    return out


def _search(kind: str, search: Any) -> Tuple[Dict[str, Any], List[Variant]]:
    search = _mapping(search, "search")
    unknown = sorted(set(search) - {"algorithm", "samples", "seed", "space"})
    if unknown:
        raise ConfigError(f"search: unknown key {unknown[0]!r} (keys: algorithm, samples, seed, space)")
    algo = search.get("algorithm", "random")
    if algo not in SEARCHERS:
        raise ConfigError(f"search.algorithm: expected one of {', '.join(SEARCHERS)}, got {algo!r}")
    n = search.get("samples")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TRIALS:
        raise ConfigError(f"search.samples: the number of configurations to try, an integer from 1, got {n!r}")
    seed = search.get("seed", 0)
    try:
        seed = check_seed(seed, "search.seed")
    except ValueError as e:
        raise ConfigError(str(e)) from None
    space = parse_space(kind, search.get("space"))
    spec = {"algorithm": algo, "samples": n, "seed": seed, "space": search["space"]}
    if algo != "random":
        return spec, []                                   # sampled by the searcher as the sweep runs (Ray)
    rng = np.random.default_rng(seed)
    width = len(str(n - 1))
    variants = [Variant(f"sample-{i:0{width}d}", {k: _space_value(k, s, rng) for k, s in space.items()})
                for i in range(n)]
    return spec, variants


def _scheduler(value: Any) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    value = _mapping(value, "scheduler")
    name = value.get("name")
    if name not in SCHEDULERS:
        raise ConfigError(f"scheduler.name: expected one of {', '.join(SCHEDULERS)}, got {name!r}")
    allowed = {"name", "grace_period", "reduction_factor", "max_t"}
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ConfigError(f"scheduler: unknown key {unknown[0]!r} (keys: {', '.join(sorted(allowed))})")
    for k in ("grace_period", "max_t"):
        v = value.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ConfigError(f"scheduler.{k}: expected a positive integer (periodic evaluations), got {v!r}")
    rf = value.get("reduction_factor")
    if rf is not None and (isinstance(rf, bool) or not isinstance(rf, (int, float)) or rf <= 1):
        raise ConfigError(f"scheduler.reduction_factor: expected a number above 1, got {rf!r}")
    return dict(value)


def _resolve_base(base: Any, path: Optional[Path]) -> Path:
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"base: expected the path of the base config, got {base!r}")
    p = Path(base)
    if path is not None and not p.is_absolute() and (path.parent / p).is_file():
        p = path.parent / p
    if not p.is_file():
        raise ConfigError(f"base: {base!r}: no such file (relative to the sweep config or the working directory)")
    return p.resolve()


def sweep_from_dict(data: Any, path: Optional[Path] = None, check_trials: bool = True) -> Sweep:
    """A checked :class:`Sweep`; every trial's config is built and validated when ``check_trials``."""
    if not isinstance(data, dict):
        raise ConfigError(f"the sweep config must be a mapping of keys ({', '.join(KEYS)})")
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} (sweep keys: {', '.join(KEYS)})")
    kind = data.get("kind")
    if kind not in KINDS:
        raise ConfigError(f"kind: expected experiment or evaluate, got {kind!r}")
    name = data.get("name") or (path.stem if path is not None else "sweep")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"name: {name!r} is not a usable name (letters, digits, _ . = + , -)")
    if "base" not in data:
        raise ConfigError("base: missing (the experiment or evaluation config every trial starts from)")
    try:
        base = _resolve_base(data["base"], path)
    except ConfigError:
        if check_trials:
            raise
        base = Path(str(data["base"]))         # a summary written again needs only the trials' results
    if "seeds" not in data:
        raise ConfigError("seeds: missing (a count, or a list of integers)")
    seeds = _seeds(data["seeds"])
    given = [k for k in ("grid", "variants", "search") if k in data]
    if len(given) > 1:
        raise ConfigError(f"give one of grid, variants and search, not {' and '.join(given)}")
    search = None
    if "grid" in data:
        variants = _grid(kind, data["grid"])
    elif "variants" in data:
        variants = _variants(kind, data["variants"])
    elif "search" in data:
        search, variants = _search(kind, data["search"])
    else:
        variants = [Variant("base", {})]
    over = _mapping(data.get("overrides") or {}, "overrides")
    over = {check_key(kind, k, "overrides"): v for k, v in over.items()}
    desc = data.get("description") or ""
    if not isinstance(desc, str):
        raise ConfigError(f"description: expected text, got {desc!r}")
    res = _mapping(data.get("resources") or {}, "resources")
    if set(res) - {"cpus"}:
        raise ConfigError(f"resources: unknown key {sorted(set(res) - {'cpus'})[0]!r} (keys: cpus)")
    cpus = res.get("cpus", 1)
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not 0 < cpus <= 1024:
        raise ConfigError(f"resources.cpus: the CPUs one trial uses, a number above 0, got {cpus!r}")
    retries = data.get("retries", 0)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 100:
        raise ConfigError(f"retries: an integer from 0 to 100, got {retries!r}")
    sweep = Sweep(name=name, kind=kind, base=base, variants=variants, seeds=seeds,
                  metric=Metric.parse(data.get("metric")), overrides=over, description=desc.strip(),
                  cpus=float(cpus), retries=retries, scheduler=_scheduler(data.get("scheduler")), search=search,
                  path=path)
    if sweep.scheduler and sweep.kind != "experiment":
        raise ConfigError("scheduler: early stopping needs the periodic evaluation of kind: experiment")
    if len(sweep.variants) * len(seeds) > MAX_TRIALS:
        raise ConfigError(f"the sweep has {len(sweep.variants) * len(seeds):,} trials; at most {MAX_TRIALS:,}")
    if check_trials:
        check_sweep_trials(sweep)
    return sweep


def check_sweep_trials(sweep: Sweep) -> None:
    """Build every distinct trial config once (a seed changes nothing but the seed) and check the metric."""
    seed = sweep.seeds[0]
    variants = sweep.variants or [Variant("base", {})]
    for v in variants:
        where = f"variant {v.name!r}: " if len(variants) > 1 else ""
        try:
            cfg = trial_config(sweep, Trial(v.name, seed, {**sweep.overrides, **v.overrides}))
        except ValueError as e:
            raise ConfigError(f"{where}{e}") from None
        check_metric(sweep, cfg, where)
        if sweep.scheduler and sweep.scheduler.get("name") == "asha":
            opp = sweep.metric.opponent
            if opp is None or opp not in cfg.train.evaluation.opponents:
                raise ConfigError(f"scheduler: asha stops trials on the periodic evaluation of the metric; {where}"
                                  f"the metric needs an opponent (KIND:SPEC) that is in train.evaluation.opponents "
                                  f"{list(cfg.train.evaluation.opponents)}")


def load_sweep(path: Any, check_trials: bool = True) -> Sweep:
    """Read and check the sweep config at ``path`` (one-line ConfigError on any problem)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{path}: no such sweep config file")
    return sweep_from_dict(read_yaml(p), p, check_trials=check_trials)


__all__ = ["Metric", "Sweep", "Trial", "Variant", "load_sweep", "sweep_from_dict", "check_key",
           "experiment_config", "evaluate_config", "trial_config", "KEYS", "KINDS"]
