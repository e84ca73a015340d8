"""One seat's episode of the single-seat env, played and kept as arrays: by an agent (``dataset collect``)
or from a game record (``dataset from-records``).

Both go through :class:`handfoot_env.single_seat.SingleSeatEnv` itself, so an episode is what the env
gives: its observations, masks, rewards, terminations and truncations.

* **Collect**: game ``i`` of a collection has the reset seed :func:`game_seed` ``(seed, i)``; each
  recorded seat ``s`` is an episode of the env made with ``seat=s`` and the other seats' specs, reset
  with that seed (the same deal for every seat of the game); the seat's own agent (built from its spec,
  reset with :func:`agent_seed`) chooses each action.  Resetting the dataset's env with the episode's
  seat and seed and playing its actions gives its observations, masks and rewards again.
* **Records**: the env is reset with the record's deal (``options``: ``game_seed``, ``round``,
  ``scores``, ``shoe``) and every seat plays the record's actions in order (:class:`RecordedSeat`); a
  person's or a time-limited agent's choices are replayed, not asked again.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from experiments.datasets.minari_store import episode_buffer, metadata_json
from handfoot_env.actions import ACTION_INDEX
from handfoot_env.compiled import make_game
from handfoot_env.single_seat import SingleSeatEnv
from handfoot_env.turns import agent_action


def game_seed(seed: int, game: int) -> int:
    """The reset seed of game ``game`` of a collection seeded ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(game)]).generate_state(1)[0])


def agent_seed(seed: int, game: int, seat: int) -> int:
    """The seed the recorded seat's own agent is reset with."""
    return int(np.random.SeedSequence([int(seed), int(game), int(seat), 1]).generate_state(1)[0] % (2 ** 31))


def seat_kwargs(seat: int, specs: Sequence[Any], rules: Any) -> Dict[str, Any]:
    """The single-seat env's ``seat``, ``partner`` and ``opponents`` for ``seat`` when ``specs[p]`` plays
    every other seat ``p`` (its partners share one spec: the first partner's): what
    ``dataset.recover_environment(**seat_kwargs(...))`` needs to replay that seat's episode."""
    team = make_game("reference", rules).team_of
    partners = [p for p in range(len(specs)) if p != seat and team[p] == team[seat]]
    rivals = [p for p in range(len(specs)) if team[p] != team[seat]]
    return {"seat": int(seat), "partner": specs[partners[0]] if partners else None,
            "opponents": [specs[p] for p in rivals]}


def seat_env(seat: int, specs: Sequence[Any], rules: Any, core: str) -> SingleSeatEnv:
    """The single-seat env of ``seat`` with ``specs[p]`` in every other seat ``p``."""
    return SingleSeatEnv(rules=rules, core=core, **seat_kwargs(seat, specs, rules))


def play_episode(env: SingleSeatEnv, choose: Any, seed: Optional[int], options: Optional[Dict[str, Any]],
                 game: int, seats: Sequence[str]) -> Tuple[Any, Dict[str, Any]]:
    """Reset ``env`` (``seed``, ``options``) and play its seat with ``choose(env, legal) -> action`` to the
    episode's end; the episode (:func:`experiments.datasets.minari_store.episode_buffer`) and its metadata."""
    obs, info = env.reset(seed=seed, options=options)
    g = env.game
    observations = [obs]
    masks = [info["action_mask"]]
    rounds = [g.round]
    actions: List[int] = []
    rewards: List[float] = []
    ends: List[Tuple[bool, bool]] = []
    done = False
    while not done:
        legal = np.flatnonzero(masks[-1]).tolist()
        a = int(choose(env, legal))
        obs, reward, terminated, truncated, info = env.step(a)
        if "illegal_action" in info:
            raise ValueError(f"seat {env.seat}, game {game}: {info['illegal_action']}")
        actions.append(a)
        rewards.append(reward)
        ends.append((terminated, truncated))
        observations.append(obs)
        masks.append(info["action_mask"])
        rounds.append(g.round)
        done = terminated or truncated
    n = len(observations)
    infos = {"action_mask": np.stack(masks).astype(np.int8), "seat": np.full(n, env.seat, dtype=np.int64),
             "round": np.asarray(rounds, dtype=np.int64), "game": np.full(n, game, dtype=np.int64)}
    end = np.asarray(ends, dtype=bool).reshape(-1, 2)
    buf = episode_buffer(np.stack(observations).astype(np.float32), np.asarray(actions, dtype=np.int64),
                         np.asarray(rewards, dtype=np.float64), end[:, 0].copy(), end[:, 1].copy(), infos, seed,
                         options)
    meta = {"seat": env.seat, "game": game, "seats": metadata_json(list(seats)), "scores": list(info["scores"]),
            "team": int(info["team"]), "winner": -1 if info["winner"] is None else int(info["winner"]),
            "truncated": bool(info["truncated"]), "decisions": len(actions)}
    return buf, meta


