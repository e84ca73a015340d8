"""What search would gain at the base policy's decisions, measured on worlds it did not choose with.

    python scripts/search_gains.py --games 40 --seed 60000 --out runs/search-gains/probe.jsonl
    python scripts/search_gains.py --report runs/search-gains/probe.jsonl

The base policy of a search spec (``--spec``, default ``search``: the champion) plays all four seats
greedily.  At a random share (``--sample``) of the decisions where the search agent could search (more
than one legal action, and the base policy's top action below ``--max-top`` or taking the pile legal),
the base policy's ``candidates`` most likely actions are played out, as the search agent plays them
(:meth:`agents.search.SearchAgent.paired_gains`), in two independent sets of ``--worlds`` sampled
worlds, A and B.  Each record keeps, per candidate, its mean gain over the base policy's choice in A
with its standard error, and its mean gain in B.

``--report`` reads the records and, for each band of the base policy's confidence and each ``z``, acts
as a search agent with ``worlds`` worlds would: it departs from the base policy's choice for the best
candidate in A when that candidate's gain there exceeds ``z`` standard errors, and scores the departure
by the same candidate's gain in B (and the other way round, B choosing and A scoring).  A's choice
does not see B's worlds, so B's mean is an unbiased estimate of what the departure gains (in the
search's model: uniform worlds, every seat the base policy); the mean over decisions, departures or
not, is what one searched decision of that kind gains on average, in round-score points.
Every random choice is seeded by ``--seed``: the same command gives the same records.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

BANDS = ((0.0, 0.5), (0.5, 0.65), (0.65, 0.8), (0.8, 0.95), (0.95, 1.01))


def prepare(spec: str, rules: str):
    """The search agent of ``spec`` and the rules, or a ValueError naming what is wrong."""
    from agents.registry import make_agent
    from agents.search import SearchAgent
    from handfoot_env.config import load_rules
    try:
        agent = make_agent(spec, 0)
        rs = load_rules(rules)
    except (OSError, KeyError, TypeError) as e:
        raise ValueError(f"{e}") from None
    if not isinstance(agent, SearchAgent):
        raise ValueError(f"--spec must be a search spec, got {spec!r}")
    return agent, rs


def probe(agent, rs, games: int, seed: int, sample: float, worlds: int, max_top: float, out) -> int:
    """Play ``games`` games of ``agent``'s base policy in every seat and write one record per probed
    decision."""
    from handfoot_env.actions import NUM_ACTIONS, PICKUP
    from handfoot_env.compiled import load
    from handfoot_env.observation import observation_size

    rng = np.random.default_rng(seed)
    obs = np.zeros(observation_size(rs.players, rs.teams), dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    written = 0
    for gi in range(games):
        game_seed = seed + gi
        g = load().CompiledGame(rs)
        g.reset(seed=game_seed)
        agent.reset(0, g.rules, game_seed)
        agent.np_rng = np.random.default_rng([seed, gi])          # the worlds' generator, one per game
        while not g.game_over:
            p = g.current
            legal = g.observe_legal(p, obs, mask)
            if len(legal) == 1:
                g.apply_legal(legal[0])
                continue
            ranked, prob = agent.ranked(obs, legal)
            top = float(prob[0])
            pickup = PICKUP in legal
            if (top < max_top or pickup) and rng.random() < sample:
                view = g.seat_view(p, legal)
                cands = ranked[:agent.candidates]
                (gain_a, se_a), (gain_b, se_b) = (agent.paired_gains(view, cands, worlds) for _ in range(2))
                rec = {"game_seed": game_seed, "seat": p, "action_count": g.action_count, "top": top,
                       "pickup": pickup, "candidates": cands, "probs": prob[:len(cands)].tolist(),
                       "gain_a": gain_a.tolist(), "se_a": se_a.tolist(),
                       "gain_b": gain_b.tolist(), "se_b": se_b.tolist()}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                written += 1
            g.apply_legal(ranked[0])
        print(f"game {game_seed}: {written} decisions probed so far", file=sys.stderr, flush=True)
    return written


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def read_records(path: str) -> List[Dict[str, Any]]:
    recs = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            k = len(r["candidates"])
            if not all(len(r[f]) == k for f in ("gain_a", "se_a", "gain_b", "se_b")) or k < 2:
                raise ValueError("candidate fields of unequal length")
            for f in ("gain_a", "se_a", "gain_b", "se_b"):
                if not all(_number(v) for v in r[f]):
                    raise ValueError(f"{f} holds a value that is not a finite number")
            if not _number(r["top"]) or not 0.0 <= r["top"] <= 1.0:
                raise ValueError("top is not a probability")
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{path}, line {i}: not a search_gains record ({e})") from None
        recs.append(r)
    if not recs:
        raise ValueError(f"{path}: no records")
    return recs


def held_out(recs: Sequence[Dict[str, Any]], z: float) -> Dict[str, float]:
    """Departures chosen in one half and scored in the other, both ways.  A decision's gain is the mean
    of its two ways (0 for a way that keeps the base policy's choice); the standard error is over
    decisions, whose two ways share a position and are not independent."""
    per_decision, departures = [], []
    for r in recs:
        ways = []
        for pick, score, se in (("gain_a", "gain_b", "se_a"), ("gain_b", "gain_a", "se_b")):
            g = np.asarray(r[pick], dtype=np.float64)
            c = int(np.argmax(g))
            if c != 0 and g[c] > z * r[se][c]:
                ways.append(float(r[score][c]))
                departures.append(float(r[score][c]))
            else:
                ways.append(0.0)
        per_decision.append(sum(ways) / 2.0)
    x = np.asarray(per_decision)
    return {"decisions": len(recs), "departs": len(departures) / (2 * len(recs)), "gain": float(x.mean()),
            "gain_se": float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0,
            "per_departure": float(np.mean(departures)) if departures else 0.0}


def report(recs: Sequence[Dict[str, Any]], zs: Sequence[float]) -> List[Dict[str, Any]]:
    rows = []
    for lo, hi in BANDS + ((0.0, 1.01),):
        band = [r for r in recs if lo <= r["top"] < hi]
        if not band:
            continue
        for z in zs:
            row = {"band": "all" if (lo, hi) == (0.0, 1.01) else f"{lo:.2f}-{min(hi, 1.0):.2f}", "z": z}
            row.update(held_out(band, z))
            rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="search", help="the search spec whose base, candidates and horizon are probed")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--seed", type=int, default=60000, help="first game seed; seeds the sampling too")
    ap.add_argument("--sample", type=float, default=0.1, help="share of the eligible decisions probed")
    ap.add_argument("--worlds", type=int, default=64, help="worlds in each half")
    ap.add_argument("--max-top", type=float, default=0.95,
                    help="probe decisions whose top action's probability is below this (and every pickup decision)")
    ap.add_argument("--rules", default="pagat")
    ap.add_argument("--out", help="records file (JSON lines) to write")
    ap.add_argument("--report", nargs="+", metavar="RECORDS", help="summarise records files instead of probing")
    ap.add_argument("--z", type=float, nargs="+", default=[0.5, 1.0, 1.5, 2.0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    a = ap.parse_args(argv)
    try:
        if a.report:
            recs = [r for p in a.report for r in read_records(p)]
            rows = report(recs, a.z)
            if a.json:
                print(json.dumps({"records": a.report, "rows": rows}, indent=1))
            else:
                print(f"{len(recs)} probed decisions; gain in round-score points, held out (mean ± standard error)")
                print(f"{'top-action band':>16} {'z':>4} {'decisions':>9} {'departs':>8} "
                      f"{'gain/decision':>16} {'per departure':>13}")
                for r in rows:
                    print(f"{r['band']:>16} {r['z']:>4} {r['decisions']:>9} {r['departs']:>8.3f} "
                          f"{r['gain']:>8.1f} ± {r['gain_se']:<5.1f} {r['per_departure']:>13.1f}")
            return 0
        if not a.out:
            ap.error("--out is needed to probe (or --report RECORDS to summarise)")
        if a.games < 1 or not 2 <= a.worlds <= 4096 or not 0.0 < a.sample <= 1.0 or not 0.0 < a.max_top <= 1.0:
            raise ValueError("--games must be at least 1, --worlds from 2 to 4096, --sample and --max-top in (0, 1]")
        agent, rs = prepare(a.spec, a.rules)
        try:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            out = open(a.out, "w", encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot write {a.out}: {e.strerror or e}") from None
        with out:
            n = probe(agent, rs, a.games, a.seed, a.sample, a.worlds, a.max_top, out)
        print(f"{n} decisions probed: {a.out}")
        return 0
    except ValueError as e:
        print(f"search_gains.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
