"""TorchRL on the AEC env: ``PettingZooWrapper`` with a masked policy shared by the four seats.

    pip install -e ".[examples]"
    python examples/torchrl_pettingzoo.py --steps 300

The four players form one TorchRL group, so one network (an MLP over each seat's observation) plays
every seat. At each step only the player to act is active (``mask``); its logits are masked with
the env's exact legal-action mask (``action_mask``) through a ``MaskedCategorical``, so every
action sampled is legal. The script checks the env's specs, rolls out and reports what it saw.
"""
from __future__ import annotations

import argparse

import torch
from tensordict.nn import TensorDictModule
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from handfoot_env import handfoot_v0


def make_env(seed: int = 0) -> PettingZooWrapper:
    aec = handfoot_v0.env()
    group = {"players": list(aec.possible_agents)}            # one group: one shared policy
    return PettingZooWrapper(aec, use_mask=True, categorical_actions=True, group_map=group, seed=seed)


def make_policy(env: PettingZooWrapper, hidden: int = 128) -> ProbabilisticActor:
    obs_size = env.observation_spec["players", "observation", "observation"].shape[-1]
    n_actions = env.action_spec["players", "action"].space.n
    net = torch.nn.Sequential(torch.nn.Linear(obs_size, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, n_actions))
    logits = TensorDictModule(net, in_keys=[("players", "observation", "observation")],
                              out_keys=[("players", "logits")])
    return ProbabilisticActor(logits, in_keys={"logits": ("players", "logits"), "mask": ("players", "action_mask")},
                              out_keys=[("players", "action")], distribution_class=MaskedCategorical,
                              spec=env.full_action_spec)


def main(steps: int = 300, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    env = make_env(seed)
    check_env_specs(env)
    policy = make_policy(env)
    with torch.no_grad():
        rollout = env.rollout(steps, policy, break_when_any_done=False)
    active = rollout["players", "mask"]                               # (steps, 4): the player to act
    action = rollout["players", "action"]                             # (steps, 4)
    legal = rollout["players", "action_mask"].gather(-1, action.unsqueeze(-1)).squeeze(-1)
    reward = rollout["next", "players", "reward"].squeeze(-1)
    stats = {"steps": rollout.batch_size[0], "decisions": int(active.sum()),
             "illegal": int((active & ~legal).sum()), "games_ended": int(rollout["next", "done"].sum()),
             "reward_sum_by_seat": reward.sum(0).tolist()}
    env.close()
    return stats


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    s = main(a.steps, a.seed)
    print(f"{s['steps']} env steps, {s['decisions']} decisions, {s['illegal']} illegal; games ended: "
          f"{s['games_ended']}; reward by seat: {[round(r, 3) for r in s['reward_sum_by_seat']]}")
