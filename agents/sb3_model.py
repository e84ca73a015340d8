"""SB3 models as NumPy actors: the actor of a MaskablePPO policy in :class:`agents.policy.NumpyPolicy`'s
weight format, and a ``model.zip`` read into it.

This module imports torch and sb3-contrib; :func:`agents.policy.load_weights` imports it only for a
``model.zip`` (an ``actor.npz`` needs NumPy alone).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import numpy as np
import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.files import require_trust


def extract_weights(policy: MaskableActorCriticPolicy) -> Dict[str, Any]:
    """The actor of an SB3 policy as NumPy arrays (picklable; see :class:`NumpyPolicy`)."""
    ext = policy.pi_features_extractor
    layers = []
    for m in policy.mlp_extractor.policy_net:
        if isinstance(m, th.nn.Linear):
            layers.append((m.weight.detach().cpu().numpy().astype(np.float32).copy(),
                           m.bias.detach().cpu().numpy().astype(np.float32).copy()))
    act = "relu" if isinstance(policy.activation_fn(), th.nn.ReLU) else "tanh"
    out = policy.action_net
    return {"scale": ext.scale.detach().cpu().numpy().copy(), "visible": int(ext.visible), "layers": layers,
            "activation": act, "out": (out.weight.detach().cpu().numpy().copy(),
                                       out.bias.detach().cpu().numpy().copy())}


def load_model_weights(path: Path) -> Dict[str, Any]:
    """The actor of the MaskablePPO ``model.zip`` at ``path`` (a pickle: only with ``HANDFOOT_TRUST_PICKLE=1``)."""
    require_trust(path, "an SB3 model.zip without an actor.npz")
    model = MaskablePPO.load(str(path), device="cpu")
    return extract_weights(model.policy)
