"""Episodes and rewards: the one definition every env and training runner uses.

What a seat is rewarded, when an episode ends and when it is cut short are rules
of the *environment*, not of the game, and they are the same everywhere a game
is played for learning: the AEC env (:mod:`handfoot_env.env`), the self-play
training env, the batched runner and the RLlib wrapper.  Each of them builds an
:class:`EpisodeRules` from its arguments and asks it; none computes a reward of
its own.

Rewards (``reward``):

* ``"round_score_diff"`` (default): when a round ends, each seat receives its
  team's round score minus the opponents' (with more than two teams, minus the
  mean of the other teams), times ``reward_scale``.
* ``"game_win"``: at the end of the episode +1 to the winning team's seats, -1
  to the others, 0 to all for a draw; nothing before.  In single-round episodes
  the round's scores decide.

Partners always receive identical rewards: every reward is a function of the
team only.

Episodes (``episode``): ``"game"`` (all rounds, and an extra round if the rules
break a tie that way) or ``"round"`` (the episode ends when the first round
ends).

Truncation: at most ``max_actions`` game actions per episode, by default
:data:`DEFAULT_ACTIONS_PER_ROUND` per round.  Heuristic agents use about
400-900 actions per four-round game; the engine's proven bound
(:func:`handfoot_env.engine.max_actions_per_game`) is far larger, and the cap
only stops degenerate policies that cancel and re-meld forever.

A runner that steps several seats of one game between a seat's decisions asks
:meth:`EpisodeRules.reward_since` for that seat's reward since its last decision:
the sum of what the AEC env would have given that seat over those steps.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from .config import RuleConfig
from .engine import GAME_OVER, Game

REWARDS = ("round_score_diff", "game_win")
EPISODES = ("game", "round")
DEFAULT_ACTIONS_PER_ROUND = 3000


def _choice(name: str, value: object, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return str(value)


def episode_rounds(rules: RuleConfig, episode: str = "game") -> int:
    """Most rounds one episode can hold (an extra round counts where ties are broken by one)."""
    if episode == "round":
        return 1
    return rules.rounds + (1 if rules.tie_break == "extra_round" else 0)


def round_reward(game: Game, team: int, totals: Sequence[int], scale: float) -> float:
    """``round_score_diff`` reward of ``team`` for one finished round's ``totals``."""
    nt = game.num_teams
    others = 0
    for u in range(nt):
        if u != team:
            others += totals[u]
    return (totals[team] - others / (nt - 1)) * scale


def episode_winner(game: Game) -> Optional[int]:
    """The team that wins the episode that has just ended (None: a draw).

    At game over the game's winner; after a single-round episode the team with
    the round's best score, if it is alone.
    """
    if game.phase == GAME_OVER:
        return game.winner
    totals = game.round_scores[-1]
    best = max(totals)
    return totals.index(best) if totals.count(best) == 1 else None


def win_reward(team: int, winner: Optional[int]) -> float:
    """``game_win`` reward of ``team`` when the episode's winner is ``winner``."""
    return 0.0 if winner is None else (1.0 if team == winner else -1.0)


class EpisodeRules:
    """Reward kind, episode kind and action cap for one rule set (see the module docstring).

    Arguments are validated here, once, with a one-line message naming the bad one.
    """

    __slots__ = ("reward", "reward_scale", "episode", "max_actions")

    def __init__(self, rules: RuleConfig, reward: str = "round_score_diff", reward_scale: float = 0.001,
                 episode: str = "game", max_actions: Optional[int] = None):
        self.reward = _choice("reward", reward, REWARDS)
        self.episode = _choice("episode", episode, EPISODES)
        self.reward_scale = float(reward_scale)
        if max_actions is None:
            max_actions = DEFAULT_ACTIONS_PER_ROUND * episode_rounds(rules, self.episode)
        if isinstance(max_actions, bool) or int(max_actions) < 1:
            raise ValueError(f"max_actions must be positive, got {max_actions!r}")
        self.max_actions = int(max_actions)

    # ------------------------------------------------------------ episode end
    def done(self, game: Game) -> bool:
        """The episode has ended (game over, or the first round over in single-round episodes)."""
        return game.phase == GAME_OVER or (self.episode == "round" and len(game.round_scores) >= 1)

    def truncated(self, game: Game) -> bool:
        """The episode is cut short by the action cap (only when it has not ended)."""
        return game.action_count >= self.max_actions and not self.done(game)

    # ------------------------------------------------------------ rewards
    def round_end_reward(self, game: Game, team: int, totals: Sequence[int]) -> float:
        """What each seat of ``team`` receives when a round ends with ``totals``."""
        if self.reward != "round_score_diff":
            return 0.0
        return round_reward(game, team, totals, self.reward_scale)

    def final_reward(self, game: Game, team: int) -> float:
        """What each seat of ``team`` receives when the episode ends (on top of the round reward)."""
        if self.reward != "game_win":
            return 0.0
        return win_reward(team, episode_winner(game))

    def reward_since(self, game: Game, team: int, rounds_seen: int, final_paid: bool = False
                     ) -> Tuple[float, int, bool]:
        """A seat's reward since it last looked, as the AEC env would have paid it over those steps.

        ``rounds_seen`` is the number of finished rounds already paid and
        ``final_paid`` whether the episode-end reward was.  Returns the reward,
        the new ``rounds_seen`` and the new ``final_paid``.
        """
        r = 0.0
        scores = game.round_scores
        finished = len(scores)
        if self.episode == "round" and finished > 1:
            finished = 1                        # the episode ended with the first round
        if finished > rounds_seen:
            if self.reward == "round_score_diff":
                for totals in scores[rounds_seen:finished]:
                    r += round_reward(game, team, totals, self.reward_scale)
            rounds_seen = finished
        if not final_paid and self.done(game):
            r += self.final_reward(game, team)
            final_paid = True
        return r, rounds_seen, final_paid


__all__ = ["REWARDS", "EPISODES", "DEFAULT_ACTIONS_PER_ROUND", "EpisodeRules", "episode_rounds",
           "round_reward", "episode_winner", "win_reward"]
