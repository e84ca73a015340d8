"""``handfoot leaderboard``: every built-in agent (and each shipped champion, ``champion_v1``, ``champion_v2``,
by that name, and any
``--agents`` specs) in one duplicate-format round-robin, written as a page.

Usage::

    handfoot leaderboard                                   # runs/leaderboard/leaderboard.md, .png, .json
    handfoot leaderboard --deals 200 --workers auto
    handfoot leaderboard --agents policy:runs/ppo/final py:my_pkg.agents:MyAgent --out runs/board

Every pair of agents plays the same ``--deals`` duplicate deals (each deal twice, seats swapped;
:mod:`experiments.evaluation.harness`).  The page has

* the ratings: Bradley-Terry strengths fitted to all games (:func:`~experiments.evaluation.stats.bradley_terry_elo`)
  on the Elo scale, shifted so that ``random`` is at 1000 (:data:`~experiments.evaluation.stats.ELO_ANCHOR`,
  the anchor of every rating in the project), with a 95% interval from a bootstrap over deals: each
  bootstrap sample draws ``--deals`` deal numbers with replacement, the same numbers for every pair
  (the pairs share their deals), refits the ratings and re-anchors them; the interval is the 2.5 and
  97.5 percentiles (``--bootstrap`` samples, seeded by ``--seed``);
* each agent's win rate against the whole field (95% CI over deals), the win-rate matrix and the
  matrix of ADP (average point difference per game, row minus column);
* every pairing with its CIs and how often each side went out;
* the exact command, version, commit, rules and timing.

Files in ``--out`` (a new or empty folder; default ``runs/leaderboard``, with a time suffix when it exists,
:func:`experiments.runs.results_folder`): ``leaderboard.md``, ``leaderboard.png`` (ratings with their
intervals, and the win-rate matrix) and ``leaderboard.json`` (every number on the page, plus the
harness's full results).
"""
from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from agents.registry import BUILTIN, CHAMPIONS, make_agent
from experiments.config import CommandParser, command, seed_arg
from experiments.evaluation.harness import EvalConfig, run_evaluation
from experiments.evaluation.report import _pyplot, fmt_adp, fmt_ci_num, fmt_ci_pct, fmt_pct
from experiments.evaluation.stats import DEAL_INTERVAL_METHOD, bradley_terry_elo_batch
from experiments.evaluation.stats import ELO_ANCHOR
from experiments.runs import git_commit, results_folder

ANCHOR = "random"
FILES = ("leaderboard.md", "leaderboard.png", "leaderboard.json")
#: where the board goes without ``--out`` (the curated board in docs/ is never the default)
DEFAULT_OUT = "runs/leaderboard"


def champion_available(name: str) -> bool:
    """Whether ``make_agent(name)`` builds the shipped champion ``name`` in this installation."""
    try:
        make_agent(name, 0)
    except Exception:  # noqa: BLE001 - any failure means: not shipped here
        return False
    return True


def field_specs(extra: Sequence[str] = (), champion: Optional[bool] = None) -> List[str]:
    """The board's agents: the built-ins, each shipped champion by its versioned name (``champion_v1``, ...;
    not the alias ``champion``, which would play its namesake) when available (``champion``: all or none),
    then ``extra`` (no repeats)."""
    specs = list(BUILTIN)
    for name in CHAMPIONS:
        if name not in specs and (champion if champion is not None else champion_available(name)):
            specs.append(name)
    for s in extra:
        s = s.strip()
        if s and s not in specs:
            specs.append(s)
    return specs


def bootstrap_ratings(k: int, pairs: Sequence[Sequence[int]], deal_win_rates: Sequence[Sequence[float]],
                      anchor: int, samples: int, seed: int) -> np.ndarray:
    """Anchored ratings of ``samples`` bootstrap resamples of the deals, shape ``(samples, k)``.

    ``deal_win_rates[p][d]`` is the first agent's mean outcome over the two games of deal ``d`` in
    pairing ``pairs[p]``; every resample draws deal numbers once and uses them for every pairing.
    """
    rates = np.asarray(deal_win_rates, dtype=np.float64)          # (pairs, deals)
    n = rates.shape[1]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(samples, n))
    wins = 2.0 * rates[:, idx].sum(axis=2).T                      # (samples, pairs): two games per deal
    elo = bradley_terry_elo_batch(k, [tuple(p) for p in pairs], wins, 2.0 * n)
    return elo - elo[:, [anchor]] + ELO_ANCHOR


