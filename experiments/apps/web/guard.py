"""Who a client is, and what reaches the application: hosts, trusted proxies, rate buckets, slow requests.

A client is its connection's address (an IPv6 address by its /64).  Forwarded
headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are believed only from the
proxies the operator names (``handfoot serve --trusted-proxies ADDR[,ADDR]``,
addresses or networks): then the client is the right-most address of
``X-Forwarded-For`` that is not one of those proxies.  From anyone else the
headers are ignored, so a client cannot make itself many clients.  uvicorn's own
proxy handling is always off (:func:`uvicorn_config`).

:class:`Guard` wraps the application: it sets the request's client to that
address, refuses a ``Host`` that does not name this server (DNS rebinding) with a
JSON error, and a request through a trusted proxy may name any host (the proxy
chose to forward it).  :class:`TimedH11` closes a connection whose request line
and headers do not arrive within ``header_timeout`` seconds (a request body has
its own limit in the server), and answers a request it cannot parse with a JSON
error too.
"""
from __future__ import annotations

import ipaddress
import json
import time
from collections import OrderedDict
from typing import Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: seconds a connection may take to send a request's line and headers
HEADER_TIMEOUT = 10.0
JSON_HEADERS = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff")]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]


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


def same_origin(origin: Optional[str], host: Optional[str]) -> bool:
    """Whether a websocket's ``Origin`` is the page's own (scheme http/https, the same host:port)."""
    if not origin or not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


def parse_proxies(text: Union[str, Sequence[str], None]) -> Tuple[Network, ...]:
    """The trusted proxies of ``--trusted-proxies ADDR[,ADDR]`` (addresses or networks such as 10.0.0.0/8);
    a bad entry is a ``ValueError`` naming it."""
    items: Iterable[str] = text.split(",") if isinstance(text, str) else (text or ())
    out: List[Network] = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        try:
            out.append(ipaddress.ip_network(item.strip("[]"), strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxies: {item!r} is not an IP address or network") from None
    return tuple(out)


def _trusted(address: str, proxies: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in proxies)


def forwarded_client(peer: str, forwarded_for: Optional[str], proxies: Sequence[Network]) -> Tuple[str, bool]:
    """The client behind ``peer`` and whether it came through a trusted proxy: the right-most address of
    ``X-Forwarded-For`` that is not a trusted proxy (the peer itself when it is not one, or when the
    header holds nothing usable)."""
    if not proxies or not _trusted(peer, proxies):
        return peer, False
    client = peer
    for entry in reversed((forwarded_for or "").split(",")):
        entry = entry.strip().strip("[]")
        try:
            ipaddress.ip_address(entry)
        except ValueError:
            break                                   # made up by someone before the trusted proxies: stop
        client = entry
        if not _trusted(entry, proxies):
            break
    return client, True


class RateLimiter:
    """A token bucket per key.  At most ``max_keys`` buckets are kept, the least recently used going
    first (an evicted key starts again from a full bucket, which a key quiet for ``burst / rate``
    seconds has anyway); keys are client addresses and checked seats, which a client cannot make up."""

    def __init__(self, rate: float, burst: int, max_keys: int = 10_000):
        self.rate, self.burst = float(rate), float(burst)
        self.max_keys = int(max_keys)
        self.buckets: "OrderedDict[Tuple[str, ...], Tuple[float, float]]" = OrderedDict()

    def allow(self, key: Tuple[str, ...], cost: float = 1.0) -> bool:
        if self.rate <= 0:
            return True
        now = time.monotonic()
        level, last = self.buckets.pop(key, (self.burst, now))
        level = min(self.burst, level + (now - last) * self.rate)
        while len(self.buckets) >= self.max_keys:
            self.buckets.popitem(last=False)
        ok = level >= cost
        self.buckets[key] = (level - cost if ok else level, now)
        return ok


def _host_of(headers) -> str:
    host = ""
    for name, value in headers:
        if name == b"host":
            host = value.decode("latin-1")
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware: the request's client from trusted proxies only, and only hosts of this server."""

    def __init__(self, app, hosts: Optional[Sequence[str]], proxies: Sequence[Network] = ()):
        self.app = app
        self.hosts = None if hosts is None else {h.lower() for h in hosts}
        self.proxies = tuple(proxies)

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        peer = scope.get("client") or ("?", 0)
        headers = scope.get("headers") or []
        forwarded = ",".join(v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for")
        client, proxied = forwarded_client(peer[0], forwarded or None, self.proxies)
        if proxied:
            scope = dict(scope, client=(client, 0))
            proto = [v.decode("latin-1").split(",")[-1].strip().lower()
                     for k, v in headers if k == b"x-forwarded-proto"]
            if proto and proto[-1] in ("http", "https"):
                scheme = proto[-1]
                scope["scheme"] = scheme if scope["type"] == "http" else {"http": "ws", "https": "wss"}[scheme]
        if self.hosts is not None and not proxied and _host_of(headers).lower() not in self.hosts:
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008, "reason": "host not allowed"})
            return await _json_error(send, 400, "this server does not answer for that Host")
        return await self.app(scope, receive, send)


async def _json_error(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": JSON_HEADERS + [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class TimedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request line and headers take longer than
    ``header_timeout`` seconds (a half-sent request does not hold a connection for as long as it likes;
    the seconds come from the uvicorn config's ``header_timeout``, set by :func:`uvicorn_config`)."""

    def connection_made(self, transport) -> None:
        self._header_timer = None
        self.header_timeout = float(getattr(self.config, "header_timeout", HEADER_TIMEOUT))
        super().connection_made(transport)
        self._arm()

    def _idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self._idle() and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._idle():
            self._arm()
        super().data_received(data)
        if not self._idle():
            self._disarm()

    def handle_websocket_upgrade(self, event) -> None:
        self._disarm()
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        self._disarm()                               # uvicorn's keep-alive timeout runs from here
        super().on_response_complete()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request HTTP/1.1 cannot parse: a JSON error like every other answer, then the connection closes."""
        body = json.dumps({"error": f"not an HTTP request this server can read ({msg.rstrip('.').lower()})"})
        headers = JSON_HEADERS + [(b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body.encode()), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


def uvicorn_config(app, host: str, port: int, max_size: int, header_timeout: float = HEADER_TIMEOUT, **extra):
    """The uvicorn configuration of ``handfoot serve`` (and of the tests' servers): forwarded headers never
    believed by uvicorn (:class:`Guard` decides), headers within ``header_timeout`` seconds."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", ws="websockets-sansio",
                            ws_max_size=max_size, h11_max_incomplete_event_size=16384, http=TimedH11,
                            proxy_headers=False, server_header=False, timeout_keep_alive=5, **extra)
    config.header_timeout = float(header_timeout)
    return config


__all__ = ["Guard", "RateLimiter", "TimedH11", "client_key", "forwarded_client", "is_local", "parse_proxies",
           "same_origin", "uvicorn_config", "LOCAL_HOSTS", "HEADER_TIMEOUT"]
