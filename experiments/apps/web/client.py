"""A small JSON client of the browser table and ``handfoot serve`` as a process, for scripts and tests.

:class:`Client` speaks JSON over one keep-alive HTTP connection; ``source`` binds
it to a local address (on loopback, 127.0.0.2 is another client than 127.0.0.1,
which is how ``scripts/bench_serve.py`` and the tests play several clients on one
machine).  :func:`start_server` runs ``handfoot serve`` in its own process and
returns once it answers.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Tuple

#: the folder that holds the ``experiments`` package (a source tree's root, or site-packages)
PACKAGE_ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """JSON over HTTP to one server; ``call`` returns ``(status, parsed body)`` (the text when the answer is
    not JSON); ``source``: the local address to connect from."""

    def __init__(self, port: int, timeout: float = 30, source: Optional[str] = None, host: str = "127.0.0.1"):
        self.port, self.timeout, self.host = port, timeout, host
        self.source: Optional[Tuple[str, int]] = (source, 0) if source else None
        self.conn = self._connect()

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout, source_address=self.source)

    def call(self, method: str, path: str, body=None, token: Optional[str] = None, headers=None,
             raw: Optional[bytes] = None):
        h = {"Content-Type": "application/json"} if (body is not None or raw is not None) else {}
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        for attempt in (0, 1):
            try:
                self.conn.request(method, path, body=data, headers=h)
                resp = self.conn.getresponse()
                text = resp.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = self._connect()
                if attempt:
                    raise
        ctype = resp.getheader("content-type", "")
        return resp.status, (json.loads(text) if "json" in ctype else text.decode())

    def create(self, **body):
        status, out = self.call("POST", "/api/tables", body)
        if status != 201:
            raise AssertionError(f"create answered {status}: {out}")
        return out

    def state(self, table: str, token: Optional[str] = None):
        status, out = self.call("GET", f"/api/tables/{table}/state", token=token)
        if status != 200:
            raise AssertionError(f"state answered {status}: {out}")
        return out

    def act(self, table: str, token: str, action: str, seq: Optional[int] = None):
        body = {"action": action} if seq is None else {"action": action, "seq": seq}
        return self.call("POST", f"/api/tables/{table}/act", body, token=token)

    def settled(self, table: str, token: Optional[str] = None, timeout: float = 60):
        """The state once no agent (or stand-in) is to move: a person is to act or confirm, or the game is
        over (a table's agents play in the server's own time)."""
        deadline = time.time() + timeout
        while True:
            st = self.state(table, token)
            agent_turn = (not st["game_over"] and not st["waiting"]
                          and (st["players"][st["current"]] != "human" or st["current"] in st.get("left", ())))
            if not agent_turn:
                return st
            if time.time() > deadline:
                raise AssertionError(f"table {table}: the agents did not move within {timeout} s")
            time.sleep(0.01)

    def close(self):
        self.conn.close()


def start_server(db, port: int, *flags: str, stderr=subprocess.PIPE, env=None) -> subprocess.Popen:
    """``handfoot serve --port PORT --db DB FLAGS...`` as its own process; returns once it answers."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "experiments.apps.cli", "serve", "--port", str(port),
                             "--db", str(db), *flags], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.time() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
                raise RuntimeError(f"handfoot serve exited: {err}")
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("handfoot serve did not start")
            time.sleep(0.05)


def stop_server(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait(timeout=10)


__all__ = ["Client", "free_port", "start_server", "stop_server", "PACKAGE_ROOT"]