def build_board(res: Dict[str, Any], samples: int, seed: int) -> Dict[str, Any]:
    """The board's numbers from a round-robin result (``run_evaluation(..., keep_deals=True)``)."""
    labels: List[str] = res["agents"]
    specs: List[str] = res["specs"]
    k = len(labels)
    anchor = specs.index(ANCHOR)
    shift = ELO_ANCHOR - res["ratings"][labels[anchor]]
    rating = {n: res["ratings"][n] + shift for n in labels}
    index = {n: i for i, n in enumerate(labels)}
    pairs = [(index[p["agents"][0]], index[p["agents"][1]]) for p in res["pairs"]]
    ci: Dict[str, Optional[List[float]]] = {n: None for n in labels}
    if samples > 0:
        boot = bootstrap_ratings(k, pairs, [p["deal_win_rates"] for p in res["pairs"]], anchor, samples, seed)
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        ci = {n: [float(lo[i]), float(hi[i])] for i, n in enumerate(labels)}
        ci[labels[anchor]] = [ELO_ANCHOR, ELO_ANCHOR]
    adp = [[None] * k for _ in range(k)]
    for (i, j), p in zip(pairs, res["pairs"]):
        adp[i][j], adp[j][i] = p["adp"], -p["adp"]
    order = sorted(range(k), key=lambda i: -rating[labels[i]])
    return {
        "agents": labels, "specs": specs, "order": [labels[i] for i in order],
        "rating": rating, "rating_ci": ci, "anchor": f"{ANCHOR} = {ELO_ANCHOR:.0f}",
        "rating_method": ("Bradley-Terry MLE over all games (draw = half a win each way, one virtual draw per "
                          f"pair), Elo scale (400 log10), shifted so that {ANCHOR} = {ELO_ANCHOR:.0f}; 95% interval: "
                          f"percentiles of {samples} bootstrap resamples of the deals (the same deals for every pair)"),
        "bootstrap": samples, "overall": res["overall"], "win_rate_matrix": res["win_rate_matrix"],
        "adp_matrix": adp,
    }


# ------------------------------------------------------------------------------------ writing
def _pct(x: Optional[float]) -> str:
    return "-" if x is None else fmt_pct(x)


def _cell(name: str) -> str:
    return "`" + name.replace("|", "\\|").replace("`", "'") + "`"


