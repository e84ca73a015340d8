"""Evaluation reports: the printed table, CSV and the win-rate, matrix and rating plots.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


def _pyplot():
    """matplotlib's pyplot on the file-only Agg backend (imported on first plot: it is slow to import)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# ------------------------------------------------------------------ one format for every printed figure
def fmt_pct(x: Optional[float]) -> str:
    """A rate as a percentage: ``55.7%`` (``n/a`` when there is none)."""
    return "n/a" if x is None else f"{100 * x:.1f}%"


def fmt_ci_pct(ci: Optional[Sequence[float]]) -> str:
    """A 95% interval of a rate, the one format of every command and report: ``[55.7%, 91.7%]``."""
    return "n/a" if not ci else f"[{100 * ci[0]:.1f}%, {100 * ci[1]:.1f}%]"


def fmt_adp(x: Optional[float]) -> str:
    """An average point difference, signed with thousands separated: ``+1,530`` (``-`` when there is none)."""
    return "-" if x is None else f"{x:+,.0f}"


def fmt_ci_num(ci: Optional[Sequence[float]], signed: bool = False) -> str:
    """A 95% interval of a number: ``[2612, 2706]``, or ``[+973, +1,843]`` for signed differences (ADP)."""
    if not ci:
        return "n/a"
    f = "{:+,.0f}" if signed else "{:.0f}"
    return f"[{f.format(ci[0])}, {f.format(ci[1])}]"


def eval_line(summary: Dict[str, Any], steps: int, final: bool = False, seconds: Optional[float] = None) -> str:
    """The line a training run prints after an evaluation: how many deals, win rates with their intervals, Elo.

    ``[eval @ 502,321] 20 duplicate deals (40 games) per opponent: vs strategic 48.0% [26.0%, 70.0%]
    (ADP -1,301); Elo 2512 (3.1 s)``: with few deals the interval is wide, and the line says so by
    showing it.
    """
    d = summary.get("deals")
    head = f"[{'final eval' if final else 'eval'} @ {steps:,}]"
    if d:
        head += f" {d} duplicate deal{'s' if d != 1 else ''} ({2 * d} games) per opponent:"
    parts = [f"vs {k} {fmt_pct(v['win_rate'])} {fmt_ci_pct(v.get('win_rate_ci'))} (ADP {fmt_adp(v['adp'])})"
             for k, v in summary["per_opponent"].items()]
    line = f"{head} win rate " + ", ".join(parts)
    if summary.get("elo") is not None:
        line += f"; Elo {summary['elo']:.0f}"
    if seconds is not None:
        line += f" ({seconds:.1f} s)"
    return line


def _write_csv(path: Path, pair_results: List[Dict[str, Any]]) -> None:
    cols = ["agent_a", "agent_b", "deals", "games", "wins_a", "wins_b", "draws", "win_rate_a", "win_rate_ci_lo",
            "win_rate_ci_hi", "adp", "adp_ci_lo", "adp_ci_hi"]
    side_keys = ["clean_books_per_game", "dirty_books_per_game", "wild_books_per_game", "books_per_game",
                 "going_out_rate", "pickups_per_game", "actions_per_game", "mean_score"]
    cols += [f"a_{s}" for s in side_keys] + [f"b_{s}" for s in side_keys]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for pr in pair_results:
            a, b = pr["agents"]
            ci = pr["win_rate_ci"] or [None, None]
            aci = pr["adp_ci"] or [None, None]
            row = [a, b, pr["deals"], pr["games"], pr["wins"][0], pr["wins"][1], pr["draws"], pr["win_rate"],
                   ci[0], ci[1], pr["adp"], aci[0], aci[1]]
            row += [pr["per_agent"][a][s] for s in side_keys] + [pr["per_agent"][b][s] for s in side_keys]
            w.writerow(row)


