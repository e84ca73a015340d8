"""The table's public facts: action labels in words, the round's requirements read through one accessor."""
from __future__ import annotations

import dataclasses
import random
from types import SimpleNamespace

from experiments.apps.web.messages import seat_message
from experiments.apps.web.public import action_text, books_met
from handfoot_env.actions import DRAW, PICKUP
from handfoot_env.cards import CODES
from handfoot_env.config import load_rules
from handfoot_env.engine import Game
from handfoot_env.view import seat_view


def test_a_pickup_names_the_cards_it_takes():
    rng = random.Random(3)
    seen = 0
    for seed in range(6):
        g = Game("pagat")
        g.reset(seed=seed)
        while not g.game_over and seen < 5:
            legal = g.legal_actions()
            if PICKUP in legal:
                take = int(g.rules.pile_take)
                pile = list(g.discard)
                text = action_text(g, PICKUP)
                top = CODES[pile[-1]]
                rest = " ".join(CODES[k] for k in sorted(pile[-take:][:-1]))
                assert text.startswith(f"picks up the pile: melds {top} {top} {top}")
                assert (f"and takes {rest}" in text) if rest else "(no other card)" in text
                g.step(PICKUP)
                seen += 1
                continue
            g.step(rng.choice(legal))
        if seen >= 5:
            break
    assert seen >= 5
    g = Game("pagat")
    g.reset(seed=1)
    assert action_text(g, DRAW) == "draw two cards from the stock"


def test_the_round_requirements_come_through_one_accessor():
    rules = load_rules("pagat")
    assert books_met((3, 2, 0), (3, 2, 0)) and not books_met((3, 1, 5), (3, 2, 0))
    # the message a seat is sent reads the requirement of its round through the same accessor
    g = Game("pagat")
    g.reset(seed=2)
    view = seat_view(g, 0)
    fields = {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)}
    changing = SimpleNamespace(**fields, rounds=rules.rounds, going_out_books=lambda r: (0, 0, r),
                               round_minimum=lambda r: 5 * r)
    msg = seat_message(dataclasses.replace(view, rules=changing), "t", "pagat", ["human"] * 4, 0)
    assert msg["going_out"] == [0, 0, 1] and msg["minimum"] == 5
    assert msg["books_met"] == [False, False]
    plain = seat_message(view, "t", "pagat", ["human"] * 4, 0)
    assert plain["going_out"] == [2, 2, 1] and plain["minimum"] == g.minimum
