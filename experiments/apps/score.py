"""``handfoot score SHEET.yaml``: a whole score sheet read, checked round by round and scored.

The sheet format and every check on one round are in :mod:`experiments.apps.scoresheet`;
this module reads the YAML (duplicate keys refused), scores the rounds in order, keeps the running
totals and prints the table or JSON.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from experiments.apps.scoresheet import ScoreSheetError, _show, _show_item, _suggest, score_round
from handfoot_env.config import PRESETS, RuleConfig, RuleConfigError, RulesLike, load_rules
from handfoot_env.scoring import BREAKDOWN_KEYS, BREAKDOWN_LABELS
from experiments.config import CommandParser
from experiments.config import command
from handfoot_env.safe_yaml import MAX_YAML_BYTES, parse_yaml


@dataclass
class SheetResult:
    """A scored sheet."""

    teams: list[str]
    rules: RuleConfig
    #: per round, per team: the breakdown (signed points, with ``total``)
    breakdowns: list[dict[str, dict[str, int]]] = field(default_factory=list)
    #: per round, per team: the round score
    rounds: list[dict[str, int]] = field(default_factory=list)
    #: per round, per team: the cumulative score after that round
    running: list[dict[str, int]] = field(default_factory=list)
    #: where the rules came from (preset name, path or "inline")
    rules_source: str = "pagat"

    @property
    def totals(self) -> dict[str, int]:
        return dict(self.running[-1]) if self.running else {t: 0 for t in self.teams}

    @property
    def winner(self) -> str | None:
        """The team with the highest total; ``None`` on a tie for the lead."""
        return _leader(self.totals)

    @property
    def complete(self) -> bool:
        """Whether all rounds of the rules were played (and no tie is left for an extra round)."""
        if len(self.rounds) < self.rules.rounds:
            return False
        return not (self.rules.tie_break == "extra_round" and self.winner is None)

    def to_json(self) -> dict[str, Any]:
        """``{"rounds": [{team: int}, ...], "totals": {team: int}, "complete": bool, "winner", "leader"}``.

        ``winner`` is set only when the game is complete (None for a draw); ``leader`` is the team
        ahead so far (None while the lead is tied).
        """
        return {"rounds": [dict(r) for r in self.rounds], "totals": self.totals, "complete": self.complete,
                "winner": self.winner if self.complete else None, "leader": _leader(self.totals)}


def _leader(totals: Mapping[str, int]) -> str | None:
    if not totals:
        return None
    best = max(totals.values())
    leaders = [t for t, v in totals.items() if v == best]
    return leaders[0] if len(leaders) == 1 else None


def load_sheet(path: str | Path) -> dict[str, Any]:
    """Read a YAML score sheet; :class:`ScoreSheetError` if missing, unreadable or not valid YAML."""
    p = Path(path)
    if not p.exists():
        raise ScoreSheetError("no such file", source=str(p))
    if not p.is_file():
        raise ScoreSheetError("not a file", source=str(p))
    try:
        if p.stat().st_size > MAX_YAML_BYTES:
            raise ScoreSheetError(f"larger than {MAX_YAML_BYTES:,} bytes", source=str(p))
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScoreSheetError(f"cannot read: {e}", source=str(p)) from None
    data = parse_yaml(text, lambda msg: ScoreSheetError(msg, source=str(p)))
    if not isinstance(data, Mapping):
        raise ScoreSheetError(f"a score sheet is a mapping with 'teams' and 'rounds' (and optional 'rules'), "
                              f"got {_show(data) if data is not None else 'an empty file'}", source=str(p))
    return dict(data)


def _resolve_rules(spec: Any, base_dir: Path | None) -> tuple:
    """(RuleConfig, description) from a sheet's ``rules`` value."""
    if spec is None:
        return load_rules("pagat"), "pagat"
    if isinstance(spec, RuleConfig):
        return spec, "given"
    try:
        if isinstance(spec, Mapping):
            return load_rules(dict(spec)), "inline"
        if isinstance(spec, (str, Path)):
            s = str(spec)
            if s in PRESETS:
                return load_rules(s), s
            p = Path(s)
            if not p.is_absolute() and not p.exists() and base_dir is not None and (base_dir / p).exists():
                p = base_dir / p
            if p.is_file() or s.endswith((".yaml", ".yml")):
                return load_rules(p), str(p)
            return load_rules(s), s   # raises: neither a preset nor a file
    except RuleConfigError as e:
        label = "rules" if isinstance(spec, Mapping) else f"rules {_show_item(str(spec))}"
        raise ScoreSheetError(str(e), entry=label) from None
    raise ScoreSheetError(f"must be a preset name ({', '.join(PRESETS)}), a YAML path or a mapping of rule fields",
                          entry=f"rules {_show(spec)}")


