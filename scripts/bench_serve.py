"""Load test of the browser table: a bystander's latency while one client floods the server at its limits.

    python scripts/bench_serve.py [--seconds 20] [--flooders 1] [--agents strategic,greedy,strategic,greedy]
                                  [--json]

Starts ``handfoot serve`` as its own process on a fresh SQLite file with its
default limits (20 requests/s and a burst of 100 per client, 10 tables in play per
client, 40 websockets per client), on loopback.  For ``--seconds``, the flooding
client (127.0.0.1; ``--flooders N`` makes it N clients, 127.0.0.1 .. 127.0.0.N)
keeps creating tables of four agents at pace 0 (each plays its whole game as fast
as the server lets it), asks for the replay page of each of its tables in turn
(404 until its game is over, then the page of a finished game), and holds
open as many spectator websockets as it is allowed, each request as soon as the
last was answered (refusals included).  Meanwhile a bystander (127.0.0.200)
creates a table of its own (a person and three strategic agents at the default
pace) and plays it through the API like a person: it reads its state every 50 ms,
acts when it is its turn, and opens its table page every tenth time.

``--locked N`` measures instead how soon a create is refused (503) while the
SQLite file is locked by another process and N tables of agents at pace 0 try to
write their moves (20 creates; median and maximum seconds).

Reports the bystander's latency (median, 95th percentile and maximum, in ms) for
each kind of request and for all of them, how many of its requests were refused,
and what the flood got (answers by status, agent moves, websockets held).  Every
figure comes from this one run on this machine: the client runs on the same
cores as the server.  Prints one JSON line (``--json``) or a table.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.apps.web.client import Client, free_port, start_server, stop_server  # noqa: E402

BYSTANDER = "127.0.0.200"


def stats(xs):
    xs = sorted(xs)
    if not xs:
        return {"n": 0}
    return {"median_ms": round(statistics.median(xs), 1), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 1),
            "max_ms": round(xs[-1], 1), "n": len(xs)}


class Flood:
    """One flooding client: creates, replay pages and websockets, as fast as it is answered."""

    def __init__(self, port: int, source: str, seats, stop: threading.Event):
        self.port, self.source, self.seats, self.stop = port, source, seats, stop
        self.answers: Counter = Counter()
        self.tables: list = []
        self.sockets_held = 0
        self.sockets_refused = 0

    def creates(self) -> None:
        c = Client(self.port, source=self.source, timeout=60)
        i = 0
        while not self.stop.is_set():
            status, out = c.call("POST", "/api/tables", {"rules": "pagat", "seats": self.seats, "seed": i,
                                                         "pace_ms": 0})
            self.answers[f"create {status}"] += 1
            if status == 201:
                self.tables.append(out["table"])
            i += 1
        c.close()

    def replays(self) -> None:
        c = Client(self.port, source=self.source, timeout=60)
        i = 0
        while not self.stop.is_set():
            if not self.tables:
                time.sleep(0.05)
                continue
            status, _ = c.call("GET", f"/table/{self.tables[i % len(self.tables)]}/replay")   # each table in turn
            self.answers[f"replay {status}"] += 1
            i += 1
        c.close()

    async def _sockets(self) -> None:
        import socket

        import websockets

        async def one() -> None:
            while not self.tables and not self.stop.is_set():
                await asyncio.sleep(0.05)
            if self.stop.is_set():
                return
            sock = socket.socket()
            sock.bind((self.source, 0))
            sock.connect(("127.0.0.1", self.port))
            try:
                async with websockets.connect(f"ws://127.0.0.1:{self.port}/ws/tables/{self.tables[0]}",
                                              origin=f"http://127.0.0.1:{self.port}", sock=sock) as ws:
                    await ws.send(json.dumps({"token": None}))
                    self.sockets_held += 1
                    while not self.stop.is_set():
                        try:
                            await asyncio.wait_for(ws.recv(), 0.5)
                        except asyncio.TimeoutError:
                            pass
            except Exception:  # noqa: BLE001 - a refused or closed socket is what the flood counts
                self.sockets_refused += 1

        await asyncio.gather(*(one() for _ in range(60)))

    def sockets(self) -> None:
        asyncio.run(self._sockets())

    def threads(self):
        return [threading.Thread(target=f, daemon=True) for f in (self.creates, self.replays, self.sockets)]


def bystander(port: int, stop: threading.Event, out: dict) -> None:
    c = Client(port, source=BYSTANDER, timeout=60)
    lat = {"create": [], "state": [], "act": [], "page": []}
    refused = Counter()

    def timed(kind, method, path, body=None, token=None):
        t0 = time.perf_counter()
        status, answer = c.call(method, path, body, token=token)
        lat[kind].append((time.perf_counter() - t0) * 1000)
        if status >= 400:
            refused[f"{kind} {status}"] += 1
        return status, answer

    status, made = timed("create", "POST", "/api/tables", {"rules": "pagat", "seats": ["human"] + ["strategic"] * 3})
    if status != 201:
        out.update(lat=lat, refused=refused, moves=0)
        return
    table, token = made["table"], made["seats"][0]["token"]
    moves, i = 0, 0
    while not stop.is_set():
        status, st = timed("state", "GET", f"/api/tables/{table}/state", token=token)
        if status == 200 and st["to_act"] and not st["game_over"]:
            status, _ = timed("act", "POST", f"/api/tables/{table}/act", {"action": st["legal"][-1], "seq": st["seq"]},
                              token=token)
            moves += status == 200
        if i % 10 == 0:
            timed("page", "GET", f"/table/{table}")
        i += 1
        time.sleep(0.05)
    c.close()
    out.update(lat=lat, refused=refused, moves=moves, table=table)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--flooders", type=int, default=1, help="flooding clients (addresses 127.0.0.1 ..), default 1")
    ap.add_argument("--agents", default="strategic,greedy,strategic,greedy", help="the flood tables' four seats")
    ap.add_argument("--locked", type=int, default=0, metavar="N",
                    help="measure the 503 of a create while the file is locked and N agent tables play")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.locked:
        return locked(args.locked, args.agents.split(","), args.json)
    if not 1 <= args.flooders <= 100 or not 0 < args.seconds <= 600:
        ap.error("--flooders must be 1..100 and --seconds 0..600")
    seats = args.agents.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "bench.sqlite", port)
        stop = threading.Event()
        floods = [Flood(port, f"127.0.0.{k + 1}", seats, stop) for k in range(args.flooders)]
        result: dict = {}
        try:
            threads = [t for f in floods for t in f.threads()]
            for t in threads:
                t.start()
            time.sleep(min(2.0, args.seconds / 4))                  # the flood at full strength first
            watcher = threading.Thread(target=bystander, args=(port, stop, result), daemon=True)
            watcher.start()
            time.sleep(args.seconds)
            moves = _moves(port, [t for f in floods for t in f.tables])
            stop.set()
            watcher.join(timeout=60)
            for t in threads:
                t.join(timeout=10)
        finally:
            stop.set()
            stop_server(proc)
    everything = [x for xs in result.get("lat", {}).values() for x in xs]
    answers = sum((f.answers for f in floods), Counter())
    out = {"seconds": args.seconds, "flooders": args.flooders, "flood_seats": seats,
           "bystander": {k: stats(v) for k, v in result.get("lat", {}).items()},
           "bystander_all": stats(everything), "bystander_refused": dict(result.get("refused", {})),
           "bystander_moves": result.get("moves", 0), "flood_answers": dict(sorted(answers.items())),
           "flood_tables": sum(len(f.tables) for f in floods), "flood_agent_moves": moves,
           "flood_sockets_held": sum(f.sockets_held for f in floods),
           "flood_sockets_refused": sum(f.sockets_refused for f in floods),
           "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1)}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.seconds:.0f} s; {args.flooders} flooding client(s) at the server's limits; load average "
          f"{out['load_avg_1m']} on {out['cpus']} CPUs")
    for k, s in list(out["bystander"].items()) + [("all", out["bystander_all"])]:
        if s["n"]:
            print(f"  bystander {k:<6} median {s['median_ms']:7.1f} ms   p95 {s['p95_ms']:7.1f} ms   "
                  f"max {s['max_ms']:7.1f} ms   ({s['n']} requests)")
    print(f"  bystander refused: {out['bystander_refused'] or 'none'}; its moves: {out['bystander_moves']}")
    print(f"  flood: {out['flood_answers']}; {out['flood_tables']} tables, {out['flood_agent_moves']} agent moves; "
          f"websockets held {out['flood_sockets_held']}, refused {out['flood_sockets_refused']}")
    return 0


def locked(n: int, seats, as_json: bool) -> int:
    """How soon a create answers 503 while another process holds the file's lock and ``n`` agent tables
    (pace 0) try to write."""
    import sqlite3
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        port = free_port()
        proc = start_server(db, port, "--max-tables", str(max(100, n + 10)))
        try:
            for k in range((n + 9) // 10):                      # ten tables per client (the default share)
                c = Client(port, source=f"127.0.0.{k + 1}")
                for i in range(min(10, n - 10 * k)):
                    c.create(rules="pagat", seats=seats, seed=i, pace_ms=0)
                c.close()
            lock = sqlite3.connect(db, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            time.sleep(0.5)
            c = Client(port, source=BYSTANDER)
            took, answers = [], Counter()
            for _ in range(20):
                t0 = time.perf_counter()
                status, _ = c.call("POST", "/api/tables", {"rules": "pagat"})
                took.append(time.perf_counter() - t0)
                answers[status] += 1
            lock.execute("ROLLBACK")
            lock.close()
            c.close()
        finally:
            stop_server(proc)
    took.sort()
    out = {"locked": True, "agent_tables": n, "creates": dict(answers), "median_s": round(statistics.median(took), 3),
           "max_s": round(took[-1], 3), "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1)}
    if as_json:
        print(json.dumps(out))
    else:
        print(f"file locked, {n} agent tables at pace 0: creates answered {dict(answers)} after a median of "
              f"{out['median_s']} s (max {out['max_s']} s); load average {out['load_avg_1m']} on {out['cpus']} CPUs")
    return 0


def _moves(port: int, tables) -> int:
    """Agent moves made at the flood's tables (read by a third client, within its rate)."""
    c = Client(port, source="127.0.0.201", timeout=60)
    total = 0
    for tid in tables[:90]:
        status, st = c.call("GET", f"/api/tables/{tid}/state")
        total += st["seq"] if status == 200 else 0
    c.close()
    return total


if __name__ == "__main__":
    sys.exit(main())
