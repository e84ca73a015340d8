"""Every rule field reaches both cores (docs/architecture.md, "Where to add: a rule field").

A rule is written twice, in the reference engine and in the compiled core's kernels, so a rule
field that only one of them reads is a silent difference.  Two nets catch it:

* the compiled rule vector (``compiled.layout.rule_vector``, the kernels' only view of the
  rules) changes when any field of ``RuleConfig`` changes, in every form the field takes (a new
  field that does not reach it fails here until it does);
* random valid rule configurations, every field drawn in every form it takes (per-round lists,
  ``pile_take: all``, one to five rounds, two to eight players), play the same positions on both
  cores: the state row, the legal list, the mask and the observation compared at every step, from
  a random start round (so that per-round rules are played past round 1).
"""
from __future__ import annotations

import random
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from handfoot_env.cards import PER_DECK
from handfoot_env.compiled import available
from handfoot_env.config import GOING_OUT_FIELDS, LIMITS, RULE_FIELDS, RuleConfig, RuleConfigError, load_rules

from .soak import compare_engine_game

pytestmark = pytest.mark.skipif(not available(), reason="the compiled core needs Numba")
if available():
    from handfoot_env.compiled import load
    load()
    from handfoot_env.compiled.layout import rule_vector

def _tuple_changes(value: tuple) -> list:
    """Per-round lists changed one round at a time (first, last), and one round more or less."""
    out = []
    for i in (0, len(value) - 1):
        for d in (1, -1, 2):
            out.append(value[:i] + (value[i] + d,) + value[i + 1:])
    return out + [value + value[-1:], value[:-1]]


def _changes(name: str, value):
    """Candidate values of field ``name`` other than ``value``, nearest first (the field's words from
    its ``Rule``, and for an integer field that also takes words, its smallest integers)."""
    spec = RULE_FIELDS[name]
    words = [w for w, _ in spec.words if w != value]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [v for v in (value + 1, value - 1, value + 2, value - 2, 2 * value) if v != value] + words
    if isinstance(value, str):
        return words + ([spec.limits[0], spec.limits[0] + 1] if spec.kind is int else [])
    if isinstance(value, tuple):
        return _tuple_changes(value)
    raise AssertionError(f"rule field {name!r} holds a {type(value).__name__}: teach this test how to change it")


def _changed_configs(base: RuleConfig, name: str) -> list:
    """Valid configs equal to ``base`` but in field ``name`` (for a per-round list, with the other
    per-round fields resized when the number of rounds changes)."""
    out = []
    for v in _changes(name, getattr(base, name)):
        d = base.to_dict()
        d[name] = list(v) if isinstance(v, tuple) else v
        if name == "minimums":
            for f in GOING_OUT_FIELDS:
                if isinstance(d[f], list):
                    d[f] = (d[f] + d[f][-1:])[:len(v)]
        try:
            out.append(load_rules(d))
        except RuleConfigError:
            continue
    return out


#: rule sets the fields are changed from, one at a time
BASES = {
    "pagat": load_rules("pagat"),
    "bicycle": load_rules("bicycle"),
    "books_by_round": load_rules("pagat", go_out_clean=[1, 1, 2, 2], go_out_dirty=[0, 1, 1, 2],
                                 go_out_wild=[0, 0, 1, 1]),
    "saskatchewan": load_rules("saskatchewan"),
}


@pytest.mark.parametrize("name", [f.name for f in fields(RuleConfig)])
def test_every_rule_field_changes_the_compiled_rule_vector(name):
    tried = 0
    for base, r in BASES.items():
        before = rule_vector(r)
        for c in _changed_configs(r, name):
            tried += 1
            assert not np.array_equal(rule_vector(c), before), (
                f"rule field {name!r} = {getattr(c, name)!r} (from {getattr(r, name)!r} in {base}) leaves the "
                f"compiled rule vector unchanged: the kernels cannot see it (compiled/layout.py: rule_vector)")
    assert tried, f"no valid change of {name!r} from any base: add a candidate to this test"


def test_the_rule_vector_holds_each_rounds_minimum_and_books():
    from handfoot_env.compiled.layout import R_GO, R_MIN
    r = BASES["books_by_round"]
    v = rule_vector(r)
    for rnd in range(1, r.rounds + 1):
        assert v[R_MIN + rnd - 1] == r.round_minimum(rnd)
        assert tuple(v[R_GO + 3 * (rnd - 1):R_GO + 3 * rnd]) == r.going_out_books(rnd)


# --------------------------------------------------------------------------------------------
# random rule configurations on both cores


def _per_round(rounds: int, lo: int, hi: int):
    """A field that is one integer for every round or a list with one per round."""
    return st.one_of(st.integers(lo, hi), st.lists(st.integers(lo, hi), min_size=rounds, max_size=rounds))


def _any_value(spec):
    """Every value of a one-value field: its words, true and false, or integers within its bounds (point
    values within -2000 and 2000)."""
    if spec.kind is bool:
        return st.booleans()
    words = st.sampled_from([w for w, _ in spec.words]) if spec.words else None
    if spec.kind is str:
        return words
    numbers = st.integers(max(spec.limits[0], -2000), min(spec.limits[1], 2000))
    return st.one_of(numbers, words) if words is not None else numbers


@st.composite
def rule_configs(draw) -> RuleConfig:
    players = draw(st.integers(LIMITS["players"][0], LIMITS["players"][1]))
    teams = draw(st.sampled_from([t for t in range(2, players + 1) if players % t == 0]))
    hand, foot = draw(st.integers(1, 15)), draw(st.integers(1, 15))
    need = -(-(players * (hand + foot) + 3) // sum(PER_DECK))
    rounds = draw(st.integers(1, 5))
    points = st.integers(-2000, 2000)
    d = dict(players=players, teams=teams, decks=draw(st.integers(need, max(need, 8))), hand_size=hand,
             foot_size=foot, minimums=draw(st.lists(st.integers(0, 200), min_size=rounds, max_size=rounds)),
             wild_limit=draw(st.sampled_from(["double", "majority"])), wild_melds=draw(st.booleans()),
             clean_book=draw(points), dirty_book=draw(points), wild_book=draw(points),
             red_three_bonus=draw(points), red_three_left=draw(points), go_out_bonus=draw(points),
             go_out_clean=draw(_per_round(rounds, 0, 2)), go_out_dirty=draw(_per_round(rounds, 0, 2)),
             go_out_wild=draw(_per_round(rounds, 0, 1)), ask_partner=draw(st.booleans()),
             partner_in_foot=draw(st.booleans()),
             pile_take=draw(st.one_of(st.integers(1, 12), st.just("all"))),
             tie_break=draw(st.sampled_from(["draw", "extra_round"])))
    for name, spec in RULE_FIELDS.items():                # any other field, drawn from its Rule
        if name not in d:
            assert not spec.per_round, f"per-round rule field {name!r}: draw it above, one entry per round"
            d[name] = draw(_any_value(spec))
    assert set(d) == {f.name for f in fields(RuleConfig)}
    try:
        return load_rules(d)
    except RuleConfigError:
        assume(False)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rules=rule_configs(), seed=st.integers(0, 2 ** 31 - 1), data=st.data())
def test_random_rule_configs_play_the_same_on_both_cores(rules, seed, data):
    start = data.draw(st.integers(1, rules.rounds), label="start round")
    specs = data.draw(st.sampled_from([("random",), ("random", "greedy", "strategic")]), label="seats")
    compare_engine_game(rules, seed, random.Random(seed), specs, round=start, max_steps=300)
