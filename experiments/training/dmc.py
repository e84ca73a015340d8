"""Deep Monte-Carlo (DMC) with action features: the second learner family (``backend: dmc``).

After DouZero (Zha et al., 2021, "DouZero: Mastering DouDizhu with Self-Play Deep Reinforcement
Learning").  :class:`experiments.training.trainer.Trainer` runs it with the run folder, TensorBoard
tags, evaluation, snapshots, checkpoints and ``--resume`` of the other backends.  Readable top to
bottom:

1. **Network** (:class:`QNetwork`): Q(s, a), an MLP (``network.pi`` hidden sizes,
   ``network.activation``) on the seat's observation (fixed input scale, as PPO's actor) joined
   with the features of the action itself (:data:`handfoot_env.actions.ACTION_FEATURES`: kind,
   card, wild meld, naturals, twos, jokers, count), one output.  Actions that share features
   share what is learned about them: a meld of three naturals of any rank, a discard of any card.
   It exports to an ``actor.npz`` of ``kind = "q"`` (:func:`q_weights`) that ``policy:PATH`` plays
   greedily (:class:`agents.policy.QPolicy`).
2. **Games**: the batched backend's sampler (:class:`experiments.training.sampler.Sampler`),
   unchanged: both seats of one team learn, the other team is drawn from ``opponents``
   (snapshots of the learner, agent specs), one forward pass per network per tick.  The learner
   plays epsilon-greedy on Q over the legal actions (``dmc.epsilon``); snapshots play greedily.
   With ``batched.pipeline`` the next games are played while the learner updates, with the
   weights from before the update (Monte-Carlo targets need no correction for the lag: the return
   is what followed the action, whoever chose it).
3. **Targets** (:class:`EpisodeReturns`): a decision's target is the seat's Monte-Carlo return,
   the sum of the rewards the env gives that seat from the decision on (``dmc.gamma`` per
   decision, 1 by default), to the end of the round (``dmc.horizon: round``, the default) or of
   the game (``game``).  Each round of Hand and Foot is a new deal and ``round_score_diff`` pays
   each round's score difference at its end, so what a decision can change ends with its round:
   the later rounds add the same expected amount to every action's value and only noise to its
   target, and cutting them off leaves the greedy policy alone while dividing the target's
   variance.  A game spans many rollouts, so decisions wait in their trajectory until its game
   ends; games cut by ``max_actions`` have no return and are dropped.
4. **Update** (:meth:`DMCLearner.update`): mean squared error of Q(s, a) against the returns of
   the games that ended since the previous update, ``dmc.n_epochs`` passes in minibatches of
   ``dmc.batch_size``, Adam, gradient clipping.

Checkpoints hold the network and Adam state as plain arrays; the decisions of games still in play
at a checkpoint are not saved, so a resumed run starts its targets from the next games.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch as th
from torch import nn

from experiments.training.learner import RunContext
from experiments.training.networks import TorchLearner, mlp, resolve_device, to_array
from handfoot_env.actions import ACTION_FEATURES
from handfoot_env.config import load_rules
from handfoot_env.observation import observation_scale, observation_size
from agents.policy import Q_KIND


# =========================================================================== 1. network
class QNetwork(nn.Module):
    """Q(s, a): an MLP on the scaled observation joined with the action's feature row."""

    def __init__(self, players: int, teams: int, hidden: List[int], activation: str = "relu"):
        super().__init__()
        self.obs_size = observation_size(players, teams)
        self.activation = activation
        self.register_buffer("scale", th.as_tensor(observation_scale(players, teams)))
        self.register_buffer("features", th.from_numpy(np.array(ACTION_FEATURES)))
        self.body, h = mlp(self.obs_size + ACTION_FEATURES.shape[1], hidden, activation)
        self.out = nn.Linear(h, 1)

    def forward(self, obs: th.Tensor, act: th.Tensor) -> th.Tensor:
        x = th.cat([obs * self.scale, self.features[act]], dim=1)
        return self.out(self.body(x)).squeeze(-1)


def q_weights(model: QNetwork) -> Dict[str, Any]:
    """The network as NumPy arrays of ``kind = "q"`` (:class:`agents.policy.QPolicy`, ``actor.npz``)."""
    arr = to_array
    layers = [(arr(m.weight), arr(m.bias)) for m in model.body if isinstance(m, nn.Linear)]
    return {"kind": Q_KIND, "scale": arr(model.scale), "visible": model.obs_size, "layers": layers,
            "activation": model.activation, "features": arr(model.features),
            "out": (arr(model.out.weight), arr(model.out.bias))}


# =========================================================================== 3. targets
#: how far a decision's Monte-Carlo return reaches (``dmc.horizon``)
HORIZONS = ("round", "game")


