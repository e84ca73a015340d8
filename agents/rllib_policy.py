"""RLlib (Ray) policies: the action-masking RLModule and ``rllib:PATH`` agents.

:class:`MaskedActorCritic` is the torch ``RLModule`` that the RLlib backend
(:mod:`experiments.rllib_backend`) trains with PPO on RLlib's new API stack.
It is written here from RLlib's public ``TorchRLModule`` / ``ValueFunctionAPI``
/ ``InferenceOnlyAPI`` interfaces (not RLlib's example masking module, which
subclasses a deprecated class):

* input: the env's ``Dict(observation=Box(170), action_mask=Box(705))``;
  the observation is multiplied by the same fixed per-index scale as the SB3
  backend's network (``experiments.selfplay.observation_scale``), held as a
  buffer so a checkpoint carries it;
* actor: an MLP (``hidden`` sizes, ``tanh`` or ``relu``) -> 705 logits; the
  logits of illegal actions are replaced by ``MASKED_LOGIT`` in *every* forward
  pass (exploration on the env runners, inference, and the learner's training
  pass), so sampling, log-probabilities, entropy and the PPO ratio are all
  computed over the legal actions only;
* critic: a separate MLP -> one value (``ValueFunctionAPI.compute_values``);
  it is dropped on the env runners (``InferenceOnlyAPI``), which only need the
  actor.

``rllib:PATH`` agents (:func:`load_rllib_agent`, used by ``agents.registry``)
play a checkpoint written by the RLlib backend.  ``PATH`` may be a run folder
(its ``checkpoints/final`` or newest checkpoint), an Algorithm checkpoint, a
MultiRLModule folder or a single RLModule folder.  The agent reads the module's
weights from the checkpoint's ``module_state.pkl`` (a pickled dict of NumPy
arrays) and plays the actor in NumPy with :class:`agents.policy.PolicyAgent`,
exactly like a ``policy:PATH`` agent (greedy over the legal actions; ``?sample``
samples from the masked softmax), so playing a checkpoint needs neither a Ray
cluster nor torch.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np

#: logit given to illegal actions (finite, so 0 * logit stays 0 in entropy and KL terms)
MASKED_LOGIT = -1e9
LEARNER = "learner"
MODULE_STATE = "module_state.pkl"


# ----------------------------------------------------------------------------- the RLModule
def _module_class():
    """Build the RLModule class (Ray and torch are imported only when it is needed)."""
    import torch
    from torch import nn
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule

    def mlp(n_in: int, hidden: List[int], act: str) -> nn.Sequential:
        layers: List[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(n_in, h), nn.ReLU() if act == "relu" else nn.Tanh()]
            n_in = h
        return nn.Sequential(*layers)

    class MaskedActorCritic(TorchRLModule, ValueFunctionAPI, InferenceOnlyAPI):
        """Masked actor-critic MLP for Hand and Foot (see the module docstring).

        ``model_config``: ``hidden`` (list of ints, default [256, 256]),
        ``vf_hidden`` (default: ``hidden``), ``activation`` (``tanh``/``relu``),
        ``players``/``teams`` (to build the input scale; default 4/2).
        """

        def setup(self):
            cfg = dict(self.model_config or {})
            hidden = [int(h) for h in cfg.get("hidden", [256, 256])]
            vf_hidden = [int(h) for h in (cfg.get("vf_hidden") or hidden)]
            act = str(cfg.get("activation", "tanh"))
            if act not in ("tanh", "relu"):
                raise ValueError(f"activation must be tanh or relu, got {act!r}")
            space = self.observation_space
            obs_space = space["observation"] if hasattr(space, "spaces") else space
            n_obs = int(obs_space.shape[0])
            n_act = int(self.action_space.n)
            scale = input_scale(n_obs, int(cfg.get("players", 4)), int(cfg.get("teams", 2)))
            self.register_buffer("obs_scale", torch.as_tensor(scale))
            # the activation travels in the state too, so NumPy players need no Ray to read the config
            self.register_buffer("activation_relu", torch.tensor(1.0 if act == "relu" else 0.0))
            self.pi = mlp(n_obs, hidden, act)
            self.pi_out = nn.Linear(hidden[-1] if hidden else n_obs, n_act)
            # small initial logits: a near-uniform policy over the legal actions
            nn.init.orthogonal_(self.pi_out.weight, gain=0.01)
            nn.init.zeros_(self.pi_out.bias)
            if not self.inference_only:
                self.vf = mlp(n_obs, vf_hidden, act)
                self.vf_out = nn.Linear(vf_hidden[-1] if vf_hidden else n_obs, 1)
            self._masked = float(MASKED_LOGIT)

        def get_non_inference_attributes(self) -> List[str]:
            return ["vf", "vf_out"]

        def _split(self, batch):
            obs = batch[Columns.OBS]
            return obs["observation"].float() * self.obs_scale, obs["action_mask"]

        def _forward(self, batch, **kwargs):
            x, mask = self._split(batch)
            logits = self.pi_out(self.pi(x))
            legal = mask > 0
            logits = torch.where(legal, logits, torch.full_like(logits, self._masked))
            return {Columns.ACTION_DIST_INPUTS: logits}

        def compute_values(self, batch, embeddings=None):
            x, _ = self._split(batch)
            return self.vf_out(self.vf(x)).squeeze(-1)

    MaskedActorCritic.__module__ = __name__
    MaskedActorCritic.__qualname__ = "MaskedActorCritic"
    return MaskedActorCritic


def input_scale(n_obs: int, players: int = 4, teams: int = 2) -> np.ndarray:
    """The SB3 backend's fixed per-index input scale (``experiments.selfplay.observation_scale``)."""
    try:
        from experiments.selfplay import observation_scale
        s = np.asarray(observation_scale(players, teams), dtype=np.float32)
        if s.shape == (n_obs,):
            return s
    except ImportError:  # pragma: no cover - SB3 backend absent
        return np.ones(n_obs, dtype=np.float32)
    raise ValueError(f"observation size {n_obs} does not match {players} players / {teams} teams "
                     f"(model_config players/teams)")