def _write_deals(path: Path, pairings: List[Any]) -> None:
    """``deals.csv``: every deal of every pairing ``(label A, label B, deals)``, in deal order: its seed,
    A's result and point difference in each game (game 0: A on the even teams; game 1: swapped) and
    A's mean result over the deal (the unit of every interval and of the sequential test)."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent_a", "agent_b", "deal", "seed", "result_g0", "result_g1", "diff_g0", "diff_g1", "score"])
        for a, b, deals in pairings:
            for d in deals:
                res = [g["outcome"] for g in d["games"]]
                w.writerow([a, b, d["deal"], d["seed"], *res, *(round(g["diff"], 6) for g in d["games"]),
                            sum(res) / len(res)])


def numeric_stats(agent: Any) -> Dict[str, float]:
    """The numeric counts an agent keeps in ``stats`` (the search agent's searched decisions, searches
    cut by ``max_seconds``, ...); ``{}`` for none (or no agent)."""
    stats = getattr(agent, "stats", None)
    if not isinstance(stats, dict):
        return {}
    return {str(k): v for k, v in stats.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def add_counts(counts: List[Dict[str, float]], sides: Sequence[int], before: List[Dict[str, float]],
               after: List[Dict[str, float]]) -> None:
    """Add what each seat's agent counted in one game (``after`` less ``before``, per seat) to its
    side's ``counts`` (``sides``: the side of every team; seat ``p`` is in team ``p % len(sides)``)."""
    for p, (b, a) in enumerate(zip(before, after)):
        side = counts[sides[p % len(sides)]]
        for key, v in a.items():
            side[key] = side.get(key, 0) + v - b.get(key, 0)


def agent_stats(labels: Sequence[str], pairs: Sequence[Any], per_pair_deals: Dict[Any, List[Dict[str, Any]]]
                ) -> Dict[str, Dict[str, float]]:
    """``results.json``'s ``agent_stats``: per side label, the counts its agent kept over every deal it
    played (summed over the workers' games; empty for an agent that keeps none)."""
    out: Dict[str, Dict[str, float]] = {lab: {} for lab in labels}
    for (i, j) in pairs:
        for deal in per_pair_deals[(i, j)]:
            for lab, counts in zip((labels[i], labels[j]), deal.get("agent_stats") or ({}, {})):
                for key, v in counts.items():
                    out[lab][key] = out[lab].get(key, 0) + v
    return {lab: {k: (round(v, 6) if isinstance(v, float) else v) for k, v in sorted(c.items())}
            for lab, c in out.items()}


def interrupted(e: KeyboardInterrupt, labels: List[str], task_pairs: List[Any], out_dir: Optional[Path],
                total: int) -> KeyboardInterrupt:
    """Ctrl-C in an evaluation: the deals finished so far (``e.done``: the results of a prefix of the
    tasks, each a list of deals, ``task_pairs`` their pairings) written to ``deals.csv``; the one line
    saying how many and where."""
    by_pair: Dict[Any, List[Dict[str, Any]]] = {}
    for pair, deals in zip(task_pairs, getattr(e, "done", None) or []):
        by_pair.setdefault(pair, []).extend(deals)
    n = sum(len(d) for d in by_pair.values())
    if out_dir is None or not n:
        return KeyboardInterrupt(f"interrupted after {n} of {total} deals; no results written")
    _write_deals(out_dir / "deals.csv", [(labels[i], labels[j], d) for (i, j), d in by_pair.items()])
    return KeyboardInterrupt(f"interrupted after {n} of {total} deals; their per-deal outcomes are in "
                             f"{out_dir / 'deals.csv'} (no results.json: the evaluation did not finish)")


