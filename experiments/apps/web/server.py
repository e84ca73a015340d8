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
                                         (``seats_for``: per preset, the kinds that can play it)
``WS /ws/tables/ID``                     first message ``{"token": TOKEN or null}``, then the
                                         server sends ``{"type": "state", "state": ...}`` on
                                         every change
=======================================  ====================================================

Every request is checked: an unknown table, a wrong or missing token, an
illegal or stale action, a malformed or oversized body, too many requests or
tables each get a status and ``{"error": "..."}``, and nothing changes.  A
database that is locked or failing answers 503 with ``{"error": ...}`` on every
route (after at most ``store.BUSY_TIMEOUT``), and any other failure 500 with
``{"error": ...}``, logged.  Requests are rate-limited per client address; a
request with a valid seat token has a bucket of its own (so made-up tokens share
their client's bucket), and one client holds at most
``Limits.max_sockets_per_client`` websockets.  Hosts
other than localhost are refused unless the server is bound elsewhere
(DNS rebinding), websockets must come from the page's own origin, and POSTs
must be JSON (so that no other site's form can post).
"""
from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import sqlite3
import time
import traceback
from collections import OrderedDict
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
from experiments.apps.web.rooms import ABANDON_AFTER, HUMAN, Room, TableError, Tables, log
from experiments.apps.web.store import Store
from handfoot_env.config import PRESETS, load_rules

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
STATIC = {"table.js": "text/javascript", "table.css": "text/css", "index.js": "text/javascript",
          "viewer.css": "text/css", "favicon.svg": "image/svg+xml"}
#: the longest wait between two tries of an agent's move that could not be saved
RETRY_MAX_S = 10.0
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
    max_sockets_per_client: int = 40


def is_local(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def client_key(host: str) -> str:
    """The rate-limit key of a client address: the address itself, or its /64 network for IPv6 (one
    machine usually holds a whole /64)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if ip.version == 6 and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class RateLimiter:
    """A token bucket per key.  At most ``max_keys`` buckets are kept, the least recently used going
    first (an evicted key starts again from a full bucket, which a key quiet for ``burst / rate``
    seconds has anyway); keys are client addresses and checked seats, which a client cannot make up."""

    def __init__(self, rate: float, burst: int, max_keys: int = 10_000):
        self.rate, self.burst = float(rate), float(burst)
        self.max_keys = int(max_keys)
        self.buckets: "OrderedDict[Tuple[str, ...], Tuple[float, float]]" = OrderedDict()

    def allow(self, key: Tuple[str, ...]) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        level, last = self.buckets.pop(key, (self.burst, now))
        level = min(self.burst, level + (now - last) * self.rate)
        while len(self.buckets) >= self.max_keys:
            self.buckets.popitem(last=False)
        ok = level >= 1
        self.buckets[key] = (level - 1 if ok else level, now)
        return ok


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
    """The routes over a :class:`Tables`; ``app`` is the ASGI application.  ``host``: the address the
    server is bound to (a loopback address other than 127.0.0.1 is accepted as a Host too)."""

    def __init__(self, tables: Tables, limits: Limits = Limits(), local_only: bool = True,
                 host: Optional[str] = None):
        self.tables = tables
        self.limits = limits
        self.limiter = RateLimiter(limits.rate, limits.burst)
        self.wakes: Dict[str, asyncio.Event] = {}
        self.tasks: Dict[str, asyncio.Task] = {}
        self.sockets = 0
        self.client_sockets: Dict[str, int] = {}
        self._options: Optional[dict] = None
        tables.on_load = self.watch
        tables.on_unload = self.unwatch
        routes = [
            Route("/", self.index), Route("/favicon.ico", self.favicon), Route("/table/{tid}", self.table_page),
            Route("/table/{tid}/replay", self.replay_page), Route("/static/{name}", self.static),
            Route("/api/options", self.options), Route("/api/tables", self.create, methods=["POST"]),
            Route("/api/tables/{tid}/state", self.state), Route("/api/tables/{tid}/act", self.act, methods=["POST"]),
            Route("/api/tables/{tid}/record", self.record), WebSocketRoute("/ws/tables/{tid}", self.socket),
        ]
        hosts = list(LOCAL_HOSTS) + ["[::1]"] + ([host] if host else []) if local_only else ["*"]
        self.app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)],
                             lifespan=self.lifespan,
                             exception_handlers={sqlite3.Error: self._db_error, Exception: self._failure})

    async def _db_error(self, request, exc: Exception) -> Response:
        log(f"the database failed ({exc}) at {request.url.path}")
        return _error(f"the server's database is busy or failing ({exc}); try again shortly", 503)

    async def _failure(self, request, exc: Exception) -> Response:
        log(f"internal error at {request.url.path}: {''.join(traceback.format_exception(exc)).strip()}")
        return _error("the server failed to answer this request (its log says why)", 500)

    # ------------------------------------------------------------------ agents
    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        for room in list(self.tables.rooms.values()):
            self.watch(room)
        yield
        for task in self.tasks.values():
            task.cancel()

    def watch(self, room: Room) -> None:
        """Let the agents of ``room`` play: by a task at the table's pace (pace 0: at once, here and after
        every person's action, the task retrying moves that could not be saved)."""
        if room.over or not room.agents or room.id in self.tasks:
            return
        wake = self.wakes[room.id] = asyncio.Event()
        room.listeners.append(lambda r: wake.set())
        task = self.tasks[room.id] = asyncio.get_running_loop().create_task(self._agents(room, wake))
        task.add_done_callback(lambda t, tid=room.id: self._ended(tid, t))
        if room.row.pace_ms == 0:
            self.run_now(room)

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

    def run_now(self, room: Room) -> None:
        """Agents of a pace-0 table play at once; a move that cannot be saved is left to the table's task."""
        try:
            room.run_agents()
        except TableError as e:
            log(f"table {room.id}: an agent's move could not be saved ({e}); retrying")
            room.set_trouble("the server could not save an agent's move; it retries")
            wake = self.wakes.get(room.id)
            if wake is not None:
                wake.set()

    async def _agents(self, room: Room, wake: asyncio.Event) -> None:
        pace = room.row.pace_ms / 1000
        delay = 0.1
        while not room.over:
            if not room.agent_to_act():
                wake.clear()
                await wake.wait()
                continue
            await asyncio.sleep(pace if room.trouble is None else delay)
            if not room.agent_to_act():
                continue
            try:
                room.agent_step()
            except TableError as e:               # the database failed: nothing was applied; try again
                if room.trouble is None:
                    log(f"table {room.id}: an agent's move could not be saved ({e}); retrying")
                room.set_trouble("the server could not save an agent's move; it retries")
                delay = min(RETRY_MAX_S, delay * 2)
                continue
            if room.trouble is not None:
                log(f"table {room.id}: agents play on")
                room.set_trouble(None)
            delay = 0.1

    # ------------------------------------------------------------------ checks
    def _client(self, request) -> str:
        return request.client.host if request.client else "?"

    def _limited(self, request, room: Optional[Room] = None, seat: Optional[int] = None) -> Optional[JSONResponse]:
        """Refuse a request over its bucket: a checked seat's own, else its client address's."""
        key: Tuple[str, ...] = (client_key(self._client(request)),)
        if room is not None and seat is not None:
            key += (room.id, str(seat))
        if not self.limiter.allow(key):
            return _error("too many requests; slow down", 429)
        return None

    def _checked(self, request, tid: str, token: Optional[str]):
        """The room and the token's seat, or the error response (404, 401 and 429 alike count against the
        client's bucket, so that made-up tokens are limited with their client)."""
        try:
            room = self._room(tid)
            seat = self._seat(room, token)
        except TableError as e:
            return None, None, self._limited(request) or _error(str(e), e.status)
        limited = self._limited(request, room, seat)
        return room, seat, limited

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
        if self._options is None:
            rules = {name: load_rules(name) for name in PRESETS}
            self._options = {"rules": {name: r.players for name, r in rules.items()},
                             "seats": [HUMAN] + list(self.tables.allowed),
                             "teams": {name: r.teams for name, r in rules.items()},
                             "seats_for": {name: self.tables.seat_kinds(name) for name in PRESETS},
                             "chosen_seeds": "allowed" if self.tables.allow_chosen_seeds else "one person only"}
        return JSONResponse(self._options, headers=HEADERS)

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
            entry = {"seat": p, "player": f"player_{p}", "kind": kind, "team": room.game.team_of[p]}
            if p in tokens:
                entry.update(token=tokens[p], url=f"{base}/table/{room.id}#{tokens[p]}")
            seats.append(entry)
        self.watch(room)
        out = {"table": room.id, "seats": seats, "spectator": f"{base}/table/{room.id}"}
        if room.row.seed_chosen:
            out["seed"] = str(room.row.seed)
        return JSONResponse(out, status_code=201, headers=HEADERS)

    async def state(self, request: Request) -> Response:
        try:
            token = self._token(request)
        except TableError as e:
            return self._limited(request) or _error(str(e), e.status)
        room, seat, refused = self._checked(request, request.path_params["tid"], token)
        if refused is not None:
            return refused
        if seat is not None:
            room.touch()
        return JSONResponse(room.message(seat), headers=HEADERS)

    async def act(self, request: Request) -> Response:
        try:
            token = self._token(request)
            if token is None:
                raise TableError("acting needs the seat's token: Authorization: Bearer TOKEN", 401)
        except TableError as e:
            return self._limited(request) or _error(str(e), e.status)
        room, seat, refused = self._checked(request, request.path_params["tid"], token)
        if refused is not None:
            return refused
        try:
            body = await self._body(request)
            if not isinstance(body, dict) or set(body) - {"action", "seq"} or "action" not in body:
                raise TableError('the request body must be {"action": NAME} or {"action": NAME, "seq": N}', 400)
            room.act(seat, body["action"], body.get("seq"))
        except TableError as e:
            return _error(str(e), e.status)
        if room.row.pace_ms == 0:
            self.run_now(room)
        return JSONResponse(room.message(seat), headers=HEADERS)

    async def record(self, request: Request) -> Response:
        room, _, refused = self._checked(request, request.path_params["tid"], None)
        if refused is not None:
            return refused
        if not room.over:
            return _error("the game is not over yet; its record is published at the end", 409)
        return JSONResponse(room.record(), headers=HEADERS)

    # ------------------------------------------------------------------ pages
    async def index(self, request: Request) -> Response:
        return HTMLResponse(_asset("index.html"), headers=HEADERS)

    async def favicon(self, request: Request) -> Response:
        return Response(_asset("favicon.svg"), media_type=STATIC["favicon.svg"],
                        headers={"Cache-Control": "max-age=86400"})

    async def table_page(self, request: Request) -> Response:
        if not self.tables.exists(request.path_params["tid"]):
            return HTMLResponse("<h1>No such table</h1>", status_code=404, headers=HEADERS)
        return HTMLResponse(_asset("table.html"), headers=HEADERS)

    async def replay_page(self, request: Request) -> Response:
        try:
            room = self.tables.get(request.path_params["tid"])
        except TableError:
            room = None
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
        client = client_key(self._client(ws))
        if not self.limiter.allow((client, "websocket")):
            await ws.close(code=1008, reason="too many connections; slow down")
            return
        try:
            room = self.tables.get(ws.path_params["tid"])
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
                await self._push(ws, room, seat)
        except WebSocketDisconnect:
            pass
        finally:
            self.sockets -= 1
            room.sockets -= 1
            room.touch()
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
             records=None, allow_chosen_seeds: bool = False, abandon_after: float = ABANDON_AFTER,
             host: Optional[str] = None) -> WebApp:
    """The application over the SQLite file ``db`` (created if missing; its tables are restored);
    ``records``: a folder that receives every finished game's record as ``ID.json``;
    ``allow_chosen_seeds``: tables of several persons may be dealt from a seed their creator chose;
    ``abandon_after``: seconds without play after which a table stops counting as in play."""
    store = Store(db, durable=durable)
    tables = Tables(store, agents=agents, max_tables=limits.max_tables, records=records,
                    allow_chosen_seeds=allow_chosen_seeds, abandon_after=abandon_after)
    return WebApp(tables, limits, local_only, host=host)


__all__ = ["WebApp", "Limits", "make_app", "same_origin", "is_local", "client_key", "RateLimiter", "LOCAL_HOSTS"]
