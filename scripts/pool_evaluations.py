"""Pool duels run in parts: several `handfoot evaluate --agents A B --deals K --seed S --out DIR` folders of
the same two agents, with different match seeds (hence different deals) and the same K, into one win rate.

    python scripts/pool_evaluations.py runs/search-eval/champion-s*

Each part is one sample of K duplicate deals: the 95% interval is the t-interval over the parts' win
rates widened to the Wilson interval over deals, as the evaluation's own (experiments.evaluation.stats
.win_rate_ci), which with K = 1 is exactly the interval over deals.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from experiments.evaluation.stats import mean_ci, wilson_ci


def main(argv) -> int:
    parts = []
    for a in argv:
        f = Path(a) / "results.json"
        if f.is_file():
            res = json.loads(f.read_text())
            if res.get("mode") != "duel":
                print(f"pool_evaluations: error: {f} is not a duel of two agents", file=sys.stderr)
                return 2
            parts.append(res)
    if not parts:
        print("pool_evaluations: error: no folder with a results.json given", file=sys.stderr)
        return 2
    agents = {tuple(p["agents"]) for p in parts}
    sizes = {p["deals"] for p in parts}
    if len(agents) != 1 or len(sizes) != 1:
        print(f"pool_evaluations: error: the parts differ in agents {sorted(agents)} or deals {sorted(sizes)}",
              file=sys.stderr)
        return 2
    rates = [p["win_rate"] for p in parts]
    deals = sum(p["deals"] for p in parts)
    m, ci = mean_ci(rates, 0.0, 1.0)
    w = wilson_ci(m, deals)
    if ci is not None and w is not None:
        ci = [min(ci[0], w[0]), max(ci[1], w[1])]
    wins = [sum(p["wins"][i] for p in parts) for i in range(2)]
    print(json.dumps({"agents": list(agents.pop()), "parts": len(parts), "deals": deals, "games": 2 * deals,
                      "wins": wins, "draws": sum(p["draws"] for p in parts), "win_rate": m, "win_rate_ci": ci,
                      "seeds": sorted(p["seed"] for p in parts)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