class EpisodeReturns:
    """Collects each learning seat's decisions across rollouts and yields them with their
    Monte-Carlo returns once the seat's game has ended.

    A rollout's rows carry ``trace = (game slot, episode of the slot, seat, decision number)``;
    a row marked ``open`` is not final (the sampler carries it into the next rollout, or it is
    the bootstrap row of a cut game) and is skipped here.
    """

    def __init__(self, gamma: float = 1.0, horizon: str = "game"):
        if horizon not in HORIZONS:
            raise ValueError(f"horizon: expected one of {HORIZONS}, got {horizon!r}")
        self.gamma = float(gamma)
        self.per_round = horizon == "round"
        self.pending: Dict[Tuple[int, int, int], List[Tuple[int, np.ndarray, int, float, int]]] = {}
        self.episode_of_slot: Dict[int, int] = {}
        self.dropped = 0                                       # decisions of games cut by max_actions

    def add(self, batch: Dict[str, Any]) -> Dict[str, np.ndarray]:
        """Take one rollout; return ``obs``, ``act``, ``ret`` (the return) and ``trace`` of every
        decision whose game has ended, each trajectory in decision order."""
        out: Dict[str, List[Any]] = {"obs": [], "act": [], "ret": [], "trace": []}
        obs, act, rew, done, trace = batch["obs"], batch["act"], batch["rew"], batch["done"], batch["trace"]
        rnd = batch["round"]
        for k in np.flatnonzero(~batch["open"]).tolist():
            slot, ep, seat, n = trace[k].tolist()
            if self.episode_of_slot.get(slot, -1) < ep:
                self._drop_older(slot, ep)
            key = (slot, ep, seat)
            rows = self.pending.setdefault(key, [])
            rows.append((n, obs[k], int(act[k]), float(rew[k]), int(rnd[k])))
            if done[k]:
                del self.pending[key]
                rows.sort(key=lambda r: r[0])
                g = 0.0
                rets = [0.0] * len(rows)
                for j in range(len(rows) - 1, -1, -1):
                    if self.per_round and j + 1 < len(rows) and rows[j + 1][4] != rows[j][4]:
                        g = 0.0                  # the decision's round ends with it: later rounds are cut off
                    g = rows[j][3] + self.gamma * g
                    rets[j] = g
                out["obs"].extend(r[1] for r in rows)
                out["act"].extend(r[2] for r in rows)
                out["ret"].extend(rets)
                out["trace"].extend((slot, ep, seat, r[0]) for r in rows)
        n_obs = obs.shape[1]
        return {"obs": np.stack(out["obs"]).astype(np.float32) if out["obs"] else np.zeros((0, n_obs), np.float32),
                "act": np.asarray(out["act"], np.int64), "ret": np.asarray(out["ret"], np.float32),
                "trace": np.asarray(out["trace"], np.int64).reshape(-1, 4)}

    def _drop_older(self, slot: int, ep: int) -> None:
        """A new game in ``slot``: trajectories of its earlier games that never ended were cut."""
        self.episode_of_slot[slot] = ep
        for key in [k for k in self.pending if k[0] == slot and k[1] < ep]:
            self.dropped += len(self.pending.pop(key))

    @property
    def waiting(self) -> int:
        return sum(len(v) for v in self.pending.values())


# =========================================================================== 4. learner
class DMCLearner(TorchLearner):
    """The ``dmc`` learner (a :class:`experiments.training.learner.RolloutLearner`): Q network, Adam,
    Monte-Carlo targets and regression updates on the rollouts the trainer's samplers play."""

    title = "batched DMC"

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.rollout_size = int(cfg.dmc.rollout)
        self.targets = EpisodeReturns(cfg.dmc.gamma, cfg.dmc.horizon)
        self.n_updates = 0

    def setup(self, run: RunContext, checkpoint: Optional[Dict[str, Any]]) -> None:
        cfg, d = self.cfg, self.cfg.dmc
        r = load_rules(cfg.rules)
        th.manual_seed(int(run.seed))
        self.device = resolve_device(cfg.batched.device)
        self.model = QNetwork(r.players, r.teams, list(cfg.network.pi), cfg.network.activation).to(self.device)
        self.optimizer = th.optim.Adam(self.model.parameters(), lr=d.learning_rate, eps=1e-5)
        self.rng = np.random.Generator(np.random.PCG64(int(run.seed)))       # minibatch order
        self.restore(run.resume if checkpoint is not None else None)

    def sampler_options(self) -> Dict[str, Any]:
        return {"epsilon": self.cfg.dmc.epsilon}

    def actor(self) -> Dict[str, Any]:
        return q_weights(self.model)


    def update(self, batch: Dict[str, Any]) -> Dict[str, float]:
        """Regress Q(s, a) on the returns of the decisions whose games ended (none: no update)."""
        d = self.cfg.dmc
        ready = self.targets.add(batch)
        obs_np, act_np, ret_np = ready["obs"], ready["act"], ready["ret"]
        n = len(act_np)
        if n == 0:
            return {}
        dev = self.device
        obs, act, ret = th.from_numpy(obs_np).to(dev), th.from_numpy(act_np).to(dev), th.from_numpy(ret_np).to(dev)
        losses: List[float] = []
        q_sum = 0.0
        for _epoch in range(int(d.n_epochs)):
            order = th.from_numpy(self.rng.permutation(n)).to(dev)
            for s in range(0, n, int(d.batch_size)):
                mb = order[s:s + int(d.batch_size)]
                q = self.model(obs[mb], act[mb])
                loss = ((q - ret[mb]) ** 2).mean()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), d.max_grad_norm)
                self.optimizer.step()
                losses.append(loss.item())
                q_sum += float(q.detach().sum())
        self.n_updates += 1
        var = float(np.var(ret_np))
        return {"loss": float(np.mean(losses)), "q_mean": q_sum / (n * int(d.n_epochs)),
                "return_mean": float(ret_np.mean()), "return_var": var, "samples": float(n),
                "waiting": float(self.targets.waiting), "dropped": float(self.targets.dropped),
                "epsilon": float(d.epsilon), "learning_rate": float(d.learning_rate),
                "n_updates": float(self.n_updates)}


__all__ = ["QNetwork", "q_weights", "EpisodeReturns", "DMCLearner", "HORIZONS"]