def score_sheet(sheet: str | Path | Mapping[str, Any], rules: RulesLike = None) -> SheetResult:
    """Score a whole sheet: a mapping as in docs/interface.md or the path of a YAML file.

    ``rules``, if given, overrides the sheet's own ``rules``.  Returns a
    :class:`SheetResult` (round scores, running totals, winner); raises
    :class:`ScoreSheetError` naming the round, team and entry of the first problem.
    """
    base_dir = None
    if isinstance(sheet, (str, Path)):
        base_dir = Path(sheet).resolve().parent
        data = load_sheet(sheet)
    elif isinstance(sheet, Mapping):
        data = dict(sheet)
    else:
        raise ScoreSheetError(f"a score sheet is a mapping or a YAML path, got {type(sheet).__name__}")
    # errors inside the sheet name round, team and entry; only file-level errors name the file
    return _score_data(data, rules, base_dir)


def _score_data(data: Mapping[str, Any], rules: RulesLike, base_dir: Path | None) -> SheetResult:
    unknown = [k for k in data if k not in ("rules", "teams", "rounds")]
    if unknown:
        raise ScoreSheetError(f"unknown key{_suggest(unknown[0], ['rules', 'teams', 'rounds'])}; a sheet holds "
                              f"'rules' (optional), 'teams' and 'rounds'", entry=f"sheet key {_show_item(unknown[0])}")
    if rules is not None:
        cfg, rules_source = _resolve_rules(rules, None)
    else:
        cfg, rules_source = _resolve_rules(data.get("rules"), base_dir)

    teams = data.get("teams")
    if "teams" not in data:
        raise ScoreSheetError("the sheet has no 'teams' list, e.g. teams: [Us, Them]", entry="teams")
    if isinstance(teams, (str, bytes)) or not isinstance(teams, (list, tuple)) or not teams:
        raise ScoreSheetError("must be a list of team names, e.g. [Us, Them]", entry=f"teams {_show(teams)}")
    for t in teams:
        if not isinstance(t, str) or not t.strip():
            raise ScoreSheetError(f"team name {_show(t)} is not a name; quote names that YAML reads as numbers "
                                  f"or booleans, e.g. \"1\" or \"yes\"", entry=f"teams {_show(teams)}")
    if len(set(teams)) != len(teams):
        dup = next(t for t in teams if teams.count(t) > 1)
        raise ScoreSheetError(f"team {dup} is listed twice", entry=f"teams {_show(teams)}")
    if len(teams) != cfg.teams:
        raise ScoreSheetError(f"the sheet lists {len(teams)} teams but the rules ({rules_source}) have {cfg.teams}",
                              entry=f"teams {_show(teams)}")
    teams = list(teams)

    if "rounds" not in data:
        raise ScoreSheetError("the sheet has no 'rounds' list", entry="rounds")
    rounds = data.get("rounds")
    if rounds is None:
        rounds = []
    if isinstance(rounds, (str, bytes)) or not isinstance(rounds, (list, tuple)):
        raise ScoreSheetError("must be a list of rounds, each a mapping of team name -> entry",
                              entry=f"rounds {_show(rounds)}")

    result = SheetResult(teams=teams, rules=cfg, rules_source=rules_source)
    running = {t: 0 for t in teams}
    for i, rnd in enumerate(rounds, 1):
        if i > cfg.rounds:
            if cfg.tie_break != "extra_round":
                raise ScoreSheetError(
                    f"the game is over after round {cfg.rounds} (the rules have {cfg.rounds} rounds, "
                    f"tie_break: {cfg.tie_break})", round=i)
            if _leader(running) is not None:
                raise ScoreSheetError(
                    f"the game was decided after round {i - 1} ({_standings(running)}); an extra round is "
                    f"played only on a tie", round=i)
        breakdown = score_round(rnd, teams, cfg, round_no=i)
        scores = {t: breakdown[t]["total"] for t in teams}
        running = {t: running[t] + scores[t] for t in teams}
        result.breakdowns.append(breakdown)
        result.rounds.append(scores)
        result.running.append(dict(running))
    return result