# --------------------------------------------------------------------------- collect
def collect_games(task: Tuple[Any, ...]) -> List[Tuple[Any, Dict[str, Any]]]:
    """Worker: the episodes of games ``first .. first + count - 1`` of a collection, in order (game, seat)."""
    from agents.registry import make_agent
    rules, specs, seed, first, count, seats, core = task
    envs = {s: seat_env(s, specs, rules, core) for s in seats}
    own = {s: make_agent(specs[s], 0) for s in seats}
    out = []
    for game in range(first, first + count):
        gs = game_seed(seed, game)
        for s in seats:
            agent = own[s]
            agent.reset(s, envs[s].rules, agent_seed(seed, game, s))
            out.append(play_episode(envs[s], lambda env, legal, a=agent: agent_action(a, env.game, env.seat, legal),
                                    gs, None, game, specs))
    return out


# --------------------------------------------------------------------------- records
class RecordedSeat:
    """Plays a seat's actions of a game record, in the record's order (every seat of a replayed game
    holds one on the same shared log; it needs neither observation nor view)."""

    needs_observation = False
    needs_view = False

    def __init__(self, log: "RecordLog", seat: int):
        self.log = log
        self.seat = seat

    def reset(self, seat: int, rules: Any, seed: int) -> None:
        self.seat = seat

    def act(self, observation: Any, view: Any) -> int:
        return self.log.take(self.seat)


class RecordLog:
    """A record's action log, taken in order by the seats that played it."""

    def __init__(self, actions: Sequence[Sequence[Any]]):
        self.actions = [(int(p), ACTION_INDEX[name]) for p, name in actions]
        self.next = 0

    def take(self, seat: int) -> int:
        if self.next >= len(self.actions):
            raise ValueError(f"the record's actions end before the game does (seat {seat} is to act)")
        p, a = self.actions[self.next]
        if p != seat:
            raise ValueError(f"action {self.next + 1}: the record has seat {p} acting, the game has seat {seat}")
        self.next += 1
        return a


def record_episodes(record: Dict[str, Any], game: int, seats: Sequence[str], core: str,
                    recorded: Optional[Sequence[int]] = None) -> List[Tuple[Any, Dict[str, Any]]]:
    """The episodes of a checked game record's seats (``recorded``: which, all by default); ``seats``: who
    played each seat (an agent spec or ``person``), kept in the metadata."""
    opts = record["options"]
    options = {"game_seed": int(record["seed"]), "round": int(opts.get("round") or 1),
               "scores": list(opts["scores"]) if opts.get("scores") is not None else None}
    if opts.get("shoe") is not None:
        options["shoe"] = list(opts["shoe"])
    out = []
    n = len(seats)
    for s in (range(n) if recorded is None else recorded):
        env = SingleSeatEnv(seat=s, partner="random", opponents="random", rules=record["rules"], core=core)
        log = RecordLog(record["actions"])
        env.players = [None if p == s else RecordedSeat(log, p) for p in range(n)]
        stored = {k: v for k, v in options.items() if v is not None}
        buf, meta = play_episode(env, lambda e, legal, lg=log: lg.take(e.seat), 0, stored, game, seats)
        if log.next != len(log.actions):
            raise ValueError(f"the game ends after {log.next} of the record's {len(log.actions)} actions")
        out.append((buf, meta))
    return out


__all__ = ["game_seed", "agent_seed", "seat_kwargs", "seat_env", "play_episode", "collect_games", "RecordedSeat",
           "RecordLog", "record_episodes"]
