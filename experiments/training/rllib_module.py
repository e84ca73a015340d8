"""The action-masking torch ``RLModule`` that the RLlib backend trains (``backend: rllib``).

Written from RLlib's public ``TorchRLModule`` / ``ValueFunctionAPI`` /
``InferenceOnlyAPI`` interfaces; what it computes is described in
:mod:`agents.rllib_policy`, which plays its checkpoints in NumPy.  This module
imports torch and Ray: only the RLlib backend imports it.
"""
from __future__ import annotations

from typing import Any, Dict, List

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from agents.rllib_policy import MASKED_LOGIT, input_scale


def _mlp(n_in: int, hidden: List[int], act: str) -> nn.Sequential:
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
        self.pi = _mlp(n_obs, hidden, act)
        self.pi_out = nn.Linear(hidden[-1] if hidden else n_obs, n_act)
        # small initial logits: a near-uniform policy over the legal actions
        nn.init.orthogonal_(self.pi_out.weight, gain=0.01)
        nn.init.zeros_(self.pi_out.bias)
        if not self.inference_only:
            self.vf = _mlp(n_obs, vf_hidden, act)
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


def module_spec(observation_space, action_space, model_config: Dict[str, Any]) -> RLModuleSpec:
    """``RLModuleSpec`` of :class:`MaskedActorCritic` for the given spaces."""
    return RLModuleSpec(module_class=MaskedActorCritic, observation_space=observation_space,
                        action_space=action_space, model_config=dict(model_config))
