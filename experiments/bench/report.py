"""The bench's report: the table (terminal and Markdown), targets and cost growth, and ``bench.json``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from experiments.bench.config import TARGETS


def _targets(rows, memory, clone) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        if r["status"] != "ok" or r["vs_openspiel"] is None or r["growth"]:
            continue
        if r["kind"] == "aec":
            out.append({"target": f"AEC {r['game']} >= {TARGETS['aec_vs_openspiel']}x OpenSpiel",
                        "value": f"{r['vs_openspiel']:.2f}x", "met": r["vs_openspiel"] >= TARGETS["aec_vs_openspiel"]})
        if r["kind"] == "aec_compiled":
            want = TARGETS["aec_compiled_vs_openspiel"]
            out.append({"target": f"AEC on the compiled core {r['game']} >= {want}x OpenSpiel",
                        "value": f"{r['vs_openspiel']:.2f}x", "met": r["vs_openspiel"] >= want})
        if r["kind"] == "engine":
            out.append({"target": f"engine {r['game']} >= {TARGETS['engine_vs_openspiel']}x OpenSpiel",
                        "value": f"{r['vs_openspiel']:.2f}x",
                        "met": r["vs_openspiel"] >= TARGETS["engine_vs_openspiel"]})
    for r in rows:
        base = next((b for b in rows if b["kind"] == "engine_obs" and b["game"] == r["game"] and b["status"] == "ok"),
                    None)
        if r["kind"] == "core" and r["status"] == "ok" and base is not None:
            ratio = r["actions_per_s"] / base["actions_per_s"]
            want = TARGETS["core_vs_engine_obs"]
            out.append({"target": f"compiled core {r['game']} >= {want:.0f}x the reference engine with obs + mask",
                        "value": f"{ratio:.1f}x", "met": ratio >= want})
    for m in memory:
        out.append({"target": f"env instance {m['preset']} < 1 MB",
                    "value": f"{m['env_after_reset_bytes'] / 1e3:.0f} kB",
                    "met": m["env_after_reset_bytes"] < TARGETS["env_bytes"]})
    for c in clone:
        out.append({"target": f"clone {c['preset']} < {TARGETS['clone_us']:.0f} us", "value": f"{c['clone_us']:.1f} us",
                    "met": c["clone_us"] < TARGETS["clone_us"]})
    return out


def _growth(rows) -> List[Dict[str, Any]]:
    """Per-action cost and actions per game of each preset relative to pagat."""
    out = []
    for kind in ("engine", "aec"):
        base = next((r for r in rows if r["kind"] == kind and r["game"] == "pagat" and r["status"] == "ok"), None)
        if base is None:
            continue
        for r in rows:
            if r["kind"] != kind or r["status"] != "ok":
                continue
            out.append({"kind": kind, "game": r["game"],
                        "us_per_action": 1e6 / r["actions_per_s"],
                        "cost_per_action_vs_pagat": base["actions_per_s"] / r["actions_per_s"],
                        "actions_per_game": r["actions_per_game"],
                        "cost_per_game_vs_pagat": base["games_per_s"] / r["games_per_s"] if r["games_per_s"] else None})
    return out


def _fmt(x: Optional[float], digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def table_rows(res: Dict[str, Any]) -> List[List[str]]:
    out = []
    for r in res["rows"]:
        if r["status"] != "ok":
            out.append([r["id"], r["label"], r["status"], "", "", "", ""])
            continue
        out.append([r["id"], r["label"], _fmt(r["actions_per_s"]), _fmt(r["games_per_s"], 2),
                    _fmt(r["obs_per_s"]) if r["observations"] else "-", _fmt(r["actions_per_game"]),
                    f"{r['vs_openspiel']:.2f}x" if r["vs_openspiel"] is not None else "n/a"])
    return out


HEADERS = ["row", "what is timed", "actions/s", "games/s", "obs/s", "actions/game", "vs OpenSpiel"]


def markdown(res: Dict[str, Any]) -> str:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(["---"] * len(HEADERS)) + "|"]
    for row in table_rows(res):
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if res.get("train"):
        t = res["config"]["train"]
        lines.append(f"Training throughput ({t['config']}; wall clock, interleaved, {t['repeats']} repeat(s)):")
        lines.append("")
        lines += ["| " + " | ".join(TRAIN_HEADERS) + " |", "|" + "|".join(["---"] * len(TRAIN_HEADERS)) + "|"]
        for row in train_table_rows(res):
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    for m in res["memory"]:
        lines.append(f"* memory {m['preset']}: {m['env_after_reset_bytes'] / 1e3:.0f} kB per wrapped env after reset, "
                     f"{m['game_after_full_game_bytes'] / 1e3:.0f} kB per Game after a whole game (history included)")
    for c in res["clone"]:
        lines.append(f"* clone {c['preset']}: {c['clone_us']:.1f} us per Game.clone() "
                     f"(mean over {c['states']} mid-game states x {c['repeats']})")
    return "\n".join(lines) + "\n"


def print_results(res: Dict[str, Any], file=None) -> None:
    from rich.console import Console
    from rich.table import Table
    out = file or sys.stdout
    console = Console(file=out, width=None if getattr(out, "isatty", lambda: False)() else 160)
    m = res["meta"]
    cfg = res["config"]
    budget = f"{cfg['games']} games" if cfg["games"] is not None else f"{cfg['seconds']} s"
    t = Table(title=f"handfoot bench: random legal play, single process ({budget} per row, {m['clock']} clock)")
    for h in HEADERS:
        t.add_column(h, justify="left" if h in ("row", "what is timed") else "right", no_wrap=h == "row")
    for row in table_rows(res):
        t.add_row(*row)
    if res["rows"]:
        console.print(t)
    if res.get("train"):
        tc = cfg["train"]
        tt = Table(title=f"handfoot bench: training, learner decisions/s ({tc['config']}; wall clock, short and long "
                         f"runs interleaved, {tc['repeats']} repeat(s))")
        for h in TRAIN_HEADERS:
            tt.add_column(h, justify="left" if h == "row" else "right", no_wrap=h == "row")
        for row in train_table_rows(res):
            tt.add_row(*row)
        console.print(tt)
    for mm in res["memory"]:
        console.print(f"memory {mm['preset']}: {mm['env_after_reset_bytes'] / 1e3:.0f} kB per wrapped env after reset "
                      f"(tracemalloc, {mm['instances']} envs); {mm['game_after_full_game_bytes'] / 1e3:.0f} kB per "
                      f"Game after a whole game")
    for c in res["clone"]:
        console.print(f"clone {c['preset']}: {c['clone_us']:.1f} us per Game.clone() ({c['states']} mid-game states "
                      f"x {c['repeats']}, mean history {c['mean_history_len']:.0f} actions)")
    for g in res["growth"]:
        if g["game"] == "pagat":
            continue
        console.print(f"cost growth {g['kind']} {g['game']}: {g['us_per_action']:.1f} us/action "
                      f"({g['cost_per_action_vs_pagat']:.2f}x pagat), {_fmt(g['actions_per_game'])} actions/game, "
                      f"{_fmt(g['cost_per_game_vs_pagat'], 2)}x pagat per game")
    for tg in res["targets"]:
        console.print(f"target {tg['target']}: {tg['value']} ({'met' if tg['met'] else 'NOT met'})", markup=False)
    load = ", ".join(f"{x:.1f}" for x in m["load_average"]) if m["load_average"] else "n/a"
    console.print(f"{m['cpus']} CPUs, Python {m['python']}, load average {load}; results in {res.get('out', '-')}",
                  markup=False)


def save(res: Dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "bench.json").write_text(json.dumps(res, indent=2, default=str) + "\n")
    (out_dir / "bench.md").write_text(markdown(res))


TRAIN_HEADERS = ["row", "short runs", "long runs", "decisions/s at the margin (range)", "end to end", "vs sb3",
                 "CPU ms/decision", "peak RSS"]


def train_table_rows(res: Dict[str, Any]) -> List[List[str]]:
    out = []
    for r in res.get("train") or []:
        if r["status"] != "ok":
            out.append([r["id"], r["status"], "", "", "", "", "", ""])
            continue

        def run(xs: List[Dict[str, Any]]) -> str:
            return f"{sum(x['timesteps'] for x in xs):,} in {sum(x['seconds'] for x in xs):.1f} s"
        rss = r.get("peak_rss_bytes")
        ms = r.get("margins_per_s") or []
        margin = _fmt(r.get("decisions_per_s"))
        if len(ms) > 1:
            margin += f" ({min(ms):,.0f}-{max(ms):,.0f})"
        out.append([r["id"], run(r["short"]), run(r["long"]), margin,
                    _fmt(r.get("end_to_end_per_s")), f"{r['vs_sb3']:.2f}x" if r.get("vs_sb3") else "-",
                    _fmt(r.get("cpu_ms_per_decision"), 3), f"{rss / 2 ** 20:,.0f} MiB" if rss else "-"])
    return out