def _plots(out_dir: Path, res: Dict[str, Any], pair_results: List[Dict[str, Any]]) -> None:
    plt = _pyplot()

    def short(name: str) -> str:
        return name if len(name) <= 24 else name[:11] + "..." + name[-10:]

    if res["mode"] == "duel":
        a, b = res["agents"]
        wr = res["win_rate"]
        ci = res["win_rate_ci"] or [wr, wr]
        vals = [wr, 1.0 - wr]
        errs = [[wr - ci[0], (1 - wr) - (1 - ci[1])], [ci[1] - wr, (1 - ci[0]) - (1 - wr)]]
        names = [short(a), short(b)]
        title = f"{short(a)} vs {short(b)}: win rate over {res['games']} games (95% CI)"
    else:
        vals = [res["overall"][n]["win_rate"] for n in res["agents"]]
        cis = [res["overall"][n]["win_rate_ci"] or [v, v] for n, v in zip(res["agents"], vals)]
        errs = [[v - c[0] for v, c in zip(vals, cis)], [c[1] - v for v, c in zip(vals, cis)]]
        names = [short(n) for n in res["agents"]]
        title = "round-robin: mean win rate against the field (95% CI)"
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(names) + 2), 4))
    ax.bar(names, vals, yerr=errs, capsize=6, color="#4C72B0")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (draw = 1/2)")
    ax.set_title(title, fontsize=10)
    fig.savefig(out_dir / "winrate.png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    if res["mode"] == "round_robin":
        names = res["agents"]
        elo = [res["ratings"][n] for n in names]
        order = sorted(range(len(names)), key=lambda i: -elo[i])
        fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(names) + 2), 4))
        ax.barh([short(names[i]) for i in order][::-1], [elo[i] for i in order][::-1], color="#55A868")
        ax.set_xlabel(f"rating (Bradley-Terry, Elo scale, {res.get('rating_scale', 'mean 1500')})")
        ax.set_title("ratings", fontsize=10)
        lo = min(elo)
        ax.set_xlim(min(lo - 100, 1400), max(elo) + 100)
        fig.savefig(out_dir / "ratings.png", dpi=100, bbox_inches="tight")
        plt.close(fig)
        k = len(names)
        m = res["win_rate_matrix"]
        fig, ax = plt.subplots(figsize=(1.2 * k + 2, 1.2 * k + 1))
        grid = [[(m[i][j] if m[i][j] is not None else float("nan")) for j in range(k)] for i in range(k)]
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
        for i in range(k):
            for j in range(k):
                if m[i][j] is not None:
                    ax.text(j, i, f"{m[i][j]:.2f}", ha="center", va="center", fontsize=9)
        ax.set_xticks(range(k), [short(n) for n in names], rotation=30, ha="right")
        ax.set_yticks(range(k), [short(n) for n in names])
        ax.set_title("win rate of row vs column", fontsize=10)
        fig.colorbar(im, ax=ax)
        fig.savefig(out_dir / "matrix.png", dpi=100, bbox_inches="tight")
        plt.close(fig)


def interval_method(method: str) -> str:
    """The win-rate interval's part of a results' ``method`` text, whole (it has its own ``;``)."""
    return method.split("win rate 95% CI: ")[-1].split("; ADP 95% CI: ")[0]


def print_results(res: Dict[str, Any], file=None) -> None:
    """A rich table of the results."""
    from rich.console import Console
    from rich.table import Table

    out = file or sys.stdout
    console = Console(file=out, width=None if getattr(out, "isatty", lambda: False)() else 140)

    pct, ci_pct = fmt_pct, fmt_ci_pct

    def ci_num(c):
        return fmt_ci_num(c, signed=True)

    rules = res["rules"]
    head = (f"rules: {rules['players']} players, {rules['teams']} teams, {rules['decks']} decks; seed {res['seed']}; "
            f"{res['deals_per_pair']} duplicate deals per pair ({2 * res['deals_per_pair']} games: each deal twice, "
            "seats swapped)")
    pairs = [res] if res["mode"] == "duel" else res["pairs"]
    t = Table(title="Duplicate match results" if res["mode"] == "duel" else "Round-robin: pairings")
    for c in ("A", "B", "games", "A win rate", "95% CI", "ADP (A-B)", "95% CI "):
        t.add_column(c, justify="right" if c not in ("A", "B") else "left")
    for pr in pairs:
        a, b = pr["agents"]
        t.add_row(a, b, str(pr["games"]), pct(pr["win_rate"]), ci_pct(pr["win_rate_ci"]), fmt_adp(pr['adp']),
                  ci_num(pr["adp_ci"]))
    console.print(head)
    console.print(t)
    console.print("win-rate interval: " + interval_method(res.get("method", "")))
    if res.get("sprt"):
        sp = res["sprt"]
        hyp = (f"Elo {sp['elo0']:g} vs {sp['elo1']:g}" if "elo0" in sp else f"win rate {sp['h0']:g} vs {sp['h1']:g}")
        console.print(f"SPRT (H0 vs H1: {hyp}, alpha {sp['alpha']:g}, beta {sp['beta']:g}): LLR {sp['llr']:.3f} in "
                      f"[{sp['lower']:.3f}, {sp['upper']:.3f}] after {sp['deals']} deals: "
                      + (f"accepts {sp['decision']}" if sp["decision"] else "no decision by the cap"))
    s = Table(title="Per agent (per game)")
    for c in ("pairing", "agent", "clean", "dirty", "wild", "went out/round", "pickups", "actions", "mean score"):
        s.add_column(c, justify="left" if c in ("pairing", "agent") else "right")
    for pr in pairs:
        pl = " vs ".join(pr["agents"])
        for name in pr["agents"]:
            st = pr["per_agent"][name]
            s.add_row(pl, name, f"{st['clean_books_per_game']:.2f}", f"{st['dirty_books_per_game']:.2f}",
                      f"{st['wild_books_per_game']:.2f}", pct(st["going_out_rate"]), f"{st['pickups_per_game']:.1f}",
                      f"{st['actions_per_game']:.0f}", f"{st['mean_score']:.0f}")
    console.print(s)
    if res["mode"] == "round_robin":
        names = res["agents"]
        m = Table(title="Win rate of row against column")
        m.add_column("")
        for n in names:
            m.add_column(n, justify="right")
        m.add_column("rating", justify="right")
        for i, n in enumerate(names):
            row = [("-" if x is None else pct(x)) for x in res["win_rate_matrix"][i]]
            m.add_row(n, *row, f"{res['ratings'][n]:.0f}")
        console.print(m)
    tm = res["timing"]
    console.print(f"{res['games']} games in {tm['elapsed_s']:.1f} s with {tm['workers']} worker(s); "
                  f"results in {res['out']}")


