"""The browser table shared with strangers it cannot trust (issue 59): nobody locks it up.

* fair shares: one client holds at most its share of the tables in play, and
  another client can still create one; a table is abandoned by the time since a
  person last acted there, whatever websockets are open on it;
* who a client is: forwarded headers count only from the proxies the operator
  names (a client cannot make itself many clients), and a Host through them;
* no stalled tables: a person past the turn timeout has their turn played (or the
  round's sheet confirmed) by the table's stand-in, said to everyone; a person may
  leave and the stand-in plays their seat;
* a server that keeps answering: a create returns before its agents move, the
  replay page is built once, finished tables are pruned, slow headers and bodies
  are cut off, an action for a table taken out of play is refused (nothing else
  breaks), every error is JSON and names no server path, Ctrl-C is one line and 130.
"""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import sqlite3
import threading
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets = pytest.importorskip("websockets")

from agents.base import Agent  # noqa: E402
from experiments.apps.web import server as server_module  # noqa: E402
from experiments.apps.web.client import start_server  # noqa: E402
from experiments.apps.web.guard import forwarded_client, parse_proxies  # noqa: E402
from experiments.apps.web.rooms import STALE, TableError  # noqa: E402
from experiments.apps.web.store import Store  # noqa: E402
from experiments.apps.web.tables import Tables  # noqa: E402
from tests.web_client import Client, ThreadServer, free_port  # noqa: E402

PEOPLE = ["human", "greedy", "human", "greedy"]           # seed 7: player_0 draws first
AGENTS = ["greedy", "random", "greedy", "random"]


class SlowAgent(Agent):
    """An operator's agent that thinks for a second and a half (``py:tests.test_serve_strangers:SlowAgent``)."""

    def act(self, observation, view):
        time.sleep(1.5)
        return view.legal_actions[0]


def clocked(path, now, **kw) -> Tables:
    return Tables(Store(path), clock=lambda: now[0], allow_chosen_seeds=True, **kw)


