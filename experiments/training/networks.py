"""Torch pieces the learners of the batched games share: MLPs, exported arrays, and the learner's
checkpoint file (network and Adam state as plain arrays, ``learner.npz``, no pickle)."""
from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch as th
from torch import nn

from experiments.config import ConfigError

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
LEARNER_FILE = "learner.npz"


def mlp(n_in: int, hidden: Sequence[int], activation: str) -> Tuple[nn.Sequential, int]:
    """Linear + activation layers of the ``hidden`` sizes; the module and its output width."""
    layers: List[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(n_in, int(h)), ACTIVATIONS[activation]()]
        n_in = int(h)
    return nn.Sequential(*layers), n_in


def resolve_device(name: str) -> th.device:
    """The torch device of ``batched.device``: ``cpu``, ``cuda``, or ``auto`` (CUDA when torch sees a GPU)."""
    if name == "auto":
        return th.device("cuda" if th.cuda.is_available() else "cpu")
    if name == "cuda" and not th.cuda.is_available():
        raise ConfigError("batched.device: cuda, but torch sees no GPU (a CPU build of torch, or no driver); "
                          "use auto or cpu")
    return th.device(name)


def to_array(t: th.Tensor) -> np.ndarray:
    """A float32 NumPy copy of a tensor (exported weights)."""
    return t.detach().cpu().numpy().astype(np.float32).copy()


def learner_state(model: nn.Module, optimizer: th.optim.Optimizer, n_updates: int) -> Dict[str, np.ndarray]:
    """Model parameters and Adam state as plain arrays (``np.savez``; load with allow_pickle=False)."""
    out = {f"model/{k}": v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    for i, st in optimizer.state_dict()["state"].items():
        for k, v in st.items():
            out[f"adam/{i}/{k}"] = v.detach().cpu().numpy() if th.is_tensor(v) else np.asarray(v)
    out["n_updates"] = np.asarray(n_updates, np.int64)
    return out


def load_learner_state(model: nn.Module, optimizer: th.optim.Optimizer, arrays: Dict[str, np.ndarray]) -> int:
    """Load what :func:`learner_state` wrote into ``model`` and ``optimizer``; the number of updates."""
    sd = {k[len("model/"):]: th.from_numpy(np.array(v)) for k, v in arrays.items() if k.startswith("model/")}
    model.load_state_dict(sd)
    opt = optimizer.state_dict()
    state: Dict[int, Dict[str, Any]] = {}
    for k, v in arrays.items():
        if k.startswith("adam/"):
            _, i, name = k.split("/")
            state.setdefault(int(i), {})[name] = th.from_numpy(np.array(v))
    opt["state"] = state
    optimizer.load_state_dict(opt)
    return int(arrays["n_updates"])


def save_learner_file(folder: Path, model: nn.Module, optimizer: th.optim.Optimizer, n_updates: int) -> None:
    """Write ``folder/learner.npz`` (:func:`learner_state`)."""
    with open(folder / LEARNER_FILE, "wb") as f:
        np.savez(f, **learner_state(model, optimizer, n_updates))


def load_learner_file(folder: Path, model: nn.Module, optimizer: th.optim.Optimizer) -> int:
    """Load ``folder/learner.npz`` into ``model`` and ``optimizer``; the number of updates.  A file
    that does not fit (another network or learner) is one ConfigError."""
    path = folder / LEARNER_FILE
    try:
        with np.load(path, allow_pickle=False) as z:
            return load_learner_state(model, optimizer, {k: z[k] for k in z.files})
    except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"resume: {str(path)!r} does not fit this config (network or learner "
                          f"settings changed?): {first}") from None


class TorchLearner:
    """What the learners of the batched games share (``model``, ``optimizer``, ``n_updates``):
    their checkpoint file, their seeds' description, nothing to close."""

    title = "learner"
    model: nn.Module
    optimizer: th.optim.Optimizer
    n_updates: int = 0
    device: th.device = th.device("cpu")

    def restore(self, folder: Optional[Path]) -> None:
        """Load ``folder/learner.npz`` (a checkpoint to resume), if any."""
        if folder is not None:
            self.n_updates = load_learner_file(folder, self.model, self.optimizer)

    def describe(self, info: Dict[str, Any]) -> str:
        info["seeds"]["torch/minibatches"] = info["seeds"].pop("python/numpy/torch")
        info["learner_device"] = str(self.device)
        if self.device.type == "cuda":
            info["learner_gpu"] = th.cuda.get_device_name(self.device)
            return f"{self.title} (learner on {info['learner_gpu']})"
        return self.title

    def save(self, folder: Path) -> Dict[str, Any]:
        save_learner_file(folder, self.model, self.optimizer, self.n_updates)
        return {}

    def close(self) -> None:
        pass


__all__ = ["TorchLearner", "ACTIVATIONS", "LEARNER_FILE", "mlp", "to_array", "resolve_device", "learner_state",
           "load_learner_state",
           "save_learner_file", "load_learner_file"]
