"""Pool duels run in parts: several `handfoot evaluate --agents A B --deals K --seed S --out DIR` folders of
the same two agents, with different match seeds (hence different deals) and the same K, into one win rate.

    python scripts/pool_evaluations.py runs/search-eval/champion-s*
    python scripts/pool_evaluations.py runs/search-eval/champion-s* --sprt h0=0.5 h1=0.57
    python scripts/pool_evaluations.py runs/search-eval/strategic-s* --baseline runs/search-eval/strategic-champion-s*
    python scripts/pool_evaluations.py runs/exploit-v2-eval --baseline runs/exploit-v1-eval --other-opponent

When every part keeps its ``deals.csv`` (the evaluation writes one), the parts' deals are one sample:
the win rate is their mean per-deal outcome and its 95% interval the evaluation's own
(experiments.evaluation.stats.deal_interval, the per-deal profile-likelihood interval), exactly what
one evaluation of all those deals would print.  Parts that kept only ``results.json`` are pooled as
samples of K deals: the t-interval over the parts' win rates widened to the Wilson interval over
deals (the evaluation's former interval); the output's ``method`` says which.

``--sprt TOKENS`` (the tokens of ``handfoot evaluate --sprt``) replays the sequential test over the
deals in match-seed order, then deal order, as if the parts were one sequential match: the output's
``sprt`` section says where it would have stopped (``deals``; null ``decision`` when it has not
decided), and ``at_stop`` the win rate and interval of the deals up to that point (a fixed-sample
interval: after a sequential stop it covers somewhat less than 95% and the win rate is biased
towards the hypothesis accepted, so read the decision, not that interval).
scripts/eval_search.sh uses it to stop a run in parts once the test decides.

``--baseline FOLDERS`` compares A with another agent (the baseline) that played the same opponent on
the same deals (the same match seeds, hence the same deal seeds, both kept in deals.csv): the
output's ``paired`` section holds the mean per-deal difference A minus baseline and its 95%
t-interval over the deals (each deal one paired observation, the sharper comparison: both agents
met the same cards).  With ``--other-opponent`` the baseline may have played another opponent on those
deals: two exploiters, each against its own target, compared deal by deal (which target is harder to
exploit); the ``paired`` section then names the baseline's opponent too.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from experiments.evaluation.sprt import PAIR_OUTCOMES, first_decision, llr_path, parse_sprt, result
from experiments.evaluation.stats import DEAL_INTERVAL_METHOD, deal_interval, mean_ci, wilson_ci

_KEYS = ("agents", "deals", "seed", "wins", "draws", "win_rate")
PARTS_METHOD = ("t-interval over the parts' win rates widened to the Wilson interval over deals "
                "(parts without deals.csv)")


def _deal_scores(folder: Path, agents: List[str]) -> Optional[List[Tuple[str, float]]]:
    """The deals of a part's ``deals.csv`` in deal order, each (deal seed, A's score), None when the
    part has none.  ValueError naming the file when it is not the duel's."""
    f = folder / "deals.csv"
    if not f.is_file():
        return None
    with f.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    try:
        rows = sorted(((int(r["deal"]), [r["agent_a"], r["agent_b"]], (r["seed"], float(r["score"])))
                       for r in rows), key=lambda r: r[0])
    except KeyError as e:
        raise ValueError(f"{f}: not an evaluation's deals.csv (no column {e})") from None
    except (TypeError, ValueError):
        raise ValueError(f"{f}: not an evaluation's deals.csv (a deal number or score is not a number)") from None
    if any(pair != agents for _, pair, _ in rows):
        raise ValueError(f"{f}: its deals are not of the duel {agents[0]} against {agents[1]}")
    scores = [deal for _, _, deal in rows]
    if not all(any(math.isclose(s, x) for x in PAIR_OUTCOMES) for _, s in scores):
        raise ValueError(f"{f}: a deal's score is not a duplicate-deal outcome (0, 1/4, 1/2, 3/4, 1)")
    return scores


def pool(folders: List[Path], sprt_tokens: Optional[List[str]] = None,
         baseline: Optional[List[Path]] = None, other_opponent: bool = False) -> Dict[str, Any]:
    """The pooled duel of the part folders that hold a ``results.json`` (ValueError naming the problem)."""
    test = parse_sprt(sprt_tokens) if sprt_tokens is not None else None
    out, deals = _pooled(folders, test is not None or baseline is not None)
    scores = [s for _, s in deals] if deals is not None else None
    if test is not None:
        path, _ = llr_path(scores, test)
        stop = first_decision(path, test)
        stop = len(path) - 1 if stop is None else stop
        kept = scores[:stop + 1]
        out["sprt"] = result(test, float(path[stop]), len(kept))
        out["at_stop"] = {"deals": len(kept), "win_rate": math.fsum(kept) / len(kept),
                          "win_rate_ci": list(deal_interval(kept))}
    if baseline is not None:
        other, other_deals = _pooled(baseline, True)
        if other["agents"][1] != out["agents"][1] and not other_opponent:
            raise ValueError(f"the baseline's opponent is {other['agents'][1]}, not {out['agents'][1]}")
        mine, theirs = [seed for seed, _ in deals], [seed for seed, _ in other_deals]
        if mine != theirs:
            at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
            raise ValueError(f"the baseline's parts are not the same deals: {len(mine)} deals against {len(theirs)}, "
                             f"the first to differ is deal {at + 1} in seed order (match seeds {out['seeds'][0]} on "
                             f"one side, {other['seeds'][0]} on the other at the start)")
        diffs = [a - b for (_, a), (_, b) in zip(deals, other_deals)]
        mean, ci = mean_ci(diffs, -1.0, 1.0)
        out["paired"] = {"baseline": other["agents"][0], "baseline_wins": other["wins"],
                         "baseline_win_rate": other["win_rate"],
                         "baseline_win_rate_ci": other["win_rate_ci"], "baseline_opponent": other["agents"][1],
                         "deals": len(diffs),
                         "difference": mean, "difference_ci": ci,
                         "method": "mean per-deal difference (A's score less the baseline's on the same deal), "
                                   "95% t-interval over the deals"}
    return out


