"""The browser table in real headless Chromium (Debian's ``chromium``, driven by Playwright; never a
downloaded browser).

* a person's seat plays a whole game by clicking (cards chosen in the hand for
  melds and discards) against three agents;
* two browser contexts are partners: one asks to go out, the other sees the
  question arrive and answers it;
* a reload in mid-game brings the seat back as it was, and play goes on;
* at every round's end the page shows who went out, each line of the score
  sheet, the totals and the last board, and the next deal waits for the person;
* an unopened seat sees how far it is from the minimum and why it may not
  discard; a mistyped seat link says so and stops.

Screenshots go to ``test-artifacts/`` (or ``$HANDFOOT_TEST_ARTIFACTS``).
"""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.test_viewer import _artifacts  # noqa: E402
from tests.web_client import Client, ThreadServer  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ThreadServer(tmp_path_factory.mktemp("browser") / "tables.sqlite")
    yield s
    s.stop()


def open_seat(browser, url, errors):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)   # lets the test poll
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("document.body.dataset.seq >= 0")
    return ctx, page


def seq(page) -> int:
    return int(page.evaluate("document.body.dataset.seq"))


def legal(page):
    return page.evaluate("[...document.querySelectorAll('#legal button')].map(b => b.dataset.action)")


def click_and_wait(page, selector):
    before = seq(page)
    page.click(selector)
    page.wait_for_function(f"document.body.dataset.seq > {before}", timeout=20000)


def click_and_wait_sheet(page) -> bool:
    """Confirm the round's sheet; the page leaves it once the next deal may start."""
    page.click("#act-next")
    page.wait_for_function("document.body.dataset.waiting === '0' || document.body.dataset.over === '1'",
                           timeout=20000)
    return False


def pick_cards(page, codes):
    """Click cards of these codes in the hand (each card once)."""
    used = set()
    for code in codes:
        cards = page.locator(f"#hand .card[data-code='{code}']")
        for i in range(cards.count()):
            idx = cards.nth(i).get_attribute("data-i")
            if idx not in used:
                used.add(idx)
                cards.nth(i).click()
                break


def round_end_shown(page, client, table, token) -> dict:
    """The finished round's sheet on the page, checked line by line against the server's; the table waits."""
    state = client.state(table, token)
    end = state["round_end"]
    page.wait_for_selector("#round-end", state="visible")
    text = page.inner_text("#round-end")
    assert f"Round {end['round']} is over" in text and end["reason"] in text
    if end["went_out"] is None:
        assert "the stock ran out" in end["reason"]
    else:
        assert end["reason"].startswith(f"player_{end['went_out']} (") and end["reason"].endswith("went out")
    for key, label in end["items"]:
        row = page.locator(f"#re-sheet tr.item-{key} td").all_inner_texts()
        assert row == [label] + [str(t[key]) for t in end["teams"]], (key, row)
    assert page.locator("#re-sheet tr.game td").all_inner_texts() == ["game total"] + [str(x) for x in end["scores"]]
    assert [sum(t[k] for k, _ in end["items"] if k != "total") for t in end["teams"]] == end["round_scores"]
    groups = sum(len(b) + len(m) for b, m in zip(end["books"], end["melds"])) + sum(1 for r in end["red_threes"] if r)
    assert page.locator("#round-end .meld").count() == groups
    return state


