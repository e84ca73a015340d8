"""Batched self-play PPO: many games in one process, one forward pass per network per tick.

``backend: batched`` in a training config: :class:`BatchedPPO` is its learner (an
:class:`experiments.training.learner.RolloutLearner`); the :class:`experiments.training.trainer.Trainer`
plays the games, and gives the run folder, evaluation and checkpoints of every backend.  This
module is the algorithm, readable top to bottom:

1. **Network** (:class:`ActorCritic`): the SB3 backend's shape (``network.pi``/``network.vf``
   MLPs, fixed input scale :func:`handfoot_env.observation.observation_scale`, 705 logits), so the
   actor exports to the same ``actor.npz`` (:func:`actor_weights`) that ``policy:PATH`` plays.
2. **Rollout** (:class:`experiments.training.sampler.Sampler`): ``games`` games on the
   engine's fast path.  In each game
   both seats of one team, drawn per game, are the **learning team**: each of the two seats is
   one trajectory (parameter sharing), and each of its decisions is a training sample.  The
   other team is drawn per game from the ``opponents`` mixture: the current learner (``self``,
   no samples), a frozen snapshot (``self_snapshots``) or an agent spec (heuristics, played
   in-process between decisions).  One **tick** asks every game's seat to act: all seats played
   by the learner's weights go through one batched forward pass, the seats of each snapshot
   through one pass per snapshot; actions are drawn from the masked softmax.  The sampler runs
   the actor in NumPy (:class:`agents.policy.NumpyPolicy`, the class that plays checkpoints), so
   it can run in a worker process without torch threads.
3. **Rewards**: each learning seat's reward for a decision is the sum of what the AEC env
   (``handfoot_v0``) gives that seat from that decision up to its next one: every round end adds
   :func:`handfoot_env.episode.round_reward` (``round_score_diff``), the game end adds
   :func:`handfoot_env.episode.win_reward` (``game_win``); optional potential-based shaping as
   the SB3 backend.  tests/test_batched_ppo.py replays games in the AEC env and compares.
4. **GAE over per-seat trajectories** (:func:`gae`): every sample links to the same seat's next
   decision.  A rollout stops after ``n_steps x n_envs`` learner decisions; the last decision of
   each open trajectory is not trained on in this update (its return is not known yet): it is the
   bootstrap of the sample before it and is carried, with its recorded log-probability, into the
   next rollout as that trajectory's first sample.  A game cut by ``max_actions`` is bootstrapped
   with the value of the seat's observation at the cut.  Values are computed by the learner with
   its current critic just before the update.
5. **Clipped PPO update** (:meth:`BatchedPPO.update`): masked categorical (illegal logits
   filled with -1e8, entropy over the legal actions), per-minibatch advantage normalisation,
   value MSE, entropy bonus, global gradient clipping, optional ``target_kl`` early stop; SB3's
   hyperparameter names and its ``train/*`` statistics.

Using both cores (``batched.samplers``, ``batched.pipeline``): by default one sampler process
plays the games while the learner process updates, **pipelined**: the rollout that is played
during update ``k`` uses the weights from before update ``k`` (a lag of one update).  The update
then follows decoupled PPO (Hilton et al., 2021, "Batch size-invariance for policy
optimization"): the clipped ratio is taken against the learner's current policy (the proximal
policy) and each sample is weighted by proximal / behaviour probability (truncated at
:data:`MAX_WEIGHT`), so the trust region is the usual one and the lag is corrected.  Playing a
rollout and updating on it cost about the same CPU, so overlapping them can halve the wall time
per decision when the second core is free.  ``pipeline: false`` is strictly on-policy:
``samplers`` processes (0: the learner process itself) play, then the learner updates.

The update itself uses the second core whenever no sampler process is playing, or always when
the machine has a core for each sampler process, the update and a helper thread
(``batched.parallel_update``): actor and critic are separate networks, so the critic's forward
and backward passes run in a helper thread beside the actor's, and so do the actor's weight
gradients but the first layer's, each computed from its layer's output gradient as the backward
pass goes down the layers (:meth:`ActorCritic.logits_by_layer`; torch releases the GIL in its operations).  Every
operation is one autograd would run, on one thread, so weights and metrics are the same bit for
bit whichever thread ran what (tests/test_batched_ppo.py); only the wall time changes.  Torch's
own intra-op threads (``torch_threads``) would change the sums' rounding and are left at one.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch as th
from torch import nn

from experiments.training.config import init_weights
from experiments.training.learner import RunContext
from experiments.training.networks import TorchLearner, mlp, resolve_device, to_array
from experiments.training.parallel_update import (  # noqa: F401 - linear_weight_gradients: its documented home
    Part,
    helper_thread,
    hook_weight_gradients,
    linear_weight_gradients,
    usable_cores,
)
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.config import load_rules
from handfoot_env.observation import (
    observation_scale,
    observation_size,
    state_size,
)

MASKED = -1e8            # logit of an illegal action (as sb3-contrib's MaskableCategorical)
MAX_WEIGHT = 2.0         # truncation of the behaviour-policy importance weight (pipelined rollouts)


# =========================================================================== 1. network
class ActorCritic(nn.Module):
    """Actor (seat observation -> 705 logits) and critic (observation, plus the state with a
    centralised critic -> value), each an MLP on fixed-scaled inputs."""

    def __init__(self, players: int, teams: int, pi: Sequence[int], vf: Sequence[int], activation: str = "tanh",
                 ortho_init: bool = True, centralised_critic: bool = False):
        super().__init__()
        self.obs_size = observation_size(players, teams)
        self.critic_size = self.obs_size + (state_size(players, teams) if centralised_critic else 0)
        self.activation = activation
        self.register_buffer("actor_scale", th.as_tensor(observation_scale(players, teams)))
        self.register_buffer("critic_scale", th.as_tensor(observation_scale(players, teams, centralised_critic)))
        self.actor, h = mlp(self.obs_size, pi, activation)
        self.logits = nn.Linear(h, NUM_ACTIONS)
        self.critic, h = mlp(self.critic_size, vf, activation)
        self.value_head = nn.Linear(h, 1)
        if ortho_init:                           # SB3's choice of gains
            for m in list(self.actor) + list(self.critic):
                if isinstance(m, nn.Linear):
                    nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
                    nn.init.zeros_(m.bias)
            for m, gain in ((self.logits, 0.01), (self.value_head, 1.0)):
                nn.init.orthogonal_(m.weight, gain=gain)
                nn.init.zeros_(m.bias)

    def forward_logits(self, obs: th.Tensor, columns: Optional[th.Tensor] = None) -> th.Tensor:
        """Logits of every action, or only of the action ids in ``columns``."""
        h = self.actor(obs * self.actor_scale)
        if columns is None:
            return self.logits(h)
        return nn.functional.linear(h, self.logits.weight[columns], self.logits.bias[columns])

    def forward_value(self, critic_obs: th.Tensor) -> th.Tensor:
        return self.value_head(self.critic(critic_obs * self.critic_scale)).squeeze(-1)

    def logits_by_layer(self, obs: th.Tensor, columns: th.Tensor) -> Tuple[th.Tensor, List[Tuple[Any, ...]]]:
        """``forward_logits(obs, columns)`` (the same values) with the actor's weights left out of
        the autograd graph, and its linear layers as ``(output, input, layer, columns)``: a backward
        pass through the logits then gives each layer's output gradient, from which
        :func:`linear_weight_gradients` computes the weights' (so another thread can)."""
        h = obs * self.actor_scale
        layers: List[Tuple[Any, ...]] = []
        for m in self.actor:
            if not isinstance(m, nn.Linear):
                h = m(h)
                continue
            z = nn.functional.linear(h, m.weight.detach(), m.bias.detach())
            layers.append((z.requires_grad_() if not z.requires_grad else z, h, m, None))
            h = z
        w, b = self.logits.weight.detach(), self.logits.bias.detach()
        z = nn.functional.linear(h, w[columns], b[columns])
        layers.append((z.requires_grad_() if not z.requires_grad else z, h, self.logits, columns))
        return z, layers


