"""The SB3 backend (``backend: sb3``): MaskablePPO with the project's input scale and network sizes.

:class:`SB3Learner` is the learner (:class:`experiments.training.learner.SamplingLearner`): it
builds ``n_envs`` :class:`~experiments.training.sb3_env.SeatEnv` workers (``SubprocVecEnv``, one
torch thread each; ``vec_env: dummy`` plays them in-process) and a MaskablePPO model, and each
:meth:`SB3Learner.iterate` is one of MaskablePPO's rollouts and updates.  Before every rollout the
learner's actor weights go to the workers (they play the learner's partner and ``self``
opponents) and, when it changed, the snapshot pool.

:class:`HandFootPolicy` is sb3-contrib's masked actor-critic with a fixed input
scale (:func:`handfoot_env.observation.observation_scale`) as its features
extractor (and, with a centralised critic, an actor that sees only the seat's
observation); :func:`build_model` builds the MaskablePPO of a training config.

Checkpoint files: ``model_state.npz`` (policy and optimizer state as arrays; what ``--resume``
reads) and SB3's ``model.zip`` (for use with SB3; never read on resume).  A checkpoint of an older
version (``snapshots.pkl``, no ``model_state.npz``) holds pickles and is resumed only with
``HANDFOOT_TRUST_PICKLE=1``.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from agents.files import require_trust
from agents.sb3_model import extract_weights
from experiments.config import ConfigError
from experiments.training.config import TrainConfig, env_kwargs
from experiments.training.learner import Iteration
from experiments.training.sb3_env import make_vec_env
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
    lr = float(p.learning_rate)
    # SB3 calls a schedule with the fraction of the run still to come (progress_remaining)
    schedule = (lambda remaining: lr * remaining) if p.anneal_lr else lr
    return MaskablePPO(HandFootPolicy, venv, learning_rate=schedule, n_steps=p.n_steps,
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


# =========================================================================== the learner
MODEL_STATE = "model_state.npz"
LEGACY_SNAPSHOTS = "snapshots.pkl"


class _Hooks(BaseCallback):
    """SB3's callback points: each step's training-game results and episodes, and Ctrl-C."""

    def __init__(self, learner: "SB3Learner"):
        super().__init__()
        self.learner = learner

    def _on_step(self) -> bool:
        if self.learner.run.stopping():
            return False                  # Ctrl-C: SB3 stops after this step, before the update
        for info in self.locals["infos"]:
            r = info.get("selfplay")
            if r is not None:
                self.learner.games.append(r)
            e = info.get("episode")
            if e is not None:
                self.learner.episodes.append((e["r"], e["l"]))
        return True


class SB3Learner:
    """MaskablePPO on the SB3 env workers (see the module docstring)."""

    own_snapshots = False

    def __init__(self, cfg: TrainConfig):
        self.cfg = cfg
        self.run: Any = None                     # the RunContext of setup
        self.venv: Any = None
        self.model: Any = None
        self.games: List[Dict[str, Any]] = []
        self.episodes: List[Tuple[float, int]] = []
        self.iterations = 0

    def setup(self, run: Any, checkpoint: Optional[Dict[str, Any]]) -> None:
        cfg = self.cfg
        self.run = run
        th.distributions.Distribution.set_default_validate_args(False)   # skip per-step argument checks
        legacy = self.check_resume_files(run.resume) if checkpoint is not None else False
        self.venv = make_vec_env(env_kwargs(cfg), cfg.n_envs, run.seed, subprocess=cfg.vec_env == "subproc")
        if checkpoint is None:
            self.model = build_model(cfg, self.venv, cfg.seed)
        elif legacy:                       # an older checkpoint: pickles, allowed by HANDFOOT_TRUST_PICKLE=1
            self.model = MaskablePPO.load(str(run.resume / "model.zip"), env=self.venv, device="cpu",
                                          custom_objects={"policy_class": HandFootPolicy})
            self.model.set_random_seed(run.seed)
            with open(run.resume / LEGACY_SNAPSHOTS, "rb") as f:
                run.snapshots = pickle.load(f)
        else:
            self.model = build_model(cfg, self.venv, run.seed)
            try:
                with np.load(run.resume / MODEL_STATE, allow_pickle=False) as z:
                    load_model_state(self.model, z, checkpoint["model"])
            except (KeyError, ValueError, RuntimeError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConfigError(f"resume: {run.resume / MODEL_STATE} does not fit the model of the config "
                                  f"(network or ppo settings changed?): {first[:200]}") from None
        self.model.num_timesteps = run.timesteps
        self.venv.env_method("set_learner", self.actor())    # the games dealt at reset may need them
        self.venv.env_method("set_snapshots", run.snapshots)
        # the trainer writes every record: SB3's own logger has no outputs (its values are read here)
        self.model.set_logger(Logger(folder=None, output_formats=[]))
        remaining = cfg.total_timesteps - run.timesteps
        self.total, self.callback = self.model._setup_learn(remaining, _Hooks(self), reset_num_timesteps=False)
        self.callback.on_training_start(locals(), globals())

    @staticmethod
    def check_resume_files(ck: Path) -> bool:
        """Check the checkpoint to resume before any worker starts; True for an older (pickle) checkpoint."""
        if (ck / MODEL_STATE).is_file() and (ck / "snapshots.npz").is_file():
            return False
        if (ck / LEGACY_SNAPSHOTS).is_file() and (ck / "model.zip").is_file():
            try:
                require_trust(ck / LEGACY_SNAPSHOTS, "a checkpoint of an older version (snapshots.pkl, model.zip)")
            except ValueError as e:
                raise ConfigError(f"resume: {e}") from None
            return True
        raise ConfigError(f"resume: {str(ck)!r} has no {MODEL_STATE} and snapshots.npz (not an sb3 checkpoint)")

    def actor(self) -> Dict[str, Any]:
        return extract_weights(self.model.policy)

    def iterate(self, remaining: int, snapshots: Optional[List[Dict[str, Any]]]) -> Optional[Iteration]:
        """MaskablePPO's loop body: collect one rollout (``n_steps`` per env), then one update."""
        m = self.model
        self.venv.env_method("set_learner", self.actor())
        if snapshots is not None:
            self.venv.env_method("set_snapshots", snapshots)
        before = m.num_timesteps
        self.games, self.episodes = [], []
        if not m.collect_rollouts(m.env, self.callback, m.rollout_buffer, m.n_steps, use_masking=True):
            m.num_timesteps = before       # Ctrl-C: the rollout in progress is dropped
            return None
        self.iterations += 1
        m._update_current_progress_remaining(m.num_timesteps, self.total)
        m.logger.dump(step=m.num_timesteps)
        m.train()
        stats = {k[len("train/"):]: float(v) for k, v in m.logger.name_to_value.items()
                 if k.startswith("train/") and isinstance(v, (int, float, np.floating, np.integer))}
        return Iteration(decisions=int(m.num_timesteps - before), games=self.games, episodes=self.episodes,
                         update=stats)

    def describe(self, info: Dict[str, Any]) -> str:
        info["seeds"]["envs"] = f"worker i: {self.run.seed} + i"
        return f"MaskablePPO, {self.cfg.n_envs} envs ({self.cfg.vec_env})"

    def save(self, folder: Path) -> Dict[str, Any]:
        self.model.save(str(folder / "model.zip"))
        arrays, meta = model_state(self.model)
        with open(folder / MODEL_STATE, "wb") as f:
            np.savez(f, **arrays)
        return {"model": meta}

    def close(self) -> None:
        if self.venv is not None:
            self.venv.close()
