"""Minari datasets of the single-seat env: written episode by episode, read back as decisions.

A dataset is Minari's own (``minari.load_dataset(ID)``, ``iterate_episodes``, ``minari show ID``; it lies
under ``MINARI_DATASETS_PATH``, ``~/.minari/datasets`` by default) and holds episodes of
``handfoot_env:handfoot/SingleSeat-v0``, the env's spec inside (``dataset.recover_environment(seat=S)``
gives the single-seat env).  Per episode (one seat's episode, a whole game by default):

* ``observations``: the env's ``Box(float32, 170)`` after ``reset`` and after every step (T + 1 rows);
* ``actions``: the action ids taken (T); ``rewards``, ``terminations``, ``truncations``: the env's (T);
* ``infos`` (T + 1 rows, the same keys on every step): ``action_mask`` (``int8``, 705 entries: the
  legal actions of that observation; all zeros at the end), ``seat``, ``round`` (the game's round) and
  ``game`` (the game's number in the dataset: the episodes of one game's seats share it);
* episode metadata: ``seed`` (the ``reset`` seed) and ``options`` (``reset``'s options, records only),
  ``seat``, ``game``, ``seats`` (JSON: who played each seat: an agent spec or ``person``), ``scores``,
  ``team``, ``winner`` (-1: none), ``truncated`` (the last step's info), and ``decisions``.

The dataset's metadata holds Minari's fields and ``handfoot``: the rules, the agents per seat, the seeds,
the project's version and git commit, the env id and its keyword arguments, and the command.

Writing streams: each finished episode goes to disk (:class:`DatasetWriter`), so memory stays flat as a
collection grows; a writer that fails or is interrupted removes what it wrote.  Minari (the ``data``
extra) is imported at the top: this module is imported only by the dataset commands and ``backend: bc``.
"""
from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

try:
    import minari
    from minari.data_collector import EpisodeBuffer
    from minari.dataset.minari_dataset import parse_dataset_id
    from minari.storage import get_dataset_path
except ModuleNotFoundError as e:            # the data extra is not installed
    raise ModuleNotFoundError(f"datasets need the package {e.name!r} (the data extra: bash scripts/setup.sh data, "
                              f"or pip install 'handfoot[data]')", name=e.name) from None

import gymnasium as gym

from handfoot_env.actions import NUM_ACTIONS

#: the env a dataset's episodes come from (the module-qualified id: a reader need not import handfoot_env first)
ENV_ID = "handfoot_env:handfoot/SingleSeat-v0"
#: the keys of every step's info
INFO_KEYS = ("action_mask", "seat", "round", "game")
#: bytes of a packed mask row (:func:`decisions`)
MASK_BYTES = (NUM_ACTIONS + 7) // 8


def absolute_root() -> None:
    """``MINARI_DATASETS_PATH`` made absolute in this process (Minari sizes a dataset under a relative
    root by a path it doubles)."""
    root = os.environ.get("MINARI_DATASETS_PATH")
    if root and not os.path.isabs(root):
        os.environ["MINARI_DATASETS_PATH"] = os.path.abspath(root)


def check_new_id(dataset_id: str) -> Path:
    """The folder a new dataset ``dataset_id`` will take; a ValueError (one line) when the id is not
    Minari's form or the dataset exists already."""
    absolute_root()
    if not isinstance(dataset_id, str) or not dataset_id:
        raise ValueError("--id: a dataset id is needed, e.g. handfoot/strategic-v0")
    try:
        parse_dataset_id(dataset_id)
    except (ValueError, TypeError):       # Minari: a TypeError for an id with no version
        raise ValueError(f"--id {dataset_id}: not a Minari dataset id ((namespace/)name-vVERSION, e.g. "
                         f"handfoot/strategic-v0)") from None
    path = Path(get_dataset_path(dataset_id))
    if path.exists():
        raise ValueError(f"--id {dataset_id}: a dataset with this id exists already ({path}); choose another id "
                         f"or version, or delete it (minari delete {dataset_id})")
    return path


def load(dataset_id: str) -> Any:
    """``minari.load_dataset(dataset_id)``; a ValueError naming the id and where datasets are looked for."""
    absolute_root()
    try:
        parse_dataset_id(dataset_id)
    except (ValueError, TypeError):       # Minari: a TypeError for an id with no version
        raise ValueError(f"dataset {dataset_id!r}: not a Minari dataset id ((namespace/)name-vVERSION)") from None
    path = Path(get_dataset_path(dataset_id))
    if not (path / "data" / "metadata.json").is_file():
        raise ValueError(f"dataset {dataset_id!r}: not found ({path}; MINARI_DATASETS_PATH says where datasets are)")
    try:
        return minari.load_dataset(dataset_id)
    except Exception as e:  # noqa: BLE001 - a damaged or foreign dataset folder, in one line
        raise ValueError(f"dataset {dataset_id!r}: cannot be read ({type(e).__name__}: {e})") from None


def env_spec(env_kwargs: Dict[str, Any]) -> Any:
    """The Gymnasium spec of the single-seat env made with ``env_kwargs`` (its keyword arguments inside)."""
    env = gym.make(ENV_ID, **env_kwargs)
    try:
        return env.spec
    finally:
        env.close()


