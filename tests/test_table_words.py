"""The browser table and the replay viewer speak words and show what is so, in headless Chromium:

* the round-end sheet hides the next deal entirely and the header names the finished round;
* no action id reaches a person: the legal-action list, a reason that names an action, the replay
  viewer's move list; a greyed button says why (meld, discard, the pile);
* stacked 10s and queens read as 10 and Q on the table and in the viewer;
* a made-up table link is a styled page with the way back; after a server restart the tab's
  "does not answer" goes as soon as the server answers; a tab whose table is gone clears its board.

Screenshots go to ``test-artifacts/`` (or ``$HANDFOOT_TEST_ARTIFACTS``): table_*.png, viewer_words.png.
"""
from __future__ import annotations

import re
import signal

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tests.test_viewer import _artifacts  # noqa: E402
from tests.web_client import Client, ThreadServer, free_port, start_process  # noqa: E402

#: an action id as the server names it (draw, lay_red_three, meld:7:3:0:0, discard:K, ...)
ACTION_ID = re.compile(r"\b(?:meld|discard):[A-Z0-9]|\b(?:lay_red_three|ask_go_out|cancel_melds|answer_yes|"
                       r"answer_no|next_round)\b")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ThreadServer(tmp_path_factory.mktemp("words") / "tables.sqlite")
    yield s
    s.stop()


def _page(browser, url, errors):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return ctx, page


def _wait_seq(page, n=0):
    page.wait_for_function(f"document.body.dataset.seq >= {n}", timeout=20000)


def _person_reads(page) -> str:
    """Every text a person reads on the seat's page (hint, buttons, the opened legal list, the log)."""
    return "\n".join(page.locator(sel).all_inner_texts()[0] if page.locator(sel).count() else ""
                     for sel in ("#hint", "#actions", "#legal", "#log", "#status", "#where"))


def test_round_end_sheet_hides_the_next_deal_and_the_header_names_the_finished_round(server, browser):
    client = Client(server.port)
    out = client.create(rules="pagat", seats=["human", "greedy", "greedy", "greedy"], seed=3, pace_ms=0)
    table, token = out["table"], out["seats"][0]["token"]
    state = client.settled(table, token)
    for _ in range(3000):                         # the person draws and discards until the round ends
        if "next_round" in state["legal"]:
            break
        if state["to_act"]:
            names = state["legal"]
            pick = next((n for n in ("lay_red_three", "draw", "answer_yes") if n in names), None)
            pick = pick or next((n for n in names if n.startswith("discard:")), names[0])
            client.act(table, token, pick, state["seq"])
        state = client.settled(table, token)
    assert "next_round" in state["legal"], "no round end reached"
    errors = []
    ctx, page = _page(browser, out["seats"][0]["url"], errors)
    try:
        _wait_seq(page)
        page.wait_for_function("document.body.dataset.waiting === '1'")
        page.screenshot(path=str(_artifacts() / "table_round_end_sheet.png"))
        assert page.is_visible("#round-end")
        for hidden in ("#seats", "#piles", "#teams", "#mine"):
            assert page.is_hidden(hidden), hidden               # nothing of the next deal shows through
        bg = page.evaluate("getComputedStyle(document.getElementById('round-end')).backgroundColor")
        assert bg.startswith("rgb("), bg                        # opaque (rgba would be see-through)
        where = page.inner_text("#where")
        assert "round 1 of 4 is over" in where and "round 2" not in where, where
        assert "Round 1 is over" in page.inner_text("#re-title")
        assert page.inner_text("#act-next") == "Seen: deal round 2"
        assert errors == []
    finally:
        ctx.close()
        client.close()


def _turn_with(client, want, seeds=range(1, 120), draw=False):
    """A table whose person (seat 0) is to act in a state ``want(state)`` accepts (after drawing, with
    ``draw``): (out, state)."""
    for seed in seeds:
        out = client.create(rules="pagat", seats=["human", "greedy", "greedy", "greedy"], seed=seed, pace_ms=0)
        table, token = out["table"], out["seats"][0]["token"]
        state = client.settled(table, token)
        if draw and state["to_act"] and state["legal"] == ["draw"]:
            client.act(table, token, "draw", state["seq"])
            state = client.settled(table, token)
        if state["to_act"] and want(state):
            return out, state
    pytest.fail("no such deal")


