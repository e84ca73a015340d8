"""The browser table in real headless Chromium (Debian's ``chromium``, driven by Playwright; never a
downloaded browser).

* a person's seat plays a whole game by clicking (cards chosen in the hand for
  melds and discards) against three agents;
* two browser contexts are partners: one asks to go out, the other sees the
  question arrive and answers it;
* a reload in mid-game brings the seat back as it was, and play goes on.

Screenshots go to ``test-artifacts/`` (or ``$HANDFOOT_TEST_ARTIFACTS``).
"""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.test_viewer import CHROMIUM_FLAGS, _artifacts, _browser  # noqa: E402
from tests.web_client import Client, ThreadServer  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ThreadServer(tmp_path_factory.mktemp("browser") / "tables.sqlite")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser():
    pw_api, exe = _browser()
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        yield b
        b.close()


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


def play_turn(page, screenshot=None) -> bool:
    """One decision by clicking: answer, draw, red three, the largest meld (chosen card by card), discard.

    ``screenshot``: a path to save the page at, with the meld's cards chosen (returns whether it did)."""
    names = legal(page)
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
                                                                               "champion"], 21, 0)
    try:
        assert len(page.locator("#hand .card").all()) == len(client.state(table, token)["hand"])
        decisions, shot = 0, False
        while page.evaluate("document.body.dataset.over") != "1":
            page.wait_for_function("document.body.dataset.toAct === '1' || document.body.dataset.over === '1'")
            if page.evaluate("document.body.dataset.over") == "1":
                break
            shot |= bool(play_turn(page, None if shot or decisions < 40 else _artifacts() / "serve_table.png"))
            decisions += 1
            assert decisions < 2000
        state = client.state(table, token)
        assert state["game_over"] and seq(page) == state["seq"]
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
    if "answer_yes" in names:
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
    client = Client(server.port)
    out = client.create(rules="pagat", seats=["human", "greedy", "human", "greedy"], seed=4, pace_ms=0)
    table = out["table"]
    tokens = {e["seat"]: e["token"] for e in out["seats"] if "token" in e}
    errors = []
    ctx_a, page_a = open_seat(browser, out["seats"][0]["url"], errors)
    ctx_b, page_b = open_seat(browser, out["seats"][2]["url"], errors)
    try:
        asker = None
        for _ in range(3000):                              # play by the API until a partner may ask
            state = client.state(table, tokens[0])
            seat = state["current"]
            state = client.state(table, tokens[seat])
            if "ask_go_out" in state["legal"]:
                asker = seat
                break
            api_turn(client, table, tokens[seat], state)
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
        assert "answer_no" in asking.inner_text("#log") and asking.evaluate("document.body.dataset.toAct") == "1"
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


def test_the_start_page_creates_a_table(server, browser):
    errors = []
    ctx = browser.new_context(bypass_csp=True)
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"http://127.0.0.1:{server.port}/")
        page.wait_for_selector("#seat-3")
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
