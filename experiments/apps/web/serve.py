"""``handfoot serve``: the browser table (docs/playing.md; the JSON API in docs/interface.md).

    handfoot serve [--host 127.0.0.1] [--port 8000] [--db PATH]

Needs the ``web`` extra (``bash scripts/setup.sh web``, which adds it to the set-up's venv); without it
the command says so in one line.  Binds to localhost unless told otherwise, and warns when
bound elsewhere: the server speaks plain HTTP, so on a network anyone who sees the
traffic sees the seat links (docs/reverse_proxy.md: HTTPS in front of it).
Ctrl-C stops it: one line, exit status 130.
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Optional, Sequence

from pathlib import Path

from experiments.config import CommandParser, command

MISSING = ("the browser table needs the 'web' extra (starlette, uvicorn, websockets): "
           "bash scripts/setup.sh web")


def serve_parser():
    from experiments.apps.web.rooms import DEFAULT_AGENTS, KEEP_FINISHED, PER_CLIENT, TURN_TIMEOUT
    from experiments.apps.web.store import default_db_path
    ap = CommandParser(prog="handfoot serve",
                       description="Play Hand and Foot in the browser: people and agents at one table "
                                   "(docs/playing.md).")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    ap.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    ap.add_argument("--db", default=None, metavar="PATH",
                    help=f"SQLite file of the tables (default {default_db_path()})")
    ap.add_argument("--agent", action="append", default=[], metavar="SPEC",
                    help=f"offer one more seat kind, e.g. policy:runs/quickstart-s0/best (repeatable; always offered: "
                         f"{', '.join(DEFAULT_AGENTS)}). Only the server's operator may name files or code")
    ap.add_argument("--max-tables", type=int, default=100, help="tables in play at once (default 100)")
    ap.add_argument("--rate", type=float, default=20.0,
                    help="requests per second per client and seat, 0 for no limit (default 20)")
    ap.add_argument("--records", default=None, metavar="DIR",
                    help="also write every finished game's record to DIR/TABLE.json (the replay format)")
    ap.add_argument("--allow-chosen-seeds", action="store_true",
                    help="let a table of more than one person be dealt from a seed its creator chose (whoever "
                         "chose it knows every hand; by default only a table of one person may choose)")
    ap.add_argument("--abandon-after", type=float, default=6.0, metavar="HOURS",
                    help="a table nobody has played at for this long stops counting against --max-tables and "
                         "leaves memory; its links still work (default 6)")
    ap.add_argument("--durable", action="store_true",
                    help="sync every action to disk (survives a power cut, not only a killed server)")
    ap.add_argument("--turn-timeout", type=float, default=TURN_TIMEOUT, metavar="SECONDS",
                    help="a person who has not made their move (or confirmed a round's sheet) this many seconds "
                         "after it became theirs has it made by the table's stand-in agent, said to everyone; "
                         f"0 for no limit (default {TURN_TIMEOUT:g})")
    ap.add_argument("--tables-per-client", type=int, default=PER_CLIENT, metavar="N",
                    help=f"tables in play one client (address) may hold at once (default {PER_CLIENT})")
    ap.add_argument("--keep-finished", type=int, default=KEEP_FINISHED, metavar="N",
                    help="finished tables kept in the file; the oldest beyond N are deleted (their records stay in "
                         f"--records) (default {KEEP_FINISHED})")
    ap.add_argument("--no-offer-games", action="store_true",
                    help="mark this server's tables as not to be offered for datasets (handfoot dataset "
                         "from-records leaves them out; the start page says so); the file keeps what the server "
                         "needs either way")
    ap.add_argument("--trusted-proxies", default="", metavar="ADDR[,ADDR]",
                    help="the only peers whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or "
                         "networks; none by default: a client is its connection's address); docs/reverse_proxy.md")
    return ap


@command("serve")
def serve_main(argv: Optional[Sequence[str]] = None) -> int:
    ap = serve_parser()
    args = ap.parse_args(list(argv) if argv is not None else None)
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {args.port}")
    if args.max_tables < 1 or args.rate < 0:
        raise ValueError("--max-tables must be at least 1 and --rate at least 0")
    if not args.abandon_after > 0:
        raise ValueError(f"--abandon-after must be a positive number of hours, got {args.abandon_after}")
    if not 0 <= args.turn_timeout < float("inf"):
        raise ValueError(f"--turn-timeout must be 0 (no limit) or a number of seconds, got {args.turn_timeout}")
    if not 1 <= args.tables_per_client <= args.max_tables:
        raise ValueError(f"--tables-per-client must be from 1 to --max-tables ({args.max_tables}), "
                         f"got {args.tables_per_client}")
    if args.keep_finished < 0:
        raise ValueError(f"--keep-finished must be at least 0, got {args.keep_finished}")
    missing = [m for m in ("starlette", "uvicorn", "websockets") if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(f"{MISSING} (missing: {', '.join(missing)})")
    import uvicorn

    from agents.registry import make_agent
    from experiments.apps.web.guard import parse_proxies, uvicorn_config
    from experiments.apps.web.server import Limits, is_local, make_app
    from experiments.apps.web.store import default_db_path

    proxies = parse_proxies(args.trusted_proxies)         # a bad address: one line now

    for spec in args.agent:
        make_agent(spec, 0)                       # a bad spec or file: one line now, not at the first table
    if args.records:
        if Path(args.records).exists() and not Path(args.records).is_dir():
            raise ValueError(f"--records {args.records}: not a folder")
        Path(args.records).mkdir(parents=True, exist_ok=True)
    local = is_local(args.host)
    db = args.db or default_db_path()
    limits = Limits(max_tables=args.max_tables, rate=args.rate, tables_per_client=args.tables_per_client)
    web = make_app(db, agents=args.agent, limits=limits, local_only=local, durable=args.durable,
                   records=args.records, allow_chosen_seeds=args.allow_chosen_seeds,
                   abandon_after=args.abandon_after * 3600, host=args.host, turn_timeout=args.turn_timeout,
                   keep_finished=args.keep_finished, trusted_proxies=proxies, offer_games=not args.no_offer_games)
    if not local:
        print(f"handfoot serve: warning: listening on {args.host}, not only this machine; the server speaks "
              "plain HTTP, so anyone on the network who sees the traffic sees the seat links", file=sys.stderr)
    shown = args.host if ":" not in args.host else f"[{args.host}]"
    damaged = len(web.tables.damaged)
    print(f"handfoot serve: http://{shown}:{args.port}/ ({len(web.tables.rooms)} in play of "
          f"{len(web.tables.rows)} tables in {db}" + (f"; {damaged} damaged, skipped: see above" if damaged else "")
          + "); Ctrl-C stops", flush=True)
    server = uvicorn.Server(uvicorn_config(web.app, args.host, args.port, web.limits.max_body))
    try:
        server.run()                      # uvicorn stops on Ctrl-C, then raises it again
    except KeyboardInterrupt:
        raise KeyboardInterrupt("stopped (Ctrl-C); every acknowledged action is in the file") from None
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve_main())