def play_turn(page, screenshot=None) -> bool:
    """One decision by clicking: answer, draw, red three, the largest meld (chosen card by card), discard.

    ``screenshot``: a path to save the page at, with the meld's cards chosen (returns whether it did)."""
    names = legal(page)
    if "next_round" in names:
        return click_and_wait_sheet(page)
    if "answer_yes" in names:
        return click_and_wait(page, "#act-yes")
    for name, button in (("draw", "#act-draw"), ("lay_red_three", "#act-red3")):
        if name in names:
            return click_and_wait(page, button)
    melds = [n for n in names if n.startswith("meld:")]
    if melds:
        name = max(melds, key=lambda n: sum(int(x) for x in n.split(":")[2:]))
        _, rank, n, t, j = name.split(":")
        pick_cards(page, [rank] * int(n) + ["2"] * int(t) + ["JK"] * int(j))
        assert page.locator(f"#melds button[data-action='{name}']").count() == 1
        if screenshot and int(n) >= 2:
            page.screenshot(path=str(screenshot))
        click_and_wait(page, f"#melds button[data-action='{name}']")
        return bool(screenshot and int(n) >= 2)
    discards = [n for n in names if n.startswith("discard:")]
    if discards:
        pick_cards(page, [discards[0].split(":")[1]])
        return click_and_wait(page, "#act-discard")
    page.click("#more summary")
    click_and_wait(page, f"#legal button[data-action='{names[0]}']")


def _one_seat(server, browser, rules, seats, seed, seat):
    """A new table with one person in ``seat``, that seat's page open: (client, table, token, context,
    page, the page's errors)."""
    client = Client(server.port)
    out = client.create(rules=rules, seats=seats, seed=seed, pace_ms=0)
    errors = []
    ctx, page = open_seat(browser, out["seats"][seat]["url"], errors)
    return client, out["table"], out["seats"][seat]["token"], ctx, page, errors


def test_a_person_plays_a_whole_game_by_clicking(server, browser):
    client, table, token, ctx, page, errors = _one_seat(server, browser, "pagat", ["human", "strategic", "greedy",
                                                                               "champion_v1"], 21, 0)
    try:
        assert len(page.locator("#hand .card").all()) == len(client.state(table, token)["hand"])
        decisions, shot, sheets = 0, False, []
        while page.evaluate("document.body.dataset.over") != "1":
            page.wait_for_function("document.body.dataset.toAct === '1' || document.body.dataset.over === '1'")
            if page.evaluate("document.body.dataset.over") == "1":
                break
            if "next_round" in legal(page):
                at_end = round_end_shown(page, client, table, token)
                assert at_end["waiting"] == [0] and at_end["seq"] == seq(page)
                if not sheets:
                    page.screenshot(path=str(_artifacts() / "serve_round_end.png"))
                sheets.append(at_end["round_end"]["round"])
                assert client.state(table, token)["seq"] == at_end["seq"]       # the agents wait for the person
            shot |= bool(play_turn(page, None if shot or decisions < 40 else _artifacts() / "serve_table.png"))
            decisions += 1
            assert decisions < 2000
        state = client.state(table, token)
        assert state["game_over"] and seq(page) == state["seq"]
        assert sheets == list(range(1, len(state["round_scores"])))               # every round but the last
        final = round_end_shown(page, client, table, token)                         # the last one, at the end
        assert final["round_end"]["game_over"] and "the game is over" in page.inner_text("#re-title")
        page.click("#re-close")
        assert page.is_hidden("#round-end")
        assert "wins" in page.inner_text("#over") or "draw" in page.inner_text("#over")
        for t, score in enumerate(state["scores"]):
            assert page.inner_text(f"#team-{t} .score").strip() == str(score)
        status, record = client.call("GET", f"/api/tables/{table}/record")
        assert status == 200 and record["players"][0] == "human"
        page.click("#replay")
        page.wait_for_selector("#step")                   # the replay viewer opens on the finished game
        assert decisions > 50 and shot and errors == []
    finally:
        ctx.close()
        client.close()


def api_turn(client, table, token, state):
    names = state["legal"]
    melds = [n for n in names if n.startswith("meld:")]
    if "next_round" in names:
        name = "next_round"
    elif "answer_yes" in names:
        name = "answer_yes"
    elif "draw" in names:
        name = "draw"
    elif melds:
        name = max(melds, key=lambda n: sum(int(x) for x in n.split(":")[2:]))
    else:
        name = next((n for n in names if n not in ("cancel_melds", "ask_go_out")), names[0])
    status, after = client.act(table, token, name, state["seq"])
    assert status == 200, after