def test_no_action_id_reaches_a_person_and_greyed_buttons_say_why(server, browser):
    client = Client(server.port)
    out, state = _turn_with(client, lambda s: s["legal"] == ["lay_red_three"] and s["phase"] == "meld", draw=True)
    errors = []
    ctx, page = _page(browser, out["seats"][0]["url"], errors)
    try:
        _wait_seq(page)
        page.click("#more summary")
        page.screenshot(path=str(_artifacts() / "table_words_red_three.png"))
        assert "lay_red_three" in (state["discard_reason"] or "")           # the server's reason names the id
        hint = page.inner_text("#hint")
        assert '("Lay a red three")' in hint and "lay_red_three" not in hint, hint
        assert page.locator("#legal button").all_inner_texts() == ["Lay a red three"]
        assert page.locator("#legal button").get_attribute("data-action") == "lay_red_three"
        assert not ACTION_ID.search(_person_reads(page)), _person_reads(page)
    finally:
        ctx.close()

    # the draw: the pile greyed with its reason when it cannot be taken
    out, state = _turn_with(client, lambda s: s["legal"] == ["draw"] and bool(s["discard"]))
    ctx, page = _page(browser, out["seats"][0]["url"], errors)
    try:
        _wait_seq(page)
        assert page.is_visible("#act-pickup") and page.is_disabled("#act-pickup")
        why = page.get_attribute("#act-pickup", "title")
        assert why.startswith("Not now: ") and "Pick up the pile: not now (" in page.inner_text("#hint")
        page.click("#act-draw")
        page.wait_for_function(f"document.body.dataset.seq > {state['seq']}")
        page.wait_for_function("document.body.dataset.toAct === '1'")
        names = page.evaluate("[...document.querySelectorAll('#legal button')].map(b => b.dataset.action)")
        page.click("#more summary")
        page.screenshot(path=str(_artifacts() / "table_words_meld_phase.png"))
        texts = page.locator("#legal button").all_inner_texts()
        assert len(texts) == len(names) and not ACTION_ID.search("\n".join(texts)), texts
        assert any(t.startswith("Discard ") for t in texts)
        if any(n.startswith("meld:") for n in names):
            assert page.is_disabled("#act-meld") and "choose the cards to meld" in page.inner_text("#why-meld")
        if not page.evaluate("!!document.querySelector('#act-discard').title.match(/provisional|red three/)"):
            assert page.is_disabled("#act-discard")
            assert page.inner_text("#why-discard") == "choose one card in your hand to discard"
            page.locator("#hand .card").first.click()
            assert page.inner_text("#act-discard").startswith("Discard ") and page.inner_text("#why-discard") == ""
        assert not ACTION_ID.search(_person_reads(page)), _person_reads(page)
        titles = page.evaluate("[...document.querySelectorAll('[title]')].map(e => e.title)")
        ids = page.evaluate("[...document.querySelectorAll('[data-action]')].map(e => e.dataset.action)")
        assert "draw" in ids and not set(titles) & set(ids), titles       # no id in a tooltip either
        assert not ACTION_ID.search("\n".join(titles)), titles
        assert errors == []
    finally:
        ctx.close()
        client.close()


def test_stacked_tens_and_queens_read_as_themselves(server, browser):
    errors = []
    ctx, page = _page(browser, f"http://127.0.0.1:{server.port}/", errors)
    try:
        page.set_content("<html><head><style>" + _css() + '</style></head><body><div id="x"></div></body></html>')
        page.evaluate("""(() => { let h = '';
          for (const c of ['10', 'Q']) { let f = '';
            for (let i = 0; i < 6; i++)
              f += `<div class="card n${c === '10' ? ' ten' : ''}"><span class="ix">${c}</span>` +
                   `<span class="pip">${c}</span></div>`;
            h += `<div class="meld clean" id="m${c}"><div class="fan mini">${f}</div></div>`; }
          document.getElementById('x').innerHTML = h; })()""")
        page.screenshot(path=str(_artifacts() / "table_stacked_tens_queens.png"))
        for c in ("10", "Q"):
            cards = page.locator(f"#m{c} .card")
            boxes = page.evaluate(f"""[...document.querySelectorAll('#m{c} .card')].map(e => [
              e.getBoundingClientRect().left, e.querySelector('.ix').getBoundingClientRect().right,
              getComputedStyle(e.querySelector('.pip')).visibility])""")
            for (left, right, vis), (nxt, _, _) in zip(boxes, boxes[1:]):
                assert right <= nxt + 0.5, (c, boxes)           # the index is whole in the strip that shows
                assert vis == "hidden", (c, boxes)              # no cut pip ("1" of a 10, "C" of a Q)
            assert boxes[-1][2] == "visible" and cards.count() == 6
    finally:
        ctx.close()


