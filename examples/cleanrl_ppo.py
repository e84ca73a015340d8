"""CleanRL-style PPO on the single-seat env: one file, masked logits, Gymnasium vector envs.

    python examples/cleanrl_ppo.py --total-timesteps 50000 --partner greedy --opponents greedy

The learner plays seat 0 of ``single_seat_v0`` (its partner and opponents are agent specs played
inside the env). The policy's logits are masked with the env's legal-action mask
(``action_masks()``), so the learner only ever samples legal actions, and the PPO loss uses the
same masked distribution. Everything else is CleanRL's ``ppo.py``: GAE, clipped surrogate, value
loss, entropy bonus, minibatch epochs. Only torch and the main install are needed.
"""
from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import handfoot_env  # noqa: F401  (registers handfoot/SingleSeat-v0)


def make_envs(n: int, partner: str, opponents: str, seed: int) -> gym.vector.SyncVectorEnv:
    fns = [lambda: gym.make("handfoot/SingleSeat-v0", partner=partner, opponents=opponents) for _ in range(n)]
    envs = gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    envs.reset(seed=seed)
    return envs


def masks_of(envs) -> torch.Tensor:
    return torch.as_tensor(np.stack(envs.call("action_masks")), dtype=torch.bool)


class Agent(nn.Module):
    def __init__(self, obs_size: int, n_actions: int, hidden: int = 256):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                    nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                   nn.Linear(hidden, n_actions))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, mask, action=None):
        logits = self.actor(x).masked_fill(~mask, -1e8)           # illegal actions get no probability
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def train(total_timesteps: int = 20_000, num_envs: int = 4, num_steps: int = 128, partner: str = "greedy",
          opponents: str = "greedy", seed: int = 0, lr: float = 2.5e-4, gamma: float = 0.99,
          gae_lambda: float = 0.95, num_minibatches: int = 4, update_epochs: int = 4, clip_coef: float = 0.2,
          ent_coef: float = 0.01, vf_coef: float = 0.5, max_grad_norm: float = 0.5, verbose: bool = True) -> dict:
    torch.manual_seed(seed)
    np.random.seed(seed)
    envs = make_envs(num_envs, partner, opponents, seed)
    obs_size, n_actions = envs.single_observation_space.shape[0], envs.single_action_space.n
    scale = torch.as_tensor(np.maximum(envs.single_observation_space.high, 1.0))   # inputs to about [0, 1]
    agent = Agent(obs_size, n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches
    obs_b = torch.zeros((num_steps, num_envs, obs_size))
    mask_b = torch.zeros((num_steps, num_envs, n_actions), dtype=torch.bool)
    act_b = torch.zeros((num_steps, num_envs), dtype=torch.long)
    logp_b, rew_b, done_b, val_b = (torch.zeros((num_steps, num_envs)) for _ in range(4))
    next_obs = torch.as_tensor(envs.reset(seed=seed)[0]) / scale
    next_mask = masks_of(envs)
    next_done = torch.zeros(num_envs)
    step, t0, returns, history = 0, time.time(), [], []
    ep_return = np.zeros(num_envs)
    for update in range(1, total_timesteps // batch_size + 1):
        for t in range(num_steps):
            step += num_envs
            obs_b[t], mask_b[t], done_b[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logp, _, value = agent.get_action_and_value(next_obs, next_mask)
            act_b[t], logp_b[t], val_b[t] = action, logp, value.flatten()
            obs, reward, term, trunc, _ = envs.step(action.numpy())
            ep_return += reward
            for i in np.flatnonzero(term | trunc):
                returns.append(ep_return[i])
                ep_return[i] = 0.0
            rew_b[t] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_mask = torch.as_tensor(obs) / scale, masks_of(envs)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32)
        with torch.no_grad():                                         # generalised advantage estimation
            next_value = agent.get_value(next_obs).flatten()
            adv_b = torch.zeros_like(rew_b)
            last = 0.0
            for t in reversed(range(num_steps)):
                nonterminal = 1.0 - (next_done if t == num_steps - 1 else done_b[t + 1])
                nv = next_value if t == num_steps - 1 else val_b[t + 1]
                delta = rew_b[t] + gamma * nv * nonterminal - val_b[t]
                adv_b[t] = last = delta + gamma * gae_lambda * nonterminal * last
            ret_b = adv_b + val_b
        b_obs, b_mask, b_act = obs_b.reshape(batch_size, -1), mask_b.reshape(batch_size, -1), act_b.reshape(-1)
        b_logp, b_adv, b_ret = logp_b.reshape(-1), adv_b.reshape(-1), ret_b.reshape(-1)
        for _ in range(update_epochs):
            for idx in torch.randperm(batch_size).split(minibatch_size):
                _, newlogp, entropy, newvalue = agent.get_action_and_value(b_obs[idx], b_mask[idx], b_act[idx])
                ratio = (newlogp - b_logp[idx]).exp()
                adv = (b_adv[idx] - b_adv[idx].mean()) / (b_adv[idx].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_ret[idx]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
        history.append({"step": step, "pg_loss": pg_loss.item(), "v_loss": v_loss.item(),
                        "entropy": entropy.mean().item()})
        if verbose:
            recent = f"{np.mean(returns[-20:]):+.2f}" if returns else "n/a"
            print(f"update {update}: {step:,} steps, {step / (time.time() - t0):.0f} steps/s, episodes "
                  f"{len(returns)}, mean return (last 20) {recent}, value loss {v_loss.item():.3f}")
    envs.close()
    return {"agent": agent, "steps": step, "episodes": len(returns), "history": history}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--total-timesteps", type=int, default=20_000)
    ap.add_argument("--num-envs", type=int, default=4)
    ap.add_argument("--num-steps", type=int, default=128)
    ap.add_argument("--partner", default="greedy")
    ap.add_argument("--opponents", default="greedy")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    train(a.total_timesteps, a.num_envs, a.num_steps, a.partner, a.opponents, a.seed)
