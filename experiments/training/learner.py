"""What a training backend is: a learner behind the :class:`~experiments.training.trainer.Trainer`.

The trainer owns a run's schedule (iterations, snapshots, evaluation, checkpoints, metrics rows,
TensorBoard, resume seeds, Ctrl-C, the end of the run); a learner owns a network and how it learns.
A learner is any object with the methods of :class:`Learner` (a :class:`typing.Protocol`: no base
class to inherit), in one of two families:

* :class:`RolloutLearner` (``family="rollout"``: ``batched``, ``dmc``): learns from rollouts of
  the batched games.  The trainer owns the sampler group
  (:class:`experiments.training.sampler.SamplerGroup`), asks it for ``rollout_size`` learner
  decisions played by :meth:`Learner.actor` and hands each rollout to :meth:`RolloutLearner.update`.
* :class:`SamplingLearner` (``family="sampling"``: ``sb3``, ``rllib``): brings its own way of
  playing (SB3 vector envs, RLlib env runners); :meth:`SamplingLearner.iterate` plays one rollout
  and updates once.

Backends are found by name in one registry: :func:`register_backend` adds one (a ``module:Class``
path, imported only when a run uses it, so a ``batched`` run imports neither SB3 nor Ray), and
``backend: NAME`` in a training config picks it.  The project's own four are registered by
:mod:`experiments.training.backends` (above the learners it names, so that no learner's import of
this module makes a circle); look backends up there.  The recipe for a new learner is in
docs/architecture.md; tests/test_learner_plugin.py registers a minimal one.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union, runtime_checkable

from experiments.config import ConfigError


@dataclass
class RunContext:
    """What a learner sees of the run it is part of: not the trainer (as SB3's callbacks see the
    locals they are handed, not the algorithm).  The trainer makes one per session."""

    seed: int
    """The session's seed (:func:`experiments.training.trainer.resume_seed`): the learner seeds torch,
    its minibatch order and its own games from it."""
    resume: Optional[Path] = None
    """The checkpoint folder the session continues from (None: a new run); the learner reads its own files there."""
    timesteps: int = 0
    """Learner decisions already made: at the checkpoint when :meth:`Learner.setup` runs, then kept
    current by the trainer after each iteration (a learner's schedules read it, e.g. ``ppo.anneal_lr``)."""
    quiet: bool = False
    """No progress or messages."""
    state: Dict[str, Any] = field(default_factory=dict)
    """The run's state that every checkpoint saves in ``trainer.json``: a learner may keep counters of
    its own here (RLlib: ``env_steps``, ``next_slot``); the trainer's keys are not the learner's to change."""
    snapshots: List[Dict[str, Any]] = field(default_factory=list)
    """The trainer-kept snapshot pool (loaded from the checkpoint); a learner that reads an older
    checkpoint's own pool puts it here in :meth:`Learner.setup`."""
    stopping: Callable[[], bool] = lambda: False
    """Whether Ctrl-C asked the run to stop (a sampling learner ends its rollout early)."""
    samplers_busy: Callable[[], bool] = lambda: False
    """Whether a sampler process is playing right now (a rollout in flight; the learner then leaves
    the second core to it)."""


@dataclass
class Iteration:
    """What one rollout and update of a learner gave the trainer (it writes the metrics rows)."""

    decisions: int
    """Learner decisions (timesteps) the rollout added."""
    games: List[Dict[str, Any]] = field(default_factory=list)
    """Training games that ended: ``opponent`` (kind), ``result`` (+1/0/-1), ``score_diff``, ``truncated``."""
    episodes: List[Tuple[float, int]] = field(default_factory=list)
    """Ended seat episodes: (return, length); the trainer averages the last 100."""
    update: Dict[str, float] = field(default_factory=dict)
    """Statistics of the update (SB3's ``train/*`` names); empty: no update row."""
    rollout: Dict[str, Any] = field(default_factory=dict)
    """Extra fields of the rollout row (they replace the trainer's own of the same name)."""
    scalars: Dict[str, float] = field(default_factory=dict)
    """Extra TensorBoard scalars (tag: value) at this step."""


@runtime_checkable
class Learner(Protocol):
    """The methods every learner has (see the module docstring)."""

    def setup(self, run: RunContext, checkpoint: Optional[Dict[str, Any]]) -> None:
        """Build the network (and, for a sampling learner, its envs), seeded from ``run.seed``;
        ``checkpoint``: the ``trainer.json`` of the checkpoint ``run.resume`` to continue from
        (the learner reads its own files there; a file that does not fit the config is a ConfigError)."""

    def actor(self) -> Dict[str, Any]:
        """The current policy as NumPy weights (:func:`agents.policy.save_actor`'s format): it is
        evaluated, frozen into snapshots and saved as ``actor.npz``."""

    def save(self, folder: Path) -> Dict[str, Any]:
        """Write the learner's own checkpoint files into ``folder``; fields to add to ``trainer.json``."""

    def describe(self, info: Dict[str, Any]) -> str:
        """Complete the session's provenance ``info`` (``run.json``); a short phrase for the log line."""

    def close(self) -> None:
        """Stop processes and actors; called once, also after an error."""


@runtime_checkable
class RolloutLearner(Learner, Protocol):
    """A learner of the batched games: the trainer plays, the learner updates."""

    rollout_size: int
    """Learner decisions per rollout."""

    def sampler_options(self) -> Dict[str, Any]:
        """Keyword arguments for the samplers that depend on the learner (e.g. ``epsilon``,
        ``centralised_critic``, ``shaping_books``); the trainer adds the rest."""

    def update(self, batch: Dict[str, Any]) -> Dict[str, float]:
        """Learn from one rollout (:meth:`experiments.training.sampler.Sampler.rollout`'s arrays);
        the update's statistics (empty: no update was made)."""


@runtime_checkable
class SamplingLearner(Learner, Protocol):
    """A learner that plays its own rollouts."""

    own_snapshots: bool
    """True: the learner keeps its snapshot pool itself (:meth:`freeze_snapshot`); False: the
    trainer keeps it and passes it to :meth:`iterate` when it changed."""

    def iterate(self, remaining: int, snapshots: Optional[List[Dict[str, Any]]]) -> Optional[Iteration]:
        """One rollout and one update (``remaining``: decisions left in the run; ``snapshots``: the
        pool when it changed, else None).  None when Ctrl-C (``run.stopping()``) cut the rollout: the
        learner is then as it was after its last update."""


@dataclass(frozen=True)
class Backend:
    """One entry of the registry."""

    name: str
    target: Union[str, Callable[..., Any]]
    """``module:Class`` (imported when a run uses it) or a callable; called with the TrainConfig."""
    family: str
    """``rollout`` or ``sampling`` (see the module docstring)."""
    validate: Optional[Union[str, Callable[[Any], None]]] = None
    """Check the config fields that matter to this backend (ConfigError naming the field)."""
    description: str = ""

    def load(self, what: Union[str, Callable[..., Any], None]) -> Any:
        if what is None or callable(what):
            return what
        module, _, attr = what.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as e:
            extra = {"ray": "ray", "minari": "data", "h5py": "data"}.get((e.name or "").split(".")[0])
            hint = f" (pip install 'handfoot[{extra}]')" if extra else ""
            raise ConfigError(f"backend: {self.name} needs the package {e.name!r} (not installed){hint}") from None

    def factory(self) -> Callable[..., Any]:
        """The learner class (or callable); importing its module here, a missing package is a ConfigError."""
        return self.load(self.target)

    def create(self, cfg: Any) -> Any:
        """A learner for ``cfg`` (nothing built yet: :meth:`Learner.setup` does that)."""
        return self.factory()(cfg)

    def check(self, cfg: Any) -> None:
        fn = self.load(self.validate)
        if fn is not None:
            fn(cfg)


FAMILIES = ("rollout", "sampling")
_REGISTRY: Dict[str, Backend] = {}


def register_backend(name: str, target: Union[str, Callable[..., Any]], family: str,
                     validate: Optional[Union[str, Callable[[Any], None]]] = None, description: str = "") -> Backend:
    """Make ``backend: name`` train with ``target`` (``module:Class`` or a callable taking the TrainConfig)."""
    if family not in FAMILIES:
        raise ValueError(f"family: expected one of {', '.join(FAMILIES)}, got {family!r}")
    _REGISTRY[name] = Backend(name, target, family, validate, description)
    return _REGISTRY[name]


def unregister_backend(name: str) -> None:
    _REGISTRY.pop(name, None)


def backend(name: str) -> Backend:
    """The registry entry of ``name`` (KeyError if there is none; configs check names first)."""
    return _REGISTRY[name]


def backend_names() -> Tuple[str, ...]:
    return tuple(_REGISTRY)


__all__ = ["RunContext", "Iteration", "Learner", "RolloutLearner", "SamplingLearner", "Backend", "register_backend",
           "unregister_backend", "backend", "backend_names"]