def _standings(totals: Mapping[str, int]) -> str:
    return ", ".join(f"{t} {v}" for t, v in totals.items())


def format_table(result: SheetResult, breakdown: bool = False) -> str:
    """Plain-text table of round scores and running totals, then the winner."""
    teams = result.teams
    width = max(8, *(len(t) for t in teams))
    head1 = f"{'':>7} |" + " |".join(f" {t:^{2 * width + 1}}" for t in teams)
    head2 = f"{'round':>7} |" + " |".join(f" {'score':>{width}} {'total':>{width}}" for _ in teams)
    rule = "-" * len(head2)
    lines = [f"rules: {result.rules_source}", head1, head2, rule]
    for i, (scores, running) in enumerate(zip(result.rounds, result.running), 1):
        lines.append(f"{i:>7} |" + " |".join(f" {scores[t]:>{width}} {running[t]:>{width}}" for t in teams))
        if breakdown:
            for key in BREAKDOWN_KEYS:
                vals = [result.breakdowns[i - 1][t][key] for t in teams]
                if any(vals):
                    lines.append(f"{'':>7} |" + " |".join(f" {v:>{width}} {'':>{width}}" for v in vals)
                                 + f"   {BREAKDOWN_LABELS[key]}")
    lines.append(rule)
    totals = result.totals
    lines.append(f"{'total':>7} |" + " |".join(f" {'':>{width}} {totals[t]:>{width}}" for t in teams))
    lines.append("")
    played = len(result.rounds)
    if not played:
        lines.append("no rounds scored yet")
    elif result.complete:
        lines.append(f"winner: {result.winner}" if result.winner else f"draw at {max(totals.values())}")
    else:
        status = (f"after round {played} of {result.rules.rounds}" if played < result.rules.rounds
                  else "tied: an extra round is played (tie_break: extra_round)")
        lead = result.winner
        lines.append(f"{status}; " + (f"{lead} leads" if lead else "the lead is tied"))
    return "\n".join(lines)


@command("score")
def score_main(argv: Sequence[str] | None = None) -> int:
    """``handfoot score SHEET.yaml [--json] [--rules R] [--breakdown]``; returns the exit status.

    0 on success; 2 for a malformed or rule-breaking sheet (one ``error: ...``
    line on stderr naming round, team and entry) or bad arguments.
    """
    parser = CommandParser(
        prog="handfoot score",
        description="Score a Hand and Foot score sheet (YAML, see docs/interface.md 'Score keeper'): "
                    "round scores, running totals and the winner.")
    parser.add_argument("sheet", help="the score sheet, a YAML file")
    parser.add_argument("--json", action="store_true",
                        help='print {"rounds", "totals", "complete", "winner" (only when complete), "leader"} as JSON')
    parser.add_argument("--rules", default=None,
                        help="rules preset or YAML path, overriding the sheet's 'rules'")
    parser.add_argument("--breakdown", action="store_true", help="show each round's items in the table")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        result = score_sheet(args.sheet, rules=args.rules)
    except RuleConfigError as e:
        raise RuleConfigError(f"rules: {e}") from None
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(format_table(result, breakdown=args.breakdown))
    return 0


#: the CLI looks for ``score_main`` first; ``main`` is the same function
main = score_main
