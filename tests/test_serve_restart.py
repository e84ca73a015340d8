"""Nothing is lost: a real ``handfoot serve`` process killed with SIGKILL at random points of games.

Tables of people and agents play (agents at their pace in the server, people
scripted through the API); the server is killed at random moments, including in
the middle of requests, and started again on the same SQLite file.  Afterwards
every table is there with every action the server acknowledged, each person's
link still opens their seat, and the games play on to a record that replays.
"""
from __future__ import annotations

import random
import signal
import sqlite3
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from handfoot_env.record import replay_record  # noqa: E402
from tests.web_client import Client, free_port, start_process  # noqa: E402

KILLS = 4


def drive(client: Client, tables, acked, seen, until: float, rng: random.Random, sheets=None) -> None:
    """People act at their seats until ``until`` (or until every game is over); remembers what was acknowledged."""
    while time.time() < until:
        busy = False
        for tid, tokens in tables.items():
            st = client.state(tid)                              # the spectator's view
            seen[tid] = max(seen.get(tid, 0), st["seq"])
            busy |= not st["game_over"]
            for seat, token in tokens.items():
                status, st = client.call("GET", f"/api/tables/{tid}/state", token=token)
                if status != 200:
                    raise AssertionError(st)
                seen[tid] = max(seen.get(tid, 0), st["seq"])
                busy |= not st["game_over"]
                if st["to_act"]:
                    choice = rng.choice(st["legal"])
                    status, after = client.act(tid, token, choice, st["seq"])
                    if status == 200 and choice == "next_round":       # a round's sheet seen: kept too
                        if sheets is not None:
                            sheets.add((tid, st["round_end"]["round"], seat))
                    elif status == 200:
                        acked[tid][st["seq"]] = (seat, choice)
                        seen[tid] = max(seen[tid], after["seq"])
                    else:
                        assert status == 409, after       # an agent of a paced table may have moved meanwhile
        if not busy:
            return


def test_sigkill_at_random_points_loses_nothing(tmp_path):
    db = tmp_path / "tables.sqlite"
    port = free_port()
    rng = random.Random(5)
    proc = start_process(db, port)
    client = Client(port, timeout=10)
    tables, acked, seen, sheets = {}, {}, {}, set()
    layouts = [("pagat", ["human", "random", "greedy", "random"], 2),
               ("pagat", ["human", "greedy", "human", "random"], 0),
               ("individual", ["random", "human", "greedy"], 1),
               ("six_player", ["greedy", "random", "greedy", "random", "greedy", "random"], 1)]
    for i, (rules, seats, pace) in enumerate(layouts):
        out = client.create(rules=rules, seats=seats, seed=40 + i, pace_ms=pace)
        tables[out["table"]] = {e["seat"]: e["token"] for e in out["seats"] if "token" in e}
        acked[out["table"]] = {}
    try:
        for k in range(KILLS):
            drive(client, tables, acked, seen, time.time() + rng.uniform(0.2, 1.5), rng, sheets)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            client.close()
            proc = start_process(db, port)
            client = Client(port, timeout=10)
            for tid, tokens in tables.items():
                spectator = client.state(tid)
                assert spectator["seq"] >= seen.get(tid, 0), "an acknowledged action was lost"
                for seat, token in tokens.items():
                    assert client.state(tid, token)["seat"] == seat      # the link still opens the seat
        drive(client, tables, acked, seen, time.time() + 240, rng)
        for tid in tables:
            status, record = client.call("GET", f"/api/tables/{tid}/record")
            assert status == 200, record
            replay_record(record)                         # the stored log is a legal game to the end
            assert len(record["actions"]) >= seen[tid]
            for seq, (seat, name) in acked[tid].items():
                assert record["actions"][seq] == [seat, name]
        assert sum(len(a) for a in acked.values()) > 50
    finally:
        proc.kill()
        proc.wait(timeout=10)
        client.close()
    with sqlite3.connect(db) as con:
        rows = dict(con.execute("SELECT table_id, COUNT(*) FROM actions GROUP BY table_id").fetchall())
        finished = con.execute("SELECT COUNT(*) FROM tables WHERE finished = 1").fetchone()[0]
    assert all(rows[tid] >= seen[tid] for tid in tables)
    assert finished == len(tables)
