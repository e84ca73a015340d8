"""``rllib:PATH`` agents: checkpoints of the RLlib backend played in NumPy.

The RLlib backend (:mod:`experiments.training.rllib`) trains the torch
``RLModule`` :class:`experiments.training.rllib_module.MaskedActorCritic`:

* input: the env's ``Dict(observation=Box(170), action_mask=Box(705))``;
  the observation is multiplied by the same fixed per-index scale as the SB3
  backend's network (:func:`handfoot_env.observation.observation_scale`), held as a
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
MultiRLModule folder or a single RLModule folder.  The agent reads the learner's
actor from the checkpoint's ``actor.npz`` (arrays only, written by the RLlib
backend next to ``algorithm/``); without one (another module such as
``@snapshot_0``, or a checkpoint written by RLlib itself) it reads the module's
``module_state.pkl``, a pickle, which is loaded only with ``HANDFOOT_TRUST_PICKLE=1``
(:mod:`agents.files`).  It plays the actor in NumPy with :class:`agents.policy.PolicyAgent`,
exactly like a ``policy:PATH`` agent (greedy over the legal actions; ``?sample``
samples from the masked softmax), so playing a checkpoint needs neither a Ray
cluster nor torch.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Dict, Optional, Union

import numpy as np

from agents.files import latest_checkpoint, require_trust
from agents.policy import ACTOR_FILE, PolicyAgent, load_actor
from handfoot_env.observation import observation_scale

#: logit given to illegal actions (finite, so 0 * logit stays 0 in entropy and KL terms)
MASKED_LOGIT = -1e9
LEARNER = "learner"
MODULE_STATE = "module_state.pkl"


def input_scale(n_obs: int, players: int = 4, teams: int = 2) -> np.ndarray:
    """The fixed per-index input scale of every learner (:func:`handfoot_env.observation.observation_scale`)."""
    s = observation_scale(players, teams)
    if s.shape == (n_obs,):
        return s
    raise ValueError(f"observation size {n_obs} does not match {players} players / {teams} teams "
                     f"(model_config players/teams)")


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
    latest = latest_checkpoint(p / "checkpoints")
    if latest is not None:
        subs.append(latest)
    for sub in subs:
        if sub.is_dir():
            try:
                return find_module_dir(sub, module_id)
            except FileNotFoundError:
                continue
    raise FileNotFoundError(
        f"no RLlib module {module_id!r} found under {str(path)!r} (expected an RLlib run folder, an Algorithm "
        f"checkpoint or an RLModule folder holding {MODULE_STATE})")


def find_actor_file(path: Union[str, Path]) -> Optional[Path]:
    """The ``actor.npz`` of the learner under ``path`` (a checkpoint folder of the RLlib backend, or a
    run folder: its ``best``, ``final`` or latest checkpoint), or None."""
    p = Path(path).expanduser()
    if not p.is_dir():
        return None
    subs = [p, p / "best", p / "final"]
    latest = latest_checkpoint(p / "checkpoints")
    if latest is not None:
        subs.append(latest)
    for sub in subs:
        if (sub / ACTOR_FILE).is_file():
            return sub / ACTOR_FILE
    return None


def load_module_weights(path: Union[str, Path], module_id: str = LEARNER) -> Dict[str, Any]:
    """The actor of a saved :class:`MaskedActorCritic` in ``NumpyPolicy``'s weight format.

    The learner comes from the checkpoint's ``actor.npz`` when it has one; anything else is read
    from ``module_state.pkl``, only with ``HANDFOOT_TRUST_PICKLE=1``.
    """
    if module_id == LEARNER:
        actor = find_actor_file(path)
        if actor is not None:
            return load_actor(actor)
    d = find_module_dir(path, module_id)
    require_trust(d / MODULE_STATE, "an RLlib module_state.pkl")
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


__all__ = ["MASKED_LOGIT", "LEARNER", "find_module_dir", "find_actor_file", "load_module_weights", "actor_weights",
           "load_rllib_agent", "input_scale"]