def test_partners_in_two_browsers_ask_and_answer(server, browser):
    from agents.base import agent_action
    from agents.registry import make_agent
    from handfoot_env.actions import ACTION_NAMES
    client = Client(server.port)
    out = client.create(rules="pagat", seats=["human", "greedy", "human", "greedy"], seed=1, pace_ms=0)
    table = out["table"]
    tokens = {e["seat"]: e["token"] for e in out["seats"] if "token" in e}
    game = server.web.tables.rooms[table].game
    players = {p: make_agent("strategic", p) for p in tokens}   # the persons' choices, made through the API
    for p, agent in players.items():
        agent.reset(p, game.rules, p)
    errors = []
    ctx_a, page_a = open_seat(browser, out["seats"][0]["url"], errors)
    ctx_b, page_b = open_seat(browser, out["seats"][2]["url"], errors)
    try:
        asker, refused = None, 0
        for _ in range(3000):                   # play until a partner may ask, with the team's books
            state = client.state(table, tokens[0])
            seat = state["waiting"][0] if state["waiting"] else state["current"]
            state = client.state(table, tokens[seat])
            if "ask_go_out" in state["legal"]:
                page = page_a if seat == 0 else page_b
                page.wait_for_function(f"document.body.dataset.seq >= {state['seq']}")
                if state["books_met"][state["team"]]:
                    asker = seat
                    break
                assert page.is_hidden("#act-ask") and "Going out needs" in page.inner_text("#hint")
                refused += 1
            name = "next_round" if state["waiting"] else ACTION_NAMES[agent_action(players[seat], game, seat)]
            status, _ = client.act(table, tokens[seat], name, state["seq"])
            assert status == 200
        assert asker is not None, "no position to ask in this game"
        asking, answering = (page_a, page_b) if asker == 0 else (page_b, page_a)
        at = client.state(table)["seq"]
        asking.wait_for_function(f"document.body.dataset.seq >= {at} && document.body.dataset.toAct === '1'")
        answering.wait_for_function(f"document.body.dataset.seq >= {at}")
        assert answering.is_hidden("#ask")
        click_and_wait(asking, "#act-ask")
        answering.wait_for_selector("#ask", state="visible")      # pushed by the websocket, no reload
        assert f"player_{asker}" in answering.inner_text("#ask")
        assert answering.is_enabled("#act-yes") and answering.is_enabled("#act-no")
        assert asking.is_disabled("#act-draw") and asking.inner_text("#status").endswith("answers")
        click_and_wait(answering, "#act-no")
        asking.wait_for_function(f"document.body.dataset.seq >= {seq(answering)}")
        assert f"no, player_{asker} may not go out yet" in asking.inner_text("#log")      # the log speaks words
        assert asking.evaluate("document.body.dataset.toAct") == "1"
        assert errors == []
    finally:
        ctx_a.close()
        ctx_b.close()
        client.close()


def test_a_reload_resumes_the_seat(server, browser):
    client, table, token, ctx, page, errors = _one_seat(server, browser, "bicycle", ["strategic", "human", "greedy",
                                                                                 "random"], 9, 1)
    try:
        for _ in range(12):
            page.wait_for_function("document.body.dataset.toAct === '1'")
            play_turn(page)
        before = client.state(table, token)
        hand = page.evaluate("[...document.querySelectorAll('#hand .card')].map(c => c.dataset.code)")
        page.reload()
        page.wait_for_function(f"document.body.dataset.seq == {before['seq']}")
        again = page.evaluate("[...document.querySelectorAll('#hand .card')].map(c => c.dataset.code)")
        assert again == hand == before["hand"]
        assert page.inner_text("#where").endswith("you are player_1, team 1")
        page.wait_for_function("document.body.dataset.toAct === '1'")
        play_turn(page)                                   # the seat plays on after the reload
        assert client.state(table, token)["seq"] > before["seq"] and errors == []
    finally:
        ctx.close()
        client.close()


