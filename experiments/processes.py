"""Worker processes and Ctrl-C: workers that leave with their parent, and a Ctrl-C that asks to stop.

* :func:`worker_init` is the first thing a worker process runs (SubprocVecEnv workers, the
  evaluation pool): it ignores SIGINT, so a Ctrl-C in the terminal reaches only the parent,
  which decides how to stop; and it makes the worker exit when its parent dies, even by
  SIGKILL (Linux: ``prctl(PR_SET_PDEATHSIG)``; elsewhere a thread that polls ``os.getppid()``).
* :func:`sigint_ignored` wraps the start of worker processes, so that a Ctrl-C during the
  start cannot reach a worker before :func:`worker_init` has run.
* :class:`StopRequest` turns the first Ctrl-C into a flag that a loop checks between steps
  (a second Ctrl-C stops at once with ``KeyboardInterrupt``).
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, List, Optional

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _pdeathsig(sig: int) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies; False where not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(POLL_S)
        if os.getppid() != parent_pid:
            os._exit(1)


def exit_with_parent(parent_pid: Optional[int] = None) -> None:
    """Make this process exit when ``parent_pid`` (default: the current parent) is gone."""
    parent = os.getppid() if parent_pid is None else int(parent_pid)
    if not _pdeathsig(signal.SIGKILL):
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="exit-with-parent").start()
    if os.getppid() != parent:        # the parent died before the request was made
        os._exit(1)


def worker_init(parent_pid: Optional[int] = None) -> None:
    """Set up a worker process: ignore Ctrl-C (the parent handles it), exit when the parent dies."""
    with contextlib.suppress(ValueError, OSError):        # not the main thread: leave signals alone
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent_pid)


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT in this process while the block runs (children started in it inherit that)."""
    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:                 # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class StopRequest:
    """While active (``with StopRequest() as stop``), the first Ctrl-C sets ``stop.requested``
    instead of raising; a second one raises ``KeyboardInterrupt``.  Outside the main thread it
    changes nothing (and ``requested`` stays False)."""

    def __init__(self) -> None:
        self.requested = False
        self._old = None
        self._installed = False

    def _handler(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> "StopRequest":
        try:
            self._old = signal.signal(signal.SIGINT, self._handler)
            self._installed = True
        except ValueError:
            pass
        return self

    def __exit__(self, *exc) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._old)
            self._installed = False


__all__ = ["worker_init", "exit_with_parent", "sigint_ignored", "StopRequest"]


@contextlib.contextmanager
def pool_runner(fn: Callable[[Any], Any], workers: int, bar: Any = None,
                size: Callable[[Any], int] = lambda task: 1) -> Iterator[Callable[[List[Any]], List[Any]]]:
    """``run(tasks) -> [fn(t) for t in tasks]`` (in task order) on one spawn pool of ``workers``
    processes (in this process for one or fewer), kept open for as many calls as the ``with`` block
    makes.  The workers ignore Ctrl-C and die with this process (the ``KeyboardInterrupt`` carries the
    results of the tasks finished so far, a prefix in task order, as ``done``); ``bar`` (a tqdm bar,
    optional) is advanced by ``size(task)`` per finished task and closed at the end."""
    pool = None
    try:
        if workers > 1:
            ctx = mp.get_context("spawn")
            with sigint_ignored():      # workers ignore Ctrl-C (this process handles it) and die with it
                pool = ctx.Pool(processes=workers, initializer=worker_init, initargs=(os.getpid(),))

        def run(tasks: List[Any]) -> List[Any]:
            out: List[Any] = []
            try:
                for t, r in zip(tasks, pool.imap(fn, tasks) if pool is not None else map(fn, tasks)):
                    out.append(r)
                    if bar is not None:
                        bar.update(size(t))
            except KeyboardInterrupt as e:      # Ctrl-C: the tasks finished so far go with it, in task order
                e.done = out
                raise
            return out

        yield run
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if bar is not None:
            bar.close()
