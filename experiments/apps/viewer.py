"""The HTML replay viewer: one self-contained page that shows a recorded game as a card table.

    handfoot replay game.json --html game.html
    handfoot demo --seed 3 --html demo.html

The record is re-simulated and verified in Python (:func:`handfoot_env.record.positions`);
every step becomes a frame: the full-view table snapshot of
:func:`handfoot_env.render_image.table_snapshot` and a line describing the action.
A round end gives two frames, the final board with the score sheet and then the
next deal.  Snapshots are stored as differences from the previous frame, so a
four-round game of about a thousand actions is a page of a few hundred kB.

The page (``viewer.html``, ``viewer.css``, ``viewer.js`` beside this module,
inlined at build time) needs no server and no network: the cards are drawn with
CSS, the data is a JSON block that the script reads.
"""
from __future__ import annotations

import html
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Union

from handfoot_env.actions import ACTION_INDEX
from handfoot_env.cards import CODES, SLOT_CODES
from handfoot_env.record import check_record, positions
from handfoot_env.scoring import BREAKDOWN_KEYS, BREAKDOWN_LABELS
from handfoot_env.render_image import table_snapshot
from experiments.apps.table import describe_action
from experiments.config import output_file_error

#: snapshot fields that are lists with one entry per seat or team, stored entry by entry
PER_INDEX = ("hands", "feet", "melds", "books")

#: the score sheet's lines: the engine's round breakdown (handfoot_env.scoring), item by item, and the total
ROUND_ITEMS = tuple((k, BREAKDOWN_LABELS[k]) for k in BREAKDOWN_KEYS) + (("total", "round total"),)


def _delta(prev: Mapping[str, Any], cur: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in cur.items():
        old = prev.get(k)
        if v == old:
            continue
        if k in PER_INDEX and isinstance(old, list) and len(old) == len(v):
            out[k] = {str(i): x for i, (x, y) in enumerate(zip(v, old)) if x != y}
        else:
            out[k] = v
    return out


def viewer_data(record: Mapping[str, Any], source: str = "", view: Optional[int] = None, start: int = 0) -> dict:
    """The data the page shows: header fields, one frame per step, delta-coded snapshots.

    ``view``: the seat whose cards the page shows at first (``None``: every
    card); ``start``: the page opens at the position after this many actions.

    Raises :class:`~handfoot_env.record.RecordError` for a record that cannot be
    read or does not verify.
    """
    rec = check_record(record)
    pos = positions(rec)
    final = pos[-1].game
    n = final.n
    labels = list(rec.get("players") or [""] * n)
    frames: List[dict] = []
    snaps: List[dict] = []

    def add(meta: dict, snap: dict) -> None:
        frames.append(meta)
        snaps.append(snap)

    add({"k": 0, "t": "deal", "a": None, "d": "the deal"}, table_snapshot(pos[0].game))
    ended = 0
    for i in range(1, len(pos)):
        p = pos[i]
        player, name = p.action
        desc = describe_action(pos[i - 1].game, ACTION_INDEX[name])
        meta = {"k": i, "t": "act", "a": [player, name], "d": desc}
        if p.round_end is not None:
            snap = table_snapshot(p.round_end, round_over=True)
            snap["scores"] = list(p.game.scores)
            det = p.game.round_details[ended]
            meta.update(t="end", ri=ended, rs=list(p.round_scores))
            if p.game.game_over:
                snap["winner"] = p.game.winner
                meta["over"] = True
            add(meta, snap)
            ended += 1
            if not p.game.game_over:
                add({"k": i, "t": "deal", "a": None, "d": f"round {p.game.round}: the deal",
                     "after": det["round"]}, table_snapshot(p.game))
        else:
            add(meta, table_snapshot(p.game))

    states: List[dict] = [snaps[0]] + [_delta(a, b) for a, b in zip(snaps, snaps[1:])]
    r = final.rules
    details = []
    for det in final.round_details:
        details.append({"round": det["round"], "went_out": det["went_out"], "actions": det.get("actions"),
                        "teams": [{k: int(t[k]) for k, _ in ROUND_ITEMS} for t in det["teams"]]})
    return {
        "source": source,
        "view": view,
        "start": int(start),
        "seed": rec["seed"],
        "players": labels,
        "n": n,
        "teams": final.num_teams,
        "team_of": list(final.team_of),
        # per round (1 to rounds; the page takes the last one for an extra round), from the accessors
        "rules": {"rounds": r.rounds, "wild_melds": bool(r.wild_melds),
                  "go_out": [list(r.going_out_books(i)) for i in range(1, r.rounds + 1)],
                  "minimums": [r.round_minimum(i) for i in range(1, r.rounds + 1)]},
        "codes": list(CODES),
        "slots": list(SLOT_CODES),
        "items": [list(x) for x in ROUND_ITEMS],
        "start_scores": [s - sum(rs[t] for rs in final.round_scores) for t, s in enumerate(final.scores)],
        "round_scores": [list(x) for x in final.round_scores],
        "round_details": details,
        "scores": list(final.scores),
        "winner": final.winner,
        "game_over": bool(final.game_over),
        "actions": len(pos) - 1,
        "frames": frames,
        "states": states,
    }


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&`` or line separators."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                 ("\u2029", "\\u2029")):
        text = text.replace(a, b)
    return text


def page_title(data: Mapping[str, Any]) -> str:
    labels = data["players"]
    teams = []
    for t in range(data["teams"]):
        names = sorted({labels[p] for p in range(data["n"]) if data["team_of"][p] == t and labels[p]})
        teams.append(" + ".join(names) or f"team {t}")
    return f"Hand and Foot replay - {' vs '.join(teams)} - seed {data['seed']}"


def build_html(record: Mapping[str, Any], source: str = "", view: Optional[int] = None, start: int = 0) -> str:
    """The page for ``record`` as one HTML string (arguments as for :func:`viewer_data`)."""
    return render_page(viewer_data(record, source, view, start))


def render_page(data: Mapping[str, Any]) -> str:
    """The page for the data of :func:`viewer_data`."""
    page = _asset("viewer.html")
    page = page.replace("{{TITLE}}", html.escape(page_title(data)))
    page = page.replace("{{CSS}}", _asset("viewer.css"))
    page = page.replace("{{JS}}", _asset("viewer.js"))
    return page.replace("{{DATA}}", script_json(data))


def write_html(record: Mapping[str, Any], out: Union[str, Path], source: str = "", view: Optional[int] = None,
               start: int = 0) -> dict:
    """Write the page for ``record`` to ``out``; returns ``{"path", "bytes", "frames", "seconds"}``.

    Raises :class:`~handfoot_env.record.RecordError` (bad record) or
    :class:`OSError` (the file cannot be written).
    """
    t0 = time.perf_counter()
    data = viewer_data(record, source, view, start)
    text = render_page(data)
    p = Path(out)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory")
    p.write_text(text, encoding="utf-8")
    return {"path": str(p), "bytes": len(text.encode("utf-8")), "frames": len(data["frames"]),
            "seconds": time.perf_counter() - t0}


def html_error(out: Union[str, Path]) -> Optional[str]:
    """Why ``out`` cannot be written as the page (one line), or ``None``."""
    return output_file_error(out, "--html")


__all__ = ["viewer_data", "build_html", "write_html", "render_page", "script_json", "html_error", "PER_INDEX"]

