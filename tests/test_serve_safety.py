"""The browser table shared with strangers: secret seeds, limits keyed on what a client cannot make up,
a failing database, damaged and finished and abandoned tables.

* served deals come from secret seeds over the whole range ``0 .. 2**63 - 1``; a
  chosen seed is shown to everyone at the table and refused at a table of
  several persons unless the operator allows it;
* 10,000 made-up tokens are limited with their client; a full bucket table
  never forgets an active client; one client cannot hold every websocket;
* a locked or failing database gives 503 JSON on every route that needs it, and
  an agent's move that cannot be saved is logged, shown and retried;
* a finished table leaves memory and is rebuilt from its log when asked for; a
  table nobody plays at stops counting against ``--max-tables`` (also after a
  restart).
"""
from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import subprocess
import sys
import time
import tracemalloc
from types import SimpleNamespace

import pytest

from handfoot_env.actions import ACTION_NAMES

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets = pytest.importorskip("websockets")

from experiments.apps.web import rooms as rooms_module  # noqa: E402
from experiments.apps.web.rooms import SEED_RANGE, TableError  # noqa: E402
from experiments.apps.web.server import RateLimiter, client_key, is_local  # noqa: E402
from experiments.apps.web.store import BUSY_TIMEOUT, Store  # noqa: E402
from experiments.apps.web.tables import Tables  # noqa: E402
from handfoot_env.engine import Game  # noqa: E402
from tests.web_client import ROOT, Client, ThreadServer  # noqa: E402

AGENTS = ["greedy", "random", "greedy", "random"]


def tables_at(path, **kw) -> Tables:
    return Tables(Store(path), **{"per_client": 100, **kw})


# ---------------------------------------------------------------------- seeds
def test_served_seeds_are_drawn_from_the_whole_range(tmp_path, monkeypatch):
    asked = []

    def top_of_range(bound):
        asked.append(bound)
        return bound - 1

    tables = tables_at(tmp_path / "t.sqlite")
    monkeypatch.setattr(rooms_module.secrets, "randbelow", top_of_range)
    room, _ = tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:], "pace_ms": 0})
    assert asked == [2 ** 63] and SEED_RANGE == 2 ** 63
    assert room.row.seed == 2 ** 63 - 1 == tables.store.tables()[-1].seed       # stored without loss
    fresh = Game("pagat")
    fresh.reset(seed=2 ** 63 - 1)
    assert room.game.round_seeds == fresh.round_seeds                       # round seeds derived as before
    assert all(0 <= s < 2 ** 62 for s in room.game.round_seeds)
    assert room.message(0)["seed"] is None and room.message(None)["seed"] is None   # a secret seed stays secret
    monkeypatch.undo()
    seeds = [tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:], "pace_ms": 0})[0].row.seed
             for _ in range(24)]
    # 24 draws below 2**56 would happen with probability 2**-168: the range is the whole one
    assert all(0 <= s < 2 ** 63 for s in seeds) and max(seeds) >= 2 ** 56 and len(set(seeds)) == 24


