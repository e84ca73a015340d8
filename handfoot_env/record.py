"""Game records: save any game as JSON, load it back, replay and verify it.

A record holds everything needed to re-simulate a game exactly: the rules
(``RuleConfig.to_dict()``), the seed, the reset options, and the action log;
plus the results the game produced (per-round scores, final scores, winner),
which :func:`replay_record` checks against the re-simulation.  A record whose
actions, scores or winner do not match what the engine produces (a tampered or
corrupted file) raises :class:`RecordMismatchError` naming the first
difference.

Format (version 1)::

    {
      "format": "handfoot-record",
      "version": 1,
      "rules": {...},                      # RuleConfig.to_dict()
      "seed": 7,
      "options": {"shoe": null, "round": 1, "scores": [0, 0]},   # Game.reset keywords
      "players": ["human", "greedy", "greedy", "greedy"],        # optional labels, one per seat
      "actions": [[0, "draw"], [0, "discard:9"], ...],           # (player, action name)
      "round_scores": [[3400, 2100], ...],  # one entry per finished round, per team
      "scores": [3400, 2100],               # cumulative team scores at the end of the log
      "winner": 0,                          # team, or null (draw, or game not finished)
      "game_over": true,
      "meta": {...}                         # free-form (who saved it, when, why)
    }

Typical use::

    from handfoot_env.record import save_record, load_record, replay_record
    save_record(game, "game.json", players=["me", "greedy", "greedy", "greedy"])
    game = replay_record(load_record("game.json"))     # raises on any mismatch

:func:`positions` re-simulates a record and returns every position (the game
after 0, 1, ..., N actions) for stepping through it, as ``handfoot replay``
does.
"""
from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .actions import ACTION_INDEX, ACTION_NAMES
from .config import RuleConfigError, load_rules
from .engine import GAME_OVER, Game, IllegalActionError

FORMAT = "handfoot-record"
#: the largest record file read
MAX_RECORD_BYTES = 20_000_000
VERSION = 1

PathLike = Union[str, Path]


class RecordError(ValueError):
    """A record that cannot be read: not JSON, wrong format or version, malformed field."""


class RecordMismatchError(RecordError):
    """A record whose re-simulation differs from what it stores (the message names the first difference)."""

    def __init__(self, message: str, index: Optional[int] = None):
        super().__init__(message)
        #: 0-based index of the offending action, when the difference is in the action log
        self.index = index


# --------------------------------------------------------------------------- building
def reset_options(game: Game) -> Dict[str, Any]:
    """The ``Game.reset`` keywords a game was started with, as far as the game shows them.

    The start round and start scores are recovered from the finished rounds; a
    stacked shoe cannot be recovered and must be passed to :func:`make_record`.
    """
    done = len(game.round_scores)
    start_round = game.round - done + (1 if game.phase == GAME_OVER else 0)
    start_scores = [s - sum(r[t] for r in game.round_scores) for t, s in enumerate(game.scores)]
    return {"shoe": None, "round": int(start_round), "scores": start_scores}


def make_record(game: Game, players: Optional[Sequence[str]] = None, options: Optional[Mapping[str, Any]] = None,
                meta: Optional[Mapping[str, Any]] = None) -> dict:
    """The record (a JSON-serialisable dict) of ``game`` as it stands.

    ``players``: a label per seat (agent specs, ``"human"``); ``options``: the
    reset options if they cannot be recovered from the game (a stacked
    ``shoe``); ``meta``: anything else worth keeping.
    """
    if game.seed is None:
        raise RecordError("the game has not been reset: nothing to record")
    opts = reset_options(game)
    for k, v in dict(options or {}).items():
        if k not in opts:
            raise RecordError(f"unknown reset option {k!r}; expected shoe, round or scores")
        opts[k] = list(v) if isinstance(v, (list, tuple)) else v
    if players is not None:
        players = [str(p) for p in players]
        if len(players) != game.n:
            raise RecordError(f"players: {len(players)} labels for {game.n} seats")
    m = {"saved": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    m.update(dict(meta or {}))
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": game.rules.to_dict(),
        "seed": game.seed,
        "options": opts,
        "players": players,
        "actions": [[int(p), ACTION_NAMES[a]] for p, a in game.history],
        "round_scores": [list(r) for r in game.round_scores],
        "scores": list(game.scores),
        "winner": game.winner,
        "game_over": bool(game.game_over),
        "meta": m,
    }


def save_record(game: Game, path: PathLike, players: Optional[Sequence[str]] = None,
                options: Optional[Mapping[str, Any]] = None, meta: Optional[Mapping[str, Any]] = None) -> dict:
    """Write the record of ``game`` to ``path`` (JSON) and return it."""
    rec = make_record(game, players=players, options=options, meta=meta)
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(dumps_record(rec))
    return rec


