"""Round scores and episode rewards on hand-computed cases (docs/rules.md section 6; handfoot_env/episode.py)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from handfoot_env.cards import NUM_KINDS, kind_of
from handfoot_env.config import load_rules
from handfoot_env.engine import ANSWER_PHASE, GAME_OVER, Game
from handfoot_env.episode import EpisodeRules, episode_rounds, episode_winner, round_reward, win_reward
from handfoot_env.scoring import melded_points, round_breakdown, table_score, team_round_score


def _cards(*codes):
    out = [0] * NUM_KINDS
    for c in codes:
        out[kind_of(c)] += 1
    return out


def _table():
    """A pagat round's end, set by hand: team 0 (seats 0, 2) and team 1 (seats 1, 3); seat 1 went out."""
    g = Game("pagat")
    g.reset(seed=1)
    g.books = [[(9, 7, 0, 0), (10, 5, 2, 0)], [(11, 0, 4, 3)]]     # clean K book 70, dirty A book 140 | wild 230
    g.book_counts = [[1, 1, 0], [0, 0, 1]]
    g.melds = [[[0, 0, 0] for _ in range(12)] for _ in range(2)]
    g.melds[0][0] = [3, 0, 1]                                          # 4 4 4 JK: 65
    g.melds[0][11] = [0, 2, 1]                                         # 2 2 JK: 90
    g.red3 = [2, 0]
    g.hands = [_cards("5", "5", "3R"), _cards(), _cards("JK"), _cards("4")]
    g.feet = [None, None, _cards("A", "3B"), None]
    g.went_out = 1
    return g


def test_round_score_items_by_hand():
    g = _table()
    assert melded_points(g, 0) == 70 + 140 + 65 + 90 and melded_points(g, 1) == 230
    # team 0: 365 melded + 500 clean + 300 dirty + 2 x 100 red threes - (10 + 50 + 25) left - 100 red three left
    assert team_round_score(g, 0) == {"melded": 365, "clean_books": 500, "dirty_books": 300, "wild_books": 0,
                                      "red_threes": 200, "went_out": 0, "left": -85, "red_threes_left": -100,
                                      "total": 1180}
    # team 1: 230 melded + 1500 wild book + 100 going out - 5 left
    assert team_round_score(g, 1)["total"] == 230 + 1500 + 100 - 5
    assert team_round_score(g, 1)["went_out"] == 100 and team_round_score(g, 0)["went_out"] == 0
    g.went_out = None                                                  # a stock-out: nobody went out
    assert team_round_score(g, 1)["went_out"] == 0 and team_round_score(g, 1)["total"] == 1725
    # the public part: melded values, book bonuses and red threes laid (no cards in hand)
    assert table_score(g, 0) == 365 + 500 + 300 + 200 and table_score(g, 1) == 230 + 1500


def test_round_breakdown_uses_every_rule_value():
    rules = load_rules("pagat").replace(clean_book=7, dirty_book=11, wild_book=13, red_three_bonus=17,
                                               red_three_left=-19, go_out_bonus=23)
    b = round_breakdown(rules, melded=1000, clean=1, dirty=2, wild=3, red_threes=4, went_out=True, left=29,
                        red_threes_left=5)
    assert b == {"melded": 1000, "clean_books": 7, "dirty_books": 22, "wild_books": 39, "red_threes": 68,
                 "went_out": 23, "left": -29, "red_threes_left": -95, "total": 1000 + 7 + 22 + 39 + 68 + 23 - 29 - 95}


def _game(num_teams=2, phase=ANSWER_PHASE, round_scores=(), winner=None, action_count=0):
    return SimpleNamespace(num_teams=num_teams, phase=phase, round_scores=[list(x) for x in round_scores],
                           winner=winner, action_count=action_count)


