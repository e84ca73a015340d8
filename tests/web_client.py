"""A browser-table server for tests (uvicorn in a thread, or ``handfoot serve`` in a process); the JSON
client itself is shipped (:mod:`experiments.apps.web.client`)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from experiments.apps.web.client import Client, free_port, start_server

ROOT = Path(__file__).resolve().parents[1]
__all__ = ["Client", "ThreadServer", "free_port", "start_process", "ROOT"]


class ThreadServer:
    """The application served by uvicorn in a thread of this process (tests deal seeded games to several
    persons, so chosen seeds are allowed unless ``allow_chosen_seeds=False``); ``app_options`` go to
    ``make_app`` (``turn_timeout``, ``trusted_proxies``, ...), the rest to ``Limits``."""

    def __init__(self, db, allow_chosen_seeds: bool = True, app_options=None, header_timeout: float = 10.0,
                 **limits):
        import uvicorn

        from experiments.apps.web.guard import uvicorn_config
        from experiments.apps.web.server import Limits, make_app
        limits = {"rate": 0, "tables_per_client": 100, **limits}
        self.web = make_app(db, limits=Limits(**limits), allow_chosen_seeds=allow_chosen_seeds,
                            **(app_options or {}))
        self.port = free_port()
        config = uvicorn_config(self.web.app, "127.0.0.1", self.port, self.web.limits.max_body,
                                header_timeout=header_timeout)
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


def start_process(db, port: int, *extra: str):
    """``handfoot serve`` as its own process, without rate limits and with chosen seeds allowed."""
    return start_server(db, port, "--rate", "0", "--allow-chosen-seeds", *extra)