def render_markdown(board: Dict[str, Any], res: Dict[str, Any], info: Dict[str, Any]) -> str:
    names = board["order"]
    rules = res["rules"]
    lines = [
        "# Leaderboard",
        "",
        "Every agent below plays every other one in the duplicate format: the same deals for every pair, each deal "
        "played twice with the seats swapped, so both sides hold the same cards. Ratings are Bradley-Terry "
        f"strengths on the Elo scale with **{board['anchor']}** (the anchor of every rating in this project); "
        "a difference of 200 means the stronger side is expected to win about 76% of its games.",
        "",
        "Produced by:",
        "",
        "```",
        info["command"],
        "```",
        "",
        f"handfoot {info['version']}, commit `{info['commit']}`; rules `{info['rules_name']}` ({rules['players']} "
        f"players, {rules['teams']} teams, {rules['decks']} decks); {res['deals_per_pair']} duplicate deals per pair "
        f"({2 * res['deals_per_pair']} games each), {res['games']} games in all; match seed {res['seed']}, bootstrap "
        f"{board['bootstrap']} resamples; {info['elapsed_s']:.0f} s with {info['workers']} worker(s) on a "
        f"{info['cpu_count']}-core machine.",
        "",
        "## Ratings",
        "",
        "| rank | agent | rating | 95% CI | win rate vs the field | 95% CI |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r, n in enumerate(names, 1):
        ov = board["overall"][n]
        lines.append(f"| {r} | {_cell(n)} | {board['rating'][n]:.0f} | {fmt_ci_num(board['rating_ci'][n])} | "
                     f"{_pct(ov['win_rate'])} | {fmt_ci_pct(ov['win_rate_ci'])} |")
    lines += ["", f"Rating method: {board['rating_method']}."]
    perfect = [p for p in res["pairs"] if p["win_rate"] in (0.0, 1.0)]
    if perfect:
        lines += ["", "Perfect records: " + "; ".join(
            f"{_cell(p['agents'][0] if p['win_rate'] == 1.0 else p['agents'][1])} won every game against "
            f"{_cell(p['agents'][1] if p['win_rate'] == 1.0 else p['agents'][0])}" for p in perfect)
            + ". A perfect record only bounds a rating gap from below: the gap shown comes from the virtual draw and "
              "grows with the number of games, and resampling the deals cannot move it, so the intervals of ratings "
              "that rest on such a pair are too narrow."]
    lines += ["", "![ratings and win-rate matrix](leaderboard.png)",
              "", "## Win rate of row against column", ""]
    idx = {n: i for i, n in enumerate(board["agents"])}
    head = "| | " + " | ".join(_cell(n) for n in names) + " |"
    sep = "|---|" + "---:|" * len(names)
    for title, key, fmt in (("win", "win_rate_matrix", _pct),
                            ("adp", "adp_matrix", fmt_adp)):
        if title == "adp":
            lines += ["", "## Average point difference per game (ADP), row minus column", ""]
        lines += [head, sep]
        for a in names:
            row = [fmt(board[key][idx[a]][idx[b]]) for b in names]
            lines.append(f"| {_cell(a)} | " + " | ".join(row) + " |")
    lines += ["", "## Pairings", "",
              "| A | B | games | A win rate | 95% CI | ADP (A - B) | 95% CI | A went out / round | "
              "B went out / round |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for p in res["pairs"]:
        a, b = p["agents"]
        lines.append(f"| {_cell(a)} | {_cell(b)} | {p['games']} | {_pct(p['win_rate'])} "
                     f"| {fmt_ci_pct(p['win_rate_ci'])} | {fmt_adp(p['adp'])} | {fmt_ci_num(p['adp_ci'], signed=True)} "
                     f"| {_pct(p['per_agent'][a]['going_out_rate'])} | {_pct(p['per_agent'][b]['going_out_rate'])} |")
    lines += ["", f"Win-rate intervals: {DEAL_INTERVAL_METHOD}; ADP intervals: t-intervals over per-deal means (see "
              "`experiments/evaluation/stats.py`).", ""]
    return "\n".join(lines)


def plot_board(board: Dict[str, Any], path: Path) -> None:
    plt = _pyplot()
    names = board["order"]
    k = len(names)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, max(3.5, 0.7 * k + 1.5)),
                                 gridspec_kw={"width_ratios": [1.2, 1]})
    ys = list(range(k))[::-1]
    vals = [board["rating"][n] for n in names]
    cis = [board["rating_ci"][n] or [v, v] for n, v in zip(names, vals)]
    a1.barh(ys, vals, color="#55A868", left=0)
    a1.errorbar(vals, ys, xerr=[[v - c[0] for v, c in zip(vals, cis)], [c[1] - v for v, c in zip(vals, cis)]],
                fmt="none", ecolor="black", capsize=5)
    a1.axvline(ELO_ANCHOR, color="grey", lw=0.8, ls="--")
    a1.set_yticks(ys, names)
    lo = min(c[0] for c in cis)
    a1.set_xlim(min(lo, ELO_ANCHOR) - 100, max(c[1] for c in cis) + 100)
    a1.set_xlabel(f"rating (Bradley-Terry, Elo scale, {board['anchor']}; 95% bootstrap CI)")
    a1.set_title("ratings", fontsize=10)
    idx = {n: i for i, n in enumerate(board["agents"])}
    m = board["win_rate_matrix"]
    grid = [[np.nan if m[idx[a]][idx[b]] is None else m[idx[a]][idx[b]] for b in names] for a in names]
    im = a2.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn")
    for i in range(k):
        for j in range(k):
            if i != j:
                a2.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center", fontsize=9)
    a2.set_xticks(range(k), names, rotation=30, ha="right")
    a2.set_yticks(range(k), names)
    a2.set_title("win rate of row against column", fontsize=10)
    fig.colorbar(im, ax=a2, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_board(out: Path, board: Dict[str, Any], res: Dict[str, Any], info: Dict[str, Any],
                plots: bool = True) -> None:
    (out / "leaderboard.md").write_text(render_markdown(board, res, info))
    if plots:
        plot_board(board, out / "leaderboard.png")
    full = {k: v for k, v in res.items() if k != "out"}
    (out / "leaderboard.json").write_text(json.dumps({"info": info, "board": board, "results": full}, indent=1) + "\n")


# ------------------------------------------------------------------------------------ command
def _parser() -> CommandParser:
    p = CommandParser(prog="handfoot leaderboard",
                      description="Round-robin of the built-in agents (and the shipped champions, and --agents) "
                                  "in duplicate deals; ratings with random = 1000, win-rate and ADP matrices.")
    p.add_argument("--agents", nargs="+", default=[], metavar="SPEC",
                   help="more agents: policy:PATH, rllib:PATH, py:package.module:ClassName or an entry-point name")
    p.add_argument("--deals", "--games", dest="deals", type=int, default=100, metavar="N",
                   help="duplicate deals per pair, each played twice with the seats swapped (2N games); default 100 "
                        "(--games is the old name of this flag)")
    p.add_argument("--seed", type=seed_arg, default=0, help="match and bootstrap seed (default 0)")
    p.add_argument("--workers", default="1", help="worker processes, or 'auto' for one per core (default 1)")
    p.add_argument("--rules", default="pagat", help="rules preset or YAML file (default pagat)")
    p.add_argument("--bootstrap", type=int, default=1000,
                   help="bootstrap resamples for the rating intervals (0: none; default 1000)")
    p.add_argument("--out", metavar="DIR",
                   help="a new or empty folder for leaderboard.md, leaderboard.png, leaderboard.json (default "
                        f"{DEFAULT_OUT}, with a time suffix if it exists)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _short_commit() -> str:
    c = git_commit() or "unknown"
    return c[:12] + ("-dirty" if c.endswith("-dirty") else "")


def _workers(text: str) -> int:
    if text == "auto":
        return 0
    try:
        w = int(text)
    except ValueError:
        w = 0
    if w < 1:
        raise ValueError(f"--workers must be a positive integer or 'auto', got {text!r}")
    return w


@command("leaderboard")
def leaderboard_main(argv: Optional[List[str]] = None) -> int:
    argv = list(argv or [])
    args = _parser().parse_args(argv)
    if args.deals < 1:
        flag = "--games" if any(a.split("=")[0] == "--games" for a in argv) else "--deals"   # the name typed
        raise ValueError(f"{flag} must be at least 1, got {args.deals}")
    if not 0 <= args.bootstrap <= 100_000:
        raise ValueError(f"--bootstrap must be between 0 and 100000, got {args.bootstrap}")
    cfg = EvalConfig(agents=field_specs(args.agents), games=args.deals, seed=args.seed, workers=_workers(args.workers),
                     rules=args.rules, plots=False, progress=not args.no_progress)
    cfg.validate()
    out = results_folder(args.out or DEFAULT_OUT, explicit=args.out is not None)
    commit = _short_commit()        # the code that plays the games
    t0 = time.perf_counter()
    res = run_evaluation(cfg, write=False, keep_deals=True)
    board = build_board(res, args.bootstrap, args.seed)
    info = {"command": "handfoot leaderboard" + (" " + shlex.join(argv) if argv else ""),
            "version": res["versions"]["handfoot"], "commit": commit,
            "rules_name": args.rules, "elapsed_s": time.perf_counter() - t0, "workers": cfg.num_workers,
            "cpu_count": os.cpu_count()}
    write_board(out, board, res, info)
    width = max(len(n) for n in board["order"])
    print(f"Leaderboard ({res['deals_per_pair']} duplicate deals per pair; {board['anchor']}):")
    for r, n in enumerate(board["order"], 1):
        c = board["rating_ci"][n]
        print(f"  {r}. {n:<{width}}  {board['rating'][n]:6.0f}  {fmt_ci_num(c) if c else ''}  "
              f"win rate vs the field {_pct(board['overall'][n]['win_rate'])}")
    print(f"Written {', '.join(str(out / f) for f in FILES)} ({info['elapsed_s']:.0f} s).")
    return 0