def actor_weights(model: ActorCritic) -> Dict[str, Any]:
    """The actor as NumPy arrays, in the format of :func:`agents.sb3_model.extract_weights`
    (what :class:`NumpyPolicy`, ``agents.policy.save_actor`` and ``policy:PATH`` use)."""
    arr = to_array
    layers = [(arr(m.weight), arr(m.bias)) for m in model.actor if isinstance(m, nn.Linear)]
    return {"scale": arr(model.actor_scale), "visible": model.obs_size, "layers": layers,
            "activation": model.activation, "out": (arr(model.logits.weight), arr(model.logits.bias))}


def load_actor_weights(model: ActorCritic, weights: Dict[str, Any]) -> None:
    """Copy a policy's actor (:func:`actor_weights`' format, e.g. an ``actor.npz``) into ``model``'s actor,
    input scale included, so that the model plays exactly as the policy; its critic is left as it is.  The
    shapes must match (:func:`experiments.training.config.init_weights` sets the network's from them)."""
    linears = [m for m in model.actor if isinstance(m, nn.Linear)] + [model.logits]
    pairs = list(weights["layers"]) + [weights["out"]]
    if len(pairs) != len(linears) or str(weights["activation"]) != model.activation:
        raise ValueError(f"the policy's actor ({len(pairs) - 1} hidden layers, {weights['activation']}) does not fit "
                         f"the network ({len(linears) - 1} hidden layers, {model.activation})")
    with th.no_grad():
        scale = np.asarray(weights["scale"], np.float32)[:int(weights["visible"])]
        model.actor_scale.copy_(th.from_numpy(np.ascontiguousarray(scale)))
        for m, (w, b) in zip(linears, pairs):
            m.weight.copy_(th.from_numpy(np.asarray(w, np.float32)))
            m.bias.copy_(th.from_numpy(np.asarray(b, np.float32)))