def test_an_unopened_seat_sees_its_progress_and_why_it_may_not_discard(server, browser):
    from handfoot_env.cards import CODES, VALUES
    client = Client(server.port)
    for seed in range(1, 40):                   # a deal where a small first meld stays under the minimum
        out = client.create(rules="pagat", seats=["human"] + ["greedy"] * 3, seed=seed, pace_ms=0)
        table, token = out["table"], out["seats"][0]["token"]
        state = client.state(table, token)
        if state["legal"] != ["draw"]:
            continue
        _, state = client.act(table, token, "draw", state["seq"])
        melds = [n for n in state["legal"] if n.startswith("meld:") and n.split(":")[1] != "W"]
        if not melds:
            continue
        name = min(melds, key=lambda n: sum(int(x) for x in n.split(":")[2:]) * VALUES[CODES.index(n.split(":")[1])])
        _, state = client.act(table, token, name, state["seq"])
        if not state["opened"][0] and state["discard_reason"]:
            break
    else:
        pytest.fail("no deal with a first meld under the minimum")
    errors = []
    ctx, page = open_seat(browser, out["seats"][0]["url"], errors)
    try:
        melded, need = state["prov_value"], state["minimum"]
        hint = page.inner_text("#hint")
        assert f"your team has melded {melded} of the {need} needed, {need - melded} to go" in hint
        assert "Discard is not available: provisional melds must reach the minimum of 50" in hint
        assert page.is_visible("#act-discard") and page.is_disabled("#act-discard")
        assert f"not opened: {melded} of {need} melded" in page.inner_text("#team-0")
        assert "books 0/0/0 of 2/2/1 to go out" in page.inner_text("#team-0")
        assert "clean" in page.inner_text("#teams .legend")
        assert " 1 cards" not in page.inner_text("#seats")
        log = page.inner_text("#log")
        assert "player_0: draw two cards from the stock" in log and "meld:" not in log
        # a 10 in a meld's fan shows both digits in the part of the card that is not covered
        page.evaluate("""document.getElementById('teams').insertAdjacentHTML('beforeend',
          '<div class="meld clean" id="tens"><div class="fan mini">' +
          '<div class="card n ten"><span class="ix">10</span></div>'.repeat(3) + '</div></div>')""")
        boxes = page.evaluate("[...document.querySelectorAll('#tens .card')].map(c => [c.getBoundingClientRect().left,"
                              " c.querySelector('.ix').getBoundingClientRect().right])")
        assert all(right <= nxt_left + 0.5 for (_, right), (nxt_left, _) in zip(boxes, boxes[1:])), boxes
        assert page.locator("#hand .card.ten").count() == state["hand"].count("10")
        assert errors == []
    finally:
        ctx.close()
    ctx = browser.new_context(bypass_csp=True)
    wrong = ctx.new_page()
    try:
        wrong.goto(out["seats"][0]["url"].split("#")[0] + "#not-the-token")
        wrong.wait_for_function("document.body.dataset.fatal === '1'")
        assert "not a seat at this table" in wrong.inner_text("#status") and wrong.is_hidden("#mine")
        assert wrong.inner_text("#conn") == ""
    finally:
        ctx.close()
        client.close()


