"""The browser table's web application (starlette): pages, the JSON API and a websocket per page.

=======================================  ====================================================
route                                    what
=======================================  ====================================================
``GET /``                                the start page: create a table
``GET /table/ID``                        a seat's page (its token in the address's ``#``
                                         fragment, never sent in a URL) or the spectator's
``GET /table/ID/replay``                 the finished game in the replay viewer
``POST /api/tables``                     create a table: ``{"rules", "seats", "seed", "pace_ms"}``
``GET /api/tables/ID/state``             the seat's state (``Authorization: Bearer TOKEN``;
                                         without one, the spectator's)
``POST /api/tables/ID/act``              ``{"action": NAME, "seq": N}`` (``seq`` optional)
``POST /api/tables/ID/leave``            the seat's person leaves; the table's stand-in plays it
``POST /api/tables/ID/back``             the seat's person, away after the turn timeout, is back
``GET /api/tables/ID/record``            the game record once the game is over
``GET /api/options``                     the presets and the seat kinds this server offers
                                         (``seats_for``: per preset, the kinds that can play it)
``WS /ws/tables/ID``                     first message ``{"token": TOKEN or null}``, then the
                                         server sends ``{"type": "state", "state": ...}`` on
                                         every change
=======================================  ====================================================

Every request is checked: an unknown table or route, a wrong or missing token,
an illegal or stale action, a malformed, oversized or slow body, too many
requests or tables each get a status and ``{"error": "..."}`` (JSON on every
route), and nothing changes.  A database that is locked or failing answers 503
with ``{"error": ...}`` on every route (after at most twice
``store.BUSY_TIMEOUT``), and any other failure 500 with ``{"error": ...}``,
logged; no answer names a server path.  Every route is rate-limited per client
(:mod:`experiments.apps.web.guard`: its connection's address unless it comes
through a trusted proxy); a request with a valid seat token has a bucket of its
own (so made-up tokens share their client's bucket), one client holds at most
``Limits.max_sockets_per_client`` websockets and ``Limits.tables_per_client``
tables in play.  Hosts other than localhost are refused unless the server is
bound elsewhere (DNS rebinding), websockets must come from the page's own
origin, and POSTs must be JSON (so that no other site's form can post).

Nothing slow runs on the event loop: the tables' work (creating, acting, reading
the file, rebuilding a table) runs in a pool of request threads, the agents'
moves in a pool of their own (one move at a time per table, the tables taking
turns), so a create returns at once whatever its seats and one table's agents
never hold up another client's request.  Each table in play has a task that
plays its agents at the table's pace and, when a person is past
``--turn-timeout``, has the stand-in take over (:meth:`Room.time_out`).
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import sqlite3
import traceback
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Callable, Dict, Optional, Sequence, Tuple

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from experiments.apps.viewer import build_html
from experiments.apps.web.guard import (LOCAL_HOSTS, Guard, RateLimiter, client_key, is_local, parse_proxies,
                                        same_origin)
from experiments.apps.web.rooms import (ABANDON_AFTER, HUMAN, KEEP_FINISHED, TURN_TIMEOUT, Room, TableError,
                                        log)
from experiments.apps.web.store import Store
from experiments.apps.web.tables import Tables
from handfoot_env.config import PRESETS, load_rules

STATIC = {"table.js": "text/javascript", "table.css": "text/css", "index.js": "text/javascript",
          "viewer.css": "text/css", "favicon.svg": "image/svg+xml"}
#: the longest wait between two tries of an agent's move that could not be saved
RETRY_MAX_S = 10.0
#: finished games' replay pages kept built
REPLAY_CACHE = 16
HEADERS = {"Content-Security-Policy": "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
           "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
           "Cache-Control": "no-store"}


@dataclass
class Limits:
    """What one server allows: tables in play (all, and per client), request body and websocket message
    bytes, seconds for a request body to arrive, requests per second per client and token (``rate`` 0:
    no limit; ``burst`` requests may come at once), websockets, and how long (seconds) a pace-0 table's
    agents may take before a person's act is answered."""

    max_tables: int = 100
    tables_per_client: int = 10
    max_body: int = 8192
    body_timeout: float = 10.0
    rate: float = 20.0
    burst: int = 100
    max_sockets: int = 400
    max_sockets_per_client: int = 40
    settle_s: float = 10.0


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> str:
    if name == "viewer.css":                    # the replay viewer's cards, melds and piles
        return resources.files("experiments.apps").joinpath(name).read_text(encoding="utf-8")
    return resources.files("experiments.apps.web").joinpath("static", name).read_text(encoding="utf-8")