# =========================================================================== 4. GAE
def gae(values: np.ndarray, rewards: np.ndarray, done: np.ndarray, nxt: np.ndarray, is_open: np.ndarray,
        gamma: float, lam: float) -> np.ndarray:
    """Advantages along each seat's own trajectory: row ``k``'s successor is ``nxt[k]`` (rows of one
    trajectory are in time order, so one backward pass suffices); an open successor is a bootstrap
    (its value counts, its advantage does not: the trajectory is cut there)."""
    v, r, d, nx, op = values.tolist(), rewards.tolist(), done.tolist(), nxt.tolist(), is_open.tolist()
    adv = [0.0] * len(v)
    gl = gamma * lam
    for k in range(len(v) - 1, -1, -1):
        if op[k]:
            continue
        if d[k]:
            adv[k] = r[k] - v[k]
            continue
        j = nx[k]
        if j < 0:
            raise AssertionError(f"rollout row {k} is neither finished nor linked to its seat's next decision")
        delta = r[k] + gamma * v[j] - v[k]
        adv[k] = delta if op[j] else delta + gl * adv[j]
    return np.asarray(adv, dtype=np.float32)


# =========================================================================== 5. PPO loss
def policy_loss(logits: th.Tensor, mask: th.Tensor, act: th.Tensor, old_logp: th.Tensor, adv: th.Tensor,
                weight: Optional[th.Tensor], clip: float, normalize: bool) -> Tuple[th.Tensor, th.Tensor, float, float]:
    """The actor's part of one minibatch's loss: clipped surrogate and entropy over the legal actions.

    ``logits``, ``mask``: the minibatch's rows over its columns (actions legal in some row); ``act``:
    each row's action as a column; ``old_logp``: the log-probabilities the ratio is taken against
    (:meth:`BatchedPPO.reference_policy`) and ``weight`` the importance weights of a lagged rollout
    (None: on-policy).  Returns ``(pg_loss, ent_loss, approx_kl, clip_fraction)``."""
    logits = logits.masked_fill(~mask, MASKED)
    logp_all = th.log_softmax(logits, dim=1)
    logp = logp_all.gather(1, act[:, None]).squeeze(1)
    # softmax, not logp_all.exp(): torch's exp is ~20x slower on the -1e8 - lse entries
    entropy = -(th.softmax(logits, dim=1) * logp_all).sum(1)
    if normalize and len(adv) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    surrogate = th.min(adv * ratio, adv * ratio.clamp(1 - clip, 1 + clip))
    pg_loss = -(surrogate if weight is None else surrogate * weight).mean()
    ent_loss = -entropy.mean()
    with th.no_grad():
        kl = float(((ratio - 1) - log_ratio).mean())
        clip_fraction = float(((ratio - 1).abs() > clip).float().mean())
    return pg_loss, ent_loss, kl, clip_fraction


