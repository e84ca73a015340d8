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
``GET /api/tables/ID/record``            the game record once the game is over
``GET /api/options``                     the presets and the seat kinds this server offers
``WS /ws/tables/ID``                     first message ``{"token": TOKEN or null}``, then the
                                         server sends ``{"type": "state", "state": ...}`` on
                                         every change
=======================================  ====================================================

Every request is checked: an unknown table, a wrong or missing token, an
illegal or stale action, a malformed or oversized body, too many requests or
tables each get a status and ``{"error": "..."}``, and nothing changes.  Hosts
other than localhost are refused unless the server is bound elsewhere
(DNS rebinding), websockets must come from the page's own origin, and POSTs
must be JSON (so that no other site's form can post).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from importlib import resources
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from experiments.apps.viewer import build_html
from experiments.apps.web.rooms import HUMAN, Room, TableError, Tables
from experiments.apps.web.store import Store
from handfoot_env.config import PRESETS, load_rules

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
STATIC = {"table.js": "text/javascript", "table.css": "text/css", "index.js": "text/javascript",
          "viewer.css": "text/css"}
HEADERS = {"Content-Security-Policy": "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:",
           "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff",
           "Cache-Control": "no-store"}


@dataclass
class Limits:
    """What one server allows: tables in play, request body and websocket message bytes, requests per
    second per client and token (``rate`` 0: no limit; ``burst`` requests may come at once)."""

    max_tables: int = 100
    max_body: int = 8192
    rate: float = 20.0
    burst: int = 100
    max_sockets: int = 400


class RateLimiter:
    """A token bucket per key (client address and seat token)."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = float(rate), float(burst)
        self.buckets: Dict[Tuple[str, str], Tuple[float, float]] = {}

    def allow(self, key: Tuple[str, str]) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        level, last = self.buckets.get(key, (self.burst, now))
        level = min(self.burst, level + (now - last) * self.rate)
        if len(self.buckets) > 10_000:
            self.buckets.clear()
        if level < 1:
            self.buckets[key] = (level, now)
            return False
        self.buckets[key] = (level - 1, now)
        return True


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


def _asset(name: str) -> str:
    if name == "viewer.css":                    # the replay viewer's cards, melds and piles
        return resources.files("experiments.apps").joinpath(name).read_text(encoding="utf-8")
    return resources.files("experiments.apps.web").joinpath("static", name).read_text(encoding="utf-8")


def same_origin(origin: Optional[str], host: Optional[str]) -> bool:
    """Whether a websocket's ``Origin`` is the page's own (scheme http/https, the same host:port)."""
    if not origin or not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


class WebApp:
    """The routes over a :class:`Tables`; ``app`` is the ASGI application."""

    def __init__(self, tables: Tables, limits: Limits = Limits(), local_only: bool = True):
        self.tables = tables
        self.limits = limits
        self.limiter = RateLimiter(limits.rate, limits.burst)
        self.wakes: Dict[str, asyncio.Event] = {}
        self.tasks: Dict[str, asyncio.Task] = {}
        self.sockets = 0
        routes = [
            Route("/", self.index), Route("/table/{tid}", self.table_page),
            Route("/table/{tid}/replay", self.replay_page), Route("/static/{name}", self.static),
            Route("/api/options", self.options), Route("/api/tables", self.create, methods=["POST"]),
            Route("/api/tables/{tid}/state", self.state), Route("/api/tables/{tid}/act", self.act, methods=["POST"]),
            Route("/api/tables/{tid}/record", self.record), WebSocketRoute("/ws/tables/{tid}", self.socket),
        ]
        hosts = list(LOCAL_HOSTS) + ["[::1]"] if local_only else ["*"]
        self.app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
                             lifespan=self.lifespan)

    # ------------------------------------------------------------------ agents
    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        for room in list(self.tables.rooms.values()):
            self.watch(room)
        yield
        for task in self.tasks.values():
            task.cancel()

    def watch(self, room: Room) -> None:
        """Let the agents of ``room`` play: at once for pace 0, else by a task at the table's pace."""
        if room.over or not room.agents:
            return
        if room.row.pace_ms == 0:
            room.run_agents()
            return
        wake = self.wakes[room.id] = asyncio.Event()
        room.listeners.append(lambda r: wake.set())
        self.tasks[room.id] = asyncio.get_running_loop().create_task(self._agents(room, wake))

    async def _agents(self, room: Room, wake: asyncio.Event) -> None:
        pace = room.row.pace_ms / 1000
        while not room.over:
            if not room.agent_to_act():
                wake.clear()
                await wake.wait()
                continue
            await asyncio.sleep(pace)
            if room.agent_to_act():
                room.agent_step()

    # ------------------------------------------------------------------ checks
    def _client(self, request) -> str:
        return request.client.host if request.client else "?"

    def _limited(self, request, token: Optional[str] = None) -> Optional[JSONResponse]:
        if not self.limiter.allow((self._client(request), token or "")):
            return _error("too many requests; slow down", 429)
        return None

    def _room(self, tid: str) -> Room:
        return self.tables.get(tid)

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

    async def _body(self, request: Request) -> object:
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise TableError("the request body must be JSON (Content-Type: application/json)", 415)
        origin = request.headers.get("origin")
        if origin is not None and not same_origin(origin, request.headers.get("host")):
            raise TableError("cross-origin requests are not accepted", 403)
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limits.max_body):
            raise TableError(f"the request body is larger than {self.limits.max_body} bytes", 413)
        data = b""
        async for chunk in request.stream():
            data += chunk
            if len(data) > self.limits.max_body:
                raise TableError(f"the request body is larger than {self.limits.max_body} bytes", 413)
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise TableError("the request body is not valid JSON (or nested too deeply)", 400) from None

    # ------------------------------------------------------------------ API
    async def options(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        return JSONResponse({"rules": {name: load_rules(name).players for name in PRESETS},
                             "seats": [HUMAN] + list(self.tables.allowed)}, headers=HEADERS)

    async def create(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        try:
            body = await self._body(request)
            room, tokens = self.tables.create(body)
        except TableError as e:
            return _error(str(e), e.status)
        base = f"{request.url.scheme}://{request.url.netloc}"
        seats = []
        for p, kind in enumerate(room.labels):
            entry = {"seat": p, "player": f"player_{p}", "kind": kind}
            if p in tokens:
                entry.update(token=tokens[p], url=f"{base}/table/{room.id}#{tokens[p]}")
            seats.append(entry)
        self.watch(room)
        return JSONResponse({"table": room.id, "seats": seats, "spectator": f"{base}/table/{room.id}"},
                            status_code=201, headers=HEADERS)

    async def state(self, request: Request) -> Response:
        try:
            token = self._token(request)
            if (limited := self._limited(request, token)) is not None:
                return limited
            room = self._room(request.path_params["tid"])
            return JSONResponse(room.message(self._seat(room, token)), headers=HEADERS)
        except TableError as e:
            return _error(str(e), e.status)

    async def act(self, request: Request) -> Response:
        try:
            token = self._token(request)
            if (limited := self._limited(request, token)) is not None:
                return limited
            room = self._room(request.path_params["tid"])
            if token is None:
                raise TableError("acting needs the seat's token: Authorization: Bearer TOKEN", 401)
            seat = self._seat(room, token)
            body = await self._body(request)
            if not isinstance(body, dict) or set(body) - {"action", "seq"} or "action" not in body:
                raise TableError('the request body must be {"action": NAME} or {"action": NAME, "seq": N}', 400)
            room.act(seat, body["action"], body.get("seq"))
            if room.row.pace_ms == 0:
                room.run_agents()
            return JSONResponse(room.message(seat), headers=HEADERS)
        except TableError as e:
            return _error(str(e), e.status)

    async def record(self, request: Request) -> Response:
        if (limited := self._limited(request)) is not None:
            return limited
        try:
            room = self._room(request.path_params["tid"])
        except TableError as e:
            return _error(str(e), e.status)
        if not room.over:
            return _error("the game is not over yet; its record is published at the end", 409)
        return JSONResponse(room.record(), headers=HEADERS)

    # ------------------------------------------------------------------ pages
    async def index(self, request: Request) -> Response:
        return HTMLResponse(_asset("index.html"), headers=HEADERS)

    async def table_page(self, request: Request) -> Response:
        if request.path_params["tid"] not in self.tables.rooms:
            return HTMLResponse("<h1>No such table</h1>", status_code=404, headers=HEADERS)
        return HTMLResponse(_asset("table.html"), headers=HEADERS)

    async def replay_page(self, request: Request) -> Response:
        room = self.tables.rooms.get(request.path_params["tid"])
        if room is None or not room.over:
            return HTMLResponse("<h1>No finished game here</h1>", status_code=404, headers=HEADERS)
        return HTMLResponse(build_html(room.record(), source=f"table {room.id}"),
                            headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY"})

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", status_code=404)
        return Response(_asset(name), media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    # ------------------------------------------------------------------ websocket
    async def socket(self, ws: WebSocket) -> None:
        if not same_origin(ws.headers.get("origin"), ws.headers.get("host")):
            await ws.close(code=1008, reason="origin not allowed")
            return
        room = self.tables.rooms.get(ws.path_params["tid"])
        if not self.limiter.allow((self._client(ws), "websocket")):
            await ws.close(code=1008, reason="too many connections; slow down")
            return
        if room is None or self.sockets >= self.limits.max_sockets:
            await ws.close(code=1008, reason="no such table" if room is None else "too many connections")
            return
        await ws.accept()
        self.sockets += 1
        try:
            seat = await self._hello(ws, room)
            if seat is not False:
                await self._push(ws, room, seat)
        except WebSocketDisconnect:
            pass
        finally:
            self.sockets -= 1

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

        def listener(_room: Room) -> None:
            changed.set()

        room.listeners.append(listener)
        reader = asyncio.ensure_future(self._drain(ws))
        try:
            while not reader.done():
                waiter = asyncio.ensure_future(changed.wait())
                await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if changed.is_set() and not reader.done():
                    changed.clear()
                    await ws.send_json({"type": "state", "state": room.message(seat)})
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
             records=None) -> WebApp:
    """The application over the SQLite file ``db`` (created if missing; its tables are restored);
    ``records``: a folder that receives every finished game's record as ``ID.json``."""
    store = Store(db, durable=durable)
    return WebApp(Tables(store, agents=agents, max_tables=limits.max_tables, records=records), limits, local_only)


__all__ = ["WebApp", "Limits", "make_app", "same_origin", "LOCAL_HOSTS"]