_CLASS = None


def __getattr__(name: str):
    # ``MaskedActorCritic`` is built on first access so that importing this module
    # (e.g. to play a checkpoint with NumPy) does not import Ray.
    global _CLASS
    if name == "MaskedActorCritic":
        if _CLASS is None:
            _CLASS = _module_class()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def module_spec(observation_space, action_space, model_config: Dict[str, Any]):
    """``RLModuleSpec`` of :class:`MaskedActorCritic` for the given spaces."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    return RLModuleSpec(module_class=__getattr__("MaskedActorCritic"), observation_space=observation_space,
                        action_space=action_space, model_config=dict(model_config))


# ----------------------------------------------------------------------------- checkpoints
def find_module_dir(path: Union[str, Path], module_id: str = LEARNER) -> Path:
    """The RLModule folder (holding ``module_state.pkl``) of ``module_id`` under ``path``.

    ``path`` may be an RLlib-backend run folder (its ``best`` checkpoint, else
    ``final``, else the latest periodic one, like ``policy:PATH``), one of its
    checkpoint folders (``algorithm/`` inside), an RLlib Algorithm checkpoint,
    a MultiRLModule folder or an RLModule folder.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"rllib checkpoint {str(path)!r} does not exist")
    if (p / MODULE_STATE).is_file():
        return p
    for c in (p / "learner_group" / "learner" / "rl_module" / module_id, p / "rl_module" / module_id, p / module_id):
        if (c / MODULE_STATE).is_file():
            return c
    subs = [p / "algorithm", p / "best", p / "final"]
    latest = p / "checkpoints" / "latest.txt"
    if latest.is_file():
        subs.append(p / "checkpoints" / latest.read_text().strip())
    for sub in subs:
        if sub.is_dir():
            try:
                return find_module_dir(sub, module_id)
            except FileNotFoundError:
                continue
    raise FileNotFoundError(
        f"no RLlib module {module_id!r} found under {str(path)!r} (expected an RLlib run folder, an Algorithm "
        f"checkpoint or an RLModule folder holding {MODULE_STATE})")


def load_module_weights(path: Union[str, Path], module_id: str = LEARNER) -> Dict[str, Any]:
    """The actor of a saved :class:`MaskedActorCritic` in ``NumpyPolicy``'s weight format."""
    d = find_module_dir(path, module_id)
    with open(d / MODULE_STATE, "rb") as f:
        state = pickle.load(f)
    return actor_weights(state, {} if "activation_relu" in state else _read_model_config(d))


def _read_model_config(d: Path) -> Dict[str, Any]:
    """The module's model_config from its ``class_and_ctor_args.pkl`` (needs Ray), else {}."""
    f = d / "class_and_ctor_args.pkl"
    if not f.is_file():
        return {}
    try:
        with open(f, "rb") as fh:
            info = pickle.load(fh)
        kwargs = info.get("ctor_args_and_kwargs", ((), {}))[1]
        mc = kwargs.get("model_config") or {}
        return dict(mc) if isinstance(mc, dict) else {}
    except Exception:
        return {}


def actor_weights(state: Dict[str, Any], model_config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Convert a MaskedActorCritic state dict (NumPy or torch) to ``NumpyPolicy`` weights."""
    def arr(v):
        if hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        return np.asarray(v, dtype=np.float32)

    cfg = dict(model_config or {})
    if "activation_relu" in state:
        cfg["activation"] = "relu" if float(arr(state["activation_relu"])) > 0.5 else "tanh"
    layers = []
    i = 0
    while f"pi.{i}.weight" in state:
        layers.append((arr(state[f"pi.{i}.weight"]), arr(state[f"pi.{i}.bias"])))
        i += 2
    scale = arr(state["obs_scale"])
    return {"scale": scale, "visible": int(scale.shape[0]), "layers": layers,
            "activation": str(cfg.get("activation", "tanh")),
            "out": (arr(state["pi_out.weight"]), arr(state["pi_out.bias"]))}


# ----------------------------------------------------------------------------- the agent
def load_rllib_agent(path: str, seed: int = 0, module_id: str = LEARNER):
    """An agent playing the RLlib checkpoint at ``path`` (spec ``rllib:PATH``).

    Like ``policy:PATH`` agents (:class:`agents.policy.PolicyAgent`, which plays
    it): greedy over the legal actions by default; append ``?sample`` to sample
    from the masked softmax (seeded by ``reset``), and ``@MODULE`` before it to
    play another module of the checkpoint (e.g. ``@snapshot_0``).
    """
    from agents.policy import PolicyAgent

    spec = str(path)
    sample = False
    if spec.endswith("?sample"):
        spec, sample = spec[:-len("?sample")], True
    if "@" in spec and not Path(spec).exists():
        spec, module_id = spec.rsplit("@", 1)
    if not spec:
        raise ValueError("agent spec 'rllib:PATH' needs a path to an RLlib run folder or checkpoint")
    weights = load_module_weights(spec, module_id)
    return PolicyAgent(weights, seed=seed, sample=sample, name=f"rllib:{path}")


__all__ = ["MASKED_LOGIT", "LEARNER", "module_spec", "find_module_dir", "load_module_weights", "actor_weights",
           "load_rllib_agent", "input_scale"]