def _pooled(folders: List[Path], need_deals: bool) -> Tuple[Dict[str, Any], Optional[List[Tuple[str, float]]]]:
    """The pooled summary of some parts and, when every part kept its deals.csv, their deals in match-seed,
    then deal order (ValueError when ``need_deals`` and a part has none)."""
    parts = []
    for folder in folders:
        f = folder / "results.json"
        if f.is_file():
            try:
                res = json.loads(f.read_text())
            except json.JSONDecodeError as e:
                raise ValueError(f"{f}: not JSON ({e.msg}, line {e.lineno})") from None
            if not isinstance(res, dict) or res.get("mode") != "duel":
                raise ValueError(f"{f} is not a duel of two agents")
            missing = [k for k in _KEYS if k not in res]
            if missing:
                raise ValueError(f"{f}: not an evaluation's results.json (no {missing[0]!r})")
            if not isinstance(res["deals"], int) or res["deals"] < 1:
                raise ValueError(f"{f}: a part has no deals")
            parts.append((folder, res))
    if not parts:
        raise ValueError("no folder with a results.json given")
    agents = {tuple(p["agents"]) for _, p in parts}
    if len(agents) != 1:
        raise ValueError(f"the parts differ in agents {sorted(agents)}")
    seeds = [p["seed"] for _, p in parts]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"two parts have the same match seed ({sorted(s for s in seeds if seeds.count(s) > 1)[0]}): "
                         "their deals are the same deals")
    parts.sort(key=lambda fp: fp[1]["seed"])
    names = list(agents.pop())
    per_part = [_deal_scores(folder, names) for folder, _ in parts]
    deals = sum(p["deals"] for _, p in parts)
    out: Dict[str, Any] = {"agents": names, "parts": len(parts), "deals": deals, "games": 2 * deals,
                           "wins": [sum(p["wins"][i] for _, p in parts) for i in range(2)],
                           "draws": sum(p["draws"] for _, p in parts)}
    if all(s is not None for s in per_part):
        played = [x for s in per_part for x in s]
        if len(played) != deals:
            raise ValueError(f"the parts' deals.csv hold {len(played)} deals where their results.json count {deals}")
        scores = [x for _, x in played]
        out.update(win_rate=math.fsum(scores) / len(scores), win_rate_ci=list(deal_interval(scores)),
                   method="per-deal outcomes of every part pooled; " + DEAL_INTERVAL_METHOD)
    else:
        played = None
        if need_deals:
            raise ValueError("--sprt and --baseline need every part's deals.csv (the per-deal outcomes, in order)")
        sizes = {p["deals"] for _, p in parts}
        if len(sizes) != 1:
            raise ValueError(f"parts without deals.csv are pooled as samples of one size; these differ in deals "
                             f"{sorted(sizes)}")
        print(f"pool_evaluations: note: {sum(s is None for s in per_part)} of {len(parts)} parts have no deals.csv: "
              "the interval is the former one over parts", file=sys.stderr)
        rates = [p["win_rate"] for _, p in parts]
        m, ci = mean_ci(rates, 0.0, 1.0)
        w = wilson_ci(m, deals)
        if ci is not None and w is not None:
            ci = [min(ci[0], w[0]), max(ci[1], w[1])]
        out.update(win_rate=m, win_rate_ci=ci, method=PARTS_METHOD)
    out["seeds"] = sorted(seeds)
    return out, played


def main(argv) -> int:
    ap = argparse.ArgumentParser(prog="pool_evaluations.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="evaluation folders (parts) of one duel")
    ap.add_argument("--sprt", nargs="*", metavar="KEY=VALUE", default=None,
                    help="replay the sequential test over the pooled deals (the tokens of handfoot evaluate --sprt)")
    ap.add_argument("--baseline", nargs="+", type=Path, metavar="FOLDER", default=None,
                    help="parts of another agent against the same opponent on the same match seeds: "
                         "the paired per-deal difference")
    ap.add_argument("--other-opponent", action="store_true",
                    help="with --baseline: the baseline played another opponent on the same deals")
    args = ap.parse_args(argv)
    if args.other_opponent and args.baseline is None:
        print("pool_evaluations: error: --other-opponent compares with a --baseline; name its folders", file=sys.stderr)
        return 2
    try:
        out = pool(args.folders, args.sprt, args.baseline, args.other_opponent)
    except ValueError as e:
        print(f"pool_evaluations: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
