"""The HTML replay viewer (``--html``) and ``render_mode="rgb_array"``.

The browser test opens the generated page in headless Chromium (Debian's
``chromium`` package, driven with Playwright; never a downloaded browser),
steps through a game with the keyboard and checks what the page shows against
the record.  It saves a screenshot under ``test-artifacts/`` (or
``$HANDFOOT_TEST_ARTIFACTS``).
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from agents.registry import make_agent
from experiments.apps.viewer import PER_INDEX, build_html, script_json, viewer_data
from experiments.apps.demo import demo_main
from experiments.apps.replay import replay_main
from handfoot_env import handfoot_v0
from handfoot_env.engine import Game
from handfoot_env.record import make_record, positions, save_record
from handfoot_env.render_image import table_snapshot
from handfoot_env.view import seat_view

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("HANDFOOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# a seat label that would end the data block if it were not escaped
LABELS = ["greedy</script><script>window.hacked=1</script>", "random", "greedy", "random & co"]


def _play(seed: int = 21) -> Game:
    g = Game("pagat")
    g.reset(seed=seed)
    agents = [make_agent(s, p) for p, s in enumerate(("greedy", "random", "greedy", "random"))]
    for p, a in enumerate(agents):
        a.reset(p, g.rules, p)
    while not g.game_over:
        g.step(agents[g.current].act(None, seat_view(g, g.current)))
    return g


@pytest.fixture(scope="module")
def record():
    return make_record(_play(), players=LABELS)


def expected_frames(rec):
    """What the page should show at each frame, from the record's positions:
    ``(actions so far, board, seat to act or -1, scores)``; a round end is its final board, then the next deal."""
    out = []
    for pos in positions(rec):
        g = pos.game
        if pos.round_end is not None:
            out.append((pos.index, pos.round_end, -1, list(g.scores)))
            if g.game_over:
                continue
        out.append((pos.index, g, -1 if g.game_over else g.current, list(g.scores)))
    return out


def decode_states(states):
    """The page's reconstruction of the delta-coded snapshots (viewer.js does the same)."""
    out, prev = [], None
    for d in states:
        if prev is None:
            cur = d
        else:
            cur = dict(prev)
            for k, v in d.items():
                if k in PER_INDEX and isinstance(v, dict):
                    lst = list(prev[k])
                    for i, x in v.items():
                        lst[int(i)] = x
                    cur[k] = lst
                else:
                    cur[k] = v
        out.append(cur)
        prev = cur
    return out


def page_data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="game-data">(.*?)</script>', text, re.S)
    assert m, "no data block"
    return json.loads(m.group(1))


# =========================================================================== page data
def test_frames_match_the_record(record):
    data = viewer_data(record)
    exp = expected_frames(record)
    assert len(data["frames"]) == len(exp)
    states = decode_states(data["states"])
    for i, (meta, snap, (k, board, seat, scores)) in enumerate(zip(data["frames"], states, exp)):
        assert meta["k"] == k
        want = table_snapshot(board, round_over=meta["t"] == "end")
        want["scores"] = scores
        if meta.get("over"):
            want["winner"] = record["winner"]
        assert snap == want, f"frame {i}"
        assert snap["current"] == seat
    ends = [f for f in data["frames"] if f["t"] == "end"]
    assert [f["rs"] for f in ends] == record["round_scores"]
    assert data["scores"] == record["scores"] and data["actions"] == len(record["actions"])


def test_page_is_self_contained_and_escaped(record):
    text = build_html(record, source="game.json")
    data = page_data(text)
    assert data["players"] == LABELS
    # the only </script> tags are the page's own two
    assert text.count("</script>") == 2
    assert "<script>window.hacked" not in text and "&lt;/script&gt;&lt;script&gt;window.hacked" in text  # title
    # nothing is fetched: no external URLs, stylesheets, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "@import" not in text and "url(" not in text and "<link" not in text and "<img" not in text
    s = script_json({"x": "</script><!-- & \u2028"})
    assert "<" not in s and ">" not in s and "&" not in s and "\u2028" not in s
    assert json.loads(s) == {"x": "</script><!-- & \u2028"}