def _css() -> str:
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    return ((root / "experiments/apps/viewer.css").read_text() + (root / "experiments/apps/web/static/table.css")
            .read_text())


def test_a_made_up_table_link_is_a_page_with_the_way_back(server, browser):
    errors = []
    ctx, page = _page(browser, f"http://127.0.0.1:{server.port}/table/NOSUCHTABLE", errors)
    try:
        page.wait_for_function("document.body.dataset.fatal === '1'")
        page.screenshot(path=str(_artifacts() / "table_made_up_link.png"))
        assert page.is_visible("#stopped") and "No such table" in page.inner_text("#stopped h2")
        assert page.get_attribute("#home", "href") == "/" and page.is_visible("#bar")
        assert page.is_hidden("#teams") and page.is_hidden("#mine")
        page.click("#home")
        page.wait_for_url(f"http://127.0.0.1:{server.port}/")
        assert errors == []
    finally:
        ctx.close()


def test_after_a_restart_the_tab_recovers_and_a_gone_table_clears_its_board(browser, tmp_path):
    db, port = tmp_path / "tables.sqlite", free_port()
    proc = start_process(db, port)
    client = Client(port, timeout=10)
    errors = []
    ctx = None
    try:
        out = client.create(rules="pagat", seats=["human", "greedy", "greedy", "greedy"], seed=5, pace_ms=0)
        client.settled(out["table"], out["seats"][0]["token"])
        ctx, page = _page(browser, out["seats"][0]["url"], errors)
        _wait_seq(page)
        page.wait_for_function("document.getElementById('conn').textContent === 'live'")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        page.wait_for_function("document.getElementById('error').textContent.includes('does not answer')",
                               timeout=30000)
        proc = start_process(db, port)                        # the same tables come back
        page.wait_for_function("document.getElementById('error').textContent === '' && "
                               "document.getElementById('conn').textContent === 'live'", timeout=30000)
        page.screenshot(path=str(_artifacts() / "table_after_restart.png"))
        assert page.is_visible("#teams") and page.locator("#hand .card").count() > 0

        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc = start_process(tmp_path / "other.sqlite", port)   # a server without that table
        page.wait_for_function("document.body.dataset.fatal === '1'", timeout=30000)
        page.screenshot(path=str(_artifacts() / "table_gone.png"))
        assert page.is_hidden("#teams") and page.is_hidden("#seats") and page.is_hidden("#mine")
        assert page.is_visible("#stopped") and page.inner_text("#log") == ""
        assert errors == []
    finally:
        if ctx is not None:
            ctx.close()
        client.close()
        proc.kill()
        proc.wait(timeout=10)


def test_the_replay_viewer_lists_moves_in_words(tmp_path, browser):
    from experiments.apps.demo import run_demo
    from experiments.apps.table import make_console
    import io
    page_path = tmp_path / "game.html"
    run_demo(["greedy", "random"], "pagat", 2, make_console(io.StringIO(), 120), html=str(page_path))
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(page_path.as_uri())
        page.wait_for_selector("#timeline li")
        for _ in range(30):
            page.keyboard.press("ArrowRight")
        page.screenshot(path=str(_artifacts() / "viewer_words.png"))
        moves = page.locator("#timeline li").all_inner_texts()
        assert len(moves) > 30 and not ACTION_ID.search("\n".join(moves)), moves[:20]
        assert any("draw two cards" in m for m in moves)
        assert page.locator("#now .name").count() == 0 and not ACTION_ID.search(page.inner_text("#now"))
        # overlapped cards (melds, hands, feet) show their index whole and no cut pip
        cut = page.evaluate("""[...document.querySelectorAll(
              '.fan .card:not(:last-child), #table .hand .card:not(:last-child)')]
          .filter(c => { const n = c.nextElementSibling, r = c.getBoundingClientRect();
            if (c.classList.contains('back') || !n) return false;
            if (Math.abs(r.top - n.getBoundingClientRect().top) >= 1) return false;
            return getComputedStyle(c.querySelector('.pip')).visibility !== 'hidden' ||
                   c.querySelector('.ix').getBoundingClientRect().right > n.getBoundingClientRect().left + 0.5; })
          .map(c => c.dataset.kind)""")
        assert page.locator(".fan .card.ten, #table .hand .card.ten").count() > 0
        assert cut == [] and errors == [], cut
    finally:
        ctx.close()
