"""A browser-table server for tests (uvicorn in a thread, or ``handfoot serve`` in a process) and a
small JSON client over one keep-alive connection."""
from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """JSON over HTTP to one server; ``call`` returns ``(status, parsed body)``."""

    def __init__(self, port: int, timeout: float = 30):
        self.port = port
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def call(self, method: str, path: str, body=None, token: Optional[str] = None, headers=None, raw: bytes = None):
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
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                if attempt:
                    raise
        ctype = resp.getheader("content-type", "")
        return resp.status, (json.loads(text) if "json" in ctype else text.decode())

    def create(self, **body):
        status, out = self.call("POST", "/api/tables", body)
        assert status == 201, out
        return out

    def state(self, table: str, token: Optional[str] = None):
        status, out = self.call("GET", f"/api/tables/{table}/state", token=token)
        assert status == 200, out
        return out

    def act(self, table: str, token: str, action: str, seq: Optional[int] = None):
        body = {"action": action} if seq is None else {"action": action, "seq": seq}
        return self.call("POST", f"/api/tables/{table}/act", body, token=token)

    def close(self):
        self.conn.close()


class ThreadServer:
    """The application served by uvicorn in a thread of this process (tests deal seeded games to several
    persons, so chosen seeds are allowed unless ``allow_chosen_seeds=False``)."""

    def __init__(self, db, allow_chosen_seeds: bool = True, app_options=None, **limits):
        import uvicorn

        from experiments.apps.web.server import Limits, make_app
        self.web = make_app(db, limits=Limits(**{"rate": 0, **limits}), allow_chosen_seeds=allow_chosen_seeds,
                            **(app_options or {}))
        self.port = free_port()
        config = uvicorn.Config(self.web.app, host="127.0.0.1", port=self.port, log_level="warning",
                                ws="websockets-sansio", ws_max_size=self.web.limits.max_body)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.web.tables.store.close()


def start_process(db, port: int, *extra: str) -> subprocess.Popen:
    """``handfoot serve`` as its own process; returns once it answers."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "experiments.apps.cli", "serve", "--port", str(port),
                             "--db", str(db), "--rate", "0", "--allow-chosen-seeds", *extra], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"handfoot serve exited: {proc.stderr.read().decode()[-2000:]}")
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("handfoot serve did not start")
            time.sleep(0.05)