def dumps_record(rec: Mapping[str, Any]) -> str:
    """The JSON text of a record: one field per line, one action per line."""
    items = list(rec.items())
    lines = ["{"]
    for i, (k, v) in enumerate(items):
        if k == "actions" and v:
            body = "[\n" + ",\n".join("  " + json.dumps(x) for x in v) + "\n ]"
        else:
            body = json.dumps(v)
        lines.append(f" {json.dumps(k)}: {body}" + ("," if i < len(items) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- reading
def _need(rec: Mapping[str, Any], key: str, types, what: str):
    if key not in rec:
        raise RecordError(f"record has no {key!r} field ({what})")
    v = rec[key]
    if not isinstance(v, types) or (isinstance(v, bool) and types is int):
        raise RecordError(f"record field {key!r} must be {what}, got {v!r}")
    return v


def check_record(rec: Any) -> dict:
    """Validate the structure of a record (not its consistency); return it."""
    if not isinstance(rec, Mapping):
        raise RecordError(f"a record is a JSON object, got {type(rec).__name__}")
    if "format" not in rec and "action_log" in rec and "seed" in rec:
        rec = _from_evaluate(rec)
    if rec.get("format") != FORMAT:
        raise RecordError(f"not a game record: field 'format' is {rec.get('format')!r}, expected {FORMAT!r}")
    version = rec.get("version")
    if version != VERSION:
        raise RecordError(f"record format version {version!r} is not supported (this version reads {VERSION})")
    _need(rec, "rules", Mapping, "a mapping of rule fields")
    _need(rec, "seed", int, "an integer")
    opts = _need(rec, "options", Mapping, "a mapping of reset options")
    unknown = sorted(set(opts) - {"shoe", "round", "scores"})
    if unknown:
        raise RecordError(f"record field 'options' has unknown key {unknown[0]!r}")
    actions = _need(rec, "actions", list, "a list of [player, action name]")
    for i, entry in enumerate(actions):
        if (not isinstance(entry, (list, tuple)) or len(entry) != 2 or isinstance(entry[0], bool)
                or not isinstance(entry[0], int) or not isinstance(entry[1], str)):
            raise RecordError(f"action {i + 1}: expected [player, action name], got {entry!r}")
        if entry[1] not in ACTION_INDEX:
            raise RecordError(f"action {i + 1}: unknown action name {entry[1]!r}")
    _need(rec, "round_scores", list, "a list of per-team round scores")
    _need(rec, "scores", list, "a list of team scores")
    players = rec.get("players")
    if players is not None and not (isinstance(players, list) and all(isinstance(p, str) for p in players)):
        raise RecordError(f"record field 'players' must be a list of labels, got {players!r}")
    return dict(rec)


def _from_evaluate(rec: Mapping[str, Any]) -> dict:
    """Convert the per-game records of ``handfoot evaluate --records`` (no ``format`` field)."""
    rules = rec.get("rules")
    nteams = len(rec.get("scores") or []) or 2
    out = {
        "format": FORMAT, "version": VERSION, "rules": rules, "seed": rec.get("seed"),
        "options": {"shoe": None, "round": 1, "scores": [0] * nteams},
        "players": rec.get("seats"), "actions": rec.get("action_log"),
        "round_scores": rec.get("round_scores"), "scores": rec.get("scores"),
        "winner": rec.get("winner"), "game_over": True,
        "meta": {k: rec[k] for k in ("deal", "game", "pair") if k in rec},
    }
    out["meta"]["converted_from"] = "evaluate"
    return out


def load_record(path: PathLike) -> dict:
    """Read and structurally check a record file (:class:`RecordError` if it is not one)."""
    p = Path(path)
    if not p.exists():
        raise RecordError(f"record file {str(p)!r} does not exist")
    if not p.is_file():
        raise RecordError(f"record file {str(p)!r} is not a file")
    if p.stat().st_size > MAX_RECORD_BYTES:
        raise RecordError(f"{p}: larger than {MAX_RECORD_BYTES:,} bytes (a record of a long game is under 1 MB)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RecordError(f"{p}: not a JSON file: {e}") from None
    except RecursionError:
        raise RecordError(f"{p}: not a record: JSON nested too deeply") from None
    try:
        return check_record(data)
    except RecordError as e:
        raise RecordError(f"{p}: {e}") from None


# --------------------------------------------------------------------------- replaying
def new_game(record: Mapping[str, Any]) -> Game:
    """A game reset exactly as the record's game was (no actions applied)."""
    rec = check_record(record)
    try:
        rules = load_rules(rec["rules"])
    except RuleConfigError as e:
        raise RecordError(f"record rules: {e}") from None
    g = Game(rules)
    players = rec.get("players")
    if players is not None and len(players) != g.n:     # as make_record refuses it
        raise RecordError(f"players: {len(players)} labels for {g.n} seats")
    opts = rec["options"]
    start = opts.get("round")
    try:
        g.reset(seed=rec["seed"], shoe=opts.get("shoe"), round=1 if start is None else start, scores=opts.get("scores"))
    except ValueError as e:
        raise RecordError(f"record reset options: {e}") from None
    return g


def _describe(i: int, player: int, name: str) -> str:
    return f"action {i + 1} (player_{player} {name!r})"


def _apply(g: Game, i: int, player: int, name: str) -> None:
    if g.phase == GAME_OVER:
        raise RecordMismatchError(f"{_describe(i, player, name)}: the game was already over after action {i}", i)
    if player != g.current:
        raise RecordMismatchError(
            f"{_describe(i, player, name)}: the record says player_{player} acts, "
            f"but player_{g.current} is to act in the replay", i)
    try:
        g.step(ACTION_INDEX[name])
    except IllegalActionError as e:
        raise RecordMismatchError(f"{_describe(i, player, name)} is not legal in the replay: {e.reason}", i) from None


def _check_round(g: Game, rec: Mapping[str, Any], r: int) -> None:
    stored = rec["round_scores"]
    got = g.round_scores[r]
    if r >= len(stored):
        raise RecordMismatchError(
            f"round {r + 1} ends in the replay (scores {got}) but the record lists only {len(stored)} finished rounds")
    want = stored[r]
    if not isinstance(want, list) or len(want) != len(got):
        raise RecordMismatchError(f"round {r + 1} scores: record has {want!r}, replay gives {got}")
    for t, (a, b) in enumerate(zip(want, got)):
        if a != b:
            raise RecordMismatchError(f"round {r + 1} score of team {t}: record says {a}, replay gives {b}")


def _check_end(g: Game, rec: Mapping[str, Any]) -> None:
    stored = rec["round_scores"]
    if len(stored) > len(g.round_scores):
        r = len(g.round_scores)
        raise RecordMismatchError(
            f"round {r + 1} score: record says {stored[r]}, but that round does not end in the replay")
    want = rec["scores"]
    if len(want) != len(g.scores) or list(want) != list(g.scores):
        for t in range(max(len(want), len(g.scores))):
            a = want[t] if t < len(want) else None
            b = g.scores[t] if t < len(g.scores) else None
            if a != b:
                raise RecordMismatchError(f"final score of team {t}: record says {a}, replay gives {b}")
    if "game_over" in rec and bool(rec["game_over"]) != bool(g.game_over):
        raise RecordMismatchError(
            f"game over: record says {bool(rec['game_over'])}, replay gives {bool(g.game_over)}")
    if "winner" in rec and rec["winner"] != g.winner:
        def w(x):
            return "no winner" if x is None else f"team {x}"
        raise RecordMismatchError(f"winner: record says {w(rec['winner'])}, replay gives {w(g.winner)}")


def replay_record(record: Mapping[str, Any], verify: bool = True) -> Game:
    """Re-simulate a record from its seed and actions and return the final game.

    With ``verify`` (default) every round score, the final scores and the
    winner are checked against the record; the first difference raises
    :class:`RecordMismatchError`.  An action that is not legal in the replay,
    or played by the wrong player, is always an error.
    """
    rec = check_record(record)
    g = new_game(rec)
    done = 0
    for i, (player, name) in enumerate(rec["actions"]):
        _apply(g, i, player, name)
        while verify and len(g.round_scores) > done:
            _check_round(g, rec, done)
            done += 1
    if verify:
        _check_end(g, rec)
    return g


@dataclass
class Position:
    """The game after ``index`` actions of a record.

    ``action``: the action that led here as ``(player, name)`` (``None`` at the
    start); ``round_end``: when that action ended a round, the board as it was
    at that moment (before the next deal), else ``None``; ``round_scores``: the
    scores of the round it ended.
    """

    index: int
    game: Game
    action: Optional[tuple] = None
    round_end: Optional[Game] = None
    round_scores: Optional[List[int]] = None


def board_after(game: Game, action: int) -> Game:
    """A copy of ``game`` with ``action`` applied but a round end not scored or redealt.

    Shows the table as it is at the moment a round ends (the cards left in
    hands, the final melds), which the game itself has already replaced by
    the next deal.
    """
    b = game.clone()
    b._end_round = lambda: None
    b.step(action)
    b.__dict__.pop("_end_round", None)
    b.phase = GAME_OVER
    return b


def positions(record: Mapping[str, Any], verify: bool = True) -> List[Position]:
    """Every position of a record: ``result[k]`` is the game after ``k`` actions.

    The record is verified as by :func:`replay_record` (unless ``verify`` is
    false); each position holds an independent copy of the game.
    """
    rec = check_record(record)
    g = new_game(rec)
    out = [Position(0, g.clone())]
    done = 0
    for i, (player, name) in enumerate(rec["actions"]):
        before = g.clone() if g.phase != GAME_OVER else None
        _apply(g, i, player, name)
        end = None
        scores = None
        if len(g.round_scores) > done:
            if verify:
                _check_round(g, rec, done)
            scores = list(g.round_scores[done])
            done = len(g.round_scores)
            end = board_after(before, ACTION_INDEX[name]) if before is not None else None
        out.append(Position(i + 1, g.clone(), (player, name), end, scores))
    if verify:
        _check_end(g, rec)
    return out


__all__ = ["FORMAT", "VERSION", "RecordError", "RecordMismatchError", "Position", "make_record", "save_record",
           "load_record", "check_record", "dumps_record", "new_game", "replay_record", "positions", "board_after",
           "reset_options"]
