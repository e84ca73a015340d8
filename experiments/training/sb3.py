"""The SB3 backend's model: MaskablePPO with the project's input scale and network sizes.

:class:`HandFootPolicy` is sb3-contrib's masked actor-critic with a fixed input
scale (:func:`handfoot_env.observation.observation_scale`) as its features
extractor (and, with a centralised critic, an actor that sees only the seat's
observation); :func:`build_model` builds the MaskablePPO of a training config.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from experiments.training.config import TrainConfig
from handfoot_env.config import load_rules
from handfoot_env.observation import (
    observation_scale,
    observation_size,
)


def build_model(cfg: TrainConfig, venv, seed: int):
    r = load_rules(cfg.rules)
    scale = observation_scale(r.players, r.teams, with_state=cfg.network.centralised_critic)
    fek: Dict[str, Any] = {"scale": scale.tolist()}
    if cfg.network.centralised_critic:
        fek["actor_visible"] = observation_size(r.players, r.teams)
    p = cfg.ppo
    policy_kwargs = dict(net_arch=dict(pi=list(cfg.network.pi), vf=list(cfg.network.vf)),
                         activation_fn=ACTIVATIONS[cfg.network.activation], ortho_init=cfg.network.ortho_init,
                         features_extractor_kwargs=fek)
    th.set_num_threads(cfg.torch_threads)
    return MaskablePPO(HandFootPolicy, venv, learning_rate=p.learning_rate, n_steps=p.n_steps,
                       batch_size=p.batch_size, n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda,
                       clip_range=p.clip_range, ent_coef=p.ent_coef, vf_coef=p.vf_coef,
                       max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
                       normalize_advantage=p.normalize_advantage, policy_kwargs=policy_kwargs, seed=seed,
                       device="cpu", verbose=0)


ACTIVATIONS = {"tanh": th.nn.Tanh, "relu": th.nn.ReLU}


class ScaledObservation(BaseFeaturesExtractor):
    """Multiplies the flat input by a fixed scale; zeroes inputs past ``visible`` (actor of a centralised critic)."""

    def __init__(self, observation_space: spaces.Box, scale: Sequence[float], visible: Optional[int] = None):
        n = int(observation_space.shape[0])
        super().__init__(observation_space, features_dim=n)
        s = th.as_tensor(np.asarray(scale, dtype=np.float32))
        if visible is not None:
            s = s.clone()
            s[int(visible):] = 0.0
        self.register_buffer("scale", s)
        self.visible = n if visible is None else int(visible)

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return observations * self.scale


class HandFootPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP actor-critic with :class:`ScaledObservation` inputs.

    ``features_extractor_kwargs`` must hold ``scale``; with ``actor_visible`` set
    (centralised critic) the actor's extractor hides the inputs past that index
    and the critic gets its own extractor that sees everything.
    """

    def __init__(self, *args, **kwargs):
        fek = dict(kwargs.get("features_extractor_kwargs") or {})
        self._actor_visible = fek.pop("actor_visible", None)
        kwargs["features_extractor_kwargs"] = fek
        kwargs["features_extractor_class"] = ScaledObservation
        kwargs["share_features_extractor"] = self._actor_visible is None
        self._extractors_made = 0
        super().__init__(*args, **kwargs)

    def make_features_extractor(self) -> BaseFeaturesExtractor:
        visible = self._actor_visible if self._extractors_made == 0 else None
        self._extractors_made += 1
        return ScaledObservation(self.observation_space, visible=visible, **self.features_extractor_kwargs)




# ----------------------------------------------------------------------------- model state without pickle
def model_state(model) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
    """The trainable state of a MaskablePPO model as arrays and JSON: ``(arrays, meta)``.

    ``arrays`` holds the policy's state dict (``policy/NAME``) and the optimizer's per-parameter
    state (``optim/INDEX/NAME``); ``meta`` the optimizer's parameter groups and the update count.
    Together with the training config they restore the model (:func:`load_model_state`) without
    reading SB3's pickled ``model.zip``.
    """
    arrays = {f"policy/{k}": v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()}
    opt = model.policy.optimizer.state_dict()
    scalars: Dict[str, Dict[str, Any]] = {}
    for idx, st in opt["state"].items():
        for k, v in st.items():
            if th.is_tensor(v):
                arrays[f"optim/{idx}/{k}"] = v.detach().cpu().numpy()
            else:
                scalars.setdefault(str(idx), {})[k] = v
    meta = {"param_groups": opt["param_groups"], "optim_scalars": scalars, "n_updates": int(model._n_updates)}
    return arrays, meta


def load_model_state(model, arrays: Mapping[str, np.ndarray], meta: Dict[str, Any]) -> None:
    """Put the state of :func:`model_state` into ``model`` (built from the same config)."""
    policy = {k[len("policy/"):]: th.from_numpy(np.array(arrays[k])) for k in arrays if k.startswith("policy/")}
    model.policy.load_state_dict(policy, strict=True)
    state: Dict[int, Dict[str, Any]] = {}
    for k in arrays:
        if k.startswith("optim/"):
            _, idx, name = k.split("/", 2)
            state.setdefault(int(idx), {})[name] = th.from_numpy(np.array(arrays[k]))
    for idx, vals in meta.get("optim_scalars", {}).items():
        state.setdefault(int(idx), {}).update(vals)
    model.policy.optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    model._n_updates = int(meta.get("n_updates", 0))
