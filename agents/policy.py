"""Trained policies as agents: ``load_policy_agent(path, seed)`` (spec ``policy:PATH``).

``PATH`` may be

* a checkpoint folder written by ``handfoot train`` (``actor.npz`` inside, plus
  ``model.zip``), e.g. ``runs/quickstart-s0/best``;
* a run folder (its ``best`` checkpoint, else ``final``, else the latest);
* an ``actor.npz`` file, or an SB3 ``model.zip`` (loaded with MaskablePPO, needs torch).

An ``actor.npz`` holds arrays only and is read without pickle.  A ``model.zip`` without an
``actor.npz`` is an SB3 pickle and is loaded only with ``HANDFOOT_TRUST_PICKLE=1``
(:mod:`agents.files`); ``checkpoints/latest.txt`` must name a folder inside ``checkpoints``.

The agent runs the policy's actor in NumPy (:class:`NumpyPolicy`)
on the seat's observation and, by default, plays greedily: the argmax of the
logits over the legal actions, so it is deterministic and ignores its seed.
``sample=True`` (spec ``policy:PATH?sample``) samples from the masked softmax with a
generator seeded from ``reset``'s seed instead.

Two kinds of network share the ``actor.npz`` format and ``policy:PATH``: a policy (logits over
the 705 action ids; PPO, the default kind) and an action-value network (``kind = "q"``, trained
by ``backend: dmc``): Q(s, a) scores each legal action from the observation and the action's
features (:data:`handfoot_env.actions.ACTION_FEATURES`); :class:`QPolicy` plays the legal action
of highest Q (``?sample``: the softmax of the Q values).  :func:`make_policy` picks the class.
"""
from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import numpy as np

from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.observation import observation_size

from .base import Agent
from .files import latest_checkpoint, require_trust

ACTOR_FILE = "actor.npz"
#: ``weights["kind"]`` of an action-value network (a policy network has no ``kind``)
Q_KIND = "q"


class NumpyPolicy:
    """The actor of a trained policy in NumPy (equal to the torch actor up to float32 rounding).

    ``weights`` is the dict of :func:`agents.sb3_model.extract_weights`:
    ``scale`` (fixed input scale), ``visible`` (how many leading inputs the actor
    sees: the seat's own observation), ``layers`` (``(W, b)`` of the hidden
    layers, torch layout), ``activation`` (``tanh`` or ``relu``), ``out`` (the
    logits layer).  Only the first ``visible`` inputs of an observation are used.
    """

    def __init__(self, weights: Dict[str, Any]):
        v = int(weights["visible"])
        self.visible = v
        self.scale = np.asarray(weights["scale"][:v], dtype=np.float32)
        layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights["layers"]]
        ow, ob = weights["out"]
        layers.append((np.asarray(ow, np.float32), np.asarray(ob, np.float32)))
        # first layer: fold the scale in and keep only the visible columns
        w0, b0 = layers[0]
        layers[0] = (w0[:, :v] * self.scale[None, :], b0)
        self.layers = [(np.ascontiguousarray(w.T), b) for w, b in layers]
        self.relu = weights["activation"] == "relu"

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs[..., :self.visible], dtype=np.float32)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < last:
                x = np.maximum(x, 0.0) if self.relu else np.tanh(x)
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: Optional[np.random.Generator] = None,
            deterministic: bool = False) -> int:
        """Argmax of the legal logits (deterministic), or a sample from the masked softmax drawn with ``rng``."""
        if deterministic or rng is None:
            legal = np.flatnonzero(mask)
            return int(legal[int(np.argmax(self.logits(obs)[legal].astype(np.float64)))])
        return int(sample_masked(self.logits(obs)[None, :], np.asarray(mask)[None, :] > 0, rng)[0][0])