def test_page_size_is_compact(record):
    text = build_html(record)
    per_frame = len(text.encode()) / len(page_data(text)["frames"])
    assert per_frame < 400, f"{per_frame:.0f} bytes per frame"


# =========================================================================== command line
def test_replay_html(record, tmp_path, capsys):
    src = tmp_path / "game.json"
    save_record(_play(), src, players=LABELS)
    out = tmp_path / "game.html"
    assert replay_main([str(src), "--html", str(out), "--seat", "1", "--at", "30"]) == 0
    assert "Wrote" in capsys.readouterr().out
    data = page_data(out.read_text())
    assert data["source"] == "game.json" and data["view"] == 1 and data["start"] == 30


def test_evaluate_records_open(tmp_path):
    from experiments.evaluation.harness import play_game
    from handfoot_env.config import load_rules
    rec = play_game(load_rules("pagat"), ["greedy", "random", "greedy", "random"], 5, game=0, record=True)["record"]
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(rec))
    assert replay_main([str(path), "--html", str(tmp_path / "ev.html")]) == 0
    assert page_data((tmp_path / "ev.html").read_text())["scores"] == rec["scores"]


def test_demo_html(tmp_path):
    out = tmp_path / "demo.html"
    printed = io.StringIO()
    assert demo_main(["--seed", "2", "--agents", "greedy", "random", "--html", str(out)], stdout=printed) == 0
    assert "Web page written" in printed.getvalue()
    data = page_data(out.read_text())
    assert data["players"] == ["greedy", "random", "greedy", "random"] and data["game_over"]


