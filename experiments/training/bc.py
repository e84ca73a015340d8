"""Behaviour cloning from a Minari dataset: ``backend: bc`` (configs/train/bc.yaml, docs/datasets.md).

:class:`BCLearner` is a :class:`experiments.training.learner.SamplingLearner`: it brings its own samples
(the dataset's decisions, not games), and the :class:`~experiments.training.trainer.Trainer` gives it
the run folder, evaluation, checkpoints, ``--resume`` and records of every backend.  Its output is an
``actor.npz`` that ``policy:PATH`` plays.

1. **Data**: every decision of the dataset ``bc.dataset`` (a Minari id:
   :func:`experiments.datasets.minari_store.decisions`): the observation, the legal actions and the
   action taken.  The games whose number falls in the held-out share (``bc.holdout``, drawn from
   ``bc.split_seed`` per game, so every seat of a game is on the same side) are never trained on.
2. **Network**: the actor of :class:`experiments.training.batched_ppo.ActorCritic` (``network.pi``,
   ``network.activation``, the fixed input scale), so its weights export to the same ``actor.npz``
   as PPO's and a PPO run can start from them; the critic is left as initialised.
3. **Loss**: masked cross-entropy: the logits of illegal actions are set to -1e8 and the loss is
   the negative log-probability of the action taken under the softmax over the legal ones.
4. **Iterations**: ``bc.iteration`` decisions each, in minibatches of ``bc.batch_size`` drawn without
   replacement from a shuffled pass over the training decisions (a new order each pass, from the run's
   seed); ``total_timesteps`` counts decisions trained on (3M on a 1M-decision dataset: three passes).
   The update row holds the loss, the minibatches' agreement and ``heldout_agreement``: how often the
   network's greedy choice is the action taken, over the held-out decisions with at least two legal
   actions (``heldout_agreement_all``: over all of them).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch as th

from experiments.config import ConfigError
from experiments.datasets.minari_store import decisions, handfoot_metadata, load
from experiments.training.batched_ppo import MASKED, ActorCritic, actor_weights
from experiments.training.learner import Iteration, RunContext
from experiments.training.networks import TorchLearner, resolve_device
from handfoot_env.actions import NUM_ACTIONS
from handfoot_env.config import load_rules

#: rows scored at once when measuring agreement
EVAL_ROWS = 8192


def unpack(mask: np.ndarray) -> np.ndarray:
    """Packed mask rows (:func:`experiments.datasets.minari_store.decisions`) as booleans."""
    return np.unpackbits(mask, axis=1, count=NUM_ACTIONS).astype(bool)


def held_out_games(episodes_game: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Whether each game number is held out: a uniform draw per game from ``seed`` below ``share``."""
    games = int(episodes_game.max()) + 1 if len(episodes_game) else 0
    return np.random.default_rng(seed).random(games) < share


def masked_cross_entropy(logits: th.Tensor, mask: th.Tensor, act: th.Tensor) -> th.Tensor:
    """The mean negative log-probability of ``act`` under the softmax over the legal (``mask``) logits."""
    logp = th.log_softmax(logits.masked_fill(~mask, MASKED), dim=1)
    return -logp.gather(1, act[:, None]).mean()