def sample_masked(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
    """One action per row from the softmax over the legal logits, and its log-probability."""
    z = np.where(mask, logits, -np.inf)
    zmax = z.max(axis=1, keepdims=True)
    c = np.cumsum(np.exp((z - zmax).astype(np.float64)), axis=1)
    total = c[:, -1]
    u = rng.random(len(z)) * total
    a = (c <= u[:, None]).sum(axis=1)            # the first index whose cumulative sum passes u
    over = a >= NUM_ACTIONS                      # u rounded onto the total: the last legal action
    if over.any():
        a[over] = [int(np.flatnonzero(m)[-1]) for m in mask[over]]
    rows = np.arange(len(z))
    logp = (z[rows, a] - zmax[:, 0]) - np.log(total)
    return a, logp.astype(np.float32)


class TorchPolicy:
    """:class:`NumpyPolicy`'s folded layers run by torch, for many observations at once: the batched
    path of a policy network (samplers and search rollouts; multi-threaded BLAS behind NumPy's ``@`` is
    slow on a busy machine, torch's single-thread kernels are not).  torch is imported when one is
    made, so that playing a policy needs no torch.  :meth:`logits` equals
    :meth:`NumpyPolicy.logits` up to float32 rounding."""

    def __init__(self, weights: Any):
        import torch
        pol = weights if isinstance(weights, NumpyPolicy) else NumpyPolicy(weights)
        self.th = torch
        self.policy = pol
        self.visible = pol.visible
        self.relu = pol.relu
        self.act = torch.relu if pol.relu else torch.tanh
        self.layers = [(torch.from_numpy(np.ascontiguousarray(w)), torch.from_numpy(b)) for w, b in pol.layers]
        w, b = self.layers[-1]
        # the last layer by action, a row each, so that the legal ones are one gather (:meth:`best`)
        self.last_w, self.last_b = w.t().contiguous(), b

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Every action's logit of every row of ``obs``: ``(rows, 705)``."""
        th = self.th
        with th.no_grad():
            x = th.from_numpy(np.ascontiguousarray(obs[:, :self.visible]))
            last = len(self.layers) - 1
            for i, (w, b) in enumerate(self.layers):
                x = th.addmm(b, x, w)
                if i < last:
                    x = self.act(x)
            return x.numpy()

    def choose(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """One action per row, drawn from the masked softmax of the logits (:func:`sample_masked`), and
        its log-probability."""
        return sample_masked(self.logits(obs), mask, rng)

    def best(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The greedy action of each row: the legal action (``mask`` > 0) of highest logit, the first of
        equals, on one thread, the last layer only for the actions legal in some row (a search rollout's
        rows have 75 to 90 of the 705 legal between them, and the last layer is the network's largest)."""
        th = self.th
        legal = mask > 0
        cols = np.flatnonzero(legal.any(axis=0))
        threads = th.get_num_threads()
        th.set_num_threads(1)
        try:
            with th.inference_mode():
                h = th.from_numpy(np.ascontiguousarray(obs[:, :self.visible], dtype=np.float32))
                for w, b in self.layers[:-1]:
                    h = th.addmm(b, h, w)
                    h = th.relu(h) if self.relu else th.tanh(h)
                idx = th.from_numpy(cols)
                z = th.addmm(self.last_b.index_select(0, idx), h, self.last_w.index_select(0, idx).t()).numpy()
        finally:
            th.set_num_threads(threads)
        return cols[np.argmax(np.where(legal[:, cols], z, -np.inf), axis=1)]


NON_FINITE_Q = "the action-value network gave non-finite Q values (diverged weights?)"


class QPolicy:
    """An action-value network Q(s, a) in NumPy (weights of ``kind = "q"``, see the module docstring).

    The network is an MLP on ``[observation * scale, features[a]]`` with one output.  Its first
    layer is split: the observation's share is computed once per state, each action's share is a
    fixed table (705 x hidden), so scoring the legal actions of a state costs one row per action
    after the first layer.
    """

    def __init__(self, weights: Dict[str, Any]):
        v = int(weights["visible"])
        self.visible = v
        scale = np.asarray(weights["scale"][:v], dtype=np.float32)
        feats = np.asarray(weights["features"], dtype=np.float32)
        w0, b0 = (np.asarray(x, np.float32) for x in weights["layers"][0])
        self.w_state = np.ascontiguousarray((w0[:, :v] * scale[None, :]).T)      # (visible, hidden)
        self.b0 = b0
        self.action_part = np.ascontiguousarray(feats @ w0[:, v:].T)               # (705, hidden)
        rest = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights["layers"][1:]]
        ow, ob = weights["out"]
        rest.append((np.asarray(ow, np.float32), np.asarray(ob, np.float32)))
        self.rest = [(np.ascontiguousarray(w.T), b) for w, b in rest]
        self.relu = weights["activation"] == "relu"

    def _act(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0) if self.relu else np.tanh(x)

    def q_values(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Q of each action id in ``legal`` for one observation."""
        h = np.asarray(obs[:self.visible], dtype=np.float32) @ self.w_state + self.b0
        x = self._act(h[None, :] + self.action_part[legal])
        last = len(self.rest) - 1
        for i, (w, b) in enumerate(self.rest):
            x = x @ w + b
            if i < last:
                x = self._act(x)
        return x[:, 0]

    def best(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The greedy action of each row of ``obs``: the legal action (``mask`` > 0) of highest Q, the first
        of equals."""
        return np.argmax(np.where(mask > 0, np.asarray(self.logits(obs)), -np.inf), axis=1)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Q of every action id (legal or not), shaped like a policy's logits: ``(..., 705)``."""
        o = np.asarray(obs, dtype=np.float32).reshape(-1, np.shape(obs)[-1])
        every = np.arange(NUM_ACTIONS)
        out = np.stack([self.q_values(row, every) for row in o])
        return out.reshape(np.shape(obs)[:-1] + (NUM_ACTIONS,))

    def act(self, obs: np.ndarray, mask: np.ndarray, rng: Optional[np.random.Generator] = None,
            deterministic: bool = False) -> int:
        """The legal action of highest Q (deterministic), or a sample from the softmax of the legal Q values."""
        legal = np.flatnonzero(mask)
        z = self.q_values(obs, legal).astype(np.float64)
        if not np.isfinite(z).all():
            raise ValueError(NON_FINITE_Q)
        if deterministic or rng is None:
            return int(legal[int(np.argmax(z))])
        q = np.full((1, NUM_ACTIONS), -np.inf, dtype=np.float32)
        q[0, legal] = z
        return int(sample_masked(q, q > -np.inf, rng)[0][0])


class TorchQPolicy:
    """:class:`QPolicy` run by torch, for many states at once (the batched path of an action-value
    network; torch imported when one is made): epsilon-greedy on Q(s, a) over each row's legal
    actions (``epsilon`` 0: greedy).  The first layer's state share is one matrix
    product for all rows; each (row, legal action) pair then costs one row of the later layers."""

    def __init__(self, weights: Dict[str, Any], epsilon: float = 0.0):
        import torch as th
        self.th = th
        pol = QPolicy(weights)
        self.visible = pol.visible
        self.epsilon = float(epsilon)
        self.act = th.relu if pol.relu else th.tanh
        self.w_state, self.b0 = th.from_numpy(pol.w_state), th.from_numpy(pol.b0)
        self.action_part = th.from_numpy(pol.action_part)
        self.rest = [(th.from_numpy(w), th.from_numpy(b)) for w, b in pol.rest]

    def choose(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """One action per row and a log-probability of 0 (not used by the action-value learner)."""
        th = self.th
        m = len(mask)
        rows, acts = np.nonzero(mask)                            # row-major: each row's pairs together
        with th.no_grad():
            h = th.addmm(self.b0, th.from_numpy(np.ascontiguousarray(obs[:, :self.visible])), self.w_state)
            x = self.act(h[th.from_numpy(rows)] + self.action_part[th.from_numpy(acts)])
            last = len(self.rest) - 1
            for i, (w, b) in enumerate(self.rest):
                x = th.addmm(b, x, w)
                if i < last:
                    x = self.act(x)
            q = x[:, 0].numpy()
        if not np.isfinite(q).all():
            raise ValueError(NON_FINITE_Q)
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        best = np.maximum.reduceat(q, starts)
        top = np.flatnonzero(q >= best[rows])                  # pairs at their row's maximum
        first = top[np.r_[True, rows[top[1:]] != rows[top[:-1]]]]   # the lowest such action id per row
        a = acts[first]
        # exploration: both draws are made every time, so the random stream does not depend on Q
        explore = rng.random(m) < self.epsilon
        counts = np.diff(np.r_[starts, len(rows)])
        pick = starts + np.minimum((rng.random(m) * counts).astype(np.int64), counts - 1)
        a = np.where(explore, acts[pick], a)
        return a.astype(np.int64), np.zeros(m, np.float32)


def is_q(weights: Dict[str, Any]) -> bool:
    """Whether ``weights`` are an action-value network (else a policy network)."""
    return weights.get("kind") == Q_KIND


def make_policy(weights: Dict[str, Any]) -> Any:
    """The NumPy player of ``weights``: :class:`QPolicy` for an action-value network, else :class:`NumpyPolicy`."""
    return QPolicy(weights) if is_q(weights) else NumpyPolicy(weights)


def make_torch_policy(weights: Dict[str, Any], epsilon: float = 0.0) -> Any:
    """The batched torch player of ``weights``: :class:`TorchQPolicy` (epsilon-greedy) for an action-value
    network, else :class:`TorchPolicy` (sampling)."""
    return TorchQPolicy(weights, epsilon) if is_q(weights) else TorchPolicy(weights)


def actor_arrays(weights: Dict[str, Any], prefix: str = "") -> Dict[str, np.ndarray]:
    """NumPy actor weights as named arrays (the layout of ``actor.npz``; ``prefix`` before every name)."""
    arrays = {"scale": np.asarray(weights["scale"], np.float32),
              "visible": np.asarray(weights["visible"], np.int64),
              "activation": np.asarray(str(weights["activation"])),
              "out_w": np.asarray(weights["out"][0]), "out_b": np.asarray(weights["out"][1])}
    for i, (w, b) in enumerate(weights["layers"]):
        arrays[f"w{i}"] = np.asarray(w)
        arrays[f"b{i}"] = np.asarray(b)
    if is_q(weights):
        arrays["kind"] = np.asarray(Q_KIND)
        arrays["features"] = np.asarray(weights["features"], np.float32)
    return {prefix + k: v for k, v in arrays.items()}


def actor_from_arrays(z: Any, prefix: str = "") -> Dict[str, Any]:
    """The NumPy actor weights stored by :func:`actor_arrays` in ``z`` (an open ``.npz`` or a dict)."""
    layers = []
    i = 0
    while f"{prefix}w{i}" in z:
        layers.append((z[f"{prefix}w{i}"], z[f"{prefix}b{i}"]))
        i += 1
    out = {"scale": z[prefix + "scale"], "visible": int(z[prefix + "visible"]),
           "activation": str(z[prefix + "activation"]), "layers": layers,
           "out": (z[prefix + "out_w"], z[prefix + "out_b"])}
    if prefix + "kind" in z:
        out["kind"] = str(z[prefix + "kind"])
        out["features"] = z[prefix + "features"]
    return out


def save_actor(weights: Dict[str, Any], path: Path) -> None:
    """Write NumPy actor weights (``agents.sb3_model.extract_weights``) to an ``.npz`` file."""
    with open(path, "wb") as f:
        np.savez(f, **actor_arrays(weights))


def check_actor(weights: Dict[str, Any], where: str = "actor") -> Dict[str, Any]:
    """``weights`` if they form an actor :class:`NumpyPolicy` can play; else one ``ValueError`` line.

    Checks the activation, that ``visible`` fits the input scale, that every layer's
    input size is the previous layer's output size, that the last layer gives one logit
    per action id, and that every weight is finite.  An action-value network (``kind = "q"``)
    instead needs a finite feature table of one row per action id, a first layer reading the
    observation and the features, and one output.
    """
    def bad(msg: str) -> ValueError:
        return ValueError(f"{where}: not a handfoot actor: {msg}")

    kind = weights.get("kind")
    if kind is not None and kind != Q_KIND:
        raise bad(f"unknown network kind {kind!r} (known: {Q_KIND!r}, or none for a policy)")

    if weights["activation"] not in ("tanh", "relu"):
        raise bad(f"activation must be tanh or relu, got {weights['activation']!r}")
    scale = np.asarray(weights["scale"])
    if np.ndim(weights["visible"]) != 0:
        raise bad(f"'visible' must be one integer, got an array of shape {np.shape(weights['visible'])}")
    if not (np.issubdtype(scale.dtype, np.floating) and np.isfinite(scale).all()):
        raise bad("the input scale holds non-finite or non-float values")
    visible = int(weights["visible"])
    if scale.ndim != 1 or not 1 <= visible <= scale.shape[0]:
        raise bad(f"'visible' {visible} does not fit an input scale of shape {scale.shape}")
    n_in = scale.shape[0]
    n_out = NUM_ACTIONS
    if kind == Q_KIND:
        feats = np.asarray(weights["features"])
        if feats.ndim != 2 or feats.shape[0] != NUM_ACTIONS or not np.issubdtype(feats.dtype, np.floating) \
                or not np.isfinite(feats).all():
            raise bad(f"the action features must be a finite float table of {NUM_ACTIONS} rows, got {feats.shape}")
        if not weights["layers"]:
            raise bad("an action-value network needs at least one hidden layer")
        n_in = visible + feats.shape[1]
        n_out = 1
    for i, (w, b) in enumerate(list(weights["layers"]) + [weights["out"]]):
        w, b = np.asarray(w), np.asarray(b)
        name = "out" if i == len(weights["layers"]) else f"layer {i}"
        if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != n_in:
            raise bad(f"{name} has weights {w.shape} and bias {b.shape}, expected (N, {n_in}) and (N,)")
        if not (np.issubdtype(w.dtype, np.floating) and np.isfinite(w).all() and np.isfinite(b).all()):
            raise bad(f"{name} holds non-finite or non-float values")
        n_in = w.shape[0]
    if n_in != n_out:
        raise bad(f"the last layer gives {n_in} outputs, expected " + (
            "one (the action value)" if kind == Q_KIND else f"one logit per action id ({NUM_ACTIONS})"))
    return weights


def load_actor(path: Path) -> Dict[str, Any]:
    """The NumPy actor weights of an ``actor.npz`` (arrays only: read without pickle), checked."""
    try:
        with np.load(path, allow_pickle=False) as z:
            weights = actor_from_arrays(z)
    except KeyError as e:
        raise ValueError(f"{path}: not a handfoot actor: no array {e.args[0].split()[0]}") from None
    except (OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: not a readable .npz file ({e})") from None
    except ValueError as e:                    # an object array (pickle), a bad zip member
        raise ValueError(f"{path}: not a handfoot actor: {e}") from None
    return check_actor(weights, str(path))


def resolve_policy_path(path: str) -> Path:
    """The actor file or model zip that ``path`` names (see the module docstring)."""
    p = Path(path).expanduser()
    if p.is_dir():
        if (p / ACTOR_FILE).exists():
            return p / ACTOR_FILE
        for sub in ("best", "final", "checkpoints/latest"):
            q = p / sub
            if (q / ACTOR_FILE).exists():
                return q / ACTOR_FILE
        latest = latest_checkpoint(p / "checkpoints")
        if latest is not None and (latest / ACTOR_FILE).exists():
            return latest / ACTOR_FILE
        if (p / "model.zip").exists():
            return p / "model.zip"
        raise FileNotFoundError(f"policy path {path!r}: no {ACTOR_FILE} or model.zip in it (nor in best/ or final/)")
    if p.exists():
        return p
    if p.with_suffix(".zip").exists():
        return p.with_suffix(".zip")
    raise FileNotFoundError(f"policy path {path!r} does not exist")


def load_weights(path: str) -> Dict[str, Any]:
    p = resolve_policy_path(path)
    if p.suffix == ".npz":
        return load_actor(p)
    require_trust(p, "an SB3 model.zip without an actor.npz")
    from agents import sb3_model  # torch and SB3, only for a model.zip
    return sb3_model.load_model_weights(p)


class PolicyAgent(Agent):
    """Plays a trained actor (policy or action-value network) on the encoded observation (greedy by default)."""

    name = "policy"
    needs_observation = True
    needs_view = False

    def __init__(self, weights: Dict[str, Any], seed: int = 0, sample: bool = False, name: Optional[str] = None):
        super().__init__(seed)
        self.policy = make_policy(weights)
        self.sample = bool(sample)
        self.np_rng = np.random.Generator(np.random.PCG64(self.seed))
        if name:
            self.name = name

    def reset(self, seat, rules, seed) -> None:
        super().reset(seat, rules, seed)
        n_obs = observation_size(rules.players, rules.teams)
        if self.policy.visible != n_obs:
            raise ValueError(f"{self.name}: the actor reads {self.policy.visible} observation entries, but "
                             f"{rules.players} players in {rules.teams} teams give {n_obs}")
        self.np_rng = np.random.Generator(np.random.PCG64(int(seed)))

    def act(self, observation, view) -> int:
        if observation is None:
            raise ValueError("PolicyAgent needs the observation dict (needs_observation is True)")
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError(f"{self.name}: seat {getattr(view, 'seat', self.seat)} is not to act (empty mask)")
        return self.policy.act(obs, mask, self.np_rng if self.sample else None, deterministic=not self.sample)


def load_policy_agent(path: str, seed: int = 0) -> PolicyAgent:
    """The agent for spec ``policy:PATH`` (append ``?sample`` to sample instead of argmax)."""
    sample = False
    if path.endswith("?sample"):
        path, sample = path[: -len("?sample")], True
    return PolicyAgent(load_weights(path), seed=seed, sample=sample, name=f"policy:{path}")


__all__ = ["NumpyPolicy", "QPolicy", "TorchPolicy", "TorchQPolicy", "sample_masked", "make_torch_policy",
            "NON_FINITE_Q", "make_policy", "is_q", "Q_KIND", "PolicyAgent",
           "load_policy_agent", "load_weights", "save_actor", "load_actor", "actor_arrays", "actor_from_arrays",
           "check_actor", "resolve_policy_path"]
