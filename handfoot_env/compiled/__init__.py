"""The compiled core: the rules of :mod:`handfoot_env.engine` and the encodings of
:mod:`handfoot_env.observation` compiled with Numba, on many games held in arrays.

The pure-Python engine stays the reference; tests/test_compiled_core.py and
``python -m tests.soak --compare`` check that this core takes exactly the same
states, legal lists, observations, masks and scores (docs/compiled_core.md).

Compiled code is cached on disk, so only the first import after an install
compiles.  The cache lives in ``$NUMBA_CACHE_DIR/handfoot-<digest>`` when
``NUMBA_CACHE_DIR`` is set, else in the user's cache folder
(``~/.cache/handfoot/numba-<digest>``); the digest covers the core's sources and the
Numba version, so an edited or upgraded core never loads a stale cache (Numba's own
index would only see the edited file, not the kernels that inline it), and an
install in a read-only site-packages still caches.

:func:`available` tells whether Numba is installed; :func:`resolve_core` turns the
``core`` argument of the env and the batched samplers into ``"compiled"`` or
``"reference"``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

CORES = ("reference", "compiled")
_MODULES = ("layout", "intrinsics", "rng", "searches", "rules", "play", "encode")


def available() -> bool:
    """Whether Numba is installed (the compiled core needs it)."""
    return importlib.util.find_spec("numba") is not None


def resolve_core(core) -> str:
    """``"compiled"`` or ``"reference"`` for a ``core`` argument: None or ``"auto"`` picks the
    compiled core when Numba is installed, unless the environment variable ``HANDFOOT_CORE``
    names the core ``auto`` means (``reference`` or ``compiled``; mutation runs set it to
    ``reference``, whose code they mutate); ``"compiled"`` without Numba is a ``ValueError``."""
    if core is None or core == "auto":
        forced = os.environ.get("HANDFOOT_CORE")
        if not forced:
            return "compiled" if available() else "reference"
        if forced not in CORES:
            raise ValueError(f"HANDFOOT_CORE must be 'reference' or 'compiled', got {forced!r}")
        core = forced
    if core not in CORES:
        raise ValueError(f"core must be 'reference', 'compiled' or 'auto', got {core!r}")
    if core == "compiled" and not available():
        raise ValueError("core 'compiled' needs Numba (pip install numba); core 'reference' needs nothing")
    return core


def make_game(core, rules, **overrides):
    """A game under ``rules`` on the core ``core`` resolves to (:func:`resolve_core`): a
    :class:`~handfoot_env.compiled.game.CompiledGame` or a :class:`~handfoot_env.turns.ReferenceGame`
    (the reference engine's ``Game`` with the same reading methods): one interface for both."""
    if resolve_core(core) == "compiled":
        return load().CompiledGame(rules, **overrides)
    from ..turns import ReferenceGame
    return ReferenceGame(rules, **overrides)


def cache_dir() -> Path:
    """Where the compiled kernels are cached (see the module docstring)."""
    import numba

    here = Path(__file__).resolve().parent
    h = hashlib.sha256(numba.__version__.encode())
    for name in _MODULES:
        h.update((here / f"{name}.py").read_bytes())
    h.update((here.parent / "config.py").read_bytes())   # the rule fields' slots in the rule vector, the limits
    digest = h.hexdigest()[:16]
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base:
        return Path(base) / f"handfoot-{digest}"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "handfoot" / f"numba-{digest}"


_CACHE_DIR: list = []


def kernel(fn=None, **options):
    """``numba.njit(cache=True, **options)`` caching in :func:`cache_dir` (Numba reads its cache
    folder when a function is decorated; the global setting is restored right after)."""
    from numba import njit
    from numba.core import config

    def wrap(f):
        if not _CACHE_DIR:
            _CACHE_DIR.append(str(cache_dir()))
        saved = config.CACHE_DIR
        config.CACHE_DIR = _CACHE_DIR[0]
        try:
            return njit(cache=True, **options)(f)
        finally:
            config.CACHE_DIR = saved

    return wrap(fn) if fn is not None else wrap


def load():
    """The compiled core's Python side: :mod:`.game` (``CompiledGame``, ``CoreBatch``, ``state_row``,
    ``game_from_row``).  The first load after an install (no kernels in :func:`cache_dir` yet)
    compiles every kernel a caller reaches, with a line on standard error before and after (about
    a minute); later processes load them from the cache at their first call."""
    from . import game
    if not _LOADED:
        _LOADED.append(True)
        folder = cache_dir()
        if not (folder / _WARM).exists():
            import sys
            import time
            sys.stderr.write(f"handfoot: compiling the rules core, once per install (about a minute on an idle "
                             f"machine; cached in "
                             f"{folder})\n")
            sys.stderr.flush()
            t0 = time.perf_counter()
            warm_up(game)
            try:
                (folder / _WARM).write_text("every kernel compiled\n")
            except OSError:                   # a read-only cache: compiled again next time, said again
                pass
            sys.stderr.write(f"handfoot: rules core compiled in {time.perf_counter() - t0:.0f} s\n")
            sys.stderr.flush()
        _CompileNotice.listen()
    return game


class _CompileNotice:
    """Says on standard error, once per process, that a kernel the cache lacks is being compiled
    (a rule set or argument type the warm-up did not reach), so that a slow first call is never silent.
    Numba's compile event fires only when a kernel compiles, not when it loads from the cache."""

    said = False
    depth = 0
    t0 = 0.0

    @classmethod
    def listen(cls) -> None:
        from numba.core import event
        if not issubclass(cls, event.Listener):
            event.Listener.register(cls)
            event.register("numba:compile", cls())

    def notify(self, ev) -> None:
        import sys
        import time
        cls = type(self)
        if ev.is_start:
            cls.depth += 1
            if cls.depth == 1 and not cls.said:
                name = getattr(ev.data.get("dispatcher"), "__name__", "a kernel")
                sys.stderr.write(f"handfoot: compiling rules-core kernels the cache lacks ({name}; once per "
                                 f"install, up to a minute)\n")
                sys.stderr.flush()
                cls.t0 = time.perf_counter()
        elif ev.is_end:
            cls.depth -= 1
            if cls.depth == 0 and not cls.said:
                cls.said = True
                sys.stderr.write(f"handfoot: compiled in {time.perf_counter() - cls.t0:.0f} s\n")
                sys.stderr.flush()


_LOADED: list = []
_WARM = "compiled.ok"


def warm_up(game, rules: str = "pagat") -> None:
    """Call every kernel a caller reaches once (so that each is compiled or loaded from the cache): a
    ``CoreBatch`` is dealt and stepped until a game ends and is dealt again, a seat is observed, a
    legal list read, and a ``CompiledGame`` plays actions with and without the round's books."""
    import numpy as np
    b = game.CoreBatch(rules, 4)
    b.reset([1, 2, 3, 4])
    rng = np.random.default_rng(0)
    while True:
        acts, _ = b.random_actions(rng)
        over = acts == -2
        b.step(acts)
        if over.any():
            b.reset([10], games=[int(np.flatnonzero(over)[0])])
            break
    b.observe(0, 1, b.obs[0].copy(), b.mask[0].copy())
    b.legal(0)
    g = game.CompiledGame(rules)
    g.reset(seed=5)
    for _ in range(40):
        g.apply_legal(g.legal_actions()[0])
        g.apply_legal_books(g.legal_actions()[-1])