def value_loss(values: th.Tensor, returns: th.Tensor) -> th.Tensor:
    """The critic's loss: mean squared error against the GAE returns."""
    return ((returns - values) ** 2).mean()


class Tensors(NamedTuple):
    """One rollout's arrays as the update uses them (on the learner's device)."""

    obs: th.Tensor
    mask: th.Tensor
    mask_np: np.ndarray
    act: th.Tensor
    critic_in: th.Tensor


# =========================================================================== 6. the learner
class BatchedPPO(TorchLearner):
    """The ``batched`` learner (a :class:`experiments.training.learner.RolloutLearner`): network,
    Adam and clipped PPO updates on the rollouts the trainer's samplers play."""

    title = "batched PPO"

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.rollout_size = int(cfg.ppo.n_steps) * int(cfg.n_envs)
        self.pipeline = bool(cfg.batched.pipeline)
        self.n_updates = 0
        self.parallel = bool(cfg.batched.parallel_update)
        self.sampler_busy: Callable[[], bool] = lambda: False

    def setup(self, run: RunContext, checkpoint: Optional[Dict[str, Any]]) -> None:
        cfg, p, net = self.cfg, self.cfg.ppo, self.cfg.network
        r = load_rules(cfg.rules)
        # ``init`` (a new run only: a resumed one has its weights): the policy, with network.pi set to its shape
        start = init_weights(cfg) if cfg.init is not None and checkpoint is None else None
        th.manual_seed(int(run.seed))
        self.device = resolve_device(cfg.batched.device)
        self.model = ActorCritic(r.players, r.teams, net.pi, net.vf, net.activation, net.ortho_init,
                                 net.centralised_critic).to(self.device)
        if start is not None:
            load_actor_weights(self.model, start)          # ``init``: the actor from a policy, a fresh critic
        self.optimizer = th.optim.Adam(self.model.parameters(), lr=p.learning_rate, eps=1e-5, fused=True)
        self.rng = np.random.Generator(np.random.PCG64(int(run.seed)))       # minibatch order
        self.run = run                                                        # run.timesteps: the annealed rate's clock
        self.restore(run.resume if checkpoint is not None else None)
        if self.device.type != "cpu":
            self.parallel = False                   # a GPU's kernels run beside the update's thread already
        # a core for each sampler process, the update and its helper: the helper never has to wait
        if usable_cores() < int(cfg.batched.samplers) + 2:
            self.sampler_busy = run.samplers_busy

    def sampler_options(self) -> Dict[str, Any]:
        return dict(shaping_books=self.cfg.shaping.books, shaping_points=self.cfg.shaping.points,
                    centralised_critic=self.cfg.network.centralised_critic)

    def actor(self) -> Dict[str, Any]:
        return actor_weights(self.model)

    # ------------------------------------------------------------------ what the update learns against
    def reference_policy(self, obs: th.Tensor, mask: th.Tensor, act: th.Tensor,
                         behaviour_logp: th.Tensor) -> Tuple[th.Tensor, Optional[th.Tensor]]:
        """The log-probabilities the ratio is taken against, and the samples' importance weights.

        Synchronous: the behaviour policy's, no weights.  Pipelined (decoupled PPO): the rollout was
        played by weights from before the last update (up to ``max_lag`` updates old), so the clip is
        taken around the current (proximal) policy and the behaviour policy is corrected by an
        importance weight prox / behaviour, truncated at :data:`MAX_WEIGHT`."""
        if not self.pipeline:
            return behaviour_logp, None
        with th.no_grad():
            prox_logp = th.cat([
                th.log_softmax(self.model.forward_logits(o).masked_fill(~m, MASKED), 1).gather(1, a[:, None])[:, 0]
                for o, m, a in zip(th.split(obs, 4096), th.split(mask, 4096), th.split(act, 4096))])
        return prox_logp, (prox_logp - behaviour_logp).exp().clamp(max=MAX_WEIGHT)

    def tensors(self, batch: Dict[str, Any]) -> Tensors:
        dev = self.device
        obs = th.from_numpy(batch["obs"]).to(dev)
        critic_in = obs if "state" not in batch else th.cat([obs, th.from_numpy(batch["state"]).to(dev)], dim=1)
        return Tensors(obs, th.from_numpy(batch["mask"]).to(dev), batch["mask"], th.from_numpy(batch["act"]).to(dev),
                       critic_in)

    def values_and_advantages(self, t: Tensors, batch: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
        """The current critic's values of every row, and GAE along each seat's trajectory."""
        p = self.cfg.ppo
        with th.no_grad():
            values = th.cat([self.model.forward_value(c) for c in th.split(t.critic_in, 4096)]).cpu().numpy()
        return values, gae(values, batch["rew"], batch["done"], batch["next"], batch["open"], p.gamma, p.gae_lambda)

    # ------------------------------------------------------------------ update
    def update(self, batch: Dict[str, Any]) -> Dict[str, float]:
        """Values with the current critic, GAE, then ``n_epochs`` of clipped PPO on the trained rows
        (:meth:`ppo_update`), with a helper thread for the critic when ``parallel_update`` is on (the
        thread lives only during the update: sampler processes and workers are never forked beside it)."""
        if not self.parallel:
            return self.ppo_update(batch, None)
        with helper_thread() as helper:
            return self.ppo_update(batch, helper)

    def beside(self, helper: Optional[ThreadPoolExecutor]) -> Optional[ThreadPoolExecutor]:
        """``helper`` when the second core is free (no sampler process playing), else None: the
        caller then runs the helper's parts itself (the results are the same either way)."""
        return None if helper is None or self.sampler_busy() else helper

    def ppo_update(self, batch: Dict[str, Any], helper: Optional[ThreadPoolExecutor]) -> Dict[str, float]:
        """:meth:`update`; ``helper``: the thread for the critic's parts, or None (all in this one)."""
        p, dev = self.cfg.ppo, self.device
        lr = self.learning_rate()
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        t = self.tensors(batch)
        critic = Part(self.beside(helper), self.values_and_advantages, t, batch)
        old_logp, weight = self.reference_policy(t.obs, t.mask, t.act, th.from_numpy(batch["logp"]).to(dev))
        values, adv = critic.result()
        rows = np.flatnonzero(~batch["open"])
        returns_np = adv + values
        returns, adv_t = th.from_numpy(returns_np).to(dev), th.from_numpy(adv).to(dev)
        local = th.zeros(NUM_ACTIONS, dtype=th.long, device=dev)   # action id -> column in a minibatch's logits
        stats: Dict[str, List[float]] = {"pg": [], "vf": [], "ent": [], "kl": [], "cf": [], "loss": []}
        going = True
        for _epoch in range(int(p.n_epochs)):
            order = self.rng.permutation(rows)
            for s in range(0, len(order), int(p.batch_size)):
                going = self.minibatch(t, order[s:s + int(p.batch_size)], returns, adv_t, old_logp, weight,
                                       local, helper, stats)
                if not going:
                    break
            if not going:
                break
        self.n_updates += 1
        y, v = returns_np[rows], values[rows]
        var_y = float(np.var(y))
        ev = float("nan") if var_y == 0 else 1.0 - float(np.var(y - v)) / var_y

        def mean(xs: List[float]) -> float:
            return float(np.mean(xs)) if xs else float("nan")
        return {"entropy_loss": mean(stats["ent"]), "policy_gradient_loss": mean(stats["pg"]),
                "value_loss": mean(stats["vf"]), "approx_kl": mean(stats["kl"]), "clip_fraction": mean(stats["cf"]),
                "loss": mean(stats["loss"]), "explained_variance": ev, "n_updates": float(self.n_updates),
                "clip_range": float(p.clip_range), "learning_rate": lr, "samples": float(len(rows))}

    def learning_rate(self) -> float:
        """The next update's learning rate: ``ppo.learning_rate``, times the fraction of
        ``total_timesteps`` still to come when ``ppo.anneal_lr`` is on."""
        p = self.cfg.ppo
        if not p.anneal_lr:
            return float(p.learning_rate)
        return float(p.learning_rate) * max(0.0, 1.0 - self.run.timesteps / max(1, int(self.cfg.total_timesteps)))

    def critic_step(self, critic_in: th.Tensor, returns: th.Tensor, mb: th.Tensor) -> th.Tensor:
        """The critic's part of a minibatch: value loss and its gradients (the critic's own)."""
        vf_loss = value_loss(self.model.forward_value(critic_in[mb]), returns[mb])
        (self.cfg.ppo.vf_coef * vf_loss).backward()
        return vf_loss

    def minibatch(self, t: Tensors, mb_np: np.ndarray, returns: th.Tensor, adv: th.Tensor, old_logp: th.Tensor,
                  weight: Optional[th.Tensor], local: th.Tensor, helper: Optional[ThreadPoolExecutor],
                  stats: Dict[str, List[float]]) -> bool:
        """One gradient step on the rows ``mb_np``; False when ``target_kl`` stops the update (no step)."""
        p, model = self.cfg.ppo, self.model
        mb = th.from_numpy(mb_np).to(self.device)
        self.optimizer.zero_grad(set_to_none=True)
        side = self.beside(helper)
        critic = Part(side, self.critic_step, t.critic_in, returns, mb)
        # only the actions legal in some row of the minibatch (about a quarter of the 705):
        # the others are masked in every row, so their probabilities and gradients are zero
        cols = th.from_numpy(np.flatnonzero(t.mask_np[mb_np].any(0))).to(self.device)
        local[cols] = th.arange(len(cols), device=self.device)
        # the actor's weight gradients: from each layer's output gradient as the backward
        # pass reaches it, in the helper thread while this one goes on down the layers
        logits, layers = model.logits_by_layer(t.obs[mb], cols)
        weight_jobs = hook_weight_gradients(layers, side)
        pg_loss, ent_loss, kl, clip_fraction = policy_loss(
            logits, t.mask[mb][:, cols], local[t.act[mb]], old_logp[mb], adv[mb],
            None if weight is None else weight[mb], float(p.clip_range), bool(p.normalize_advantage))
        stats["cf"].append(clip_fraction)
        if p.target_kl is not None and kl > 1.5 * p.target_kl:
            critic.settle()
            return False
        # the two networks share no parameter: separate backward passes give each the
        # gradients of the whole loss pg + ent_coef * ent + vf_coef * vf
        (pg_loss + p.ent_coef * ent_loss).backward()
        vf_loss = critic.result()
        for job in weight_jobs:
            job.result()
        loss = pg_loss + p.ent_coef * ent_loss + p.vf_coef * vf_loss
        nn.utils.clip_grad_norm_(model.parameters(), p.max_grad_norm)
        self.optimizer.step()
        for key, value in (("pg", pg_loss.item()), ("vf", vf_loss.item()), ("ent", ent_loss.item()), ("kl", kl),
                           ("loss", loss.item())):
            stats[key].append(value)
        return True


__all__ = ["ActorCritic", "actor_weights", "load_actor_weights", "BatchedPPO", "gae", "policy_loss", "value_loss"]
