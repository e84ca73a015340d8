"""docs/rules.md agrees with the code: its section numbers, its worked scoring example, its
rule field and preset tables."""
from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from experiments.apps.cli import main as handfoot
from handfoot_env.config import PRESETS, RULE_FIELDS, RuleConfig, load_rules
from handfoot_env.docgen import rule_fields_md, with_rule_fields

REPO = Path(__file__).resolve().parent.parent
RULES_MD = REPO / "docs" / "rules.md"
SHEET = REPO / "configs" / "scoresheets" / "rules_worked_example.yaml"


def _section(title_prefix: str) -> str:
    text = RULES_MD.read_text()
    start = text.index(f"\n## {title_prefix}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _table_rows(text: str):
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            yield [c.strip() for c in line.strip("|").split("|")]


def test_sections_keep_the_numbers_the_code_cites():
    heads = re.findall(r"^(##+) (\d+(?:\.\d+)?)\.? ", RULES_MD.read_text(), flags=re.M)
    numbers = [n for _, n in heads]
    assert numbers == ["1", "2", "3", "4", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "5", "6", "7", "8"]


def test_worked_scoring_example_matches_handfoot_score(capsys):
    assert handfoot(["score", str(SHEET), "--breakdown"]) == 0
    out = capsys.readouterr().out
    # the command's breakdown lines: "| <team 1> | <team 2>   item"
    command = {}
    for line in out.splitlines():
        m = re.match(r"^\s*\|\s*(-?\d+)\s*\|\s*(-?\d+)\s+(\D.*?)\s*$", line)
        if m:
            command[m.group(3)] = [int(m.group(1)), int(m.group(2))]
        m = re.match(r"^\s*1\s*\|\s*(-?\d+)\s+\d+\s*\|\s*(-?\d+)\s+\d+\s*$", line)
        if m:
            command["round score"] = [int(m.group(1)), int(m.group(2))]
    doc = {}
    for row in _table_rows(_section("6.")):
        if len(row) == 3 and re.fullmatch(r"-?\d+", row[1]):
            doc[row[0]] = [int(row[1]), int(row[2])]
    assert len(doc) == 9 and doc == command


def _doc_value(text: str):
    text = text.replace("−", "-").strip().strip("`")
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def test_rule_field_table_lists_every_field_with_its_pagat_value():
    default = RuleConfig()
    seen = []
    for row in _table_rows(_section("7.")):
        names = re.findall(r"`(\w+)`", row[0])
        if len(names) != 1 or names[0] not in {f.name for f in fields(RuleConfig)} or len(row) != 4:
            continue
        name = names[0]
        if name == "minimums":
            assert [int(x) for x in re.findall(r"\d+", row[1])] == list(default.minimums)
        else:
            assert _doc_value(row[1]) == getattr(default, name), row
        assert row[2] == RULE_FIELDS[name].values() and row[3] == RULE_FIELDS[name].doc, row
        seen.append(name)
    assert seen == [f.name for f in fields(RuleConfig)]


def test_the_rule_field_table_is_the_generated_one():
    """``python -m handfoot_env.docgen`` writes the table from the fields' declarations."""
    text = RULES_MD.read_text()
    assert rule_fields_md() in _section("7.") and with_rule_fields(text) == text


@pytest.mark.parametrize("preset", list(PRESETS))
def test_preset_table_matches_the_presets(preset):
    rows = {row[0].strip("`"): row for row in _table_rows(_section("7.")) if len(row) == 10}
    row = rows[preset]
    r = load_rules(preset)
    assert row[1].startswith(f"{r.players} / {r.teams}")
    assert int(row[2]) == r.decks
    assert row[3] == f"{r.hand_size} / {r.foot_size}"
    assert row[4] == f"{r.wild_limit}, {'yes' if r.wild_melds else 'no'}"
    books = {r.going_out_books(i) for i in range(1, r.rounds + 1)}
    assert len(books) == 1 and row[5] == ", ".join(map(str, books.pop()))
    assert row[6] == f"{'yes' if r.ask_partner else 'no'}, {'yes' if r.partner_in_foot else 'no'}"
    assert row[7] == r.tie_break.replace("_", " ")
    assert row[8] == str(r.pile_take)
    assert row[9], f"preset {preset} has no source in docs/rules.md"


def test_every_preset_is_in_the_table_and_the_house_rules_name_known_fields_and_presets():
    section = _section("7.")
    listed = [row[0].strip("`") for row in _table_rows(section) if len(row) == 10]
    assert listed[1:] == list(PRESETS)                    # the header row, then every preset in order
    house = section[section.index("**House rules.**"):section.index("**Validation.**")]
    known = {f.name for f in fields(RuleConfig)} | set(PRESETS)
    rows = [row for row in _table_rows(house) if row[0] != "house rule"]
    assert len(rows) >= 15
    used = set()
    for row in rows:                                       # each house rule names a field or a preset
        names = set(re.findall(r"`(\w+)", row[1])) & known
        assert names, row
        used |= names
    assert used >= {"go_out_clean", "go_out_dirty", "go_out_wild", "saskatchewan", "pile_take", "hand_size",
                    "foot_size", "ask_partner", "wild_limit", "wild_melds", "minimums"}


def test_the_rule_file_example_loads():
    """The example rule file of section 7 is a valid rule file (per-round going-out books)."""
    import yaml
    section = _section("7.")
    block = re.search(r"```yaml\n(.*?)```", section, flags=re.S).group(1)
    r = load_rules(yaml.safe_load(block))
    assert r.hand_size == 11 and r.pile_take == "all"
    assert r.going_out_books(1) == (1, 1, 0) and r.going_out_books(4) == r.going_out_books(5) == (2, 2, 0)


def test_one_deck_opening_bound_in_the_doc_is_the_configs():
    from handfoot_env.config import _max_meld_value
    one = load_rules("pagat", players=2, decks=1, hand_size=10, foot_size=10, go_out_clean=0, go_out_dirty=0,
                     go_out_wild=0)
    assert f"(with one deck: {_max_meld_value(one)})" in RULES_MD.read_text()