def test_a_chosen_seed_is_shown_and_refused_where_several_persons_sit(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", allow_chosen_seeds=False)
    try:
        c = Client(server.port)
        status, out = c.call("POST", "/api/tables", {"rules": "pagat", "seats": ["human", "greedy", "human", "greedy"],
                                                     "seed": 7, "pace_ms": 0})
        assert status == 403 and "--allow-chosen-seeds" in out["error"]
        out = c.create(rules="pagat", seats=["human", "greedy", "random", "greedy"], seed=str(2 ** 63 - 1), pace_ms=0)
        token = out["seats"][0]["token"]
        assert out["seed"] == str(2 ** 63 - 1)
        assert c.state(out["table"], token)["seed"] == str(2 ** 63 - 1)
        assert c.state(out["table"])["seed"] == str(2 ** 63 - 1)                 # the spectator sees it too
        for bad in (2 ** 63, -1, "12a", "\u00b2", 1.5, True):
            status, err = c.call("POST", "/api/tables", {"rules": "pagat", "seed": bad})
            assert status == 400 and "seed must be" in err["error"], bad
        out = c.create(rules="pagat", seats=["human", "greedy", "human", "greedy"], pace_ms=0)   # no seed: fine
        assert "seed" not in out and c.state(out["table"])["seed"] is None
        c.close()
    finally:
        server.stop()
    allowed = tables_at(tmp_path / "u.sqlite", allow_chosen_seeds=True)
    room, _ = allowed.create({"rules": "pagat", "seats": ["human", "greedy", "human", "greedy"], "seed": 7})
    assert room.message(2)["seed"] == "7" and room.record()["meta"]["seed_chosen"] is True


def test_champion_is_offered_only_where_it_can_play(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite")
    try:
        c = Client(server.port)
        _, options = c.call("GET", "/api/options")
        assert "champion" in options["seats_for"]["pagat"] and "champion" in options["seats_for"]["bicycle"]
        assert "champion" not in options["seats_for"]["six_player"]
        assert "champion" not in options["seats_for"]["individual"]
        status, out = c.call("POST", "/api/tables", {"rules": "six_player",
                                                     "seats": ["human", "champion"] + ["greedy"] * 4})
        assert status == 400 and "seat 1: champion cannot play six_player" in out["error"]
        c.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------- rate limits and sockets
def test_made_up_tokens_are_limited_with_their_client(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", rate=0.001, burst=20)    # refills one request per 1,000 s
    try:
        c = Client(server.port)
        out = c.create(rules="pagat", seats=["human"] + AGENTS[1:], pace_ms=0)
        table, token = out["table"], out["seats"][0]["token"]
        web = server.web
        request = SimpleNamespace(client=SimpleNamespace(host="203.0.113.9"))

        async def checks():
            answers = [(await web._checked(request, table, f"made-up-{i}"))[2] for i in range(10_000)]
            real = await web._checked(SimpleNamespace(client=SimpleNamespace(host="203.0.113.9")), table, token)
            other = SimpleNamespace(client=SimpleNamespace(host="198.51.100.4"))
            return answers, real, (await web._checked(other, table, "made-up"))[2]

        answers, (room, seat, refused), other = asyncio.run(checks())
        statuses = [r.status_code for r in answers]
        assert statuses.count(401) == 20 and statuses.count(429) == 9_980       # the client's bucket ran dry
        assert seat == 0 and refused is None                                    # its real seat has its own bucket
        assert other.status_code == 401                                         # other clients are not affected
        codes = [c.call("GET", f"/api/tables/{table}/state", token=f"x{i}")[0] for i in range(40)]
        assert codes[:5] == [401] * 5 and 429 in codes                          # through HTTP as well
        c.close()
    finally:
        server.stop()


def test_a_full_bucket_table_keeps_the_busy_clients():
    limiter = RateLimiter(rate=0.001, burst=3, max_keys=100)         # refills one request per 1,000 s
    assert [limiter.allow(("attacker",)) for _ in range(4)] == [True, True, True, False]
    for i in range(10_001):                                    # many other keys, each used once
        limiter.allow((f"other-{i}",))
        if i % 50 == 0:
            limiter.allow(("attacker",))                        # still busy: never evicted
    assert len(limiter.buckets) <= 100 and not limiter.allow(("attacker",))
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff") == "2001:db8::/64"
    assert client_key("203.0.113.9") == "203.0.113.9"


def test_loopback_addresses_are_local():
    assert all(is_local(h) for h in ("127.0.0.1", "127.0.0.2", "127.255.0.9", "localhost", "::1", "[::1]"))
    assert not any(is_local(h) for h in ("0.0.0.0", "192.168.1.4", "::", "example.org"))


def test_one_client_cannot_hold_every_websocket(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", max_sockets=8, max_sockets_per_client=3)
    try:
        c = Client(server.port)
        table = c.create(rules="pagat", seats=["human"] + AGENTS[1:], pace_ms=0)["table"]
        url = f"ws://127.0.0.1:{server.port}/ws/tables/{table}"
        origin = f"http://127.0.0.1:{server.port}"

        async def connect(source="127.0.0.1"):
            sock = socket.socket()
            sock.bind((source, 0))
            sock.connect(("127.0.0.1", server.port))
            ws = await websockets.connect(url, origin=origin, sock=sock)
            await ws.send(json.dumps({"token": None}))
            return ws, json.loads(await asyncio.wait_for(ws.recv(), 10))

        async def go():
            held = [await connect() for _ in range(3)]
            assert all(m["type"] == "state" for _, m in held)
            with pytest.raises(Exception):                        # the fourth from the same client is refused
                await connect()
            ws, first = await connect("127.0.0.2")                # another client still gets a slot
            assert first["type"] == "state"
            for w, _ in held + [(ws, None)]:
                await w.close()

        asyncio.run(go())
        c.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------- a failing database
def test_a_locked_or_failing_database_gives_503_json_on_every_route(tmp_path):
    db = tmp_path / "t.sqlite"
    server = ThreadServer(db)
    try:
        c = Client(server.port)
        assert server.web.tables.store.db.execute("PRAGMA busy_timeout").fetchone()[0] == int(BUSY_TIMEOUT * 1000)
        out = c.create(rules="pagat", seats=["human"] + AGENTS[1:], seed=3, pace_ms=0)
        table, token = out["table"], out["seats"][0]["token"]
        first = c.state(table, token)["legal"][0]
        done = c.create(rules="individual", seats=["random", "greedy", "random"], pace_ms=0)["table"]
        assert c.settled(done)["game_over"]                      # the agents play it out in the server's time
        server.web.tables.finished.clear()                       # the finished table is read from the file
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        try:
            for status, body in (c.call("POST", "/api/tables", {"rules": "pagat"}),
                                 c.act(table, token, first, 0)):
                assert status == 503 and "database is locked" in body["error"], body
            assert c.state(table, token)["seq"] == 0              # nothing changed; reading goes on
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        status, _ = c.act(table, token, first, 0)
        assert status == 200
        server.web.tables.store.db.close()                       # now the file fails altogether
        server.web.tables.finished.clear()
        for method, path, body, tok in (("POST", "/api/tables", {"rules": "pagat"}, None),
                                        ("POST", f"/api/tables/{table}/act", {"action": "draw"}, token),
                                        ("GET", f"/api/tables/{done}/state", None, None),
                                        ("GET", f"/api/tables/{done}/record", None, None),
                                        ("GET", f"/table/{done}/replay", None, None)):
            status, answer = c.call(method, path, body, token=tok)
            assert status == 503 and isinstance(answer, dict) and "closed database" in answer["error"], (path, answer)
        c.close()
    finally:
        server.stop()


def test_an_agent_move_that_cannot_be_saved_is_logged_shown_and_retried(tmp_path, capfd):
    db = tmp_path / "t.sqlite"
    server = ThreadServer(db)
    try:
        c = Client(server.port)
        table = c.create(rules="individual", seats=["random", "greedy", "random"], pace_ms=20)["table"]
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        try:
            deadline = time.time() + 60
            while c.state(table)["trouble"] is None:
                assert time.time() < deadline, "the failed move was not reported"
                time.sleep(0.05)
            stuck = c.state(table)
            assert "could not save an agent's move" in stuck["trouble"]
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        deadline = time.time() + 120
        while c.state(table)["seq"] <= stuck["seq"] + 5:          # the agents play on
            assert time.time() < deadline, "the table stopped"
            time.sleep(0.1)
        assert c.state(table)["trouble"] is None
        err = capfd.readouterr().err
        assert f"table {table}: an agent's move could not be saved" in err and f"table {table}: agents play on" in err
        c.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------- finished and abandoned tables
def test_finished_tables_leave_memory_and_come_back_from_the_file(tmp_path):
    db = tmp_path / "t.sqlite"
    tables = tables_at(db, records=tmp_path / "records")
    room, _ = tables.create({"rules": "individual", "seats": ["random", "greedy", "random"], "seed": 4,
                             "pace_ms": 0})
    room.run_agents()
    assert room.over and room.id not in tables.rooms and not room.agents
    record = room.record()
    tables.finished.clear()
    again = tables.get(room.id)                                  # rebuilt from its log
    rebuilt = again.record()
    for r in (record, rebuilt):
        r["meta"].pop("saved")                                   # the clock's second when each record was made
    assert again is not room and rebuilt == record and again.message(None)["game_over"]
    # many finished tables: starting does not replay them, and they take little memory
    actions = tables.store.actions(room.id)
    row = tables.store.tables()[0]
    for i in range(300):
        row.id = f"copy-{i}"
        tables.store.add_table(row)
        with tables.store._transaction() as con:
            con.executemany("INSERT INTO actions (table_id, seq, player, action, at) VALUES (?, ?, ?, ?, 0)",
                            [(row.id, seq, player, name) for seq, (player, name) in enumerate(actions)])
    tracemalloc.start()
    restarted = tables_at(db)
    used, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert restarted.rooms == {} and len(restarted.rows) == 301 and restarted.in_play() == 0
    assert used < 300 * 4096, f"{used} bytes for 301 finished tables"
    assert restarted.get("copy-7").record()["scores"] == record["scores"]


def test_abandoned_tables_stop_counting_also_after_a_restart(tmp_path):
    now = [time.time()]
    db = tmp_path / "t.sqlite"
    tables = tables_at(db, max_tables=1, abandon_after=3600, clock=lambda: now[0])
    left, tokens = tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:], "pace_ms": 0})
    left.act(0, ACTION_NAMES[left.game.legal_actions()[0]])   # the deal is secret: a red three may come first
    with pytest.raises(TableError, match="limit"):
        tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:]})
    now[0] += 3601
    fresh, _ = tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:]})     # the first was abandoned
    assert left.id not in tables.rooms and fresh.id in tables.rooms
    assert not tables.get(left.id).live                          # a look does not bring it back into play
    assert left.id not in tables.rooms
    back = tables.get(left.id, revive=True)                      # its person comes back: it plays on
    assert back.seq == 1 and back.message(0)["to_act"] and left.id in tables.rooms
    now[0] += 2 * 3600
    restarted = tables_at(db, max_tables=1, abandon_after=3600, clock=lambda: now[0])
    assert restarted.rooms == {} and restarted.in_play() == 0
    restarted.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:]})


def test_serve_reports_damaged_tables_and_treats_loopback_as_local(tmp_path):
    db = tmp_path / "t.sqlite"
    tables = tables_at(db)
    tables.create({"rules": "pagat", "seats": ["human"] + AGENTS[1:]})
    tables.store.db.execute("INSERT INTO tables (id, created, rules, seats, seed, pace_ms, token_digests) "
                            "VALUES ('garbled', 0, 'pagat', '[', 1, 0, '[]')")
    tables.store.close()
    code = ("import sys, uvicorn\nuvicorn.Server.run = lambda *a, **k: None\n"
            "from experiments.apps.web.serve import serve_main\n"
            f"sys.exit(serve_main(['--host', '127.0.0.2', '--db', {str(db)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "table garbled skipped: unreadable row" in proc.stderr and "warning" not in proc.stderr
    assert "http://127.0.0.2:8000/ (1 in play of 1 tables in" in proc.stdout and "1 damaged, skipped" in proc.stdout
