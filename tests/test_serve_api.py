"""The browser table's JSON API and websocket: creating tables, reading and acting, and every refusal.

Each refusal is a status with ``{"error": ...}`` naming the problem, and the table
is unchanged afterwards (same state, same stored action count).
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
websockets = pytest.importorskip("websockets")

from experiments.apps.cli import main as cli_main  # noqa: E402
from tests.web_client import ROOT, Client, ThreadServer  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ThreadServer(tmp_path_factory.mktemp("api") / "tables.sqlite", max_tables=40)
    yield s
    s.stop()


@pytest.fixture()
def client(server):
    c = Client(server.port)
    yield c
    c.close()


def stored(server, table):
    return server.web.tables.store.db.execute("SELECT COUNT(*) FROM actions WHERE table_id = ?", (table,)).fetchone()[0]


def new_table(client, seats=("human", "greedy", "human", "greedy"), **kw):
    out = client.create(rules="pagat", seats=list(seats), seed=kw.pop("seed", 7), pace_ms=kw.pop("pace_ms", 0), **kw)
    return out["table"], {e["seat"]: e["token"] for e in out["seats"] if "token" in e}, out


def test_create_returns_links_for_human_seats_only(client, server):
    table, tokens, out = new_table(client)
    assert sorted(tokens) == [0, 2] and len(set(tokens.values())) == 2
    assert [e["kind"] for e in out["seats"]] == ["human", "greedy", "human", "greedy"]
    for e in out["seats"]:
        assert ("url" in e) == (e["kind"] == "human")
        if "url" in e:
            assert e["url"].endswith(f"/table/{table}#{e['token']}")   # the token rides in the fragment
    assert out["spectator"].endswith(f"/table/{table}")
    st = client.state(table, tokens[0])
    assert st["seat"] == 0 and st["to_act"] and st["legal"] == ["draw"] and len(st["hand"]) == 13
    spectator = client.state(table)
    assert spectator["seat"] is None and spectator["hand"] == [] and spectator["legal"] == []
    stored_digests = server.web.tables.store.tables()[-1].token_digests
    assert tokens[0] not in json.dumps(stored_digests)                    # only digests are kept


@pytest.mark.parametrize("body, needle", [
    ({"rules": "nope", "seats": ["human"] * 4}, "rules must be one of the presets"),
    ({"rules": "/etc/passwd", "seats": ["human"] * 4}, "rules must be one of the presets"),
    ({"rules": "pagat", "seats": ["human"] * 3}, "seats must be a list of 4"),
    ({"rules": "pagat", "seats": ["human", "py:os:system", "human", "human"]}, "is not a seat kind here"),
    ({"rules": "pagat", "seats": ["human", "policy:/tmp/x.zip", "human", "human"]}, "is not a seat kind here"),
    ({"rules": "pagat", "seed": -1}, "seed must be"),
    ({"rules": "pagat", "pace_ms": 10**9}, "pace_ms must be"),
    ({"rules": "pagat", "colour": "red"}, "unknown field 'colour'"),
    ([1, 2], "must be a JSON object"),
])
def test_bad_create_requests_are_refused(client, server, body, needle):
    before = len(server.web.tables.rooms)
    status, out = client.call("POST", "/api/tables", body)
    assert status == 400 and needle in out["error"]
    assert len(server.web.tables.rooms) == before


def test_refused_actions_change_nothing(client, server):
    table, tokens, _ = new_table(client)
    path = f"/api/tables/{table}/act"
    before = client.state(table, tokens[0])
    n = stored(server, table)
    cases = [
        (client.call("POST", path, {"action": "draw"}), 401, "needs the seat's token"),
        (client.call("POST", path, {"action": "draw"}, token="x" * 32), 401, "not a seat of this table"),
        (client.call("POST", path, {"action": "draw"}, headers={"Authorization": "Basic abc"}), 401, "Bearer"),
        (client.act(table, tokens[2], "draw"), 409, "not your turn"),
        (client.act(table, tokens[0], "pickup"), 409, "pickup is not legal now"),
        (client.act(table, tokens[0], "fly"), 400, "unknown action"),
        (client.act(table, tokens[0], "draw", seq=before["seq"] + 5), 409, "stale action"),
        (client.call("POST", path, raw=b"{not json", token=tokens[0]), 400, "not valid JSON"),
        (client.call("POST", path, raw=b"[" * 3000 + b"]" * 3000, token=tokens[0]), 400, "nested too deeply"),
        (client.call("POST", path, {"action": "draw", "as": 2}, token=tokens[0]), 400, "must be"),
        (client.call("POST", path, raw=b'{"action": "draw"}', token=tokens[0],
                     headers={"Content-Type": "text/plain"}), 415, "must be JSON"),
        (client.call("POST", path, raw=b'{"action": "' + b"d" * 20000 + b'"}', token=tokens[0]), 413, "larger than"),
        (client.call("POST", path, {"action": "draw"}, token=tokens[0],
                     headers={"Origin": "http://evil.example"}), 403, "cross-origin"),
        (client.call("GET", "/api/tables/nope/state"), 404, "no such table"),
        (client.call("GET", f"/api/tables/{table}/record"), 409, "not over"),
    ]
    for (status, out), want, needle in cases:
        assert status == want, out
        assert needle in out["error"], out
    assert client.state(table, tokens[0]) == before and stored(server, table) == n
    status, after = client.act(table, tokens[0], "draw", seq=before["seq"])
    assert status == 200 and after["seq"] == before["seq"] + 1 and len(after["hand"]) == 15
    status, again = client.act(table, tokens[0], "draw", seq=before["seq"])       # the same click twice
    assert status == 409 and stored(server, table) == n + 1


def test_foreign_hosts_are_refused(client):
    status, out = client.call("GET", "/api/options", headers={"Host": "evil.example"})
    assert status == 400


def test_the_page_has_an_icon(client):
    status, icon = client.call("GET", "/favicon.ico")
    assert status == 200 and icon.startswith("<svg")


def test_rate_and_table_limits(tmp_path):
    s = ThreadServer(tmp_path / "t.sqlite", rate=5, burst=5, max_tables=2)
    try:
        c = Client(s.port)
        new_table(c, seats=("human",) * 4)
        new_table(c, seats=("human",) * 4)
        status, out = c.call("POST", "/api/tables", {"rules": "pagat"})
        assert status == 503 and "limit" in out["error"]
        codes = [c.call("GET", "/api/options")[0] for _ in range(10)]
        assert 429 in codes
        c.close()
    finally:
        s.stop()


def test_a_whole_game_through_the_api_ends_with_a_record(client):
    table, tokens, _ = new_table(client, seats=("human", "random", "greedy", "random"), seed=11)
    st = client.state(table, tokens[0])
    while not st["game_over"]:
        status, st = client.act(table, tokens[0], st["legal"][-1], st["seq"])
        assert status == 200, st
    status, record = client.call("GET", f"/api/tables/{table}/record")
    assert status == 200 and record["players"] == ["human", "random", "greedy", "random"]
    assert record["meta"]["table"] == table and len(record["actions"]) == st["seq"]
    status, page = client.call("GET", f"/table/{table}/replay")
    assert status == 200 and "<html" in page.lower()


def test_websocket_pushes_the_seat_state_and_checks_origin(client, server):
    table, tokens, _ = new_table(client)
    url = f"ws://127.0.0.1:{server.port}/ws/tables/{table}"
    origin = f"http://127.0.0.1:{server.port}"

    async def go():
        with pytest.raises(Exception):
            async with websockets.connect(url, origin="http://evil.example") as ws:
                await ws.recv()
        async with websockets.connect(url, origin=origin) as ws:
            await ws.send(json.dumps({"token": "wrong"}))
            assert json.loads(await ws.recv())["type"] == "error"
        async with websockets.connect(url, origin=origin) as ws:
            await ws.send(json.dumps({"token": tokens[2]}))
            first = json.loads(await ws.recv())
            assert first["type"] == "state" and first["state"]["seat"] == 2 and not first["state"]["to_act"]
            await asyncio.get_running_loop().run_in_executor(None, client.act, table, tokens[0], "draw")
            pushed = json.loads(await asyncio.wait_for(ws.recv(), 10))["state"]
            assert pushed["seat"] == 2 and pushed["seq"] == 1 and pushed["last"] == {"player": 0, "action": "draw"}
            assert pushed == client.state(table, tokens[2])
        async with websockets.connect(url, origin=origin) as ws:
            await ws.send(json.dumps({"token": None}))
            spectator = json.loads(await ws.recv())["state"]
            assert spectator["seat"] is None and spectator["hand"] == []

    asyncio.run(go())


def test_serve_command_errors_are_one_line(tmp_path, capsys):
    assert cli_main(["serve", "--port", "70000"]) == 2
    assert "--port must be between" in capsys.readouterr().err
    assert cli_main(["serve", "--agent", "nonsense", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "unknown agent spec" in capsys.readouterr().err
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert cli_main(["serve", "--db", str(bad), "--port", "0"]) == 2
    assert "not a handfoot table database" in capsys.readouterr().err


def test_binding_elsewhere_warns(tmp_path):
    code = ("import sys, uvicorn\nuvicorn.Server.run = lambda *a, **k: None\n"
            "from experiments.apps.web.serve import serve_main\n"
            f"sys.exit(serve_main(['--host', '0.0.0.0', '--db', {str(tmp_path / 't.sqlite')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "warning: listening on 0.0.0.0" in proc.stderr


def test_finished_games_are_written_to_the_records_folder(tmp_path):
    from experiments.apps.web.store import Store
    from experiments.apps.web.tables import Tables
    from handfoot_env.record import load_record, replay_record
    tables = Tables(Store(tmp_path / "t.sqlite"), records=tmp_path / "records")
    room, _ = tables.create({"rules": "individual", "seats": ["random", "greedy", "random"], "seed": 2,
                             "pace_ms": 0})
    room.run_agents()
    rec = load_record(tmp_path / "records" / f"{room.id}.json")
    assert room.over and replay_record(rec).scores == room.game.scores and rec["meta"]["table"] == room.id


def test_a_failed_write_changes_nothing_and_a_tampered_table_is_reported_and_skipped(tmp_path, capsys):
    from experiments.apps.web.rooms import TableError
    from experiments.apps.web.store import Store
    from experiments.apps.web.tables import Tables
    db = tmp_path / "t.sqlite"
    tables = Tables(Store(db), allow_chosen_seeds=True)
    room, tokens = tables.create({"rules": "pagat", "seats": ["human", "greedy", "human", "greedy"], "seed": 7,
                                  "pace_ms": 0})
    other, _ = tables.create({"rules": "pagat", "seats": ["human", "greedy", "greedy", "greedy"], "pace_ms": 0})
    room.act(0, "draw")
    before = room.message(0)
    tables.store.db.close()                            # the disk went away
    with pytest.raises(TableError, match="could not save") as e:
        room.act(0, before["legal"][-1])
    assert e.value.status == 503 and room.message(0) == before and room.seq == 1
    import sqlite3
    with sqlite3.connect(db) as con:
        con.execute("UPDATE actions SET action = 'pickup' WHERE seq = 0 AND table_id = ?", (room.id,))
        con.execute("INSERT INTO tables (id, created, rules, seats, seed, pace_ms, token_digests) "
                    "VALUES ('garbled', 0, 'pagat', 'not json', 1, 0, '[]')")
    capsys.readouterr()
    again = Tables(Store(db))                          # the server starts with the tables that replay
    err = capsys.readouterr().err
    assert f"table {room.id} skipped: table {room.id}: stored action 1 ('pickup' by player_0) does not replay" in err
    assert "table garbled skipped: unreadable row" in err
    assert set(again.rooms) == {other.id} and set(again.damaged) == {room.id, "garbled"}
    with pytest.raises(TableError, match="stored log is damaged") as e:
        again.get(room.id)
    assert e.value.status == 410