@pytest.mark.parametrize("case", ["missing", "not_json", "not_record", "tampered", "html_dir", "html_folder"])
def test_bad_input_is_one_line(case, tmp_path, capsys):
    rec_path = tmp_path / "game.json"
    save_record(_play(), rec_path)
    html = tmp_path / "out.html"
    if case == "missing":
        rec_path = tmp_path / "nope.json"
    elif case == "not_json":
        rec_path.write_text("{not json")
    elif case == "not_record":
        rec_path.write_text('{"a": 1}')
    elif case == "tampered":
        rec = json.loads(rec_path.read_text())
        rec["scores"][0] += 5
        rec_path.write_text(json.dumps(rec))
    elif case == "html_dir":
        html = tmp_path
    elif case == "html_folder":
        html = tmp_path / "no" / "such" / "out.html"
    assert replay_main([str(rec_path), "--html", str(html)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("handfoot replay: error: ") and "\n" not in err, err
    assert not (tmp_path / "out.html").exists()


# =========================================================================== rgb_array
def test_rgb_array_frames():
    env = handfoot_v0.env(render_mode="rgb_array")
    env.reset(seed=4)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    frames = [first]
    rng = np.random.default_rng(0)
    for _ in range(40):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        frames.append(env.render())
    assert all(f.shape == first.shape and f.dtype == np.uint8 for f in frames)
    changed = sum(not np.array_equal(a, b) for a, b in zip(frames, frames[1:]))
    assert changed == len(frames) - 1          # every action changes the picture (at least its caption)
    assert len({f.tobytes() for f in frames}) == len(frames)
    assert first.std() > 10                    # a picture, not a blank


def test_render_mode_errors():
    with pytest.raises(ValueError, match="rgb_array"):
        handfoot_v0.env(render_mode="rgb")
    e = handfoot_v0.env()
    e.reset(seed=1)
    with pytest.warns(UserWarning, match="render_mode"):
        assert e.render() is None


# =========================================================================== in a browser
def _browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"headless Chromium not found at {CHROMIUM} (Debian: apt-get install chromium)")
    pw = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    return pw, CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


def _artifacts() -> Path:
    d = Path(os.environ.get("HANDFOOT_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_browser_steps_through_a_game(record, tmp_path):
    pw_api, exe = _browser()
    page_path = tmp_path / "game.html"
    page_path.write_text(build_html(record, source="game.json"))
    exp = expected_frames(record)
    errors = []

    with pw_api.sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=exe, headless=True, args=CHROMIUM_FLAGS,
                                                    viewport={"width": 1440, "height": 900})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_path.as_uri())
            page.wait_for_selector("#step")

            def frame() -> int:
                return int(page.get_attribute("#step", "data-frame"))

            def check(i: int) -> None:
                k, board, seat, scores = exp[i]
                assert frame() == i
                assert int(page.get_attribute("#step", "data-k")) == k
                assert f"Action {k} of {len(record['actions'])}" in page.inner_text("#step")
                assert f"round {board.round}/" in page.inner_text("#step")
                assert int(page.get_attribute("#turn", "data-seat")) == seat
                if seat >= 0:
                    assert f"player_{seat}" in page.inner_text("#turn")
                    assert page.locator(".seat.acting").get_attribute("data-seat") == str(seat)
                for t in range(board.num_teams):
                    assert page.inner_text(f"#score-{t}").strip() == str(scores[t])
                    assert page.inner_text(f"#total-{t}").strip() == str(scores[t])
                    melds = sum(1 for m in board.melds[t] if sum(m))
                    assert page.locator(f"#team-{t} .meld.book").count() == len(board.books[t])
                    assert page.locator(f"#team-{t} .meld:not(.book):not(.r3)").count() == melds
                    assert page.locator(f"#team-{t} .r3 .card").count() == board.red3[t]
                    need = "/".join(map(str, board.rules.going_out_books(board.round)))
                    assert f"(out needs {need})" in page.inner_text(f"#team-{t} h3")
                for p in range(board.n):
                    assert page.get_attribute(f"#seat-{p} [data-hand]", "data-hand") == str(sum(board.hands[p]))
                    assert page.locator(f"#seat-{p} .hand .card:not(.dim)").count() == sum(board.hands[p])
                assert page.get_attribute("#stock", "data-size") == str(len(board.stock))

            assert page.evaluate("window.hacked") is None
            assert LABELS[0] in page.inner_text("#seat-0")
            check(0)
            done = 0
            for target in (1, 2, 9, 40):
                while done < target:
                    page.keyboard.press("ArrowRight")
                    done += 1
                check(target)
            page.keyboard.press("ArrowLeft")
            check(39)
            # next round: the deal of round 2; one back: the end of round 1 with its score sheet
            page.keyboard.press("ArrowDown")
            i = frame()
            assert exp[i][1].round == 2 and exp[i - 1][2] == -1
            check(i)
            page.keyboard.press("ArrowLeft")
            check(i - 1)
            sheet = page.locator("#sheet")
            assert sheet.is_visible()
            r1 = record["round_scores"][0]
            assert "Round 1 score sheet" in sheet.inner_text()
            assert all(f"{v:+d}" in sheet.inner_text() for v in r1)
            page.keyboard.press("Escape")
            assert not sheet.is_visible()
            # a click in the timeline, then the seat view
            page.click("#timeline li[data-f='%d']" % (i - 5))
            check(i - 5)
            page.keyboard.press("v")
            assert page.locator("#seat-1 .card.back").count() > 0 and page.locator("#seat-0 .card.back").count() == 0
            page.keyboard.press("v")
            page.keyboard.press("v")
            page.keyboard.press("v")
            page.keyboard.press("v")              # back to the full view
            assert page.locator(".seat .card.back").count() == 0
            # the end of the game
            page.keyboard.press("End")
            check(len(exp) - 1)
            assert "Game over" in page.inner_text("#turn")
            assert sheet.is_visible() and "Round 4 score sheet" in sheet.inner_text()
            page.screenshot(path=str(_artifacts() / "viewer-game-over.png"))
            # play at the fastest speed from the start, then pause
            page.keyboard.press("Home")
            check(0)
            page.select_option("#speed", "32")
            page.keyboard.press("Space")
            page.wait_for_function("document.body.dataset.frame >= 5", timeout=5000)
            page.keyboard.press("Space")
            stopped = frame()
            page.wait_for_timeout(150)
            assert frame() == stopped
            check(stopped)
            # the round buttons and a mid-round screenshot
            page.click("#rounds button[data-round='3']")
            i = frame()
            assert exp[i][1].round == 3 and (i == 0 or exp[i - 1][1].round == 2)
            for _ in range(60):
                page.keyboard.press("ArrowRight")
            check(i + 60)
            shot = _artifacts() / "viewer.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 20_000
        finally:
            ctx.close()
    assert errors == []


def test_the_page_and_the_terminal_table_show_each_rounds_going_out_books():
    """Per-round going-out books reach the page's data (one entry per round, from
    ``RuleConfig.going_out_books``; viewer.js picks the round's, the last for an extra round)
    and the terminal table's line for the round it shows."""
    from experiments.apps.table import make_console, table_renderable
    g = Game("pagat", go_out_clean=[1, 2, 2, 3], go_out_dirty=[0, 1, 2, 2], go_out_wild=[0, 0, 1, 1])
    g.reset(seed=4)
    rec = make_record(g, players=["a", "b", "c", "d"])
    rules = viewer_data(rec)["rules"]
    assert rules["go_out"] == [[1, 0, 0], [2, 1, 0], [2, 2, 1], [3, 2, 1]]
    assert rules["minimums"] == [50, 90, 120, 150]
    for rnd, need in ((1, "1/0/0"), (3, "2/2/1")):
        g.reset(seed=4, round=rnd)
        buf = io.StringIO()
        make_console(buf, width=120).print(table_renderable(g))
        assert f"Going out needs {need} books (clean/dirty/wild) in round {rnd}" in buf.getvalue()
    buf = io.StringIO()
    g = Game("pagat")
    g.reset(seed=4, round=3)
    make_console(buf, width=120).print(table_renderable(g))
    line = next(x for x in buf.getvalue().splitlines() if "Going out needs" in x)
    assert "Going out needs 2/2/1 books (clean/dirty/wild)" in line and "in round" not in line


@pytest.mark.parametrize("rules,seeds", [("pagat", (1, 2, 3, 4)), ("bicycle", (5,)), ("six_player", (6,)),
                                         ("individual", (7,)), ("saskatchewan", (8,))])
def test_every_replayed_rounds_score_sheet_adds_up_to_the_rounds_score(rules, seeds):
    """The page's score sheet (``round_details``): each team's items add up to its round total, and
    the total is the round's score, in every round of whole games under several rule sets."""
    from handfoot_env.scoring import BREAKDOWN_KEYS
    books_seen = 0
    for seed in seeds:
        g = Game(rules)
        g.reset(seed=seed)
        agents = [make_agent("greedy", p) for p in range(g.n)]
        for p, a in enumerate(agents):
            a.reset(p, g.rules, seed + p)
        while not g.game_over:
            g.step(agents[g.current].act(None, seat_view(g, g.current)))
        data = viewer_data(make_record(g, players=[f"p{p}" for p in range(g.n)]))
        assert [k for k, _ in data["items"]] == [*BREAKDOWN_KEYS, "total"]
        assert len(data["round_details"]) == len(g.round_scores) >= 1
        for det, scores in zip(data["round_details"], data["round_scores"]):
            for t, sheet in enumerate(det["teams"]):
                assert sum(sheet[k] for k in BREAKDOWN_KEYS) == sheet["total"] == scores[t], (rules, seed, det)
                books_seen += sheet["clean_books"] + sheet["dirty_books"] + sheet["wild_books"]
    assert books_seen > 0                     # book bonuses reach the sheet
