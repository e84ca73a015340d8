"""The ``search`` bench row: whole games of the evaluation harness with a search agent in both seats of
one team, timed per game and per searched decision (``handfoot bench configs/bench/search.yaml``).

The agents are the harness's own (one per spec and seat, kept between games), so their counters
(:attr:`agents.search.SearchAgent.stats`) give the decisions, the searches and the seconds of each
search; the row reports the median and 90th percentile of the wall time of a searched decision (and
the median of its process CPU time, which a busy machine inflates less),
the CPU and wall seconds per game, the share of decisions searched, and the share of the rollouts'
rows (a game at a tick) whose player had one legal action, played without the network.
"""
from __future__ import annotations

from typing import Any, Dict, List

from experiments.bench.timing import _GameRunner


class _SearchRunner(_GameRunner):
    """:class:`_GameRunner` whose result adds the search agents' figures and names them in its label."""

    def __init__(self, play_one, cfg: Dict[str, Any], seed0: int, agents: List[Any], label: str):
        super().__init__(play_one, cfg, seed0)
        self.agents, self.label = agents, label
        self.marks = None

    def warmup(self) -> None:
        super().warmup()
        # the counters of the timed games only
        self.marks = [(dict(a.stats), len(a.search_seconds)) for a in self.agents]

    def result(self) -> Dict[str, Any]:
        import numpy as np
        res = super().result()
        marks = self.marks or [({k: 0 for k in a.stats}, 0) for a in self.agents]
        secs = np.asarray([s for a, (_, n) in zip(self.agents, marks) for s in a.search_seconds[n:]])
        cpu = np.asarray([s for a, (_, n) in zip(self.agents, marks) for s in a.search_cpu_seconds[n:]])
        decisions = sum(a.stats["decisions"] - m["decisions"] for a, (m, _) in zip(self.agents, marks))
        searched = sum(a.stats["searched"] - m["searched"] for a, (m, _) in zip(self.agents, marks))
        deviated = sum(a.stats["deviated"] - m["deviated"] for a, (m, _) in zip(self.agents, marks))
        withdrawn = sum(a.stats["withdrawn"] - m["withdrawn"] for a, (m, _) in zip(self.agents, marks))
        rows = sum(a.stats["rows"] - m["rows"] for a, (m, _) in zip(self.agents, marks))
        one_legal = sum(a.stats["one_legal"] - m["one_legal"] for a, (m, _) in zip(self.agents, marks))
        games = max(res["games"], 1)
        median = float(np.median(secs)) if len(secs) else None
        p90 = float(np.percentile(secs, 90)) if len(secs) else None
        res.update({
            "search_decisions_per_game": decisions / games, "searched_per_game": searched / games,
            "searched_fraction": searched / decisions if decisions else None,
            "deviated_per_game": deviated / games, "withdrawn_per_game": withdrawn / games,
            "rollout_rows_per_game": rows / games,
            "one_legal_fraction": one_legal / rows if rows else None,     # rows that skip the network
            "search_median_s": median, "search_p90_s": p90,
            "search_median_cpu_s": float(np.median(cpu)) if len(cpu) else None,
            "seconds_cpu_per_game": res["seconds_cpu"] / games, "seconds_wall_per_game": res["seconds_wall"] / games,
        })
        if median is not None:
            res["label"] = (f"{self.label}: {median:.3f} s median per searched decision (wall; "
                            f"{res['search_median_cpu_s']:.3f} s CPU), "
                            f"{res['seconds_wall_per_game']:.1f} s wall / {res['seconds_cpu_per_game']:.1f} s CPU "
                            f"per game, {searched / games:.1f} of {decisions / games:.0f} decisions searched")
        return res


def bench_search(preset: str, cfg: Dict[str, Any]) -> _SearchRunner:
    """Games of ``search.spec`` (both seats of team 0) against ``search.opponent`` on ``search.core``."""
    from experiments.evaluation.harness import _agent_for, play_game
    from handfoot_env.config import load_rules
    rules = load_rules(preset)
    spec, opp, core = cfg["search"]["spec"], cfg["search"]["opponent"], cfg["search"]["core"]
    seats = [spec if rules.team_of(p) == 0 else opp for p in range(rules.players)]
    agents = [_agent_for(spec, p) for p in range(rules.players) if seats[p] == spec]

    def play(seed: int):
        res = play_game(rules, seats, seed, core=core)
        acts = res["actions"]
        return sum(acts), sum(a for p, a in enumerate(acts) if seats[p] == spec)

    label = f"games {spec} (team 0) vs {opp} (harness, core='{core}')"
    return _SearchRunner(play, cfg, cfg["seed"], agents, label)


__all__ = ["bench_search"]