class DatasetWriter:
    """A new Minari dataset, written as episodes come (``with DatasetWriter(...) as w: w.add(...)``).

    Leaving the ``with`` block by an exception (Ctrl-C included) removes the dataset's folder: a
    dataset is there whole or not at all."""

    def __init__(self, dataset_id: str, env_kwargs: Dict[str, Any], description: str, algorithm: str):
        self.dataset_id = dataset_id
        self.path = check_new_id(dataset_id)
        self.env_kwargs = env_kwargs
        self.description = description
        self.algorithm = algorithm
        self.dataset: Any = None
        self.episodes = 0
        self.steps = 0

    def __enter__(self) -> "DatasetWriter":
        from handfoot_env import __version__
        spec = env_spec(self.env_kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # Minari's notes on the fields a dataset may leave out
            self.dataset = minari.create_dataset_from_buffers(
                self.dataset_id, [], env=spec, algorithm_name=self.algorithm, author="handfoot",
                author_email="", code_permalink=f"handfoot {__version__}", description=self.description,
                requirements=[f"handfoot=={__version__}"])
        return self

    def add(self, episodes: Sequence[Tuple[Any, Dict[str, Any]]]) -> None:
        """Append episodes (:class:`minari.data_collector.EpisodeBuffer`, metadata) to the dataset on disk."""
        if not episodes:
            return
        storage = self.dataset.storage
        storage.update_episodes([b for b, _ in episodes])
        first = self.episodes
        self.episodes += len(episodes)
        self.steps += sum(len(b.rewards) for b, _ in episodes)
        storage.update_episode_metadata([m for _, m in episodes], range(first, self.episodes))

    def finish(self, metadata: Dict[str, Any]) -> Any:
        """Write the dataset's ``handfoot`` metadata; the dataset as Minari loads it."""
        self.dataset.storage.update_metadata({"handfoot": metadata})
        return minari.load_dataset(self.dataset_id)

    def __exit__(self, kind, value, tb) -> None:
        if kind is not None and self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)


def episode_buffer(obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, terminations: np.ndarray,
                   truncations: np.ndarray, infos: Dict[str, np.ndarray], seed: Optional[int],
                   options: Optional[Dict[str, Any]] = None) -> Any:
    """One episode in Minari's form (arrays: T + 1 observations and infos, T of the rest)."""
    return EpisodeBuffer(id=None, seed=seed, options=options, observations=obs, actions=actions, rewards=rewards,
                         terminations=terminations, truncations=truncations, infos=infos)


def handfoot_metadata(dataset: Any) -> Dict[str, Any]:
    """The ``handfoot`` part of a dataset's metadata (empty for a dataset this project did not write)."""
    meta = dataset.storage.metadata.get("handfoot")
    return dict(meta) if isinstance(meta, dict) else {}


def decisions(dataset: Any, episodes: Optional[Iterable[int]] = None) -> Dict[str, np.ndarray]:
    """Every decision of the dataset's episodes (or of ``episodes``, by index) as arrays: ``obs``
    (float32, rows x observation), ``mask`` (the legal actions, packed: ``np.unpackbits(mask, axis=1,
    count=705)``), ``action`` (int64), ``legal`` (how many actions were legal) and ``episode`` (its index).

    A dataset that is not the single-seat env's (another observation size, a step info without
    ``action_mask``, an action its mask does not allow) is a ValueError naming the episode."""
    obs_l: List[np.ndarray] = []
    mask_l: List[np.ndarray] = []
    act_l: List[np.ndarray] = []
    ep_l: List[np.ndarray] = []
    legal_l: List[np.ndarray] = []
    ids = range(dataset.total_episodes) if episodes is None else list(episodes)
    for ep in dataset.iterate_episodes(ids):
        infos = ep.infos or {}
        if "action_mask" not in infos:
            raise ValueError(f"episode {ep.id}: its step infos have no action_mask (not a handfoot dataset)")
        n = len(ep.actions)
        obs = np.asarray(ep.observations, dtype=np.float32)[:n]
        mask = np.asarray(infos["action_mask"])[:n] > 0
        act = np.asarray(ep.actions, dtype=np.int64).reshape(-1)
        if mask.shape[1:] != (NUM_ACTIONS,) or obs.ndim != 2:
            raise ValueError(f"episode {ep.id}: masks of {mask.shape[1:]} entries (expected {NUM_ACTIONS})")
        if n and not mask[np.arange(n), act].all():
            k = int(np.flatnonzero(~mask[np.arange(n), act])[0])
            raise ValueError(f"episode {ep.id}: step {k}'s action {int(act[k])} is not legal under its mask")
        obs_l.append(obs)
        mask_l.append(np.packbits(mask, axis=1))
        act_l.append(act)
        legal_l.append(mask.sum(axis=1, dtype=np.int64))
        ep_l.append(np.full(n, ep.id, dtype=np.int64))
    if not act_l:
        raise ValueError("the dataset has no episodes")
    return {"obs": np.concatenate(obs_l), "mask": np.concatenate(mask_l), "action": np.concatenate(act_l),
            "legal": np.concatenate(legal_l), "episode": np.concatenate(ep_l)}


def metadata_json(value: Any) -> str:
    """A JSON string for an HDF5 attribute (lists of labels, dicts)."""
    return json.dumps(value, separators=(",", ":"))


__all__ = ["ENV_ID", "INFO_KEYS", "MASK_BYTES", "DatasetWriter", "check_new_id", "load", "env_spec", "episode_buffer",
           "handfoot_metadata", "decisions", "metadata_json"]