# ---------------------------------------------------------------------- fair shares and abandonment
def test_one_client_holds_its_share_and_another_still_creates(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", max_tables=5, tables_per_client=2)
    try:
        flood, other = Client(server.port), Client(server.port, source="127.0.0.2")
        for _ in range(2):
            flood.create(rules="pagat", seats=PEOPLE, pace_ms=0)
        status, out = flood.call("POST", "/api/tables", {"rules": "pagat", "seats": PEOPLE})
        assert status == 429 and "your share" in out["error"]
        assert other.create(rules="pagat", seats=PEOPLE, pace_ms=0)["table"]        # a bystander still creates
        _, options = other.call("GET", "/api/options")
        assert options["tables_per_client"] == 2 and options["turn_timeout"] == 120.0
        creators = {r[0] for r in server.web.tables.store.db.execute("SELECT creator FROM tables")}
        assert len(creators) == 2 and not any("127.0.0" in c for c in creators)     # a digest, not the address
        flood.close()
        other.close()
    finally:
        server.stop()


def test_an_open_websocket_does_not_keep_a_table_in_play(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", max_tables=1, app_options={"abandon_after": 0.5})
    try:
        c = Client(server.port)
        out = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)
        table, token = out["table"], out["seats"][0]["token"]
        url, origin = f"ws://127.0.0.1:{server.port}/ws/tables/{table}", f"http://127.0.0.1:{server.port}"

        async def go():
            async with websockets.connect(url, origin=origin) as ws:
                await ws.send(json.dumps({"token": None}))
                assert json.loads(await ws.recv())["type"] == "state"
                await asyncio.sleep(0.8)                       # nobody acted: abandoned, socket or not
                loop = asyncio.get_running_loop()
                status, made = await loop.run_in_executor(None, c.call, "POST", "/api/tables",
                                                          {"rules": "pagat", "seats": PEOPLE})
                assert status == 201, made
                with pytest.raises(websockets.ConnectionClosed) as closed:    # the page is told to reconnect
                    while True:
                        await asyncio.wait_for(ws.recv(), 10)
                assert closed.value.rcvd.code == 1012

        asyncio.run(go())
        assert table not in server.web.tables.rooms
        st = c.state(table, token)                                # its person comes back: it plays on
        assert st["to_act"] and table in server.web.tables.rooms
        c.close()
    finally:
        server.stop()


def test_an_abandoned_table_leaves_play_without_anyone_asking(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", app_options={"abandon_after": 0.4, "turn_timeout": 0.1})
    try:
        c = Client(server.port)
        table = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)["table"]
        deadline = time.time() + 30
        while table in server.web.tables.rooms:               # nobody creates anything: the server sweeps itself
            assert time.time() < deadline, "the abandoned table stayed in play"
            time.sleep(0.05)
        seq = c.state(table)["seq"]
        time.sleep(0.5)
        assert c.state(table)["seq"] == seq and table not in server.web.tasks     # its stand-ins stopped
        c.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------- who a client is
def test_made_up_forwarded_headers_do_not_make_more_websockets(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", max_sockets_per_client=2)
    try:
        c = Client(server.port)
        table = c.create(rules="pagat", seats=PEOPLE, pace_ms=0)["table"]
        url, origin = f"ws://127.0.0.1:{server.port}/ws/tables/{table}", f"http://127.0.0.1:{server.port}"

        async def go():
            held = []
            for i in range(2):
                ws = await websockets.connect(url, origin=origin, additional_headers={"X-Forwarded-For": f"10.9.0.{i}"})
                await ws.send(json.dumps({"token": None}))
                assert json.loads(await ws.recv())["type"] == "state"
                held.append(ws)
            with pytest.raises(Exception):
                ws = await websockets.connect(url, origin=origin, additional_headers={"X-Forwarded-For": "10.9.0.7"})
                await ws.send(json.dumps({"token": None}))
                await asyncio.wait_for(ws.recv(), 10)
            for ws in held:
                await ws.close()

        asyncio.run(go())
        c.close()
    finally:
        server.stop()


def test_forwarded_headers_count_only_from_trusted_proxies(tmp_path):
    proxies = parse_proxies("127.0.0.1, 10.0.0.0/8")
    assert forwarded_client("127.0.0.1", "198.51.100.7, 10.1.2.3", proxies) == ("198.51.100.7", True)
    assert forwarded_client("127.0.0.1", "made-up, 203.0.113.4", proxies) == ("203.0.113.4", True)
    assert forwarded_client("127.0.0.1", "203.0.113.9, made-up", proxies) == ("127.0.0.1", True)
    assert forwarded_client("192.0.2.1", "203.0.113.4", proxies) == ("192.0.2.1", False)
    with pytest.raises(ValueError, match="not an IP address"):
        parse_proxies("10.0.0.1,proxy.example")
    plain = ThreadServer(tmp_path / "a.sqlite", rate=0.001, burst=5)          # refills one request per 1,000 s
    try:
        c = Client(plain.port)
        codes = [c.call("GET", "/api/options", headers={"X-Forwarded-For": f"203.0.113.{i}"})[0] for i in range(8)]
        assert codes == [200] * 5 + [429] * 3                                   # made-up addresses: one client
        status, out = c.call("GET", "/api/options", headers={"Host": "example.org", "X-Forwarded-For": "1.2.3.4"})
        assert status == 400 and "Host" in out["error"]
        c.close()
    finally:
        plain.stop()
    proxied = ThreadServer(tmp_path / "b.sqlite", rate=0.001, burst=5, app_options={"trusted_proxies": "127.0.0.1"})
    try:
        c = Client(proxied.port)
        codes = [c.call("GET", "/api/options", headers={"X-Forwarded-For": f"203.0.113.{i}"})[0] for i in range(8)]
        assert codes == [200] * 8                                               # each a client behind the proxy
        codes = [c.call("GET", "/api/options", headers={"X-Forwarded-For": "198.51.100.1"})[0] for i in range(6)]
        assert codes == [200] * 5 + [429]
        status, out = c.call("POST", "/api/tables", {"rules": "pagat", "seats": PEOPLE},
                             headers={"Host": "cards.example.org", "X-Forwarded-For": "198.51.100.2",
                                      "X-Forwarded-Proto": "https"})
        assert status == 201 and out["spectator"] == f"https://cards.example.org/table/{out['table']}"
        c.close()
    finally:
        proxied.stop()


# ---------------------------------------------------------------------- stand-ins
def test_a_person_past_the_turn_timeout_is_played_for_until_back_and_everyone_is_told(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", app_options={"turn_timeout": 2.0})
    try:
        c = Client(server.port)
        out = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)
        table, tokens = out["table"], {e["seat"]: e["token"] for e in out["seats"] if "token" in e}
        first = c.state(table, tokens[0])
        assert first["to_act"] and first["turn_timeout"] == 2.0 and first["act_by"] is not None
        started = time.time()
        deadline = started + 30
        while c.state(table)["current"] == 0:                      # player_0 does nothing
            assert time.time() < deadline, "no stand-in came"
            time.sleep(0.05)
        assert time.time() - started >= 1.9                        # not before the timeout
        spectator = c.state(table)
        assert spectator["notice"] == ("player_0 did not act within 2 s; the stand-in (strategic) plays for them "
                                       "until they are back") and spectator["away"] == [0]
        assert any(e["player"] == 0 and e["text"].endswith("(stand-in)") for e in spectator["log"])
        for _ in range(2):                                         # player_2 acts in time, twice
            mine = c.settled(table, tokens[2])
            assert mine["to_act"] and mine["notice"] == spectator["notice"]
            waited = time.time()
            status, after = c.act(table, tokens[2], next(a for a in mine["legal"] if a.startswith("discard"))
                                  if mine["phase"] == "meld" else mine["legal"][0], mine["seq"])
            assert status == 200
            turns = c.settled(table, tokens[2])
            assert time.time() - waited < 1.9 or turns["game_over"]   # player_0's turns no longer wait
        assert not any(e["player"] == 2 and "stand-in" in e["text"] for e in c.state(table)["log"])
        stored = server.web.tables.store.stand_in_seqs(table)
        assert stored and all(server.web.tables.store.actions(table)[s][0] == 0 for s in stored)
        status, st = c.call("POST", f"/api/tables/{table}/back", token=tokens[0])
        assert status == 200 and st["away"] == [] and st["notice"] == "player_0 is back"
        assert c.call("POST", f"/api/tables/{table}/back", token=tokens[0])[0] == 409
        c.close()
    finally:
        server.stop()


def test_the_stand_in_confirms_a_late_sheet_and_everything_survives_a_restart(tmp_path):
    now = [1000.0]
    db = tmp_path / "t.sqlite"
    tables = clocked(db, now, turn_timeout=10)
    room, tokens = tables.create({"rules": "pagat", "seats": ["human", "greedy", "human", "greedy"], "seed": 3,
                                  "pace_ms": 0, "stand_in": "greedy"})
    assert not room.time_out()                                    # not yet
    while not room.waiting:                                       # nobody at the table ever acts in time
        now[0] += 11
        late = room.game.current
        if room.time_out():
            room.run_agents()                                     # the stand-in plays the turn (and on)
            room.back(late)                                       # then each comes back, too late
        room.run_agents()
    assert room.waiting == {0, 2} and not room.away and room.message(None)["act_by"] == room.sheet_at + 10
    now[0] += 9
    assert not room.time_out() and room.waiting
    now[0] += 2
    assert room.time_out() and not room.waiting and room.away == {0, 2}
    assert room.message(None)["notice"] == ("player_0, player_2 did not confirm the sheet of round 1 within 10 s; "
                                            "the stand-in (greedy) confirmed it and plays for them until they "
                                            "are back")
    room.run_agents()                                             # both away: the stand-in plays on without waiting
    assert room.waiting == {0, 2} and room.deadline() == room.sheet_at   # the next sheet: confirmed at once
    assert room.time_out() and not room.waiting and room.away == {0, 2}
    room.back(0)
    room.leave(2)
    with pytest.raises(TableError, match="you left this table"):
        room.act(2, "draw")
    with pytest.raises(TableError, match="left this table already"):
        room.leave(2)
    moves = set(room.stand_in_moves)
    record = room.record()
    assert record["meta"]["stand_in"] == "greedy" and record["meta"]["left"] == [2]
    assert record["meta"]["stand_in_actions"] == sorted(moves) and moves
    again = clocked(db, now, turn_timeout=10).get(room.id)       # the file keeps who left and what stood in
    assert again.left == {2} and again.stand_in_moves == moves and again.texts == room.texts


def test_leaving_hands_the_seat_to_the_stand_in(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite")
    try:
        c = Client(server.port)
        out = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)
        table, tokens = out["table"], {e["seat"]: e["token"] for e in out["seats"] if "token" in e}
        path = f"/api/tables/{table}/leave"
        assert c.call("POST", path)[0] == 401
        assert c.call("POST", path, {"stay": True}, token=tokens[0])[0] == 400
        status, st = c.call("POST", path, token=tokens[0])
        assert status == 200 and st["left"] == [0] and "player_0 left the table" in st["notice"]
        assert c.call("POST", path, token=tokens[0])[0] == 409
        status, err = c.act(table, tokens[0], "draw")
        assert status == 409 and "you left" in err["error"]
        mine = c.settled(table, tokens[2])                          # the stand-in played player_0's turn
        assert mine["to_act"] and mine["left"] == [0]
        assert any(e["player"] == 0 and e["text"].endswith("(stand-in)") for e in mine["log"])
        c.close()
    finally:
        server.stop()


# ---------------------------------------------------------------------- a server that keeps answering
def test_a_create_returns_before_its_agents_move(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite")
    gate = threading.Event()
    try:
        busy = [server.web.agent_pool.submit(gate.wait, 30) for _ in range(2)]   # every agent thread held
        c = Client(server.port)
        t0 = time.perf_counter()
        table = c.create(rules="pagat", seats=AGENTS, seed=5, pace_ms=0)["table"]
        assert time.perf_counter() - t0 < 5 and c.state(table)["seq"] == 0      # answered, nothing played
        gate.set()
        for f in busy:
            f.result(timeout=10)
        assert c.settled(table, timeout=120)["game_over"]
        c.close()
    finally:
        gate.set()
        server.stop()


def test_a_slow_agent_holds_up_no_request(tmp_path):
    slow = "py:tests.test_serve_strangers:SlowAgent"
    server = ThreadServer(tmp_path / "t.sqlite", app_options={"agents": [slow]})
    try:
        c = Client(server.port)
        tables = [c.create(rules="pagat", seats=[slow] * 4, seed=s, pace_ms=0)["table"] for s in range(4)]
        time.sleep(0.3)                                       # every agent thread is thinking now
        took = []
        for _ in range(3):
            for tid in tables:
                server.web.tables.rooms[tid]._cache.clear()   # each read builds its message afresh
                t0 = time.perf_counter()
                c.state(tid)
                took.append(time.perf_counter() - t0)
        assert max(took) < 1.0, took                          # no read waited for an agent's thought
        c.close()
    finally:
        server.stop()


def test_the_replay_page_is_built_once_and_rate_limited(tmp_path, monkeypatch):
    built = []
    real = server_module.build_html
    monkeypatch.setattr(server_module, "build_html", lambda *a, **k: built.append(1) or real(*a, **k))
    server = ThreadServer(tmp_path / "t.sqlite", rate=0.001, burst=6)
    try:
        c = Client(server.port)
        table = c.create(rules="individual", seats=["random", "greedy", "random"], seed=2, pace_ms=0)["table"]
        deadline = time.time() + 60
        while not server.web.tables.rows[table].finished:          # watched from inside: polling costs requests
            assert time.time() < deadline
            time.sleep(0.05)
        codes = [c.call("GET", f"/table/{table}/replay")[0] for _ in range(6)]
        assert codes == [200] * 5 + [429] and len(built) == 1
        c.close()
    finally:
        server.stop()


def test_finished_tables_beyond_the_bound_are_pruned(tmp_path):
    tables = Tables(Store(tmp_path / "t.sqlite"), keep_finished=2, allow_chosen_seeds=True)
    ids = []
    for seed in range(4):
        room, _ = tables.create({"rules": "individual", "seats": ["random", "greedy", "random"], "seed": seed})
        room.run_agents()
        ids.append(room.id)
    assert [r.id for r in tables.store.tables()] == ids[2:]
    assert tables.store.db.execute("SELECT COUNT(DISTINCT table_id) FROM actions").fetchone()[0] == 2
    with pytest.raises(TableError, match="no such table"):
        tables.get(ids[0])
    assert tables.get(ids[3]).over


def test_an_action_for_a_table_taken_out_of_play_is_refused_and_nothing_breaks(tmp_path):
    now = [1000.0]
    tables = clocked(tmp_path / "t.sqlite", now, abandon_after=60)
    old, tokens = tables.create({"rules": "pagat", "seats": PEOPLE, "seed": 7, "pace_ms": 0})
    old.act(0, "draw")
    now[0] += 61
    assert tables.sweep() == 1 and old.retired
    with pytest.raises(TableError) as refused:                    # a request held while the table was unloaded
        old.act(0, old.message(0)["legal"][-1])
    assert refused.value.status == 409 and str(refused.value) == STALE
    back = tables.get(old.id, revive=True)
    back.act(0, back.message(0)["legal"][-1])                     # the table itself plays on
    assert back.seq == 2 and [a for _, a in tables.store.actions(old.id)][0] == "draw"


def test_every_error_is_json_and_names_no_server_path(tmp_path):
    db = tmp_path / "t.sqlite"
    server = ThreadServer(db)
    try:
        c = Client(server.port)
        table = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)["table"]
        for method, path, want in (("GET", "/nope", 404), ("GET", "/api/tables", 405), ("GET", "/static/x.js", 404),
                                   ("DELETE", f"/api/tables/{table}/state", 405), ("GET", "/table/x/replay", 404)):
            status, out = c.call(method, path)
            assert status == want and isinstance(out, dict) and out["error"], (path, out)
        assert c.call("GET", "/table/nope")[0] == 404           # a seat's page: the page itself says so
        with sqlite3.connect(db) as con:
            con.execute("DELETE FROM actions")
            con.execute("INSERT INTO actions (table_id, seq, player, action, at) VALUES (?, 5, 0, 'draw', 0)",
                        (table,))
        c.close()
    finally:
        server.stop()
    again = ThreadServer(db)
    try:
        c = Client(again.port)
        status, out = c.call("GET", f"/api/tables/{table}/state")
        assert status == 410 and str(tmp_path) not in json.dumps(out) and "damaged" in out["error"]
        c.close()
    finally:
        again.stop()


def test_slow_headers_and_bodies_are_cut_off(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite", header_timeout=0.5, body_timeout=0.5)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n")       # the headers never end
            t0 = time.time()
            assert s.recv(1024) == b"" and time.time() - t0 < 5               # closed by the server
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 40\r\n\r\n{\"rules\":")                  # the body never ends
            answer = ""
            while not answer.endswith("}") and (chunk := s.recv(4096)):
                answer += chunk.decode()
            assert answer.startswith("HTTP/1.1 408") and "did not arrive within 0.5 s" in answer
        c = Client(server.port)                                                  # and the server answers on
        assert c.call("GET", "/api/options")[0] == 200
        c.close()
    finally:
        server.stop()


@pytest.mark.subprocess
def test_ctrl_c_stops_the_server_with_one_line_and_status_130(tmp_path):
    port = free_port()
    proc = start_server(tmp_path / "t.sqlite", port)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and lines[0].startswith("handfoot serve: stopped (Ctrl-C)"), lines


def test_a_request_http_cannot_parse_gets_a_json_error(tmp_path):
    server = ThreadServer(tmp_path / "t.sqlite")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
        head, _, body = answer.decode().partition("\r\n\r\n")
        assert head.startswith("HTTP/1.1 400") and "application/json" in head
        assert "not an HTTP request" in json.loads(body)["error"]
    finally:
        server.stop()


def test_a_locked_database_answers_503_in_time_while_agent_tables_play(tmp_path):
    db = tmp_path / "t.sqlite"
    server = ThreadServer(db)
    try:
        c = Client(server.port)
        busy = [c.create(rules="pagat", seats=AGENTS, seed=s, pace_ms=0)["table"] for s in range(8)]
        mine = c.create(rules="pagat", seats=PEOPLE, seed=7, pace_ms=0)
        table, token = mine["table"], mine["seats"][0]["token"]
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        try:
            time.sleep(0.3)                                     # the agents' moves queue on the locked file
            for _ in range(3):
                t0 = time.perf_counter()
                status, out = c.call("POST", "/api/tables", {"rules": "pagat", "seats": PEOPLE})
                took = time.perf_counter() - t0
                assert status == 503 and "database is" in out["error"] and took < 1.5, (status, out, took)
                t0 = time.perf_counter()
                assert c.state(table, token)["seq"] == 0 and time.perf_counter() - t0 < 1.5   # reading goes on
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        seqs = [c.state(t)["seq"] for t in busy]
        deadline = time.time() + 60
        while sum(c.state(t)["seq"] for t in busy) <= sum(seqs) + 40:       # the agents play on
            assert time.time() < deadline, "the agent tables stopped"
            time.sleep(0.1)
        c.close()
    finally:
        server.stop()


def test_a_file_from_before_the_stand_ins_opens_and_plays_on(tmp_path):
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as con:                     # the schema before shares, stand-ins and leaving
        con.executescript("""
            CREATE TABLE tables (id TEXT PRIMARY KEY, created REAL NOT NULL, rules TEXT NOT NULL, seats TEXT NOT NULL,
                seed INTEGER NOT NULL, pace_ms INTEGER NOT NULL, token_digests TEXT NOT NULL,
                finished INTEGER NOT NULL DEFAULT 0, seed_chosen INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE actions (table_id TEXT NOT NULL, seq INTEGER NOT NULL, player INTEGER NOT NULL,
                action TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (table_id, seq));
            CREATE TABLE seen (table_id TEXT NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,
                PRIMARY KEY (table_id, round, seat));""")
        con.execute("INSERT INTO tables VALUES ('old', ?, 'pagat', ?, 7, 0, ?, 0, 1)",
                    (time.time(), json.dumps(PEOPLE), json.dumps(["d0", None, "d2", None])))
        con.execute("INSERT INTO actions VALUES ('old', 0, 0, 'draw', ?)", (time.time(),))
    tables = Tables(Store(db))
    room = tables.get("old")
    assert room.live and room.seq == 1 and room.row.stand_in == "strategic" and room.left == set()
    room.leave(0)                                        # the new table of who left is there too
    assert Tables(Store(db)).get("old").left == {0}


def test_after_a_restart_only_a_persons_own_actions_keep_a_table_in_play(tmp_path):
    db = tmp_path / "t.sqlite"
    tables = Tables(Store(db), allow_chosen_seeds=True)
    room, _ = tables.create({"rules": "pagat", "seats": PEOPLE, "seed": 7, "pace_ms": 0})
    agents, _ = tables.create({"rules": "pagat", "seats": AGENTS, "seed": 1, "pace_ms": 0})
    while room.game.current == 0:                             # player_0 plays a turn
        legal = room.message(0)["legal"]
        room.act(0, next((a for a in legal if a.startswith("discard")), legal[0]))
    room.run_agents()                                         # the agents of the person's table move after them
    assert room.game.current == 2
    room.covering = 2                                         # and a stand-in moves for player_2
    room.run_agents()
    agents.agent_step()
    assert tables.store.stand_in_seqs(room.id)
    with sqlite3.connect(db) as con:                          # two hours ago: the creations and the person's moves
        con.execute("UPDATE tables SET created = created - 7200")
        con.execute("UPDATE actions SET at = at - 7200 WHERE table_id = ? AND player = 0", (room.id,))
    again = Tables(Store(db), abandon_after=3600)
    assert room.id not in again.rooms                         # agents' and stand-in's moves did not count
    assert agents.id in again.rooms                           # at a table of agents only, any seat counts


def test_the_new_flags_refuse_bad_values_in_one_line(tmp_path, capsys):
    from experiments.apps.cli import main as cli_main
    db = str(tmp_path / "t.sqlite")
    for argv, needle in ((["--trusted-proxies", "10.0.0.1,proxy.example"], "'proxy.example' is not an IP address"),
                         (["--turn-timeout", "-1"], "--turn-timeout must be 0"),
                         (["--turn-timeout", "nan"], "--turn-timeout must be 0"),
                         (["--tables-per-client", "0"], "--tables-per-client must be from 1"),
                         (["--tables-per-client", "200"], "--tables-per-client must be from 1"),
                         (["--keep-finished", "-5"], "--keep-finished must be at least 0")):
        assert cli_main(["serve", "--db", db, *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], (argv, err)