class WebApp:
    """The routes over a :class:`Tables`; ``app`` is the ASGI application.  ``host``: the address the
    server is bound to (a loopback address other than 127.0.0.1 is accepted as a Host too); ``proxies``:
    the trusted proxies (:func:`~experiments.apps.web.guard.parse_proxies`)."""

    def __init__(self, tables: Tables, limits: Limits = Limits(), local_only: bool = True,
                 host: Optional[str] = None, proxies: Sequence = (), workers: int = 4, agent_workers: int = 2):
        self.tables = tables
        self.limits = limits
        self.limiter = RateLimiter(limits.rate, limits.burst)
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="handfoot-request")
        self.agent_pool = ThreadPoolExecutor(agent_workers, thread_name_prefix="handfoot-agents")
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.wakes: Dict[str, asyncio.Event] = {}
        self.tasks: Dict[str, asyncio.Task] = {}
        self.replays: "OrderedDict[str, str]" = OrderedDict()
        self.sockets = 0
        self.client_sockets: Dict[str, int] = {}
        self._options: Optional[dict] = None
        tables.on_load = lambda room: self.loop.call_soon_threadsafe(self.watch, room)
        tables.on_unload = lambda room: self.loop.call_soon_threadsafe(self.unwatch, room)
        routes = [
            Route("/", self.index), Route("/favicon.ico", self.favicon), Route("/table/{tid}", self.table_page),
            Route("/table/{tid}/replay", self.replay_page), Route("/static/{name}", self.static),
            Route("/api/options", self.options), Route("/api/tables", self.create, methods=["POST"]),
            Route("/api/tables/{tid}/state", self.state), Route("/api/tables/{tid}/act", self.act, methods=["POST"]),
            Route("/api/tables/{tid}/leave", self.leave, methods=["POST"]),
            Route("/api/tables/{tid}/back", self.back, methods=["POST"]),
            Route("/api/tables/{tid}/record", self.record), WebSocketRoute("/ws/tables/{tid}", self.socket),
        ]
        hosts = list(LOCAL_HOSTS) + ["[::1]"] + ([host] if host else []) if local_only else None
        app = Starlette(routes=routes, lifespan=self.lifespan,
                        exception_handlers={HTTPException: self._http_error, TableError: self._table_error,
                                            sqlite3.Error: self._db_error, Exception: self._failure})
        self.app = Guard(app, hosts, proxies)

    async def _http_error(self, request, exc: HTTPException) -> Response:
        what = {404: "no such page", 405: "this method is not allowed here"}.get(exc.status_code, str(exc.detail))
        return _error(f"{what}: {request.method} {request.url.path[:100]}", exc.status_code)

    async def _table_error(self, request, exc: TableError) -> Response:
        return _error(str(exc), exc.status)

    async def _db_error(self, request, exc: Exception) -> Response:
        log(f"the database failed ({exc}) at {request.url.path}")
        return _error(f"the server's database is busy or failing ({exc}); try again shortly", 503)

    async def _failure(self, request, exc: Exception) -> Response:
        log(f"internal error at {request.url.path}: {''.join(traceback.format_exception(exc)).strip()}")
        return _error("the server failed to answer this request (its log says why)", 500)

    async def _run(self, fn: Callable, *args):
        """``fn(*args)`` in a request thread (the tables' work never runs on the event loop)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))

    def _setter(self, event: asyncio.Event) -> Callable[[Room], None]:
        """A room listener (called from any thread) that sets ``event`` on the event loop."""
        loop = asyncio.get_running_loop()
        return lambda _room: loop.call_soon_threadsafe(event.set)

    # ------------------------------------------------------------------ agents and stand-ins
    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        self.loop = asyncio.get_running_loop()
        for room in list(self.tables.rooms.values()):
            self.watch(room)
        sweeper = self.loop.create_task(self._sweeper())
        yield
        sweeper.cancel()
        for task in list(self.tasks.values()):
            task.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.agent_pool.shutdown(wait=False, cancel_futures=True)

    async def _sweeper(self) -> None:
        """Take abandoned tables out of play now and then (a create does too), so that their stand-ins stop
        and they leave memory."""
        every = min(60.0, max(0.05, self.tables.abandon_after / 4))
        while True:
            await asyncio.sleep(every)
            try:
                await self._run(self.tables.sweep)
            except Exception as e:  # noqa: BLE001 - the next round tries again
                log(f"could not take abandoned tables out of play ({type(e).__name__}: {e})")

    def watch(self, room: Room) -> None:
        """Let the table play on by itself: its agents at its pace, the stand-in for a person past the turn
        timeout (a task per table in play)."""
        if room.over or not room.live or room.id in self.tasks:
            return
        wake = self.wakes[room.id] = asyncio.Event()
        room.listeners.append(self._setter(wake))
        task = self.tasks[room.id] = asyncio.get_running_loop().create_task(self._runner(room, wake))
        task.add_done_callback(lambda t, tid=room.id: self._ended(tid, t))

    def unwatch(self, room: Room) -> None:
        task = self.tasks.get(room.id)
        if task is not None:
            task.cancel()

    def _ended(self, tid: str, task: asyncio.Task) -> None:
        if self.tasks.get(tid) is task:
            del self.tasks[tid]
            self.wakes.pop(tid, None)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            log(f"table {tid}: its agents stopped: {''.join(traceback.format_exception(exc)).strip()}")

    async def _runner(self, room: Room, wake: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        pace = room.row.pace_ms / 1000
        delay = 0.1
        while room.live and not room.over:
            wake.clear()
            try:
                if room.agent_to_act():
                    await asyncio.sleep(pace if room.trouble is None else delay)
                    await loop.run_in_executor(self.agent_pool, room.agent_step)
                else:
                    deadline = room.deadline()
                    timeout = None if deadline is None else max(0.0, deadline - room.clock())
                    try:
                        await asyncio.wait_for(wake.wait(), timeout)
                        continue
                    except asyncio.TimeoutError:
                        await self._run(room.time_out)
            except TableError as e:               # the database failed: nothing was applied; try again
                if e.status == 409:                # retired meanwhile
                    return
                if room.trouble is None:
                    log(f"table {room.id}: an agent's move could not be saved ({e}); retrying")
                await self._run(room.set_trouble, "the server could not save an agent's move; it retries")
                delay = min(RETRY_MAX_S, delay * 2)
                await asyncio.sleep(delay)
                continue
            if room.trouble is not None:
                log(f"table {room.id}: agents play on")
                await self._run(room.set_trouble, None)
            delay = 0.1

    async def _settle(self, room: Room) -> None:
        """At a pace-0 table, wait (up to ``Limits.settle_s``) until no agent is to act."""
        if room.row.pace_ms or not room.agent_to_act():
            return
        event = asyncio.Event()
        listener = self._setter(event)
        room.listeners.append(listener)
        loop = asyncio.get_running_loop()
        end = loop.time() + self.limits.settle_s
        try:
            while room.live and room.agent_to_act() and room.trouble is None:
                event.clear()
                if not room.agent_to_act():
                    break
                await asyncio.wait_for(event.wait(), max(0.0, end - loop.time()))
        except asyncio.TimeoutError:
            pass
        finally:
            room.listeners.remove(listener)

    # ------------------------------------------------------------------ checks
    def _client(self, request) -> str:
        return request.client.host if request.client else "?"

    def _limited(self, request, room: Optional[Room] = None, seat: Optional[int] = None,
                 cost: float = 1.0) -> Optional[JSONResponse]:
        """Refuse a request over its bucket: a checked seat's own, else its client address's."""
        key: Tuple[str, ...] = (client_key(self._client(request)),)
        if room is not None and seat is not None:
            key += (room.id, str(seat))
        if not self.limiter.allow(key, cost):
            return _error("too many requests; slow down", 429)
        return None

    async def _room(self, tid: str, revive: bool = False) -> Room:
        room = self.tables.rooms.get(tid)
        if room is not None:
            return room
        return await self._run(self.tables.get, tid, revive)

    async def _checked(self, request, tid: str, token: Optional[str]):
        """The room and the token's seat, or the error response (404, 401 and 429 alike count against the
        client's bucket, so that made-up tokens are limited with their client).  A person's own request
        brings their abandoned table back into play."""
        try:
            room = await self._room(tid)
            seat = self._seat(room, token)
        except TableError as e:
            return None, None, self._limited(request) or _error(str(e), e.status)
        limited = self._limited(request, room, seat)
        if limited is None and seat is not None and not room.live and not room.over:
            room = await self._room(tid, revive=True)
        return room, seat, limited

    @staticmethod
    def _token(request: Request) -> Optional[str]:
        header = request.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise TableError("the Authorization header must be 'Bearer TOKEN'", 401)
        return token.strip()

    def _seat(self, room: Room, token: Optional[str]) -> Optional[int]:
        if token is None:
            return None
        seat = room.seat_of(token)
        if seat is None:
            raise TableError("this token is not a seat of this table", 401)
        return seat

    async def _body(self, request: Request, empty_ok: bool = False) -> object:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        length = request.headers.get("content-length")
        if empty_ok and not ctype and length in (None, "0"):
            return {}
        if ctype != "application/json":
            raise TableError("the request body must be JSON (Content-Type: application/json)", 415)
        origin = request.headers.get("origin")
        if origin is not None and not same_origin(origin, request.headers.get("host")):
            raise TableError("cross-origin requests are not accepted", 403)
        if length is not None and (not length.isdigit() or int(length) > self.limits.max_body):
            raise TableError(f"the request body is larger than {self.limits.max_body} bytes", 413)
        try:
            data = await asyncio.wait_for(self._read(request), self.limits.body_timeout)
        except asyncio.TimeoutError:
            raise TableError(f"the request body did not arrive within {self.limits.body_timeout:g} s", 408) from None
        if empty_ok and not data:
            return {}
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise TableError("the request body is not valid JSON (or nested too deeply)", 400) from None

    async def _read(self, request: Request) -> bytes:
        data = b""
        async for chunk in request.stream():
            data += chunk
            if len(data) > self.limits.max_body:
                raise TableError(f"the request body is larger than {self.limits.max_body} bytes", 413)
        return data

    async def _message(self, room: Room, seat: Optional[int]) -> dict:
        cached = room._cache.get(seat)
        return cached if cached is not None else await self._run(room.message, seat)

    # ------------------------------------------------------------------ API
    async def options(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        if self._options is None:
            self._options = await self._run(self._build_options)
        return JSONResponse(self._options, headers=HEADERS)

    def _build_options(self) -> dict:
        rules = {name: load_rules(name) for name in PRESETS}
        return {"rules": {name: r.players for name, r in rules.items()},
                "seats": [HUMAN] + list(self.tables.allowed),
                "teams": {name: r.teams for name, r in rules.items()},
                "seats_for": {name: self.tables.seat_kinds(name) for name in PRESETS},
                "chosen_seeds": "allowed" if self.tables.allow_chosen_seeds else "one person only",
                "turn_timeout": self.tables.turn_timeout or None, "tables_per_client": self.tables.per_client,
                "offer_games": self.tables.offer_games}

    async def create(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        try:
            body = await self._body(request)
            room, tokens = await self._run(self.tables.create, body, client_key(self._client(request)))
        except TableError as e:
            return _error(str(e), e.status)
        base = f"{request.url.scheme}://{request.url.netloc}"
        seats = []
        for p, kind in enumerate(room.labels):
            entry = {"seat": p, "player": f"player_{p}", "kind": kind, "team": room.game.team_of[p]}
            if p in tokens:
                entry.update(token=tokens[p], url=f"{base}/table/{room.id}#{tokens[p]}")
            seats.append(entry)
        self.watch(room)
        out = {"table": room.id, "seats": seats, "spectator": f"{base}/table/{room.id}",
               "stand_in": room.row.stand_in}
        if room.row.seed_chosen:
            out["seed"] = str(room.row.seed)
        return JSONResponse(out, status_code=201, headers=HEADERS)

    async def state(self, request: Request) -> Response:
        try:
            token = self._token(request)
        except TableError as e:
            return self._limited(request) or _error(str(e), e.status)
        room, seat, refused = await self._checked(request, request.path_params["tid"], token)
        if refused is not None:
            return refused
        return JSONResponse(await self._message(room, seat), headers=HEADERS)

    async def _seat_request(self, request: Request):
        """The room and seat of a request that needs a seat's token, or the refusal."""
        try:
            token = self._token(request)
            if token is None:
                raise TableError("this needs the seat's token: Authorization: Bearer TOKEN", 401)
        except TableError as e:
            return None, None, self._limited(request) or _error(str(e), e.status)
        return await self._checked(request, request.path_params["tid"], token)

    async def act(self, request: Request) -> Response:
        room, seat, refused = await self._seat_request(request)
        if refused is not None:
            return refused
        try:
            body = await self._body(request)
            if not isinstance(body, dict) or set(body) - {"action", "seq"} or "action" not in body:
                raise TableError('the request body must be {"action": NAME} or {"action": NAME, "seq": N}', 400)
            await self._run(room.act, seat, body["action"], body.get("seq"))
        except TableError as e:
            return _error(str(e), e.status)
        await self._settle(room)
        return JSONResponse(await self._message(room, seat), headers=HEADERS)

    async def leave(self, request: Request) -> Response:
        return await self._seat_post(request, "leave")

    async def back(self, request: Request) -> Response:
        return await self._seat_post(request, "back")

    async def _seat_post(self, request: Request, what: str) -> Response:
        """A seat's person leaves the table or is back (``Room.leave``, ``Room.back``): no fields."""
        room, seat, refused = await self._seat_request(request)
        if refused is not None:
            return refused
        try:
            body = await self._body(request, empty_ok=True)
            if body != {}:
                raise TableError(f"{what} takes no fields: send {{}} or nothing", 400)
            await self._run(getattr(room, what), seat)
        except TableError as e:
            return _error(str(e), e.status)
        return JSONResponse(await self._message(room, seat), headers=HEADERS)

    async def record(self, request: Request) -> Response:
        room, _, refused = await self._checked(request, request.path_params["tid"], None)
        if refused is not None:
            return refused
        if not room.over:
            return _error("the game is not over yet; its record is published at the end", 409)
        return JSONResponse(await self._run(room.record), headers=HEADERS)

    # ------------------------------------------------------------------ pages
    async def index(self, request: Request) -> Response:
        return self._limited(request) or HTMLResponse(_asset("index.html"), headers=HEADERS)

    async def favicon(self, request: Request) -> Response:
        return self._limited(request) or Response(_asset("favicon.svg"), media_type=STATIC["favicon.svg"],
                                                  headers={"Cache-Control": "max-age=86400"})

    async def table_page(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        if not self.tables.exists(request.path_params["tid"]):     # the page says so, with the way back
            return HTMLResponse(_asset("table.html"), status_code=404, headers=HEADERS)
        return HTMLResponse(_asset("table.html"), headers=HEADERS)

    async def replay_page(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        tid = request.path_params["tid"]
        page = self.replays.get(tid)
        if page is None:
            try:
                room = await self._room(tid)
            except TableError as e:
                return _error(str(e), e.status)
            if not room.over:
                return _error("no finished game here: the replay opens once the game is over", 404)
            page = await self._run(lambda: build_html(room.record(), source=f"table {room.id}"))
            self.replays[tid] = page
            while len(self.replays) > REPLAY_CACHE:
                self.replays.popitem(last=False)
        self.replays.move_to_end(tid)
        return HTMLResponse(page, headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY"})

    async def static(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        name = request.path_params["name"]
        if name not in STATIC:
            return _error("no such file", 404)
        return Response(_asset(name), media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    # ------------------------------------------------------------------ websocket
    async def socket(self, ws: WebSocket) -> None:
        if not same_origin(ws.headers.get("origin"), ws.headers.get("host")):
            await ws.close(code=1008, reason="origin not allowed")
            return
        client = client_key(self._client(ws))
        if not self.limiter.allow((client, "websocket")):
            await ws.close(code=1008, reason="too many connections; slow down")
            return
        try:
            room = await self._room(ws.path_params["tid"])
        except (TableError, sqlite3.Error) as e:
            await ws.close(code=1008 if isinstance(e, TableError) else 1013, reason=str(e)[:120])
            return
        held = self.client_sockets.get(client, 0)
        if self.sockets >= self.limits.max_sockets or held >= self.limits.max_sockets_per_client:
            await ws.close(code=1008, reason="too many connections")
            return
        await ws.accept()
        self.sockets += 1
        self.client_sockets[client] = held + 1
        room.sockets += 1
        try:
            seat = await self._hello(ws, room)
            if seat is not False:
                if seat is not None and not room.live and not room.over:
                    room = await self._room(room.id, revive=True)       # its person is back
                await self._push(ws, room, seat)
        except WebSocketDisconnect:
            pass
        finally:
            self.sockets -= 1
            room.sockets -= 1
            left = self.client_sockets.get(client, 1) - 1
            if left:
                self.client_sockets[client] = left
            else:
                self.client_sockets.pop(client, None)

    async def _hello(self, ws: WebSocket, room: Room):
        try:
            text = await asyncio.wait_for(ws.receive_text(), timeout=10)
            hello = json.loads(text) if len(text) <= self.limits.max_body else None
            token = hello.get("token") if isinstance(hello, dict) else False
            if token is not None and not isinstance(token, str):
                raise TableError('the first message must be {"token": TOKEN or null}', 400)
            seat = room.seat_of(token) if token else None
            if token and seat is None:
                raise TableError("this token is not a seat of this table", 401)
            return seat
        except (asyncio.TimeoutError, ValueError, KeyError, RecursionError) as e:
            message = str(e) if isinstance(e, TableError) else 'the first message must be {"token": TOKEN or null}'
            await ws.send_json({"type": "error", "error": message})
            await ws.close(code=1008)
            return False

    async def _push(self, ws: WebSocket, room: Room, seat: Optional[int]) -> None:
        changed = asyncio.Event()
        changed.set()
        listener = self._setter(changed)
        room.listeners.append(listener)
        reader = asyncio.ensure_future(self._drain(ws))
        try:
            while not reader.done():
                waiter = asyncio.ensure_future(changed.wait())
                await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if room.retired and not reader.done():          # replaced by a new copy: the page reconnects
                    await ws.close(code=1012, reason="the table was reloaded; reconnect")
                    return
                if changed.is_set() and not reader.done():
                    changed.clear()
                    await ws.send_json({"type": "state", "state": await self._message(room, seat)})
        finally:
            room.listeners.remove(listener)
            reader.cancel()

    async def _drain(self, ws: WebSocket) -> None:
        """Read (and drop) what the page sends until it goes; an oversized message closes the socket."""
        while True:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            if len(msg.get("text") or msg.get("bytes") or "") > self.limits.max_body:
                await ws.close(code=1009)
                return


def make_app(db, agents=(), limits: Limits = Limits(), local_only: bool = True, durable: bool = False,
             records=None, allow_chosen_seeds: bool = False, abandon_after: float = ABANDON_AFTER,
             host: Optional[str] = None, turn_timeout: float = TURN_TIMEOUT, keep_finished: int = KEEP_FINISHED,
             trusted_proxies=(), offer_games: bool = True) -> WebApp:
    """The application over the SQLite file ``db`` (created if missing; its tables are restored);
    ``records``: a folder that receives every finished game's record as ``ID.json``;
    ``allow_chosen_seeds``: tables of several persons may be dealt from a seed their creator chose;
    ``abandon_after``: seconds without a person's action after which a table stops counting as in play;
    ``turn_timeout``: seconds a person has to act before the table's stand-in does (0: no limit);
    ``keep_finished``: finished tables kept in the file; ``trusted_proxies``: the proxies whose forwarded
    headers are believed (``"ADDR,ADDR"`` or a list); ``offer_games``: whether new tables' finished games may
    be offered for datasets (the start page says which)."""
    store = Store(db, durable=durable)
    tables = Tables(store, agents=agents, max_tables=limits.max_tables, records=records,
                    allow_chosen_seeds=allow_chosen_seeds, abandon_after=abandon_after, turn_timeout=turn_timeout,
                    per_client=limits.tables_per_client, keep_finished=keep_finished, offer_games=offer_games)
    return WebApp(tables, limits, local_only, host=host, proxies=parse_proxies(trusted_proxies))


__all__ = ["WebApp", "Limits", "make_app", "same_origin", "is_local", "client_key", "RateLimiter", "LOCAL_HOSTS"]
