"""Nothing hidden leaks: whole games through the JSON API, every seat, every preset.

People (scripted, choosing at random among the legal actions) sit at one or two
seats of each table and cheap agents at the others; every seat number of every
preset is a person's seat in some game, and partners ask and answer each other.
Every message a person or the spectator receives is checked against the game
re-simulated from the finished game's record:

* it is exactly the projection of that seat's SeatView at that moment;
* it names no card the seat cannot see: counting every card code anywhere in the
  message, no kind appears more often than in the seat's own hand, its pending
  pile cards and the discard pile together (other hands, feet and the stock would
  add cards);
* its hand is the seat's true hand, and no seat token appears in it.
"""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from experiments.apps.web.messages import FACTS, seat_message  # noqa: E402
from experiments.apps.web.rooms import ROOM_FACTS  # noqa: E402
from handfoot_env.actions import ACTION_INDEX  # noqa: E402
from handfoot_env.cards import CODES, codes_of  # noqa: E402
from handfoot_env.config import PRESETS, load_rules  # noqa: E402
from handfoot_env.record import new_game  # noqa: E402
from handfoot_env.view import seat_view  # noqa: E402
from tests.web_client import Client, ThreadServer  # noqa: E402

GAMES_PER_PRESET = 13          # 52 whole games in all
CODE_SET = set(CODES)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ThreadServer(tmp_path_factory.mktemp("leak") / "tables.sqlite")
    yield s
    s.stop()


def card_codes(obj, out: Counter) -> Counter:
    if isinstance(obj, str):
        if obj in CODE_SET:
            out[obj] += 1
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k != "slot":                     # a meld's rank (its cards are public counts)
                card_codes(v, out)
    elif isinstance(obj, list):
        for v in obj:
            card_codes(v, out)
    return out


def human_seats(n: int, team_of, game: int):
    first = game % n
    seats = {first}
    if game % 3 == 0:                           # partners at one table: ask and answer go through the API
        seats |= {p for p in range(n) if team_of[p] == team_of[first]}
    return sorted(seats)


def play(client: Client, rules: str, game: int):
    cfg = load_rules(rules)
    team_of = [p % cfg.teams for p in range(cfg.players)]
    humans = human_seats(cfg.players, team_of, game)
    seats = ["human" if p in humans else ("random" if (p + game) % 2 else "greedy") for p in range(cfg.players)]
    created = client.create(rules=rules, seats=seats, seed=1000 + game, pace_ms=0)
    table = created["table"]
    tokens = {e["seat"]: e["token"] for e in created["seats"] if "token" in e}
    assert sorted(tokens) == humans and all("token" not in e for e in created["seats"] if e["seat"] not in humans)
    rng = random.Random(game)
    received = []                               # (seat or None, message)
    state = client.settled(table, tokens[humans[0]])
    received.append((humans[0], state))
    while not state["game_over"]:
        if not state["waiting"] and state["players"][state["current"]] != "human":     # agents still moving
            state = client.settled(table, tokens[humans[0]])
            received.append((humans[0], state))
            continue
        if state["waiting"]:                    # a round's sheet: every person confirms it, then play goes on
            for seat in state["waiting"]:
                seen = client.state(table, tokens[seat])
                received.append((seat, seen))
                assert seen["legal"] == ["next_round"] and seen["round_end"]["round"] == len(seen["round_scores"])
                status, state = client.act(table, tokens[seat], "next_round", seen["seq"])
                assert status == 200, state
            state = client.settled(table, tokens[humans[0]])
            continue
        seat = state["current"]
        if state["seat"] != seat:
            state = client.state(table, tokens[seat])
            received.append((seat, state))
        assert state["to_act"] and state["legal"]
        legal = state["legal"]
        choice = "answer_yes" if "answer_yes" in legal and rng.random() < 0.7 else rng.choice(legal)
        status, state = client.act(table, tokens[seat], choice, state["seq"])
        assert status == 200, state
        received.append((seat, state))
        if rng.random() < 0.05:
            received.append((None, client.state(table)))
    status, record = client.call("GET", f"/api/tables/{table}/record")
    assert status == 200 and record["game_over"]
    return table, tokens, received, record


def check(table, tokens, received, record, rules):
    g = new_game(record)
    actions = record["actions"]
    applied = 0
    secret_texts = list(tokens.values())
    asked = answered = 0
    for seat, msg in sorted(received, key=lambda x: x[1]["seq"]):
        while applied < msg["seq"]:
            player, name = actions[applied]
            asked += name == "ask_go_out" and seat is not None
            g.step(ACTION_INDEX[name])
            applied += 1
        view = seat_view(g, 0 if seat is None else seat)
        facts = dict(msg, texts=[e.get("text") for e in msg["log"]])     # the table's own facts, as sent
        room_facts = {k: msg[k] for k in ROOM_FACTS}                      # the stand-in's, public to all
        assert room_facts == {"stand_in": "strategic", "left": [], "away": [], "notice": None, "turn_timeout": 120.0,
                              "act_by": room_facts["act_by"]}
        assert room_facts["act_by"] is None or isinstance(room_facts["act_by"], float)
        bare = {k: v for k, v in msg.items() if k not in ROOM_FACTS}
        assert bare == seat_message(view, table, rules, record["players"], applied, spectator=seat is None,
                                    facts={k: facts[k] for k in FACTS})
        seen = Counter(codes_of(g.hands[seat]) + codes_of(view.pending)) if seat is not None else Counter()
        seen.update(CODES[k] for k in g.discard)
        shown = card_codes(msg, Counter())
        assert not shown - seen, f"seat {seat} was sent cards it cannot see: {dict(shown - seen)}"
        if seat is not None:
            assert sorted(msg["hand"]) == sorted(codes_of(g.hands[seat]))
        else:
            assert msg["hand"] == [] and msg["legal"] == [] and msg["seat"] is None
        text = json.dumps(msg)
        assert not any(t in text for t in secret_texts)
    answered = sum(1 for _, n in actions if n in ("answer_yes", "answer_no"))
    return asked, answered


@pytest.mark.parametrize("rules", list(PRESETS))
def test_no_message_shows_a_hidden_card(server, rules):
    client = Client(server.port)
    seats_played, messages, answers = set(), 0, 0
    for game in range(GAMES_PER_PRESET):
        table, tokens, received, record = play(client, rules, game)
        _, answered = check(table, tokens, received, record, rules)
        seats_played |= set(tokens)
        messages += len(received)
        answers += answered
    client.close()
    assert seats_played == set(range(load_rules(rules).players))
    assert messages > 100 * GAMES_PER_PRESET


def test_the_check_catches_a_leak(server):
    """The card count above fails for a message that carries the partner's hand."""
    client = Client(server.port)
    table, tokens, received, record = play(client, "pagat", 1)
    seat, msg = next((s, m) for s, m in received if s is not None and m["seq"] > 20)
    g = new_game(record)
    for player, name in record["actions"][:msg["seq"]]:
        g.step(ACTION_INDEX[name])
    leaked = dict(msg, partner=codes_of(g.hands[(seat + 2) % 4]))
    with pytest.raises(AssertionError):
        check(table, tokens, [(seat, leaked)], record, "pagat")
    client.close()