def _eval_deals(run: Path, evals: List[Dict[str, Any]]) -> Optional[int]:
    """Deals per opponent of the periodic evaluations: from metrics.jsonl, else the run's config.yaml."""
    d = {r["deals"] for r in evals if r.get("deals")}
    if len(d) == 1:
        return d.pop()
    if d:
        return None                                # the size changed along the run (e.g. resumed with another)
    try:
        import yaml
        ev = (yaml.safe_load((run / "config.yaml").read_text()) or {}).get("evaluation") or {}
        return int(ev["deals"]) if ev.get("deals") else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return None


def curve_caption(run: Path, evals: List[Dict[str, Any]]) -> str:
    """The evaluation panel's title: what one point is, and that its band is a wide 95% interval."""
    d = _eval_deals(run, evals)
    size = f"{d} duplicate deals ({2 * d} games)" if d else "the evaluation's deals"
    return f"evaluation: each point is {size} per opponent\nshaded: 95% CI (wide: about +-{_half_width(d)})"


def _half_width(deals: Optional[int]) -> str:
    """The half-width of a 95% interval around a 50% win rate over ``deals`` deals (worst case), as text."""
    if not deals:
        return "?"
    return f"{100 * 1.96 * 0.5 / deals ** 0.5:.0f} points"


def plot_learning_curve(run: Path) -> Optional[Path]:
    """``learning_curve.png``: evaluation win rates vs timesteps, and the mean episode reward."""
    path = run / "metrics.jsonl"
    if not path.exists():
        return None
    plt = _pyplot()
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    evals = [r for r in recs if r.get("kind") == "eval"]
    rolls = [r for r in recs if r.get("kind") == "rollout" and "ep_rew_mean" in r]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    keys = sorted({k[len("win_rate_vs_"):] for r in evals for k in r if k.startswith("win_rate_vs_")})
    for k in keys:
        pts = [r for r in evals if f"win_rate_vs_{k}" in r]
        xs = [r["timesteps"] for r in pts]
        ys = [r[f"win_rate_vs_{k}"] for r in pts]
        lo = [(r.get(f"win_rate_ci_vs_{k}") or [y, y])[0] for r, y in zip(pts, ys)]
        hi = [(r.get(f"win_rate_ci_vs_{k}") or [y, y])[1] for r, y in zip(pts, ys)]
        a1.plot(xs, ys, marker="o", label=f"vs {k}")
        a1.fill_between(xs, lo, hi, alpha=0.15)
    a1.axhline(0.5, color="grey", lw=0.8, ls="--")
    a1.set_ylim(0, 1)
    a1.set_xlabel("timesteps")
    a1.set_ylabel("win rate of the argmax policy")
    a1.set_title(curve_caption(run, evals), fontsize=9)
    if keys:
        a1.legend()
    if rolls:
        a2.plot([r["timesteps"] for r in rolls], [r["ep_rew_mean"] for r in rolls])
    a2.set_xlabel("timesteps")
    a2.set_ylabel("mean episode reward (last 100 games)")
    a2.set_title("training")
    fig.tight_layout()
    out = run / "learning_curve.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
