"""The browser table's memory with many finished tables: an empty server against one holding ``--tables``.

    python scripts/bench_serve_memory.py [--tables 1000] [--games 20] [--json]

Plays ``--games`` whole games of agents (pagat: strategic, greedy, random,
greedy; seeds 0, 1, ...) into one SQLite file, then stores each game's table
again under new ids until ``--tables`` finished tables are in the file (each a
whole game with its full action log, as a finished table of people would be).
Then ``handfoot serve`` is started as its own process, first on an empty file,
then on that file, and its resident memory (``VmRSS``) is read after start and
again after the state and the record of every one of the tables (and the
replay page of every 50th) were asked for (each is rebuilt from its log, then
leaves memory).
Prints one JSON line (``--json``) or a table; the target is a ratio under 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.apps.web.client import Client, free_port, start_server  # noqa: E402

SEATS = ["strategic", "greedy", "random", "greedy"]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS (Linux only)")


def fill(db: Path, tables: int, games: int) -> None:
    from experiments.apps.web.store import Store
    from experiments.apps.web.tables import Tables
    made = Tables(Store(db), allow_chosen_seeds=True, max_tables=games + 1, per_client=games + 1,
                  keep_finished=tables + games)
    played = []
    for g in range(games):
        room, _ = made.create({"rules": "pagat", "seats": SEATS, "seed": g, "pace_ms": 0})
        room.run_agents()
        played.append((made.store.tables()[-1], made.store.actions(room.id)))
    store = made.store
    for i in range(tables - games):
        row, actions = played[i % games]
        row.id = f"copy-{i}"
        store.add_table(row)
        with store._transaction() as con:
            con.executemany("INSERT INTO actions (table_id, seq, player, action, at) VALUES (?, ?, ?, ?, 0)",
                            [(row.id, seq, p, name) for seq, (p, name) in enumerate(actions)])
    store.close()


def measure(db: Path, ask: bool) -> dict:
    port = free_port()
    proc = start_server(db, port, "--rate", "0", "--keep-finished", "1000000")
    try:
        client = Client(port, timeout=60)
        client.call("GET", "/api/options")
        time.sleep(1.0)
        started = rss_kib(proc.pid)
        ids = []
        if ask:
            from experiments.apps.web.store import Store
            store = Store(db)
            ids = [row.id for row in store.tables()]
            store.close()
            for i, tid in enumerate(ids):
                paths = [f"/api/tables/{tid}/state", f"/api/tables/{tid}/record"]
                for path in paths + ([f"/table/{tid}/replay"] if i % 50 == 0 else []):
                    status, _ = client.call("GET", path)
                    assert status == 200, (path, status)
        after = rss_kib(proc.pid)
        client.close()
        return {"tables": len(ids), "rss_start_mib": round(started / 1024, 1), "rss_after_mib": round(after / 1024, 1)}
    finally:
        proc.kill()
        proc.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        empty, full = Path(tmp) / "empty.sqlite", Path(tmp) / "full.sqlite"
        t0 = time.time()
        fill(full, args.tables, args.games)
        base = measure(empty, ask=False)
        many = measure(full, ask=True)
    out = {"tables": args.tables, "distinct_games": args.games, "fill_s": round(time.time() - t0, 1),
           "empty": base, "finished": many,
           "ratio_start": round(many["rss_start_mib"] / base["rss_start_mib"], 2),
           "ratio_after": round(many["rss_after_mib"] / base["rss_start_mib"], 2)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"empty server: {base['rss_start_mib']} MiB")
        print(f"{args.tables} finished tables: {many['rss_start_mib']} MiB at start ({out['ratio_start']}x), "
              f"{many['rss_after_mib']} MiB after every table was asked for ({out['ratio_after']}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