def test_the_start_page_creates_a_table(server, browser):
    errors = []
    ctx = browser.new_context(bypass_csp=True)
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"http://127.0.0.1:{server.port}/")
        page.wait_for_selector("#seat-3")
        assert "partner of player_2" in page.inner_text("label:has(#seat-0)")
        page.select_option("#rules", "six_player")
        page.wait_for_selector("#seat-5")
        assert "champion" not in page.locator("#seat-1 option").all_inner_texts()
        page.select_option("#rules", "pagat")
        page.wait_for_selector("#seat-3")
        assert "champion" in page.locator("#seat-1 option").all_inner_texts()
        page.select_option("#seat-2", "human")
        page.fill("#pace", "0")
        page.click("#create")
        page.wait_for_selector("#link-spectator")
        assert page.locator("#link-0").count() == 1 and page.locator("#link-2").count() == 1
        assert page.locator("#link-1").count() == 0
        page.goto(page.get_attribute("#link-spectator", "href"))
        page.wait_for_function("document.body.dataset.seq >= 0")
        assert page.is_hidden("#mine") and "spectator" in page.inner_text("#where")
        assert errors == []
    finally:
        ctx.close()


def test_the_start_page_says_why_a_chosen_seed_is_refused(tmp_path, browser):
    strict = ThreadServer(tmp_path / "t.sqlite", allow_chosen_seeds=False)
    ctx = browser.new_context(bypass_csp=True)
    page = ctx.new_page()
    try:
        page.goto(f"http://127.0.0.1:{strict.port}/")
        page.wait_for_selector("#seat-3")
        assert "refused when more than one person" in page.inner_text("#seed-note")
        page.select_option("#seat-2", "human")
        page.fill("#seed", "9223372036854775807")
        page.click("#create")
        page.wait_for_function("document.getElementById('error').textContent !== ''")
        assert "a chosen seed is refused" in page.inner_text("#error")
        page.select_option("#seat-2", "greedy")                 # one person: the seed is taken and shown
        page.click("#create")
        page.wait_for_selector("#chosen-seed")
        assert "9223372036854775807" in page.inner_text("#chosen-seed")
        page.goto(page.get_attribute("#link-0", "href"))
        page.wait_for_function("document.body.dataset.seq >= 0")
        assert "seed 9223372036854775807 (chosen by the table's creator)" in page.inner_text("#where")
    finally:
        ctx.close()
        strict.stop()


def test_a_person_sees_when_the_stand_in_would_move_and_can_leave(server, browser):
    client = Client(server.port)
    out = client.create(rules="pagat", seats=["human", "greedy", "greedy", "greedy"], seed=7, pace_ms=0)
    table, url = out["table"], out["seats"][0]["url"]
    errors = []
    ctx, page = open_seat(browser, url, errors)
    try:
        page.wait_for_selector("#leave:not([hidden])")
        assert "the stand-in (strategic) moves for you" in page.inner_text("#trouble")   # player_0 is to act
        page.once("dialog", lambda d: d.accept())
        page.click("#leave")
        page.wait_for_function("document.getElementById('trouble').textContent.includes('left the table')")
        assert page.locator("#leave").is_hidden() and client.state(table)["left"] == [0]
        page.wait_for_function("[...document.querySelectorAll('#log li')].some(li => li.textContent.includes("
                               "'(stand-in)'))", timeout=20000)                      # its seat plays on
        assert errors == []
    finally:
        ctx.close()
        client.close()


def test_a_person_away_after_the_turn_timeout_says_they_are_back(tmp_path, browser):
    quick = ThreadServer(tmp_path / "t.sqlite", app_options={"turn_timeout": 1.0})
    client = Client(quick.port)
    out = client.create(rules="pagat", seats=["human", "greedy", "greedy", "greedy"], seed=7, pace_ms=300)
    errors = []
    ctx, page = open_seat(browser, out["seats"][0]["url"], errors)
    try:
        page.wait_for_selector("#back:not([hidden])", timeout=20000)      # the stand-in plays for player_0
        assert "plays for them until they are back" in page.inner_text("#trouble")
        page.click("#back")
        page.wait_for_function("document.getElementById('trouble').textContent.includes('player_0 is back')")
        assert page.locator("#back").is_hidden() and client.state(out["table"])["away"] == []
        assert errors == []
    finally:
        ctx.close()
        client.close()
        quick.stop()