def test_round_rewards_and_winners_by_hand():
    g2, g3 = _game(), _game(num_teams=3)
    assert round_reward(g2, 0, [1200, 500], 0.001) == pytest.approx(0.7)
    assert round_reward(g2, 1, [1200, 500], 0.001) == pytest.approx(-0.7)
    assert round_reward(g3, 1, [300, 900, 0], 1.0) == pytest.approx(900 - 150)   # minus the others' mean
    assert round_reward(g3, 2, [300, 900, 0], 0.5) == pytest.approx(-300)
    assert win_reward(0, 0) == 1.0 and win_reward(1, 0) == -1.0 and win_reward(0, None) == 0.0
    assert episode_winner(_game(phase=GAME_OVER, round_scores=[[5, 9]], winner=0)) == 0   # the game's winner
    assert episode_winner(_game(round_scores=[[5, 9]])) == 1                             # the round's best
    assert episode_winner(_game(round_scores=[[5, 9, 9]], num_teams=3)) is None          # a shared best
    assert episode_winner(_game(round_scores=[[1, 2], [7, 3]])) == 0                     # the last round


def test_episode_lengths_caps_and_ends():
    pagat, bicycle = load_rules("pagat"), load_rules("bicycle")
    assert episode_rounds(pagat) == 4 and episode_rounds(pagat, "round") == 1
    assert pagat.tie_break != "extra_round" and bicycle.tie_break == "extra_round"
    assert episode_rounds(bicycle) == bicycle.rounds + 1
    assert EpisodeRules(pagat).max_actions == 4 * EpisodeRules(pagat, episode="round").max_actions
    assert EpisodeRules(pagat).reward_scale == 0.001 and EpisodeRules(pagat, max_actions=1).max_actions == 1
    e = EpisodeRules(pagat, max_actions=10)
    assert not e.truncated(_game(action_count=9)) and e.truncated(_game(action_count=10))
    assert not e.truncated(_game(action_count=10, phase=GAME_OVER))            # ended, not cut short
    assert e.done(_game(phase=GAME_OVER)) and not e.done(_game(round_scores=[[1, 2]]))
    r = EpisodeRules(pagat, episode="round")
    assert r.done(_game(round_scores=[[1, 2]])) and not r.done(_game())
    for kwargs, words in (({"reward": "money"}, "reward must be one of"), ({"episode": "set"}, "episode must be"),
                          ({"max_actions": 0}, "max_actions must be positive, got 0"),
                          ({"max_actions": True}, "max_actions must be positive")):
        with pytest.raises(ValueError, match=words):
            EpisodeRules(pagat, **kwargs)


def test_reward_since_pays_each_round_once_and_the_end_once():
    pagat = load_rules("pagat")
    e = EpisodeRules(pagat, reward_scale=0.01)
    g = _game(round_scores=[[100, 50], [0, 300]])
    r, seen, paid = e.reward_since(g, 0, 0)
    assert (r, seen, paid) == (pytest.approx(0.5 - 3.0), 2, False)
    assert e.reward_since(g, 0, 2) == (0.0, 2, False)
    assert e.reward_since(g, 1, 1) == (pytest.approx(3.0), 2, False)
    # game_win: nothing per round, +1 / -1 once at the end
    w = EpisodeRules(pagat, reward="game_win")
    assert w.round_end_reward(g, 0, [100, 50]) == 0.0 and e.final_reward(g, 0) == 0.0
    over = _game(phase=GAME_OVER, round_scores=[[100, 50]], winner=1)
    assert w.reward_since(over, 1, 0) == (1.0, 1, True)
    assert w.reward_since(over, 0, 0) == (-1.0, 1, True)
    assert w.reward_since(over, 0, 1, final_paid=True) == (0.0, 1, True)
    # a single-round episode pays the first round only, and its end once
    one = EpisodeRules(pagat, reward_scale=1.0, episode="round")
    g = _game(round_scores=[[10, 4], [0, 99]])
    assert one.reward_since(g, 0, 0) == (6.0, 1, True)
    assert one.reward_since(g, 0, 1, True) == (0.0, 1, True)
    assert EpisodeRules(pagat, reward="game_win", episode="round").reward_since(_game(round_scores=[[10, 4]]), 1, 0) \
        == (-1.0, 1, True)
