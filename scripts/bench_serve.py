"""Benchmark of the browser table: page latency while many tables of agents play.

    python scripts/bench_serve.py [--tables 20] [--pace-ms 100] [--seconds 30] [--agents strategic,greedy]

Starts ``handfoot serve`` as its own process on a fresh SQLite file, creates
``--tables`` tables of four agent seats (every action written to the file as in
play), connects one spectator websocket per table (so every move is also pushed),
then for ``--seconds`` asks, table after table, for the seat page
(``GET /table/ID``) and the state (``GET /api/tables/ID/state``), and reports the
median, 95th percentile and maximum latency of each and the agent moves the server
made meanwhile.  Prints one JSON line (``--json``) or a table.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web_client import Client, free_port, start_process  # noqa: E402


async def _sockets(port: int, tables, stop: asyncio.Event, pushes: list) -> None:
    import websockets

    async def one(tid: str) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws/tables/{tid}",
                                      origin=f"http://127.0.0.1:{port}") as ws:
            await ws.send(json.dumps({"token": None}))
            while not stop.is_set():
                try:
                    await asyncio.wait_for(ws.recv(), 0.5)
                    pushes[0] += 1
                except asyncio.TimeoutError:
                    pass

    await asyncio.gather(*(one(t) for t in tables))


def _socket_thread(port, tables, pushes):
    import threading
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    thread = threading.Thread(target=lambda: loop.run_until_complete(_sockets(port, tables, stop, pushes)), daemon=True)
    thread.start()
    return lambda: (loop.call_soon_threadsafe(stop.set), thread.join(timeout=5))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--pace-ms", type=int, default=100, help="agent pace of every table (default 100)")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--agents", default="strategic,greedy,strategic,greedy", help="the four seats' specs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    seats = args.agents.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_process(Path(tmp) / "bench.sqlite", port, "--max-tables", str(max(100, args.tables)))
        try:
            client = Client(port)
            tables = [client.create(rules="pagat", seats=seats, seed=i, pace_ms=args.pace_ms)["table"]
                      for i in range(args.tables)]
            pushes = [0]
            stop_sockets = _socket_thread(port, tables, pushes)
            start_seq = sum(client.state(t)["seq"] for t in tables)
            page, state = [], []
            t_end = time.time() + args.seconds
            i = 0
            while time.time() < t_end:
                tid = tables[i % len(tables)]
                t0 = time.perf_counter()
                status, _ = client.call("GET", f"/table/{tid}")
                t1 = time.perf_counter()
                status2, _ = client.call("GET", f"/api/tables/{tid}/state")
                t2 = time.perf_counter()
                assert status == 200 and status2 == 200
                page.append((t1 - t0) * 1000)
                state.append((t2 - t1) * 1000)
                i += 1
                time.sleep(0.01)
            moves = sum(client.state(t)["seq"] for t in tables) - start_seq
            stop_sockets()
        finally:
            proc.kill()
            proc.wait()

    def stats(xs):
        xs = sorted(xs)
        return {"median_ms": round(statistics.median(xs), 2), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 2),
                "max_ms": round(xs[-1], 2), "n": len(xs)}

    out = {"tables": args.tables, "seats": seats, "pace_ms": args.pace_ms, "seconds": args.seconds,
           "page": stats(page), "state": stats(state), "agent_moves_per_s": round(moves / args.seconds, 1),
           "pushes": pushes[0], "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.tables} tables x 4 agents ({','.join(seats)}), pace {args.pace_ms} ms, {args.seconds:.0f} s; "
              f"load average {out['load_avg_1m']} on {out['cpus']} CPUs")
        for k in ("page", "state"):
            s = out[k]
            print(f"  {k:<6} median {s['median_ms']:7.2f} ms   p95 {s['p95_ms']:7.2f} ms   max {s['max_ms']:7.2f} ms"
                  f"   ({s['n']} requests)")
        print(f"  agents made {out['agent_moves_per_s']} moves/s; {out['pushes']} websocket pushes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