class BCLearner(TorchLearner):
    """The ``bc`` learner (see the module docstring)."""

    title = "behaviour cloning"
    own_snapshots = False

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.n_updates = 0

    # ------------------------------------------------------------------ data
    def read(self) -> None:
        b = self.cfg.bc
        try:
            ds = load(b.dataset)
        except ValueError as e:
            raise ConfigError(f"bc.dataset: {e}") from None
        meta = handfoot_metadata(ds)
        want = load_rules(self.cfg.rules).to_dict()
        if meta.get("rules") is not None and meta["rules"] != want:
            raise ConfigError(f"bc.dataset: {b.dataset} was played under other rules than rules: {self.cfg.rules}")
        data = decisions(ds)
        game_of = self.episode_games(ds)
        games = game_of[data["episode"]]
        held = held_out_games(games, b.holdout, b.split_seed)[games]
        self.train_rows = np.flatnonzero(~held)
        self.held_rows = np.flatnonzero(held)
        if len(self.train_rows) == 0:
            raise ConfigError(f"bc.holdout: {b.holdout} leaves no game of {b.dataset} to train on")
        self.data = data
        self.dataset_info = {"dataset": b.dataset, "episodes": int(ds.total_episodes), "decisions": int(len(games)),
                             "train_decisions": int(len(self.train_rows)),
                             "heldout_decisions": int(len(self.held_rows)),
                             "heldout_games": int(len(np.unique(games[self.held_rows])))}

    @staticmethod
    def episode_games(ds: Any) -> np.ndarray:
        """The game number of each episode (its own index where the metadata has none)."""
        out = []
        for i, m in enumerate(ds.storage.get_episode_metadata(range(ds.total_episodes))):
            out.append(int(m.get("game", i)))
        return np.asarray(out, dtype=np.int64)

    # ------------------------------------------------------------------ learner
    def setup(self, run: RunContext, checkpoint: Optional[Dict[str, Any]]) -> None:
        cfg, net = self.cfg, self.cfg.network
        r = load_rules(cfg.rules)
        self.read()
        th.manual_seed(int(run.seed))
        self.device = resolve_device(cfg.batched.device)
        self.model = ActorCritic(r.players, r.teams, net.pi, net.vf, net.activation, net.ortho_init).to(self.device)
        params = list(self.model.actor.parameters()) + list(self.model.logits.parameters())
        self.optimizer = th.optim.Adam(params, lr=cfg.bc.learning_rate)
        self.rng = np.random.Generator(np.random.PCG64(int(run.seed)))
        self.order = self.rng.permutation(self.train_rows)
        self.cursor = 0
        self.run = run
        self.restore(run.resume if checkpoint is not None else None)

    def batch(self, rows: np.ndarray) -> tuple:
        d = self.data
        obs = th.from_numpy(d["obs"][rows]).to(self.device)
        mask = th.from_numpy(unpack(d["mask"][rows])).to(self.device)
        act = th.from_numpy(d["action"][rows]).to(self.device)
        return obs, mask, act

    def next_rows(self, n: int) -> np.ndarray:
        """The next ``n`` training decisions of the shuffled pass (a new pass reshuffled when one ends)."""
        out: List[np.ndarray] = []
        while n > 0:
            if self.cursor >= len(self.order):
                self.order = self.rng.permutation(self.train_rows)
                self.cursor = 0
            take = self.order[self.cursor:self.cursor + n]
            self.cursor += len(take)
            n -= len(take)
            out.append(take)
        return np.concatenate(out)

    def agreement(self, rows: np.ndarray) -> Dict[str, float]:
        """How often the greedy legal action is the one taken, over ``rows`` and over those of them with at
        least two legal actions."""
        if len(rows) == 0:
            return {}
        hits = np.zeros(len(rows), dtype=bool)
        with th.no_grad():
            for k in range(0, len(rows), EVAL_ROWS):
                part = rows[k:k + EVAL_ROWS]
                obs, mask, act = self.batch(part)
                choice = self.model.forward_logits(obs).masked_fill(~mask, MASKED).argmax(dim=1)
                hits[k:k + len(part)] = (choice == act).cpu().numpy()
        several = self.data["legal"][rows] >= 2
        return {"heldout_agreement": float(hits[several].mean()) if several.any() else float("nan"),
                "heldout_agreement_all": float(hits.mean())}

    def iterate(self, remaining: int, snapshots: Optional[List[Dict[str, Any]]]) -> Optional[Iteration]:
        b = self.cfg.bc
        n = min(int(b.iteration), int(remaining))
        rows = self.next_rows(n)
        losses, agree = [], []
        self.model.train()
        for k in range(0, len(rows), b.batch_size):
            if self.run.stopping():
                return None
            obs, mask, act = self.batch(rows[k:k + b.batch_size])
            logits = self.model.forward_logits(obs)
            loss = masked_cross_entropy(logits, mask, act)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            losses.append(float(loss.detach()))
            with th.no_grad():
                agree.append(float((logits.masked_fill(~mask, MASKED).argmax(dim=1) == act).float().mean()))
        self.n_updates += 1
        stats = {"loss": float(np.mean(losses)), "agreement": float(np.mean(agree)), "n_updates": self.n_updates,
                 "learning_rate": float(b.learning_rate), **self.agreement(self.held_rows)}
        return Iteration(decisions=len(rows), update=stats,
                         scalars={f"bc/{k}": v for k, v in stats.items() if k.endswith("agreement")})

    def actor(self) -> Dict[str, Any]:
        return actor_weights(self.model)

    def describe(self, info: Dict[str, Any]) -> str:
        info["bc"] = dict(self.dataset_info)
        super().describe(info)
        d = self.dataset_info
        return (f"{self.title} on {d['dataset']}: {d['train_decisions']:,} decisions to train on, "
                f"{d['heldout_decisions']:,} held out ({d['heldout_games']} games)")

    def save(self, folder: Path) -> Dict[str, Any]:
        super().save(folder)
        return {"bc": {**self.dataset_info, "cursor": int(self.cursor)}}


__all__ = ["BCLearner", "masked_cross_entropy", "held_out_games", "unpack"]
